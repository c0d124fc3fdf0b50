/* fabric.c - one fabric's traces from a history many analyzers write
 * (fabric.h)
 *
 * The stored traces come sorted by the packet's identity, then time, a row
 * per hop (the hops view), so the parts of one packet are next to each
 * other and are joined as they stream by: only the trace being joined is
 * held, and the joined traces until they are handed on in time order.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "fabric.h"

#define HS_FABRIC_PART_NAMES 8	/* a packet's analyzers named, at most */
#define HS_FABRIC_OPEN 8	/* packets of one identity joined at once, at most */
#define COMMIT_NS	(HS_NS_PER_SEC / 2)	/* the writers' commit interval */

enum {
	C_ID, C_SRC, C_DST, C_PROTO, C_SPORT, C_DPORT, C_IPID, C_SEQ, C_FLAGS_TCP, C_LEN,
	C_FLAGS, C_PROBE, C_FIRST, C_SW, C_ADDR, C_TS, C_HW, C_TTL, C_TOS, C_SESSION, C_ANALYZER,
	C_TSESSION, C_TNO, C__COUNT
};

struct joined {
	struct hs_trace t;
	bool foreign;
	int64_t session, no;	/* its first part's name as stored, SESSION:N */
};

/* a joined trace, and its first part's name as stored */
typedef void (*named_fn)(void *arg, const struct hs_trace *t, bool foreign, int64_t session,
			 int64_t no);

/* a packet being joined: a part of each analyzer at most */
struct open {
	struct joined t;
	uint64_t first;			/* its first part's first copy */
	unsigned parts;
	char names[HS_FABRIC_PART_NAMES][HS_ANALYZER_MAX];	/* its parts' analyzers */
	unsigned nnames;
};

struct join {
	const struct hs_topo *topo;
	uint64_t window;
	uint64_t since, until;		/* traces first in [since, until) are handed */
	struct hs_fabric_stats *fs;
	const char *own;		/* NULL: every part is foreign */
	/* the identity being joined, as stored, and its packets: packets
	 * alike to the byte (a SYN-ACK sent again at once, IP ID 0) are as
	 * many as one analyzer's parts of them */
	bool have;
	char src[HS_ADDRSTRLEN], dst[HS_ADDRSTRLEN];
	int64_t num[C_LEN + 1];		/* proto .. len, by column */
	struct hs_trace key;		/* its fields of the identity */
	struct open open[HS_FABRIC_OPEN];
	unsigned nopen;
	struct open *cur;		/* the packet the hops of part come to */
	int64_t part;			/* the stored trace whose hops come now */
	/* joined traces, to be handed on oldest first */
	struct joined *out;
	size_t n, cap;
	bool bad;
};

static uint64_t clamp(uint64_t ns)
{
	return ns > INT64_MAX ? (uint64_t)INT64_MAX : ns;
}

static int64_t ival(const struct hs_value *v)
{
	return v->type == HS_VAL_INT ? v->i : 0;
}

/* a before b in path order: TTL down, then time */
static bool before(const struct hs_hop *a, const struct hs_hop *b)
{
	return a->ttl > b->ttl || (a->ttl == b->ttl && a->ts_ns < b->ts_ns);
}

static void order_hops(struct hs_trace *t)
{
	for (unsigned i = 1; i < t->nhops; i++) {
		struct hs_hop h = t->hops[i];
		unsigned j = i;
		while (j > 0 && before(&h, &t->hops[j - 1])) {
			t->hops[j] = t->hops[j - 1];
			j--;
		}
		t->hops[j] = h;
	}
}

#define FABRIC_BATCH 100000

uint64_t hs_fabric_batch(void)
{
	const char *env = getenv("HOPSCOPE_TEST_LOAD_BATCH");
	uint64_t n;

	if (env && hs_parse_uint(env, FABRIC_BATCH, &n) == 0 && n > 0)
		return n;
	return FABRIC_BATCH;
}

