/* store.h - the history
 *
 * One interface, two engines: a SQLite file per capture project (the
 * default), or a PostgreSQL database that many analyzers share, named by a
 * postgresql:// (or postgres://) URI. Both keep the same tables at the
 * same schema version, and refuse a history from a newer hopscope.
 *
 * SQLite: WAL journal, schema versioned with PRAGMA user_version, files
 * marked as ours with PRAGMA application_id. Writes are queued into an
 * open transaction and committed in batches by hs_store_commit(): a kill
 * -9 loses at most the uncommitted batch. PostgreSQL: writes are buffered
 * and sent by hs_store_commit() in one transaction (COPY), on a thread of
 * their own while the caller goes on; the next commit or read waits for
 * the server's answer. While the server cannot be reached they are held,
 * within a bound, and sent when it answers. Every value from the user or the wire is bound, never
 * spliced into SQL.
 */
#ifndef HS_STORE_H
#define HS_STORE_H

#include "hs.h"
#include "tracer.h"
#include "flows.h"
#include "topo.h"

#define HS_STORE_APP_ID 0x48734331	/* "HsC1" */
#define HS_STORE_SCHEMA 18

/* An analyzer's name: what each row it writes says of who wrote it (and
 * its heartbeat's key), 1 to HS_ANALYZER_MAX - 1 letters, digits, '.',
 * '-' and '_' */
#define HS_ANALYZER_MAX 64
bool hs_analyzer_name_ok(const char *name);

struct hs_session_stats {
	uint64_t packets, bytes, decode_errors, kernel_drops, traces;
	const char *input;	/* a file read to its end: its identity (hs_file_identity), else NULL */
};

/* a history named by a postgresql:// or postgres:// URI */
bool hs_store_is_pg(const char *path);

/* Open or create. NULL with a message in err when the file is not a hopscope
 * history, is from a newer hopscope, is locked or cannot be opened; nothing
 * in the file is changed then. */
struct hs_store *hs_store_open(const char *path, char *err, size_t errlen);
/* the same; notice(arg, msg) is called before a history written by an older
 * hopscope is upgraded to this schema (a large one takes a while) */
struct hs_store *hs_store_open_notice(const char *path, char *err, size_t errlen,
				      void (*notice)(void *arg, const char *msg), void *arg);
void hs_store_close(struct hs_store *st);	/* commits what is queued */
/* the history as named (to open it again, to compare), and as it may be
 * shown: a PostgreSQL URI's password hidden */
const char *hs_store_path(const struct hs_store *st);
const char *hs_store_name(const struct hs_store *st);
/* the last error, naming what failed and the history (hs_store_name);
 * and its reason alone, for a message that names them itself */
const char *hs_store_errmsg(struct hs_store *st);
const char *hs_store_errwhy(struct hs_store *st);
/* the analyzer every row written from now on names (NULL: none), and
 * which it is; the name must be hs_analyzer_name_ok */
void hs_store_set_analyzer(struct hs_store *st, const char *name);
const char *hs_store_analyzer(const struct hs_store *st);

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
/* commit the batch; returns rows committed (PostgreSQL: handed to its
 * sender) or -1. A batch that cannot be committed (disk full, I/O error,
 * refused by the server) is rolled back and its rows counted as lost; -1
 * also when SQLite rolled back a batch after a failed write, or when the
 * batch PostgreSQL sent before was not written. */
int hs_store_commit(struct hs_store *st);
size_t hs_store_pending(const struct hs_store *st);
/* rows committed and not yet known written: PostgreSQL's batch in flight,
 * the server still taking it (SQLite commits before it returns: 0) */
size_t hs_store_in_flight(struct hs_store *st);
/* open the next batch now, taking the file's write lock: waiting for it as
 * a write does (wait), or failing at once when another program holds it.
 * 0 or -1. */
int hs_store_begin(struct hs_store *st, bool wait);
/* SQLite's log is copied into the file when it has grown past a mark, by
 * the commit that crossed it; with apart, a thread other than the one
 * that has the store takes it instead, so that no commit waits for it:
 * hs_store_checkpoint_due() (the store's thread, after a commit) hands
 * out the checkpoint due, NULL when none is (and always on PostgreSQL),
 * and hs_store_checkpoint_run() takes it on any thread, on a connection
 * of its own, and lets it go. A store closed meanwhile is no matter. */
