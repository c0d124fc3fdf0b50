/* pcapng.c - section header, interface description and enhanced packet
 * blocks (pcapng, draft-ietf-opsawg-pcapng), written through stdio */
#include <string.h>

#include "pcapng.h"

#define OPT_ENDOFOPT	0
#define OPT_COMMENT	1
#define SHB_USERAPPL	4
#define IF_TSRESOL	9

static size_t pad4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

static int put32(FILE *fp, uint32_t v)
{
	return fwrite(&v, sizeof(v), 1, fp) == 1 ? 0 : -1;
}

static int put16(FILE *fp, uint16_t v)
{
	return fwrite(&v, sizeof(v), 1, fp) == 1 ? 0 : -1;
}

static int put_bytes(FILE *fp, const void *p, size_t n)
{
	static const uint8_t zero[4];
	size_t padded = pad4(n);

	if (n && fwrite(p, 1, n, fp) != n)
		return -1;
	if (padded > n && fwrite(zero, 1, padded - n, fp) != padded - n)
		return -1;
	return 0;
}

/* an option's size on file: code, length, value padded */
static size_t opt_size(size_t len)
{
	return 4 + pad4(len);
}

static int put_opt(FILE *fp, uint16_t code, const void *val, size_t len)
{
	if (put16(fp, code) < 0 || put16(fp, (uint16_t)len) < 0)
		return -1;
	return put_bytes(fp, val, len);
}

/* an option value is at most 65535 bytes */
static size_t opt_len(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	return n > 65532 ? 65532 : n;
}

int hs_pcapng_begin(FILE *fp, const char *app, uint16_t linktype, uint32_t snaplen)
{
	size_t alen = opt_len(app);
	size_t opts = (alen ? opt_size(alen) : 0) + 4;
	uint32_t shb_len = (uint32_t)(4 + 4 + 4 + 2 + 2 + 8 + opts + 4);
	int rc = 0;

	rc |= put32(fp, HS_PCAPNG_SHB);
	rc |= put32(fp, shb_len);
	rc |= put32(fp, HS_PCAPNG_MAGIC);
	rc |= put16(fp, 1);	/* major */
	rc |= put16(fp, 0);	/* minor */
	rc |= put32(fp, 0xffffffffU);	/* section length: not given (-1) */
	rc |= put32(fp, 0xffffffffU);
	if (alen)
		rc |= put_opt(fp, SHB_USERAPPL, app, alen);
	rc |= put_opt(fp, OPT_ENDOFOPT, NULL, 0);
	rc |= put32(fp, shb_len);
	rc |= hs_pcapng_interface(fp, linktype, snaplen);
	return rc ? -1 : 0;
}

int hs_pcapng_interface(FILE *fp, uint16_t linktype, uint32_t snaplen)
{
	const uint8_t tsresol = 9;
	uint32_t idb_len = (uint32_t)(4 + 4 + 2 + 2 + 4 + opt_size(1) + 4 + 4);
	int rc = 0;

	rc |= put32(fp, HS_PCAPNG_IDB);
	rc |= put32(fp, idb_len);
	rc |= put16(fp, linktype);
	rc |= put16(fp, 0);	/* reserved */
	rc |= put32(fp, snaplen);
	rc |= put_opt(fp, IF_TSRESOL, &tsresol, 1);
	rc |= put_opt(fp, OPT_ENDOFOPT, NULL, 0);
	rc |= put32(fp, idb_len);
	return rc ? -1 : 0;
}

int hs_pcapng_packet(FILE *fp, uint64_t ts_ns, const uint8_t *data, uint32_t caplen,
		     uint32_t origlen, const char *comment)
{
	return hs_pcapng_packet_on(fp, 0, ts_ns, data, caplen, origlen, comment);
}

int hs_pcapng_packet_on(FILE *fp, uint32_t iface, uint64_t ts_ns, const uint8_t *data,
			uint32_t caplen, uint32_t origlen, const char *comment)
{
	size_t clen = opt_len(comment);
	size_t opts = clen ? opt_size(clen) + 4 : 0;
	uint32_t len = (uint32_t)(4 + 4 + 4 + 4 + 4 + 4 + 4 + pad4(caplen) + opts + 4);
	int rc = 0;

	if (origlen < caplen)
		origlen = caplen;
	rc |= put32(fp, HS_PCAPNG_EPB);
	rc |= put32(fp, len);
	rc |= put32(fp, iface);
	rc |= put32(fp, (uint32_t)(ts_ns >> 32));
	rc |= put32(fp, (uint32_t)ts_ns);
	rc |= put32(fp, caplen);
	rc |= put32(fp, origlen);
	rc |= put_bytes(fp, data, caplen);
	if (clen) {
		rc |= put_opt(fp, OPT_COMMENT, comment, clen);
		rc |= put_opt(fp, OPT_ENDOFOPT, NULL, 0);
	}
	rc |= put32(fp, len);
	return rc ? -1 : 0;
}
