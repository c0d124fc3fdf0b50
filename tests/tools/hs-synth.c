/* hs-synth.c - a small fabric simulator that writes mirrored traffic
 *
 *   hs-synth [--shape leafspine:S,L,H | fattree:K] [--flows N | --packets N]
 *            [--seed S] [--duration D] [--mss BYTES] [--start SECONDS]
 *            [--drop-link A-B:P]... [--loop A-B:LEAF|HOST] [--loop-flows N]
 *            [--ttl N] [--truth OUT.jsonl] -w OUT.pcap [-t OUT.topo]
 *
 * Hosts open TCP connections (handshake, data, FIN) to hosts behind other
 * ToRs. Every packet is forwarded hop by hop over shortest paths (ECMP by a
 * hash of the 5-tuple, so one flow keeps one path), its TTL decremented at
 * each switch, and every switch mirrors what it receives as ERSPAN type III
 * (hardware timestamp in 100 ns units from the switch's own clock) to the
 * analyzer. Faults: a lossy link drops a share of the packets crossing it
 * (TCP retransmits them with a new IP ID), a loop makes two switches bounce
 * packets for one host (or all hosts behind one ToR) between them until the
 * TTL runs out. --ttl sends every packet with a small TTL, as a traceroute
 * does, so that it runs out on the way.
 *
 * Addressing follows the lab: hosts behind ToR i are 10.1.i.10+j, switch N
 * mirrors from 10.255.0.N and has loopback 10.254.0.N, the analyzer is
 * 10.255.0.254. Output is deterministic for a given seed. --truth writes one
 * JSON line per original packet: its identity, the switches that saw it and
 * what became of it (delivered, dropped, looped, or expired: its TTL ran out
 * on a path without a loop, as a traceroute's does), for tests to compare
 * with.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hs.h"
#include "topo.h"
#include "pktw.h"

#define MAX_SW 4096
#define MAX_HOPS 80
#define MAX_DROPS 16
#define PKT_RING 8192		/* inner packets whose copies are not written yet */
#define RTO_NS (200 * 1000 * 1000ULL)
#define MAX_TRIES 4

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("hs-synth: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* ---- deterministic random numbers (xorshift64*) -------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

static uint64_t rnd_below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

static double rnd_unit(void)
{
	return (double)(rnd() >> 11) / 9007199254740992.0;
}

/* ---- the fabric ---------------------------------------------------------- */

struct sw_state {
	int64_t clock_off;	/* switch clock minus true time, ns */
	uint32_t gre_seq;
};

struct host {
	char name[HS_NAME_MAX];
	struct hs_addr addr;
	int leaf;
};

struct drop {
	int a, b;
	double p;
	char spec[80];
};

static struct {
	char *text;
	size_t len, cap;
} topo_text;

static void emit(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void emit(const char *fmt, ...)
{
	va_list ap;
	char line[256];

	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(line))
		die("topology line too long");
	if (topo_text.len + (size_t)n + 1 > topo_text.cap) {
		topo_text.cap = topo_text.cap ? topo_text.cap * 2 : 65536;
		topo_text.text = realloc(topo_text.text, topo_text.cap);
		if (!topo_text.text)
			die("out of memory");
	}
	memcpy(topo_text.text + topo_text.len, line, (size_t)n + 1);
	topo_text.len += (size_t)n;
}

static int nswitches;

static void emit_switch(const char *name, const char *role)
{
	int n = ++nswitches;

	if (n > MAX_SW || n > 250 * 250)
		die("too many switches");
	/* 10.255.0.N and 10.254.0.N, spilling into the third octet past 250 */
	emit("switch %s role %s mirror 10.255.%d.%d loopback 10.254.%d.%d\n", name, role,
	     n / 251, n % 251, n / 251, n % 251);
}

/* leafspine:S,L,H or fattree:K */
static void build_topology(const char *shape, const char *cmdline)
{
	unsigned s, l, h, k;
	char extra;

	emit("# written by: hs-synth%s\n", cmdline);
	if (sscanf(shape, "leafspine:%u,%u,%u%c", &s, &l, &h, &extra) == 3) {
		if (!s || !l || !h || s > 64 || l > 250 || h > 240)
			die("'%s': expected leafspine:S,L,H with 1-64 spines, 1-250 leaves, 1-240 hosts",
			    shape);
		for (unsigned i = 1; i <= s; i++) {
			char n[16];
			snprintf(n, sizeof(n), "spine%u", i);
			emit_switch(n, "spine");
		}
		for (unsigned i = 1; i <= l; i++) {
			char n[16];
			snprintf(n, sizeof(n), "leaf%u", i);
			emit_switch(n, "leaf");
		}
		for (unsigned i = 1; i <= l; i++)
			for (unsigned j = 1; j <= s; j++)
				emit("link leaf%u spine%u spine%u leaf%u\n", i, j, j, i);
		for (unsigned i = 1; i <= l; i++) {
			emit("subnet leaf%u 10.1.%u.0/24\n", i, i);
			for (unsigned j = 0; j < h; j++)
				emit("host h%u addr 10.1.%u.%u leaf leaf%u\n", (i - 1) * h + j + 1, i,
				     10 + j, i);
		}
	} else if (sscanf(shape, "fattree:%u%c", &k, &extra) == 1) {
		if (k < 2 || k % 2 || k > 20)
			die("'%s': expected fattree:K with an even K from 2 to 20", shape);
		unsigned half = k / 2, ncore = half * half, nagg = k * half, nedge = k * half;
		for (unsigned i = 1; i <= ncore; i++) {
			char n[16];
			snprintf(n, sizeof(n), "core%u", i);
			emit_switch(n, "core");
		}
		for (unsigned i = 1; i <= nagg; i++) {
			char n[16];
			snprintf(n, sizeof(n), "agg%u", i);
			emit_switch(n, "agg");
		}
		for (unsigned i = 1; i <= nedge; i++) {
			char n[16];
			snprintf(n, sizeof(n), "edge%u", i);
			emit_switch(n, "leaf");
		}
		for (unsigned p = 0; p < k; p++) {
			for (unsigned a = 0; a < half; a++) {
				unsigned ag = p * half + a + 1;
				for (unsigned e = 0; e < half; e++) {
					unsigned ed = p * half + e + 1;
					emit("link edge%u agg%u agg%u edge%u\n", ed, ag, ag, ed);
				}
				for (unsigned c = 0; c < half; c++) {
					unsigned co = a * half + c + 1;
					emit("link agg%u core%u core%u agg%u\n", ag, co, co, ag);
				}
			}
		}
		for (unsigned e = 1; e <= nedge; e++) {
			emit("subnet edge%u 10.1.%u.0/24\n", e, e);
			for (unsigned j = 0; j < half; j++)
				emit("host h%u addr 10.1.%u.%u leaf edge%u\n", (e - 1) * half + j + 1, e,
				     10 + j, e);
		}
	} else {
		die("'%s': expected leafspine:S,L,H or fattree:K", shape);
	}
	emit("analyzer 10.255.0.254 iface hs-mirror\n");
}

/* ---- packets in flight ------------------------------------------------------ */

struct pkt {
	uint8_t ip[1600];
	size_t len;
	int refs;		/* copies not yet written */
};

struct copy {
	uint64_t ts;		/* capture time */
	uint64_t hw_ns;		/* switch clock */
	uint64_t order;		/* tie-break: order of creation */
	uint32_t pkt;
	uint16_t sw;
	uint8_t ttl;
};

static struct pkt *pkts;
static uint64_t pkt_next;
static struct copy *heap;
static size_t heap_n, heap_cap;
static uint64_t copy_order;

static struct hs_topo *topo;
static struct sw_state *sws;
static struct host *hosts;
static int nhosts;
static struct pktw_file out;
static struct hs_addr analyzer;
static uint64_t frames_written, bytes_written;

static bool copy_less(const struct copy *a, const struct copy *b)
{
	return a->ts != b->ts ? a->ts < b->ts : a->order < b->order;
}

static void heap_push(struct copy c)
{
	if (heap_n == heap_cap) {
		heap_cap = heap_cap ? heap_cap * 2 : 4096;
		heap = realloc(heap, heap_cap * sizeof(*heap));
		if (!heap)
			die("out of memory");
	}
	size_t i = heap_n++;
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!copy_less(&c, &heap[p]))
			break;
		heap[i] = heap[p];
		i = p;
	}
	heap[i] = c;
}

