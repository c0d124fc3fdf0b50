/* store_row.c - what every engine's history writes alike: a trace's row
 * and its hop list, and the mirror sources its hops name
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_int.h"

/* A trace's hop list, the JSON of schema 9, is written by hand: it is
 * built for every stored trace, and printf costs more than the row's insert.
 * A list has some thirty numbers, most of one or two digits (a source, a
 * TTL, a ToS, a session), which are written at once; a longer one is
 * counted first and written two digits a step from its end, in place. */
char *hs_put_u64(char *q, uint64_t v)
{
	static const char pairs[] =
		"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
		"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
		"8081828384858687888990919293949596979899";
	char *d;

	if (v < 10) {
		*q = (char)('0' + v);
		return q + 1;
	}
	if (v < 100) {
		memcpy(q, pairs + 2 * v, 2);
		return q + 2;
	}
	/* its digits: log10 from log2 (1233 / 4096 is about log10(2)), one
	 * less below the power of ten that guess names */
	static const uint64_t pow10[20] = {
		1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL,
		100000000ULL, 1000000000ULL, 10000000000ULL, 100000000000ULL,
		1000000000000ULL, 10000000000000ULL, 100000000000000ULL,
		1000000000000000ULL, 10000000000000000ULL, 100000000000000000ULL,
		1000000000000000000ULL, 10000000000000000000ULL,
	};
	unsigned lg = (unsigned)(64 - __builtin_clzll(v)) * 1233 >> 12;
	size_t n = lg + 1 - (v < pow10[lg]);
	d = q + n;
	while (v >= 100) {
		d -= 2;
		memcpy(d, pairs + 2 * (v % 100), 2);
		v /= 100;
	}
	if (v >= 10)
		memcpy(d - 2, pairs + 2 * v, 2);
	else
		d[-1] = (char)('0' + v);
	return q + n;
}

_Static_assert(sizeof(((struct hs_switch *)0)->name) <= HS_NAME_MAX,
	       "a switch's name fits a mirror source's");

static struct hs_source *source_slot(const struct hs_sources *c, const struct hs_addr *a,
				     const char *name)
{
	for (uint32_t i = hs_addr_hash(a) & c->mask;; i = (i + 1) & c->mask) {
		struct hs_source *e = &c->slot[i];
		if (!e->id || (hs_addr_eq(&e->addr, a) &&
			       (name ? e->named && strcmp(e->name, name) == 0 : !e->named)))
			return e;
	}
}

int64_t hs_sources_get(const struct hs_sources *c, const struct hs_addr *a, const char *name)
{
	return c->slot ? source_slot(c, a, name)->id : 0;
}

void hs_sources_put(struct hs_sources *c, const struct hs_addr *a, const char *name, int64_t id)
{
	struct hs_source *e;

	if (2 * (c->n + 1) > (c->slot ? c->mask + 1 : 0)) {
		struct hs_source *old = c->slot;
		uint32_t n = old ? c->mask + 1 : 0;

		c->mask = n ? 2 * n - 1 : 63;
		c->slot = hs_xcalloc(c->mask + 1, sizeof(*c->slot));
		for (uint32_t i = 0; i < n; i++)
			if (old[i].id)
				*source_slot(c, &old[i].addr, old[i].named ? old[i].name : NULL) =
					old[i];
		free(old);
	}
	e = source_slot(c, a, name);
	if (!e->id)
		c->n++;
	e->addr = *a;
	e->named = name != NULL;
	if (name)
		snprintf(e->name, sizeof(e->name), "%s", name);
	e->id = id;
}

void hs_sources_clear(struct hs_sources *c)
{
	c->n = 0;
	if (c->slot)
		memset(c->slot, 0, (c->mask + 1) * sizeof(*c->slot));
}

void hs_sources_free(struct hs_sources *c)
{
	free(c->slot);
	memset(c, 0, sizeof(*c));
}

