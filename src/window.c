/* window.c - tumbling-window aggregates over per-packet records
 *
 * Windows live in a ring of max_open slots indexed by start / window_ns; each
 * has an open-addressed key table (twice max_keys entries) and a set of
 * (key, flow hash) pairs for the distinct-flow count. Window storage is
 * allocated the first time its ring slot is used and cleared for reuse, so
 * the steady state allocates nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "window.h"

void hs_pktrec_from_pkt(struct hs_pktrec *r, const struct hs_pkt *p)
{
	memset(r, 0, sizeof(*r));
	r->ts_ns = p->ts_ns;
	if (p->have & HS_HAVE_MIRROR)
		r->sw = p->mirror_src;
	r->key = p->key;
	r->len = p->len;
	r->tcp_flags = (p->have & HS_HAVE_TCP) ? p->tcp_flags : 0;
	r->ttl = p->ttl;
	r->dscp = p->tos >> 2;
}

void hs_pktrec_from_hop(struct hs_pktrec *r, const struct hs_trace *t, const struct hs_hop *h)
{
	memset(r, 0, sizeof(*r));
	r->ts_ns = h->ts_ns;
	r->sw = h->addr;
	r->key = t->key;
	r->len = t->len;
	r->tcp_flags = t->tcp_flags;
	r->ttl = h->ttl;
	r->dscp = h->tos >> 2;
}

static const struct {
	const char *name;
	unsigned mask;
} fields[] = {
	{ "src", HS_WF_SRC }, { "dst", HS_WF_DST }, { "sport", HS_WF_SPORT },
	{ "dport", HS_WF_DPORT }, { "proto", HS_WF_PROTO }, { "switch", HS_WF_SWITCH },
	{ "flow", HS_WF_FLOW }, { "dscp", HS_WF_DSCP },
};

int hs_win_fields_parse(const char *s, unsigned *out, char *err, size_t errlen)
{
	unsigned mask = 0;
	const char *p = s;

	if (!s || !*s) {
		snprintf(err, errlen, "no fields (src, dst, sport, dport, proto, switch, flow, "
			 "dscp)");
		return -1;
	}
	for (;;) {
		size_t n = strcspn(p, ",");
		size_t i;
		for (i = 0; i < HS_ARRAY_SIZE(fields); i++)
			if (strlen(fields[i].name) == n && strncmp(fields[i].name, p, n) == 0)
				break;
		if (i == HS_ARRAY_SIZE(fields)) {
			snprintf(err, errlen, "unknown field '%.*s' (src, dst, sport, dport, proto, "
				 "switch, flow, dscp)", (int)(n > 32 ? 32 : n), p);
			return -1;
		}
		if (mask & fields[i].mask) {
			snprintf(err, errlen, "field '%s' given twice", fields[i].name);
			return -1;
		}
		mask |= fields[i].mask;
		if (!p[n])
			break;
		p += n + 1;
	}
	*out = mask;
	return 0;
}

/* ---- the aggregator ------------------------------------------------------- */

struct slot {
	struct hs_win_key key;
	uint64_t hash;		/* 0: empty */
	uint64_t packets, bytes, flows, drops;
};

struct flowent {
	uint64_t h;		/* flow hash mixed with the key slot; 0: empty */
};

struct win {
	bool open;
	uint64_t start;
	struct slot *slots;	/* kcap entries */
	size_t nkeys;
	struct flowent *fl;	/* fcap entries */
	size_t fcap, nflows;	/* fcap grows by doubling up to hs_win.fmax */
	uint64_t other_packets, other_bytes, other_drops;
};

struct hs_win {
	struct hs_win_cfg cfg;
	size_t kcap, fmax;	/* powers of two */
	struct win *ring;	/* max_open */
	uint64_t closed_upto;	/* windows starting before this are emitted */
	uint64_t begin;		/* windows starting before this are not kept */
	const struct slot **sorted;	/* max_keys, for emitting */
	struct hs_win_stats st;
};

#define FLOWS_FIRST 1024	/* flow set entries of a new window */

static size_t pow2_at_least(size_t n)
{
	size_t p = 16;

	while (p < n)
		p <<= 1;
	return p;
}

struct hs_win *hs_win_new(const struct hs_win_cfg *cfg)
{
	struct hs_win *w;

	if (!cfg || cfg->window_ns == 0 || !cfg->on_row)
		return NULL;
	w = hs_xcalloc(1, sizeof(*w));
	w->cfg = *cfg;
	if (!w->cfg.max_keys)
		w->cfg.max_keys = HS_WIN_KEYS_DEFAULT;
	if (!w->cfg.max_open)
		w->cfg.max_open = HS_WIN_OPEN_DEFAULT;
	w->kcap = pow2_at_least(2 * w->cfg.max_keys);
	if (!w->cfg.max_flows)
		w->cfg.max_flows = HS_WIN_FLOWS_DEFAULT;
	w->fmax = pow2_at_least(w->cfg.max_flows / 3 * 4);
	w->ring = hs_xcalloc(w->cfg.max_open, sizeof(*w->ring));
	w->sorted = hs_xcalloc(w->cfg.max_keys, sizeof(*w->sorted));
	return w;
}

