/* util.c - addresses, flow keys, durations, numbers, clocks */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <strings.h>
#include <inttypes.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "hs.h"

const char *hs_addr_str(const struct hs_addr *a, char *buf, size_t len)
{
	if (len == 0)
		return buf;
	if (a->af == 4 && len >= 16) {
		/* by hand: inet_ntop's printf was a third of the formatting
		 * time of 'history all' */
		char *q = buf;
		for (int i = 0; i < 4; i++) {
			unsigned v = a->a[i];
			if (v >= 100)
				*q++ = (char)('0' + v / 100);
			if (v >= 10)
				*q++ = (char)('0' + v / 10 % 10);
			*q++ = (char)('0' + v % 10);
			*q++ = i < 3 ? '.' : '\0';
		}
	} else if (a->af == 4) {
		if (!inet_ntop(AF_INET, a->a, buf, (socklen_t)len))
			buf[0] = '\0';
	} else if (a->af == 6) {
		if (!inet_ntop(AF_INET6, a->a, buf, (socklen_t)len))
			buf[0] = '\0';
	} else {
		snprintf(buf, len, "-");
	}
	return buf;
}

int hs_addr_parse(const char *s, struct hs_addr *out)
{
	memset(out, 0, sizeof(*out));
	if (inet_pton(AF_INET, s, out->a) == 1) {
		out->af = 4;
		return 0;
	}
	if (inet_pton(AF_INET6, s, out->a) == 1) {
		out->af = 6;
		return 0;
	}
	return -1;
}

bool hs_addr_in(const struct hs_addr *a, const struct hs_addr *net, int plen)
{
	int bits = a->af == 4 ? 32 : 128;

	if (a->af != net->af || plen < 0 || plen > bits)
		return false;
	int full = plen / 8, rest = plen % 8;
	if (memcmp(a->a, net->a, (size_t)full) != 0)
		return false;
	if (rest) {
		uint8_t mask = (uint8_t)(0xff << (8 - rest));
		if ((a->a[full] & mask) != (net->a[full] & mask))
			return false;
	}
	return true;
}

int hs_prefix_parse(const char *s, struct hs_addr *net, int *plen)
{
	char buf[HS_ADDRSTRLEN + 8];
	const char *slash = strchr(s, '/');
	uint64_t v;

	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	if (slash)
		buf[slash - s] = '\0';
	if (hs_addr_parse(buf, net) < 0)
		return -1;
	int bits = net->af == 4 ? 32 : 128;
	if (!slash) {
		*plen = bits;
		return 0;
	}
	if (hs_parse_uint(slash + 1, (uint64_t)bits, &v) < 0)
		return -1;
	*plen = (int)v;
	return 0;
}

int hs_endpoint_split(const char *w, char *addr, size_t alen, const char **port,
		      bool *bracketed)
{
	const char *a = w, *colon;
	size_t n;

	*bracketed = *w == '[';
	if (*bracketed) {
		const char *close = strchr(w, ']');

		if (!close || (close[1] && close[1] != ':'))
			return -1;
		a = w + 1;
		n = (size_t)(close - a);
		colon = close[1] ? close + 1 : NULL;
	} else if (strchr(w, ':') && strchr(strchr(w, ':') + 1, ':')) {
		n = strlen(w);		/* an IPv6 address alone */
		colon = NULL;
	} else {
		colon = strchr(w, ':');
		n = colon ? (size_t)(colon - w) : strlen(w);
	}
	if (alen)
		snprintf(addr, alen, "%.*s", (int)(n < alen ? n : alen - 1), a);
	*port = colon ? colon + 1 : NULL;
	return n > INT_MAX ? INT_MAX : (int)n;
}

uint32_t hs_addr_hash(const struct hs_addr *a)
{
	uint64_t w[2] = { 0, 0 };

	/* two copies of a constant size, each a load or two, where one of a
	 * size known at run time is a call into the C library */
	if (a->af == 4)
		memcpy(w, a->a, 4);
	else
		memcpy(w, a->a, 16);
	w[0] ^= w[1] * 0xc2b2ae3d27d4eb4fULL ^ a->af;
	w[0] *= 0x9e3779b97f4a7c15ULL;
	return (uint32_t)(w[0] >> 32);
}

