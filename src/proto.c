/* proto.c - the attach protocol's frames (proto.h) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hs.h"
#include "proto.h"
#include "tracer.h"

static const char *const names[] = {
	[HS_FR_HELLO] = "hello", [HS_FR_LINE] = "line", [HS_FR_OUT] = "output",
	[HS_FR_ERR] = "error output", [HS_FR_DONE] = "done", [HS_FR_INTR] = "interrupt",
	[HS_FR_BYE] = "bye", [HS_FR_AUTH] = "auth", [HS_FR_WATCH] = "watch",
	[HS_FR_UNWATCH] = "unwatch", [HS_FR_TRACE] = "trace", [HS_FR_EVENT] = "event",
	[HS_FR_STATUS] = "status", [HS_FR_TOPO] = "topology", [HS_FR_NAMES] = "names",
	[HS_FR_LOAD] = "load",
};

const char *hs_frame_name(uint8_t type)
{
	return type < HS_ARRAY_SIZE(names) && names[type] ? names[type] : "?";
}

int hs_frame_header(uint8_t hdr[HS_PROTO_HDR], uint8_t type, size_t len)
{
	if (len > HS_PROTO_MAX - 1)
		return -1;
	uint32_t n = (uint32_t)len + 1;
	hdr[0] = (uint8_t)(n >> 24);
	hdr[1] = (uint8_t)(n >> 16);
	hdr[2] = (uint8_t)(n >> 8);
	hdr[3] = (uint8_t)n;
	hdr[4] = type;
	return 0;
}

void hs_proto_rd_init(struct hs_proto_rd *r)
{
	memset(r, 0, sizeof(*r));
}

void hs_proto_rd_free(struct hs_proto_rd *r)
{
	free(r->buf);
	hs_proto_rd_init(r);
}

void hs_proto_rd_feed(struct hs_proto_rd *r, const void *data, size_t n)
{
	if (r->bad || n == 0)
		return;
	/* what was taken already goes first: the buffer holds one frame and
	 * what follows it, never the whole stream */
	if (r->off) {
		memmove(r->buf, r->buf + r->off, r->len - r->off);
		r->len -= r->off;
		r->off = 0;
	}
	if (r->len + n > r->cap) {
		size_t cap = r->cap ? r->cap : 4096;
		while (cap < r->len + n)
			cap *= 2;
		uint8_t *nb = realloc(r->buf, cap);
		if (!nb)
			abort();
		r->buf = nb;
		r->cap = cap;
	}
	memcpy(r->buf + r->len, data, n);
	r->len += n;
}

int hs_proto_rd_next(struct hs_proto_rd *r, struct hs_frame *f, char *err, size_t errlen)
{
	size_t avail = r->len - r->off;
	const uint8_t *p = r->buf + r->off;
	uint32_t n;

	if (r->bad)
		return hs_errf(err, errlen, "a malformed frame was read before");
	if (avail < 4)
		return 0;
	n = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
	if (n == 0 || n > HS_PROTO_MAX) {
		r->bad = true;
		return hs_errf(err, errlen, "a frame of %u bytes (1 to %u)", n, HS_PROTO_MAX);
	}
	if (avail < 4 + (size_t)n) {
		/* room for it now, rather than by doubling as it comes */
		if (r->off + 4 + (size_t)n > r->cap) {
			uint8_t *nb = realloc(r->buf, r->off + 4 + (size_t)n);
			if (!nb)
				abort();
			r->buf = nb;
			r->cap = r->off + 4 + (size_t)n;
		}
		return 0;
	}
	if (p[4] < HS_FR_HELLO || p[4] > HS_FR_LAST) {
		r->bad = true;
		return hs_errf(err, errlen, "a frame of unknown type %u", p[4]);
	}
	f->type = p[4];
	f->data = p + 5;
	f->len = n - 1;
	r->off += 4 + (size_t)n;
	return 1;
}

size_t hs_hello_make(uint8_t *buf, size_t len, uint8_t flags, const char *version)
{
	size_t v = strlen(version);

	if (len < 2)
		return 0;
	if (v > len - 2)
		v = len - 2;
	buf[0] = HS_PROTO_VERSION;
	buf[1] = flags;
	memcpy(buf + 2, version, v);
	return 2 + v;
}