void hs_win_free(struct hs_win *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->cfg.max_open; i++) {
		free(w->ring[i].slots);
		free(w->ring[i].fl);
	}
	free(w->ring);
	free(w->sorted);
	free(w);
}

static uint64_t addr_mix(uint64_t h, const struct hs_addr *a)
{
	h = hs_fnv1a(h, &a->af, 1);
	return hs_fnv1a(h, a->a, a->af == 6 ? 16 : a->af == 4 ? 4 : 0);
}

static uint64_t key_hash(const struct hs_win_key *k)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	h = addr_mix(h, &k->src);
	h = addr_mix(h, &k->dst);
	h = addr_mix(h, &k->sw);
	h = hs_fnv1a(h, &k->sport, sizeof(k->sport));
	h = hs_fnv1a(h, &k->dport, sizeof(k->dport));
	h = hs_fnv1a(h, &k->proto, 1);
	h = hs_fnv1a(h, &k->dscp, 1);
	h ^= h >> 31;
	return h ? h : 1;
}

static int addr_cmp(const struct hs_addr *x, const struct hs_addr *y)
{
	if (x->af != y->af)
		return x->af < y->af ? -1 : 1;
	return memcmp(x->a, y->a, x->af == 6 ? 16 : x->af == 4 ? 4 : 0);
}

static int key_cmp(const struct hs_win_key *x, const struct hs_win_key *y)
{
	int c;

	if ((c = addr_cmp(&x->sw, &y->sw)) != 0 || (c = addr_cmp(&x->src, &y->src)) != 0 ||
	    (c = addr_cmp(&x->dst, &y->dst)) != 0)
		return c;
	if (x->proto != y->proto)
		return x->proto < y->proto ? -1 : 1;
	if (x->sport != y->sport)
		return x->sport < y->sport ? -1 : 1;
	if (x->dport != y->dport)
		return x->dport < y->dport ? -1 : 1;
	if (x->dscp != y->dscp)
		return x->dscp < y->dscp ? -1 : 1;
	return 0;
}

static void make_key(unsigned f, const struct hs_pktrec *r, struct hs_win_key *k)
{
	memset(k, 0, sizeof(*k));
	if (f & HS_WF_SRC)
		k->src = r->key.src;
	if (f & HS_WF_DST)
		k->dst = r->key.dst;
	if (f & HS_WF_SPORT)
		k->sport = r->key.sport;
	if (f & HS_WF_DPORT)
		k->dport = r->key.dport;
	if (f & HS_WF_PROTO)
		k->proto = r->key.proto;
	if (f & HS_WF_SWITCH)
		k->sw = r->sw;
	if (f & HS_WF_DSCP)
		k->dscp = r->dscp;
}

static int row_order(const void *a, const void *b)
{
	const struct slot *x = *(const struct slot *const *)a, *y = *(const struct slot *const *)b;

	if (x->packets != y->packets)
		return x->packets > y->packets ? -1 : 1;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes ? -1 : 1;
	if (x->drops != y->drops)
		return x->drops > y->drops ? -1 : 1;
	return key_cmp(&x->key, &y->key);
}

static void emit(struct hs_win *w, struct win *wn)
{
	struct hs_win_row row = { .window_start = wn->start, .window_ns = w->cfg.window_ns };
	size_t n = 0;

	for (size_t i = 0; i < w->kcap && n < w->cfg.max_keys; i++)
		if (wn->slots[i].hash)
			w->sorted[n++] = &wn->slots[i];
	qsort(w->sorted, n, sizeof(*w->sorted), row_order);
	for (size_t i = 0; i < n; i++) {
		const struct slot *s = w->sorted[i];
		row.key = &s->key;
		row.packets = s->packets;
		row.bytes = s->bytes;
		row.flows = s->flows;
		row.drops = s->drops;
		w->cfg.on_row(w->cfg.arg, &row);
		w->st.rows++;
	}
	if (wn->other_packets || wn->other_drops) {
		struct hs_win_key none;
		memset(&none, 0, sizeof(none));
		row.key = &none;
		row.other = true;
		row.packets = wn->other_packets;
		row.bytes = wn->other_bytes;
		row.flows = 0;
		row.drops = wn->other_drops;
		w->cfg.on_row(w->cfg.arg, &row);
		w->st.rows++;
	}
	if (n || wn->other_packets || wn->other_drops)
		w->st.windows++;
	wn->open = false;
}