/* FNV-1a over the fields that make the key, so padding never counts */
uint64_t hs_fnv1a(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n--) {
		h ^= *b++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* Words, not bytes: the flow table and the rate estimator hash every closed
 * trace's key, and FNV over 13 bytes was a chain of 13 multiplies. */
uint64_t hs_flowkey_hash(const struct hs_flowkey *k)
{
	uint64_t s, d, h;

	if (k->src.af == 6) {
		uint64_t w[4];
		memcpy(w, k->src.a, 16);
		memcpy(w + 2, k->dst.a, 16);
		s = w[0] ^ hs_mix64(w[1]);
		d = w[2] ^ hs_mix64(w[3]);
	} else {
		uint32_t s4, d4;
		memcpy(&s4, k->src.a, 4);
		memcpy(&d4, k->dst.a, 4);
		s = s4;
		d = d4;
	}
	h = s * 0x9e3779b97f4a7c15ULL ^ d * 0xc2b2ae3d27d4eb4fULL ^
	    ((uint64_t)k->sport << 24 | (uint64_t)k->dport << 8 | k->proto |
	     (uint64_t)(k->src.af == 6) << 40) * 0x165667b19e3779f9ULL;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ULL;
	return h ^ h >> 32;
}

const char *hs_flowkey_str(const struct hs_flowkey *k, char *buf, size_t len)
{
	char s[HS_ADDRSTRLEN], d[HS_ADDRSTRLEN];
	bool v6 = k->src.af == 6;

	hs_addr_str(&k->src, s, sizeof(s));
	hs_addr_str(&k->dst, d, sizeof(d));
	snprintf(buf, len, "%s%s%s:%u > %s%s%s:%u", v6 ? "[" : "", s, v6 ? "]" : "", k->sport,
		 v6 ? "[" : "", d, v6 ? "]" : "", k->dport);
	return buf;
}

const char *hs_proto_name(uint8_t proto, char *buf, size_t len)
{
	switch (proto) {
	case 1: return "icmp";
	case 6: return "tcp";
	case 17: return "udp";
	case 47: return "gre";
	case 58: return "icmp6";
	case 132: return "sctp";
	}
	snprintf(buf, len, "%u", proto);
	return buf;
}

int hs_parse_uint(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-' || *s == '+' || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || v > max)
		return -1;
	*out = v;
	return 0;
}

int hs_parse_trace_ref(const char *s, uint64_t *session, uint64_t *no)
{
	const char *colon = s ? strchr(s, ':') : NULL;
	uint64_t sn = 0, n;

	if (colon) {
		char head[24];
		size_t len = (size_t)(colon - s);
		if (len == 0 || len >= sizeof(head))
			return -1;
		memcpy(head, s, len);
		head[len] = '\0';
		if (hs_parse_dec(head, INT64_MAX, &sn) < 0 || sn == 0)
			return -1;
		s = colon + 1;
	}
	if (hs_parse_dec(s, INT64_MAX, &n) < 0 || n == 0)
		return -1;
	*session = sn;
	*no = n;
	return 0;
}

const char *hs_fmt_trace_ref(int64_t session, uint64_t no, char *buf, size_t len)
{
	if (session > 0)
		snprintf(buf, len, "%" PRId64 ":%" PRIu64, session, no);
	else
		snprintf(buf, len, "%" PRIu64, no);
	return buf;
}

int hs_parse_dec(const char *s, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (!s || !*s || (s[0] == '0' && s[1]))
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -1;
		if (v > (max - (uint64_t)(*s - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return 0;
}

int hs_parse_share(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || v < 0)
		return -1;
	if (*end == '%') {
		v /= 100.0;
		end++;
	}
	if (*end)
		return -1;
	*out = v;
	return 0;
}

bool hs_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 31 || s[0] < 'a' || s[0] > 'z')
		return false;
	for (size_t i = 1; i < n; i++)
		if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) || s[i] == '-' ||
		      s[i] == '_'))
			return false;
	return true;
}