int hs_hello_parse(const struct hs_frame *f, uint8_t *proto, uint8_t *flags, char *version,
		   size_t vlen)
{
	size_t n;

	if (f->type != HS_FR_HELLO || f->len < 2 || vlen == 0)
		return -1;
	n = f->len - 2;
	for (size_t i = 0; i < n; i++)
		if (f->data[2 + i] < 0x20 || f->data[2 + i] > 0x7e)
			return -1;
	*proto = f->data[0];
	*flags = f->data[1];
	if (n >= vlen)
		n = vlen - 1;
	memcpy(version, f->data + 2, n);
	version[n] = '\0';
	return 0;
}

/* ---- the feed: fixed fields, big-endian ---------------------------------------------- */

struct wr {
	uint8_t *p;
	size_t n;
};

static void put(struct wr *w, uint64_t v, int bytes)
{
	for (int i = bytes - 1; i >= 0; i--)
		w->p[w->n++] = (uint8_t)(v >> (8 * i));
}

static void put_addr(struct wr *w, const struct hs_addr *a)
{
	w->p[w->n++] = a->af;
	memcpy(w->p + w->n, a->a, sizeof(a->a));
	w->n += sizeof(a->a);
}

struct rd {
	const uint8_t *p;
	size_t n, off;
	bool bad;
};

static uint64_t get(struct rd *r, int bytes)
{
	uint64_t v = 0;

	if (r->bad || r->n - r->off < (size_t)bytes) {
		r->bad = true;
		return 0;
	}
	for (int i = 0; i < bytes; i++)
		v = v << 8 | r->p[r->off++];
	return v;
}

static void get_addr(struct rd *r, struct hs_addr *a)
{
	a->af = (uint8_t)get(r, 1);
	if (a->af != 0 && a->af != 4 && a->af != 6)	/* hs_addr's families */
		r->bad = true;
	if (r->bad || r->n - r->off < sizeof(a->a)) {
		r->bad = true;
		return;
	}
	memcpy(a->a, r->p + r->off, sizeof(a->a));
	r->off += sizeof(a->a);
}

/* a switch index: -1 unknown, else below nsw */
static int get_sw(struct rd *r, int nsw)
{
	int32_t v = (int32_t)(uint32_t)get(r, 4);

	if (v < -1)
		r->bad = true;
	return v >= nsw ? -1 : v;
}

size_t hs_feed_trace_pack(uint8_t *buf, const struct hs_trace *t, const char *analyzer)
{
	struct wr w = { buf, 0 };
	int nn = t->n_next < 0 ? 0 : t->n_next > HS_TRACE_MAX_NEXT ? HS_TRACE_MAX_NEXT : t->n_next;
	unsigned nh = t->nhops > HS_TRACE_MAX_HOPS ? HS_TRACE_MAX_HOPS : t->nhops;

	put(&w, t->id, 8);
	put_addr(&w, &t->key.src);
	put_addr(&w, &t->key.dst);
	put(&w, t->key.sport, 2);
	put(&w, t->key.dport, 2);
	put(&w, t->key.proto, 1);
	put(&w, t->ip_id, 2);
	put(&w, t->seq, 4);
	put(&w, t->tcp_flags, 1);
	put(&w, t->len, 4);
	put(&w, t->outcome, 1);
	put(&w, t->flags, 1);
	put(&w, t->probe_id, 4);
	put(&w, (uint32_t)t->last_sw, 4);
	put(&w, (uint64_t)nn, 1);
	for (int i = 0; i < nn; i++)
		put(&w, (uint32_t)t->expected_next[i], 4);
	put(&w, t->extra_hops, 2);
	put(&w, nh, 1);
	for (unsigned i = 0; i < nh; i++) {
		const struct hs_hop *h = &t->hops[i];
		put(&w, (uint32_t)h->sw, 4);
		put_addr(&w, &h->addr);
		put(&w, h->ts_ns, 8);
		put(&w, h->hw_ns, 8);
		put(&w, h->ttl, 1);
		put(&w, h->tos, 1);
		put(&w, h->session, 4);
	}
	if (analyzer) {
		size_t k = strnlen(analyzer, HS_FEED_ANALYZER_MAX - 1);
		put(&w, k, 1);
		memcpy(w.p + w.n, analyzer, k);
		w.n += k;
	}
	return w.n;
}