/* ---- the analyzers' names a trace carries -------------------------------------- */

static char *names_kept[HS_FABRIC_ANALYZERS_MAX];
static unsigned nkept;

uint16_t hs_fabric_analyzers_id(const char *names)
{
	if (!names || !names[0])
		return 0;
	for (unsigned i = 0; i < nkept; i++)
		if (strcmp(names_kept[i], names) == 0)
			return (uint16_t)(i + 1);
	if (nkept == HS_FABRIC_ANALYZERS_MAX - 1)	/* the last is "?" */
		names_kept[nkept++] = hs_xstrdup("?");
	if (nkept == HS_FABRIC_ANALYZERS_MAX)
		return HS_FABRIC_ANALYZERS_MAX;
	names_kept[nkept++] = hs_xstrdup(names);
	return (uint16_t)nkept;
}

const char *hs_fabric_analyzers(uint16_t id)
{
	return id && id <= nkept ? names_kept[id - 1] : NULL;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* the analyzers of a packet being joined, by its parts: "an1+an2" */
static uint16_t part_names(struct open *o)
{
	char list[HS_FABRIC_PART_NAMES * HS_ANALYZER_MAX];
	size_t n = 0;

	qsort(o->names, o->nnames, sizeof(o->names[0]), by_name);
	list[0] = '\0';
	for (unsigned i = 0; i < o->nnames; i++)
		n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", i ? "+" : "", o->names[i]);
	return hs_fabric_analyzers_id(list);
}

static bool part_of(const struct open *o, const char *name)
{
	for (unsigned i = 0; i < o->nnames; i++)
		if (strcmp(o->names[i], name) == 0)
			return true;
	return false;
}

static void part_named(struct open *o, const char *name)
{
	if (!name || !name[0] || part_of(o, name))
		return;
	if (o->nnames < HS_FABRIC_PART_NAMES)
		snprintf(o->names[o->nnames++], sizeof(o->names[0]), "%s", name);
}

/* ---- joining ------------------------------------------------------------------- */

static void finish(struct join *j, struct open *o)
{
	/* a packet first seen outside the range is another read's */
	if (o->first < j->since || o->first >= j->until)
		return;
	if (o->t.foreign)
		o->t.t.analyzer = part_names(o);
	order_hops(&o->t.t);
	hs_trace_classify(&o->t.t, j->topo);
	j->fs->stored += o->parts;
	j->fs->traces++;
	if (o->parts > 1)
		j->fs->joined++;
	if (j->n == j->cap) {
		j->cap = j->cap ? 2 * j->cap : 1024;
		j->out = realloc(j->out, j->cap * sizeof(*j->out));
		if (!j->out)
			abort();
	}
	j->out[j->n++] = o->t;
}

/* the packets of the identity being joined are done with */
static void finish_all(struct join *j)
{
	if (!j->have)
		return;
	for (unsigned i = 0; i < j->nopen; i++)
		finish(j, &j->open[i]);
	j->nopen = 0;
	j->have = false;
}

/* the same identity as the one being joined */
static bool same_identity(const struct join *j, const struct hs_value *v)
{
	if (!j->have || strcmp(j->src, v[C_SRC].s ? v[C_SRC].s : "") != 0 ||
	    strcmp(j->dst, v[C_DST].s ? v[C_DST].s : "") != 0)
		return false;
	for (int c = C_PROTO; c <= C_LEN; c++)
		if (j->num[c] != ival(&v[c]))
			return false;
	return true;
}

static void begin(struct join *j, const struct hs_value *v)
{
	struct hs_trace *t = &j->key;

	memset(t, 0, sizeof(*t));
	snprintf(j->src, sizeof(j->src), "%s", v[C_SRC].s ? v[C_SRC].s : "");
	snprintf(j->dst, sizeof(j->dst), "%s", v[C_DST].s ? v[C_DST].s : "");
	for (int c = C_PROTO; c <= C_LEN; c++)
		j->num[c] = ival(&v[c]);
	j->nopen = 0;
	j->have = true;
	if (hs_addr_parse(j->src, &t->key.src) < 0 || hs_addr_parse(j->dst, &t->key.dst) < 0)
		j->bad = true;
	t->key.proto = (uint8_t)j->num[C_PROTO];
	t->key.sport = (uint16_t)j->num[C_SPORT];
	t->key.dport = (uint16_t)j->num[C_DPORT];
	t->key_hash = hs_flowkey_hash(&t->key);
	t->ip_id = (uint16_t)j->num[C_IPID];
	t->seq = (uint32_t)j->num[C_SEQ];
	t->tcp_flags = (uint8_t)j->num[C_FLAGS_TCP];
	t->len = (uint32_t)j->num[C_LEN];
}

/* the packet a stored part of the identity being joined is of: the
 * oldest one whose first copy is within the window before the part's and
 * that has no part of the part's analyzer yet (an analyzer joined every
 * copy it had of one packet: two of its traces are two packets), else a
 * packet of its own */
static struct open *packet_of(struct join *j, const struct hs_value *v)
{
	uint64_t first = (uint64_t)ival(&v[C_FIRST]);
	const char *name = v[C_ANALYZER].s;
	unsigned i = 0, k = 0;

	/* (the parts come by their first copy's time: a packet the window
	 * left behind takes no more) */
	for (; i < j->nopen; i++) {
		if (first > j->open[i].first && first - j->open[i].first > j->window)
			finish(j, &j->open[i]);
		else if (k++ < i)
			j->open[k - 1] = j->open[i];
	}
	j->nopen = k;
	for (i = 0; i < j->nopen; i++)
		if (!name || !name[0] || !part_of(&j->open[i], name))
			return &j->open[i];
	if (j->nopen == HS_FABRIC_OPEN) {	/* the oldest goes as it is */
		finish(j, &j->open[0]);
		memmove(j->open, j->open + 1, --j->nopen * sizeof(j->open[0]));
	}
	struct open *o = &j->open[j->nopen++];
	memset(o, 0, sizeof(*o));
	memcpy(&o->t.t, &j->key, offsetof(struct hs_trace, hops));
	o->first = first;
	o->t.session = ival(&v[C_TSESSION]);
	o->t.no = ival(&v[C_TNO]);
	return o;
}

static void add_hop(struct join *j, const struct hs_value *v)
{
	struct hs_trace *t = &j->cur->t.t;
	struct hs_hop h = { .sw = -1 };

	/* a copy of a source the analyzer did not keep (a plain copy that
	 * names none, as the tracer's source 0) is stored with address "-":
	 * a hop of no known switch, as it was */
	bool none = v[C_ADDR].s && strcmp(v[C_ADDR].s, "-") == 0;
	if (!v[C_ADDR].s || (!none && hs_addr_parse(v[C_ADDR].s, &h.addr) < 0)) {
		j->bad = true;
		return;
	}
	if (j->topo && !none)
		h.sw = v[C_SW].s ? hs_topo_switch_by_name(j->topo, v[C_SW].s)
				 : hs_topo_switch_by_addr(j->topo, &h.addr);
	h.ts_ns = (uint64_t)ival(&v[C_TS]);
	h.hw_ns = (uint64_t)ival(&v[C_HW]);
	h.ttl = (uint8_t)ival(&v[C_TTL]);
	h.tos = (uint8_t)ival(&v[C_TOS]);
	h.session = (uint32_t)ival(&v[C_SESSION]);
	/* a copy two analyzers both stored counts once (of a source not
	 * kept, no copy is the duplicate of another: they cannot be told
	 * apart) */
	for (unsigned i = 0; !none && i < t->nhops; i++)
		if (t->hops[i].ttl == h.ttl && t->hops[i].ts_ns == h.ts_ns &&
		    hs_addr_eq(&t->hops[i].addr, &h.addr))
			return;
	if (t->nhops < HS_TRACE_MAX_HOPS) {
		t->hops[t->nhops++] = h;
		return;
	}
	/* full: the first hops of the path are kept, as one analyzer keeps
	 * the first copies of a loop; each part kept its own first ones */
	unsigned last = 0;
	for (unsigned i = 1; i < t->nhops; i++)
		if (before(&t->hops[last], &t->hops[i]))
			last = i;
	if (before(&h, &t->hops[last]))
		t->hops[last] = h;
	t->extra_hops++;
}

static void on_row(void *arg, const struct hs_value *v, int ncol)
{
	struct join *j = arg;

	if (ncol != C__COUNT) {
		j->bad = true;
		return;
	}
	if (!j->have || ival(&v[C_ID]) != j->part) {
		/* the next stored part: of the same identity, or of another */
		if (!same_identity(j, v)) {
			finish_all(j);
			begin(j, v);
		}
		j->part = ival(&v[C_ID]);
		struct open *o = j->cur = packet_of(j, v);
		o->parts++;
		o->t.t.flags |= (uint8_t)ival(&v[C_FLAGS]);
		if (v[C_PROBE].type == HS_VAL_INT)
			o->t.t.probe_id = (uint32_t)v[C_PROBE].i;
		if (!j->own || !v[C_ANALYZER].s || strcmp(v[C_ANALYZER].s, j->own) != 0)
			o->t.foreign = true;
		part_named(o, v[C_ANALYZER].s);
	}
	add_hop(j, v);
}

static int by_time(const void *a, const void *b)
{
	const struct hs_trace *x = &((const struct joined *)a)->t;
	const struct hs_trace *y = &((const struct joined *)b)->t;
	uint64_t tx = x->nhops ? x->hops[0].ts_ns : 0, ty = y->nhops ? y->hops[0].ts_ns : 0;

	return tx < ty ? -1 : tx > ty;
}

/* newest: r is the newest packets, from r->since_ns on (hs_store_parts) */
static int load(struct hs_store *st, const struct hs_topo *topo, const struct hs_fabric_range *r,
		bool newest, named_fn each, void *arg, struct hs_fabric_stats *fs, char *err,
		size_t errlen)
{
	struct join j = { .topo = topo, .window = r->window_ns, .fs = fs, .own = r->own,
			  .since = clamp(r->since_ns),
			  .until = r->until_ns ? clamp(r->until_ns) : UINT64_MAX };
	struct hs_rows rows = { .row = on_row, .arg = &j };
	/* the parts of the range's packets: a window either side of it */
	uint64_t from = j.since > r->window_ns ? j.since - r->window_ns : 0;
	uint64_t to = j.until >= (uint64_t)INT64_MAX - r->window_ns ? (uint64_t)INT64_MAX
								    : j.until + r->window_ns;

	memset(fs, 0, sizeof(*fs));
	int rc = newest ? hs_store_parts(st, j.since, r->window_ns, &rows, err, errlen)
			: hs_store_parts_range(st, from, to, &rows, err, errlen);
	finish_all(&j);
	if (rc == 0 && j.bad) {
		snprintf(err, errlen, "'%s' holds a trace this hopscope cannot read back "
			 "(a bad address in its row)", hs_store_name(st));
		rc = -1;
	}
	if (rc == 0 && j.n) {	/* (qsort takes no NULL, even for nothing) */
		qsort(j.out, j.n, sizeof(*j.out), by_time);
		for (size_t i = 0; i < j.n; i++)
			each(arg, &j.out[i].t, j.out[i].foreign, j.out[i].session, j.out[i].no);
	}
	free(j.out);
	return rc == 0 ? 0 : -1;
}

struct unnamed {
	hs_fabric_fn each;
	void *arg;
};

static void unnamed(void *arg, const struct hs_trace *t, bool foreign, int64_t session,
		    int64_t no)
{
	const struct unnamed *u = arg;

	(void)session;
	(void)no;
	u->each(u->arg, t, foreign);
}

int hs_fabric_load(struct hs_store *st, const struct hs_topo *topo,
		   const struct hs_fabric_range *r, hs_fabric_fn each, void *arg,
		   struct hs_fabric_stats *fs, char *err, size_t errlen)
{
	struct unnamed u = { each, arg };

	return load(st, topo, r, false, unnamed, &u, fs, err, errlen);
}

/* ---- where the history is whole --------------------------------------------------- */

int hs_fabric_others(struct hs_store *st, const char *own, uint64_t now,
		     struct hs_store_others *p, char *err, size_t errlen)
{
	uint64_t recent = now > HS_FABRIC_RUNNING_NS ? now - HS_FABRIC_RUNNING_NS : 0;

	return hs_store_others(st, own, recent, p, err, errlen);
}

uint64_t hs_fabric_settle_ns(const struct hs_store_others *p, uint64_t window_ns)
{
	return 2 * window_ns + COMMIT_NS + p->lag_ns;
}

uint64_t hs_fabric_whole_end(const struct hs_store_others *p, uint64_t window_ns,
			     uint64_t now, uint64_t moved)
{
	uint64_t settle = hs_fabric_settle_ns(p, window_ns);

	/* longer than a part takes to be stored and to be told of */
	if (!p->running || moved + settle + HS_HEARTBEAT_NS < now)
		return p->newest + 1;
	return p->newest > settle ? p->newest - settle : 0;
}

uint64_t hs_fabric_whole_until(const struct hs_store_others *p, uint64_t window_ns,
			       uint64_t now)
{
	uint64_t end = hs_fabric_whole_end(p, window_ns, now, p->newest);

	if (!p->have_newest || end > p->newest)
		return 0;
	return end ? end : 1;
}

/* ---- the newest packets ---------------------------------------------------------- */

struct kept {
	struct joined *t;
	size_t n, cap;
};

static void keep(void *arg, const struct hs_trace *t, bool foreign, int64_t session, int64_t no)
{
	struct kept *k = arg;

	(void)foreign;
	if (k->n == k->cap) {
		k->cap = k->cap ? 2 * k->cap : 1024;
		k->t = realloc(k->t, k->cap * sizeof(*k->t));
		if (!k->t)
			abort();
	}
	k->t[k->n++] = (struct joined){ .t = *t, .session = session, .no = no };
}

int hs_fabric_newest(struct hs_store *st, const struct hs_topo *topo, uint64_t max,
		     uint64_t window_ns, uint64_t until_ns, hs_fabric_named_fn each, void *arg,
		     struct hs_fabric_stats *fs, char *err, size_t errlen)
{
	struct kept k = { 0 };
	uint64_t back = max ? max : 1, nth_ts = 0;
	int rc = 0;

	memset(fs, 0, sizeof(*fs));
	for (;;) {
		uint64_t ts = 0;

		/* the time of the back-th newest stored part, found by the
		 * traces' time */
		int have = hs_store_nth_newest(st, back - 1, &ts, err, errlen);
		if (have < 0) {
			rc = -1;
			break;
		}
		struct hs_fabric_range r = { .since_ns = have ? ts : 0, .until_ns = until_ns,
					     .window_ns = window_ns };
		nth_ts = r.since_ns;
		k.n = 0;
		rc = load(st, topo, &r, true, keep, &k, fs, err, errlen);
		/* parts joined into fewer packets than asked: further back */
		if (rc != 0 || !have || fs->traces >= max || back > INT64_MAX / 2)
			break;
		back *= 2;
	}
	if (rc == 0 && nth_ts > 0) {
		int older = hs_store_any(st, 0, nth_ts, err, errlen);

		rc = older < 0 ? -1 : 0;
		fs->older = older > 0;
	}
	if (rc == 0)
		for (size_t i = 0; i < k.n; i++)
			each(arg, &k.t[i].t, k.t[i].session, (uint64_t)k.t[i].no);
	free(k.t);
	return rc == 0 ? 0 : -1;
}
