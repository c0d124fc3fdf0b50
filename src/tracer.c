/* tracer.c - join the mirrored copies of one packet into a per-hop trace
 *
 * Open traces live in a pool allocated once. They are found through a hash
 * index of buckets, a cache line each, and kept on an intrusive list in
 * order of last activity, so closing the quiet ones walks only what it
 * closes. Hops are stored compactly while a trace is
 * open (mirror source interned to 16 bits, time as a 32-bit offset from the
 * first copy) and expanded into struct hs_trace when the trace closes, into a
 * fixed ring of closed traces. Nothing is allocated per packet.
 *
 * Identity of an original packet: inner 5-tuple, IPv4 ID, and for TCP the
 * sequence and acknowledgment numbers, flags and payload length, for
 * anything else a hash of the first L4 bytes. Where the IP ID cannot tell
 * two packets apart (IPv6 has none; many stacks send 0 with DF set), a hash
 * of the first TCP payload bytes joins it. Nothing a switch may rewrite
 * (TTL, hop limit, DSCP, ECN, checksums) is part of it.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "tracer.h"

#define NIL UINT32_MAX
#define INLINE_HOPS 7
#define EXT_HOPS (HS_TRACE_MAX_HOPS - INLINE_HOPS)
#define MSRC_MAX 16384		/* distinct (mirror address, session) pairs */
#define MSRC_INDEX_MIN 1024		/* first index: 2 KiB, in L1 for a fabric's sources */
#define IDENT_BYTES 32		/* L4 bytes hashed into an identity (TCP: options, then payload) */
#define LEAF_CACHE 4096		/* destination address -> its ToR */

/* The index of open traces: buckets of one cache line, BUCKET_ENTRIES
 * entries of 32 bits and, in the last word, how many entries homed at or
 * before the bucket were put past it when it was full. An entry is
 * tag << slot_bits | pool slot, its tag the high bits of the trace's hash
 * with the lowest of them set (so no entry is 0, which is empty); the
 * bucket is the hash's low bits. A copy's lookup, a new trace's entry and
 * a closing trace's removal each touch the one line, a bucket holding
 * eight on average with the pool full (one in some two hundred then
 * spills into the next), and nothing ever moves: the whole index is 8
 * bytes per pool slot, a quarter of what linear probing took at a
 * quarter full. */
#define BUCKET_WORDS 16
#define BUCKET_ENTRIES (BUCKET_WORDS - 1)
#define BUCKET_PASSED BUCKET_ENTRIES
#define SPILL_FAR UINT8_MAX

/* a cache line: the index is mapped at a huge page's boundary
 * (hs_xcalloc_big) */
struct bucket {
	uint32_t w[BUCKET_WORDS];
};

_Static_assert(sizeof(struct bucket) == 64, "a bucket is a cache line");

/* one mirrored copy while the trace is open: 12 bytes */
struct ohop {
	uint32_t dts;		/* capture time - first_ns, ns */
	uint32_t hw_lo;		/* low 32 bits of hw_ns */
	uint16_t src;		/* interned mirror source */
	uint8_t ttl, tos;
};

/* An open trace: 192 bytes, three cache lines from the pool's huge-page
 * boundary on. A fat tree's longest path is five switches; copies past
 * the seventh (loops) go to an extension block. Everything but the hops
 * past the first is in the first two lines: a trace of one copy (a packet
 * one switch mirrors) is opened, closed and asked for early in two, where
 * the third, for last_frame alone, cost every close a miss more. */
struct __attribute__((aligned(64))) otrace {
	uint64_t first_ns;
	uint64_t key_hash;	/* hs_flowkey_hash of its flow, from its first copy */
	uint8_t src[16], dst[16];
	uint64_t ident;		/* l4_ident(): TCP seq in the low half */
	uint32_t last_dts;	/* last activity (hs_tracer_prep.now) - first_ns */
	uint32_t prev, next;	/* activity list */
	uint32_t ext;		/* extension block + 1 for hops past INLINE_HOPS, 0 none */
	uint64_t last_frame;	/* of the copy that last moved it on the activity list */
	uint32_t len;
	uint32_t probe_id;
	uint32_t hash;		/* low 32 bits of id_hash, as in the index */
	uint16_t sport, dport;
	uint16_t ip_id;
	uint16_t hw_mask;	/* hop i has a switch timestamp */
	uint8_t af, proto, tcp_flags, flags, nhops, extra;
	uint8_t lane;		/* its index entry's in its bucket */
	uint8_t spill;		/* buckets from its home to its entry's, SPILL_FAR: that or more */
	struct ohop hops[INLINE_HOPS];
};

_Static_assert(sizeof(struct otrace) == 192, "open traces must stay small");
/* the lines of a trace of one copy */
#define OT_ONE_HOP offsetof(struct otrace, hops[1])
_Static_assert(OT_ONE_HOP <= 128, "a trace of one copy is two cache lines");
_Static_assert(_Alignof(struct otrace) <= HS_BIG_ALIGN, "the pool is a big table");

struct msrc {
	struct hs_addr addr;
	uint32_t session;
	int sw;
	uint64_t hw_last;	/* newest hw_ns seen from it, to widen hw_lo */
};

struct hs_tracer {
	struct hs_tracer_cfg cfg;
	const struct hs_topo *topo;

	struct otrace *pool;
	uint32_t pool_size;
	uint32_t free_head;	/* free slots chained through next, NIL: none */
	uint32_t pool_used;	/* slots [pool_used, pool_size) never used yet */
	uint32_t nfree;
	/* the entries' tags let a lookup skip other traces without touching
	 * the pool (a cache miss per entry otherwise) */
	struct bucket *index;
	uint32_t index_mask;	/* buckets - 1 */
	uint32_t slot_bits;	/* an entry's low bits: its pool slot */
	uint32_t lru_head, lru_tail;	/* oldest activity first */

	struct ohop (*ext)[EXT_HOPS];
	uint32_t ext_size;
	uint32_t *ext_free;
	uint32_t next_ext_free;

	struct msrc *msrc;	/* msrc[0] is "unknown" */
	uint32_t nmsrc;
	uint16_t *msrc_index;	/* msrc_mask + 1 entries, at most half full */
	uint32_t msrc_mask;

	struct hs_trace *ring;
	size_t ring_size;
	size_t ring_pos;	/* where the next closed trace goes: last_id % ring_size,
				 * kept rather than divided for at every close */
	uint64_t last_id;	/* id of the newest closed trace */
	uint64_t first_id;	/* oldest id still valid in the ring */

	struct hs_tracer_stats st;
	uint64_t hops_dropped;	/* extension blocks exhausted */

	struct leaf_entry {
		struct hs_addr addr;
		int leaf;
	} *leaf_cache;		/* af 0: empty; cleared when the topology changes */
};

static inline uint64_t load64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint32_t load32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* The addresses are read where the decoder put them, IPv4 as 32 bits: a
 * zero-padded copy on the stack, read back wider than it was written,
 * stalled every copy on store forwarding.
 * IPv4, every copy's case, packs its fields into three words, multiplies
 * each by its own odd constant (three multiplies at once) and mixes once;
 * two full mixes one after the other were most of hs_tracer_prepare. */