static struct copy heap_pop(void)
{
	struct copy top = heap[0], last = heap[--heap_n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= heap_n)
			break;
		if (c + 1 < heap_n && copy_less(&heap[c + 1], &heap[c]))
			c++;
		if (!copy_less(&heap[c], &last))
			break;
		heap[i] = heap[c];
		i = c;
	}
	if (heap_n)
		heap[i] = last;
	return top;
}

static uint16_t cksum(const uint8_t *p, size_t n)
{
	uint32_t s = 0;

	for (size_t i = 0; i + 1 < n; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/* write one mirrored copy: the inner packet with this hop's TTL */
static void write_copy(const struct copy *c)
{
	struct pkt *p = &pkts[c->pkt % PKT_RING];
	uint8_t inner[1600], frame[2048];
	struct pktw_mirror m;

	memcpy(inner, p->ip, p->len);
	inner[8] = c->ttl;
	inner[10] = inner[11] = 0;
	uint16_t ck = cksum(inner, (size_t)(inner[0] & 0x0f) * 4);
	inner[10] = (uint8_t)(ck >> 8);
	inner[11] = (uint8_t)ck;

	memset(&m, 0, sizeof(m));
	m.encap = HS_ENCAP_ERSPAN3;
	m.src = topo->sw[c->sw].mirror;
	m.dst = analyzer;
	m.session = 1;
	m.gra = 1;
	m.hw_ts = (uint32_t)(c->hw_ns / 100);
	m.gre_seq = sws[c->sw].gre_seq++;
	size_t n = pktw_frame(frame, sizeof(frame), DLT_EN10MB, &m, inner, p->len);
	if (!n)
		die("cannot build a frame");
	pktw_write(&out, c->ts, frame, n);
	frames_written++;
	bytes_written += n;
	p->refs--;
}

/* write every copy captured before t (no later packet can be captured earlier) */
static void flush_before(uint64_t t)
{
	while (heap_n && heap[0].ts < t) {
		struct copy c = heap_pop();
		write_copy(&c);
	}
}

/* ---- flows ------------------------------------------------------------------ */

enum { F_FIN = 1, F_SYN = 2, F_RST = 4, F_PSH = 8, F_ACK = 16 };

struct flow {
	int c, s;		/* hosts */
	uint16_t sport, dport;
	uint32_t cseq, sseq;	/* next sequence numbers */
	uint16_t cid, sid;	/* next IP IDs */
	int step, nsteps, tries;
	int ndata;
	bool loop;		/* planted on the loop */
	uint64_t next;		/* time of its next packet */
};

static struct flow *flows;
static size_t nflows_active;
static size_t *fheap;		/* heap of active flow indexes by next */
static size_t fheap_n;

static FILE *truth;		/* --truth: what happened to every packet */
static struct drop drops[MAX_DROPS];
static int ndrops;
static int loop_a = -1, loop_b = -1, loop_leaf = -1, loop_host = -1;
static uint32_t mss = 1448;
static uint8_t host_ttl = 64;	/* --ttl: what the hosts send with */
static struct {
	uint64_t packets, delivered, dropped, looped, expired, abandoned, retrans;
} stat;

static void fheap_push(size_t f)
{
	size_t i = fheap_n++;

	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (flows[fheap[p]].next <= flows[f].next)
			break;
		fheap[i] = fheap[p];
		i = p;
	}
	fheap[i] = f;
}

static size_t fheap_pop(void)
{
	size_t top = fheap[0], last = fheap[--fheap_n], i = 0;

	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= fheap_n)
			break;
		if (c + 1 < fheap_n && flows[fheap[c + 1]].next < flows[fheap[c]].next)
			c++;
		if (flows[fheap[c]].next >= flows[last].next)
			break;
		fheap[i] = fheap[c];
		i = c;
	}
	if (fheap_n)
		fheap[i] = last;
	return top;
}

