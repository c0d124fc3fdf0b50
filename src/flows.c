/* flows.c - per-flow counters, fed one closed trace at a time
 *
 * Flows live in an array in order of first sight (so listing and history
 * writes are stable) with an open-addressing index over it. Both are sized
 * at creation; when the table is full new flows are counted, not stored.
 */
#include <stdlib.h>
#include <string.h>

#include "flows.h"

struct hs_flowtab {
	struct hs_flow *flows;
	size_t max, n;
	/* hash << 32 | flow position + 1, 0 empty: a probe passes other
	 * flows without loading them */
	uint64_t *index;
	size_t mask;
	uint64_t overflow;
	uint64_t next_id;
};

struct hs_flowtab *hs_flowtab_new(size_t max)
{
	struct hs_flowtab *ft = hs_xcalloc(1, sizeof(*ft));
	size_t n;

	if (max == 0)
		max = 65536;
	if (max > (1u << 30))
		max = 1u << 30;
	ft->max = max;
	ft->flows = hs_xcalloc_big(max, sizeof(*ft->flows));
	for (n = 16; n < max * 2; n <<= 1)
		;
	ft->index = hs_xcalloc_big(n, sizeof(*ft->index));
	ft->mask = n - 1;
	ft->next_id = 1;
	return ft;
}

void hs_flowtab_free(struct hs_flowtab *ft)
{
	if (!ft)
		return;
	hs_free_big(ft->flows, ft->max, sizeof(*ft->flows));
	hs_free_big(ft->index, ft->mask + 1, sizeof(*ft->index));
	free(ft);
}

static struct hs_flow *lookup(struct hs_flowtab *ft, const struct hs_flowkey *k, uint64_t h,
			      bool create)
{
	uint32_t tag = (uint32_t)(h >> 32);
	size_t i = (size_t)h & ft->mask;
	uint64_t e;

	for (; (e = ft->index[i]) != 0; i = (i + 1) & ft->mask) {
		if ((uint32_t)(e >> 32) != tag)
			continue;
		struct hs_flow *f = &ft->flows[(uint32_t)e - 1];
		if (hs_flowkey_eq(&f->key, k))
			return f;
	}
	if (!create)
		return NULL;
	if (ft->n >= ft->max) {
		ft->overflow++;
		return NULL;
	}
	struct hs_flow *f = &ft->flows[ft->n];
	memset(f, 0, sizeof(*f));
	f->id = ft->next_id++;
	f->key = *k;
	ft->index[i] = (uint64_t)tag << 32 | (uint32_t)++ft->n;
	return f;
}

void hs_flowtab_prefetch(const struct hs_flowtab *ft, const struct hs_soon *s, unsigned n)
{
	for (unsigned k = 0; k < n; k++) {
		uint64_t h = s[k].key_hash;
		uint32_t i = (uint32_t)(h & ft->mask);

		if (!s[k].soon) {
			__builtin_prefetch(&ft->index[i], 0);
			continue;
		}
		/* asked for earlier, the index line is in the cache: load the
		 * flow of the first entry with this tag (112 bytes on two or
		 * three lines), which a lookup finds past its home as often as
		 * a probe goes on */
		uint64_t e = hs_index_first(ft->index, (uint32_t)ft->mask, i, (uint32_t)(h >> 32));
		if (e)
			hs_prefetch_span(&ft->flows[(uint32_t)e - 1], sizeof(struct hs_flow));
	}
}

struct hs_flow *hs_flowtab_add_trace(struct hs_flowtab *ft, const struct hs_trace *t)
{
	struct hs_flow *f = lookup(ft, &t->key, t->key_hash, true);
	uint64_t first = 0, last = 0;

	if (!f)
		return NULL;
	for (unsigned i = 0; i < t->nhops; i++) {
		uint64_t ts = t->hops[i].ts_ns;
		if (i == 0 || ts < first)
			first = ts;
		if (ts > last)
			last = ts;
	}
	if (f->packets == 0 || (t->nhops && first < f->first_ns))
		f->first_ns = first;
	if (last > f->last_ns)
		f->last_ns = last;
	f->packets++;
	f->bytes += t->len;
	if (t->key.proto == 6) {
		f->syn += (t->tcp_flags & 0x02) != 0;
		f->fin += (t->tcp_flags & 0x01) != 0;
		f->rst += (t->tcp_flags & 0x04) != 0;
	}
	f->dropped += t->outcome == HS_OUT_DROPPED;
	f->looped += t->outcome == HS_OUT_LOOPED;
	f->dirty = true;
	return f;
}

size_t hs_flowtab_count(const struct hs_flowtab *ft)
{
	return ft->n;
}

size_t hs_flowtab_max(const struct hs_flowtab *ft)
{
	return ft->max;
}

uint64_t hs_flowtab_overflow(const struct hs_flowtab *ft)
{
	return ft->overflow;
}

struct hs_flow *hs_flowtab_at(struct hs_flowtab *ft, size_t i)
{
	return i < ft->n ? &ft->flows[i] : NULL;
}

void hs_flowtab_populate(struct hs_flowtab *ft)
{
	hs_populate_big(ft->index, ft->mask + 1, sizeof(*ft->index));
}

void hs_flowtab_clear(struct hs_flowtab *ft)
{
	/* an index with no flow is all zeros already: a fresh console's
	 * capture starts without touching its megabytes */
	if (ft->n)
		memset(ft->index, 0, (ft->mask + 1) * sizeof(*ft->index));
	ft->n = 0;
	ft->overflow = 0;
}