static uint64_t id_hash(const struct hs_pkt *p, uint64_t ident)
{
	uint8_t af = p->key.src.af;
	const uint8_t *src = p->key.src.a, *dst = p->key.dst.a;

	if (af == 4) {
		uint64_t h = ((uint64_t)load32(src) << 32 | load32(dst)) * 0x9e3779b97f4a7c15ULL ^
			     ((uint64_t)ident << 32 | (uint32_t)p->key.sport << 16 | p->key.dport) *
				     0xc2b2ae3d27d4eb4fULL ^
			     ((ident & ~0xffffffffULL) | (uint32_t)p->ip_id << 16 |
			      (uint32_t)p->key.proto << 8 | af) *
				     0x165667b19e3779f9ULL;
		h ^= h >> 32;
		h *= 0xbf58476d1ce4e5b9ULL;
		return h ^ h >> 29;
	}
	uint64_t h = ((uint64_t)p->key.sport << 48) ^ ((uint64_t)p->key.dport << 32) ^
		     ((uint64_t)p->key.proto << 24) ^ ((uint64_t)af << 16);

	h = hs_mix64(h ^ ident * 0xc2b2ae3d27d4eb4fULL);
	h = hs_mix64(h ^ load64(src) ^ (load64(dst) * 0x9e3779b97f4a7c15ULL));
	return hs_mix64(h ^ load64(src + 8) ^ (load64(dst + 8) * 0x9e3779b97f4a7c15ULL));
}

/* p's addresses are the open trace's (which are zero past their length) */
static inline __attribute__((always_inline)) bool same_addrs(const struct otrace *ot,
							     const struct hs_pkt *p)
{
	if (ot->af == 4)
		return load32(ot->src) == load32(p->key.src.a) &&
		       load32(ot->dst) == load32(p->key.dst.a);
	return memcmp(ot->src, p->key.src.a, 16) == 0 && memcmp(ot->dst, p->key.dst.a, 16) == 0;
}

/* p is a copy of the packet ot traces (ip_id: 0 for IPv6); inlined in
 * both places of the per-copy path */
static inline __attribute__((always_inline)) bool same_packet(const struct otrace *ot,
							     const struct hs_pkt *p,
							     uint64_t ident, uint16_t ip_id)
{
	return ot->ident == ident && ot->ip_id == ip_id && ot->sport == p->key.sport &&
	       ot->dport == p->key.dport && ot->proto == p->key.proto &&
	       ot->af == p->key.src.af && same_addrs(ot, p);
}

#define FNV_BASIS 2166136261u

/* FNV-1a of h over the first IDENT_BYTES of b */
static uint32_t head_hash(uint32_t h, const uint8_t *b, uint32_t n)
{
	if (n > IDENT_BYTES)
		n = IDENT_BYTES;
	for (uint32_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 16777619u;
	}
	return h;
}

/* What tells a packet from the others of its flow, beyond the IP ID.
 * TCP: the sequence number in the low half (hs_trace.seq); the ack number,
 * flags and payload length in the high half, added so that for one ack
 * number no two (length, flags) pairs meet; and when the IP ID says
 * nothing (IPv6, or IPv4 ID 0) a hash of the TCP options (timestamps, SACK
 * blocks: duplicate ACKs differ there) and of the first payload bytes, so
 * that a pure ACK, the data segment and the FIN sharing a sequence number
 * stay three packets. Anything else: a hash of its first L4 bytes (ICMP id and
 * sequence, UDP payload) with the L4 length, ICMP type and code. */
static uint64_t l4_ident(const struct hs_pkt *p)
{
	const uint8_t *b = NULL;
	uint32_t n = 0;

	if (p->key.proto == 6) {
		if (!(p->have & HS_HAVE_TCP))
			return 0;
		uint32_t hi = p->ack + ((uint32_t)p->l4_len << 8 | p->tcp_flags) * 0x9e3779b1u;
		if ((p->key.src.af != 4 || p->ip_id == 0) && p->l4_payload) {
			uint32_t opts = p->tcp_hlen > 20 ? p->tcp_hlen - 20u : 0;
			hi ^= head_hash(head_hash(FNV_BASIS, p->l4_payload - opts, opts),
					p->l4_payload, p->l4_payload_caplen);
		}
		return (uint64_t)hi << 32 | p->seq;
	}
	if (p->l4_payload && p->l4_payload_caplen > 0) {
		b = p->l4_payload;
		n = p->l4_payload_caplen;
	} else if (p->l3 && p->l3_caplen > 0) {
		uint32_t hl = 0;
		if (p->key.src.af == 4 && p->l3_caplen >= 20)
			hl = (uint32_t)(p->l3[0] & 0x0f) * 4;
		else if (p->key.src.af == 6)
			hl = 40;
		if (hl >= 20 && hl < p->l3_caplen) {
			b = p->l3 + hl;
			n = p->l3_caplen - hl;
		}
	}
	return head_hash(FNV_BASIS, b, n) ^ (uint32_t)p->l4_len << 8 ^ p->icmp_type ^
	       (uint32_t)p->icmp_code << 24;
}

/* ---- mirror sources --------------------------------------------------- */

/* once per copy: one multiply for IPv4 (two full mixes cost more than
 * the rest of interning), inlined (a call of its own was a fifth of it) */
static inline __attribute__((always_inline)) uint32_t msrc_hash(const struct hs_addr *a,
								 uint32_t session)
{
	uint64_t h = ((uint64_t)session << 40) ^ ((uint64_t)a->af << 32);

	/* IPv4 reads only its 4 bytes: they are all that is set, and a wide
	 * load of a key just stored in narrow pieces stalls on forwarding */
	if (a->af == 6)
		h ^= load64(a->a) ^ hs_mix64(load64(a->a + 8));
	else
		h ^= load32(a->a);
	return (uint32_t)((h * 0x9e3779b97f4a7c15ULL) >> 32);
}

/* Interning runs once per copy: the index starts small enough to stay in
 * the first-level cache and doubles when half full */
static void msrc_grow(struct hs_tracer *tr)
{
	uint32_t size = (tr->msrc_mask + 1) * 2;

	free(tr->msrc_index);
	tr->msrc_index = hs_xcalloc(size, sizeof(uint16_t));
	tr->msrc_mask = size - 1;
	for (uint32_t id = 1; id <= tr->nmsrc; id++) {
		const struct msrc *m = &tr->msrc[id];
		uint32_t i = msrc_hash(&m->addr, m->session) & tr->msrc_mask;
		while (tr->msrc_index[i])
			i = (i + 1) & tr->msrc_mask;
		tr->msrc_index[i] = (uint16_t)id;
	}
}

/* hash: msrc_hash(a, session), computed ahead by hs_tracer_prepare.
 * Inlined into the per-copy path: hs_tracer_adopt calls it too */
