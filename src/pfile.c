/* pfile.c - capture files: libpcap, and a pcapng block reader for the files
 * whose interfaces libpcap will not mix
 *
 * The blocks read (draft-ietf-opsawg-pcapng): section header (byte order;
 * a new section describes its interfaces anew), interface description (link
 * type, snapshot length, if_tsresol, if_tsoffset), enhanced, simple and the
 * obsolete packet blocks; every other block is skipped by its length. Each
 * block is read whole into one buffer, which grows to the largest block and
 * is kept; every length is checked against the block before it is used.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "decode.h"
#include "interrupt.h"
#include "pfile.h"

#define BT_SHB		0x0A0D0D0AU
#define BT_IDB		0x00000001U
#define BT_OPB		0x00000002U	/* obsolete packet block */
#define BT_SPB		0x00000003U
#define BT_EPB		0x00000006U
#define BOM		0x1A2B3C4DU
#define BOM_SWAPPED	0x4D3C2B1AU

#define OPT_END		0
#define IF_TSRESOL	9
#define IF_TSOFFSET	14

#define BLOCK_MIN	12	/* type, length, trailing length */
#define BLOCK_MAX	(16u << 20)	/* libpcap's bound too */
#define IFACE_MAX	65536

struct iface {
	int dlt;
	uint32_t snaplen;
	bool pow2;		/* resolution 2^-res, else 10^-res seconds */
	uint8_t res;
	int64_t offset_s;	/* if_tsoffset */
	uint64_t frames;
};

struct hs_pfile {
	FILE *fp;
	pcap_t *pc;		/* libpcap reads the file; else the block reader */
	int dlt;		/* of the frame just given */
	/* the block reader */
	bool swap;		/* the section's byte order is not ours */
	uint64_t off;		/* file offset of the next block */
	struct iface *ifs;
	unsigned nifs, cap_ifs;
	unsigned section;	/* index of the current section's interface 0 */
	uint8_t *buf;		/* the block being read */
	uint32_t bufcap;
	struct pcap_pkthdr hdr;
	char err[256];
};

static uint16_t get16(const struct hs_pfile *f, const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return f->swap ? (uint16_t)(v << 8 | v >> 8) : v;
}

static uint32_t get32(const struct hs_pfile *f, const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return f->swap ? __builtin_bswap32(v) : v;
}

static int fail(struct hs_pfile *f, uint64_t at, const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(f->err, sizeof(f->err), "pcapng block at byte %" PRIu64 ": %s", at, msg);
	return PCAP_ERROR;
}

/* the next block whole into f->buf: 1 with *type and *len (the block's total
 * length), 0 at the clean end of the file, PCAP_ERROR */
static int read_block(struct hs_pfile *f, uint32_t *type, uint32_t *len)
{
	uint8_t h[8];
	size_t got = fread(h, 1, sizeof(h), f->fp);

	if (got == 0 && feof(f->fp))
		return 0;
	if (got != sizeof(h))
		return ferror(f->fp) ? fail(f, f->off, "%s", strerror(errno))
				     : fail(f, f->off, "truncated block header");
	uint32_t t;
	memcpy(&t, h, 4);
	if (t == BT_SHB) {
		/* its byte order comes after the length: look at it first */
		uint32_t bom;
		if (fread(&bom, 1, 4, f->fp) != 4)
			return fail(f, f->off, "truncated section header");
		if (bom != BOM && bom != BOM_SWAPPED)
			return fail(f, f->off, "bad byte-order magic 0x%08" PRIx32, bom);
		f->swap = bom == BOM_SWAPPED;
		if (f->bufcap < 12) {
			uint8_t *nb = realloc(f->buf, 64);
			if (!nb)
				return fail(f, f->off, "out of memory");
			f->buf = nb;
			f->bufcap = 64;
		}
		memcpy(f->buf + 8, &bom, 4);
		got = 12;
	} else {
		got = 8;
	}
	*type = get32(f, h);
	*len = get32(f, h + 4);
	if (*len < BLOCK_MIN || *len % 4 || *len > BLOCK_MAX || *len < got)
		return fail(f, f->off, "bad block length %" PRIu32, *len);
	if (*len > f->bufcap) {
		uint8_t *nb = realloc(f->buf, *len);
		if (!nb)
			return fail(f, f->off, "out of memory for %" PRIu32 " bytes", *len);
		f->buf = nb;
		f->bufcap = *len;
	}
	memcpy(f->buf, h, 8);
	if (fread(f->buf + got, 1, *len - got, f->fp) != *len - got)
		return fail(f, f->off, "truncated block of %" PRIu32 " bytes", *len);
	if (get32(f, f->buf + *len - 4) != *len)
		return fail(f, f->off, "trailing length differs from %" PRIu32, *len);
	return 1;
}