static uint64_t flow_hash(const struct hs_addr *src, const struct hs_addr *dst, uint16_t sport,
			  uint16_t dport, int sw)
{
	struct hs_flowkey k;

	memset(&k, 0, sizeof(k));
	k.src = *src;
	k.dst = *dst;
	k.sport = sport;
	k.dport = dport;
	k.proto = 6;
	uint64_t h = hs_flowkey_hash(&k) ^ ((uint64_t)sw * 0x9e3779b97f4a7c15ULL);
	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ULL;
	return h ^ (h >> 29);
}

static double drop_p(int a, int b)
{
	for (int i = 0; i < ndrops; i++)
		if ((drops[i].a == a && drops[i].b == b) || (drops[i].a == b && drops[i].b == a))
			return drops[i].p;
	return 0;
}

enum fate { F_EXPIRED = -2, F_LOOPED = -1, F_DROPPED = 0, F_DELIVERED = 1 };

static const char *fate_name(int r)
{
	return r == F_DELIVERED ? "delivered" : r == F_DROPPED ? "dropped" :
	       r == F_LOOPED ? "looped" : "expired";
}

/* the TTL ran out at path[n - 1]: in a loop when a switch came twice */
static int ran_out(const int *path, int n)
{
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			if (path[i] == path[j])
				return F_LOOPED;
	return F_EXPIRED;
}