static inline __attribute__((always_inline)) uint16_t msrc_intern(struct hs_tracer *tr, const struct hs_addr *a, uint32_t session,
			    uint32_t hash)
{
	uint32_t i;

	if (a->af != 4 && a->af != 6)
		return 0;
	i = hash & tr->msrc_mask;
	for (;; i = (i + 1) & tr->msrc_mask) {
		uint16_t id = tr->msrc_index[i];
		if (id == 0)
			break;
		struct msrc *m = &tr->msrc[id];
		if (m->session == session && hs_addr_eq(&m->addr, a))
			return id;
	}
	if (tr->nmsrc >= tr->st.sources_max) {
		tr->st.sources_full++;	/* counted and shown, never silent */
		return 0;
	}
	/* a new source: kept zero past its length */
	struct hs_addr key = { .af = a->af };
	memcpy(key.a, a->a, a->af == 4 ? 4 : 16);
	if ((tr->nmsrc + 1) * 2 > tr->msrc_mask + 1) {
		msrc_grow(tr);
		for (i = hash & tr->msrc_mask; tr->msrc_index[i];
		     i = (i + 1) & tr->msrc_mask)
			;
	}
	uint16_t id = (uint16_t)++tr->nmsrc;
	tr->st.sources = tr->nmsrc;
	tr->msrc[id].addr = key;
	tr->msrc[id].session = session;
	tr->msrc[id].sw = hs_topo_switch_by_addr(tr->topo, &key);
	tr->msrc[id].hw_last = 0;
	tr->msrc_index[i] = id;
	return id;
}

/* ---- the pool, its index and the activity list --------------------------- */

/* inlined: every copy of an open trace moves it to the tail */
static inline __attribute__((always_inline)) void lru_unlink(struct hs_tracer *tr, uint32_t i)
{
	struct otrace *ot = &tr->pool[i];

	if (ot->prev != NIL)
		tr->pool[ot->prev].next = ot->next;
	else
		tr->lru_head = ot->next;
	if (ot->next != NIL)
		tr->pool[ot->next].prev = ot->prev;
	else
		tr->lru_tail = ot->prev;
	ot->prev = ot->next = NIL;
}

static void lru_append(struct hs_tracer *tr, uint32_t i)
{
	struct otrace *ot = &tr->pool[i];

	ot->next = NIL;
	ot->prev = tr->lru_tail;
	if (tr->lru_tail != NIL)
		tr->pool[tr->lru_tail].next = i;
	else
		tr->lru_head = i;
	tr->lru_tail = i;
}

/* what the entries of traces of this hash have above their slot */
static inline uint32_t entry_tag(const struct hs_tracer *tr, uint32_t hash)
{
	return (hash | 1u << tr->slot_bits) & ~((1u << tr->slot_bits) - 1);
}

static inline struct bucket *home_of(const struct hs_tracer *tr, uint32_t hash)
{
	return &tr->index[hash & tr->index_mask];
}

/* the entries of b whose bits under mask are want, as bits 0 to
 * BUCKET_ENTRIES - 1: a branch per bucket, not per entry */
static inline __attribute__((always_inline)) uint32_t bucket_match(const struct bucket *b,
								   uint32_t mask, uint32_t want)
{
#ifdef __SSE2__
	__m128i m = _mm_set1_epi32((int)mask), w = _mm_set1_epi32((int)want);
	__m128i q0 = _mm_cmpeq_epi32(_mm_and_si128(_mm_loadu_si128((const __m128i *)b->w), m), w);
	__m128i q1 = _mm_cmpeq_epi32(_mm_and_si128(_mm_loadu_si128((const __m128i *)b->w + 1), m), w);
	__m128i q2 = _mm_cmpeq_epi32(_mm_and_si128(_mm_loadu_si128((const __m128i *)b->w + 2), m), w);
	__m128i q3 = _mm_cmpeq_epi32(_mm_and_si128(_mm_loadu_si128((const __m128i *)b->w + 3), m), w);
	uint32_t bits = (uint32_t)_mm_movemask_epi8(
		_mm_packs_epi16(_mm_packs_epi32(q0, q1), _mm_packs_epi32(q2, q3)));
#else
	uint32_t bits = 0;
	for (unsigned i = 0; i < BUCKET_ENTRIES; i++)
		bits |= (uint32_t)((b->w[i] & mask) == want) << i;
#endif
	return bits & ((1u << BUCKET_ENTRIES) - 1);
}

static inline struct bucket *next_bucket(const struct hs_tracer *tr, const struct bucket *b)
{
	return &tr->index[(uint32_t)(b - tr->index + 1) & tr->index_mask];
}

/* a new trace's entry: in its home bucket, else the first after it with
 * room, each full one passed counting it (there is always room: the
 * buckets hold nearly twice the pool); where it went is kept in the trace */
static void index_insert(struct hs_tracer *tr, struct otrace *ot, uint32_t slot)
{
	struct bucket *b = home_of(tr, ot->hash);
	uint32_t room, spill = 0;

	while (!(room = bucket_match(b, UINT32_MAX, 0))) {
		b->w[BUCKET_PASSED]++;
		b = next_bucket(tr, b);
		spill++;
	}
	ot->lane = (uint8_t)__builtin_ctz(room);
	ot->spill = spill < SPILL_FAR ? (uint8_t)spill : SPILL_FAR;
	b->w[ot->lane] = entry_tag(tr, ot->hash) | slot;
}

/* the open trace of p (of this hash, identity and IP ID), NIL if none */
static inline __attribute__((always_inline)) uint32_t index_find(const struct hs_tracer *tr,
								 uint32_t hash,
								 const struct hs_pkt *p,
								 uint64_t ident, uint16_t ip_id)
{
	uint32_t tag = entry_tag(tr, hash), low = (1u << tr->slot_bits) - 1;
	const struct bucket *b = home_of(tr, hash);

	for (;;) {
		for (uint32_t m = bucket_match(b, ~low, tag); m; m &= m - 1) {
			uint32_t slot = b->w[__builtin_ctz(m)] & low;
			if (same_packet(&tr->pool[slot], p, ident, ip_id))
				return slot;
		}
		if (!b->w[BUCKET_PASSED])
			return NIL;
		b = next_bucket(tr, b);
	}
}

/* A closing trace's entry: where the trace says, so that in its home
 * bucket, nearly always, it is a store, which waits for no cache miss
 * (reading the bucket to find it missed at every close of a burst) */
static void index_remove(struct hs_tracer *tr, const struct otrace *ot)
{
	struct bucket *b = home_of(tr, ot->hash);

	for (unsigned i = 0; i < ot->spill; i++) {
		/* it spilled: the buckets it passed count one less */
		if (i == SPILL_FAR - 1) {
			/* that far, where is not known: found by its value */
			uint32_t at, e = entry_tag(tr, ot->hash) | (uint32_t)(ot - tr->pool);
			while (!(at = bucket_match(b, UINT32_MAX, e))) {
				b->w[BUCKET_PASSED]--;
				b = next_bucket(tr, b);
			}
			b->w[__builtin_ctz(at)] = 0;
			return;
		}
		b->w[BUCKET_PASSED]--;
		b = next_bucket(tr, b);
	}
	b->w[ot->lane] = 0;
}