/* the options from off to the end of the block's body */
static int idb_options(struct hs_pfile *f, uint32_t len, struct iface *ifc)
{
	uint32_t off = 16, end = len - 4;

	while (off + 4 <= end) {
		uint16_t code = get16(f, f->buf + off), olen = get16(f, f->buf + off + 2);
		const uint8_t *v = f->buf + off + 4;

		if (code == OPT_END)
			break;
		if (olen > end - off - 4)
			return fail(f, f->off, "interface option %u runs past the block", code);
		if (code == IF_TSRESOL && olen >= 1) {
			ifc->pow2 = v[0] & 0x80;
			ifc->res = v[0] & 0x7f;
			if ((!ifc->pow2 && ifc->res > 19) || (ifc->pow2 && ifc->res > 63))
				return fail(f, f->off, "timestamp resolution %u is out of range",
					    v[0]);
		} else if (code == IF_TSOFFSET && olen >= 8) {
			uint64_t raw;	/* seconds, in the section's byte order */
			memcpy(&raw, v, 8);
			ifc->offset_s = (int64_t)(f->swap ? __builtin_bswap64(raw) : raw);
		}
		off += 4 + ((olen + 3u) & ~3u);
	}
	return 0;
}

static int add_iface(struct hs_pfile *f, uint32_t len)
{
	if (len < 20)
		return fail(f, f->off, "interface description of %" PRIu32 " bytes", len);
	if (f->nifs >= IFACE_MAX)
		return fail(f, f->off, "more than %u interfaces", IFACE_MAX);
	if (f->nifs == f->cap_ifs) {
		unsigned n = f->cap_ifs ? f->cap_ifs * 2 : 8;
		struct iface *ni = realloc(f->ifs, n * sizeof(*ni));
		if (!ni)
			return fail(f, f->off, "out of memory");
		f->ifs = ni;
		f->cap_ifs = n;
	}
	struct iface *ifc = &f->ifs[f->nifs];
	memset(ifc, 0, sizeof(*ifc));
	ifc->dlt = get16(f, f->buf + 8);	/* a LINKTYPE_ value: hs_decode takes those */
	ifc->snaplen = get32(f, f->buf + 12);
	ifc->res = 6;		/* microseconds unless said */
	if (idb_options(f, len, ifc) < 0)
		return PCAP_ERROR;
	f->nifs++;
	return 0;
}

/* a timestamp in the interface's units to nanoseconds */
static uint64_t to_ns(const struct iface *ifc, uint64_t ts)
{
	uint64_t ns;

	if (ifc->pow2) {
		unsigned r = ifc->res;
		if (r > 32) {		/* finer than a nanosecond: drop the excess */
			ts >>= r - 32;
			r = 32;
		}
		uint64_t mask = r ? (UINT64_C(1) << r) - 1 : 0;
		ns = (ts >> r) * HS_NS_PER_SEC + (((ts & mask) * HS_NS_PER_SEC) >> r);
	} else if (ifc->res <= 9) {
		uint64_t m = 1;
		for (unsigned i = ifc->res; i < 9; i++)
			m *= 10;
		ns = ts * m;
	} else {
		uint64_t d = 1;
		for (unsigned i = 9; i < ifc->res; i++)
			d *= 10;
		ns = ts / d;
	}
	return ns + (uint64_t)ifc->offset_s * HS_NS_PER_SEC;
}

