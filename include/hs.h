/* hs.h - types and helpers shared by every part of hopscope */
#ifndef HS_H
#define HS_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <string.h>

#define HS_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define HS_NS_PER_SEC 1000000000ULL

/* An IPv4 or IPv6 address. af is 4, 6, or 0 for "none". */
struct hs_addr {
	uint8_t af;
	uint8_t a[16];		/* IPv4 in a[0..3] */
};

/* Longest text form of an hs_addr, with its NUL. */
#define HS_ADDRSTRLEN 46

/* Inner 5-tuple. Addresses of both directions are kept as seen. */
struct hs_flowkey {
	struct hs_addr src, dst;
	uint16_t sport, dport;
	uint8_t proto;
};

const char *hs_addr_str(const struct hs_addr *a, char *buf, size_t len);
int hs_addr_parse(const char *s, struct hs_addr *out);
/* the 64-bit finaliser of MurmurHash3: every input bit reaches every output bit */
static inline uint64_t hs_mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

/* inline: it is on the per-packet and per-trace paths, where a call to
 * memcmp for four bytes cost more than the compare */
static inline bool hs_addr_eq(const struct hs_addr *x, const struct hs_addr *y)
{
	if (x->af != y->af)
		return false;
	if (x->af == 4)		/* one 32-bit compare: memcmp of a constant 4 */
		return memcmp(x->a, y->a, 4) == 0;
	return memcmp(x->a, y->a, 16) == 0;
}
/* a hash of the address, for tables indexed by it */
uint32_t hs_addr_hash(const struct hs_addr *a);
/* true when a lies in net/plen */
bool hs_addr_in(const struct hs_addr *a, const struct hs_addr *net, int plen);
/* "10.0.0.0/24" -> net, plen; returns 0 or -1 */
int hs_prefix_parse(const char *s, struct hs_addr *net, int *plen);
/* "ADDR[:PORT]", "[ADDR]:PORT" or an IPv6 address or prefix alone (two
 * colons or more: no port) -> the address part in addr (cut to alen) and
 * *port the port's text, or NULL; *bracketed when it was in brackets.
 * Returns the address part's length, or -1 for brackets not closed or
 * followed by something other than ":PORT". */
int hs_endpoint_split(const char *w, char *addr, size_t alen, const char **port,
		      bool *bracketed);

/* "tcp", "udp", "icmp", ... or the number */
const char *hs_proto_name(uint8_t proto, char *buf, size_t len);

uint64_t hs_flowkey_hash(const struct hs_flowkey *k);
/* FNV-1a: fold n bytes into h (start from 0xcbf29ce484222325) */
uint64_t hs_fnv1a(uint64_t h, const void *p, size_t n);
/* what names a capture file whatever its path: its size and hashes of its
 * first and last 64 KiB ("SIZE:HEAD:TAIL", at most HS_FILE_ID_LEN bytes);
 * 0, or -1 with errno */
#define HS_FILE_ID_LEN 64
int hs_file_identity(const char *path, char *buf, size_t len);
/* "SRC:SPORT > DST:DPORT", brackets around IPv6 addresses; returns buf */
const char *hs_flowkey_str(const struct hs_flowkey *k, char *buf, size_t len);
/* inline: the flow table and the rate estimator compare a key at every
 * closed trace, where the call cost as much as the compare */
static inline bool hs_flowkey_eq(const struct hs_flowkey *x, const struct hs_flowkey *y)
{
	return x->proto == y->proto && x->sport == y->sport && x->dport == y->dport &&
	       hs_addr_eq(&x->src, &y->src) && hs_addr_eq(&x->dst, &y->dst);
}

/* "250ms", "2s", "1.5s", "1m", "100us", "5" (seconds) -> nanoseconds. 0 or -1. */
int hs_parse_duration(const char *s, uint64_t *ns);
/* decimal or 0x.. unsigned integer no larger than max. 0 or -1. */
int hs_parse_uint(const char *s, uint64_t max, uint64_t *out);
/* a trace as the user names it: "N", the tracer's number (session 0: not
 * given), or "S:N", trace N of history session S. 0 or -1. */
int hs_parse_trace_ref(const char *s, uint64_t *session, uint64_t *no);
/* "S:N", or "N" when session is 0; returns buf */
const char *hs_fmt_trace_ref(int64_t session, uint64_t no, char *buf, size_t len);
/* strict decimal for specs and protocol fields: digits only, no sign, no
 * leading zero, at most max; 0 or -1 */
int hs_parse_dec(const char *s, uint64_t max, uint64_t *out);
/* a bit rate: "5M", "10G", "1.5Gbit", "800k", "10mbit", "2Mbps", "9000" (bits per
 * second; k M G T are powers of 1000, case-insensitive). 0 or -1. */
int hs_parse_bps(const char *s, double *bps);
/* a size in bytes: "4096", "512K", "64M", "1G" (K M G are powers of 1024,
 * case-insensitive, "64MiB" too); a whole number no larger than max. 0 or -1. */
int hs_parse_size(const char *s, uint64_t max, uint64_t *out);
/* bytes of this process's memory mapped from fd's file (a packet socket's
 * ring, say), read from /proc/self/maps; 0 when none or unknown */