int hs_feed_trace_unpack(const uint8_t *p, size_t n, int nsw, struct hs_trace *t,
			 char *analyzer, size_t alen)
{
	struct rd r = { p, n, 0, false };
	unsigned nn, nh;

	memset(t, 0, sizeof(*t));
	if (analyzer && alen)
		analyzer[0] = '\0';
	t->id = get(&r, 8);
	get_addr(&r, &t->key.src);
	get_addr(&r, &t->key.dst);
	t->key.sport = (uint16_t)get(&r, 2);
	t->key.dport = (uint16_t)get(&r, 2);
	t->key.proto = (uint8_t)get(&r, 1);
	t->ip_id = (uint16_t)get(&r, 2);
	t->seq = (uint32_t)get(&r, 4);
	t->tcp_flags = (uint8_t)get(&r, 1);
	t->len = (uint32_t)get(&r, 4);
	t->outcome = (uint8_t)get(&r, 1);
	t->flags = (uint8_t)get(&r, 1);
	t->probe_id = (uint32_t)get(&r, 4);
	t->last_sw = get_sw(&r, nsw);
	nn = (unsigned)get(&r, 1);
	if (nn > HS_TRACE_MAX_NEXT || t->outcome >= HS_OUT__COUNT)
		return -1;
	t->n_next = (int)nn;
	for (unsigned i = 0; i < nn; i++)
		t->expected_next[i] = get_sw(&r, nsw);
	t->extra_hops = (uint16_t)get(&r, 2);
	nh = (unsigned)get(&r, 1);
	if (nh > HS_TRACE_MAX_HOPS)
		return -1;
	t->nhops = (uint16_t)nh;
	for (unsigned i = 0; i < nh; i++) {
		struct hs_hop *h = &t->hops[i];
		h->sw = get_sw(&r, nsw);
		get_addr(&r, &h->addr);
		h->ts_ns = get(&r, 8);
		h->hw_ns = get(&r, 8);
		h->ttl = (uint8_t)get(&r, 1);
		h->tos = (uint8_t)get(&r, 1);
		h->session = (uint32_t)get(&r, 4);
	}
	if (analyzer && !r.bad && r.off < n) {
		size_t k = (size_t)get(&r, 1);
		if (k >= alen || k >= HS_FEED_ANALYZER_MAX || r.n - r.off != k)
			return -1;
		for (size_t i = 0; i < k; i++) {
			if (p[r.off + i] <= ' ' || p[r.off + i] > '~')
				return -1;	/* names are text */
			analyzer[i] = (char)p[r.off + i];
		}
		analyzer[k] = '\0';
		r.off += k;
	}
	if (r.bad || r.off != n)
		return -1;
	t->key_hash = hs_flowkey_hash(&t->key);
	return 0;
}

size_t hs_feed_status_pack(uint8_t *buf, const struct hs_feed_status *s)
{
	struct wr w = { buf, 0 };
	size_t len = strnlen(s->source, sizeof(s->source) - 1);

	put(&w, s->flags, 1);
	put(&w, s->packets, 8);
	put(&w, s->kernel_drops, 8);
	put(&w, s->decode_errors, 8);
	put(&w, s->not_ip, 8);
	put(&w, s->open, 8);
	put(&w, s->stored, 8);
	put(&w, s->unstored, 8);
	put(&w, s->not_shown, 8);
	put(&w, (uint64_t)s->session, 8);
	memcpy(w.p + w.n, s->source, len);
	return w.n + len;
}

int hs_feed_status_unpack(const uint8_t *p, size_t n, struct hs_feed_status *s)
{
	struct rd r = { p, n, 0, false };
	size_t len;

	memset(s, 0, sizeof(*s));
	s->flags = (uint8_t)get(&r, 1);
	s->packets = get(&r, 8);
	s->kernel_drops = get(&r, 8);
	s->decode_errors = get(&r, 8);
	s->not_ip = get(&r, 8);
	s->open = get(&r, 8);
	s->stored = get(&r, 8);
	s->unstored = get(&r, 8);
	s->not_shown = get(&r, 8);
	s->session = (int64_t)get(&r, 8);
	if (r.bad)
		return -1;
	len = n - r.off;
	if (len >= sizeof(s->source))
		return -1;
	for (size_t i = 0; i < len; i++)
		if (p[r.off + i] < 0x20 || p[r.off + i] > 0x7e)
			return -1;
	memcpy(s->source, p + r.off, len);
	s->source[len] = '\0';
	return 0;
}

/* ---- names for TAB --------------------------------------------------------------------- */