/* emit open windows starting before t, oldest first */
static void close_before(struct hs_win *w, uint64_t t)
{
	for (;;) {
		struct win *oldest = NULL;
		for (size_t i = 0; i < w->cfg.max_open; i++) {
			struct win *wn = &w->ring[i];
			if (wn->open && wn->start < t && (!oldest || wn->start < oldest->start))
				oldest = wn;
		}
		if (!oldest)
			break;
		emit(w, oldest);
	}
	if (t > w->closed_upto)
		w->closed_upto = t;
}

void hs_win_close_until(struct hs_win *w, uint64_t t)
{
	close_before(w, t - t % w->cfg.window_ns);
}

void hs_win_flush(struct hs_win *w)
{
	uint64_t newest = 0;

	for (size_t i = 0; i < w->cfg.max_open; i++)
		if (w->ring[i].open && w->ring[i].start >= newest)
			newest = w->ring[i].start + w->cfg.window_ns;
	close_before(w, newest);
}

/* the window of time ts, opened if need be; NULL when it was emitted already */
static struct win *window_for(struct hs_win *w, uint64_t ts)
{
	uint64_t len = w->cfg.window_ns, start = ts - ts % len;
	uint64_t span = len * w->cfg.max_open;

	if (start < w->closed_upto)
		return NULL;
	if (start - w->closed_upto >= span) {
		/* too far ahead for the ring: the oldest windows go now */
		uint64_t before = w->st.windows;
		close_before(w, start - (w->cfg.max_open - 1) * len);
		w->st.forced += w->st.windows - before;
	}
	struct win *wn = &w->ring[(start / len) % w->cfg.max_open];
	if (wn->open && wn->start == start)
		return wn;
	if (wn->open)	/* cannot happen: a ring slot older than closed_upto + span */
		emit(w, wn);
	if (!wn->slots) {
		wn->slots = hs_xcalloc(w->kcap, sizeof(*wn->slots));
		wn->fcap = FLOWS_FIRST < w->fmax ? FLOWS_FIRST : w->fmax;
		wn->fl = hs_xcalloc(wn->fcap, sizeof(*wn->fl));
	} else {
		memset(wn->slots, 0, w->kcap * sizeof(*wn->slots));
		memset(wn->fl, 0, wn->fcap * sizeof(*wn->fl));
	}
	wn->open = true;
	wn->start = start;
	wn->nkeys = wn->nflows = 0;
	wn->other_packets = wn->other_bytes = wn->other_drops = 0;
	return wn;
}

/* the key's slot, added when there is room; NULL when the window is full */
static struct slot *slot_for(struct hs_win *w, struct win *wn, const struct hs_pktrec *r)
{
	struct hs_win_key k;

	make_key(w->cfg.fields, r, &k);
	uint64_t h = key_hash(&k);
	size_t mask = w->kcap - 1;
	for (size_t i = h & mask;; i = (i + 1) & mask) {
		struct slot *s = &wn->slots[i];
		if (!s->hash) {
			if (wn->nkeys >= w->cfg.max_keys)
				return NULL;
			s->hash = h;
			s->key = k;
			wn->nkeys++;
			return s;
		}
		if (s->hash == h && key_cmp(&s->key, &k) == 0)
			return s;
	}
}

/* twice the room for the flow set, rehashed; false at its cap */
static bool grow_flows(struct hs_win *w, struct win *wn)
{
	size_t ncap = wn->fcap * 2;

	if (ncap > w->fmax)
		return false;
	struct flowent *nf = hs_xcalloc(ncap, sizeof(*nf));
	for (size_t i = 0; i < wn->fcap; i++) {
		uint64_t h = wn->fl[i].h;
		if (!h)
			continue;
		size_t j = h & (ncap - 1);
		while (nf[j].h)
			j = (j + 1) & (ncap - 1);
		nf[j].h = h;
	}
	free(wn->fl);
	wn->fl = nf;
	wn->fcap = ncap;
	return true;
}

static void count_flow(struct hs_win *w, struct win *wn, struct slot *s,
		       const struct hs_pktrec *r)
{
	uint64_t h = hs_flowkey_hash(&r->key) ^ (s->hash * 0x9e3779b97f4a7c15ULL);

	h = h ? h : 1;
	for (size_t i = h & (wn->fcap - 1);; i = (i + 1) & (wn->fcap - 1)) {
		if (wn->fl[i].h == h)
			return;
		if (wn->fl[i].h)
			continue;
		/* keep the set at most 3/4 full */
		if (wn->nflows + 1 > wn->fcap / 4 * 3) {
			if (!grow_flows(w, wn)) {
				w->st.flows_untracked++;
				return;
			}
			count_flow(w, wn, s, r);	/* once more, in the larger set */
			return;
		}
		wn->fl[i].h = h;
		wn->nflows++;
		s->flows++;
		return;
	}
}