static struct ohop *hop_at(struct hs_tracer *tr, struct otrace *ot, unsigned i)
{
	if (i < INLINE_HOPS)
		return &ot->hops[i];
	return &tr->ext[ot->ext - 1][i - INLINE_HOPS];
}

/* TTL descending; at one TTL (switches that do not decrement it, an
 * IP-in-IP probe's hops) the switches' timestamps when both have one: the
 * time a copy reached the analyzer says nothing about the path's order */
static int hop_cmp(const struct hs_hop *a, const struct hs_hop *b)
{
	if (a->ttl != b->ttl)
		return a->ttl > b->ttl ? -1 : 1;
	if (a->hw_ns && b->hw_ns && a->hw_ns != b->hw_ns)
		return a->hw_ns < b->hw_ns ? -1 : 1;
	if (a->ts_ns != b->ts_ns)
		return a->ts_ns < b->ts_ns ? -1 : 1;
	return 0;
}

/* inlined where every trace closes (close_slot): left to itself, the
 * compiler stopped inlining it there once close_slot grew */
static inline __attribute__((always_inline)) void classify(struct hs_trace *t,
							   const struct hs_topo *topo, int leaf);

/* hs_topo_leaf_for scans hosts and subnets: remember recent answers */
static inline __attribute__((always_inline)) uint32_t leaf_slot(const struct hs_addr *a)
{
	return msrc_hash(a, 0) & (LEAF_CACHE - 1);
}

static inline __attribute__((always_inline)) int leaf_of(struct hs_tracer *tr,
							 const struct hs_addr *a)
{
	struct leaf_entry *e = &tr->leaf_cache[leaf_slot(a)];

	if (e->addr.af && hs_addr_eq(&e->addr, a))
		return e->leaf;
	memset(&e->addr, 0, sizeof(e->addr));
	e->addr.af = a->af;
	memcpy(e->addr.a, a->a, a->af == 4 ? 4 : 16);
	e->leaf = hs_topo_leaf_for(tr->topo, a);
	return e->leaf;
}

static bool ttl_gap(const struct hs_trace *t)
{
	for (unsigned i = 1; i < t->nhops; i++)
		if (t->hops[i - 1].ttl > t->hops[i].ttl + 1)
			return true;
	return false;
}

/* HS_TF_PARTIAL, judged on a classified trace (its hops' switches known):
 * copies missing between two hops, or a first copy not from the source's
 * ToR. The ToR is looked up only when that is left to judge: in the
 * tracer's leaf cache (tr), else in the topology. */
static inline __attribute__((always_inline)) bool judge_partial(const struct hs_trace *t,
								 struct hs_tracer *tr,
								 const struct hs_topo *topo)
{
	if (ttl_gap(t))
		return true;
	if (!topo || t->nhops == 0 || t->hops[0].sw < 0)
		return false;
	int leaf = tr ? leaf_of(tr, &t->key.src) : hs_topo_leaf_for(topo, &t->key.src);
	return leaf >= 0 && t->hops[0].sw != leaf;
}

bool hs_trace_partial(const struct hs_trace *t, const struct hs_topo *topo)
{
	return judge_partial(t, NULL, topo);
}

static uint64_t widen_hw(uint64_t last, uint32_t lo)
{
	uint64_t v = (last & ~0xffffffffULL) | lo;

	if (v > last && v - last > 0x80000000ULL && v >= 0x100000000ULL)
		v -= 0x100000000ULL;
	else if (v < last && last - v > 0x80000000ULL)
		v += 0x100000000ULL;
	return v;
}

/* Traces close from the head of the activity list, and each close misses
 * the cache twice (the trace, its index entry) unless asked for early: ask
 * for the index entry of the next trace to close and for the one after it */
/* the flow of an open trace. Its addresses are zero past their length,
 * so all 16 bytes are copied whatever the family: two moves, where a
 * length of 4 or 16 chosen at run time cost a dozen instructions each */
static void ot_key(const struct otrace *ot, struct hs_flowkey *k)
{
	memset(k, 0, sizeof(*k));
	k->src.af = k->dst.af = ot->af;
	memcpy(k->src.a, ot->src, sizeof(k->src.a));
	memcpy(k->dst.a, ot->dst, sizeof(k->dst.a));
	k->sport = ot->sport;
	k->dport = ot->dport;
	k->proto = ot->proto;
}

/* A close touches the closing trace, its index entry, a ring slot, the
 * leaf cache and (through on_soon) the flow table's and the rate
 * estimator's entries for its flow: all long gone from the near caches.
 * So each close starts the next ones along the activity list on their
 * way, a stage per close, each stage reading only what the one before
 * loaded a close earlier:
 *   the third to close: its lines;
 *   the second: its index entry, and its flow's index entries (on_soon,
 *     soon false);
 *   the next: its ring slot, its destination's leaf cache entry, and its
 *     flow's records (on_soon, soon true).
 * on_soon is told of both flows in one call. The third's third line, which
 * only its hops past the first are in, is asked for a close later, as the
 * second, once its hop count is known.
 * Always inline: it runs for every closed trace, and is mostly prefetches. */
static inline __attribute__((always_inline)) void prefetch_head(struct hs_tracer *tr)
{
	if (tr->lru_head == NIL)
		return;
	const struct otrace *o1 = &tr->pool[tr->lru_head];
	size_t used = offsetof(struct hs_trace, hops) + (size_t)o1->nhops * sizeof(struct hs_hop);
	if (used > sizeof(struct hs_trace))
		used = sizeof(struct hs_trace);
	hs_prefetch_span(&tr->ring[tr->ring_pos], used);
	if (tr->topo) {
		struct hs_addr dst = { .af = o1->af };
		memcpy(dst.a, o1->dst, sizeof(dst.a));
		__builtin_prefetch(&tr->leaf_cache[leaf_slot(&dst)], 0);
	}
	struct hs_soon s[2] = { { o1->key_hash, o1->proto, true } };
	if (o1->next == NIL) {
		if (tr->cfg.on_soon)
			tr->cfg.on_soon(tr->cfg.arg, s, 1);
		return;
	}
	const struct otrace *o2 = &tr->pool[o1->next];
	__builtin_prefetch(home_of(tr, o2->hash), 1);
	if (o2->nhops > 1)	/* its third line: hops past the first */
		__builtin_prefetch((const char *)o2 + 128, 1);
	s[1] = (struct hs_soon){ o2->key_hash, o2->proto, false };
	if (tr->cfg.on_soon)
		tr->cfg.on_soon(tr->cfg.arg, s, 2);
	if (o2->next == NIL)
		return;
	hs_prefetch_span(&tr->pool[o2->next], OT_ONE_HOP);
}

/* the ring's slot of the next closed trace, numbered last_id */
static struct hs_trace *ring_take(struct hs_tracer *tr)
{
	struct hs_trace *t = &tr->ring[tr->ring_pos];

	++tr->last_id;
	if (++tr->ring_pos == tr->ring_size)
		tr->ring_pos = 0;
	if (tr->last_id - tr->first_id >= tr->ring_size)
		tr->first_id = tr->last_id - tr->ring_size + 1;
	return t;
}

