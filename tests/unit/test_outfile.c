/* test_outfile.c - the one way a verb writes a file (src/console/outfile.c):
 * what it refuses, what it replaces, and that a failed write keeps what was
 * there */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

/* ---- the rule, over random targets -------------------------------------------------- */

/* A seeded run of writes onto every kind of thing a user can name: a new
 * name, a file, links (to a file, to nothing, to the history), a FIFO, a
 * directory, the history and its side files by any name, the capture being
 * read, a runbook, a name under a missing directory or under a file;
 * forced or not; the write failing, given up or whole. After each, the
 * tree is compared with what it was: a refused, failed or abandoned write
 * changed nothing and said why in one line naming the file; a whole write
 * changed the name written and nothing else (a link replaced, never
 * written through; no temporary file left behind). */
enum prop_kind {
	K_NEW, K_FILE, K_LINK_FILE, K_LINK_DANGLING, K_LINK_HISTORY, K_FIFO, K_DIR,
	K_HISTORY, K_WAL, K_SHM, K_JOURNAL, K_HISTORY_DOTDOT, K_HARDLINK, K_INPUT,
	K_INPUT_DOTDOT, K_RUNBOOK, K_NODIR, K_NOTDIR, K__COUNT
};

struct prop_ent {
	char path[PATH_MAX];
	mode_t type;
	ino_t ino;
	uint64_t sum;		/* a regular file's bytes */
	char link[PATH_MAX];	/* a link's target */
};

struct prop_snap {
	struct prop_ent e[64];
	int n;
};

static uint64_t prop_state;

static uint32_t prop_rand(uint32_t n)
{
	/* xorshift64*: the same sequence for the same seed */
	prop_state ^= prop_state >> 12;
	prop_state ^= prop_state << 25;
	prop_state ^= prop_state >> 27;
	return (uint32_t)((prop_state * 0x2545F4914F6CDD1DULL) >> 32) % n;
}

static uint64_t file_sum(const char *path)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	FILE *fp = fopen(path, "rb");
	int c;

	assert_non_null(fp);
	while ((c = getc(fp)) != EOF)
		h = (h ^ (uint8_t)c) * 0x100000001b3ULL;
	fclose(fp);
	return h;
}

static void prop_walk(struct prop_snap *s, const char *dir)
{
	char name[PATH_MAX];

	DIR *d = opendir(dir);
	struct dirent *de;

	assert_non_null(d);
	while ((de = readdir(d))) {
		struct prop_ent *e;
		struct stat sb;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		assert_true(s->n < (int)(sizeof(s->e) / sizeof(s->e[0])));
		e = &s->e[s->n++];
		memset(e, 0, sizeof(*e));
		snprintf(name, sizeof(name), "%s/%s", dir, de->d_name);
		memcpy(e->path, name, sizeof(e->path));
		assert_int_equal(lstat(e->path, &sb), 0);
		e->type = sb.st_mode & S_IFMT;
		e->ino = sb.st_ino;
		if (S_ISREG(sb.st_mode))
			e->sum = file_sum(e->path);
		else if (S_ISLNK(sb.st_mode))
			assert_true(readlink(e->path, e->link, sizeof(e->link) - 1) > 0);
		else if (S_ISDIR(sb.st_mode))
			prop_walk(s, e->path);
	}
	closedir(d);
}

static const struct prop_ent *prop_find(const struct prop_snap *s, const char *path)
{
	for (int i = 0; i < s->n; i++)
		if (strcmp(s->e[i].path, path) == 0)
			return &s->e[i];
	return NULL;
}

/* every entry of a is in b as it was, but the one named except */
static void prop_same(const struct prop_snap *a, const struct prop_snap *b, const char *except,
		      const char *what)
{
	for (int k = 0; k < 2; k++) {
		const struct prop_snap *x = k ? b : a, *y = k ? a : b;
		for (int i = 0; i < x->n; i++) {
			const struct prop_ent *e = &x->e[i], *o = prop_find(y, e->path);
			if (except && strcmp(e->path, except) == 0)
				continue;
			if (!o)
				fail_msg("%s: '%s' %s", what, e->path, k ? "appeared" : "is gone");
			if (o->type != e->type || o->ino != e->ino || o->sum != e->sum ||
			    strcmp(o->link, e->link) != 0)
				fail_msg("%s: '%s' changed", what, e->path);
		}
	}
}

static void prop_remove(const char *path)
{
	struct stat sb;

	if (lstat(path, &sb) < 0)
		return;
	assert_int_equal(S_ISDIR(sb.st_mode) ? rmdir(path) : unlink(path), 0);
}