void hs_win_packet(struct hs_win *w, const struct hs_pktrec *r)
{
	struct win *wn = window_for(w, r->ts_ns);

	if (!wn) {
		if (r->ts_ns < w->begin)
			w->st.before++;
		else
			w->st.late++;
		return;
	}
	w->st.packets++;
	struct slot *s = slot_for(w, wn, r);
	if (!s) {
		w->st.over_keys++;
		wn->other_packets++;
		wn->other_bytes += r->len;
		return;
	}
	s->packets++;
	s->bytes += r->len;
	count_flow(w, wn, s, r);
}

void hs_win_drop(struct hs_win *w, const struct hs_pktrec *r)
{
	struct win *wn = window_for(w, r->ts_ns);

	if (!wn) {
		if (r->ts_ns < w->begin)
			w->st.before++;
		else
			w->st.late_drops++;
		return;
	}
	w->st.drops++;
	struct slot *s = slot_for(w, wn, r);
	if (!s) {
		w->st.over_keys++;
		wn->other_drops++;
		return;
	}
	s->drops++;
}

/* the key's slot in an open window, NULL when it has none (not added) */
static struct slot *slot_find(struct hs_win *w, struct win *wn, const struct hs_pktrec *r)
{
	struct hs_win_key k;

	make_key(w->cfg.fields, r, &k);
	uint64_t h = key_hash(&k);
	size_t mask = w->kcap - 1;
	for (size_t i = h & mask; wn->slots[i].hash; i = (i + 1) & mask)
		if (wn->slots[i].hash == h && key_cmp(&wn->slots[i].key, &k) == 0)
			return &wn->slots[i];
	return NULL;
}

void hs_win_undrop(struct hs_win *w, const struct hs_pktrec *r)
{
	uint64_t len = w->cfg.window_ns, start = r->ts_ns - r->ts_ns % len;
	struct win *wn = &w->ring[(start / len) % w->cfg.max_open];

	if (start < w->closed_upto || !wn->open || wn->start != start || !w->st.drops)
		return;		/* emitted (or never counted): as it was */
	struct slot *s = slot_find(w, wn, r);
	if (s && s->drops) {
		s->drops--;
		w->st.drops--;
	} else if (!s && wn->other_drops) {
		wn->other_drops--;	/* counted past the key cap */
		w->st.over_keys--;
		w->st.drops--;
	}
}

void hs_win_begin(struct hs_win *w, uint64_t t)
{
	uint64_t start = t - t % w->cfg.window_ns;

	if (start > w->begin)
		w->begin = start;
	if (start > w->closed_upto)
		w->closed_upto = start;
}

void hs_win_get_stats(const struct hs_win *w, struct hs_win_stats *st)
{
	*st = w->st;
}

/* ---- a header for filtering a record -------------------------------------- */

static void be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

size_t hs_pktrec_header(const struct hs_pktrec *r, uint8_t *buf, size_t len)
{
	const struct hs_flowkey *k = &r->key;
	size_t ip = k->src.af == 6 ? 40 : 20;
	size_t l4 = k->proto == 6 ? 20 : (k->proto == 17 || k->proto == 1 || k->proto == 58) ? 8 : 0;
	uint32_t total = r->len > ip + l4 ? r->len : (uint32_t)(ip + l4);

	if (len < ip + l4 || (k->src.af != 4 && k->src.af != 6))
		return 0;
	memset(buf, 0, ip + l4);
	if (ip == 20) {
		buf[0] = 0x45;
		buf[1] = (uint8_t)(r->dscp << 2);
		be16(buf + 2, total > 65535 ? 65535 : (uint16_t)total);
		buf[8] = r->ttl;
		buf[9] = k->proto;
		memcpy(buf + 12, k->src.a, 4);
		memcpy(buf + 16, k->dst.a, 4);
	} else {
		buf[0] = (uint8_t)(0x60 | (r->dscp >> 2));
		buf[1] = (uint8_t)((r->dscp & 3) << 6);
		be16(buf + 4, total - 40 > 65535 ? 65535 : (uint16_t)(total - 40));
		buf[6] = k->proto;
		buf[7] = r->ttl;
		memcpy(buf + 8, k->src.a, 16);
		memcpy(buf + 24, k->dst.a, 16);
	}
	uint8_t *l = buf + ip;
	if (k->proto == 6 || k->proto == 17) {
		be16(l, k->sport);
		be16(l + 2, k->dport);
	}
	if (k->proto == 6) {
		l[12] = 5 << 4;
		l[13] = r->tcp_flags;
	} else if (k->proto == 17) {
		be16(l + 4, (uint16_t)(total - ip > 65535 ? 65535 : total - ip));
	}
	return ip + l4;
}