/* expand, classify, hand over and free one open trace */
static void close_slot(struct hs_tracer *tr, uint32_t slot, uint8_t extra_flags)
{
	struct otrace *ot = &tr->pool[slot];
	struct hs_trace *t = ring_take(tr);

	memset(t, 0, offsetof(struct hs_trace, hops));
	t->id = tr->last_id;
	t->last_frame = ot->last_frame;
	ot_key(ot, &t->key);
	t->key_hash = ot->key_hash;
	t->ip_id = ot->ip_id;
	t->seq = ot->proto == 6 ? (uint32_t)ot->ident : 0;
	t->tcp_flags = ot->tcp_flags;
	t->len = ot->len;
	t->flags = ot->flags | extra_flags;
	t->probe_id = ot->probe_id;
	t->nhops = ot->nhops;
	t->extra_hops = ot->extra;
	/* Each hop is written in place, field by field, and sorted after: built
	 * on the stack and copied whole, every hop stalled on reading back as
	 * one wide load what had just been stored in narrow pieces. Copies
	 * mostly arrive in path order, so the sort rarely moves anything. */
	bool sorted = true;
	for (unsigned i = 0; i < ot->nhops; i++) {
		const struct ohop *oh = hop_at(tr, ot, i);
		const struct msrc *m = &tr->msrc[oh->src];
		struct hs_hop *h = &t->hops[i];

		h->sw = m->sw;
		h->addr = m->addr;
		h->session = m->session;
		h->ts_ns = ot->first_ns + oh->dts;
		/* a switch time is widened by its own source's clock: a copy
		 * from a source not kept (msrc 0) has none */
		h->hw_ns = (ot->hw_mask >> i) & 1 && oh->src ? widen_hw(m->hw_last, oh->hw_lo) : 0;
		h->ttl = oh->ttl;
		h->tos = oh->tos;
		if (i > 0 && hop_cmp(h, h - 1) < 0)
			sorted = false;
	}
	/* insertion sort: TTL descending, then time */
	for (unsigned i = 1; !sorted && i < ot->nhops; i++) {
		struct hs_hop h = t->hops[i];
		unsigned j = i;
		while (j > 0 && hop_cmp(&h, &t->hops[j - 1]) < 0) {
			t->hops[j] = t->hops[j - 1];
			j--;
		}
		t->hops[j] = h;
	}
	classify(t, tr->topo, tr->topo ? leaf_of(tr, &t->key.dst) : -1);
	if (tr->cfg.partial && judge_partial(t, tr, tr->topo))
		t->flags |= HS_TF_PARTIAL;

	if (ot->ext) {
		tr->ext_free[tr->next_ext_free++] = ot->ext - 1;
		ot->ext = 0;
	}
	index_remove(tr, ot);
	lru_unlink(tr, slot);
	prefetch_head(tr);
	ot->nhops = 0;		/* free: no candidate for hs_tracer_add_prepared */
	ot->next = tr->free_head;
	tr->free_head = slot;
	tr->nfree++;
	tr->st.open--;
	tr->st.closed++;
	tr->st.by_outcome[t->outcome]++;
	if (extra_flags & HS_TF_EVICTED)
		tr->st.evicted++;
	if (tr->cfg.on_close)
		tr->cfg.on_close(tr->cfg.arg, t);
}

/* ---- public ------------------------------------------------------------ */

struct hs_tracer *hs_tracer_new(const struct hs_tracer_cfg *cfg)
{
	struct hs_tracer *tr = hs_xcalloc(1, sizeof(*tr));
	size_t n;

	tr->cfg = *cfg;
	if (!tr->cfg.timeout_ns)
		tr->cfg.timeout_ns = 100 * 1000 * 1000ULL;
	if (!tr->cfg.max_open)
		tr->cfg.max_open = 65536;
	if (tr->cfg.max_open > (1u << 30))
		tr->cfg.max_open = 1u << 30;
	if (!tr->cfg.ring)
		tr->cfg.ring = 8192;
	tr->topo = cfg->topo;

	tr->pool_size = (uint32_t)tr->cfg.max_open;
	tr->pool = hs_xcalloc_big(tr->pool_size, sizeof(*tr->pool));
	tr->free_head = NIL;
	tr->nfree = tr->pool_size;
	/* a bucket for every eight slots or more: at most about half full */
	for (n = 1; n * 8 < tr->pool_size; n <<= 1)
		;
	tr->index = hs_xcalloc_big(n, sizeof(*tr->index));
	tr->index_mask = (uint32_t)(n - 1);
	for (tr->slot_bits = 1; (1u << tr->slot_bits) < tr->pool_size; tr->slot_bits++)
		;
	tr->lru_head = tr->lru_tail = NIL;

	tr->ext_size = tr->pool_size / 8 + 16;
	tr->ext = hs_xcalloc(tr->ext_size, sizeof(*tr->ext));
	tr->ext_free = hs_xcalloc(tr->ext_size, sizeof(uint32_t));
	for (uint32_t i = 0; i < tr->ext_size; i++)
		tr->ext_free[i] = tr->ext_size - 1 - i;
	tr->next_ext_free = tr->ext_size;

	tr->st.sources_max = cfg->max_sources && cfg->max_sources < MSRC_MAX - 1 ?
				     cfg->max_sources : MSRC_MAX - 1;
	tr->msrc = hs_xcalloc(MSRC_MAX, sizeof(*tr->msrc));
	tr->msrc[0].sw = -1;
	tr->msrc_index = hs_xcalloc(MSRC_INDEX_MIN, sizeof(uint16_t));
	tr->msrc_mask = MSRC_INDEX_MIN - 1;

	tr->leaf_cache = hs_xcalloc(LEAF_CACHE, sizeof(*tr->leaf_cache));
	tr->ring_size = tr->cfg.ring;
	tr->ring = hs_xcalloc_big(tr->ring_size, sizeof(*tr->ring));
	tr->first_id = 1;
	return tr;
}

void hs_tracer_free(struct hs_tracer *tr)
{
	if (!tr)
		return;
	hs_free_big(tr->pool, tr->pool_size, sizeof(*tr->pool));
	hs_free_big(tr->index, (size_t)tr->index_mask + 1, sizeof(*tr->index));
	free(tr->ext);
	free(tr->ext_free);
	free(tr->msrc);
	free(tr->msrc_index);
	hs_free_big(tr->ring, tr->ring_size, sizeof(*tr->ring));
	free(tr->leaf_cache);
	free(tr);
}

void hs_tracer_populate(struct hs_tracer *tr)
{
	hs_populate_big(tr->pool, tr->pool_size, sizeof(*tr->pool));
	hs_populate_big(tr->index, (size_t)tr->index_mask + 1, sizeof(*tr->index));
	hs_populate_big(tr->ring, tr->ring_size, sizeof(*tr->ring));
}

void hs_tracer_populate_ring(struct hs_tracer *tr)
{
	hs_populate_big(tr->ring, tr->ring_size, sizeof(*tr->ring));
}

struct hs_trace *hs_tracer_ring(struct hs_tracer *tr)
{
	return tr->ring;
}