bool hs_ifname_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 15)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '-' || s[i] == '_' || s[i] == '.'))
			return false;
	return true;
}

int hs_parse_duration(const char *s, uint64_t *ns)
{
	static const struct { const char *unit; double mul; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
		{ "m", 60e9 }, { "min", 60e9 }, { "h", 3600e9 },
		{ "d", 86400e9 }, { "w", 604800e9 }, { "", 1e9 },
	};
	char *end;
	double v;

	if (!s || !*s || !(isdigit((unsigned char)*s) || *s == '.'))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || v < 0)
		return -1;
	for (size_t i = 0; i < HS_ARRAY_SIZE(units); i++) {
		if (strcmp(end, units[i].unit) == 0) {
			double r = v * units[i].mul;
			if (r > 1e18)
				return -1;
			*ns = (uint64_t)(r + 0.5);
			return 0;
		}
	}
	return -1;
}

int hs_parse_bps(const char *s, double *bps)
{
	static const struct { char c; double mul; } units[] = {
		{ 'k', 1e3 }, { 'm', 1e6 }, { 'g', 1e9 }, { 't', 1e12 },
	};
	char *end;
	double v, mul = 1;

	if (!s || !*s || !(isdigit((unsigned char)*s) || *s == '.'))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v < 0 || v != v)
		return -1;
	for (size_t i = 0; i < HS_ARRAY_SIZE(units); i++) {
		if (tolower((unsigned char)*end) == units[i].c) {
			mul = units[i].mul;
			end++;
			break;
		}
	}
	if (*end && strcasecmp(end, "bit") != 0 && strcasecmp(end, "bps") != 0 &&
	    strcasecmp(end, "b") != 0)
		return -1;
	if (v * mul > 1e15)
		return -1;
	*bps = v * mul;
	return 0;
}

int hs_parse_size(const char *s, uint64_t max, uint64_t *out)
{
	static const char units[] = "kmg";
	uint64_t v = 0;
	int shift = 0;

	if (!s || !isdigit((unsigned char)*s))
		return -1;
	for (; isdigit((unsigned char)*s); s++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	const char *u = *s ? strchr(units, tolower((unsigned char)*s)) : NULL;
	if (u) {
		shift = 10 * (int)(u - units + 1);
		s++;
		if (strcasecmp(s, "ib") == 0)
			s += 2;
	}
	if (*s || v > (max >> shift))
		return -1;
	*out = v << shift;
	return 0;
}

const char *hs_fmt_size(uint64_t bytes, char *buf, size_t len)
{
	static const char *const units[] = { "GiB", "MiB", "KiB" };
	int shift = 30;

	for (size_t i = 0; i < HS_ARRAY_SIZE(units); i++, shift -= 10) {
		if (bytes < (1ull << shift))
			continue;
		if (bytes % (1ull << shift) == 0)
			snprintf(buf, len, "%llu %s", (unsigned long long)(bytes >> shift), units[i]);
		else
			snprintf(buf, len, "%.1f %s", (double)bytes / (double)(1ull << shift), units[i]);
		return buf;
	}
	snprintf(buf, len, "%llu B", (unsigned long long)bytes);
	return buf;
}

uint64_t hs_mapped_bytes(int fd)
{
	struct stat sb;
	char line[512];
	uint64_t total = 0;
	FILE *fp;

	if (fd < 0 || fstat(fd, &sb) < 0 || !(fp = fopen("/proc/self/maps", "re")))
		return 0;
	while (fgets(line, sizeof(line), fp)) {
		uint64_t lo, hi, ino;
		unsigned maj, min;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %*s %x:%x %" SCNu64,
			   &lo, &hi, &maj, &min, &ino) == 5 && ino == (uint64_t)sb.st_ino &&
		    maj == major(sb.st_dev) && min == minor(sb.st_dev) && hi > lo)
			total += hi - lo;
	}
	fclose(fp);
	return total;
}

