/* outfile.c - the one way a verb writes a file the user named (outfile.h)
 *
 * The checks come before anything is created: a refused file leaves no
 * trace. The temporary file is DIR/.NAME.XXXXXX, made with mkostemp (mode
 * 0600, then the mode a new file gets under the umask) and put in place
 * with rename(2), or, without force, with renameat2(RENAME_NOREPLACE)
 * (link(2) and unlink(2) where the file system cannot), so that a name
 * taken meanwhile is not replaced.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture.h"
#include "ctx.h"
#include "hs.h"
#include "interrupt.h"
#include "outfile.h"
#include "privsep.h"
#include "reply.h"
#include "store.h"

void hs_guard_init(struct hs_guard *g)
{
	*g = (struct hs_guard){ 0 };
}

void hs_guard_free(struct hs_guard *g)
{
	for (size_t i = 0; i < g->n; i++) {
		free(g->e[i].name);
		free(g->e[i].what);
	}
	free(g->e);
	*g = (struct hs_guard){ 0 };
}

static void guard_add(struct hs_guard *g, const struct stat *sb, const char *name,
		      const char *what)
{
	if (g->n == g->cap) {
		struct hs_guard_ent *e = hs_xcalloc(g->cap ? 2 * g->cap : 16, sizeof(*e));

		if (g->n)
			memcpy(e, g->e, g->n * sizeof(*e));
		free(g->e);
		g->e = e;
		g->cap = g->cap ? 2 * g->cap : 16;
	}
	g->e[g->n++] = (struct hs_guard_ent){ .dev = sb->st_dev, .ino = sb->st_ino,
		.name = name ? hs_xstrdup(name) : NULL, .what = hs_xstrdup(what) };
}

void hs_guard_path(struct hs_guard *g, const char *path, const char *what)
{
	struct stat sb;

	if (stat(path, &sb) == 0)
		guard_add(g, &sb, NULL, what);
}

void hs_guard_fd(struct hs_guard *g, int fd, const char *what)
{
	struct stat sb;

	if (fd >= 0 && fstat(fd, &sb) == 0)
		guard_add(g, &sb, NULL, what);
}

/* the directory of path and its last name, in copies (free dir) */
static int split_name(const char *path, char **dir, const char **base, struct stat *dsb)
{
	char *d = hs_xstrdup(path);
	const char *b = strrchr(path, '/');

	*base = b ? b + 1 : path;
	*dir = hs_xstrdup(dirname(d));
	free(d);
	if (stat(*dir, dsb) < 0) {
		free(*dir);
		*dir = NULL;
		return -1;
	}
	return 0;
}

void hs_guard_name(struct hs_guard *g, const char *path, const char *what)
{
	struct stat dsb;
	const char *base;
	char *dir;

	if (split_name(path, &dir, &base, &dsb) == 0)
		guard_add(g, &dsb, base, what);
	free(dir);
}

void hs_guard_history(struct hs_guard *g, const char *path)
{
	static const char *const sfx[] = { "", "-wal", "-shm", "-journal" };
	char *real = realpath(path, NULL);
	const char *names[2] = { path, real && strcmp(real, path) != 0 ? real : NULL };
	char f[PATH_MAX + 16], what[PATH_MAX + 64];

	snprintf(what, sizeof(what), "it is the open history '%s'", path);
	hs_guard_path(g, path, what);
	for (size_t k = 0; k < HS_ARRAY_SIZE(names) && names[k]; k++) {
		for (size_t i = 0; i < HS_ARRAY_SIZE(sfx); i++) {
			snprintf(f, sizeof(f), "%s%s", names[k], sfx[i]);
			if (i > 0)
				snprintf(what, sizeof(what), "it is a file of the open "
					 "history ('%s')", f);
			hs_guard_name(g, f, what);
		}
	}
	free(real);
}

static void guard_runbook(void *arg, int fd)
{
	hs_guard_fd(arg, fd, "it is a runbook being run");
}

void hs_guard_ctx(struct hs_guard *g, struct hs_ctx *ctx)
{
	const char *source, *why;
	bool is_file = false;
	uint64_t a, b;
	char what[PATH_MAX + 64];
	struct stat sb;

	if (ctx->store)
		hs_guard_history(g, hs_store_path(ctx->store));
	if (ctx->set.db_path)
		hs_guard_history(g, ctx->set.db_path);
	if (hs_capture_info(ctx, &source, &is_file, &why, &a, &b) && is_file) {
		snprintf(what, sizeof(what), "it is the capture file being read ('%s')", source);
		hs_guard_path(g, source, what);
	}
	/* runbooks (-f, source) and commands read from a file on standard input */
	if (ctx->con)
		ctx->con->each_file(ctx, guard_runbook, g);
	if (fstat(STDIN_FILENO, &sb) == 0 && S_ISREG(sb.st_mode))
		guard_add(g, &sb, NULL, "it is the file on standard input");
}

/* ---- writing --------------------------------------------------------------------- */

static int refuse(char *err, size_t errlen, const char *path, const char *why)
{
	snprintf(err, errlen, "will not write '%s': %s", path, why);
	return -1;
}

static int fail(char *err, size_t errlen, const char *path, int e)
{
	snprintf(err, errlen, "cannot write '%s': %s%s", path, strerror(e), hs_privs_why(e));
	return -1;
}

