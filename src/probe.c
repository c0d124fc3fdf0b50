/* probe.c - guided probes: the spec, crafting with libnet, the signature,
 * sending, and matching the probe's own mirrored copies to it
 *
 * A probe run sends spec.count packets spec.interval apart from one raw
 * socket, then waits until every packet has a closed trace or spec.timeout
 * has passed since the last one. Results print above the prompt as traces
 * close; a summary, the history rows and the verb's status come at the end.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <limits.h>
#include <arpa/inet.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <libnet.h>

#include "cmd.h"
#include "console.h"
#include "probe.h"

#define MAX_WORDS 64
#define DEFAULT_INTERVAL_NS (100 * 1000000ULL)
#define TRACEROUTE_INTERVAL_NS (20 * 1000000ULL)
#define IPV4_H 20

/* ---- spec parsing ------------------------------------------------------------ */

struct pstate {
	const char *verb;
	char *err;
	size_t errlen;
};

__attribute__((format(printf, 2, 3)))
static int perr(struct pstate *ps, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(ps->err, ps->errlen, "%s: ", ps->verb);

	if (n < 0 || (size_t)n >= ps->errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(ps->err + n, ps->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

/* "SA" -> SYN|ACK; "none" -> 0 */
static int parse_tcp_flags(const char *w, uint8_t *out)
{
	static const char letters[] = "FSRPAUEC";
	uint8_t f = 0;

	if (strcmp(w, "none") == 0) {
		*out = 0;
		return 0;
	}
	if (!*w)
		return -1;
	for (const char *p = w; *p; p++) {
		const char *q = strchr(letters, *p);
		if (!q || !*p)
			return -1;
		f |= (uint8_t)(1u << (q - letters));
	}
	*out = f;
	return 0;
}

static int find_host(const struct hs_topo *t, const char *name)
{
	if (!t)
		return -1;
	for (int i = 0; i < t->nhosts; i++)
		if (strcmp(t->hosts[i].name, name) == 0)
			return i;
	return -1;
}

/* ADDR[:PORT] or HOST[:PORT]; IPv4 only */
static int parse_endpoint(struct pstate *ps, const struct hs_topo *topo, const char *w,
			  struct hs_addr *a, uint16_t *port, bool *have_port)
{
	char host[HS_ADDRSTRLEN + HS_NAME_MAX];
	uint64_t v;

	*have_port = false;
	if (hs_addr_parse(w, a) == 0 && a->af == 6)
		return perr(ps, "'%s' is not an IPv4 address (probes are IPv4)", w);
	if (strlen(w) >= sizeof(host) || !*w)
		return perr(ps, "'%s' is not an address or a known host", w);
	strcpy(host, w);
	char *colon = strchr(host, ':');
	if (colon) {
		*colon = '\0';
		if (hs_parse_uint(colon + 1, UINT64_MAX, &v) < 0)
			return perr(ps, "'%s': bad port '%s'", w, colon + 1);
		if (v > 65535)
			return perr(ps, "'%s': port out of range (0-65535)", w);
		*port = (uint16_t)v;
		*have_port = true;
	}
	if (hs_addr_parse(host, a) == 0) {
		if (a->af != 4)
			return perr(ps, "'%s' is not an IPv4 address (probes are IPv4)", w);
		return 0;
	}
	int h = find_host(topo, host);
	if (h >= 0 && topo->hosts[h].addr.af == 4) {
		*a = topo->hosts[h].addr;
		return 0;
	}
	return perr(ps, "'%s' is not an address or a known host", w);
}

static int parse_switch(struct pstate *ps, const struct hs_topo *topo, const char *key,
			const char *name, int *sw, struct hs_addr *lo)
{
	if (!topo)
		return perr(ps, "'%s %s' needs a topology (topo load FILE)", key, name);
	int i = hs_topo_switch_by_name(topo, name);
	if (i < 0)
		return perr(ps, "unknown switch '%s'", name);
	if (topo->sw[i].loopback.af != 4)
		return perr(ps, "switch '%s' has no IPv4 loopback", name);
	*sw = i;
	*lo = topo->sw[i].loopback;
	return 0;
}

static int parse_via(struct pstate *ps, const struct hs_topo *topo, const char *list,
		     struct hs_probe_spec *s)
{
	char buf[HS_PROBE_MAX_VIA * (HS_NAME_MAX + 1) + 1];
	char *save = NULL;

	if (strlen(list) >= sizeof(buf))
		return perr(ps, "'via %s': at most %d switches", list, HS_PROBE_MAX_VIA);
	strcpy(buf, list);
	size_t n = strlen(buf);
	if (n == 0 || buf[0] == ',' || buf[n - 1] == ',' || strstr(buf, ",,"))
		return perr(ps, "bad switch list 'via %s' (e.g. via leaf1,spine2,leaf3)", list);
	s->nvia = 0;
	for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		if (s->nvia >= HS_PROBE_MAX_VIA)
			return perr(ps, "'via %s': at most %d switches", list, HS_PROBE_MAX_VIA);
		if (parse_switch(ps, topo, "via", w, &s->via[s->nvia], &s->via_addr[s->nvia]) < 0)
			return -1;
		s->nvia++;
	}
	return 0;
}

static int parse_num(struct pstate *ps, const char *key, const char *val, uint64_t lo,
		     uint64_t hi, uint64_t *out)
{
	if (hs_parse_uint(val, UINT64_MAX, out) < 0)
		return perr(ps, "'%s %s' is not a number", key, val);
	if (*out < lo || *out > hi)
		return perr(ps, "'%s %s' out of range (%" PRIu64 "-%" PRIu64 ")", key, val, lo, hi);
	return 0;
}

static int parse_dur(struct pstate *ps, const char *key, const char *val, uint64_t *out)
{
	if (hs_parse_duration(val, out) < 0)
		return perr(ps, "bad duration '%s %s' (e.g. 100ms, 2s)", key, val);
	if (*out > 3600 * HS_NS_PER_SEC)
		return perr(ps, "'%s %s' out of range (at most 1h)", key, val);
	return 0;
}

/* words split around '>' so that "a>b", "a >b" and "a > b" read the same */
struct words {
	char buf[2048];
	char *w[MAX_WORDS];
	int n;
};

static int split_words(struct pstate *ps, int argc, char **argv, struct words *ws)
{
	size_t used = 0;

	ws->n = 0;
	for (int i = 0; i < argc; i++) {
		const char *p = argv[i];
		while (*p) {
			const char *gt = strchr(p, '>');
			size_t len = gt ? (size_t)(gt - p) : strlen(p);
			for (int part = 0; part < 2; part++) {
				size_t l = part == 0 ? len : 1;
				const char *src = part == 0 ? p : ">";
				if (l == 0 || (part == 1 && !gt))
					continue;
				if (ws->n >= MAX_WORDS || used + l + 1 > sizeof(ws->buf))
					return perr(ps, "too many words");
				memcpy(ws->buf + used, src, l);
				ws->buf[used + l] = '\0';
				ws->w[ws->n++] = ws->buf + used;
				used += l + 1;
			}
			p += len + (gt ? 1 : 0);
		}
	}
	return 0;
}

static uint16_t l4_hdr_len(uint8_t proto)
{
	return proto == 6 ? LIBNET_TCP_H : 8;
}

uint16_t hs_probe_min_len(const struct hs_probe_spec *s)
{
	return (uint16_t)(IPV4_H + l4_hdr_len(s->proto) + HS_PROBE_SIG_LEN);
}

uint16_t hs_probe_max_len(const struct hs_probe_spec *s)
{
	return (uint16_t)(HS_PROBE_MTU - IPV4_H * s->nvia);
}

static void spec_defaults(struct hs_probe_spec *s)
{
	memset(s, 0, sizeof(*s));
	s->ttl = 64;
	s->count = 1;
	s->interval_ns = DEFAULT_INTERVAL_NS;
	s->link_a = s->link_b = -1;
}

/* option bits, to refuse a field given twice */
enum {
	O_PROTO = 1 << 0, O_FLAGS = 1 << 1, O_TTL = 1 << 2, O_DSCP = 1 << 3, O_ID = 1 << 4,
	O_LEN = 1 << 5, O_FROM = 1 << 6, O_VIA = 1 << 7, O_COUNT = 1 << 8,
	O_INTERVAL = 1 << 9, O_TIMEOUT = 1 << 10, O_EXPECT = 1 << 11, O_ECN = 1 << 12,
};

static const struct {
	const char *name;
	unsigned bit;
} value_opts[] = {
	{ "flags", O_FLAGS }, { "ttl", O_TTL }, { "dscp", O_DSCP }, { "ecn", O_ECN },
	{ "id", O_ID }, { "len", O_LEN }, { "from", O_FROM }, { "via", O_VIA },
	{ "count", O_COUNT }, { "interval", O_INTERVAL }, { "timeout", O_TIMEOUT },
	{ "--expect", O_EXPECT },
};

static unsigned value_opt(const char *w)
{
	for (size_t i = 0; i < HS_ARRAY_SIZE(value_opts); i++)
		if (strcmp(w, value_opts[i].name) == 0)
			return value_opts[i].bit;
	return 0;
}

static int proto_of(const char *w)
{
	if (strcmp(w, "tcp") == 0)
		return 6;
	if (strcmp(w, "udp") == 0)
		return 17;
	if (strcmp(w, "icmp") == 0)
		return 1;
	return 0;
}

int hs_probe_parse(int argc, char **argv, const struct hs_topo *topo,
		   struct hs_probe_spec *s, char *err, size_t errlen)
{
	struct pstate ps = { "probe", err, errlen };
	struct words ws;
	unsigned seen = 0;
	bool have_src = false, have_dst = false, have_sport = false, have_dport = false;
	const char *src_word = NULL, *dst_word = NULL, *flags_word = NULL, *len_word = NULL;
	uint64_t v, dscp = 0, ecn = 0;
	int i = 0;

	spec_defaults(s);
	if (split_words(&ps, argc, argv, &ws) < 0)
		return -1;
	char **w = ws.w;
	int n = ws.n;

	if (n > 0 && strcmp(w[0], "link") == 0) {
		struct hs_addr lo;
		s->kind = HS_PROBE_LINK;
		if (n < 3)
			return perr(&ps, "'link' needs two switches (link A B)");
		if (parse_switch(&ps, topo, "link", w[1], &s->link_a, &lo) < 0 ||
		    parse_switch(&ps, topo, "link", w[2], &s->link_b, &lo) < 0)
			return -1;
		if (s->link_a == s->link_b)
			return perr(&ps, "'link %s %s' needs two different switches", w[1], w[2]);
		if (topo->nlinks > 0 && hs_topo_link(topo, s->link_a, s->link_b) < 0)
			return perr(&ps, "no link between '%s' and '%s'", w[1], w[2]);
		i = 3;
	}

	for (; i < n; i++) {
		const char *k = w[i];
		unsigned bit;
		int proto = proto_of(k);

		if (proto) {
			if (seen & O_PROTO)
				return perr(&ps, "protocol given twice ('%s')", k);
			seen |= O_PROTO;
			s->proto = (uint8_t)proto;
		} else if (strcmp(k, ">") == 0) {
			if (s->kind == HS_PROBE_LINK)
				return perr(&ps, "'>' cannot be used with 'link' (it goes A -> B -> A)");
			if (have_dst)
				return perr(&ps, "'>' given twice");
			if (i + 1 >= n)
				return perr(&ps, "'>' needs a destination (> DST[:PORT])");
			dst_word = w[++i];
			if (parse_endpoint(&ps, topo, dst_word, &s->dst, &s->dport, &have_dport) < 0)
				return -1;
			have_dst = true;
		} else if (strcmp(k, "--badsum") == 0) {
			s->badsum = true;
		} else if (strcmp(k, "--json") == 0) {
			s->json = true;
		} else if ((bit = value_opt(k)) != 0) {
			if (i + 1 >= n)
				return perr(&ps, "'%s' needs a value", k);
			if (seen & bit)
				return perr(&ps, "'%s' given twice", k);
			seen |= bit;
			const char *val = w[++i];
			switch (bit) {
			case O_FLAGS:
				if (parse_tcp_flags(val, &s->tcp_flags) < 0)
					return perr(&ps, "bad TCP flags 'flags %s' (letters F S R P A U E C)",
						    val);
				flags_word = val;
				break;
			case O_TTL:
				if (parse_num(&ps, k, val, 1, 255, &v) < 0)
					return -1;
				s->ttl = (uint8_t)v;
				break;
			case O_DSCP:
				if (parse_num(&ps, k, val, 0, 63, &dscp) < 0)
					return -1;
				break;
			case O_ECN:
				if (parse_num(&ps, k, val, 0, 3, &ecn) < 0)
					return -1;
				break;
			case O_ID:
				if (parse_num(&ps, k, val, 0, 65535, &v) < 0)
					return -1;
				s->have_ip_id = true;
				s->ip_id = (uint16_t)v;
				break;
			case O_LEN:
				if (hs_parse_uint(val, HS_PROBE_MTU * 100, &v) < 0)
					return perr(&ps, "'len %s' is not a number", val);
				s->len = v > UINT16_MAX ? UINT16_MAX : (uint16_t)v;
				len_word = val;
				break;
			case O_FROM:
				if (seen & O_VIA)
					return perr(&ps, "'from %s' and 'via' cannot be combined", val);
				if (s->kind == HS_PROBE_LINK)
					return perr(&ps, "'from %s' cannot be used with 'link'", val);
				if (parse_switch(&ps, topo, "from", val, &s->via[0], &s->via_addr[0]) < 0)
					return -1;
				s->nvia = 1;
				s->from = true;
				break;
			case O_VIA:
				if (seen & O_FROM)
					return perr(&ps, "'via %s' and 'from' cannot be combined", val);
				if (s->kind == HS_PROBE_LINK)
					return perr(&ps, "'via %s' cannot be used with 'link'", val);
				if (parse_via(&ps, topo, val, s) < 0)
					return -1;
				break;
			case O_COUNT:
				if (parse_num(&ps, k, val, 1, HS_PROBE_MAX_COUNT, &v) < 0)
					return -1;
				s->count = (unsigned)v;
				break;
			case O_INTERVAL:
				if (parse_dur(&ps, k, val, &s->interval_ns) < 0)
					return -1;
				break;
			case O_TIMEOUT:
				if (parse_dur(&ps, k, val, &s->timeout_ns) < 0)
					return -1;
				if (s->timeout_ns == 0)
					return perr(&ps, "'timeout %s' must be more than 0", val);
				break;
			case O_EXPECT:
				if (strcmp(val, "delivered") == 0)
					s->expect = HS_EXPECT_DELIVERED;
				else if (strcmp(val, "lost") == 0)
					s->expect = HS_EXPECT_LOST;
				else
					return perr(&ps, "bad value '--expect %s' (delivered or lost)", val);
				break;
			}
		} else if (s->kind == HS_PROBE_PLAIN && !have_src && !have_dst) {
			src_word = k;
			if (parse_endpoint(&ps, topo, k, &s->src, &s->sport, &have_sport) < 0) {
				/* a word that is neither a field nor an address */
				if (strspn(k, "abcdefghijklmnopqrstuvwxyz-") == strlen(k))
					return perr(&ps, "unknown field '%s'", k);
				return -1;
			}
			have_src = true;
		} else if (s->kind == HS_PROBE_PLAIN && have_src && !have_dst) {
			return perr(&ps, "unexpected '%s' (the destination follows '>')", k);
		} else {
			return perr(&ps, "unknown field '%s'", k);
		}
	}

	if (s->kind == HS_PROBE_LINK) {
		/* A -> B by two IP-in-IP layers; the probe itself goes back to A's
		 * loopback, so A sees it twice with different TTLs */
		s->via[0] = s->link_a;
		s->via_addr[0] = topo->sw[s->link_a].loopback;
		s->via[1] = s->link_b;
		s->via_addr[1] = topo->sw[s->link_b].loopback;
		s->nvia = 2;
		s->dst = topo->sw[s->link_a].loopback;
		if (!(seen & O_PROTO))
			s->proto = 17;
	} else if (!have_dst) {
		return perr(&ps, "missing destination ('> DST[:PORT]')");
	}
	if (!(seen & O_PROTO))
		s->proto = 6;

	if (s->proto != 6 && flags_word)
		return perr(&ps, "'flags %s' needs tcp", flags_word);
	if (s->proto == 6 && !flags_word)
		s->tcp_flags = 0x02;	/* SYN */
	if (s->proto == 1 && (have_sport || have_dport))
		return perr(&ps, "icmp has no ports ('%s')", have_dport ? dst_word : src_word);
	if (!have_dport)
		s->dport = s->proto == 6 ? 80 : s->proto == 17 ? 33434 : 0;
	if (!have_sport)
		s->sport = 0;

	bool have_analyzer = topo && topo->analyzer.af == 4;
	if (!have_src) {
		if (!have_analyzer)
			return perr(&ps, "no source given and no analyzer address in the topology "
				    "('SRC > DST')");
		s->src = topo->analyzer;
	}
	s->outer_src = have_analyzer ? topo->analyzer : s->src;

	if (s->len) {
		uint16_t lo = hs_probe_min_len(s), hi = hs_probe_max_len(s);
		if (s->len < lo || s->len > hi)
			return perr(&ps, "'len %s' out of range (%u-%u)", len_word, lo, hi);
	}
	s->tos = (uint8_t)(dscp << 2 | ecn);
	return 0;
}

/* a source for 'traceroute HOST': a host of the topology behind another
 * leaf than HOST's (so the packets cross the fabric), else the analyzer's
 * address, else this machine's own address toward HOST */
static int default_source(struct pstate *ps, const struct hs_topo *topo,
			  const struct hs_addr *dst, struct hs_addr *src)
{
	if (topo) {
		int dleaf = hs_topo_leaf_for(topo, dst), any = -1;
		for (int i = 0; i < topo->nhosts; i++) {
			const struct hs_host *h = &topo->hosts[i];
			if (h->addr.af != 4 || hs_addr_eq(&h->addr, dst) ||
			    hs_topo_leaf_for(topo, &h->addr) < 0)
				continue;
			if (hs_topo_leaf_for(topo, &h->addr) != dleaf) {
				*src = h->addr;
				return 0;
			}
			if (any < 0)
				any = i;
		}
		if (any >= 0) {
			*src = topo->hosts[any].addr;
			return 0;
		}
		if (topo->analyzer.af == 4) {
			*src = topo->analyzer;
			return 0;
		}
	}
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(33434) }, me;
	socklen_t len = sizeof(me);
	char ab[HS_ADDRSTRLEN];
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	memcpy(&to.sin_addr, dst->a, 4);
	if (fd < 0 || connect(fd, (const struct sockaddr *)&to, sizeof(to)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&me, &len) < 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return perr(ps, "no source for '%s': %s (give one: SRC:SPORT > DST:DPORT)",
			    hs_addr_str(dst, ab, sizeof(ab)), strerror(e));
	}
	close(fd);
	memset(src, 0, sizeof(*src));
	src->af = 4;
	memcpy(src->a, &me.sin_addr, 4);
	return 0;
}

int hs_traceroute_parse(int argc, char **argv, const struct hs_topo *topo,
			struct hs_probe_spec *s, char *err, size_t errlen)
{
	struct pstate ps = { "traceroute", err, errlen };
	struct words ws;
	struct hs_addr first = { 0 };
	uint16_t first_port = 0;
	bool have_first = false, have_dst = false, hp1 = false, hp2 = false, gt = false;
	bool have_from = false, have_count = false;
	const char *first_word = NULL;
	uint64_t v;

	spec_defaults(s);
	s->kind = HS_PROBE_TRACEROUTE;
	s->proto = 6;
	s->max_ttl = HS_TRACEROUTE_MAX_TTL;
	s->interval_ns = TRACEROUTE_INTERVAL_NS;
	s->round_ns = HS_NS_PER_SEC;
	if (split_words(&ps, argc, argv, &ws) < 0)
		return -1;
	for (int i = 0; i < ws.n; i++) {
		const char *k = ws.w[i];
		if (strcmp(k, ">") == 0) {
			if (gt || !have_first)
				return perr(&ps, "unexpected '>' (SRC:SPORT > DST:DPORT)");
			gt = true;
		} else if (strcmp(k, "--json") == 0) {
			s->json = true;
		} else if (strcmp(k, "--report") == 0) {
			s->report = true;
		} else if (strcmp(k, "proto") == 0 || strcmp(k, "max-ttl") == 0 ||
			   strcmp(k, "timeout") == 0 || strcmp(k, "from") == 0 ||
			   strcmp(k, "count") == 0 || strcmp(k, "interval") == 0) {
			if (i + 1 >= ws.n)
				return perr(&ps, "'%s' needs a value", k);
			const char *val = ws.w[++i];
			if (strcmp(k, "proto") == 0) {
				int p = proto_of(val);
				if (p != 6 && p != 17)
					return perr(&ps, "'proto %s' not supported (tcp or udp)", val);
				s->proto = (uint8_t)p;
			} else if (strcmp(k, "max-ttl") == 0) {
				if (parse_num(&ps, k, val, 1, HS_TRACEROUTE_MAX_TTL, &v) < 0)
					return -1;
				s->max_ttl = (uint8_t)v;
			} else if (strcmp(k, "count") == 0) {
				if (parse_num(&ps, k, val, 1, HS_PROBE_MAX_COUNT, &v) < 0)
					return -1;
				s->rounds = (unsigned)v;
				have_count = true;
			} else if (strcmp(k, "interval") == 0) {
				if (parse_dur(&ps, k, val, &s->round_ns) < 0)
					return -1;
				if (s->round_ns < 100 * 1000000ULL)
					return perr(&ps, "'interval %s' out of range (at least 100ms)", val);
			} else if (strcmp(k, "timeout") == 0) {
				if (parse_dur(&ps, k, val, &s->timeout_ns) < 0)
					return -1;
			} else {
				if (parse_switch(&ps, topo, "from", val, &s->via[0], &s->via_addr[0]) < 0)
					return -1;
				s->nvia = 1;
				s->from = true;
				have_from = true;
			}
		} else if (!have_first) {
			if (parse_endpoint(&ps, topo, k, &first, &first_port, &hp1) < 0)
				return -1;
			first_word = k;
			have_first = true;
		} else if (!have_dst && gt) {
			if (parse_endpoint(&ps, topo, k, &s->dst, &s->dport, &hp2) < 0)
				return -1;
			if (!hp2)
				return perr(&ps, "'%s' needs a port (DST:DPORT)", k);
			have_dst = true;
		} else if (!have_dst) {
			return perr(&ps, "unexpected '%s' (the destination follows '>')", k);
		} else {
			return perr(&ps, "unknown field '%s'", k);
		}
	}
	if (!have_first)
		return perr(&ps, "needs a destination (HOST[:PORT], or SRC:SPORT > DST:DPORT)");
	if (gt && !have_dst)
		return perr(&ps, "'>' needs a destination (> DST:DPORT)");
	if (have_dst) {
		/* a flow: its own 5-tuple */
		if (!hp1)
			return perr(&ps, "'%s' needs a port (SRC:SPORT)", first_word);
		s->src = first;
		s->sport = first_port;
		/* once, its path against the flow's own traces; rounds on request */
		s->table = have_count || s->report;
	} else {
		s->dst = first;
		s->dport = hp1 ? first_port : s->proto == 6 ? 80 : 33434;
		if (default_source(&ps, topo, &s->dst, &s->src) < 0)
			return -1;
		s->sport = 0;	/* chosen from the probe id */
		s->table = true;
	}
	if (!s->table)
		s->rounds = 1;
	s->tcp_flags = 0x02;
	if (topo && topo->analyzer.af == 4)
		s->outer_src = topo->analyzer;
	else
		s->outer_src = s->src;
	/* in through the source's leaf, so the packets take the flow's ECMP path */
	if (!have_from && topo) {
		int leaf = hs_topo_leaf_for(topo, &s->src);
		if (leaf >= 0 && topo->sw[leaf].loopback.af == 4) {
			s->via[0] = leaf;
			s->via_addr[0] = topo->sw[leaf].loopback;
			s->nvia = 1;
			s->from = true;
		}
	}
	s->count = s->rounds ? s->rounds * s->max_ttl : UINT_MAX;
	return 0;
}

/* ---- crafting ---------------------------------------------------------------- */

static void put32(uint8_t *b, uint32_t v)
{
	b[0] = (uint8_t)(v >> 24);
	b[1] = (uint8_t)(v >> 16);
	b[2] = (uint8_t)(v >> 8);
	b[3] = (uint8_t)v;
}

static uint32_t get32(const uint8_t *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

void hs_probe_sig_write(uint8_t *b, uint32_t probe_id, uint32_t seq, uint64_t sent_ns)
{
	put32(b, HS_PROBE_MAGIC);
	put32(b + 4, probe_id);
	put32(b + 8, seq);
	put32(b + 12, (uint32_t)(sent_ns >> 32));
	put32(b + 16, (uint32_t)sent_ns);
}

bool hs_probe_sig_read(const uint8_t *b, size_t n, uint32_t *probe_id, uint32_t *seq,
		       uint64_t *sent_ns)
{
	if (!b || n < HS_PROBE_SIG_LEN || get32(b) != HS_PROBE_MAGIC)
		return false;
	uint32_t id = get32(b + 4);
	if (id == 0)
		return false;
	*probe_id = id;
	*seq = get32(b + 8);
	*sent_ns = (uint64_t)get32(b + 12) << 32 | get32(b + 16);
	return true;
}

bool hs_probe_sig_parse_seq(const struct hs_pkt *p, uint32_t *probe_id, uint32_t *seq,
			    uint64_t *sent_ns)
{
	const uint8_t *b = NULL;
	uint32_t n = 0;

	if (!(p->have & HS_HAVE_IP) || p->key.src.af != 4)
		return false;
	if (p->key.proto == 6 || p->key.proto == 17) {
		b = p->l4_payload;
		n = p->l4_payload_caplen;
	} else if (p->key.proto == 1 && (p->have & HS_HAVE_ICMP) &&
		   (p->icmp_type == 8 || p->icmp_type == 0)) {
		/* echo data follows the 8-byte echo header */
		if (!p->l3 || p->l3_caplen < IPV4_H)
			return false;
		uint32_t ihl = (uint32_t)(p->l3[0] & 0x0f) * 4;
		if (ihl < IPV4_H || p->l3_caplen < ihl + 8)
			return false;
		b = p->l3 + ihl + 8;
		n = p->l3_caplen - ihl - 8;
	}
	return hs_probe_sig_read(b, n, probe_id, seq, sent_ns);
}

bool hs_probe_sig_parse(const struct hs_pkt *p, uint32_t *probe_id, uint64_t *sent_ns)
{
	uint32_t seq;

	return hs_probe_sig_parse_seq(p, probe_id, &seq, sent_ns);
}

void hs_probe_pkt_init(const struct hs_probe_spec *s, uint32_t probe_id, uint32_t seq,
		       uint64_t sent_ns, struct hs_probe_pkt *pk)
{
	memset(pk, 0, sizeof(*pk));
	pk->probe_id = probe_id;
	pk->seq = seq;
	pk->sent_ns = sent_ns;
	/* distinct IP IDs and TCP sequence numbers keep the packets of one
	 * probe in separate traces and let a trace be matched to its packet */
	if (s->have_ip_id) {
		pk->ip_id = s->ip_id;
	} else {
		pk->ip_id = (uint16_t)((probe_id * 2654435761u >> 16) + seq);
		if (pk->ip_id == 0)
			pk->ip_id = 1;
	}
	pk->tcp_seq = probe_id * 0x9e3779b1u + seq * 0x10001u;
	pk->sport = s->sport ? s->sport : (uint16_t)(32768 + probe_id % 28000);
	if (s->kind != HS_PROBE_TRACEROUTE)
		pk->ttl = s->ttl;
	else	/* rounds of TTL 1..max_ttl */
		pk->ttl = (uint8_t)((s->max_ttl ? seq % s->max_ttl : seq) + 1);
}

static uint32_t v4(const struct hs_addr *a)
{
	uint32_t x;

	memcpy(&x, a->a, 4);	/* network order, as libnet wants */
	return x;
}

size_t hs_probe_craft(struct libnet_context *l, const struct hs_probe_spec *s,
		      const struct hs_probe_pkt *pk, uint8_t *buf, size_t cap,
		      char *err, size_t errlen)
{
	uint8_t payload[HS_PROBE_MTU];
	uint16_t len = s->len ? s->len : hs_probe_min_len(s);
	uint16_t l4h = l4_hdr_len(s->proto);
	libnet_ptag_t t;

	if (len < hs_probe_min_len(s) || len > hs_probe_max_len(s) || s->nvia > HS_PROBE_MAX_VIA) {
		snprintf(err, errlen, "probe length %u out of range (%u-%u)", len,
			 hs_probe_min_len(s), hs_probe_max_len(s));
		return 0;
	}
	uint32_t plen = (uint32_t)len - IPV4_H - l4h;
	hs_probe_sig_write(payload, pk->probe_id, pk->seq, pk->sent_ns);
	for (uint32_t i = HS_PROBE_SIG_LEN; i < plen; i++)
		payload[i] = (uint8_t)i;

	libnet_clear_packet(l);
	switch (s->proto) {
	case 6:
		t = libnet_build_tcp(pk->sport, s->dport, pk->tcp_seq,
				     (s->tcp_flags & 0x10) ? ~pk->tcp_seq : 0, s->tcp_flags,
				     65535, 0, 0, (uint16_t)(l4h + plen), payload, plen, l, 0);
		break;
	case 17:
		t = libnet_build_udp(pk->sport, s->dport, (uint16_t)(l4h + plen), 0, payload,
				     plen, l, 0);
		break;
	case 1:
		t = libnet_build_icmpv4_echo(ICMP_ECHO, 0, 0, (uint16_t)pk->probe_id,
					     (uint16_t)pk->seq, payload, plen, l, 0);
		break;
	default:
		snprintf(err, errlen, "protocol %u cannot be crafted", s->proto);
		return 0;
	}
	if (t == -1)
		goto fail;
	t = libnet_build_ipv4(len, (uint8_t)(s->tos | HS_DEBUG_TOS_BIT), pk->ip_id, 0, pk->ttl,
			      s->proto, 0, v4(&s->src), v4(&s->dst), NULL, 0, l, 0);
	if (t == -1)
		goto fail;
	/* IP-in-IP, innermost layer first: the last one built is the outermost */
	uint16_t total = len;
	for (int k = s->nvia - 1; k >= 0; k--) {
		total = (uint16_t)(total + IPV4_H);
		t = libnet_build_ipv4(total, HS_DEBUG_TOS_BIT, (uint16_t)(pk->ip_id + 0x100 * (k + 1)),
				      0, 64, IPPROTO_IPIP, 0, v4(&s->outer_src),
				      v4(&s->via_addr[k]), NULL, 0, l, 0);
		if (t == -1)
			goto fail;
	}

	uint8_t *pkt = NULL;
	uint32_t n = 0;
	if (libnet_pblock_coalesce(l, &pkt, &n) == -1)
		goto fail;
	if (n != total || n > cap) {
		snprintf(err, errlen, "crafted %u bytes, expected %u (buffer %zu)", n, total, cap);
		free(pkt);
		return 0;
	}
	memcpy(buf, pkt, n);
	free(pkt);

	if (s->badsum) {
		static const uint8_t csum_off[] = { [1] = 2, [6] = 16, [17] = 6 };
		size_t at = (size_t)IPV4_H * s->nvia + IPV4_H + csum_off[s->proto];
		uint16_t good = (uint16_t)(buf[at] << 8 | buf[at + 1]);
		uint16_t bad = good ^ 0x5a5a;
		if (bad == 0 || bad == 0xffff)	/* 0 means "no checksum" for UDP */
			bad = good ^ 0x0101;
		buf[at] = (uint8_t)(bad >> 8);
		buf[at + 1] = (uint8_t)bad;
	}
	return n;
fail:
	snprintf(err, errlen, "cannot craft the probe: %s", libnet_geterror(l));
	{
		size_t m = strlen(err);
		while (m > 0 && (err[m - 1] == '\n' || err[m - 1] == '.'))
			err[--m] = '\0';
	}
	return 0;
}

/* ---- results ----------------------------------------------------------------- */

const char *hs_probe_outcome_name(int outcome)
{
	switch (outcome) {
	case HS_PROBE_PENDING: return "pending";
	case HS_PROBE_DELIVERED: return "delivered";
	case HS_PROBE_LOST: return "lost";
	case HS_PROBE_LOOPED: return "looped";
	case HS_PROBE_SEEN: return "seen";
	}
	return "?";
}

static uint64_t hop_gap(const struct hs_probe_hop *a, const struct hs_probe_hop *b)
{
	if (a->hw_ns && b->hw_ns && b->hw_ns >= a->hw_ns)
		return b->hw_ns - a->hw_ns;
	return b->ts_ns >= a->ts_ns ? b->ts_ns - a->ts_ns : 0;
}

void hs_probe_hop_times(const struct hs_probe_result *r, int64_t at[HS_TRACE_MAX_HOPS])
{
	uint64_t prev = r->sent_ns;

	for (int i = 0; i < r->nhops && i < HS_TRACE_MAX_HOPS; i++) {
		const struct hs_probe_hop *h = &r->hops[i];
		uint64_t t = h->hw_ns ? h->hw_ns : h->ts_ns;
		bool ok = t >= prev && (!h->hw_ns || h->hw_ns <= h->ts_ns);

		at[i] = ok ? (int64_t)(t - r->sent_ns) : -1;
		if (ok)
			prev = t;
	}
}

static bool via_repeats(const struct hs_probe_spec *s)
{
	for (int i = 0; i < s->nvia; i++)
		for (int j = i + 1; j < s->nvia; j++)
			if (s->via[i] == s->via[j])
				return true;
	return false;
}

static int via_pos(const struct hs_probe_spec *s, int sw)
{
	for (int i = 0; i < s->nvia; i++)
		if (s->via[i] == sw)
			return i;
	return -1;
}

/* Inside its IP-in-IP headers a probe keeps its own TTL, so the copies of
 * the switches it is steered over tie on TTL and fall back on the time they
 * reached the analyzer, which a busy switch can report late. The headers
 * fix the order: a run of hops with one TTL made only of distinct switches
 * of the via list is put in via order. */
static void tunnel_order(const struct hs_probe_spec *s, struct hs_probe_result *r)
{
	if (s->nvia < 2 || via_repeats(s))
		return;
	for (int i = 0; i < r->nhops;) {
		int j = i;
		bool all = true;
		while (j < r->nhops && r->hops[j].ttl == r->hops[i].ttl) {
			if (via_pos(s, r->hops[j].sw) < 0)
				all = false;
			j++;
		}
		if (all && j - i > 1) {
			for (int a = i + 1; a < j; a++) {	/* insertion sort by via position */
				struct hs_probe_hop h = r->hops[a];
				int b = a;
				while (b > i && via_pos(s, r->hops[b - 1].sw) > via_pos(s, h.sw)) {
					r->hops[b] = r->hops[b - 1];
					b--;
				}
				r->hops[b] = h;
			}
		}
		i = j;
	}
}

void hs_probe_judge(const struct hs_probe_spec *s, const struct hs_topo *topo,
		    const struct hs_trace *t, uint64_t sent_ns, struct hs_probe_result *r)
{
	memset(r, 0, sizeof(*r));
	r->sent_ns = sent_ns;
	r->lost_after = -1;
	int nh = t->nhops > HS_TRACE_MAX_HOPS ? HS_TRACE_MAX_HOPS : t->nhops;
	for (int i = 0; i < nh; i++) {
		const struct hs_hop *h = &t->hops[i];
		/* the probe itself leaving the analyzer, when the capture sees it */
		if (h->sw < 0 && hs_addr_eq(&h->addr, &s->outer_src))
			continue;
		struct hs_probe_hop *o = &r->hops[r->nhops++];
		o->sw = h->sw;
		o->addr = h->addr;
		o->ts_ns = h->ts_ns;
		o->hw_ns = h->hw_ns;
		o->ttl = h->ttl;
	}
	if (r->nhops == 0) {
		r->outcome = HS_PROBE_LOST;
		return;
	}
	tunnel_order(s, r);
	const struct hs_probe_hop *last = &r->hops[r->nhops - 1];

	if (s->kind == HS_PROBE_LINK) {
		/* A sees the probe twice: on the way out still inside its IP-in-IP
		 * headers, and back from B with its own TTL one lower. Going by
		 * TTL, not by the order of the copies, keeps this right when a
		 * switch reports its copy late. */
		int out = -1, back = -1, b = -1;
		for (int i = 0; i < r->nhops; i++) {
			const struct hs_probe_hop *h = &r->hops[i];
			if (h->sw == s->link_b && b < 0)
				b = i;
			if (h->sw != s->link_a)
				continue;
			if (out < 0 || h->ttl > r->hops[out].ttl)
				out = i;
			if (back < 0 || h->ttl < r->hops[back].ttl)
				back = i;
		}
		if (out >= 0 && back >= 0 && b >= 0 && r->hops[back].ttl < r->hops[out].ttl) {
			r->outcome = HS_PROBE_DELIVERED;
			r->have_rtt = true;
			r->rtt_ns = hop_gap(&r->hops[out], &r->hops[back]);
			return;
		}
		r->outcome = HS_PROBE_LOST;
		r->lost_after = r->nhops - 1;
		return;
	}

	r->have_rtt = last->ts_ns >= sent_ns;
	r->rtt_ns = r->have_rtt ? last->ts_ns - sent_ns : 0;
	if (t->extra_hops > 0 || (t->outcome == HS_OUT_LOOPED && !via_repeats(s))) {
		r->outcome = HS_PROBE_LOOPED;
		r->lost_after = r->nhops - 1;
		r->have_rtt = false;
		r->rtt_ns = 0;
		return;
	}
	int leaf = topo ? hs_topo_leaf_for(topo, &s->dst) : -1;
	if (s->kind == HS_PROBE_TRACEROUTE) {
		/* a packet with a small TTL is meant to stop early */
		r->outcome = (leaf >= 0 && last->sw == leaf) ? HS_PROBE_DELIVERED : HS_PROBE_SEEN;
		return;
	}
	bool delivered;
	if (leaf >= 0)
		delivered = last->sw == leaf;
	else if (t->outcome == HS_OUT_UNKNOWN || t->outcome == HS_OUT_OPEN) {
		r->outcome = HS_PROBE_SEEN;
		return;
	} else
		delivered = t->outcome == HS_OUT_DELIVERED;
	if (delivered) {
		r->outcome = HS_PROBE_DELIVERED;
	} else {
		r->outcome = HS_PROBE_LOST;
		r->lost_after = r->nhops - 1;
		r->have_rtt = false;
		r->rtt_ns = 0;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

uint64_t hs_probe_percentile(uint64_t *v, size_t n, double p)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof(*v), cmp_u64);
	double rank = ceil(p / 100.0 * (double)n);
	size_t i = rank < 1 ? 0 : (size_t)rank - 1;
	return v[i < n ? i : n - 1];
}

/* ---- history ------------------------------------------------------------------ */

/* ---- the run ----------------------------------------------------------------- */

struct probe_slot {
	struct hs_probe_pkt pk;
	bool sent;
	bool settled;		/* traceroute rounds: counted in the table */
	struct hs_probe_result r;
};

/* traceroute rounds: what the packets saw at each hop of the path (hop k is
 * the k-th switch of a packet's own per-hop trace) */
struct tr_hop {
	int sw[4];		/* the switches seen at this hop */
	struct hs_addr addr[4];
	int nsw;
	uint64_t n;		/* latency samples */
	int64_t last, best, worst;
	double mean, m2;	/* running mean and sum of squared deviations */
};

struct tr_stats {
	uint64_t sent[HS_TRACEROUTE_MAX_TTL + 1];	/* settled packets by TTL */
	uint64_t seen[HS_TRACEROUTE_MAX_TTL + 1][HS_TRACEROUTE_MAX_TTL + 1];	/* [ttl][hop] */
	struct tr_hop hop[HS_TRACEROUTE_MAX_TTL + 1];
	int reached;		/* the hop of the destination's ToR, 0 not yet */
	int deepest;		/* the deepest hop any packet was seen at */
	unsigned rounds;	/* rounds sent */
	int drawn;		/* lines of the live table on the terminal */
};

struct icmp_reply {
	bool have;
	struct hs_addr from;
	uint64_t ts_ns;
	uint8_t type;
};

struct probe_run {
	struct hs_ctx *ctx;
	struct hs_probe_spec s;
	char *words;
	uint32_t id;
	libnet_t *l;
	uv_timer_t send_timer, end_timer;
	int open_handles;
	unsigned nsent, ndone;
	bool finished, send_failed, stopped;
	struct probe_slot *slot;
	unsigned nslots;	/* packet seq's slot: seq % nslots */
	struct tr_stats *tr;	/* traceroute rounds */
	/* traceroute: ICMP time-exceeded replies, when they come back to us */
	int icmp_fd;
	uv_poll_t icmp_poll;
	bool icmp_polling;
	struct icmp_reply icmp[HS_TRACEROUTE_MAX_TTL];
};

static void on_trace(void *arg, const struct hs_trace *t);

static const char *verb_of(const struct probe_run *r)
{
	return r->s.kind == HS_PROBE_TRACEROUTE ? "traceroute" : "probe";
}

static const char *sw_name(const struct hs_topo *topo, int sw, const struct hs_addr *a,
			   char *buf, size_t len)
{
	if (topo && sw >= 0 && sw < topo->nsw)
		return topo->sw[sw].name;
	return hs_addr_str(a, buf, len);
}

static bool json_of(const struct probe_run *r)
{
	return r->s.json || r->ctx->out.json;
}

/* print what an hs_out wrote to a memory stream: above the prompt, or in a
 * runbook on the verb's output */
static FILE *mem_open(char **buf, size_t *len, struct hs_out *o, bool json)
{
	FILE *fp = open_memstream(buf, len);

	if (fp)
		out_init(o, fp, fp, json);
	return fp;
}

static void mem_print(struct hs_ctx *ctx, FILE *fp, char **bufp, size_t *lenp)
{
	fclose(fp);		/* sets *bufp and *lenp */
	char *buf = *bufp;
	size_t len = *lenp;
	while (len > 0 && buf[len - 1] == '\n')
		buf[--len] = '\0';
	if (len && ctx->interactive) {
		hs_async_print(ctx, "%s", buf);
	} else if (len) {
		/* a runbook: the results are the verb's output, JSON lines included */
		fprintf(ctx->out.fp, "%s\n", buf);
		fflush(ctx->out.fp);
	}
	free(buf);
}

static void render_result(struct probe_run *r, struct hs_out *o, const struct hs_probe_result *res)
{
	const struct hs_topo *topo = r->ctx->topo;
	char nb[HS_ADDRSTRLEN], db[32];
	int64_t at[HS_TRACE_MAX_HOPS];

	hs_probe_hop_times(res, at);
	if (o->json) {
		out_obj_open(o, NULL);
		out_uint(o, "probe", NULL, r->id);
		out_uint(o, "seq", NULL, res->seq);
		out_str(o, "outcome", NULL, hs_probe_outcome_name(res->outcome));
		out_arr_open(o, "hops");
		for (int i = 0; i < res->nhops; i++) {
			const struct hs_probe_hop *h = &res->hops[i];
			out_obj_open(o, NULL);
			out_str(o, "switch", NULL, sw_name(topo, h->sw, &h->addr, nb, sizeof(nb)));
			out_time(o, "ts_ns", NULL, h->ts_ns);
			if (at[i] >= 0)
				out_int(o, "at_ns", NULL, at[i]);
			else
				out_null(o, "at_ns");
			out_obj_close(o);
		}
		out_arr_close(o);
		if (res->lost_after >= 0) {
			const struct hs_probe_hop *h = &res->hops[res->lost_after];
			out_str(o, "lost_after", NULL, sw_name(topo, h->sw, &h->addr, nb, sizeof(nb)));
		} else {
			out_null(o, "lost_after");
		}
		if (res->have_rtt)
			out_uint(o, "rtt_ns", NULL, res->rtt_ns);
		else
			out_null(o, "rtt_ns");
		out_obj_close(o);
		return;
	}
	out_text(o, "%s %" PRIu32 " seq %" PRIu32 ": %s", verb_of(r), r->id, res->seq,
		 hs_probe_outcome_name(res->outcome));
	if (res->lost_after >= 0) {
		const struct hs_probe_hop *h = &res->hops[res->lost_after];
		out_text(o, " after %s", sw_name(topo, h->sw, &h->addr, nb, sizeof(nb)));
	} else if (res->outcome == HS_PROBE_LOST) {
		out_text(o, " (no copy seen)");
	}
	for (int i = 0; i < res->nhops; i++) {
		const struct hs_probe_hop *h = &res->hops[i];
		out_text(o, "%s%s %s%s", i ? " > " : "  ", sw_name(topo, h->sw, &h->addr, nb, sizeof(nb)),
			 at[i] >= 0 ? "+" : "?",
			 at[i] >= 0 ? hs_fmt_duration((uint64_t)at[i], db, sizeof(db)) : "");
	}
	if (res->have_rtt)
		out_text(o, "  rtt %s", hs_fmt_duration(res->rtt_ns, db, sizeof(db)));
	out_text(o, "\n");
}

static void print_result(struct probe_run *r, const struct hs_probe_result *res)
{
	char *buf = NULL;
	size_t len = 0;
	struct hs_out o;
	FILE *fp = mem_open(&buf, &len, &o, json_of(r));

	if (!fp)
		return;
	render_result(r, &o, res);
	mem_print(r->ctx, fp, &buf, &len);
}

/* the packet a closed trace belongs to */
static struct probe_slot *match_slot(struct probe_run *r, const struct hs_trace *t)
{
	uint64_t first = t->nhops ? t->hops[0].ts_ns : 0;
	unsigned used = r->nsent < r->nslots ? r->nsent : r->nslots;

	for (unsigned i = 0; i < used; i++) {
		const struct hs_probe_pkt *pk = &r->slot[i].pk;
		if (r->s.proto == 6 && t->seq == pk->tcp_seq && t->ip_id == pk->ip_id)
			return &r->slot[i];
		if (r->s.proto != 6 && !r->s.have_ip_id && t->ip_id == pk->ip_id)
			return &r->slot[i];
	}
	/* same IP ID on every packet (id N): the oldest packet still waiting */
	if (r->s.proto != 6 && r->s.have_ip_id)
		for (unsigned i = 0; i < used; i++)
			if (r->slot[i].r.outcome == HS_PROBE_PENDING &&
			    (!first || r->slot[i].pk.sent_ns <= first + HS_NS_PER_SEC))
				return &r->slot[i];
	return NULL;
}

static void handle_closed(uv_handle_t *h)
{
	struct probe_run *r = h->data;

	if (--r->open_handles > 0)
		return;
	free(r->slot);
	free(r->tr);
	free(r->words);
	free(r);
}

/* the slots being stored, and the run they are of */
struct stored {
	const struct probe_run *r;
	const struct probe_slot *slots;
};

/* packet i of them as the history keeps it */
static void store_pkt(void *arg, unsigned i, struct hs_store_probe_pkt *p)
{
	const struct stored *sd = arg;
	const struct hs_topo *topo = sd->r->ctx->topo;
	const struct probe_slot *sl = &sd->slots[i];
	const struct hs_probe_result *res = &sl->r;
	char nb[HS_ADDRSTRLEN];

	p->seq = sl->pk.seq;
	p->sport = sl->pk.sport;
	p->ttl = sl->pk.ttl;
	p->sent_ns = sl->pk.sent_ns;
	p->outcome = hs_probe_outcome_name(res->outcome);
	if (res->lost_after >= 0) {
		const struct hs_probe_hop *h = &res->hops[res->lost_after];
		snprintf(p->lost_after, sizeof(p->lost_after), "%s",
			 sw_name(topo, h->sw, &h->addr, nb, sizeof(nb)));
	}
	p->have_rtt = res->have_rtt;
	p->rtt_ns = res->rtt_ns;
	p->nhops = res->nhops;
	for (int k = 0; k < res->nhops; k++) {
		const struct hs_probe_hop *h = &res->hops[k];
		struct hs_store_probe_hop *o = &p->hops[k];
		snprintf(o->sw, sizeof(o->sw), "%s", sw_name(topo, h->sw, &h->addr, nb, sizeof(nb)));
		o->addr = h->addr;
		o->ts_ns = h->ts_ns;
		o->hw_ns = h->hw_ns;
		o->ttl = h->ttl;
	}
}

static void store_slots(struct probe_run *r, const struct probe_slot *slots, unsigned n)
{
	struct hs_ctx *ctx = r->ctx;
	struct hs_store *st = hs_ctx_store(ctx);
	static const char *const kinds[] = { "probe", "link", "traceroute" };
	char err[512];

	if (!st)
		return;
	struct hs_store_probe run = {
		.probe_id = r->id,
		.session = ctx->session,
		.kind = kinds[r->s.kind],
		.spec = r->words,
		.src = r->s.src,
		.dst = r->s.dst,
		.proto = r->s.proto,
		.dport = r->s.dport,
	};
	struct stored sd = { r, slots };
	if (hs_store_probe(st, &run, n, store_pkt, &sd, err, sizeof(err)) < 0)
		out_warn(&ctx->out, "cannot write to '%s': %s", hs_store_path(st), err);
}

/* the flow's own traces, newest first: the switches of the newest one with hops */
static int flow_path(struct hs_ctx *ctx, const struct hs_probe_spec *s, int *path, int max,
		     unsigned *ntraces)
{
	const struct hs_trace *recent[512];
	size_t n = ctx->tracer ? hs_tracer_recent(ctx->tracer, recent, HS_ARRAY_SIZE(recent)) : 0;
	int np = -1;

	*ntraces = 0;
	for (size_t i = 0; i < n; i++) {
		const struct hs_trace *t = recent[i];
		if ((t->flags & HS_TF_PROBE) || t->key.proto != s->proto ||
		    t->key.sport != s->sport || t->key.dport != s->dport ||
		    !hs_addr_eq(&t->key.src, &s->src) || !hs_addr_eq(&t->key.dst, &s->dst))
			continue;
		(*ntraces)++;
		if (np < 0 && t->nhops > 0) {
			np = 0;
			for (int k = 0; k < t->nhops && np < max; k++)
				if (np == 0 || path[np - 1] != t->hops[k].sw)
					path[np++] = t->hops[k].sw;
		}
	}
	return np;
}

static void print_traceroute(struct probe_run *r)
{
	struct hs_ctx *ctx = r->ctx;
	struct hs_out *o = &ctx->out;
	const struct hs_topo *topo = ctx->topo;
	char nb[HS_ADDRSTRLEN], a1[HS_ADDRSTRLEN], a2[HS_ADDRSTRLEN], db[32];
	int path[HS_TRACEROUTE_MAX_TTL], np = 0;
	bool json = json_of(r), reached = false;
	int leaf = topo ? hs_topo_leaf_for(topo, &r->s.dst) : -1;
	unsigned last = 0;

	/* the hops worth showing: up to the first TTL that reached the destination's
	 * ToR, or the last TTL that told us anything new */
	for (unsigned i = 0; i < r->nsent; i++) {
		const struct hs_probe_result *res = &r->slot[i].r;
		if (res->nhops > 0 || r->icmp[i].have)
			last = i + 1;
		if (res->nhops > 0 && leaf >= 0 && res->hops[res->nhops - 1].sw == leaf) {
			reached = true;
			last = i + 1;
			break;
		}
	}
	if (json) {
		out_obj_open(o, NULL);
		out_uint(o, "traceroute", NULL, r->id);
		out_str(o, "src", NULL, hs_addr_str(&r->s.src, a1, sizeof(a1)));
		out_uint(o, "sport", NULL, r->s.sport);
		out_str(o, "dst", NULL, hs_addr_str(&r->s.dst, a2, sizeof(a2)));
		out_uint(o, "dport", NULL, r->s.dport);
		out_arr_open(o, "hops");
	} else {
		out_text(o, "traceroute %s:%u > %s:%u %s\n", hs_addr_str(&r->s.src, a1, sizeof(a1)),
			 r->s.sport, hs_addr_str(&r->s.dst, a2, sizeof(a2)), r->s.dport,
			 r->s.proto == 6 ? "tcp" : "udp");
	}
	for (unsigned i = 0; i < last; i++) {
		const struct hs_probe_result *res = &r->slot[i].r;
		const char *name = NULL, *via = "mirror";
		uint64_t ts = 0;
		if (res->nhops > 0) {
			const struct hs_probe_hop *h = &res->hops[res->nhops - 1];
			name = sw_name(topo, h->sw, &h->addr, nb, sizeof(nb));
			ts = h->ts_ns;
			if (np < HS_TRACEROUTE_MAX_TTL && (np == 0 || path[np - 1] != h->sw))
				path[np++] = h->sw;
		} else if (r->icmp[i].have) {
			int sw = topo ? hs_topo_switch_by_addr(topo, &r->icmp[i].from) : -1;
			name = sw_name(topo, sw, &r->icmp[i].from, nb, sizeof(nb));
			ts = r->icmp[i].ts_ns;
			via = "icmp";
		}
		if (json) {
			out_obj_open(o, NULL);
			out_uint(o, "ttl", NULL, i + 1);
			if (name) {
				out_str(o, "switch", NULL, name);
				out_time(o, "ts_ns", NULL, ts);
				out_str(o, "from", NULL, via);
			} else {
				out_null(o, "switch");
			}
			out_obj_close(o);
		} else if (name) {
			uint64_t d = ts >= r->slot[i].pk.sent_ns ? ts - r->slot[i].pk.sent_ns : 0;
			out_text(o, "%3u  %-16s +%s%s\n", i + 1, name, hs_fmt_duration(d, db, sizeof(db)),
				 via[0] == 'i' ? " (icmp)" : "");
		} else {
			out_text(o, "%3u  *\n", i + 1);
		}
	}

	unsigned ntr = 0;
	int fp[HS_TRACE_MAX_HOPS];
	int nfp = flow_path(ctx, &r->s, fp, HS_TRACE_MAX_HOPS, &ntr);
	bool same = nfp == np;
	for (int k = 0; same && k < np; k++)
		same = fp[k] == path[k];
	if (json) {
		out_arr_close(o);
		out_bool(o, "reached", NULL, reached);
		out_uint(o, "flow_traces", NULL, ntr);
		if (nfp >= 0)
			out_bool(o, "same_path", NULL, same);
		else
			out_null(o, "same_path");
		out_obj_close(o);
		return;
	}
	if (!reached)
		out_text(o, "destination's ToR not reached\n");
	if (nfp >= 0) {
		out_text(o, "traces of this flow (%u) went", ntr);
		for (int k = 0; k < nfp; k++) {
			struct hs_addr none = { 0 };
			out_text(o, "%s%s", k ? " > " : " ", sw_name(topo, fp[k], &none, nb, sizeof(nb)));
		}
		out_text(o, ": %s\n", same ? "same path" : "a different path");
	}
}

static void print_summary(struct probe_run *r)
{
	struct hs_out *o = &r->ctx->out;
	uint64_t *rtts = hs_xcalloc(r->nsent ? r->nsent : 1, sizeof(*rtts));
	size_t nr = 0;
	unsigned delivered = 0, lost = 0, looped = 0, seen = 0;
	char d1[32], d2[32];

	for (unsigned i = 0; i < r->nsent; i++) {
		const struct hs_probe_result *res = &r->slot[i].r;
		switch (res->outcome) {
		case HS_PROBE_DELIVERED: delivered++; break;
		case HS_PROBE_LOOPED: looped++; lost++; break;
		case HS_PROBE_SEEN: seen++; break;
		default: lost++; break;
		}
		if (res->outcome == HS_PROBE_DELIVERED && res->have_rtt)
			rtts[nr++] = res->rtt_ns;
	}
	uint64_t p50 = hs_probe_percentile(rtts, nr, 50), p99 = hs_probe_percentile(rtts, nr, 99);
	free(rtts);
	if (json_of(r)) {
		bool saved = o->json;
		o->json = true;
		out_obj_open(o, NULL);
		out_uint(o, "probe", NULL, r->id);
		out_uint(o, "sent", NULL, r->nsent);
		out_uint(o, "delivered", NULL, delivered);
		out_uint(o, "lost", NULL, lost);
		out_uint(o, "looped", NULL, looped);
		if (seen)
			out_uint(o, "seen", NULL, seen);
		if (nr) {
			out_uint(o, "rtt_p50_ns", NULL, p50);
			out_uint(o, "rtt_p99_ns", NULL, p99);
		} else {
			out_null(o, "rtt_p50_ns");
			out_null(o, "rtt_p99_ns");
		}
		out_obj_close(o);
		o->json = saved;
		return;
	}
	out_text(o, "probe %" PRIu32 ": %u sent, %u delivered, %u lost", r->id, r->nsent,
		 delivered, lost);
	if (looped)
		out_text(o, " (%u looped)", looped);
	if (seen)
		out_text(o, ", %u seen (no topology to judge)", seen);
	if (nr)
		out_text(o, ", rtt p50 %s p99 %s", hs_fmt_duration(p50, d1, sizeof(d1)),
			 hs_fmt_duration(p99, d2, sizeof(d2)));
	out_text(o, "\n");
}

/* how long a packet's trace is waited for after the last packet */
static uint64_t wait_ns(const struct probe_run *r)
{
	uint64_t tt = r->ctx->set.trace_timeout_ns ? r->ctx->set.trace_timeout_ns : HS_NS_PER_SEC;

	return r->s.timeout_ns ? r->s.timeout_ns : tt + 2 * HS_NS_PER_SEC;
}

/* ---- traceroute rounds: per-hop loss and latency ------------------------------- */

static bool same_switch(const struct hs_probe_hop *a, const struct hs_probe_hop *b)
{
	return a->sw >= 0 ? a->sw == b->sw : b->sw < 0 && hs_addr_eq(&a->addr, &b->addr);
}

static void tr_hop_add(struct tr_hop *th, const struct hs_probe_hop *h, int64_t at)
{
	int i;

	for (i = 0; i < th->nsw; i++)
		if (h->sw >= 0 ? th->sw[i] == h->sw : th->sw[i] < 0 && hs_addr_eq(&th->addr[i], &h->addr))
			break;
	if (i == th->nsw && th->nsw < (int)HS_ARRAY_SIZE(th->sw)) {
		th->sw[th->nsw] = h->sw;
		th->addr[th->nsw++] = h->addr;
	}
	if (at < 0)
		return;		/* a time off the send's clock */
	th->n++;
	th->last = at;
	if (th->n == 1 || at < th->best)
		th->best = at;
	if (th->n == 1 || at > th->worst)
		th->worst = at;
	double d = (double)at - th->mean;
	th->mean += d / (double)th->n;
	th->m2 += d * ((double)at - th->mean);
}

/* count a packet whose fate is known: its trace closed, or it never came */
static void tr_settle(struct probe_run *r, struct probe_slot *sl)
{
	struct tr_stats *ts = r->tr;
	const struct hs_probe_result *res = &sl->r;
	int64_t at[HS_TRACE_MAX_HOPS];
	int ttl = sl->pk.ttl, k = 0;
	int leaf = r->ctx->topo ? hs_topo_leaf_for(r->ctx->topo, &r->s.dst) : -1;

	if (sl->settled || !sl->sent || ttl < 1 || ttl > HS_TRACEROUTE_MAX_TTL)
		return;
	sl->settled = true;
	ts->sent[ttl]++;
	hs_probe_hop_times(res, at);
	for (int i = 0; i < res->nhops && k < r->s.max_ttl; i++) {
		const struct hs_probe_hop *h = &res->hops[i];
		/* a switch that reports a packet twice (in and out of its
		 * IP-in-IP header) is one hop, reached at its first copy */
		if (i > 0 && same_switch(&res->hops[i - 1], h))
			continue;
		k++;
		ts->seen[ttl][k]++;
		tr_hop_add(&ts->hop[k], h, at[i]);
		if (k > ts->deepest)
			ts->deepest = k;
		if (leaf >= 0 && h->sw == leaf && (!ts->reached || k < ts->reached))
			ts->reached = k;
	}
	store_slots(r, sl, 1);
}

/* the hops shown: up to the destination's ToR, else one past the deepest
 * hop seen (where the packets stop) */
static int tr_nhops(const struct probe_run *r)
{
	const struct tr_stats *ts = r->tr;

	if (ts->reached)
		return ts->reached;
	return ts->deepest < r->s.max_ttl ? ts->deepest + 1 : ts->deepest;
}

/* hop k's packets: those with TTL k or more, which should all have got there */
static void tr_counts(const struct tr_stats *ts, int k, uint64_t *sent, uint64_t *recv)
{
	*sent = *recv = 0;
	for (int t = k; t <= HS_TRACEROUTE_MAX_TTL; t++) {
		*sent += ts->sent[t];
		*recv += ts->seen[t][k];
	}
}

static void tr_render(struct probe_run *r, struct hs_out *o)
{
	const struct tr_stats *ts = r->tr;
	const struct hs_topo *topo = r->ctx->topo;
	char a1[HS_ADDRSTRLEN], a2[HS_ADDRSTRLEN], nb[HS_ADDRSTRLEN], v[5][32];
	int nh = tr_nhops(r);

	hs_addr_str(&r->s.src, a1, sizeof(a1));
	hs_addr_str(&r->s.dst, a2, sizeof(a2));
	if (o->json) {
		out_obj_open(o, NULL);
		out_uint(o, "traceroute", NULL, r->id);
		out_str(o, "src", NULL, a1);
		out_uint(o, "sport", NULL, r->s.sport);
		out_str(o, "dst", NULL, a2);
		out_uint(o, "dport", NULL, r->s.dport);
		out_str(o, "proto", NULL, r->s.proto == 6 ? "tcp" : "udp");
		out_uint(o, "rounds", NULL, ts->rounds);
		out_bool(o, "reached", NULL, ts->reached > 0);
		out_arr_open(o, "hops");
	} else {
		out_text(o, "traceroute %s:%u > %s:%u %s, %u round%s (times in ms)\n", a1, r->s.sport,
			 a2, r->s.dport, r->s.proto == 6 ? "tcp" : "udp", ts->rounds,
			 ts->rounds == 1 ? "" : "s");
		out_text(o, "%3s  %-16s %6s %5s %7s %7s %7s %7s %7s\n", "hop", "switch", "loss%",
			 "sent", "last", "avg", "best", "worst", "stdev");
	}
	for (int k = 1; k <= nh; k++) {
		const struct tr_hop *th = &ts->hop[k];
		uint64_t sent, recv;
		char names[HS_ARRAY_SIZE(th->sw) * (HS_NAME_MAX + 1)] = "";
		size_t used = 0;
		tr_counts(ts, k, &sent, &recv);
		double loss = sent ? 100.0 * (double)(sent - recv) / (double)sent : 0.0;
		double stdev = th->n > 1 ? sqrt(th->m2 / (double)(th->n - 1)) : 0.0;
		double f[5] = { (double)th->last, th->mean, (double)th->best, (double)th->worst, stdev };
		if (o->json) {
			out_obj_open(o, NULL);
			out_uint(o, "hop", NULL, (unsigned)k);
			out_arr_open(o, "switches");
			for (int i = 0; i < th->nsw; i++)
				out_str(o, NULL, NULL, sw_name(topo, th->sw[i], &th->addr[i], nb, sizeof(nb)));
			out_arr_close(o);
			out_uint(o, "sent", NULL, sent);
			out_uint(o, "received", NULL, recv);
			out_double(o, "loss", NULL, loss / 100);
			/* durations: integer nanoseconds (hopscope-json(7)) */
			static const char *const keys[] = { "last_ns", "avg_ns", "best_ns", "worst_ns",
							    "stdev_ns" };
			for (int i = 0; i < 5; i++) {
				if (th->n)
					out_uint(o, keys[i], NULL, (uint64_t)llround(f[i]));
				else
					out_null(o, keys[i]);
			}
			out_obj_close(o);
			continue;
		}
		for (int i = 0; i < th->nsw && used < sizeof(names); i++) {
			int n = snprintf(names + used, sizeof(names) - used, "%s%s", i ? "," : "",
					 sw_name(topo, th->sw[i], &th->addr[i], nb, sizeof(nb)));
			if (n < 0)
				break;
			used += (size_t)n;
		}
		out_text(o, "%3d  %-16s %5.1f%% %5" PRIu64, k, th->nsw ? names : "*", loss, sent);
		for (int i = 0; i < 5; i++) {
			double ms = f[i] / 1e6;
			/* three decimals while they fit the column */
			if (!th->n)
				snprintf(v[i], sizeof(v[i]), "-");
			else
				snprintf(v[i], sizeof(v[i]), "%.*f", ms < 100 ? 3 : ms < 10000 ? 1 : 0, ms);
			out_text(o, " %7s", v[i]);
		}
		out_text(o, "\n");
	}
	if (o->json) {
		out_arr_close(o);
		out_obj_close(o);
	} else if (!ts->reached && ts->rounds && topo && hs_topo_leaf_for(topo, &r->s.dst) >= 0) {
		out_text(o, "destination's ToR not reached\n");
	}
}

/* live at a terminal: the table drawn again in place after each round (not
 * where the output is kept, as watch's events pane keeps it) */
static bool tr_live(const struct probe_run *r)
{
	return r->ctx->interactive && !r->s.report && !json_of(r) && r->ctx->out.fp &&
	       isatty(fileno(r->ctx->out.fp));
}

/* the terminal rows TEXT takes, its long lines wrapped */
static int text_rows(const char *text, size_t len, int cols)
{
	int rows = 0;
	size_t col = 0;

	for (size_t i = 0; i < len; i++) {
		if (text[i] != '\n') {
			col++;
			continue;
		}
		rows += col == 0 ? 1 : (int)((col + (size_t)cols - 1) / (size_t)cols);
		col = 0;
	}
	return rows;
}

static void tr_draw(struct probe_run *r)
{
	char *buf = NULL;
	size_t len = 0;
	struct hs_out o;
	FILE *fp = mem_open(&buf, &len, &o, false);
	FILE *to = r->ctx->out.fp;

	if (!fp)
		return;
	tr_render(r, &o);
	fclose(fp);
	if (r->tr->drawn > 0)
		fprintf(to, "\033[%dA\r\033[J", r->tr->drawn);
	fwrite(buf, 1, len, to);
	fflush(to);
	struct winsize ws;
	int cols = ioctl(fileno(to), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 ? ws.ws_col : 80;
	r->tr->drawn = text_rows(buf, len, cols);
	free(buf);
}

static void finish(struct probe_run *r)
{
	struct hs_ctx *ctx = r->ctx;
	int status = HS_CMD_OK;

	if (r->finished)
		return;
	r->finished = true;
	uv_timer_stop(&r->send_timer);
	uv_timer_stop(&r->end_timer);
	if (r->icmp_polling) {
		uv_poll_stop(&r->icmp_poll);
		r->icmp_polling = false;
	}

	unsigned delivered = 0;
	unsigned used = r->nsent < r->nslots ? r->nsent : r->nslots;
	for (unsigned i = 0; i < used; i++) {
		struct probe_slot *sl = &r->slot[i];
		/* stopped: a packet still within its wait is not lost, only unknown */
		if (r->tr && r->stopped && sl->sent && sl->r.outcome == HS_PROBE_PENDING &&
		    hs_wall_ns() < sl->pk.sent_ns + wait_ns(r)) {
			store_slots(r, sl, 1);
			continue;
		}
		if (sl->r.outcome == HS_PROBE_PENDING) {
			sl->r.outcome = HS_PROBE_LOST;
			sl->r.lost_after = -1;
			sl->r.seq = sl->pk.seq;
			sl->r.sent_ns = sl->pk.sent_ns;
			if (r->s.kind != HS_PROBE_TRACEROUTE)
				print_result(r, &sl->r);
		}
		if (r->tr)
			tr_settle(r, sl);
		if (sl->r.outcome == HS_PROBE_DELIVERED)
			delivered++;
	}
	fflush(ctx->out.fp);
	if (r->tr && tr_live(r)) {
		/* Ctrl-C: the console went to a new line below the table */
		if (r->stopped && r->tr->drawn)
			r->tr->drawn++;
		tr_draw(r);
	} else if (r->tr) {
		bool saved = ctx->out.json;
		ctx->out.json = json_of(r);
		tr_render(r, &ctx->out);
		ctx->out.json = saved;
	} else if (r->nsent > 0) {
		if (r->s.kind == HS_PROBE_TRACEROUTE)
			print_traceroute(r);
		else
			print_summary(r);
		store_slots(r, r->slot, r->nsent);
	}
	fflush(ctx->out.fp);

	if (r->send_failed)
		status = HS_CMD_FAIL;
	else if (r->s.expect == HS_EXPECT_DELIVERED && delivered != r->nsent)
		status = HS_CMD_FAIL;
	else if (r->s.expect == HS_EXPECT_LOST && delivered != 0)
		status = HS_CMD_FAIL;

	if (r->l) {
		libnet_destroy(r->l);
		r->l = NULL;
	}
	if (ctx->probe == r)
		ctx->probe = NULL;
	hs_unsub_traces(&ctx->subs, on_trace, r);
	if (ctx->cancel)
		ctx->cancel = NULL;
	uv_close((uv_handle_t *)&r->send_timer, handle_closed);
	uv_close((uv_handle_t *)&r->end_timer, handle_closed);
	if (r->icmp_fd >= 0) {
		uv_close((uv_handle_t *)&r->icmp_poll, handle_closed);
	}
	hs_cmd_finish(ctx, status);
	/* the socket outlives the poll handle by a loop turn: close it now that
	 * uv_poll_stop has run */
	if (r->icmp_fd >= 0) {
		close(r->icmp_fd);
		r->icmp_fd = -1;
	}
}

static void end_cb(uv_timer_t *t)
{
	finish(t->data);
}

static void probe_cancel(struct hs_ctx *ctx)
{
	if (ctx->probe && ctx->probe->ctx == ctx) {
		ctx->probe->stopped = true;
		finish(ctx->probe);
	}
}

static int send_one(struct probe_run *r)
{
	struct probe_slot *sl = &r->slot[r->nsent % r->nslots];
	uint8_t buf[HS_PROBE_MTU];
	char err[LIBNET_ERRBUF_SIZE + 64], ab[HS_ADDRSTRLEN];

	if (r->tr && sl->sent) {
		/* a packet of a round long gone: lost if nothing came of it */
		if (sl->r.outcome == HS_PROBE_PENDING)
			sl->r.outcome = HS_PROBE_LOST;
		tr_settle(r, sl);
	}
	memset(sl, 0, sizeof(*sl));
	hs_probe_pkt_init(&r->s, r->id, r->nsent, hs_wall_ns(), &sl->pk);
	size_t n = hs_probe_craft(r->l, &r->s, &sl->pk, buf, sizeof(buf), err, sizeof(err));
	if (n == 0) {
		hs_async_print(r->ctx, "error: %s: %s", verb_of(r), err);
		return -1;
	}
	/* the first hop: the outermost header's destination */
	const struct hs_addr *to = r->s.nvia ? &r->s.via_addr[0] : &r->s.dst;
	errno = 0;
	if (libnet_write_raw_ipv4(r->l, buf, (uint32_t)n) != (int)n) {
		int e = errno;
		hs_async_print(r->ctx, "error: %s: cannot send to '%s': %s%s", verb_of(r),
			       hs_addr_str(to, ab, sizeof(ab)), e ? strerror(e) : libnet_geterror(r->l),
			       e == ENETUNREACH && !r->s.nvia ? " (try 'from SW' or 'via SW,...')" : "");
		return -1;
	}
	sl->sent = true;
	sl->r.seq = sl->pk.seq;
	sl->r.sent_ns = sl->pk.sent_ns;
	sl->r.outcome = HS_PROBE_PENDING;
	sl->r.lost_after = -1;
	r->nsent++;
	return 0;
}

static void send_cb(uv_timer_t *t)
{
	struct probe_run *r = t->data;

	if (r->finished)
		return;
	if (send_one(r) < 0) {
		r->send_failed = true;
		finish(r);
		return;
	}
	if (r->nsent >= r->s.count) {
		uv_timer_stop(&r->send_timer);
		if (r->tr)
			r->tr->rounds++;
		uv_timer_start(&r->end_timer, end_cb, wait_ns(r) / 1000000, 0);
	} else if (r->tr && r->nsent % r->s.max_ttl == 0) {
		/* a round sent: the next one a round's interval after it began */
		uint64_t spent = (uint64_t)(r->s.max_ttl - 1) * r->s.interval_ns;
		uint64_t gap = r->s.round_ns > spent ? r->s.round_ns - spent : r->s.interval_ns;
		r->tr->rounds++;
		if (tr_live(r))
			tr_draw(r);
		uv_timer_start(&r->send_timer, send_cb, gap / 1000000, r->s.interval_ns / 1000000);
	}
}

/* ICMP errors about our traceroute packets, when they are sent to this host */
static void icmp_drain(struct probe_run *r)
{
	uint8_t b[1500];

	for (int k = 0; k < 64; k++) {
		ssize_t n = recv(r->icmp_fd, b, sizeof(b), MSG_DONTWAIT);
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			continue;	/* a socket error (read, so cleared) or EINTR */
		if (n <= 0)
			return;
		size_t len = (size_t)n;
		if (len < IPV4_H || (b[0] >> 4) != 4)
			continue;
		size_t ihl = (size_t)(b[0] & 0x0f) * 4;
		if (ihl < IPV4_H || len < ihl + 8 + IPV4_H)
			continue;
		const uint8_t *ic = b + ihl;
		if (ic[0] != 11 && ic[0] != 3)	/* time exceeded, unreachable */
			continue;
		const uint8_t *q = ic + 8;	/* the quoted header */
		size_t qlen = len - ihl - 8;
		size_t qihl = (size_t)(q[0] & 0x0f) * 4;
		if ((q[0] >> 4) != 4 || qihl < IPV4_H || qlen < qihl + 4)
			continue;
		if (q[9] != r->s.proto || memcmp(q + 16, r->s.dst.a, 4) != 0)
			continue;
		uint16_t qid = (uint16_t)(q[4] << 8 | q[5]);
		uint16_t qdport = (uint16_t)(q[qihl + 2] << 8 | q[qihl + 3]);
		if (qdport != r->s.dport)
			continue;
		for (unsigned i = 0; i < r->nsent && i < HS_TRACEROUTE_MAX_TTL; i++) {
			if (r->slot[i].pk.ip_id != qid || r->icmp[i].have)
				continue;
			r->icmp[i].have = true;
			r->icmp[i].type = ic[0];
			r->icmp[i].ts_ns = hs_wall_ns();
			r->icmp[i].from.af = 4;
			memcpy(r->icmp[i].from.a, b + 12, 4);
			break;
		}
	}
}

/* libuv stops a poll whose socket reports an error (an ICMP error about
 * an ICMP packet can set one on a raw socket) and calls it once with a
 * negative status: drain, which reads the error, and poll again, or the
 * run would hear no more of its hops */
static void icmp_cb(uv_poll_t *h, int status, int events)
{
	struct probe_run *r = h->data;

	if (r->finished)
		return;
	icmp_drain(r);
	if (status < 0)
		uv_poll_start(h, UV_READABLE, icmp_cb);
}

static void icmp_open(struct probe_run *r)
{
	int fd = socket(AF_INET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_ICMP);

	r->icmp_fd = -1;
	if (fd < 0)
		return;		/* best effort: the mirrored copies are the main source */
	if (uv_poll_init(r->ctx->loop, &r->icmp_poll, fd) < 0) {
		close(fd);
		return;
	}
	r->icmp_fd = fd;
	r->icmp_poll.data = r;
	r->open_handles++;
	uv_poll_start(&r->icmp_poll, UV_READABLE, icmp_cb);
	r->icmp_polling = true;
}

int hs_probe_run(struct hs_ctx *ctx, const struct hs_probe_spec *s, const char *words)
{
	const char *verb = s->kind == HS_PROBE_TRACEROUTE ? "traceroute" : "probe";
	char errbuf[LIBNET_ERRBUF_SIZE];

	if (ctx->probe)
		return out_err(&ctx->out, "%s: probe %" PRIu32 " is still running", verb,
			       ctx->probe->id);
	errno = 0;
	libnet_t *l = libnet_init(LIBNET_RAW4, NULL, errbuf);
	if (!l) {
		int e = errno;
		if (e == EPERM || e == EACCES || strstr(errbuf, strerror(EPERM)))
			return out_err(&ctx->out, "%s: cannot open raw socket: %s "
				       "(needs root or CAP_NET_RAW)", verb, strerror(EPERM));
		size_t m = strlen(errbuf);
		while (m > 0 && (errbuf[m - 1] == '\n' || errbuf[m - 1] == '.'))
			errbuf[--m] = '\0';
		return out_err(&ctx->out, "%s: cannot open raw socket: %s", verb, errbuf);
	}

	if (!hs_capture_running(ctx)) {
		if (ctx->topo && ctx->topo->analyzer_iface[0]) {
			if (hs_capture_start(ctx, ctx->topo->analyzer_iface, false, 0, 0, 1) == 0 &&
			    ctx->interactive)
				out_text(&ctx->out, "capturing on '%s'\n", ctx->topo->analyzer_iface);
		} else {
			out_warn(&ctx->out, "%s: no capture is running, so the probe's mirrored "
				 "copies will not be seen (capture start IFACE)", verb);
		}
	}

	struct probe_run *r = hs_xcalloc(1, sizeof(*r));
	r->ctx = ctx;
	r->s = *s;
	r->s.json = s->json || ctx->out.json;	/* --json after the verb */
	r->l = l;
	r->words = hs_xstrdup(words ? words : "");
	r->nslots = s->count;
	if (s->kind == HS_PROBE_TRACEROUTE && s->table) {
		/* a ring of the rounds a packet may still be waited for in */
		uint64_t rounds = wait_ns(r) / s->round_ns + 3;
		r->tr = hs_xcalloc(1, sizeof(*r->tr));
		if (rounds > 64)
			rounds = 64;
		if (s->count > rounds * s->max_ttl)
			r->nslots = (unsigned)rounds * s->max_ttl;
	}
	r->slot = hs_xcalloc(r->nslots, sizeof(*r->slot));
	r->icmp_fd = -1;
	if (ctx->next_probe_id == 0)
		ctx->next_probe_id = (uint32_t)(hs_wall_ns() / 1000) ^ ((uint32_t)getpid() << 16);
	r->id = ctx->next_probe_id++;
	if (r->id == 0)
		r->id = ctx->next_probe_id++;
	if (r->s.kind == HS_PROBE_TRACEROUTE && r->s.sport == 0)
		r->s.sport = (uint16_t)(32768 + r->id % 28000);

	uv_timer_init(ctx->loop, &r->send_timer);
	uv_timer_init(ctx->loop, &r->end_timer);
	r->send_timer.data = r->end_timer.data = r;
	r->open_handles = 2;
	if (s->kind == HS_PROBE_TRACEROUTE && !r->tr)
		icmp_open(r);
	ctx->probe = r;
	ctx->cancel = probe_cancel;
	/* its copies' traces; the pipeline has room (a probe at a time) */
	struct hs_trace_cond cond = { .flags = HS_TF_PROBE };
	bool heard = hs_sub_traces(&ctx->subs, cond, on_trace, NULL, r) == 0;

	if (!heard || send_one(r) < 0) {
		if (!heard)
			out_err(&ctx->out, "%s: cannot hear the packet pipeline: too many "
				"subscribers", verb);
		hs_unsub_traces(&ctx->subs, on_trace, r);
		r->send_failed = true;
		ctx->cancel = NULL;
		ctx->probe = NULL;
		r->finished = true;
		libnet_destroy(r->l);
		r->l = NULL;
		if (r->icmp_polling)
			uv_poll_stop(&r->icmp_poll);
		uv_close((uv_handle_t *)&r->send_timer, handle_closed);
		uv_close((uv_handle_t *)&r->end_timer, handle_closed);
		if (r->icmp_fd >= 0) {
			uv_close((uv_handle_t *)&r->icmp_poll, handle_closed);
			close(r->icmp_fd);
		}
		return HS_CMD_FAIL;
	}
	if (r->nsent < s->count) {
		uint64_t ms = s->interval_ns / 1000000;
		uv_timer_start(&r->send_timer, send_cb, ms, ms ? ms : 1);
	} else {
		uv_timer_start(&r->end_timer, end_cb, wait_ns(r) / 1000000, 0);
	}
	return HS_CMD_PENDING;
}

/* a closed trace flagged HS_TF_PROBE: the run subscribed while it waits */
static void on_trace(void *arg, const struct hs_trace *t)
{
	struct probe_run *r = arg;
	struct hs_ctx *ctx = r->ctx;

	if (r->finished || t->probe_id != r->id)
		return;
	struct probe_slot *sl = match_slot(r, t);
	if (!sl)
		return;
	struct hs_probe_result res;
	hs_probe_judge(&r->s, ctx->topo, t, sl->pk.sent_ns, &res);
	res.seq = sl->pk.seq;
	if (sl->r.outcome != HS_PROBE_PENDING) {
		/* a second trace of the same packet (evicted and reopened): keep the longer */
		if (res.nhops <= sl->r.nhops)
			return;
	} else {
		r->ndone++;
	}
	sl->r = res;
	if (r->tr)
		tr_settle(r, sl);
	else if (r->s.kind != HS_PROBE_TRACEROUTE)
		print_result(r, &sl->r);
	/* finish from the loop, not from inside the tracer's callback */
	if (r->ndone >= r->s.count && r->nsent >= r->s.count)
		uv_timer_start(&r->end_timer, end_cb, 0, 0);
}
