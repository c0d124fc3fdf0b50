/* store.h - the SQLite history
 *
 * One file per capture project. WAL journal, schema versioned with
 * PRAGMA user_version, files marked as ours with PRAGMA application_id.
 * Writes are queued into an open transaction and committed in batches by
 * hs_store_commit(): a kill -9 loses at most the uncommitted batch.
 * Every value from the user or the wire is bound, never spliced into SQL.
 */
#ifndef HS_STORE_H
#define HS_STORE_H

#include "hs.h"
#include "tracer.h"
#include "flows.h"
#include "topo.h"

#define HS_STORE_APP_ID 0x48734331	/* "HsC1" */
#define HS_STORE_SCHEMA 11

struct sqlite3;

struct hs_session_stats {
	uint64_t packets, bytes, decode_errors, kernel_drops, traces;
	const char *input;	/* a file read to its end: its identity (hs_file_identity), else NULL */
};

/* Open or create. NULL with a message in err when the file is not a hopscope
 * history, is from a newer hopscope, is locked or cannot be opened; nothing
 * in the file is changed then. */
struct hs_store *hs_store_open(const char *path, char *err, size_t errlen);
/* the same; notice(arg, msg) is called before a history written by an older
 * hopscope is upgraded to this schema (a large one takes a while) */
struct hs_store *hs_store_open_notice(const char *path, char *err, size_t errlen,
				      void (*notice)(void *arg, const char *msg), void *arg);
void hs_store_close(struct hs_store *st);	/* commits what is queued */
const char *hs_store_path(const struct hs_store *st);
struct sqlite3 *hs_store_db(struct hs_store *st);
const char *hs_store_errmsg(struct hs_store *st);

/* returns the session id, or -1 */
int64_t hs_store_session_begin(struct hs_store *st, const char *source,
			       const char *filter, uint64_t wall_ns);
int hs_store_session_end(struct hs_store *st, int64_t session,
			 const struct hs_session_stats *stats, uint64_t wall_ns);
/* the session that read the file of this identity to its end: its id, 0
 * when none did, -1 on error */
int64_t hs_store_input_session(struct hs_store *st, const char *input);

/* queue rows into the current batch; 0 or -1 */
int hs_store_trace(struct hs_store *st, int64_t session, const struct hs_trace *t,
		   const struct hs_topo *topo);
/* a flow's row: inserted the first time, then updated in place (f->row
 * remembers it; 0 before the first write of the session). A first write
 * waits in the batch, which keeps f: it must stay where it is until the
 * next hs_store_commit. */
int hs_store_flow(struct hs_store *st, int64_t session, struct hs_flow *f);
/* one decoded control message; sw NULL for a plain SPAN copy, key NULL or
 * zero for MAC control */
int hs_store_control(struct hs_store *st, int64_t session, uint64_t ts_ns, const char *sw,
		     const char *proto, const char *kind, const struct hs_flowkey *key,
		     const char *detail);
/* commit the batch; returns rows committed or -1. A batch that cannot be
 * committed (disk full, I/O error) is rolled back and its rows counted as
 * lost; -1 also when SQLite rolled back a batch after a failed write. */
int hs_store_commit(struct hs_store *st);
size_t hs_store_pending(const struct hs_store *st);
/* open the next batch now, taking the file's write lock: waiting for it as
 * a write does (wait), or failing at once when another program holds it.
 * 0 or -1. */
int hs_store_begin(struct hs_store *st, bool wait);
uint64_t hs_store_written(const struct hs_store *st);	/* rows committed so far */
uint64_t hs_store_lost(const struct hs_store *st);	/* rows queued, then rolled back */

/* the names (SESSION:N) of the newest stored traces whose name begins with
 * PFX, newest first: fn is called for each, at most max times. The number
 * found, or -1 with nothing called when the history cannot be read. */
int hs_store_trace_names(struct hs_store *st, const char *pfx, int max,
			 void (*fn)(void *arg, const char *name), void *arg);

/* read-only statement for 'sql': refuses writes, ATTACH, PRAGMA changes and
 * load_extension (authorizer). NULL with err set. */
struct sqlite3_stmt *hs_store_prepare_ro(struct hs_store *st, const char *sql,
					 char *err, size_t errlen);

/* Retention: the history's own bounds, kept in the file. A bound of 0 is
 * none. Rows older than age go (a session by when it ended, wall clock;
 * the live capture's rows by capture time); over max_bytes, the oldest
 * session's rows go first, the live session's oldest last. */
struct hs_retention {
	uint64_t age_ns, max_bytes;
};
struct hs_prune {			/* rows removed, added up over steps */
	uint64_t traces, flows, sessions, probes, other;
};
int hs_store_retention(struct hs_store *st, struct hs_retention *r);		/* 0 or -1 */
int hs_store_set_retention(struct hs_store *st, const struct hs_retention *r);	/* 0 or -1 */
/* pages in use, the free ones not counted */
uint64_t hs_store_used_bytes(struct hs_store *st);
/* One step of enforcing retention, at most budget rows of each kind, in one
 * transaction. live: the session of a running live capture (0: none).
 * Returns 1 when more remains to remove, 0 when the history is within its
 * bounds, -1 on error (hs_store_errmsg). */
int hs_store_prune(struct hs_store *st, uint64_t now_wall_ns, int64_t live, unsigned budget,
		   struct hs_prune *res);

#endif