void hs_tracer_set_topo(struct hs_tracer *tr, const struct hs_topo *topo)
{
	tr->topo = topo;
	tr->cfg.topo = topo;
	memset(tr->leaf_cache, 0, LEAF_CACHE * sizeof(*tr->leaf_cache));
	for (uint32_t i = 1; i <= tr->nmsrc; i++)
		tr->msrc[i].sw = hs_topo_switch_by_addr(topo, &tr->msrc[i].addr);
}

void hs_tracer_set_timeout(struct hs_tracer *tr, uint64_t timeout_ns)
{
	tr->cfg.timeout_ns = timeout_ns;
}

void hs_tracer_set_partial(struct hs_tracer *tr, bool partial)
{
	tr->cfg.partial = partial;
}

static uint32_t dts_of(uint64_t ts, uint64_t first)
{
	uint64_t d = ts - first;

	return d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
}

/* a copy older than the first one seen: move the trace's origin back */
static void rebase(struct hs_tracer *tr, struct otrace *ot, uint64_t ts)
{
	uint64_t shift = ot->first_ns - ts;

	for (unsigned i = 0; i < ot->nhops; i++) {
		struct ohop *h = hop_at(tr, ot, i);
		h->dts = dts_of(h->dts + shift, 0);
	}
	ot->last_dts = dts_of(ot->last_dts + shift, 0);
	ot->first_ns = ts;
}

void hs_tracer_add(struct hs_tracer *tr, const struct hs_pkt *p, uint8_t flags)
{
	hs_tracer_add_probe(tr, p, flags, 0);
}

void hs_tracer_add_probe(struct hs_tracer *tr, const struct hs_pkt *p, uint8_t flags,
			 uint32_t probe_id)
{
	struct hs_tracer_prep prep;

	hs_tracer_prepare(tr, p, &prep);
	hs_tracer_add_prepared(tr, p, flags, probe_id, &prep);
}

static bool traceable(const struct hs_pkt *p)
{
	uint8_t af = p->key.src.af;

	return (p->have & HS_HAVE_IP) && (af == 4 || af == 6) && p->key.dst.af == af;
}

/* the session (ERSPAN's, or a VXLAN/Geneve mirror's VNI) a copy's mirror
 * source is interned with */
static uint32_t copy_session(const struct hs_pkt *p)
{
	return (p->have & HS_HAVE_SESSION) ? p->session : 0;
}

void hs_tracer_prepare(struct hs_tracer *tr, const struct hs_pkt *p, struct hs_tracer_prep *prep)
{
	prep->hash = 0;
	prep->ident = 0;
	prep->msrc_hash = 0;
	prep->cand = 0;
	prep->frame = 0;
	prep->now = p->ts_ns;
	prep->traceable = traceable(p);
	if (!prep->traceable)
		return;
	/* the mirror source's index entry now, its record in hs_tracer_prefetch:
	 * the open traces' traffic keeps evicting both from the near caches */
	prep->msrc_hash = msrc_hash(&p->mirror_src, copy_session(p));
	__builtin_prefetch(&tr->msrc_index[prep->msrc_hash & tr->msrc_mask], 0);
	prep->ident = l4_ident(p);
	prep->hash = (uint32_t)id_hash(p, prep->ident);
	__builtin_prefetch(home_of(tr, prep->hash), 0);
}

void hs_tracer_prefetch(const struct hs_tracer *tr, struct hs_tracer_prep *prep)
{
	uint32_t low = (1u << tr->slot_bits) - 1;
	uint16_t id = tr->msrc_index[prep->msrc_hash & tr->msrc_mask];

	if (id)
		__builtin_prefetch(&tr->msrc[id], 1);

	/* the first open trace with this hash's tag in its home bucket:
	 * almost always the one */
	const struct bucket *b = home_of(tr, prep->hash);
	uint32_t m = bucket_match(b, ~low, entry_tag(tr, prep->hash));
	if (m) {
		uint32_t slot = b->w[__builtin_ctz(m)] & low;
		hs_prefetch_span(&tr->pool[slot], sizeof(struct otrace));
		prep->cand = slot + 1;
	}
}