/* the next packet block: 1 with f->hdr and *data, 0 at the end, PCAP_ERROR */
static int next_packet(struct hs_pfile *f, const u_char **data)
{
	for (;;) {
		uint32_t type = 0, len = 0;
		int rc = read_block(f, &type, &len);
		if (rc <= 0)
			return rc;
		uint64_t at = f->off;
		f->off += len;

		uint32_t ifn = 0, caplen, wirelen, hoff;
		uint64_t ts = 0;
		switch (type) {
		case BT_SHB:
			if (len < 28)
				return fail(f, at, "section header of %" PRIu32 " bytes", len);
			if (get16(f, f->buf + 12) != 1)
				return fail(f, at, "pcapng version %u is not 1",
					    get16(f, f->buf + 12));
			f->section = f->nifs;
			continue;
		case BT_IDB:
			if (add_iface(f, len) < 0)
				return PCAP_ERROR;
			continue;
		case BT_EPB:
		case BT_OPB:	/* the same, but a 16-bit interface and drop count */
			if (len < 32)
				return fail(f, at, "packet block of %" PRIu32 " bytes", len);
			ifn = type == BT_EPB ? get32(f, f->buf + 8) : get16(f, f->buf + 8);
			ts = (uint64_t)get32(f, f->buf + 12) << 32 | get32(f, f->buf + 16);
			caplen = get32(f, f->buf + 20);
			wirelen = get32(f, f->buf + 24);
			hoff = 28;
			break;
		case BT_SPB:
			if (len < 16)
				return fail(f, at, "packet block of %" PRIu32 " bytes", len);
			wirelen = get32(f, f->buf + 8);
			hoff = 12;
			caplen = wirelen < len - 16 ? wirelen : len - 16;
			if (f->nifs > f->section && f->ifs[f->section].snaplen &&
			    caplen > f->ifs[f->section].snaplen)
				caplen = f->ifs[f->section].snaplen;
			break;
		default:
			continue;	/* name resolution, statistics, custom, ... */
		}
		if (ifn >= f->nifs - f->section || f->nifs == f->section)
			return fail(f, at, "a packet of interface %" PRIu32
				    ", which the section has not described", ifn);
		if (caplen > len - 4 - hoff)
			return fail(f, at, "captured length %" PRIu32 " runs past the block",
				    caplen);
		struct iface *ifc = &f->ifs[f->section + ifn];
		uint64_t ns = to_ns(ifc, ts);
		f->hdr.ts.tv_sec = (time_t)(ns / HS_NS_PER_SEC);
		f->hdr.ts.tv_usec = (suseconds_t)(ns % HS_NS_PER_SEC);	/* nanoseconds */
		f->hdr.caplen = caplen;
		f->hdr.len = wirelen;
		f->dlt = ifc->dlt;
		ifc->frames++;
		*data = f->buf + hoff;
		return 1;
	}
}

/* the blocks before the first packet (or before damage, which the reader
 * chosen then meets again): do they describe interfaces libpcap reads as
 * one (one link type, one snapshot length, or none decoded here)? The file
 * is read again from its start either way. */
static bool libpcap_reads(struct hs_pfile *f)
{
	uint32_t type = 0, len = 0;

	while (read_block(f, &type, &len) == 1) {
		f->off += len;
		if (type == BT_EPB || type == BT_SPB || type == BT_OPB)
			break;
		if (type == BT_SHB && f->nifs)
			break;
		if (type == BT_IDB && add_iface(f, len) < 0)
			break;
	}
	bool same = true, some = false;
	for (unsigned i = 0; i < f->nifs; i++) {
		same = same && f->ifs[i].dlt == f->ifs[0].dlt &&
		       f->ifs[i].snaplen == f->ifs[0].snaplen;
		some = some || hs_decode_linktype_ok(f->ifs[i].dlt);
	}
	return same || !some;
}

static void link_error(char *err, size_t errlen, const char *path, int dlt)
{
	const char *name = pcap_datalink_val_to_name(dlt);

	snprintf(err, errlen, "cannot decode '%s': unsupported link type %s (%d)", path,
		 name ? name : "unknown", dlt);
}