uint64_t hs_mapped_bytes(int fd);
/* bytes -> "64 MiB", "31.9 MiB", "512 KiB", "100 B"; returns buf */
const char *hs_fmt_size(uint64_t bytes, char *buf, size_t len);
/* bits per second -> "9.80M", "950k", "1.20G", "0"; returns buf */
const char *hs_fmt_bps(double bps, char *buf, size_t len);
/* a share: "0.25" or "25%" -> 0.25; finite, not negative. 0 or -1. */
int hs_parse_share(const char *s, double *out);
/* a switch name, [a-z][a-z0-9_-]{0,30}: what topologies and drivers accept */
bool hs_name_ok(const char *s);
/* an interface name: 1 to 15 of [A-Za-z0-9._-] */
bool hs_ifname_ok(const char *s);
/* what a user typed, for an error: s whole, or its first max bytes (not
 * splitting a UTF-8 character) and "..." when longer; returns buf */
const char *hs_clip(const char *s, size_t max, char *buf, size_t len);
/* format an error into err (len bytes); returns -1, for "return hs_errf(...)" */
int hs_errf(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* nanoseconds -> "1.250ms", "3.2s" (human); returns buf */
const char *hs_fmt_duration(uint64_t ns, char *buf, size_t len);
/* the same with a sign: "-1.250ms" for a negative one (clocks that disagree) */
const char *hs_fmt_delta(int64_t ns, char *buf, size_t len);
/* seconds.nanoseconds with 9 decimals: times in JSON */
const char *hs_fmt_ts(uint64_t ts_ns, char *buf, size_t len);
/* "2023-11-14 22:13:20.000001": times in text, in UTC or, after
 * hs_set_tz_local(true) ('set tz local'), the local time zone */
#define HS_TIMESTRLEN 32
const char *hs_fmt_time(uint64_t ts_ns, char *buf, size_t len);
void hs_set_tz_local(bool local);
bool hs_tz_local(void);

/* monotonic and wall clocks in nanoseconds */
uint64_t hs_mono_ns(void);
uint64_t hs_wall_ns(void);

/* start loading, to be written, every cache line of [p, p + len), len > 0
 * (a line apart, then the last byte's: with len a constant, unrolled) */
static inline void hs_prefetch_span(const void *p, size_t len)
{
	const char *c = p;

	for (size_t off = 0; off < len; off += 64)
		__builtin_prefetch(c + off, 1);
	__builtin_prefetch(c + len - 1, 1);
}

/* An open-addressing index of uint64_t entries, tag << 32 | slot + 1 (0:
 * empty), each probed for from its home on linearly: the first entry with
 * this tag from position i on, 0 when the run ends first. For the tables'
 * prefetches: the entry names the record that is almost always the one. */
static inline uint64_t hs_index_first(const uint64_t *index, uint32_t mask, uint32_t i,
				      uint32_t tag)
{
	uint64_t e;

	for (; (e = index[i]) != 0; i = (i + 1) & mask)
		if ((uint32_t)(e >> 32) == tag)
			return e;
	return 0;
}

/* In such an index whose tags are 32-bit hashes and homes hash & mask:
 * remove entry, which is in it. Later entries of its cluster are
 * shifted back into the hole (backward-shift deletion: no tombstones, so
 * probes stay as short as the load allows); each one's home is read from
 * the entry itself, so what the entries name is never touched. */
static inline void hs_index_remove(uint64_t *index, uint32_t mask, uint64_t entry)
{
	uint32_t i = (uint32_t)(entry >> 32) & mask;

	while (index[i] != entry)
		i = (i + 1) & mask;
	uint32_t hole = i;
	for (uint32_t j = (i + 1) & mask; index[j]; j = (j + 1) & mask) {
		uint32_t home = (uint32_t)(index[j] >> 32) & mask;
		/* j may move to hole when home is not cyclically in (hole, j] */
		bool stays = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
		if (!stays) {
			index[hole] = index[j];
			hole = j;
		}
	}
	index[hole] = 0;
}

void *hs_xcalloc(size_t n, size_t size);	/* aborts on OOM */
/* The same for tables of megabytes read at random: whole 2 MB pages,
 * advised to be huge ones (a TLB miss per lookup otherwise); freed with
 * hs_free_big and the same n and size. In every build (AddressSanitizer's
 * takes them from the heap) a table starts on a multiple of HS_BIG_ALIGN,
 * a cache line, the most any of the tree's types asks for */
#define HS_HUGE_PAGE ((size_t)2 << 20)
#define HS_BIG_ALIGN 64
/* HS_ASAN: built with AddressSanitizer (GCC's macro, or clang's feature) */
#if defined(__SANITIZE_ADDRESS__)
#define HS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HS_ASAN 1
#endif
#endif
void *hs_xcalloc_big(size_t n, size_t size);
void hs_free_big(void *p, size_t n, size_t size);
/* back such a table with memory now rather than page by page as it is
 * first touched, its contents as they are; while no other thread uses it */
void hs_populate_big(void *p, size_t n, size_t size);
char *hs_xstrdup(const char *s);

#endif