void hs_tracer_add_prepared(struct hs_tracer *tr, const struct hs_pkt *p, uint8_t flags,
			    uint32_t probe_id, const struct hs_tracer_prep *prep)
{
	uint8_t af = p->key.src.af;

	if (!prep->traceable)
		return;
	uint16_t ip_id = af == 4 ? p->ip_id : 0;
	uint64_t ident = prep->ident;
	uint32_t hash = prep->hash;
	uint32_t slot = NIL;
	struct otrace *ot;

	tr->st.copies++;
	/* The trace hs_tracer_prefetch found, if it is still open (a freed slot
	 * has no hops) and still this packet's (the same packet, so the same
	 * hash): the index is not searched again.
	 * An open trace is the only one of its packet, so that is the one the
	 * search would find. */
	if (prep->cand) {
		ot = &tr->pool[prep->cand - 1];
		if (ot->nhops && same_packet(ot, p, ident, ip_id))
			slot = prep->cand - 1;
	}
	if (slot == NIL)
		slot = index_find(tr, hash, p, ident, ip_id);

	uint16_t msrc = msrc_intern(tr, &p->mirror_src, copy_session(p), prep->msrc_hash);
	if (p->have & HS_HAVE_HWNS && msrc) {
		struct msrc *m = &tr->msrc[msrc];
		if (p->hw_ns > m->hw_last || m->hw_last - p->hw_ns > 0x80000000ULL)
			m->hw_last = p->hw_ns;
	}

	if (slot == NIL) {
		if (tr->nfree == 0)
			close_slot(tr, tr->lru_head, HS_TF_EVICTED);
		if (tr->free_head != NIL) {
			slot = tr->free_head;
			tr->free_head = tr->pool[slot].next;
		} else {
			slot = tr->pool_used++;
		}
		tr->nfree--;
		ot = &tr->pool[slot];
		memset(ot, 0, offsetof(struct otrace, hops));
		ot->first_ns = p->ts_ns;
		/* zeroed above past an IPv4 address; each copy of a length
		 * fixed at build time is one move */
		if (af == 4) {
			memcpy(ot->src, p->key.src.a, 4);
			memcpy(ot->dst, p->key.dst.a, 4);
		} else {
			memcpy(ot->src, p->key.src.a, 16);
			memcpy(ot->dst, p->key.dst.a, 16);
		}
		ot->ident = ident;
		ot->ip_id = ip_id;
		ot->sport = p->key.sport;
		ot->dport = p->key.dport;
		ot->proto = p->key.proto;
		ot->af = af;
		ot->hash = hash;
		ot->key_hash = hs_flowkey_hash(&p->key);
		ot->len = p->len;
		ot->tcp_flags = (p->have & HS_HAVE_TCP) ? p->tcp_flags : 0;
		index_insert(tr, ot, slot);
		lru_append(tr, slot);
		tr->st.open++;
	} else {
		ot = &tr->pool[slot];
		/* A second copy from the same place with the same TTL is a
		 * duplicate. The earlier switch timestamp of the two is the
		 * packet's arrival: a switch that decapsulates an IP-in-IP probe
		 * mirrors it again as it forwards the inner packet, later. The
		 * copies of sources not kept (msrc 0) cannot be told apart, so
		 * none is the duplicate of another. */
		for (unsigned k = 0; msrc && k < ot->nhops; k++) {
			struct ohop *oh = hop_at(tr, ot, k);
			if (oh->src == msrc && oh->ttl == p->ttl) {
				tr->st.duplicates++;
				if ((p->have & HS_HAVE_HWNS) &&
				    (!(ot->hw_mask >> k & 1) ||
				     (int32_t)((uint32_t)p->hw_ns - oh->hw_lo) < 0)) {
					oh->hw_lo = (uint32_t)p->hw_ns;
					ot->hw_mask |= (uint16_t)(1u << k);
				}
				return;
			}
		}
		if (p->ts_ns < ot->first_ns)
			rebase(tr, ot, p->ts_ns);
		if (tr->lru_tail != slot) {
			lru_unlink(tr, slot);
			lru_append(tr, slot);
		}
	}
	ot->last_frame = prep->frame;

	ot->flags |= flags;
	if (HS_TOS_IS_DEBUG(p->tos))
		ot->flags |= HS_TF_DEBUG;
	if (probe_id) {
		ot->flags |= HS_TF_PROBE;
		ot->probe_id = probe_id;
	}
	uint32_t dts = dts_of(prep->now, ot->first_ns);
	if (dts > ot->last_dts)
		ot->last_dts = dts;

	if (ot->nhops >= HS_TRACE_MAX_HOPS) {
		/* full (a loop): keep the copies nearest the source, the highest
		 * TTLs, whatever order the switches' copies arrived in */
		unsigned low = 0;
		for (unsigned k = 1; k < ot->nhops; k++)
			if (hop_at(tr, ot, k)->ttl < hop_at(tr, ot, low)->ttl)
				low = k;
		if (ot->extra < UINT8_MAX)
			ot->extra++;
		if (p->ttl <= hop_at(tr, ot, low)->ttl)
			return;
		struct ohop *oh = hop_at(tr, ot, low);
		oh->dts = dts;
		oh->hw_lo = (uint32_t)p->hw_ns;
		oh->src = msrc;
		oh->ttl = p->ttl;
		oh->tos = p->tos;
		ot->hw_mask &= (uint16_t)~(1u << low);
		if (p->have & HS_HAVE_HWNS)
			ot->hw_mask |= (uint16_t)(1u << low);
		return;
	}
	if (ot->nhops == INLINE_HOPS && !ot->ext) {
		if (tr->next_ext_free == 0) {
			tr->hops_dropped++;
			if (ot->extra < UINT8_MAX)
				ot->extra++;
			return;
		}
		ot->ext = tr->ext_free[--tr->next_ext_free] + 1;
	}
	struct ohop *oh = hop_at(tr, ot, ot->nhops);
	oh->dts = dts;
	oh->hw_lo = (uint32_t)p->hw_ns;
	oh->src = msrc;
	oh->ttl = p->ttl;
	oh->tos = p->tos;
	if (p->have & HS_HAVE_HWNS)
		ot->hw_mask |= (uint16_t)(1u << ot->nhops);
	ot->nhops++;
}

/* the oldest open trace has had no copy for more than quiet_ns */
static inline bool head_quiet_for(const struct hs_tracer *tr, uint64_t now_ns, uint64_t quiet_ns)
{
	const struct otrace *ot = &tr->pool[tr->lru_head];
	uint64_t last = ot->first_ns + ot->last_dts;

	return now_ns >= last && now_ns - last > quiet_ns;
}

static bool head_quiet(const struct hs_tracer *tr, uint64_t now_ns)
{
	return head_quiet_for(tr, now_ns, tr->cfg.timeout_ns);
}

/* a quiet trace whose taker has no room waits open this long at most past
 * its timeout: the console's own analyses wait no longer for the history */
#define QUIET_WAIT_NS 1000000000ull

static bool head_overdue(const struct hs_tracer *tr, uint64_t now_ns)
{
	return head_quiet_for(tr, now_ns, tr->cfg.timeout_ns + QUIET_WAIT_NS);
}

static __attribute__((noinline)) void close_quiet(struct hs_tracer *tr, uint64_t now_ns)
{
	do {
		if (tr->cfg.may_close && !tr->cfg.may_close(tr->cfg.arg) &&
		    !head_overdue(tr, now_ns))
			return;
		close_slot(tr, tr->lru_head, 0);
	} while (tr->lru_head != NIL && head_quiet(tr, now_ns));
}

/* called for every copy, and nearly always with nothing to close: the
 * test inlined, the closing out of line */
void hs_tracer_advance(struct hs_tracer *tr, uint64_t now_ns)
{
	if (tr->lru_head != NIL && head_quiet(tr, now_ns))
		close_quiet(tr, now_ns);
}

uint64_t hs_tracer_oldest(const struct hs_tracer *tr)
{
	return tr->lru_head == NIL ? UINT64_MAX : tr->pool[tr->lru_head].last_frame;
}

void hs_tracer_close_all(struct hs_tracer *tr)
{
	while (tr->lru_head != NIL)
		close_slot(tr, tr->lru_head, 0);
}

void hs_tracer_adopt(struct hs_tracer *tr, const struct hs_trace *src)
{
	struct hs_trace *t = ring_take(tr);

	memcpy(t, src, offsetof(struct hs_trace, hops) + src->nhops * sizeof(src->hops[0]));
	t->id = tr->last_id;
	tr->st.closed++;
	tr->st.by_outcome[t->outcome]++;
	if (t->flags & HS_TF_EVICTED)
		tr->st.evicted++;
	if (tr->cfg.on_close)
		tr->cfg.on_close(tr->cfg.arg, t);
}

void hs_tracer_learn_sources(struct hs_tracer *tr, const struct hs_tracer *from, uint64_t first,
			     uint64_t last)
{
	for (uint64_t id = first + 1; id <= last; id++) {
		const struct msrc *m = &from->msrc[id];
		if (tr->nmsrc >= tr->st.sources_max)
			return;	/* full: the workers count the copies they could not keep */
		msrc_intern(tr, &m->addr, m->session, msrc_hash(&m->addr, m->session));
	}
}

void hs_tracer_adopt_soon(struct hs_tracer *tr, const struct hs_trace *t, unsigned ahead)
{
	if (ahead)
		hs_prefetch_span(&tr->ring[(tr->ring_pos + ahead) % tr->ring_size],
				 offsetof(struct hs_trace, hops) + t->nhops * sizeof(t->hops[0]));
	if (tr->cfg.on_soon)
		tr->cfg.on_soon(tr->cfg.arg,
				&(struct hs_soon){ t->key_hash, t->key.proto, ahead != 0 }, 1);
}

void hs_tracer_hide(struct hs_tracer *tr, const struct hs_trace *t)
{
	struct hs_trace *r;

	if (t->id == 0 || t->id < tr->first_id || t->id > tr->last_id)
		return;
	r = &tr->ring[(t->id - 1) % tr->ring_size];
	if (t != r || (r->flags & HS_TF_HIDDEN))
		return;
	/* its id stays taken: the history may hold it under that number */
	r->flags |= HS_TF_HIDDEN;
	tr->st.closed--;
	tr->st.by_outcome[t->outcome]--;
	if (t->flags & HS_TF_EVICTED)
		tr->st.evicted--;
}

