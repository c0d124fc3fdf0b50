/* test_engine.c - the engine runs without a console: linked without
 * libhscon.a, it reads the bundled sample capture on a loop of its own,
 * publishes its traces and events to the subscribers, keeps the session in
 * the history, and tells what went wrong through the context's say
 * callback, printing nothing itself */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "capture.h"
#include "ctx.h"
#include "engine.h"

#define SAMPLE HS_SRCDIR "/share/sample/sample.pcap"

struct fix {
	struct hs_ctx ctx;
	uv_loop_t loop;
	char dir[64], db[96];
	/* what the engine told */
	unsigned traces, started, ended, errors, warnings;
	int ended_status;
	char said[512];
	bool gone;		/* the engine was stopped by the test */
};

static void say(struct hs_ctx *ctx, enum hs_say what, const char *msg)
{
	struct fix *f = (struct fix *)ctx;	/* ctx is f's first member */

	if (what == HS_SAY_ERR)
		f->errors++;
	else if (what == HS_SAY_WARN)
		f->warnings++;
	snprintf(f->said, sizeof(f->said), "%s", msg);
}

static void on_trace(void *arg, const struct hs_trace *t)
{
	struct fix *f = arg;

	assert_true(t->nhops > 0);
	f->traces++;
}

static void on_event(void *arg, const struct hs_event *ev)
{
	struct fix *f = arg;

	if (ev->kind == HS_EV_CAPTURE_STARTED)
		f->started++;
	if (ev->kind == HS_EV_CAPTURE_ENDED) {
		f->ended++;
		f->ended_status = ev->status;
	}
}

static void on_done(struct hs_ctx *ctx, int status)
{
	(void)status;
	uv_stop(ctx->loop);
}

static int setup(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));
	char err[256];

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/hs-engine-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->db, sizeof(f->db), "%s/hopscope.db", f->dir);
	assert_int_equal(uv_loop_init(&f->loop), 0);
	f->ctx.loop = &f->loop;
	f->ctx.set.trace_timeout_ns = HS_NS_PER_SEC;
	f->ctx.set.policy = HS_POLICY_DEFAULT;
	f->ctx.set.db_path = f->db;
	f->ctx.say = say;
	assert_int_equal(hs_engine_init(&f->ctx, err, sizeof(err)), 0);
	assert_int_equal(hs_sub_traces(&f->ctx.subs, HS_TRACES_ALL, on_trace, NULL, f), 0);
	assert_int_equal(hs_sub_events(&f->ctx.subs, on_event, f), 0);
	*state = f;
	return 0;
}

static void close_handle(uv_handle_t *h, void *arg)
{
	(void)arg;
	if (!uv_is_closing(h))
		uv_close(h, NULL);
}

static int teardown(void **state)
{
	struct fix *f = *state;

	if (!f->gone) {
		hs_unsub_events(&f->ctx.subs, on_event, f);
		hs_unsub_traces(&f->ctx.subs, on_trace, f);
		hs_engine_fini(&f->ctx);
	}
	uv_walk(&f->loop, close_handle, NULL);
	uv_run(&f->loop, UV_RUN_DEFAULT);
	assert_int_equal(uv_loop_close(&f->loop), 0);
	unlink(f->db);
	char side[128];
	snprintf(side, sizeof(side), "%s-wal", f->db);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", f->db);
	unlink(side);
	rmdir(f->dir);
	free(f->ctx.set.analyzer);
	free(f);
	return 0;
}

/* a file read to its end: traces and events published, a session kept */
static void test_reads_file(void **state)
{
	struct fix *f = *state;
	char err[256];

	assert_int_equal(hs_capture_start(&f->ctx, SAMPLE, true, 0, 0, 0), 0);
	hs_capture_on_done(&f->ctx, on_done);
	uv_run(&f->loop, UV_RUN_DEFAULT);

	assert_false(hs_capture_running(&f->ctx));
	assert_int_equal(f->started, 1);
	assert_int_equal(f->ended, 1);
	assert_int_equal(f->ended_status, 0);
	assert_true(f->traces > 0);
	assert_true(f->ctx.last_stats.packets > 0);
	assert_int_equal(f->errors, 0);
	assert_true(f->ctx.ring_session > 0);

	int64_t session = f->ctx.ring_session;
	hs_unsub_events(&f->ctx.subs, on_event, f);
	hs_unsub_traces(&f->ctx.subs, on_trace, f);
	hs_engine_fini(&f->ctx);	/* commits the history and closes it */
	f->gone = true;
	struct hs_store *st = hs_store_open(f->db, err, sizeof(err));
	assert_non_null(st);
	char ident[256];
	assert_int_equal(hs_file_identity(SAMPLE, ident, sizeof(ident)), 0);
	assert_int_equal(hs_store_input_session(st, ident), session);
	hs_store_close(st);
}

/* a file that is not there: -1, the error told to the client through say
 * (naming the file), nothing running */
static void test_says_error(void **state)
{
	struct fix *f = *state;
	char path[128];

	snprintf(path, sizeof(path), "%s/none.pcap", f->dir);
	assert_int_equal(hs_capture_start(&f->ctx, path, true, 0, 0, 0), -1);
	assert_int_equal(f->errors, 1);
	assert_non_null(strstr(f->said, path));
	assert_false(hs_capture_running(&f->ctx));
	assert_int_equal(f->started, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_reads_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_says_error, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
