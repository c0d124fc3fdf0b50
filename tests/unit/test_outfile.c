/* test_outfile.c - the one way a verb writes a file (src/console/outfile.c):
 * what it refuses, what it replaces, and that a failed write keeps what was
 * there */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "outfile.h"

struct fixture {
	char dir[64];
	char path[128];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	strcpy(f->dir, "/tmp/hs-outfile.XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/out", f->dir);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd) != 0)
		return -1;
	free(f);
	return 0;
}

static void put(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	fputs(text, fp);
	assert_int_equal(fclose(fp), 0);
}

/* the file's text ("" when missing) */
static const char *text_of(const char *path)
{
	static char buf[256];
	FILE *fp = fopen(path, "r");
	size_t n = 0;

	if (fp) {
		n = fread(buf, 1, sizeof(buf) - 1, fp);
		fclose(fp);
	}
	buf[n] = '\0';
	return buf;
}

static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(d);
	return n;
}

static void refused(const char *path, bool force, const struct hs_guard *g, const char *want)
{
	struct hs_outfile of;
	char err[512];

	assert_int_equal(hs_outfile_open(&of, path, force, g, err, sizeof(err)), -1);
	if (!strstr(err, want))
		fail_msg("got '%s', expected '%s'", err, want);
}

static void test_write_new(void **state)
{
	struct fixture *f = *state;
	struct hs_outfile of;
	char err[512];

	assert_int_equal(hs_outfile_open(&of, f->path, false, NULL, err, sizeof(err)), 0);
	fputs("new\n", of.fp);
	/* written aside: the name appears only when the file is whole */
	assert_int_equal(access(f->path, F_OK), -1);
	assert_int_equal(hs_outfile_close(&of, false, err, sizeof(err)), 0);
	assert_string_equal(text_of(f->path), "new\n");
	assert_int_equal(entries(f->dir), 1);
}

static void test_existing_needs_force(void **state)
{
	struct fixture *f = *state;
	struct hs_outfile of;
	char err[512];

	put(f->path, "old\n");
	refused(f->path, false, NULL, "will not write '");
	refused(f->path, false, NULL, "': it exists (--force replaces it)");
	assert_string_equal(text_of(f->path), "old\n");
	assert_int_equal(hs_outfile_open(&of, f->path, true, NULL, err, sizeof(err)), 0);
	fputs("new\n", of.fp);
	assert_int_equal(hs_outfile_close(&of, false, err, sizeof(err)), 0);
	assert_string_equal(text_of(f->path), "new\n");
	assert_int_equal(entries(f->dir), 1);
}

/* a name taken while the file was written is not replaced without force */
static void test_name_taken_meanwhile(void **state)
{
	struct fixture *f = *state;
	struct hs_outfile of;
	char err[512];

	assert_int_equal(hs_outfile_open(&of, f->path, false, NULL, err, sizeof(err)), 0);
	fputs("mine\n", of.fp);
	put(f->path, "theirs\n");
	assert_int_equal(hs_outfile_close(&of, false, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "it exists (--force replaces it)"));
	assert_string_equal(text_of(f->path), "theirs\n");
	assert_int_equal(entries(f->dir), 1);
}

static void test_failed_write_keeps_old(void **state)
{
	struct fixture *f = *state;
	struct hs_outfile of;
	char err[512];

	put(f->path, "old\n");
	assert_int_equal(hs_outfile_open(&of, f->path, true, NULL, err, sizeof(err)), 0);
	fputs("half of it", of.fp);
	errno = ENOSPC;
	assert_int_equal(hs_outfile_close(&of, true, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "No space left on device"));
	assert_string_equal(text_of(f->path), "old\n");
	assert_int_equal(entries(f->dir), 1);

	/* given up (Ctrl-C): the same */
	assert_int_equal(hs_outfile_open(&of, f->path, true, NULL, err, sizeof(err)), 0);
	fputs("half of it", of.fp);
	hs_outfile_abort(&of);
	assert_string_equal(text_of(f->path), "old\n");
	assert_int_equal(entries(f->dir), 1);
}