struct hs_store_ckpt;
void hs_store_checkpoint_apart(struct hs_store *st, bool apart);
struct hs_store_ckpt *hs_store_checkpoint_due(struct hs_store *st);
void hs_store_checkpoint_run(struct hs_store_ckpt *k);
uint64_t hs_store_written(const struct hs_store *st);	/* rows committed so far */
uint64_t hs_store_lost(const struct hs_store *st);	/* rows queued, then rolled back */

/* the names (SESSION:N) of the newest stored traces whose name begins with
 * PFX, newest first: fn is called for each, at most max times. The number
 * found, or -1 with nothing called when the history cannot be read. */
int hs_store_trace_names(struct hs_store *st, const char *pfx, int max,
			 void (*fn)(void *arg, const char *name), void *arg);

/* ---- reading back (history.c) ----------------------------------------------
 * A table read back comes as its column names, once, then row after row of
 * typed values; what they point to lasts for the call. Times are int64
 * nanoseconds since the epoch, as stored. */
enum hs_value_type { HS_VAL_NULL, HS_VAL_INT, HS_VAL_REAL, HS_VAL_TEXT, HS_VAL_BLOB };

struct hs_value {
	enum hs_value_type type;
	int64_t i;		/* HS_VAL_INT */
	double d;		/* HS_VAL_REAL */
	const char *s;		/* the value as text (NUL-terminated), but for HS_VAL_BLOB
				 * its bytes and for HS_VAL_NULL NULL */
	size_t len;		/* bytes at s */
};

struct hs_rows {
	void (*cols)(void *arg, const char *const *names, int ncol);	/* may be NULL */
	void (*row)(void *arg, const struct hs_value *v, int ncol);
	void *arg;
};

/* the user's own query ('sql'): one statement, read-only: writes, ATTACH,
 * PRAGMA changes and load_extension are refused. A signal (interrupt.h)
 * stops it. 0; HS_STORE_REFUSED with err saying why it was not run;
 * HS_STORE_FAILED with err the database's message when it stopped on the
 * way (rows before that were handed over). */
#define HS_STORE_REFUSED (-1)
#define HS_STORE_FAILED (-2)
int hs_store_query_ro(struct hs_store *st, const char *sql, const struct hs_rows *out,
		      char *err, size_t errlen);

/* The stored traces (parts of packets, each analyzer storing its part)
 * first seen from since_ns on, and those first seen up to window_ns
 * before that which may be parts of the same packets: one row a hop,
 * sorted by the packet's identity (addresses, protocol, ports, IP ID,
 * sequence number, TCP flags, length), then time, then hop, each row the
 * trace's id, src, dst, proto, sport, dport, ip_id, seq, tcp_flags, len,
 * flags, probe_id, first_ts, then the hop's switch, addr, ts, hw_ts, ttl,
 * tos and session (as integers, not as text too), then the trace's
 * analyzer, session and trace_no. A signal stops it. 0, or -1 with err
 * set. */
int hs_store_parts(struct hs_store *st, uint64_t since_ns, uint64_t window_ns,
		   const struct hs_rows *out, char *err, size_t errlen);
/* the same rows of every trace first seen from from_ns up to to_ns, each
 * read from its own row (a range of time does not read the others) */
int hs_store_parts_range(struct hs_store *st, uint64_t from_ns, uint64_t to_ns,
			 const struct hs_rows *out, char *err, size_t errlen);

/* the first copy's time of the (nth + 1)-th newest stored trace to *ts:
 * 1, 0 when there are not that many, -1 with err set */
int hs_store_nth_newest(struct hs_store *st, uint64_t nth, uint64_t *ts, char *err,
			size_t errlen);
/* whether a stored trace was first seen from from_ns up to to_ns (the
 * first found answers): 1, 0, or -1 with err set */
int hs_store_any(struct hs_store *st, uint64_t from_ns, uint64_t to_ns, char *err,
		 size_t errlen);
/* the stored traces first seen from from_ns up to to_ns: whether there is
 * any, the newest's first copy and, when count, how many (else 0: the
 * newest alone is found without reading every trace). 0, or -1 with err */
