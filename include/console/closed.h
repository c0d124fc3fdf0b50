/* closed.h - the closed traces the analyses (drops, loops, latency, ecmp,
 * blame) answer from
 *
 * A console answers from its own traces: the capture's it runs or ran,
 * those 'history load' gave it, the fabric view's. One that has none and
 * a history to read (a console on a shared history, or on a file no
 * capture of its own wrote) answers from the history's newest packets, as
 * many as a console keeps (HS_TRACER_RING), joined as 'history load' joins
 * them (fabric.h): the answer 'history load' and then the verb would
 * give, read by the traces' time, so that it takes as long on a history
 * of ten million hops as on one of ten thousand.
 */
#ifndef HS_CLOSED_H
#define HS_CLOSED_H

#include "ctx.h"

struct hs_closed_name {
	int64_t session;
	uint64_t no;
};

struct hs_closed {
	const struct hs_trace **t;	/* newest first */
	size_t n;
	int64_t session;		/* the session of the console's own, 0 none */
	/* read from the history: what holds them, and the name of each
	 * (its first stored part's), by its id there */
	struct hs_tracer *tr;
	struct hs_closed_name *names;
	size_t nnames;
	bool older;			/* the history holds older ones, not read */
	/* read from a history (or loaded from one) that kept kept of the
	 * traced traces its ended sessions traced: fewer, and the delivered
	 * packets are not all there, so a link's crossings are not either
	 * (0 and 0: every one kept, or not read from a history) */
	uint64_t kept, traced;
};

/* the traces to answer from; 0, or -1 with the error printed (verb names
 * the verb) */
int hs_closed_get(struct hs_ctx *ctx, const char *verb, struct hs_closed *c);
void hs_closed_free(struct hs_closed *c);
/* how many traces the history st kept of those its ended sessions
 * traced (hs_store_kept), into *kept and *traced when it kept fewer, else
 * both 0 (and when it cannot be read) */
void hs_closed_kept(struct hs_store *st, uint64_t *kept, uint64_t *traced);
/* after the answer of verb over c, when c's history kept fewer traces
 * than its sessions traced: a warning saying so, and that what (a
 * clause: "its loss is not shown") follows */
void hs_closed_warn(struct hs_ctx *ctx, const struct hs_closed *c, const char *verb,
		    const char *what);
/* the name a trace of c (its id) is shown by and taken back by: N or
 * SESSION:N for the console's own, a stored one's SESSION:N */
struct hs_closed_name hs_closed_name(const struct hs_closed *c, uint64_t id);
const char *hs_closed_ref(const struct hs_closed *c, uint64_t id, char *buf, size_t len);
/* t (one of c's) copied into out with the number it is shown by; its
 * session returned */
int64_t hs_closed_named(const struct hs_closed *c, const struct hs_trace *t,
			struct hs_trace *out);

#endif