struct hs_pfile *hs_pfile_open(const char *path, char *buf, size_t buflen, char *err,
			       size_t errlen)
{
	char errbuf[PCAP_ERRBUF_SIZE] = "";
	struct hs_pfile *f = calloc(1, sizeof(*f));
	struct stat st;
	uint32_t magic = 0;

	if (!f) {
		snprintf(err, errlen, "cannot open '%s': out of memory", path);
		return NULL;
	}
	/* a FIFO's writer may be slow to come: waited for so a signal ends it */
	f->fp = hs_fopen_read(path);
	if (!f->fp) {
		snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
		free(f);
		return NULL;
	}
	if (buf)
		setvbuf(f->fp, buf, _IOFBF, buflen);
	/* a pcapng file that can be read again from its start: which reader */
	if (fstat(fileno(f->fp), &st) == 0 && S_ISREG(st.st_mode) &&
	    fread(&magic, 1, 4, f->fp) == 4 && magic == BT_SHB) {
		rewind(f->fp);
		bool lib = libpcap_reads(f);
		rewind(f->fp);
		f->off = 0;
		f->section = 0;
		if (!lib) {
			f->dlt = f->ifs[0].dlt;
			f->nifs = 0;	/* described again as they come */
			return f;
		}
	} else {
		rewind(f->fp);
	}
	free(f->ifs);
	free(f->buf);
	f->ifs = NULL;
	f->buf = NULL;
	f->nifs = f->cap_ifs = f->bufcap = 0;
	f->pc = pcap_fopen_offline_with_tstamp_precision(f->fp, PCAP_TSTAMP_PRECISION_NANO,
							 errbuf);
	if (!f->pc) {
		snprintf(err, errlen, "cannot read '%s': %s", path, errbuf);
		fclose(f->fp);
		free(f);
		return NULL;
	}
	f->dlt = pcap_datalink(f->pc);
	if (!hs_decode_linktype_ok(f->dlt)) {
		link_error(err, errlen, path, f->dlt);
		hs_pfile_close(f);
		return NULL;
	}
	return f;
}

void hs_pfile_close(struct hs_pfile *f)
{
	if (!f)
		return;
	if (f->pc)
		pcap_close(f->pc);	/* closes the FILE too */
	else if (f->fp)
		fclose(f->fp);
	free(f->ifs);
	free(f->buf);
	free(f);
}

int hs_pfile_next(struct hs_pfile *f, struct pcap_pkthdr **h, const u_char **data)
{
	if (f->pc)
		return pcap_next_ex(f->pc, h, data);
	int rc = next_packet(f, data);
	if (rc == 1)
		*h = &f->hdr;
	return rc == 0 ? PCAP_ERROR_BREAK : rc;
}

int hs_pfile_dispatch(struct hs_pfile *f, int cnt, pcap_handler cb, u_char *user)
{
	const u_char *data;
	int n = 0, rc = 1;

	if (f->pc)
		return pcap_dispatch(f->pc, cnt, cb, user);
	while (n < cnt && (rc = next_packet(f, &data)) == 1) {
		cb(user, &f->hdr, data);
		n++;
	}
	return rc < 0 ? rc : n;
}

bool hs_pfile_regular(const struct hs_pfile *f)
{
	struct stat st;

	return fstat(fileno(f->fp), &st) == 0 && S_ISREG(st.st_mode);
}

int hs_pfile_dlt(const struct hs_pfile *f)
{
	return f->dlt;
}

bool hs_pfile_mixed(const struct hs_pfile *f)
{
	return !f->pc;
}

const char *hs_pfile_geterr(struct hs_pfile *f)
{
	return f->pc ? pcap_geterr(f->pc) : f->err;
}

bool hs_pfile_interface(const struct hs_pfile *f, unsigned i, int *dlt, uint64_t *frames)
{
	if (i >= f->nifs)
		return false;
	*dlt = f->ifs[i].dlt;
	*frames = f->ifs[i].frames;
	return true;
}