/* the hop list of the first n hops of t; its length, -1 on error */
static int hop_list(char *buf, const struct hs_trace *t, unsigned n, uint64_t first,
		    uint64_t first_hw, const struct hs_topo *topo, const struct hs_sources *known,
		    int64_t (*source)(void *arg, const struct hs_addr *a, const char *name),
		    void *arg)
{
	char *q = buf;

	*q++ = '[';
	for (unsigned i = 0; i < n; i++) {
		const struct hs_hop *h = &t->hops[i];
		bool named = topo && h->sw >= 0 && h->sw < topo->nsw;
		const char *name = named ? topo->sw[h->sw].name : NULL;
		int64_t id = hs_sources_get(known, &h->addr, name);
		if (!id)
			id = source(arg, &h->addr, name);
		if (id < 0)
			return -1;
		if (i)
			*q++ = ',';
		*q++ = '[';
		q = hs_put_u64(q, (uint64_t)id);
		*q++ = ',';
		q = hs_put_u64(q, h->ts_ns - first);
		*q++ = ',';
		if (h->hw_ns)
			q = hs_put_u64(q, h->hw_ns - first_hw);
		else
			q = memcpy(q, "null", 4) + 4;
		*q++ = ',';
		q = hs_put_u64(q, h->ttl);
		*q++ = ',';
		q = hs_put_u64(q, h->tos);
		*q++ = ',';
		q = hs_put_u64(q, h->session);
		*q++ = ']';
	}
	*q++ = ']';
	return (int)(q - buf);
}

int hs_store_row_fill(struct hs_store_row *r, int64_t session, const struct hs_trace *t,
		      const struct hs_topo *topo, const struct hs_sources *known,
		      int64_t (*source)(void *arg, const struct hs_addr *a, const char *name),
		      void *arg)
{
	uint64_t first = 0, last = 0, first_hw = 0;
	unsigned n = t->nhops > HS_TRACE_MAX_HOPS ? HS_TRACE_MAX_HOPS : t->nhops;

	for (unsigned i = 0; i < n; i++) {
		uint64_t ts = t->hops[i].ts_ns, hw = t->hops[i].hw_ns;
		if (i == 0 || ts < first)
			first = ts;
		if (ts > last)
			last = ts;
		if (hw && (!first_hw || hw < first_hw))
			first_hw = hw;
	}
	if ((r->hops_len = hop_list(r->hops, t, n, first, first_hw, topo, known, source, arg)) < 0)
		return -1;
	r->next[0] = '\0';
	for (int i = 0; topo && i < t->n_next && i < HS_TRACE_MAX_NEXT; i++) {
		int sw = t->expected_next[i];
		if (sw < 0 || sw >= topo->nsw)
			continue;
		size_t len = strlen(r->next);
		snprintf(r->next + len, sizeof(r->next) - len, "%s%s", len ? "|" : "",
			 topo->sw[sw].name);
	}
	r->session = session;
	r->id = t->id;
	hs_addr_str(&t->key.src, r->src, sizeof(r->src));
	hs_addr_str(&t->key.dst, r->dst, sizeof(r->dst));
	r->proto = t->key.proto;
	r->sport = t->key.sport;
	r->dport = t->key.dport;
	r->ip_id = t->ip_id;
	r->seq = t->seq;
	r->tcp_flags = t->tcp_flags;
	r->len = t->len;
	r->have_ts = t->nhops > 0;
	r->first = first;
	r->last = last;
	r->have_hw = first_hw != 0;
	r->first_hw = first_hw;
	r->outcome = hs_outcome_name(t->outcome);
	/* the last hop's switch name, else its address */
	if (t->nhops)
		hs_hop_name(topo, &t->hops[t->nhops - 1], r->last_sw, sizeof(r->last_sw));
	else
		r->last_sw[0] = '\0';
	r->nhops = t->nhops;
	r->flags = t->flags & ~HS_TF_PARTIAL;
	r->have_probe = (t->flags & HS_TF_PROBE) != 0;
	r->probe_id = t->probe_id;
	return 0;
}

const char *hs_store_reason(const char *msg, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = strchr(msg, '\''); p; p = strchr(p + 1, '\''))
		if (strncmp(p + 1, name, n) == 0 && strncmp(p + 1 + n, "': ", 3) == 0)
			return p + n + 4;
	return msg;
}

void hs_prune_add(struct hs_prune *res, int kind, uint64_t n)
{
	switch (kind) {
	case HS_PRUNE_FLOWS: res->flows += n; break;
	case HS_PRUNE_PROBES: res->probes += n; break;
	case HS_PRUNE_OTHER: res->other += n; break;
	case HS_PRUNE_SESSIONS: res->sessions += n; break;
	default: break;
	}
}