const char *hs_fmt_bps(double bps, char *buf, size_t len)
{
	static const char units[] = { 'k', 'M', 'G', 'T' };
	int u = -1;

	while (bps >= 999.5 && u < 3) {
		bps /= 1000;
		u++;
	}
	if (u < 0)
		snprintf(buf, len, "%.0f", bps);
	else
		snprintf(buf, len, bps >= 99.95 ? "%.0f%c" : bps >= 9.995 ? "%.1f%c" : "%.2f%c",
			 bps, units[u]);
	return buf;
}

const char *hs_fmt_duration(uint64_t ns, char *buf, size_t len)
{
	if (ns < 1000)
		snprintf(buf, len, "%lluns", (unsigned long long)ns);
	else if (ns < 1000000)
		snprintf(buf, len, "%.1fus", ns / 1e3);
	else if (ns < 1000000000ULL)
		snprintf(buf, len, "%.3fms", ns / 1e6);
	else
		snprintf(buf, len, "%.3fs", ns / 1e9);
	return buf;
}

const char *hs_fmt_delta(int64_t ns, char *buf, size_t len)
{
	if (ns >= 0 || len < 2)
		return hs_fmt_duration(ns < 0 ? 0 : (uint64_t)ns, buf, len);
	buf[0] = '-';
	hs_fmt_duration(-(uint64_t)ns, buf + 1, len - 1);
	return buf;
}

const char *hs_fmt_ts(uint64_t ts_ns, char *buf, size_t len)
{
	snprintf(buf, len, "%llu.%09llu", (unsigned long long)(ts_ns / HS_NS_PER_SEC),
		 (unsigned long long)(ts_ns % HS_NS_PER_SEC));
	return buf;
}

/* the one display setting every renderer reads, engine and verbs alike */
static bool tz_local;

void hs_set_tz_local(bool local)
{
	tz_local = local;
}

bool hs_tz_local(void)
{
	return tz_local;
}

const char *hs_fmt_time(uint64_t ts_ns, char *buf, size_t len)
{
	time_t s = (time_t)(ts_ns / HS_NS_PER_SEC);
	struct tm tm;
	char day[24];

	if (!(tz_local ? localtime_r(&s, &tm) : gmtime_r(&s, &tm)) ||
	    strftime(day, sizeof(day), "%Y-%m-%d %H:%M:%S", &tm) == 0) {
		snprintf(buf, len, "-");
		return buf;
	}
	snprintf(buf, len, "%s.%06u", day, (unsigned)(ts_ns % HS_NS_PER_SEC / 1000));
	return buf;
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * HS_NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

uint64_t hs_mono_ns(void) { return clock_ns(CLOCK_MONOTONIC); }
uint64_t hs_wall_ns(void) { return clock_ns(CLOCK_REALTIME); }

void *hs_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p) {
		fprintf(stderr, "hopscope: out of memory\n");
		abort();
	}
	return p;
}

/* a write to each page that changes nothing */
static void touch_pages(void *p, size_t len)
{
	volatile uint8_t *b = p;

	for (size_t i = 0; i < len; i += 4096)
		b[i] = b[i];
}

#ifdef HS_ASAN
/* AddressSanitizer checks heap blocks, not mappings of our own: taken from
 * the heap, aligned as the mappings' are for the types they hold. A large
 * block of its calloc is (behind a redzone of up to 2 KB) and comes from
 * mmap untouched, backed as it is first touched as the mappings are; a
 * block that is not aligned is taken again aligned, and zeroed */
void *hs_xcalloc_big(size_t n, size_t size)
{
	void *p = hs_xcalloc(n, size);

	if ((uintptr_t)p % HS_BIG_ALIGN == 0)
		return p;
	free(p);
	n = n ? n : 1;
	size = size ? size : 1;
	if (posix_memalign(&p, HS_BIG_ALIGN, n * size) != 0) {
		fprintf(stderr, "hopscope: out of memory\n");
		abort();
	}
	return memset(p, 0, n * size);
}