static void test_rule_random(void **state)
{
	struct fixture *f = *state;
	char db[160], in[160], book[160], out[160], secret[160], absent[160], hard[160];
	const char *env = getenv("HOPSCOPE_TEST_SEED");
	uint64_t seed = env ? strtoull(env, NULL, 0) : 20261125;
	struct hs_guard g;
	int refusals = 0, writes = 0;

	prop_state = seed ? seed : 1;
	snprintf(db, sizeof(db), "%s/h.db", f->dir);
	snprintf(in, sizeof(in), "%s/in.pcap", f->dir);
	snprintf(book, sizeof(book), "%s/run.hs", f->dir);
	snprintf(out, sizeof(out), "%s/out", f->dir);
	snprintf(secret, sizeof(secret), "%s/victim/secret", f->dir);
	snprintf(absent, sizeof(absent), "%s/victim/absent", f->dir);
	snprintf(hard, sizeof(hard), "%s/out/also.db", f->dir);
	put(db, "history");
	put(in, "capture");
	put(book, "traces\n");
	for (int i = 0; i < 2; i++) {
		char side[176];
		snprintf(side, sizeof(side), "%s%s", db, i ? "-shm" : "-wal");
		put(side, i ? "shm" : "wal");
	}
	assert_int_equal(mkdir(out, 0700), 0);
	snprintf(absent, sizeof(absent), "%s/victim", f->dir);
	assert_int_equal(mkdir(absent, 0700), 0);
	snprintf(absent, sizeof(absent), "%s/victim/absent", f->dir);
	put(secret, "secret");
	assert_int_equal(link(db, hard), 0);
	int bookfd = open(book, O_RDONLY);
	assert_true(bookfd >= 0);
	hs_guard_init(&g);
	hs_guard_history(&g, db);
	hs_guard_path(&g, in, "it is the capture file being read");
	hs_guard_fd(&g, bookfd, "it is a runbook being run");

	for (int iter = 0; iter < 400; iter++) {
		enum prop_kind kind = (enum prop_kind)prop_rand(K__COUNT);
		bool force = prop_rand(2), may = false;
		int end = (int)prop_rand(4);	/* 0: the write fails, 1: given up, else whole */
		char path[192], text[256], err[512], what[96];
		static struct prop_snap before, after;
		struct hs_outfile of;
		int rd = -1;

		/* one of four names in out/, made anew as this kind */
		snprintf(path, sizeof(path), "%s/t%u", out, prop_rand(4));
		prop_remove(path);
		switch (kind) {
		case K_NEW: may = true; break;
		case K_FILE: put(path, "old"); may = force; break;
		case K_LINK_FILE: assert_int_equal(symlink(secret, path), 0); may = force; break;
		case K_LINK_DANGLING: assert_int_equal(symlink(absent, path), 0); may = force; break;
		case K_LINK_HISTORY: assert_int_equal(symlink(db, path), 0); may = force; break;
		case K_FIFO:
			assert_int_equal(mkfifo(path, 0600), 0);
			rd = open(path, O_RDONLY | O_NONBLOCK);
			assert_true(rd >= 0);
			may = true;
			break;
		case K_DIR: assert_int_equal(mkdir(path, 0700), 0); break;
		case K_HISTORY: snprintf(path, sizeof(path), "%s", db); break;
		case K_WAL: snprintf(path, sizeof(path), "%s-wal", db); break;
		case K_SHM: snprintf(path, sizeof(path), "%s-shm", db); break;
		case K_JOURNAL: snprintf(path, sizeof(path), "%s-journal", db); break;
		case K_HISTORY_DOTDOT: snprintf(path, sizeof(path), "%s/../h.db", out); break;
		case K_HARDLINK: snprintf(path, sizeof(path), "%s", hard); break;
		case K_INPUT: snprintf(path, sizeof(path), "%s", in); break;
		case K_INPUT_DOTDOT: snprintf(path, sizeof(path), "%s/../in.pcap", out); break;
		case K_RUNBOOK: snprintf(path, sizeof(path), "%s", book); break;
		case K_NODIR: snprintf(path, sizeof(path), "%s/none/x", f->dir); break;
		case K_NOTDIR: snprintf(path, sizeof(path), "%s/x", in); break;
		case K__COUNT: break;
		}
		snprintf(what, sizeof(what), "seed %llu, write %d (kind %d, force %d, end %d)",
			 (unsigned long long)seed, iter, (int)kind, force, end);
		size_t len = prop_rand(sizeof(text));
		for (size_t i = 0; i < len; i++)
			text[i] = (char)(' ' + prop_rand(95));
		before.n = after.n = 0;
		prop_walk(&before, f->dir);

		if (hs_outfile_open(&of, path, force, &g, err, sizeof(err)) < 0) {
			if (may)
				fail_msg("%s: refused: %s", what, err);
			refusals++;
		} else {
			if (!may)
				fail_msg("%s: '%s' opened for writing", what, path);
			assert_int_equal(fwrite(text, 1, len, of.fp), len);
			if (end == 1) {
				hs_outfile_abort(&of);
				err[0] = '\0';
			} else if (end == 0) {
				errno = EIO;
				if (hs_outfile_close(&of, true, err, sizeof(err)) == 0)
					fail_msg("%s: a failed write said success", what);
			} else if (hs_outfile_close(&of, false, err, sizeof(err)) < 0) {
				fail_msg("%s: %s", what, err);
			}
		}
		prop_walk(&after, f->dir);
		if (!may || end < 2) {
			/* nothing changed; an error, one line naming the file */
			prop_same(&before, &after, NULL, what);
			if (end != 1 || !may) {
				if (!err[0] || strchr(err, '\n') || !strstr(err, path))
					fail_msg("%s: error '%s'", what, err);
			}
		} else if (kind == K_FIFO) {
			/* a stream, written in place */
			char got[256];
			ssize_t n = read(rd, got, sizeof(got));
			assert_int_equal(len ? n : 0, (ssize_t)len);
			assert_memory_equal(got, text, len);
			prop_same(&before, &after, NULL, what);
			writes++;
		} else {
			/* the name holds what was written, as a file of its own;
			 * everything else as it was */
			const struct prop_ent *e = prop_find(&after, path);
			uint64_t h = 0xcbf29ce484222325ULL;
			for (size_t i = 0; i < len; i++)
				h = (h ^ (uint8_t)text[i]) * 0x100000001b3ULL;
			if (!e || e->type != S_IFREG || e->sum != h)
				fail_msg("%s: '%s' does not hold what was written", what, path);
			prop_same(&before, &after, path, what);
			writes++;
		}
		if (rd >= 0)
			close(rd);
	}
	/* the run tried both sides of the rule */
	assert_true(refusals > 100);
	assert_true(writes > 30);
	close(bookfd);
	hs_guard_free(&g);
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
		cmocka_unit_test_setup_teardown(test_rule_random, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
