/* probe.c - guided probes: crafting with libnet, the signature, judging a
 * copy's trace, and the run: sending, matching the probe's own mirrored
 * copies to it, timing, keeping it in the history
 *
 * (The signature a probe carries, and reading it from a copy, are
 * probesig.c's: the capture reads it from every copy.)
 *
 * A probe run sends spec.count packets spec.interval apart from one raw
 * socket, then waits until every packet has a closed trace or spec.timeout
 * has passed since the last one. It tells its front end through callbacks
 * (struct hs_probe_cbs): each result as its trace closes, each traceroute
 * round, the end of the run and its status. The words of the verbs and
 * what they print are the console's (src/console/probecmd.c, and the
 * verbs commands/probe.c and traceroute.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <limits.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <libnet.h>

#include "ctx.h"
#include "probe.h"


static uint16_t l4_hdr_len(uint8_t proto)
{
	return proto == 6 ? LIBNET_TCP_H : 8;
}

uint16_t hs_probe_min_len(const struct hs_probe_spec *s)
{
	return (uint16_t)(HS_IPV4_HLEN + l4_hdr_len(s->proto) + HS_PROBE_SIG_LEN);
}

uint16_t hs_probe_max_len(const struct hs_probe_spec *s)
{
	return (uint16_t)(HS_PROBE_MTU - HS_IPV4_HLEN * s->nvia);
}

/* ---- crafting ---------------------------------------------------------------- */

void hs_probe_pkt_init(const struct hs_probe_spec *s, uint32_t probe_id, uint32_t seq,
		       uint64_t sent_ns, struct hs_probe_pkt *pk)
{
	memset(pk, 0, sizeof(*pk));
	pk->probe_id = probe_id;
	pk->seq = seq;
	pk->sent_ns = sent_ns;
	/* distinct IP IDs and TCP sequence numbers keep the packets of one
	 * probe in separate traces and let a trace be matched to its packet */
	if (s->have_ip_id) {
		pk->ip_id = s->ip_id;
	} else {
		pk->ip_id = (uint16_t)((probe_id * 2654435761u >> 16) + seq);
		if (pk->ip_id == 0)
			pk->ip_id = 1;
	}
	pk->tcp_seq = probe_id * 0x9e3779b1u + seq * 0x10001u;
	pk->sport = s->sport ? s->sport : (uint16_t)(32768 + probe_id % 28000);
	if (s->kind != HS_PROBE_TRACEROUTE)
		pk->ttl = s->ttl;
	else	/* rounds of TTL 1..max_ttl */
		pk->ttl = (uint8_t)((s->max_ttl ? seq % s->max_ttl : seq) + 1);
}

static uint32_t v4(const struct hs_addr *a)
{
	uint32_t x;

	memcpy(&x, a->a, 4);	/* network order, as libnet wants */
	return x;
}