/*
 * Forward one packet from host src to host dst. Fills the switches it
 * reaches with their TTL as received; returns its fate.
 */
static int walk(const struct flow *f, int src, int dst, uint16_t sport, uint16_t dport,
		int *path, uint8_t *ttls, int *n, int *lost_to)
{
	int at = hosts[src].leaf, goal = hosts[dst].leaf;
	uint8_t ttl = host_ttl;
	bool looping = loop_host >= 0 ? dst == loop_host : goal == loop_leaf;

	*n = 0;
	for (;;) {
		if (*n == MAX_HOPS)
			return ran_out(path, *n);
		path[*n] = at;
		ttls[(*n)++] = ttl;
		if (ttl <= 1)
			return ran_out(path, *n);	/* would go out with TTL 0: time exceeded */
		ttl--;
		int next;
		if (looping && (at == loop_a || at == loop_b)) {
			next = at == loop_a ? loop_b : loop_a;
		} else if (at == goal) {
			return F_DELIVERED;
		} else {
			int nh[64];
			int k = hs_topo_next_hops(topo, at, goal, nh, 64);
			if (k <= 0)
				return F_DROPPED;
			next = nh[flow_hash(&hosts[src].addr, &hosts[dst].addr, sport, dport, at) %
				  (uint64_t)k];
			/* a flow planted on the loop is steered into it when it can be */
			for (int i = 0; f->loop && i < k; i++)
				if (nh[i] == loop_a || nh[i] == loop_b)
					next = nh[i];
		}
		double p = drop_p(at, next);
		if (p > 0 && rnd_unit() < p) {
			*lost_to = next;
			return F_DROPPED;
		}
		at = next;
	}
}

/* the packet of this step: direction, flags, payload length */
static void step_of(const struct flow *f, bool *from_client, uint8_t *flags, uint32_t *plen)
{
	int s = f->step, d = 2 * f->ndata;

	*plen = 0;
	if (s == 0) {
		*from_client = true;
		*flags = F_SYN;
	} else if (s == 1) {
		*from_client = false;
		*flags = F_SYN | F_ACK;
	} else if (s == 2) {
		*from_client = true;
		*flags = F_ACK;
	} else if (s < 3 + d) {
		bool data = (s - 3) % 2 == 0;
		*from_client = data;
		*flags = data ? F_PSH | F_ACK : F_ACK;
		if (data)
			*plen = 64 + (uint32_t)((f->sport * 31u + (unsigned)s * 17u) % (mss - 63));
	} else if (s == 3 + d) {
		*from_client = true;
		*flags = F_FIN | F_ACK;
	} else if (s == 4 + d) {
		*from_client = false;
		*flags = F_FIN | F_ACK;
	} else {
		*from_client = true;
		*flags = F_ACK;
	}
}

