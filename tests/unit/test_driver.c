/* test_driver.c - the fabric's driver run as a child process, without a
 * console: its stdout, the first line of its stderr without the program's
 * "NAME: " prefix, its exit status, a cut stdout, a driver that cannot be
 * run, and an owner that stops waiting */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "driver.h"

struct got {
	int calls;
	char out[256], err[256];
	size_t outlen;
	bool cut;
	int64_t status;
	int sig;
};

static void on_result(void *arg, const struct hs_driver_result *r)
{
	struct got *g = arg;

	g->calls++;
	assert_non_null(r);
	snprintf(g->out, sizeof(g->out), "%s", r->out);
	snprintf(g->err, sizeof(g->err), "%s", r->err);
	g->outlen = r->outlen;
	g->cut = r->out_cut;
	g->status = r->exit_status;
	g->sig = r->term_signal;
}

/* run "sh -c SCRIPT hs-driver-x" to its end */
static struct hs_driver_job *run(uv_loop_t *loop, const char *script, size_t out_max,
				 struct got *g, int *err)
{
	char *argv[] = { (char *)"/bin/sh", (char *)"-c", (char *)script,
			 (char *)"hs-driver-x", NULL };

	memset(g, 0, sizeof(*g));
	return hs_driver_spawn(loop, argv, out_max, on_result, g, err);
}

static void test_result(void **state)
{
	uv_loop_t loop;
	struct got g;
	int err = 0;

	(void)state;
	assert_int_equal(uv_loop_init(&loop), 0);
	assert_non_null(run(&loop, "echo rule 7; echo 'sh: no switch leaf9' >&2; "
			    "echo second >&2; exit 3", 4096, &g, &err));
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(g.calls, 1);
	assert_string_equal(g.out, "rule 7\n");
	assert_string_equal(g.err, "no switch leaf9");	/* its name and the rest gone */
	assert_int_equal(g.status, 3);
	assert_int_equal(g.sig, 0);
	assert_false(g.cut);
	assert_int_equal(uv_loop_close(&loop), 0);
}

static void test_cut(void **state)
{
	uv_loop_t loop;
	struct got g;
	int err = 0;

	(void)state;
	assert_int_equal(uv_loop_init(&loop), 0);
	assert_non_null(run(&loop, "printf 0123456789abcdef", 10, &g, &err));
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(g.calls, 1);
	assert_string_equal(g.out, "0123456789");
	assert_int_equal(g.outlen, 10);
	assert_true(g.cut);
	assert_int_equal(g.status, 0);
	assert_int_equal(uv_loop_close(&loop), 0);
}

static void test_cannot_run(void **state)
{
	char *argv[] = { (char *)"/nonexistent/hs-driver-none", (char *)"list", NULL };
	uv_loop_t loop;
	struct got g = { 0 };
	int err = 0;

	(void)state;
	assert_int_equal(uv_loop_init(&loop), 0);
	assert_null(hs_driver_spawn(&loop, argv, 4096, on_result, &g, &err));
	assert_int_equal(err, UV_ENOENT);
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(g.calls, 0);
	assert_int_equal(uv_loop_close(&loop), 0);
}

/* the owner stops waiting: the driver runs to its end, nothing is called */
static void test_abandon(void **state)
{
	uv_loop_t loop;
	struct got g;
	int err = 0;

	(void)state;
	assert_int_equal(uv_loop_init(&loop), 0);
	struct hs_driver_job *job = run(&loop, "sleep 0.1; echo late", 4096, &g, &err);
	assert_non_null(job);
	hs_driver_abandon(job);
	assert_int_equal(uv_run(&loop, UV_RUN_DEFAULT), 0);
	assert_int_equal(g.calls, 0);
	assert_int_equal(uv_loop_close(&loop), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_result),
		cmocka_unit_test(test_cut),
		cmocka_unit_test(test_cannot_run),
		cmocka_unit_test(test_abandon),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