struct hs_store_span {
	bool any;
	uint64_t newest, n;
};
int hs_store_span(struct hs_store *st, uint64_t from_ns, uint64_t to_ns, bool count,
		  struct hs_store_span *sp, char *err, size_t errlen);
/* how many traces the history holds of its ended sessions, and how many
 * those sessions traced (fewer kept: their history setting kept a part,
 * or retention took some); on PostgreSQL, whose default keeps every
 * trace, both 0 without a read. 0, or -1 with err */
int hs_store_kept(struct hs_store *st, uint64_t *kept, uint64_t *traced, char *err,
		  size_t errlen);
/* the stored traces first seen from from_ns on, cut by their time into
 * groups of n each, the last of fewer: each group's first time and size,
 * oldest first, to fn(arg, start, count), in one read (groups that begin
 * at one time, more traces sharing it than a group holds, are one range
 * of time). 0, or -1 with err set */
int hs_store_ranges(struct hs_store *st, uint64_t from_ns, uint64_t n,
		    void (*fn)(void *arg, uint64_t start, uint64_t count), void *arg, char *err,
		    size_t errlen);
/* what the heartbeats tell of the analyzers other than own (NULL: none
 * is this one): the newest trace stored (the traces' own where no
 * heartbeat tells of any), how many others there are, how many of them
 * store all their traces, how many run a capture (a heartbeat from
 * since_ns on), and the longest lag of a running one. 0, or -1 with err */
struct hs_store_others {
	bool have_newest;
	uint64_t newest, others, others_all, running, lag_ns;
};
int hs_store_others(struct hs_store *st, const char *own, uint64_t since_ns,
		    struct hs_store_others *o, char *err, size_t errlen);

/* the history's listings, newest first, at most limit rows; 0, or -1 with
 * the database's message in err */
enum hs_listing {
	HS_LIST_SESSIONS,
	HS_LIST_FLOWS,
	HS_LIST_TRACES,
	HS_LIST_PROBES,
	HS_LIST_EVENTS,
	HS_LIST_CONTROL,
	HS_LIST_RUNNING,	/* the analyzers' running sessions: session, seen */
	HS_LIST_ANALYZERS,	/* by name: name, session, seen, packets, kernel_drops,
				 * rate, queued, lag, lost, history */
};
int hs_store_list(struct hs_store *st, enum hs_listing what, uint64_t limit,
		  const struct hs_rows *out, char *err, size_t errlen);
/* the stored trace SESSION:N (session 0: of session prefer when it has
 * one, else of the newest session that has it): its row to trace, then its
 * hops to hops. 1, 0 when there is no such trace, -1 with err set */
int hs_store_trace_show(struct hs_store *st, uint64_t session, uint64_t no, int64_t prefer,
			const struct hs_rows *trace, const struct hs_rows *hops,
			char *err, size_t errlen);

/* an alert that fired (planck.c); session 0: none. 0 or -1 */
int hs_store_event(struct hs_store *st, int64_t session, uint64_t ts_ns, int64_t alert,
		   const char *cond, double value, uint64_t wall_ns);

/* An analyzer's heartbeat: its row of analyzers, under its name (none is
 * written without one), replaced each time; with it the first copy's time
 * of the newest trace the history took from this store (what a fabric
 * view asks, rather than reading every trace for it). 0 or -1. */
struct hs_heartbeat {
	int64_t session;		/* its running capture's, 0 none */
	uint64_t seen_ns;		/* wall clock */
	uint64_t packets, kernel_drops;
	double rate;			/* packets a second since the last heartbeat */
	uint64_t queued;		/* rows not yet written */
	uint64_t lag_ns;		/* since the history last took them, 0: none wait */
	uint64_t lost;			/* rows it could not store */
	const char *history;		/* its history setting: default, all or off */
};
int hs_store_heartbeat(struct hs_store *st, const struct hs_heartbeat *hb);

/* a probe run kept (probe.c): the run, then its packets and their hops */
#define HS_STORE_SW_MAX (HS_ADDRSTRLEN > HS_NAME_MAX ? HS_ADDRSTRLEN : HS_NAME_MAX)