size_t hs_probe_craft(struct libnet_context *l, const struct hs_probe_spec *s,
		      const struct hs_probe_pkt *pk, uint8_t *buf, size_t cap,
		      char *err, size_t errlen)
{
	uint8_t payload[HS_PROBE_MTU];
	uint16_t len = s->len ? s->len : hs_probe_min_len(s);
	uint16_t l4h = l4_hdr_len(s->proto);
	libnet_ptag_t t;

	if (len < hs_probe_min_len(s) || len > hs_probe_max_len(s) || s->nvia > HS_PROBE_MAX_VIA) {
		snprintf(err, errlen, "probe length %u out of range (%u-%u)", len,
			 hs_probe_min_len(s), hs_probe_max_len(s));
		return 0;
	}
	uint32_t plen = (uint32_t)len - HS_IPV4_HLEN - l4h;
	hs_probe_sig_write(payload, pk->probe_id, pk->seq, pk->sent_ns);
	for (uint32_t i = HS_PROBE_SIG_LEN; i < plen; i++)
		payload[i] = (uint8_t)i;

	libnet_clear_packet(l);
	switch (s->proto) {
	case 6:
		t = libnet_build_tcp(pk->sport, s->dport, pk->tcp_seq,
				     (s->tcp_flags & 0x10) ? ~pk->tcp_seq : 0, s->tcp_flags,
				     65535, 0, 0, (uint16_t)(l4h + plen), payload, plen, l, 0);
		break;
	case 17:
		t = libnet_build_udp(pk->sport, s->dport, (uint16_t)(l4h + plen), 0, payload,
				     plen, l, 0);
		break;
	case 1:
		t = libnet_build_icmpv4_echo(ICMP_ECHO, 0, 0, (uint16_t)pk->probe_id,
					     (uint16_t)pk->seq, payload, plen, l, 0);
		break;
	default:
		snprintf(err, errlen, "protocol %u cannot be crafted", s->proto);
		return 0;
	}
	if (t == -1)
		goto fail;
	t = libnet_build_ipv4(len, (uint8_t)(s->tos | HS_DEBUG_TOS_BIT), pk->ip_id, 0, pk->ttl,
			      s->proto, 0, v4(&s->src), v4(&s->dst), NULL, 0, l, 0);
	if (t == -1)
		goto fail;
	/* IP-in-IP, innermost layer first: the last one built is the outermost */
	uint16_t total = len;
	for (int k = s->nvia - 1; k >= 0; k--) {
		total = (uint16_t)(total + HS_IPV4_HLEN);
		t = libnet_build_ipv4(total, HS_DEBUG_TOS_BIT, (uint16_t)(pk->ip_id + 0x100 * (k + 1)),
				      0, 64, IPPROTO_IPIP, 0, v4(&s->outer_src),
				      v4(&s->via_addr[k]), NULL, 0, l, 0);
		if (t == -1)
			goto fail;
	}

	uint8_t *pkt = NULL;
	uint32_t n = 0;
	if (libnet_pblock_coalesce(l, &pkt, &n) == -1)
		goto fail;
	if (n != total || n > cap) {
		snprintf(err, errlen, "crafted %u bytes, expected %u (buffer %zu)", n, total, cap);
		free(pkt);
		return 0;
	}
	memcpy(buf, pkt, n);
	free(pkt);

	if (s->badsum) {
		static const uint8_t csum_off[] = { [1] = 2, [6] = 16, [17] = 6 };
		size_t at = (size_t)HS_IPV4_HLEN * s->nvia + HS_IPV4_HLEN + csum_off[s->proto];
		uint16_t good = (uint16_t)(buf[at] << 8 | buf[at + 1]);
		uint16_t bad = good ^ 0x5a5a;
		if (bad == 0 || bad == 0xffff)	/* 0 means "no checksum" for UDP */
			bad = good ^ 0x0101;
		buf[at] = (uint8_t)(bad >> 8);
		buf[at + 1] = (uint8_t)bad;
	}
	return n;
fail:
	snprintf(err, errlen, "cannot craft the probe: %s", libnet_geterror(l));
	{
		size_t m = strlen(err);
		while (m > 0 && (err[m - 1] == '\n' || err[m - 1] == '.'))
			err[--m] = '\0';
	}
	return 0;
}

/* ---- results ----------------------------------------------------------------- */

const char *hs_probe_outcome_name(int outcome)
{
	switch (outcome) {
	case HS_PROBE_PENDING: return "pending";
	case HS_PROBE_DELIVERED: return "delivered";
	case HS_PROBE_LOST: return "lost";
	case HS_PROBE_LOOPED: return "looped";
	case HS_PROBE_SEEN: return "seen";
	}
	return "?";
}

static uint64_t hop_gap(const struct hs_probe_hop *a, const struct hs_probe_hop *b)
{
	if (a->hw_ns && b->hw_ns && b->hw_ns >= a->hw_ns)
		return b->hw_ns - a->hw_ns;
	return b->ts_ns >= a->ts_ns ? b->ts_ns - a->ts_ns : 0;
}

void hs_probe_hop_times(const struct hs_probe_result *r, int64_t at[HS_TRACE_MAX_HOPS])
{
	uint64_t prev = r->sent_ns;

	for (int i = 0; i < r->nhops && i < HS_TRACE_MAX_HOPS; i++) {
		const struct hs_probe_hop *h = &r->hops[i];
		uint64_t t = h->hw_ns ? h->hw_ns : h->ts_ns;
		bool ok = t >= prev && (!h->hw_ns || h->hw_ns <= h->ts_ns);

		at[i] = ok ? (int64_t)(t - r->sent_ns) : -1;
		if (ok)
			prev = t;
	}
}

static bool via_repeats(const struct hs_probe_spec *s)
{
	for (int i = 0; i < s->nvia; i++)
		for (int j = i + 1; j < s->nvia; j++)
			if (s->via[i] == s->via[j])
				return true;
	return false;
}

static int via_pos(const struct hs_probe_spec *s, int sw)
{
	for (int i = 0; i < s->nvia; i++)
		if (s->via[i] == sw)
			return i;
	return -1;
}

/* Inside its IP-in-IP headers a probe keeps its own TTL, so the copies of
 * the switches it is steered over tie on TTL and fall back on the time they
 * reached the analyzer, which a busy switch can report late. The headers
 * fix the order: a run of hops with one TTL made only of distinct switches
 * of the via list is put in via order. */