void hs_tracer_hide_if(struct hs_tracer *tr, bool (*pred)(void *arg, const struct hs_trace *t),
		       void *arg)
{
	for (uint64_t id = tr->last_id; id >= tr->first_id && id > 0; id--) {
		const struct hs_trace *t = &tr->ring[(id - 1) % tr->ring_size];
		if (!(t->flags & HS_TF_HIDDEN) && pred(arg, t))
			hs_tracer_hide(tr, t);
	}
}

void hs_tracer_get_stats(const struct hs_tracer *tr, struct hs_tracer_stats *st)
{
	*st = tr->st;
}

const struct hs_trace *hs_tracer_find(const struct hs_tracer *tr, uint64_t id)
{
	if (id == 0 || id < tr->first_id || id > tr->last_id)
		return NULL;
	const struct hs_trace *t = &tr->ring[(id - 1) % tr->ring_size];
	return t->flags & HS_TF_HIDDEN ? NULL : t;
}

size_t hs_tracer_recent(const struct hs_tracer *tr, const struct hs_trace **out, size_t max)
{
	size_t n = 0;

	for (uint64_t id = tr->last_id; id >= tr->first_id && id > 0 && n < max; id--)
		if (!(tr->ring[(id - 1) % tr->ring_size].flags & HS_TF_HIDDEN))
			out[n++] = &tr->ring[(id - 1) % tr->ring_size];
	return n;
}

void hs_tracer_clear(struct hs_tracer *tr)
{
	tr->first_id = tr->last_id + 1;
}

/* ---- outcome ------------------------------------------------------------ */

void hs_trace_classify(struct hs_trace *t, const struct hs_topo *topo)
{
	classify(t, topo, topo ? hs_topo_leaf_for(topo, &t->key.dst) : -1);
}

static inline __attribute__((always_inline)) void classify(struct hs_trace *t,
							   const struct hs_topo *topo, int leaf)
{
	t->n_next = 0;
	t->last_sw = -1;
	if (t->nhops == 0) {
		t->outcome = HS_OUT_UNKNOWN;
		return;
	}
	if (topo) {
		for (unsigned i = 0; i < t->nhops; i++)
			if (t->hops[i].sw < 0 || t->hops[i].sw >= topo->nsw)
				t->hops[i].sw = hs_topo_switch_by_addr(topo, &t->hops[i].addr);
	}
	const struct hs_hop *last = &t->hops[t->nhops - 1];
	t->last_sw = topo ? last->sw : -1;
	/* The same switch twice, at a lower TTL the second time, is a loop
	 * with or without a topology: by topology switch, else by mirror
	 * address. Hops are in TTL order, so a later hop's TTL is never higher.
	 * A hop with no address is a copy from a mirror source the tracer
	 * could not keep (its table full): it is no switch in particular, so
	 * it repeats none, and as the last hop it says neither where the
	 * packet died nor that it arrived. The last hop has none after it
	 * to repeat: not read (a trace just expanded into its ring slot
	 * waited there for the first hop's address, written across two
	 * cache lines, to reach the cache before it could be read back). */
	for (unsigned i = 0; i + 1 < t->nhops; i++) {
		if (t->hops[i].addr.af == 0)
			continue;
		for (unsigned j = i + 1; j < t->nhops; j++) {
			const struct hs_hop *a = &t->hops[i], *b = &t->hops[j];
			bool same = topo && a->sw >= 0 ? a->sw == b->sw
				    : (!topo || b->sw < 0) && hs_addr_eq(&a->addr, &b->addr);
			if (same && a->ttl > b->ttl) {
				t->outcome = HS_OUT_LOOPED;
				return;
			}
		}
	}
	if (!topo || leaf < 0 || last->addr.af == 0) {
		t->outcome = HS_OUT_UNKNOWN;
		return;
	}
	if (last->sw == leaf) {
		t->outcome = HS_OUT_DELIVERED;
		return;
	}
	t->outcome = HS_OUT_DROPPED;
	if (last->sw >= 0)
		t->n_next = hs_topo_next_hops(topo, last->sw, leaf, t->expected_next,
					      HS_TRACE_MAX_NEXT);
}

const char *hs_outcome_name(int outcome)
{
	static const char *const names[HS_OUT__COUNT] = {
		[HS_OUT_OPEN] = "open",
		[HS_OUT_DELIVERED] = "delivered",
		[HS_OUT_DROPPED] = "dropped",
		[HS_OUT_LOOPED] = "looped",
		[HS_OUT_UNKNOWN] = "unknown",
	};

	if (outcome < 0 || outcome >= HS_OUT__COUNT)
		return "?";
	return names[outcome];
}

const char *hs_hop_name(const struct hs_topo *topo, const struct hs_hop *h, char *buf, size_t len)
{
	if (topo && h->sw >= 0 && h->sw < topo->nsw && len > 0) {
		/* without printf: every stored trace names its last hop */
		size_t n = strnlen(topo->sw[h->sw].name, len - 1);
		memcpy(buf, topo->sw[h->sw].name, n);
		buf[n] = '\0';
		return buf;
	}
	return hs_addr_str(&h->addr, buf, len);
}

int64_t hs_hop_delta(const struct hs_hop *a, const struct hs_hop *b)
{
	if (a->hw_ns && b->hw_ns)
		return (int64_t)(b->hw_ns - a->hw_ns);
	return (int64_t)(b->ts_ns - a->ts_ns);
}

/* a switch timestamp on the capture's clock: a copy leaves the switch after
 * it was stamped and reaches the analyzer soon after */
static bool hw_is_wall(const struct hs_hop *h)
{
	return h->hw_ns && h->hw_ns <= h->ts_ns && h->ts_ns - h->hw_ns < HS_HW_WALL_SKEW;
}

bool hs_trace_switch_clock(const struct hs_trace *t)
{
	for (unsigned i = 0; i < t->nhops; i++)
		if (!hw_is_wall(&t->hops[i]))
			return false;
	return t->nhops > 0;
}

uint64_t hs_hop_time(const struct hs_trace *t, unsigned i)
{
	return hs_trace_switch_clock(t) ? t->hops[i].hw_ns : t->hops[i].ts_ns;
}

uint64_t hs_trace_time(const struct hs_trace *t)
{
	return t->nhops ? hs_hop_time(t, 0) : 0;
}

int hs_trace_cmp_newest(const struct hs_trace *a, const struct hs_trace *b)
{
	uint64_t ta = hs_trace_time(a), tb = hs_trace_time(b);

	if (ta != tb)
		return ta > tb ? -1 : 1;
	return a->id == b->id ? 0 : a->id > b->id ? -1 : 1;
}

bool hs_hop_trusted(const struct hs_trace *t, unsigned i)
{
	return i == 0 || i >= t->nhops || hs_hop_delta(&t->hops[i - 1], &t->hops[i]) >= 0;
}
