/* probecmd.c - what the probe and traceroute verbs share (probecmd.h): the
 * grammar of their words, and running the engine's probe (probe.h) for a
 * verb, its results printed above the prompt as they come
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include "cmd.h"
#include "console.h"
#include "probe.h"
#include "probecmd.h"

#define MAX_WORDS 64
#define DEFAULT_INTERVAL_NS (100 * 1000000ULL)
#define TRACEROUTE_INTERVAL_NS (20 * 1000000ULL)

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

/* ---- running a probe for a verb ------------------------------------------------ */

bool hs_probe_json(const struct hs_probe_view *v, const struct hs_probe_run *r)
{
	return r->s.json || v->ctx->out->json;
}

/* print what an hs_out wrote to a memory stream: above the prompt, or in a
 * runbook on the verb's output */
FILE *hs_probe_mem_open(char **buf, size_t *len, struct hs_out *o, bool json)
{
	FILE *fp = open_memstream(buf, len);

	if (fp)
		out_init(o, fp, fp, json);
	return fp;
}

void hs_probe_mem_print(struct hs_ctx *ctx, FILE *fp, char **bufp, size_t *lenp)
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
		fprintf(ctx->out->fp, "%s\n", buf);
		fflush(ctx->out->fp);
	}
	free(buf);
}

static void probe_error(void *arg, const char *msg)
{
	struct hs_probe_view *v = arg;

	hs_async_print(v->ctx, "error: %s", msg);
}

/* the run is over: the verb is */
static void probe_done(void *arg, int status)
{
	struct hs_probe_view *v = arg;
	struct hs_ctx *ctx = v->ctx;

	free(v);
	if (ctx->cancel)
		ctx->cancel = NULL;
	hs_cmd_finish(ctx, status < 0 ? HS_CMD_FAIL : HS_CMD_OK);
}

int hs_probe_verb_run(struct hs_ctx *ctx, struct hs_probe_spec *s, const char *words,
		      struct hs_probe_cbs cb)
{
	const char *verb = s->kind == HS_PROBE_TRACEROUTE ? "traceroute" : "probe";
	char err[512];

	s->json = s->json || ctx->out->json;	/* --json after the verb */
	/* the copies come back only through the analyzer's interface: said
	 * before anything is opened, and why it is wanted */
	if (!hs_capture_running(ctx) && ctx->topo && ctx->topo->analyzer_iface[0] &&
	    if_nametoindex(ctx->topo->analyzer_iface) == 0)
		return out_err(ctx->out, "%s: no interface '%s', where the topology's analyzer "
			       "takes the mirrored copies (is the fabric up? the lab's: "
			       "hopscope-lab up)", verb, ctx->topo->analyzer_iface);
	struct hs_probe_run *r = hs_probe_open(ctx, s, err, sizeof(err));
	if (!r)
		return out_err(ctx->out, "%s", err);
	if (!hs_capture_running(ctx)) {
		if (ctx->topo && ctx->topo->analyzer_iface[0]) {
			/* the probe's copies come back only through it: a capture
			 * that cannot start (it said why) fails the verb, unsent */
			if (hs_capture_start(ctx, ctx->topo->analyzer_iface, false, 0, 0, 1) < 0) {
				hs_probe_close(r);
				return HS_CMD_FAIL;
			}
			if (ctx->interactive)
				out_text(ctx->out, "capturing on '%s'\n", ctx->topo->analyzer_iface);
		} else {
			out_warn(ctx->out, "%s: no capture is running, so the probe's mirrored "
				 "copies will not be seen (capture start IFACE)", verb);
		}
	}
	struct hs_probe_view *v = hs_xcalloc(1, sizeof(*v));
	v->ctx = ctx;
	cb.error = probe_error;
	cb.done = probe_done;
	cb.arg = v;
	if (hs_probe_start(r, words, &cb, err, sizeof(err)) < 0) {
		free(v);
		if (err[0])
			out_err(ctx->out, "%s", err);
		return HS_CMD_FAIL;
	}
	ctx->cancel = hs_probe_stop;
	return HS_CMD_PENDING;
}