static void tunnel_order(const struct hs_probe_spec *s, struct hs_probe_result *r)
{
	if (s->nvia < 2 || via_repeats(s))
		return;
	for (int i = 0; i < r->nhops;) {
		int j = i;
		bool all = true;
		while (j < r->nhops && r->hops[j].ttl == r->hops[i].ttl) {
			if (via_pos(s, r->hops[j].sw) < 0)
				all = false;
			j++;
		}
		if (all && j - i > 1) {
			for (int a = i + 1; a < j; a++) {	/* insertion sort by via position */
				struct hs_probe_hop h = r->hops[a];
				int b = a;
				while (b > i && via_pos(s, r->hops[b - 1].sw) > via_pos(s, h.sw)) {
					r->hops[b] = r->hops[b - 1];
					b--;
				}
				r->hops[b] = h;
			}
		}
		i = j;
	}
}

void hs_probe_judge(const struct hs_probe_spec *s, const struct hs_topo *topo,
		    const struct hs_trace *t, uint64_t sent_ns, struct hs_probe_result *r)
{
	memset(r, 0, sizeof(*r));
	r->sent_ns = sent_ns;
	r->lost_after = -1;
	int nh = t->nhops > HS_TRACE_MAX_HOPS ? HS_TRACE_MAX_HOPS : t->nhops;
	for (int i = 0; i < nh; i++) {
		const struct hs_hop *h = &t->hops[i];
		/* the probe itself leaving the analyzer, when the capture sees it */
		if (h->sw < 0 && hs_addr_eq(&h->addr, &s->outer_src))
			continue;
		struct hs_probe_hop *o = &r->hops[r->nhops++];
		o->sw = h->sw;
		o->addr = h->addr;
		o->ts_ns = h->ts_ns;
		o->hw_ns = h->hw_ns;
		o->ttl = h->ttl;
	}
	if (r->nhops == 0) {
		r->outcome = HS_PROBE_LOST;
		return;
	}
	tunnel_order(s, r);
	const struct hs_probe_hop *last = &r->hops[r->nhops - 1];

	if (s->kind == HS_PROBE_LINK) {
		/* A sees the probe twice: on the way out still inside its IP-in-IP
		 * headers, and back from B with its own TTL one lower. Going by
		 * TTL, not by the order of the copies, keeps this right when a
		 * switch reports its copy late. */
		int out = -1, back = -1, b = -1;
		for (int i = 0; i < r->nhops; i++) {
			const struct hs_probe_hop *h = &r->hops[i];
			if (h->sw == s->link_b && b < 0)
				b = i;
			if (h->sw != s->link_a)
				continue;
			if (out < 0 || h->ttl > r->hops[out].ttl)
				out = i;
			if (back < 0 || h->ttl < r->hops[back].ttl)
				back = i;
		}
		if (out >= 0 && back >= 0 && b >= 0 && r->hops[back].ttl < r->hops[out].ttl) {
			r->outcome = HS_PROBE_DELIVERED;
			r->have_rtt = true;
			r->rtt_ns = hop_gap(&r->hops[out], &r->hops[back]);
			return;
		}
		r->outcome = HS_PROBE_LOST;
		r->lost_after = r->nhops - 1;
		return;
	}

	r->have_rtt = last->ts_ns >= sent_ns;
	r->rtt_ns = r->have_rtt ? last->ts_ns - sent_ns : 0;
	if (t->extra_hops > 0 || (t->outcome == HS_OUT_LOOPED && !via_repeats(s))) {
		r->outcome = HS_PROBE_LOOPED;
		r->lost_after = r->nhops - 1;
		r->have_rtt = false;
		r->rtt_ns = 0;
		return;
	}
	int leaf = topo ? hs_topo_leaf_for(topo, &s->dst) : -1;
	if (s->kind == HS_PROBE_TRACEROUTE) {
		/* a packet with a small TTL is meant to stop early */
		r->outcome = (leaf >= 0 && last->sw == leaf) ? HS_PROBE_DELIVERED : HS_PROBE_SEEN;
		return;
	}
	bool delivered;
	if (leaf >= 0)
		delivered = last->sw == leaf;
	else if (t->outcome == HS_OUT_UNKNOWN || t->outcome == HS_OUT_OPEN) {
		r->outcome = HS_PROBE_SEEN;
		return;
	} else
		delivered = t->outcome == HS_OUT_DELIVERED;
	if (delivered) {
		r->outcome = HS_PROBE_DELIVERED;
	} else {
		r->outcome = HS_PROBE_LOST;
		r->lost_after = r->nhops - 1;
		r->have_rtt = false;
		r->rtt_ns = 0;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

uint64_t hs_probe_percentile(uint64_t *v, size_t n, double p)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof(*v), cmp_u64);
	double rank = ceil(p / 100.0 * (double)n);
	size_t i = rank < 1 ? 0 : (size_t)rank - 1;
	return v[i < n ? i : n - 1];
}

/* ---- the run ----------------------------------------------------------------- */

static void on_trace(void *arg, const struct hs_trace *t);

static const char *verb_of(const struct hs_probe_run *r)
{
	return r->s.kind == HS_PROBE_TRACEROUTE ? "traceroute" : "probe";
}