static void test_link_not_followed(void **state)
{
	struct fixture *f = *state;
	struct hs_outfile of;
	char target[160], err[512];
	struct stat sb;

	snprintf(target, sizeof(target), "%s/target", f->dir);
	put(target, "precious\n");
	assert_int_equal(symlink(target, f->path), 0);
	refused(f->path, false, NULL, "it is a symbolic link (--force replaces the link)");
	/* a dangling link too: writing would create what it points to */
	char dangling[160];
	snprintf(dangling, sizeof(dangling), "%s/dangling", f->dir);
	assert_int_equal(symlink("/tmp/hs-outfile-nowhere/x", dangling), 0);
	refused(dangling, false, NULL, "it is a symbolic link");
	/* forced: the link is replaced, what it pointed to is untouched */
	assert_int_equal(hs_outfile_open(&of, f->path, true, NULL, err, sizeof(err)), 0);
	fputs("new\n", of.fp);
	assert_int_equal(hs_outfile_close(&of, false, err, sizeof(err)), 0);
	assert_int_equal(lstat(f->path, &sb), 0);
	assert_true(S_ISREG(sb.st_mode));
	assert_string_equal(text_of(f->path), "new\n");
	assert_string_equal(text_of(target), "precious\n");
}

static void test_guarded_files(void **state)
{
	struct fixture *f = *state;
	struct hs_guard g;
	char db[160], side[176], hard[160], other[160], in[160];

	snprintf(db, sizeof(db), "%s/h.db", f->dir);
	snprintf(hard, sizeof(hard), "%s/also.db", f->dir);
	snprintf(in, sizeof(in), "%s/in.pcap", f->dir);
	snprintf(other, sizeof(other), "%s/../%s/in.pcap", f->dir, strrchr(f->dir, '/') + 1);
	put(db, "history\n");
	put(in, "capture\n");
	assert_int_equal(link(db, hard), 0);
	hs_guard_init(&g);
	hs_guard_history(&g, db);
	hs_guard_path(&g, in, "it is the capture file being read");
	/* forced or not, by any name */
	refused(db, true, &g, "it is the open history '");
	refused(hard, true, &g, "it is the open history '");
	refused(other, true, &g, "it is the capture file being read");
	/* its side files, which do not exist yet */
	snprintf(side, sizeof(side), "%s-wal", db);
	refused(side, true, &g, "it is a file of the open history");
	snprintf(side, sizeof(side), "%s-journal", db);
	refused(side, false, &g, "it is a file of the open history");
	assert_string_equal(text_of(db), "history\n");
	assert_string_equal(text_of(in), "capture\n");
	assert_int_equal(entries(f->dir), 3);

	/* an open descriptor */
	struct hs_guard g2;
	int fd = open(in, O_RDONLY);
	hs_guard_init(&g2);
	hs_guard_fd(&g2, fd, "it is a runbook being run");
	refused(in, true, &g2, "it is a runbook being run");
	close(fd);
	hs_guard_free(&g2);
	hs_guard_free(&g);
}

/* streams are written in place: a FIFO, a character device */
static void test_streams(void **state)
{
	struct fixture *f = *state;
	struct hs_outfile of;
	char err[512], buf[16] = { 0 };

	assert_int_equal(mkfifo(f->path, 0600), 0);
	int rd = open(f->path, O_RDONLY | O_NONBLOCK);
	assert_true(rd >= 0);
	assert_int_equal(hs_outfile_open(&of, f->path, false, NULL, err, sizeof(err)), 0);
	fputs("streamed", of.fp);
	assert_int_equal(hs_outfile_close(&of, false, err, sizeof(err)), 0);
	assert_int_equal(read(rd, buf, sizeof(buf) - 1), 8);
	assert_string_equal(buf, "streamed");
	close(rd);
	assert_int_equal(hs_outfile_open(&of, "/dev/null", false, NULL, err, sizeof(err)), 0);
	fputs("gone", of.fp);
	assert_int_equal(hs_outfile_close(&of, false, err, sizeof(err)), 0);

	refused(f->dir, true, NULL, "Is a directory");
	refused("", true, NULL, "empty file name");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_write_new, setup, teardown),
		cmocka_unit_test_setup_teardown(test_existing_needs_force, setup, teardown),
		cmocka_unit_test_setup_teardown(test_name_taken_meanwhile, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failed_write_keeps_old, setup, teardown),
		cmocka_unit_test_setup_teardown(test_link_not_followed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_guarded_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_streams, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