/* send the flow's current packet at time f->next; schedule what follows */
static bool send_step(struct flow *f)
{
	bool fc;
	uint8_t flags;
	uint32_t plen;
	int path[MAX_HOPS], n;
	uint8_t ttls[MAX_HOPS];
	struct pktw_inner in;

	step_of(f, &fc, &flags, &plen);
	int src = fc ? f->c : f->s, dst = fc ? f->s : f->c;
	uint16_t sport = fc ? f->sport : f->dport, dport = fc ? f->dport : f->sport;
	int lost_to = -1;
	int r = walk(f, src, dst, sport, dport, path, ttls, &n, &lost_to);

	memset(&in, 0, sizeof(in));
	in.key.src = hosts[src].addr;
	in.key.dst = hosts[dst].addr;
	in.key.sport = sport;
	in.key.dport = dport;
	in.key.proto = 6;
	in.ttl = host_ttl;
	in.ip_id = fc ? f->cid++ : f->sid++;
	in.tcp_flags = flags;
	in.seq = fc ? f->cseq : f->sseq;
	in.ack = flags & F_ACK ? (fc ? f->sseq : f->cseq) : 0;
	in.window = 64240;
	in.payload_len = (uint16_t)plen;

	if (truth) {
		char a[HS_ADDRSTRLEN], b[HS_ADDRSTRLEN];
		fprintf(truth, "{\"src\":\"%s\",\"sport\":%u,\"dst\":\"%s\",\"dport\":%u,"
			"\"ip_id\":%u,\"seq\":%u,\"tcp_flags\":%u,\"outcome\":\"%s\",\"path\":[",
			hs_addr_str(&in.key.src, a, sizeof(a)), sport, hs_addr_str(&in.key.dst, b, sizeof(b)),
			dport, in.ip_id, in.seq, flags, fate_name(r));
		for (int i = 0; i < n; i++)
			fprintf(truth, "%s\"%s\"", i ? "," : "", topo->sw[path[i]].name);
		fputs("]", truth);
		if (lost_to >= 0)
			fprintf(truth, ",\"lost_to\":\"%s\"", topo->sw[lost_to].name);
		fputs("}\n", truth);
	}

	struct pkt *p = &pkts[pkt_next % PKT_RING];
	if (p->refs > 0)		/* the ring is full: write out what is pending */
		flush_before(UINT64_MAX);
	p->len = pktw_inner(p->ip, sizeof(p->ip), &in);
	if (!p->len)
		die("cannot build a packet");

	uint64_t t = f->next + 1000 + rnd_below(500);	/* host to its ToR */
	for (int i = 0; i < n; i++) {
		struct copy c = {
			.ts = t + 3000 + rnd_below(1000),	/* mirror path to the analyzer */
			.hw_ns = t + (uint64_t)sws[path[i]].clock_off,
			.order = copy_order++,
			.pkt = (uint32_t)(pkt_next % PKT_RING),
			.sw = (uint16_t)path[i],
			.ttl = ttls[i],
		};
		heap_push(c);
		p->refs++;
		/* link, serialization and a little queueing to the next switch */
		t += 1000 + rnd_below(2000) + (rnd_below(10) == 0 ? rnd_below(20000) : 0);
	}
	pkt_next++;
	stat.packets++;

	if (r <= 0) {
		if (r == F_LOOPED)
			stat.looped++;
		else if (r == F_EXPIRED)
			stat.expired++;
		else
			stat.dropped++;
		if (++f->tries >= MAX_TRIES) {
			stat.abandoned++;
			return false;
		}
		stat.retrans++;
		f->next += RTO_NS << (f->tries - 1);
		return true;
	}
	stat.delivered++;
	if (fc)
		f->cseq += plen + ((flags & (F_SYN | F_FIN)) ? 1 : 0);
	else
		f->sseq += plen + ((flags & (F_SYN | F_FIN)) ? 1 : 0);
	f->tries = 0;
	f->step++;
	if (f->step >= f->nsteps)
		return false;
	/* half a round trip and some application time */
	f->next += 20000 + rnd_below(80000);
	return true;
}

