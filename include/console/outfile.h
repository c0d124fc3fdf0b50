/* outfile.h - the one way a verb writes a file the user named
 *
 * A file a verb writes must never be one it reads: the open history (and
 * its -wal, -shm and -journal, even before they exist), the capture file
 * being read, a runbook being run. These are compared by device and inode
 * (and a history's side files by directory and name), so another name for
 * the same file (a hard link, a path with ..) is caught too.
 *
 * A regular file is written to a temporary file in the same directory and
 * renamed over the name only once it is written whole: a failed write
 * leaves what was there before. An existing file, or a symbolic link, is
 * replaced only with force, and a link is never written through (one
 * planted in a shared directory cannot send the write elsewhere); without
 * force the name is claimed without replacing, so a file that appears
 * meanwhile is kept too. A FIFO or a character device (/dev/null, a
 * terminal) is written in place, as a stream; a directory or a block
 * device is refused.
 */
#ifndef HS_OUTFILE_H
#define HS_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

struct hs_ctx;

/* what a written file must not be */
struct hs_guard {
	size_t n, cap;
	struct hs_guard_ent {
		dev_t dev;	/* the file, or the directory when name is set */
		ino_t ino;
		char *name;	/* a name in that directory, existing or not */
		char *what;	/* "it is the open history 'h.db'" */
	} *e;
};

void hs_guard_init(struct hs_guard *g);
void hs_guard_free(struct hs_guard *g);
/* the file at path as it is now (nothing when it does not exist) */
void hs_guard_path(struct hs_guard *g, const char *path, const char *what);
/* the name path in its directory, whether it exists or not */
void hs_guard_name(struct hs_guard *g, const char *path, const char *what);
/* the open file fd */
void hs_guard_fd(struct hs_guard *g, int fd, const char *what);
/* the history at path: the file, and its side files by name */
void hs_guard_history(struct hs_guard *g, const char *path);
/* everything the console reads or keeps open now (history, capture file,
 * runbooks) */
void hs_guard_ctx(struct hs_guard *g, struct hs_ctx *ctx);

struct hs_outfile {
	FILE *fp;		/* write here */
	char *path;		/* the name given */
	char *tmp;		/* the temporary file; NULL when written in place */
	bool force;
};

/* Open path for writing. Returns 0, or -1 with the reason in err ("will
 * not write 'x': it exists (--force replaces it)") and nothing changed. */
int hs_outfile_open(struct hs_outfile *f, const char *path, bool force,
		    const struct hs_guard *g, char *err, size_t errlen);
/* Finish: flush, sync and put the file in its place. failed: the caller's
 * write failed (errno says why). Returns 0, or -1 with the reason in err
 * and the temporary file removed; what was at the name before is kept. */
int hs_outfile_close(struct hs_outfile *f, bool failed, char *err, size_t errlen);
/* Give up: the temporary file is removed, the name left as it was */
void hs_outfile_abort(struct hs_outfile *f);

#endif