static bool is_text(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] < 0x20 || p[i] > 0x7e)
			return false;
	return true;
}

size_t hs_names_ask_pack(uint8_t *buf, uint32_t seq, bool stored, const char *word)
{
	struct wr w = { buf, 0 };
	size_t len = strnlen(word, HS_NAMES_WORD_MAX);

	put(&w, seq, 4);
	put(&w, stored, 1);
	memcpy(buf + w.n, word, len);
	return w.n + len;
}

int hs_names_ask_unpack(const uint8_t *p, size_t n, uint32_t *seq, bool *stored, char *word,
			size_t wlen)
{
	struct rd r = { p, n, 0, false };
	uint64_t kind;
	size_t len;

	*seq = (uint32_t)get(&r, 4);
	kind = get(&r, 1);
	if (r.bad || kind > 1)
		return -1;
	len = n - r.off;
	if (len > HS_NAMES_WORD_MAX || len >= wlen || !is_text(p + r.off, len))
		return -1;
	*stored = kind == 1;
	memcpy(word, p + r.off, len);
	word[len] = '\0';
	return 0;
}

size_t hs_names_pack(uint8_t *buf, size_t len, uint32_t seq, char *const *list, int n)
{
	struct wr w = { buf, 0 };

	if (len < 4)
		return 0;
	put(&w, seq, 4);
	for (int i = 0; i < n; i++) {
		size_t k = strlen(list[i]);
		if (k == 0 || k >= HS_NAMES_ITEM_MAX || w.n + k + 1 > len ||
		    !is_text((const uint8_t *)list[i], k))
			continue;
		memcpy(buf + w.n, list[i], k);
		w.n += k;
		buf[w.n++] = '\n';
	}
	return w.n;
}

int hs_names_unpack(const uint8_t *p, size_t n, uint32_t *seq,
		    void (*add)(void *arg, const char *name), void *arg)
{
	struct rd r = { p, n, 0, false };
	char name[HS_NAMES_ITEM_MAX];

	*seq = (uint32_t)get(&r, 4);
	if (r.bad)
		return -1;
	/* checked whole first: a bad answer gives nothing; without add, only checked */
	for (int pass = 0; pass < (add ? 2 : 1); pass++) {
		for (size_t off = r.off; off < n;) {
			const uint8_t *nl = memchr(p + off, '\n', n - off);
			size_t k = nl ? (size_t)(nl - (p + off)) : n - off;
			if (!nl || k == 0 || k >= sizeof(name) || !is_text(p + off, k))
				return -1;
			if (pass) {
				memcpy(name, p + off, k);
				name[k] = '\0';
				add(arg, name);
			}
			off += k + 1;
		}
	}
	return 0;
}

/* ---- link load --------------------------------------------------------------------------- */

size_t hs_feed_load_pack(uint8_t *buf, int nlinks, const char (*text)[HS_LOAD_TEXT])
{
	struct wr w = { buf, 0 };

	put(&w, (uint64_t)(nlinks > 0 ? nlinks : 0), 4);
	for (int d = 0; d < 2 * nlinks; d++) {
		size_t k = strnlen(text[d], HS_LOAD_TEXT - 1);
		if (!k)
			continue;
		put(&w, (uint64_t)d, 4);
		put(&w, k, 1);
		memcpy(buf + w.n, text[d], k);
		w.n += k;
	}
	return w.n;
}

int hs_feed_load_unpack(const uint8_t *p, size_t n, int nlinks, char (*text)[HS_LOAD_TEXT])
{
	struct rd r = { p, n, 0, false };
	uint64_t links = get(&r, 4);

	if (r.bad)
		return -1;
	/* checked whole first: a bad frame changes nothing */
	for (int pass = 0; pass < 2; pass++) {
		r.off = 4;
		if (pass && links != (uint64_t)(nlinks > 0 ? nlinks : 0))
			return 1;
		if (pass)
			for (int d = 0; d < 2 * nlinks; d++)
				text[d][0] = '\0';
		while (r.off < n) {
			uint64_t d = get(&r, 4), k = get(&r, 1);
			if (r.bad || d >= 2 * links || k == 0 || k >= HS_LOAD_TEXT ||
			    n - r.off < k || !is_text(p + r.off, k))
				return -1;
			if (pass) {
				memcpy(text[d], p + r.off, k);
				text[d][k] = '\0';
			}
			r.off += k;
		}
	}
	return 0;
}