static void new_flow(struct flow *f, uint64_t start, bool loop)
{
	memset(f, 0, sizeof(*f));
	int tries = 0;
	do {
		f->c = (int)rnd_below((uint64_t)nhosts);
		if (loop && loop_host >= 0) {
			f->s = loop_host;
		} else if (loop) {
			/* toward a host behind the looping ToR, from elsewhere */
			int cands[256], nc = 0;
			for (int i = 0; i < nhosts && nc < 256; i++)
				if (hosts[i].leaf == loop_leaf)
					cands[nc++] = i;
			f->s = cands[rnd_below((uint64_t)nc)];
		} else {
			f->s = (int)rnd_below((uint64_t)nhosts);
		}
		/* a looping host route catches only the flows planted on it */
	} while ((hosts[f->c].leaf == hosts[f->s].leaf || f->c == f->s || f->c == loop_host ||
		  (!loop && f->s == loop_host)) && ++tries < 100);
	static const uint16_t ports[] = { 80, 443, 8080, 5201, 179 };
	f->sport = (uint16_t)(32768 + rnd_below(28000));
	f->dport = ports[rnd_below(HS_ARRAY_SIZE(ports))];
	f->cseq = (uint32_t)rnd();
	f->sseq = (uint32_t)rnd();
	f->cid = (uint16_t)rnd();
	f->sid = (uint16_t)rnd();
	f->ndata = 1 + (int)rnd_below(4);
	f->nsteps = 6 + 2 * f->ndata;
	f->loop = loop;
	f->next = start;
}

static int switch_arg(const char *name, size_t len, const char *opt)
{
	char buf[HS_NAME_MAX];

	if (len == 0 || len >= sizeof(buf))
		die("%s: expected a switch name", opt);
	memcpy(buf, name, len);
	buf[len] = '\0';
	int i = hs_topo_switch_by_name(topo, buf);
	if (i < 0)
		die("%s: unknown switch '%s'", opt, buf);
	return i;
}

