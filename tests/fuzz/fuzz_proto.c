/* fuzz_proto.c - bytes from an attach socket through the frame reader
 *
 * The first byte sets how many bytes arrive per read (1 to 256), as a
 * socket hands them over; the rest is the stream. Every frame taken must
 * be whole and of a known type; after a malformed one nothing is taken.
 * The feed's payloads (a trace, a status, the links' load) and the names
 * for TAB go through their readers: what they take is in range, and
 * packed again it reads back the same.
 */
#include <stdio.h>

#include "fuzz.h"
#include "proto.h"
#include "tracer.h"

static void feed_trace(const struct hs_frame *f)
{
	struct hs_trace t, u;
	uint8_t buf[HS_FEED_TRACE_MAX];
	int nsw = 8;

	char names[HS_FEED_ANALYZER_MAX], again[HS_FEED_ANALYZER_MAX];

	if (hs_feed_trace_unpack(f->data, f->len, nsw, &t, names, sizeof(names)) < 0)
		return;
	if (t.nhops > HS_TRACE_MAX_HOPS || t.n_next < 0 || t.n_next > HS_TRACE_MAX_NEXT ||
	    t.outcome >= HS_OUT__COUNT || t.last_sw < -1 || t.last_sw >= nsw)
		abort();
	for (int i = 0; i < t.nhops; i++)
		if (t.hops[i].sw < -1 || t.hops[i].sw >= nsw)
			abort();
	size_t n = hs_feed_trace_pack(buf, &t, names[0] ? names : NULL);
	if (n > HS_FEED_TRACE_MAX ||
	    hs_feed_trace_unpack(buf, n, nsw, &u, again, sizeof(again)) < 0 ||
	    memcmp(&t, &u, sizeof(t)) != 0 || strcmp(names, again) != 0)
		abort();
}

static void feed_status(const struct hs_frame *f)
{
	struct hs_feed_status s;
	uint8_t buf[sizeof(s) + 16];

	if (hs_feed_status_unpack(f->data, f->len, &s) < 0)
		return;
	if (strlen(s.source) >= sizeof(s.source) ||
	    hs_feed_status_pack(buf, &s) != f->len || memcmp(buf, f->data, f->len) != 0)
		abort();
}

static void feed_load(const struct hs_frame *f)
{
	enum { NLINKS = 4 };
	char text[2 * NLINKS][HS_LOAD_TEXT], again[2 * NLINKS][HS_LOAD_TEXT];
	uint8_t buf[4 + 2 * NLINKS * (5 + HS_LOAD_TEXT)];

	memset(text, 0, sizeof(text));
	memset(again, 0, sizeof(again));
	if (hs_feed_load_unpack(f->data, f->len, NLINKS, text) != 0)
		return;
	for (int d = 0; d < 2 * NLINKS; d++)
		if (strlen(text[d]) >= HS_LOAD_TEXT)
			abort();
	size_t n = hs_feed_load_pack(buf, NLINKS, (const char (*)[HS_LOAD_TEXT])text);
	if (hs_feed_load_unpack(buf, n, NLINKS, again) != 0 ||
	    memcmp(text, again, sizeof(text)) != 0)
		abort();
}

struct names {
	char *v[64];
	int n;
};

static void name_add(void *arg, const char *name)
{
	struct names *ns = arg;

	if (!*name || strlen(name) >= HS_NAMES_ITEM_MAX)
		abort();
	if (ns->n < 64)
		ns->v[ns->n++] = strdup(name);
}

static void names(const struct hs_frame *f)
{
	char word[HS_NAMES_WORD_MAX + 1];
	uint8_t q[5 + HS_NAMES_WORD_MAX], a[4 + 64 * HS_NAMES_ITEM_MAX];
	struct names ns = { .n = 0 };
	uint32_t seq = 0, seq2 = 0;
	bool stored = false;

	/* a console's question ... */
	if (hs_names_ask_unpack(f->data, f->len, &seq, &stored, word, sizeof(word)) == 0 &&
	    (hs_names_ask_pack(q, seq, stored, word) != f->len || memcmp(q, f->data, f->len) != 0))
		abort();
	/* ... or a daemon's answer */
	if (hs_names_unpack(f->data, f->len, &seq, name_add, &ns) == 0 && ns.n < 64 &&
	    (hs_names_pack(a, sizeof(a), seq, ns.v, ns.n) != f->len || memcmp(a, f->data, f->len) ||
	     hs_names_unpack(a, f->len, &seq2, NULL, NULL) != 0 || seq2 != seq))
		abort();
	for (int i = 0; i < ns.n; i++)
		free(ns.v[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hs_proto_rd r;
	struct hs_frame f;
	char err[128], version[64];
	uint8_t proto, flags;
	bool bad = false;

	if (size < 1)
		return 0;
	size_t chunk = (size_t)data[0] + 1;
	data++;
	size--;
	hs_proto_rd_init(&r);
	for (size_t i = 0; i < size; i += chunk) {
		hs_proto_rd_feed(&r, data + i, size - i < chunk ? size - i : chunk);
		int rc;
		while ((rc = hs_proto_rd_next(&r, &f, err, sizeof(err))) == 1) {
			if (bad || f.type < HS_FR_HELLO || f.type > HS_FR_LAST ||
			    f.len > HS_PROTO_MAX - 1 || f.data < r.buf || f.data + f.len > r.buf + r.len)
				abort();
			if (f.type == HS_FR_HELLO &&
			    hs_hello_parse(&f, &proto, &flags, version, sizeof(version)) == 0 &&
			    strlen(version) >= sizeof(version))
				abort();
			if (f.type == HS_FR_TRACE)
				feed_trace(&f);
			else if (f.type == HS_FR_STATUS)
				feed_status(&f);
			else if (f.type == HS_FR_LOAD)
				feed_load(&f);
			else if (f.type == HS_FR_NAMES)
				names(&f);
		}
		if (rc < 0) {
			if (!strstr(err, "frame"))
				abort();
			bad = true;
		}
	}
	hs_proto_rd_free(&r);
	return 0;
}