void hs_populate_big(void *p, size_t n, size_t size)
{
	if (p)
		touch_pages(p, n * size);
}

void hs_free_big(void *p, size_t n, size_t size)
{
	free(p);
}
#else
/* Anonymous memory comes zeroed and is backed as it is touched; mapped
 * at a huge-page boundary and rounded up to whole huge pages, so that all
 * of it can take them */
static size_t big_len(size_t n, size_t size)
{
	if (size && n > (SIZE_MAX - 2 * HS_HUGE_PAGE) / size) {
		fprintf(stderr, "hopscope: out of memory\n");
		abort();
	}
	return ((n ? n : 1) * (size ? size : 1) + HS_HUGE_PAGE - 1) & ~(size_t)(HS_HUGE_PAGE - 1);
}

void *hs_xcalloc_big(size_t n, size_t size)
{
	size_t len = big_len(n, size);
	char *m = mmap(NULL, len + HS_HUGE_PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	if (m == MAP_FAILED) {
		fprintf(stderr, "hopscope: out of memory\n");
		abort();
	}
	/* keep the aligned part, give back what lies either side */
	uintptr_t a = ((uintptr_t)m + HS_HUGE_PAGE - 1) & ~(uintptr_t)(HS_HUGE_PAGE - 1);
	size_t head = a - (uintptr_t)m, tail = HS_HUGE_PAGE - head;
	if (head)
		munmap(m, head);
	if (tail)
		munmap((char *)a + len, tail);
#ifdef MADV_HUGEPAGE
	(void)madvise((void *)a, len, MADV_HUGEPAGE);
#endif
	return (void *)a;
}

void hs_free_big(void *p, size_t n, size_t size)
{
	if (p)
		munmap(p, big_len(n, size));
}

/* one call, which takes the huge pages asked for; a kernel older than
 * MADV_POPULATE_WRITE (5.14) refuses it, and each page is written */
void hs_populate_big(void *p, size_t n, size_t size)
{
	if (!p)
		return;
#ifdef MADV_POPULATE_WRITE
	if (madvise(p, big_len(n, size), MADV_POPULATE_WRITE) == 0)
		return;
#endif
	touch_pages(p, big_len(n, size));
}
#endif

char *hs_xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = hs_xcalloc(1, n);

	memcpy(p, s, n);
	return p;
}

const char *hs_clip(const char *s, size_t max, char *buf, size_t len)
{
	size_t n = strnlen(s, max + 1);

	if (len < sizeof("..."))
		return "";
	if (max > len - sizeof("..."))
		max = len - sizeof("...");
	if (n <= max && n < len) {
		memcpy(buf, s, n);
		buf[n] = '\0';
		return buf;
	}
	/* back to the start of the character cut, at most 3 bytes back */
	n = max;
	while (n > 0 && max - n < 3 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	memcpy(buf, s, n);
	memcpy(buf + n, "...", sizeof("..."));
	return buf;
}

int hs_errf(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -1;
}

#define FILE_ID_SPAN 65536

int hs_file_identity(const char *path, char *buf, size_t len)
{
	unsigned char *b = hs_xcalloc(1, FILE_ID_SPAN);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	uint64_t head = 14695981039346656037ULL, tail = head;
	ssize_t n;
	int rc = -1;

	if (fd < 0)
		goto out;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		goto out;
	if ((n = pread(fd, b, FILE_ID_SPAN, 0)) < 0)
		goto out;
	head = hs_fnv1a(head, b, (size_t)n);
	if (st.st_size > FILE_ID_SPAN &&
	    (n = pread(fd, b, FILE_ID_SPAN, st.st_size - FILE_ID_SPAN)) < 0)
		goto out;
	tail = hs_fnv1a(tail, b, (size_t)n);
	snprintf(buf, len, "%lld:%016llx:%016llx", (long long)st.st_size,
		 (unsigned long long)head, (unsigned long long)tail);
	rc = 0;
out:
	if (fd >= 0) {
		int e = errno;
		close(fd);
		errno = e;
	}
	free(b);
	return rc;
}