const char *hs_probe_hop_name(const struct hs_topo *topo, int sw, const struct hs_addr *a,
			      char *buf, size_t len)
{
	if (topo && sw >= 0 && sw < topo->nsw)
		return topo->sw[sw].name;
	return hs_addr_str(a, buf, len);
}

/* tell the front end a packet's fate, and what went wrong */
static void tell_result(struct hs_probe_run *r, const struct hs_probe_result *res)
{
	if (r->cb.result)
		r->cb.result(r->cb.arg, r, res);
}

__attribute__((format(printf, 2, 3)))
static void tell_error(struct hs_probe_run *r, const char *fmt, ...)
{
	char msg[LIBNET_ERRBUF_SIZE + 2 * HS_ADDRSTRLEN + 256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (r->cb.error)
		r->cb.error(r->cb.arg, msg);
}

static uint64_t wait_ns(const struct hs_probe_run *r);

/* A packet's copies are seen after it was sent (the switches' clocks a
 * second apart at most) and before it is waited for no longer. Its
 * number and sequence number say which packet of which run, but not
 * whose: another analyzer of the fabric numbers its own probes, and may
 * give one the same number, its traces read from the shared history (the
 * fabric view) as this analyzer's copies of its own probes mirrored there
 * are; of those, the ones seen outside the packet's time are not its. */
static bool in_time(const struct hs_probe_run *r, const struct hs_probe_pkt *pk, uint64_t first)
{
	return !first || (first + HS_NS_PER_SEC >= pk->sent_ns &&
			  first <= pk->sent_ns + wait_ns(r) + HS_NS_PER_SEC);
}

/* the packet a closed trace belongs to */
static struct hs_probe_slot *match_slot(struct hs_probe_run *r, const struct hs_trace *t)
{
	uint64_t first = t->nhops ? t->hops[0].ts_ns : 0;
	unsigned used = r->nsent < r->nslots ? r->nsent : r->nslots;

	for (unsigned i = 0; i < used; i++) {
		const struct hs_probe_pkt *pk = &r->slot[i].pk;
		if (!in_time(r, pk, first))
			continue;
		if (r->s.proto == 6 && t->seq == pk->tcp_seq && t->ip_id == pk->ip_id)
			return &r->slot[i];
		if (r->s.proto != 6 && !r->s.have_ip_id && t->ip_id == pk->ip_id)
			return &r->slot[i];
	}
	/* same IP ID on every packet (id N): the oldest packet still waiting */
	if (r->s.proto != 6 && r->s.have_ip_id)
		for (unsigned i = 0; i < used; i++)
			if (r->slot[i].r.outcome == HS_PROBE_PENDING && in_time(r, &r->slot[i].pk, first))
				return &r->slot[i];
	return NULL;
}

static void handle_closed(uv_handle_t *h)
{
	struct hs_probe_run *r = h->data;

	if (--r->open_handles > 0)
		return;
	free(r->slot);
	free(r->tr);
	free(r->words);
	free(r);
}

/* the slots being stored, and the run they are of */
struct stored {
	const struct hs_probe_run *r;
	const struct hs_probe_slot *slots;
};

/* packet i of them as the history keeps it */
static void store_pkt(void *arg, unsigned i, struct hs_store_probe_pkt *p)
{
	const struct stored *sd = arg;
	const struct hs_topo *topo = sd->r->ctx->topo;
	const struct hs_probe_slot *sl = &sd->slots[i];
	const struct hs_probe_result *res = &sl->r;
	char nb[HS_ADDRSTRLEN];

	p->seq = sl->pk.seq;
	p->sport = sl->pk.sport;
	p->ttl = sl->pk.ttl;
	p->sent_ns = sl->pk.sent_ns;
	p->outcome = hs_probe_outcome_name(res->outcome);
	if (res->lost_after >= 0) {
		const struct hs_probe_hop *h = &res->hops[res->lost_after];
		snprintf(p->lost_after, sizeof(p->lost_after), "%s",
			 hs_probe_hop_name(topo, h->sw, &h->addr, nb, sizeof(nb)));
	}
	p->have_rtt = res->have_rtt;
	p->rtt_ns = res->rtt_ns;
	p->nhops = res->nhops;
	for (int k = 0; k < res->nhops; k++) {
		const struct hs_probe_hop *h = &res->hops[k];
		struct hs_store_probe_hop *o = &p->hops[k];
		snprintf(o->sw, sizeof(o->sw), "%s", hs_probe_hop_name(topo, h->sw, &h->addr, nb, sizeof(nb)));
		o->addr = h->addr;
		o->ts_ns = h->ts_ns;
		o->hw_ns = h->hw_ns;
		o->ttl = h->ttl;
	}
}

static void store_slots(struct hs_probe_run *r, const struct hs_probe_slot *slots, unsigned n)
{
	struct hs_ctx *ctx = r->ctx;
	struct hs_store *st = hs_ctx_store(ctx);
	static const char *const kinds[] = { "probe", "link", "traceroute" };
	char err[512];

	if (!st)
		return;
	struct hs_store_probe run = {
		.probe_id = r->id,
		.session = ctx->session,
		.kind = kinds[r->s.kind],
		.spec = r->words,
		.src = r->s.src,
		.dst = r->s.dst,
		.proto = r->s.proto,
		.dport = r->s.dport,
	};
	struct stored sd = { r, slots };
	if (hs_store_probe(st, &run, n, store_pkt, &sd, err, sizeof(err)) < 0)
		hs_say_warn(ctx, "cannot write to '%s': %s", hs_store_name(st), err);
}

/* A console numbers its probes from the clock and its process id: two
 * analyzers writing one history may still give two probes one number
 * (their rows are told apart by analyzer). HOPSCOPE_TEST_PROBE_ID, for
 * tests, gives the first number, so that they can. */
static uint32_t first_probe_id(void)
{
	const char *env = getenv("HOPSCOPE_TEST_PROBE_ID");
	uint64_t n;

	if (env && hs_parse_uint(env, UINT32_MAX, &n) == 0 && n > 0)
		return (uint32_t)n;
	return (uint32_t)(hs_wall_ns() / 1000) ^ ((uint32_t)getpid() << 16);
}

/* how long a packet's trace is waited for after the last packet */
static uint64_t wait_ns(const struct hs_probe_run *r)
{
	uint64_t tt = r->ctx->set.trace_timeout_ns ? r->ctx->set.trace_timeout_ns : HS_NS_PER_SEC;

	return r->s.timeout_ns ? r->s.timeout_ns : tt + 2 * HS_NS_PER_SEC;
}

/* ---- traceroute rounds: per-hop loss and latency ------------------------------- */

static bool same_switch(const struct hs_probe_hop *a, const struct hs_probe_hop *b)
{
	return a->sw >= 0 ? a->sw == b->sw : b->sw < 0 && hs_addr_eq(&a->addr, &b->addr);
}

static void tr_hop_add(struct hs_tr_hop *th, const struct hs_probe_hop *h, int64_t at)
{
	int i;

	for (i = 0; i < th->nsw; i++)
		if (h->sw >= 0 ? th->sw[i] == h->sw : th->sw[i] < 0 && hs_addr_eq(&th->addr[i], &h->addr))
			break;
	if (i == th->nsw && th->nsw < (int)HS_ARRAY_SIZE(th->sw)) {
		th->sw[th->nsw] = h->sw;
		th->addr[th->nsw++] = h->addr;
	}
	if (at < 0)
		return;		/* a time off the send's clock */
	th->n++;
	th->last = at;
	if (th->n == 1 || at < th->best)
		th->best = at;
	if (th->n == 1 || at > th->worst)
		th->worst = at;
	double d = (double)at - th->mean;
	th->mean += d / (double)th->n;
	th->m2 += d * ((double)at - th->mean);
}

/* count a packet whose fate is known: its trace closed, or it never came */
static void tr_settle(struct hs_probe_run *r, struct hs_probe_slot *sl)
{
	struct hs_tr_stats *ts = r->tr;
	const struct hs_probe_result *res = &sl->r;
	int64_t at[HS_TRACE_MAX_HOPS];
	int ttl = sl->pk.ttl, k = 0;
	int leaf = r->ctx->topo ? hs_topo_leaf_for(r->ctx->topo, &r->s.dst) : -1;

	if (sl->settled || !sl->sent || ttl < 1 || ttl > HS_TRACEROUTE_MAX_TTL)
		return;
	sl->settled = true;
	ts->sent[ttl]++;
	hs_probe_hop_times(res, at);
	for (int i = 0; i < res->nhops && k < r->s.max_ttl; i++) {
		const struct hs_probe_hop *h = &res->hops[i];
		/* a switch that reports a packet twice (in and out of its
		 * IP-in-IP header) is one hop, reached at its first copy */
		if (i > 0 && same_switch(&res->hops[i - 1], h))
			continue;
		k++;
		ts->seen[ttl][k]++;
		tr_hop_add(&ts->hop[k], h, at[i]);
		if (k > ts->deepest)
			ts->deepest = k;
		if (leaf >= 0 && h->sw == leaf && (!ts->reached || k < ts->reached))
			ts->reached = k;
	}
	store_slots(r, sl, 1);
}

static void finish(struct hs_probe_run *r)
{
	struct hs_ctx *ctx = r->ctx;
	int status = 0;

	if (r->finished)
		return;
	r->finished = true;
	uv_timer_stop(&r->send_timer);
	uv_timer_stop(&r->end_timer);
	if (r->icmp_polling) {
		uv_poll_stop(&r->icmp_poll);
		r->icmp_polling = false;
	}

	unsigned delivered = 0;
	unsigned used = r->nsent < r->nslots ? r->nsent : r->nslots;
	for (unsigned i = 0; i < used; i++) {
		struct hs_probe_slot *sl = &r->slot[i];
		/* stopped: a packet still within its wait is not lost, only unknown */
		if (r->tr && r->stopped && sl->sent && sl->r.outcome == HS_PROBE_PENDING &&
		    hs_wall_ns() < sl->pk.sent_ns + wait_ns(r)) {
			store_slots(r, sl, 1);
			continue;
		}
		if (sl->r.outcome == HS_PROBE_PENDING) {
			sl->r.outcome = HS_PROBE_LOST;
			sl->r.lost_after = -1;
			sl->r.seq = sl->pk.seq;
			sl->r.sent_ns = sl->pk.sent_ns;
			if (r->s.kind != HS_PROBE_TRACEROUTE)
				tell_result(r, &sl->r);
		}
		if (r->tr)
			tr_settle(r, sl);
		if (sl->r.outcome == HS_PROBE_DELIVERED)
			delivered++;
	}
	if (r->cb.end)
		r->cb.end(r->cb.arg, r);
	if (!r->tr && r->nsent > 0)
		store_slots(r, r->slot, r->nsent);

	if (r->send_failed)
		status = -1;
	else if (r->s.expect == HS_EXPECT_DELIVERED && delivered != r->nsent)
		status = -1;
	else if (r->s.expect == HS_EXPECT_LOST && delivered != 0)
		status = -1;

	if (r->l) {
		libnet_destroy(r->l);
		r->l = NULL;
	}
	if (ctx->probe == r)
		ctx->probe = NULL;
	hs_unsub_traces(&ctx->subs, on_trace, r);
	uv_close((uv_handle_t *)&r->send_timer, handle_closed);
	uv_close((uv_handle_t *)&r->end_timer, handle_closed);
	if (r->icmp_fd >= 0) {
		uv_close((uv_handle_t *)&r->icmp_poll, handle_closed);
	}
	if (r->cb.done)
		r->cb.done(r->cb.arg, status);
	/* the socket outlives the poll handle by a loop turn: close it now that
	 * uv_poll_stop has run */
	if (r->icmp_fd >= 0) {
		close(r->icmp_fd);
		r->icmp_fd = -1;
	}
}

static void end_cb(uv_timer_t *t)
{
	finish(t->data);
}

void hs_probe_stop(struct hs_ctx *ctx)
{
	if (ctx->probe && ctx->probe->ctx == ctx) {
		ctx->probe->stopped = true;
		finish(ctx->probe);
	}
}

static int send_one(struct hs_probe_run *r)
{
	struct hs_probe_slot *sl = &r->slot[r->nsent % r->nslots];
	uint8_t buf[HS_PROBE_MTU];
	char err[LIBNET_ERRBUF_SIZE + 64], ab[HS_ADDRSTRLEN];

	if (r->tr && sl->sent) {
		/* a packet of a round long gone: lost if nothing came of it */
		if (sl->r.outcome == HS_PROBE_PENDING)
			sl->r.outcome = HS_PROBE_LOST;
		tr_settle(r, sl);
	}
	memset(sl, 0, sizeof(*sl));
	hs_probe_pkt_init(&r->s, r->id, r->nsent, hs_wall_ns(), &sl->pk);
	size_t n = hs_probe_craft(r->l, &r->s, &sl->pk, buf, sizeof(buf), err, sizeof(err));
	if (n == 0) {
		tell_error(r, "%s: %s", verb_of(r), err);
		return -1;
	}
	/* the first hop: the outermost header's destination */
	const struct hs_addr *to = r->s.nvia ? &r->s.via_addr[0] : &r->s.dst;
	errno = 0;
	if (libnet_write_raw_ipv4(r->l, buf, (uint32_t)n) != (int)n) {
		int e = errno;
		tell_error(r, "%s: cannot send to '%s': %s%s", verb_of(r),
			   hs_addr_str(to, ab, sizeof(ab)), e ? strerror(e) : libnet_geterror(r->l),
			   e == ENETUNREACH && !r->s.nvia ? " (try 'from SW' or 'via SW,...')" : "");
		return -1;
	}
	sl->sent = true;
	sl->r.seq = sl->pk.seq;
	sl->r.sent_ns = sl->pk.sent_ns;
	sl->r.outcome = HS_PROBE_PENDING;
	sl->r.lost_after = -1;
	r->nsent++;
	return 0;
}

static void send_cb(uv_timer_t *t)
{
	struct hs_probe_run *r = t->data;

	if (r->finished)
		return;
	if (send_one(r) < 0) {
		r->send_failed = true;
		finish(r);
		return;
	}
	if (r->nsent >= r->s.count) {
		uv_timer_stop(&r->send_timer);
		if (r->tr)
			r->tr->rounds++;
		uv_timer_start(&r->end_timer, end_cb, wait_ns(r) / 1000000, 0);
	} else if (r->tr && r->nsent % r->s.max_ttl == 0) {
		/* a round sent: the next one a round's interval after it began */
		uint64_t spent = (uint64_t)(r->s.max_ttl - 1) * r->s.interval_ns;
		uint64_t gap = r->s.round_ns > spent ? r->s.round_ns - spent : r->s.interval_ns;
		r->tr->rounds++;
		if (r->cb.round)
			r->cb.round(r->cb.arg, r);
		uv_timer_start(&r->send_timer, send_cb, gap / 1000000, r->s.interval_ns / 1000000);
	}
}

/* ICMP errors about our traceroute packets, when they are sent to this host */
static void icmp_drain(struct hs_probe_run *r)
{
	uint8_t b[1500];

	for (int k = 0; k < 64; k++) {
		ssize_t n = recv(r->icmp_fd, b, sizeof(b), MSG_DONTWAIT);
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			continue;	/* a socket error (read, so cleared) or EINTR */
		if (n <= 0)
			return;
		size_t len = (size_t)n;
		if (len < HS_IPV4_HLEN || (b[0] >> 4) != 4)
			continue;
		size_t ihl = (size_t)(b[0] & 0x0f) * 4;
		if (ihl < HS_IPV4_HLEN || len < ihl + 8 + HS_IPV4_HLEN)
			continue;
		const uint8_t *ic = b + ihl;
		if (ic[0] != 11 && ic[0] != 3)	/* time exceeded, unreachable */
			continue;
		const uint8_t *q = ic + 8;	/* the quoted header */
		size_t qlen = len - ihl - 8;
		size_t qihl = (size_t)(q[0] & 0x0f) * 4;
		if ((q[0] >> 4) != 4 || qihl < HS_IPV4_HLEN || qlen < qihl + 4)
			continue;
		if (q[9] != r->s.proto || memcmp(q + 16, r->s.dst.a, 4) != 0)
			continue;
		uint16_t qid = (uint16_t)(q[4] << 8 | q[5]);
		uint16_t qdport = (uint16_t)(q[qihl + 2] << 8 | q[qihl + 3]);
		if (qdport != r->s.dport)
			continue;
		for (unsigned i = 0; i < r->nsent && i < HS_TRACEROUTE_MAX_TTL; i++) {
			if (r->slot[i].pk.ip_id != qid || r->icmp[i].have)
				continue;
			r->icmp[i].have = true;
			r->icmp[i].type = ic[0];
			r->icmp[i].ts_ns = hs_wall_ns();
			r->icmp[i].from.af = 4;
			memcpy(r->icmp[i].from.a, b + 12, 4);
			break;
		}
	}
}

/* libuv stops a poll whose socket reports an error (an ICMP error about
 * an ICMP packet can set one on a raw socket) and calls it once with a
 * negative status: drain, which reads the error, and poll again, or the
 * run would hear no more of its hops */
static void icmp_cb(uv_poll_t *h, int status, int events)
{
	struct hs_probe_run *r = h->data;

	if (r->finished)
		return;
	icmp_drain(r);
	if (status < 0)
		uv_poll_start(h, UV_READABLE, icmp_cb);
}

static void icmp_open(struct hs_probe_run *r)
{
	int fd = socket(AF_INET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_ICMP);

	r->icmp_fd = -1;
	if (fd < 0)
		return;		/* best effort: the mirrored copies are the main source */
	if (uv_poll_init(r->ctx->loop, &r->icmp_poll, fd) < 0) {
		close(fd);
		return;
	}
	r->icmp_fd = fd;
	r->icmp_poll.data = r;
	r->open_handles++;
	uv_poll_start(&r->icmp_poll, UV_READABLE, icmp_cb);
	r->icmp_polling = true;
}

struct hs_probe_run *hs_probe_open(struct hs_ctx *ctx, const struct hs_probe_spec *s,
				   char *err, size_t errlen)
{
	const char *verb = s->kind == HS_PROBE_TRACEROUTE ? "traceroute" : "probe";
	char errbuf[LIBNET_ERRBUF_SIZE];

	if (ctx->probe) {
		hs_errf(err, errlen, "%s: probe %" PRIu32 " is still running", verb, ctx->probe->id);
		return NULL;
	}
	errno = 0;
	libnet_t *l = libnet_init(LIBNET_RAW4, NULL, errbuf);
	if (!l) {
		int e = errno;
		if (e == EPERM || e == EACCES || strstr(errbuf, strerror(EPERM))) {
			hs_errf(err, errlen, "%s: cannot open raw socket: %s "
				"(needs root or CAP_NET_RAW)", verb, strerror(EPERM));
			return NULL;
		}
		size_t m = strlen(errbuf);
		while (m > 0 && (errbuf[m - 1] == '\n' || errbuf[m - 1] == '.'))
			errbuf[--m] = '\0';
		hs_errf(err, errlen, "%s: cannot open raw socket: %s", verb, errbuf);
		return NULL;
	}
	struct hs_probe_run *r = hs_xcalloc(1, sizeof(*r));
	r->ctx = ctx;
	r->s = *s;
	r->l = l;
	r->icmp_fd = -1;
	return r;
}

void hs_probe_close(struct hs_probe_run *r)
{
	libnet_destroy(r->l);
	free(r);
}

int hs_probe_start(struct hs_probe_run *r, const char *words, const struct hs_probe_cbs *cb,
		   char *err, size_t errlen)
{
	struct hs_ctx *ctx = r->ctx;
	const struct hs_probe_spec *s = &r->s;

	err[0] = '\0';
	r->cb = *cb;
	r->words = hs_xstrdup(words ? words : "");
	r->nslots = s->count;
	if (s->kind == HS_PROBE_TRACEROUTE && s->table) {
		/* a ring of the rounds a packet may still be waited for in */
		uint64_t rounds = wait_ns(r) / s->round_ns + 3;
		r->tr = hs_xcalloc(1, sizeof(*r->tr));
		if (rounds > 64)
			rounds = 64;
		if (s->count > rounds * s->max_ttl)
			r->nslots = (unsigned)rounds * s->max_ttl;
	}
	r->slot = hs_xcalloc(r->nslots, sizeof(*r->slot));
	r->icmp_fd = -1;
	if (ctx->next_probe_id == 0)
		ctx->next_probe_id = first_probe_id();
	r->id = ctx->next_probe_id++;
	if (r->id == 0)
		r->id = ctx->next_probe_id++;
	if (r->s.kind == HS_PROBE_TRACEROUTE && r->s.sport == 0)
		r->s.sport = (uint16_t)(32768 + r->id % 28000);

	uv_timer_init(ctx->loop, &r->send_timer);
	uv_timer_init(ctx->loop, &r->end_timer);
	r->send_timer.data = r->end_timer.data = r;
	r->open_handles = 2;
	if (s->kind == HS_PROBE_TRACEROUTE && !r->tr)
		icmp_open(r);
	ctx->probe = r;
	/* its copies' traces; the pipeline has room (a probe at a time) */
	struct hs_trace_cond cond = { .flags = HS_TF_PROBE };
	bool heard = hs_sub_traces(&ctx->subs, cond, on_trace, NULL, r) == 0;

	if (!heard || send_one(r) < 0) {
		if (!heard)
			hs_errf(err, errlen, "%s: cannot hear the packet pipeline: too many "
				"subscribers", verb_of(r));
		hs_unsub_traces(&ctx->subs, on_trace, r);
		r->send_failed = true;
		ctx->probe = NULL;
		r->finished = true;
		libnet_destroy(r->l);
		r->l = NULL;
		if (r->icmp_polling)
			uv_poll_stop(&r->icmp_poll);
		uv_close((uv_handle_t *)&r->send_timer, handle_closed);
		uv_close((uv_handle_t *)&r->end_timer, handle_closed);
		if (r->icmp_fd >= 0) {
			uv_close((uv_handle_t *)&r->icmp_poll, handle_closed);
			close(r->icmp_fd);
		}
		return -1;
	}
	if (r->nsent < s->count) {
		uint64_t ms = s->interval_ns / 1000000;
		uv_timer_start(&r->send_timer, send_cb, ms, ms ? ms : 1);
	} else {
		uv_timer_start(&r->end_timer, end_cb, wait_ns(r) / 1000000, 0);
	}
	return 0;
}

/* a closed trace flagged HS_TF_PROBE: the run subscribed while it waits */
static void on_trace(void *arg, const struct hs_trace *t)
{
	struct hs_probe_run *r = arg;
	struct hs_ctx *ctx = r->ctx;

	if (r->finished || t->probe_id != r->id)
		return;
	struct hs_probe_slot *sl = match_slot(r, t);
	if (!sl)
		return;
	struct hs_probe_result res;
	hs_probe_judge(&r->s, ctx->topo, t, sl->pk.sent_ns, &res);
	res.seq = sl->pk.seq;
	if (sl->r.outcome != HS_PROBE_PENDING) {
		/* a second trace of the same packet (evicted and reopened): keep the longer */
		if (res.nhops <= sl->r.nhops)
			return;
	} else {
		r->ndone++;
	}
	sl->r = res;
	if (r->tr)
		tr_settle(r, sl);
	else if (r->s.kind != HS_PROBE_TRACEROUTE)
		tell_result(r, &sl->r);
	/* finish from the loop, not from inside the tracer's callback */
	if (r->ndone >= r->s.count && r->nsent >= r->s.count)
		uv_timer_start(&r->end_timer, end_cb, 0, 0);
}
