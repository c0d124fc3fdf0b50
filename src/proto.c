/* proto.c - the attach protocol's frames (proto.h) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hs.h"
#include "proto.h"

static const char *const names[] = {
	[HS_FR_HELLO] = "hello", [HS_FR_LINE] = "line", [HS_FR_OUT] = "output",
	[HS_FR_ERR] = "error output", [HS_FR_DONE] = "done", [HS_FR_INTR] = "interrupt",
	[HS_FR_BYE] = "bye", [HS_FR_AUTH] = "auth",
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
