/* test_privs.c - giving a new history to the user root becomes: through
 * descriptors, never by a link or a second name planted beside it */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "privsep.h"

#define TO_UID 65534	/* any uid but root's */
#define TO_GID 65534

struct fixture {
	char dir[64];
	char path[128], wal[160], shm[160], target[128], other[128];
};

static void write_text(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	fputs(text, fp);
	assert_int_equal(fclose(fp), 0);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	snprintf(f->dir, sizeof(f->dir), "/tmp/hs-privs-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/h.db", f->dir);
	snprintf(f->wal, sizeof(f->wal), "%s-wal", f->path);
	snprintf(f->shm, sizeof(f->shm), "%s-shm", f->path);
	snprintf(f->target, sizeof(f->target), "%s/rootfile", f->dir);
	snprintf(f->other, sizeof(f->other), "%s/otherfile", f->dir);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	unlink(f->path);
	unlink(f->wal);
	unlink(f->shm);
	unlink(f->target);
	unlink(f->other);
	rmdir(f->dir);
	free(f);
	return 0;
}

/* what was not given, as told */
struct warned {
	int n;
	char last[512];
};

static void warn(void *arg, const char *msg)
{
	struct warned *w = arg;

	w->n++;
	snprintf(w->last, sizeof(w->last), "%s", msg);
}

/* A -wal planted as a symbolic link to root's file and a -shm planted as a
 * second name of another: the history is given, neither of them nor what
 * they name (code that changed the owner by path would hand them over);
 * each left alone is told, naming the file */
static void test_give_planted(void **state)
{
	struct fixture *f = *state;
	struct hs_privs p = { .drop = true, .uid = TO_UID, .gid = TO_GID, .user = "nobody" };
	struct stat sb;

	write_text(f->path, "");
	write_text(f->target, "root keeps this");
	write_text(f->other, "and this");
	assert_int_equal(symlink(f->target, f->wal), 0);
	assert_int_equal(link(f->other, f->shm), 0);

	struct warned w = { 0 };
	hs_privs_give(&p, f->path, warn, &w);
	assert_int_equal(w.n, 2);
	assert_non_null(strstr(w.last, f->shm));

	assert_int_equal(stat(f->path, &sb), 0);
	assert_int_equal(sb.st_uid, TO_UID);
	assert_int_equal(sb.st_gid, TO_GID);
	assert_int_equal(lstat(f->wal, &sb), 0);
	assert_true(S_ISLNK(sb.st_mode));
	assert_int_equal(sb.st_uid, 0);
	assert_int_equal(stat(f->target, &sb), 0);
	assert_int_equal(sb.st_uid, 0);
	assert_int_equal(sb.st_gid, 0);
	assert_int_equal(sb.st_size, (off_t)strlen("root keeps this"));
	assert_int_equal(stat(f->other, &sb), 0);
	assert_int_equal(sb.st_uid, 0);
}

/* the -wal and -shm SQLite made are given with the history */
static void test_give_own(void **state)
{
	struct fixture *f = *state;
	struct hs_privs p = { .drop = true, .uid = TO_UID, .gid = TO_GID, .user = "nobody" };
	struct stat sb;

	write_text(f->path, "");
	write_text(f->wal, "");
	write_text(f->shm, "");
	struct warned w = { 0 };
	hs_privs_give(&p, f->path, warn, &w);
	assert_int_equal(w.n, 0);
	for (const char *n = f->path; n; n = n == f->path ? f->wal : n == f->wal ? f->shm : NULL) {
		assert_int_equal(stat(n, &sb), 0);
		assert_int_equal(sb.st_uid, TO_UID);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_give_planted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_give_own, setup, teardown),
	};

	if (geteuid() != 0) {
		printf("# giving files away needs root\n");
		return 77;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