/* the guard entry that path (lstat'ed as sb when it exists) is, or NULL */
static const struct hs_guard_ent *guarded(const struct hs_guard *g, const char *path,
					  const struct stat *sb)
{
	struct stat dsb;
	const char *base;
	char *dir;
	bool named = split_name(path, &dir, &base, &dsb) == 0;
	const struct hs_guard_ent *hit = NULL;

	for (size_t i = 0; g && i < g->n && !hit; i++) {
		const struct hs_guard_ent *e = &g->e[i];
		if (e->name ? named && e->dev == dsb.st_dev && e->ino == dsb.st_ino &&
			      strcmp(e->name, base) == 0
			    : sb && e->dev == sb->st_dev && e->ino == sb->st_ino)
			hit = e;
	}
	free(dir);
	return hit;
}

static void outfile_free(struct hs_outfile *f)
{
	free(f->path);
	free(f->tmp);
	*f = (struct hs_outfile){ 0 };
}

/* a FIFO or a character device: a stream, written in place (a FIFO waits
 * for its reader until a signal, hs_fopen_write) */
static int open_stream(struct hs_outfile *f, char *err, size_t errlen)
{
	if ((f->fp = hs_fopen_write(f->path)))
		return 0;
	if (errno == EINTR) {
		snprintf(err, errlen, "'%s' not written: interrupted while waiting for a reader",
			 f->path);
		return -1;
	}
	return fail(err, errlen, f->path, errno);
}

/* a regular file: a temporary file beside the name, renamed at the end */
static int open_tmp(struct hs_outfile *f, char *err, size_t errlen)
{
	struct stat dsb;
	const char *base;
	char *dir;

	if (split_name(f->path, &dir, &base, &dsb) < 0)
		return fail(err, errlen, f->path, errno);
	size_t len = strlen(dir) + strlen(base) + 16;
	f->tmp = hs_xcalloc(1, len);
	snprintf(f->tmp, len, "%s/.%s.XXXXXX", dir, base);
	free(dir);
	int fd = mkostemp(f->tmp, O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		snprintf(err, errlen, "cannot write '%s': cannot make a temporary file beside it: "
			 "%s%s", f->path, strerror(e), hs_privs_why(e));
		return -1;
	}
	mode_t um = umask(0);
	umask(um);
	if (fchmod(fd, 0666 & ~um) < 0 || !(f->fp = fdopen(fd, "w"))) {
		int e = errno;
		close(fd);
		unlink(f->tmp);
		return fail(err, errlen, f->path, e);
	}
	return 0;
}

int hs_outfile_open(struct hs_outfile *f, const char *path, bool force,
		    const struct hs_guard *g, char *err, size_t errlen)
{
	struct stat sb;
	const struct hs_guard_ent *e;
	int rc;

	*f = (struct hs_outfile){ .force = force };
	if (!*path) {
		snprintf(err, errlen, "empty file name");
		return -1;
	}
	bool exists = lstat(path, &sb) == 0;
	if (!exists && errno != ENOENT)
		rc = fail(err, errlen, path, errno);
	else if ((e = guarded(g, path, exists ? &sb : NULL)))
		rc = refuse(err, errlen, path, e->what);
	else if (!exists)
		rc = 1;
	else if (S_ISLNK(sb.st_mode))
		rc = force ? 1 : refuse(err, errlen, path, "it is a symbolic link (--force "
					"replaces the link)");
	else if (S_ISREG(sb.st_mode))
		rc = force ? 1 : refuse(err, errlen, path, "it exists (--force replaces it)");
	else if (S_ISDIR(sb.st_mode))
		rc = fail(err, errlen, path, EISDIR);
	else if (S_ISBLK(sb.st_mode))
		rc = refuse(err, errlen, path, "it is a block device");
	else
		rc = 0;
	if (rc < 0)
		return -1;
	f->path = hs_xstrdup(path);
	if ((rc ? open_tmp(f, err, errlen) : open_stream(f, err, errlen)) < 0) {
		outfile_free(f);
		return -1;
	}
	return 0;
}

/* put the written temporary file in its place */
static int place(struct hs_outfile *f)
{
	if (f->force)
		return rename(f->tmp, f->path);
	if (renameat2(AT_FDCWD, f->tmp, AT_FDCWD, f->path, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
		return -1;
	if (link(f->tmp, f->path) < 0)
		return -1;
	unlink(f->tmp);
	return 0;
}

int hs_outfile_close(struct hs_outfile *f, bool failed, char *err, size_t errlen)
{
	int e = failed ? (errno ? errno : EIO) : 0;

	if (!e && (fflush(f->fp) != 0 || ferror(f->fp)))
		e = errno ? errno : EIO;
	if (!e && f->tmp && fsync(fileno(f->fp)) < 0)
		e = errno;
	if (fclose(f->fp) != 0 && !e)
		e = errno ? errno : EIO;
	f->fp = NULL;
	if (!e && f->tmp && place(f) < 0)
		e = errno;
	if (e) {
		if (e == EEXIST)
			refuse(err, errlen, f->path, "it exists (--force replaces it)");
		else if (e == EINTR)
			snprintf(err, errlen, "'%s' not finished: interrupted", f->path);
		else
			fail(err, errlen, f->path, e);
		if (f->tmp)
			unlink(f->tmp);
		outfile_free(f);
		return -1;
	}
	outfile_free(f);
	return 0;
}

void hs_outfile_abort(struct hs_outfile *f)
{
	if (f->fp)
		fclose(f->fp);
	if (f->tmp)
		unlink(f->tmp);
	outfile_free(f);
}