static void usage(FILE *fp)
{
	fputs("usage: hs-synth [--shape leafspine:S,L,H|fattree:K] [--flows N | --packets N]\n"
	      "                [--seed S] [--duration SECONDS] [--mss BYTES] [--start SECONDS]\n"
	      "                [--drop-link A-B:P]... [--loop A-B:LEAF|HOST] [--loop-flows N]\n"
	      "                [--ttl N] [--truth OUT.jsonl] -w OUT.pcap [-t OUT.topo]\n", fp);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "shape", required_argument, NULL, 's' },
		{ "flows", required_argument, NULL, 'f' },
		{ "packets", required_argument, NULL, 'p' },
		{ "seed", required_argument, NULL, 'S' },
		{ "duration", required_argument, NULL, 'd' },
		{ "mss", required_argument, NULL, 'm' },
		{ "start", required_argument, NULL, 'T' },
		{ "drop-link", required_argument, NULL, 'D' },
		{ "loop", required_argument, NULL, 'L' },
		{ "loop-flows", required_argument, NULL, 'F' },
		{ "truth", required_argument, NULL, 'R' },
		{ "ttl", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *shape = "leafspine:2,4,2", *wpath = NULL, *tpath = NULL, *loop_spec = NULL;
	const char *truth_path = NULL;
	const char *drop_specs[MAX_DROPS];
	uint64_t nflows = 0, npackets = 0, seed = 1, loop_flows = 1, start_s = 1700000000;
	double duration = 0;
	int c;

	while ((c = getopt_long(argc, argv, "w:t:h", opts, NULL)) != -1) {
		uint64_t v;
		switch (c) {
		case 's': shape = optarg; break;
		case 'f':
			if (hs_parse_uint(optarg, 100000000, &nflows) < 0 || !nflows)
				die("--flows: expected a positive number, got '%s'", optarg);
			break;
		case 'p':
			if (hs_parse_uint(optarg, 1000000000, &npackets) < 0 || !npackets)
				die("--packets: expected a positive number, got '%s'", optarg);
			break;
		case 'S':
			if (hs_parse_uint(optarg, UINT64_MAX, &seed) < 0)
				die("--seed: expected a number, got '%s'", optarg);
			break;
		case 'd': {
			char *end;
			duration = strtod(optarg, &end);
			if (*end || !(duration > 0 && duration < 1e6))
				die("--duration: expected seconds, got '%s'", optarg);
			break;
		}
		case 'm':
			if (hs_parse_uint(optarg, 1448, &v) < 0 || v < 128)
				die("--mss: expected 128 to 1448, got '%s'", optarg);
			mss = (uint32_t)v;
			break;
		case 'T':
			if (hs_parse_uint(optarg, 4000000000ULL, &start_s) < 0)
				die("--start: expected seconds since 1970, got '%s'", optarg);
			break;
		case 'D':
			if (ndrops == MAX_DROPS)
				die("--drop-link: at most %d", MAX_DROPS);
			drop_specs[ndrops++] = optarg;
			break;
		case 'L': loop_spec = optarg; break;
		case 'F':
			if (hs_parse_uint(optarg, 1000, &loop_flows) < 0)
				die("--loop-flows: expected a number, got '%s'", optarg);
			break;
		case 'R': truth_path = optarg; break;
		case 'l':
			if (hs_parse_uint(optarg, 255, &v) < 0 || v < 1)
				die("--ttl: expected 1 to 255, got '%s'", optarg);
			host_ttl = (uint8_t)v;
			break;
		case 'w': wpath = optarg; break;
		case 't': tpath = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc || !wpath) {
		usage(stderr);
		return 2;
	}
	rng_state ^= seed * 0xd1342543de82ef95ULL + 1;
	for (int i = 0; i < 4; i++)
		rnd();

	char cmdline[200] = "";
	for (int i = 1; i < argc; i++) {
		size_t n = strlen(cmdline);
		/* where the output goes is not part of what was generated */
		if (!strcmp(argv[i], "-w") || !strcmp(argv[i], "-t") || !strcmp(argv[i], "--truth")) {
			i++;
			continue;
		}
		if (!strncmp(argv[i], "-w", 2) || !strncmp(argv[i], "-t", 2) ||
		    !strncmp(argv[i], "--truth=", 8))
			continue;
		if (n + strlen(argv[i]) + 8 >= sizeof(cmdline)) {
			strcat(cmdline, " ...");
			break;
		}
		snprintf(cmdline + n, sizeof(cmdline) - n, " %s", argv[i]);
	}
	build_topology(shape, cmdline);
	char err[512];
	topo = hs_topo_parse(topo_text.text, "hs-synth", err, sizeof(err));
	if (!topo)
		die("%s", err);
	if (tpath) {
		FILE *fp = fopen(tpath, "w");
		if (!fp || fwrite(topo_text.text, 1, topo_text.len, fp) != topo_text.len ||
		    fclose(fp) != 0)
			die("cannot write '%s': %s", tpath, strerror(errno));
	}

	/* faults, named by switch */
	for (int i = 0; i < ndrops; i++) {
		const char *s = drop_specs[i], *dash = strchr(s, '-'), *colon = strrchr(s, ':');
		char *end;
		if (!dash || !colon || colon < dash)
			die("--drop-link: expected A-B:P, got '%s'", s);
		drops[i].a = switch_arg(s, (size_t)(dash - s), "--drop-link");
		drops[i].b = switch_arg(dash + 1, (size_t)(colon - dash - 1), "--drop-link");
		drops[i].p = strtod(colon + 1, &end);
		if (*end || !(drops[i].p >= 0 && drops[i].p <= 1))
			die("--drop-link: expected a probability from 0 to 1, got '%s'", colon + 1);
		if (hs_topo_link(topo, drops[i].a, drops[i].b) < 0)
			die("--drop-link: no link between '%s' and '%s'", topo->sw[drops[i].a].name,
			    topo->sw[drops[i].b].name);
	}
	if (loop_spec) {
		const char *s = loop_spec, *dash = strchr(s, '-'), *colon = strrchr(s, ':');
		if (!dash || !colon || colon < dash)
			die("--loop: expected A-B:LEAF, got '%s'", s);
		loop_a = switch_arg(s, (size_t)(dash - s), "--loop");
		loop_b = switch_arg(dash + 1, (size_t)(colon - dash - 1), "--loop");
		for (int i = 0; i < topo->nhosts; i++)
			if (strcmp(topo->hosts[i].name, colon + 1) == 0)
				loop_host = i;
		if (loop_host >= 0)
			loop_leaf = topo->hosts[loop_host].leaf;
		else
			loop_leaf = switch_arg(colon + 1, strlen(colon + 1), "--loop");
		if (hs_topo_link(topo, loop_a, loop_b) < 0)
			die("--loop: no link between '%s' and '%s'", topo->sw[loop_a].name,
			    topo->sw[loop_b].name);
		bool has_hosts = false;
		for (int i = 0; i < topo->nhosts; i++)
			has_hosts |= topo->hosts[i].leaf == loop_leaf;
		if (!has_hosts)
			die("--loop: no hosts behind '%s'", topo->sw[loop_leaf].name);
	} else {
		loop_flows = 0;
	}

	nhosts = topo->nhosts;
	hosts = hs_xcalloc((size_t)nhosts, sizeof(*hosts));
	for (int i = 0; i < nhosts; i++) {
		snprintf(hosts[i].name, sizeof(hosts[i].name), "%s", topo->hosts[i].name);
		hosts[i].addr = topo->hosts[i].addr;
		hosts[i].leaf = topo->hosts[i].leaf;
	}
	sws = hs_xcalloc((size_t)topo->nsw, sizeof(*sws));
	for (int i = 0; i < topo->nsw; i++) {
		sws[i].clock_off = (int64_t)rnd_below(400) - 200;	/* PTP-synchronized */
		sws[i].gre_seq = (uint32_t)rnd_below(1000);
	}
	analyzer = topo->analyzer;

	if (!nflows)
		nflows = npackets ? npackets / 8 + 1 : 40;
	if (duration == 0)
		duration = npackets ? fmax(1.0, (double)npackets / 500000.0) : 2.0;
	if (pktw_open(&out, wpath, DLT_EN10MB) < 0)
		die("cannot write '%s'", wpath);
	if (truth_path && !(truth = fopen(truth_path, "w")))
		die("cannot write '%s': %s", truth_path, strerror(errno));

	pkts = hs_xcalloc(PKT_RING, sizeof(*pkts));
	flows = hs_xcalloc(nflows, sizeof(*flows));
	fheap = hs_xcalloc(nflows, sizeof(*fheap));
	uint64_t t0 = start_s * HS_NS_PER_SEC, span = (uint64_t)(duration * 1e9);
	uint64_t gap = span / nflows, started = 0;

	/* flows start in order, loop flows spread among the others */
	while (npackets ? stat.packets < npackets : (started < nflows || fheap_n)) {
		uint64_t next_start = t0 + started * gap;
		bool can_start = started < nflows;
		if (can_start && (fheap_n == 0 || next_start <= flows[fheap[0]].next)) {
			uint64_t stride = loop_flows ? nflows / loop_flows : 0;
			bool loop = stride && started % stride == stride / 2 &&
				    started / stride < loop_flows;
			new_flow(&flows[started], next_start + rnd_below(gap ? gap : 1), loop);
			fheap_push(started);
			started++;
			nflows_active++;
			continue;
		}
		if (fheap_n == 0)
			break;
		size_t fi = fheap_pop();
		flush_before(flows[fi].next);
		if (send_step(&flows[fi]))
			fheap_push(fi);
		else
			nflows_active--;
	}
	flush_before(UINT64_MAX);
	pktw_close(&out);
	if (truth && fclose(truth) != 0)
		die("cannot write '%s': %s", truth_path, strerror(errno));

	fprintf(stderr,
		"hs-synth: %llu frames (%llu bytes) of %llu packets in %llu flows: "
		"%llu delivered, %llu dropped, %llu looped, %llu expired, %llu retransmitted, "
		"%llu flows abandoned\n",
		(unsigned long long)frames_written, (unsigned long long)bytes_written,
		(unsigned long long)stat.packets, (unsigned long long)started,
		(unsigned long long)stat.delivered, (unsigned long long)stat.dropped,
		(unsigned long long)stat.looped, (unsigned long long)stat.expired,
		(unsigned long long)stat.retrans,
		(unsigned long long)stat.abandoned);
	hs_topo_free(topo);
	free(topo_text.text);
	free(hosts);
	free(sws);
	free(pkts);
	free(flows);
	free(fheap);
	free(heap);
	return 0;
}