struct hs_store_probe {
	uint32_t probe_id;
	int64_t session;		/* 0: none */
	const char *kind;		/* probe, link, traceroute */
	const char *spec;		/* as typed */
	struct hs_addr src, dst;
	uint8_t proto;
	uint16_t dport;
};

struct hs_store_probe_pkt {
	uint32_t seq;
	uint16_t sport;
	uint8_t ttl;
	uint64_t sent_ns;
	const char *outcome;
	char lost_after[HS_STORE_SW_MAX];	/* the last switch seen, "" none */
	bool have_rtt;
	uint64_t rtt_ns;
	int nhops;
	struct hs_store_probe_hop {
		char sw[HS_STORE_SW_MAX];	/* its name, else its address */
		struct hs_addr addr;
		uint64_t ts_ns;
		uint64_t hw_ns;		/* 0: none */
		uint8_t ttl;
	} hops[HS_TRACE_MAX_HOPS];
};

/* write the run's n packets, each filled by pkt(arg, i, p), replacing what
 * the history has of them; in the open batch when there is one, else in a
 * transaction of their own. 0, or -1 with the database's message in err
 * and nothing of them written */
int hs_store_probe(struct hs_store *st, const struct hs_store_probe *run, unsigned n,
		   void (*pkt)(void *arg, unsigned i, struct hs_store_probe_pkt *p), void *arg,
		   char *err, size_t errlen);

/* 007's vote (blame): the stored links of each of its epochs replaced by
 * its reported links, named as topo names them; 0, or -1 with the
 * database's message in err and the stored links as they were */
struct hs_blame;
int hs_store_blame(struct hs_store *st, const struct hs_blame *b, const struct hs_topo *topo,
		   char *err, size_t errlen);

/* 007's fallback path of a flow: the switches of its newest stored
 * traceroute, the last that saw each TTL, in TTL order, as topology
 * indexes (at most max); how many. Opened once for many flows; open gives
 * NULL when the history cannot answer. */
struct hs_store_paths;
struct hs_store_paths *hs_store_paths_open(struct hs_store *st, const struct hs_topo *topo);
int hs_store_traceroute_path(struct hs_store_paths *p, const struct hs_flowkey *k, int *sw,
			     int max);
void hs_store_paths_close(struct hs_store_paths *p);

/* snapshots (snapshot.h). Store s in one transaction (none may be open)
 * and set s->id; -1 with err and nothing stored. Load snapshot id, with
 * its ports when ports is true: 0, 1 when there is no such snapshot, -1
 * with err. List them all, oldest first, without their ports: 0, or -1
 * with the database's message in err. */
struct hs_snap;
int hs_store_snapshot(struct hs_store *st, struct hs_snap *s, char *err, size_t errlen);
int hs_store_snapshot_load(struct hs_store *st, int64_t id, bool ports, struct hs_snap *s,
			   char *err, size_t errlen);
int hs_store_snapshots(struct hs_store *st, void (*each)(void *arg, const struct hs_snap *s),
		       void *arg, char *err, size_t errlen);

/* bytes the database engine holds in memory, its page caches mostly */
uint64_t hs_store_memory(void);

/* Retention: the history's own bounds, kept in the file. A bound of 0 is
 * none. Rows older than age go (a session by when it ended, wall clock;
 * the live capture's rows by capture time); over max_bytes, the oldest
 * session's rows go first. A session still captured (the console's own,
 * or one an analyzer's heartbeat of the last HS_STORE_RUNNING_NS names)
 * never goes whole, and none of its rows goes for the size. */
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
 * transaction. current: the session of the console's running capture, of
 * a file or live (0: none); live: that session when the capture is live,
 * its rows aging by capture time (0: none). Returns 1 when more remains
 * to remove, 0 when the history is within its bounds or only sessions
 * still captured are over them, -1 on error (hs_store_errmsg). */
int hs_store_prune(struct hs_store *st, uint64_t now_wall_ns, int64_t current, int64_t live,
		   unsigned budget, struct hs_prune *res);
/* an analyzer not heard from for this long runs no capture: three of its
 * heartbeats (every 5 s) missed */
#define HS_STORE_RUNNING_NS (15 * HS_NS_PER_SEC)

#endif
