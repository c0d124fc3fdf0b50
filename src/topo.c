/* topo.c - topology file parser, lookups and shortest-path distances
 *
 * The file is read in two passes: the first defines every switch (so links,
 * hosts and subnets may name switches defined further down), the second
 * everything else. The first error refuses the whole file.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo.h"

#define MAX_WORDS 16

struct word {
	const char *s;		/* not NUL terminated */
	size_t len;
	int col;		/* 1-based */
};

struct parser {
	struct hs_topo *t;
	const char *name;
	char *err;
	size_t errlen;
	int line;
	int eol_col;		/* column just past the last word */
	int cap_sw, cap_links, cap_hosts, cap_subnets;
	struct hs_topo_aidx host_names;	/* the hosts read so far, by name */
	struct hs_topo_aidx mirrors;	/* the switches read so far, by mirror address */
};

/* the address indexes (below), for the checks made as lines are read */
typedef const struct hs_addr *(*addr_of_fn)(const struct hs_topo *t, int i);
static const struct hs_addr *mirror_addr_of(const struct hs_topo *t, int i);
static int aidx_find(const struct hs_topo_aidx *x, const struct hs_topo *t, int n, addr_of_fn at,
		     const struct hs_addr *a);
static void aidx_add(struct hs_topo_aidx *x, const struct hs_topo *t, int n, addr_of_fn at);

static const char *sw_name_of(const struct hs_topo *t, int i)
{
	return t->sw[i].name;
}

static const char *host_name_of(const struct hs_topo *t, int i)
{
	return t->hosts[i].name;
}

static int32_t name_find(const struct hs_topo_aidx *x, const struct hs_topo *t,
			 const char *(*name_of)(const struct hs_topo *, int), const char *name);
static void name_add(struct hs_topo_aidx *x, const struct hs_topo *t,
		     const char *(*name_of)(const struct hs_topo *, int), int n);

static const char *const roles[] = { "leaf", "spine", "agg", "core", "tor" };

static int perr(struct parser *p, int col, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int perr(struct parser *p, int col, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(p->err, p->errlen, "%s:%d:%d: ", p->name, p->line, col);

	if (n < 0 || (size_t)n >= p->errlen)
		return -1;
	va_start(ap, fmt);
	vsnprintf(p->err + n, p->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

static bool word_is(const struct word *w, const char *s)
{
	return w->len == strlen(s) && memcmp(w->s, s, w->len) == 0;
}

/* copy a word into buf; -1 when it does not fit */
static int word_copy(const struct word *w, char *buf, size_t len)
{
	if (w->len >= len)
		return -1;
	memcpy(buf, w->s, w->len);
	buf[w->len] = '\0';
	return 0;
}

static void *grow(void *arr, int *cap, int n, size_t size)
{
	if (n < *cap)
		return arr;
	int ncap = *cap ? *cap * 2 : 16;
	void *p = realloc(arr, (size_t)ncap * size);
	if (!p) {
		fprintf(stderr, "hopscope: out of memory\n");
		abort();
	}
	*cap = ncap;
	return p;
}

static int get_name(struct parser *p, const struct word *w, char *buf, const char *what)
{
	if (w->len == 0)
		return perr(p, w->col, "expected %s", what);
	if (word_copy(w, buf, HS_NAME_MAX) < 0)
		return perr(p, w->col, "%s too long (at most %d characters)", what,
			    HS_NAME_MAX - 1);
	return 0;
}

static int get_addr(struct parser *p, const struct word *w, struct hs_addr *a, const char *what)
{
	char buf[HS_ADDRSTRLEN];

	if (word_copy(w, buf, sizeof(buf)) < 0 || hs_addr_parse(buf, a) < 0)
		return perr(p, w->col, "expected %s address, got '%.*s'", what,
			    (int)(w->len > 64 ? 64 : w->len), w->s);
	return 0;
}

static int get_switch(struct parser *p, const struct word *w)
{
	char buf[HS_NAME_MAX];

	if (word_copy(w, buf, sizeof(buf)) == 0) {
		int i = hs_topo_switch_by_name(p->t, buf);
		if (i >= 0)
			return i;
	}
	perr(p, w->col, "unknown switch '%.*s'", (int)(w->len > 64 ? 64 : w->len), w->s);
	return -1;
}

/* a redis address: unix:/ABSOLUTE/PATH, or HOST:PORT (HOST a name or IPv4
 * address, PORT 1 to 65535) */
static int get_redis(struct parser *p, const struct word *w, char *buf, size_t len)
{
	const char *colon;
	uint64_t port;
	bool ok = false;

	if (word_copy(w, buf, len) == 0) {
		colon = strrchr(buf, ':');
		if (strncmp(buf, "unix:/", 6) == 0)
			ok = buf[6] != '\0';
		else if (colon && colon > buf && hs_parse_dec(colon + 1, 65535, &port) == 0 &&
			 port > 0)
			ok = strspn(buf, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				    "0123456789.-_") == (size_t)(colon - buf);
	}
	if (!ok)
		return perr(p, w->col,
			    "expected redis address unix:/PATH or HOST:PORT, got '%.*s'",
			    (int)(w->len > 64 ? 64 : w->len), w->s);
	return 0;
}

/* "need" words after the keyword; a missing one is reported at end of line */
static int need(struct parser *p, int nw, int n, const char *what)
{
	if (nw < n)
		return perr(p, p->eol_col, "expected %s", what);
	return 0;
}

static int parse_switch(struct parser *p, struct word *w, int nw)
{
	struct hs_topo *t = p->t;
	struct hs_switch sw;
	bool have_role = false, have_mirror = false, have_lo = false;

	memset(&sw, 0, sizeof(sw));
	/* refused at the first switch too many, not after reading them all */
	if (t->nsw >= HS_TOPO_MAX_SWITCHES)
		return perr(p, w[0].col, "too many switches (at most %d)", HS_TOPO_MAX_SWITCHES);
	if (need(p, nw, 2, "switch name") < 0 || get_name(p, &w[1], sw.name, "switch name") < 0)
		return -1;
	if (hs_topo_switch_by_name(t, sw.name) >= 0)
		return perr(p, w[1].col, "duplicate switch '%s'", sw.name);
	for (int i = 2; i < nw; i += 2) {
		if (!word_is(&w[i], "role") && !word_is(&w[i], "mirror") &&
		    !word_is(&w[i], "loopback") && !word_is(&w[i], "driver") &&
		    !word_is(&w[i], "redis"))
			return perr(p, w[i].col,
				    "expected 'role', 'mirror', 'loopback', 'driver' or 'redis', got '%.*s'",
				    (int)(w[i].len > 64 ? 64 : w[i].len), w[i].s);
		if (i + 1 >= nw)
			return perr(p, p->eol_col, "expected a value after '%.*s'",
				    (int)w[i].len, w[i].s);
		if (word_is(&w[i], "role")) {
			size_t r;
			for (r = 0; r < HS_ARRAY_SIZE(roles); r++)
				if (word_is(&w[i + 1], roles[r]))
					break;
			if (r == HS_ARRAY_SIZE(roles))
				return perr(p, w[i + 1].col,
					    "expected role leaf, spine, agg, core or tor");
			snprintf(sw.role, sizeof(sw.role), "%s", roles[r]);
			have_role = true;
		} else if (word_is(&w[i], "driver")) {
			if (!word_is(&w[i + 1], "lab") && !word_is(&w[i + 1], "sonic"))
				return perr(p, w[i + 1].col, "expected driver lab or sonic");
			word_copy(&w[i + 1], sw.driver, sizeof(sw.driver));
		} else if (word_is(&w[i], "redis")) {
			if (get_redis(p, &w[i + 1], sw.redis, sizeof(sw.redis)) < 0)
				return -1;
		} else if (word_is(&w[i], "mirror")) {
			if (get_addr(p, &w[i + 1], &sw.mirror, "mirror") < 0)
				return -1;
			have_mirror = true;
		} else {
			if (get_addr(p, &w[i + 1], &sw.loopback, "loopback") < 0)
				return -1;
			have_lo = true;
		}
	}
	if (!have_role)
		return perr(p, p->eol_col, "expected 'role ROLE'");
	if (!have_mirror)
		return perr(p, p->eol_col, "expected 'mirror ADDR'");
	(void)have_lo;		/* the loopback is optional (no IP-in-IP target) */
	if (!sw.driver[0])
		snprintf(sw.driver, sizeof(sw.driver), "lab");
	if (strcmp(sw.driver, "sonic") == 0 && !sw.redis[0])
		return perr(p, p->eol_col, "expected 'redis ADDR' for a switch with driver sonic");
	if (strcmp(sw.driver, "sonic") != 0 && sw.redis[0])
		return perr(p, w[1].col, "switch '%s' has a redis address but not driver sonic",
			    sw.name);
	int same = aidx_find(&p->mirrors, t, t->nsw, mirror_addr_of, &sw.mirror);
	if (same >= 0)
		return perr(p, w[1].col, "switch '%s' has the mirror address of '%s'",
			    sw.name, t->sw[same].name);
	t->sw = grow(t->sw, &p->cap_sw, t->nsw, sizeof(*t->sw));
	t->sw[t->nsw++] = sw;
	name_add(&t->name_idx, t, sw_name_of, t->nsw);
	aidx_add(&p->mirrors, t, t->nsw, mirror_addr_of);
	return 0;
}

static int parse_link(struct parser *p, struct word *w, int nw)
{
	struct hs_topo *t = p->t;
	struct hs_link l;

	memset(&l, 0, sizeof(l));
	if (need(p, nw, 2, "switch name") < 0 || (l.a = get_switch(p, &w[1])) < 0)
		return -1;
	if (need(p, nw, 3, "port name") < 0 || get_name(p, &w[2], l.a_port, "port name") < 0)
		return -1;
	if (need(p, nw, 4, "switch name") < 0 || (l.b = get_switch(p, &w[3])) < 0)
		return -1;
	if (need(p, nw, 5, "port name") < 0 || get_name(p, &w[4], l.b_port, "port name") < 0)
		return -1;
	if (nw > 5 && !word_is(&w[5], "speed"))
		return perr(p, w[5].col, "expected end of line or 'speed RATE'");
	if (nw > 5) {
		char buf[32];
		if (need(p, nw, 7, "link speed such as 10G") < 0)
			return -1;
		if (word_copy(&w[6], buf, sizeof(buf)) < 0 || hs_parse_bps(buf, &l.speed) < 0 ||
		    l.speed < 1)
			return perr(p, w[6].col, "expected link speed such as 10G or 100M, got '%.*s'",
				    (int)(w[6].len > 64 ? 64 : w[6].len), w[6].s);
		if (nw > 7)
			return perr(p, w[7].col, "expected end of line");
	}
	if (l.a == l.b)
		return perr(p, w[3].col, "link from '%s' to itself", t->sw[l.a].name);
	t->links = grow(t->links, &p->cap_links, t->nlinks, sizeof(*t->links));
	t->links[t->nlinks++] = l;
	return 0;
}

static int parse_host(struct parser *p, struct word *w, int nw)
{
	struct hs_topo *t = p->t;
	struct hs_host h;
	bool have_addr = false, have_leaf = false;

	memset(&h, 0, sizeof(h));
	if (need(p, nw, 2, "host name") < 0 || get_name(p, &w[1], h.name, "host name") < 0)
		return -1;
	if (name_find(&p->host_names, t, host_name_of, h.name) >= 0)
		return perr(p, w[1].col, "duplicate host '%s'", h.name);
	for (int i = 2; i < nw; i += 2) {
		if (!word_is(&w[i], "addr") && !word_is(&w[i], "leaf"))
			return perr(p, w[i].col, "expected 'addr' or 'leaf', got '%.*s'",
				    (int)(w[i].len > 64 ? 64 : w[i].len), w[i].s);
		if (i + 1 >= nw)
			return perr(p, p->eol_col, "expected a value after '%.*s'",
				    (int)w[i].len, w[i].s);
		if (word_is(&w[i], "addr")) {
			if (get_addr(p, &w[i + 1], &h.addr, "host") < 0)
				return -1;
			have_addr = true;
		} else {
			if ((h.leaf = get_switch(p, &w[i + 1])) < 0)
				return -1;
			have_leaf = true;
		}
	}
	if (!have_addr)
		return perr(p, p->eol_col, "expected 'addr ADDR'");
	if (!have_leaf)
		return perr(p, p->eol_col, "expected 'leaf SWITCH'");
	t->hosts = grow(t->hosts, &p->cap_hosts, t->nhosts, sizeof(*t->hosts));
	t->hosts[t->nhosts++] = h;
	name_add(&p->host_names, t, host_name_of, t->nhosts);
	return 0;
}

static int parse_subnet(struct parser *p, struct word *w, int nw)
{
	struct hs_topo *t = p->t;
	struct hs_subnet s;
	char buf[HS_ADDRSTRLEN + 8];

	memset(&s, 0, sizeof(s));
	if (need(p, nw, 2, "switch name") < 0 || (s.leaf = get_switch(p, &w[1])) < 0)
		return -1;
	if (need(p, nw, 3, "prefix") < 0)
		return -1;
	if (word_copy(&w[2], buf, sizeof(buf)) < 0 || hs_prefix_parse(buf, &s.net, &s.plen) < 0)
		return perr(p, w[2].col, "expected prefix like 10.1.1.0/24, got '%.*s'",
			    (int)(w[2].len > 64 ? 64 : w[2].len), w[2].s);
	if (nw > 3)
		return perr(p, w[3].col, "expected end of line");
	t->subnets = grow(t->subnets, &p->cap_subnets, t->nsubnets, sizeof(*t->subnets));
	t->subnets[t->nsubnets++] = s;
	return 0;
}

static int parse_analyzer(struct parser *p, struct word *w, int nw)
{
	struct hs_topo *t = p->t;

	if (need(p, nw, 2, "analyzer address") < 0 ||
	    get_addr(p, &w[1], &t->analyzer, "analyzer") < 0)
		return -1;
	if (nw == 2)
		return 0;
	if (!word_is(&w[2], "iface"))
		return perr(p, w[2].col, "expected 'iface' or end of line");
	if (need(p, nw, 4, "interface name") < 0 ||
	    get_name(p, &w[3], t->analyzer_iface, "interface name") < 0)
		return -1;
	if (nw > 4)
		return perr(p, w[4].col, "expected end of line");
	return 0;
}

/* split one line into words; -1 (error set) on too many words */
static int split(struct parser *p, const char *s, const char *end, struct word *w)
{
	int nw = 0;
	const char *start = s;

	p->eol_col = 1;
	while (s < end) {
		if (*s == ' ' || *s == '\t' || *s == '\r') {
			s++;
			continue;
		}
		if (*s == '#')
			break;
		const char *b = s;
		while (s < end && *s != ' ' && *s != '\t' && *s != '\r' && *s != '#')
			s++;
		if (nw == MAX_WORDS)
			return perr(p, (int)(b - start) + 1, "expected end of line");
		w[nw].s = b;
		w[nw].len = (size_t)(s - b);
		w[nw].col = (int)(b - start) + 1;
		p->eol_col = (int)(s - start) + 2;
		nw++;
	}
	return nw;
}

static int run_pass(struct parser *p, const char *text, int pass)
{
	const char *s = text;

	p->line = 0;
	while (*s) {
		const char *e = strchr(s, '\n');
		struct word w[MAX_WORDS];
		int nw, rc = 0;

		if (!e)
			e = s + strlen(s);
		p->line++;
		if ((nw = split(p, s, e, w)) < 0)
			return -1;
		if (nw > 0) {
			bool is_sw = word_is(&w[0], "switch");
			if (pass == 1 && is_sw)
				rc = parse_switch(p, w, nw);
			else if (pass == 1 && !word_is(&w[0], "link") && !word_is(&w[0], "host") &&
				 !word_is(&w[0], "subnet") && !word_is(&w[0], "analyzer"))
				rc = perr(p, w[0].col,
					  "expected switch, link, host, subnet or analyzer, got '%.*s'",
					  (int)(w[0].len > 64 ? 64 : w[0].len), w[0].s);
			else if (pass == 2 && word_is(&w[0], "link"))
				rc = parse_link(p, w, nw);
			else if (pass == 2 && word_is(&w[0], "host"))
				rc = parse_host(p, w, nw);
			else if (pass == 2 && word_is(&w[0], "subnet"))
				rc = parse_subnet(p, w, nw);
			else if (pass == 2 && word_is(&w[0], "analyzer"))
				rc = parse_analyzer(p, w, nw);
		}
		if (rc < 0)
			return -1;
		s = *e ? e + 1 : e;
	}
	return 0;
}

/* breadth-first search from every switch over the links (adjacency in CSR form) */
static void compute_dist(struct hs_topo *t)
{
	size_t n = (size_t)t->nsw;
	int *queue = hs_xcalloc(n, sizeof(int));
	int *start = hs_xcalloc(n + 1, sizeof(int));
	int *adj = hs_xcalloc((size_t)t->nlinks * 2, sizeof(int));
	int *fill = hs_xcalloc(n, sizeof(int));

	for (int l = 0; l < t->nlinks; l++) {
		start[t->links[l].a + 1]++;
		start[t->links[l].b + 1]++;
	}
	for (size_t i = 0; i < n; i++)
		start[i + 1] += start[i];
	for (int l = 0; l < t->nlinks; l++) {
		int a = t->links[l].a, b = t->links[l].b;
		adj[start[a] + fill[a]++] = b;
		adj[start[b] + fill[b]++] = a;
	}
	t->dist = hs_xcalloc(n * n, sizeof(int16_t));
	for (size_t i = 0; i < n * n; i++)
		t->dist[i] = -1;
	for (size_t src = 0; src < n; src++) {
		int16_t *d = t->dist + src * n;
		size_t head = 0, tail = 0;

		d[src] = 0;
		queue[tail++] = (int)src;
		while (head < tail) {
			int u = queue[head++];
			for (int k = start[u]; k < start[u + 1]; k++) {
				int v = adj[k];
				if (d[v] < 0) {
					d[v] = (int16_t)(d[u] + 1);
					queue[tail++] = v;
				}
			}
		}
	}
	free(queue);
	free(start);
	free(adj);
	free(fill);
}

/* ---- address indexes ------------------------------------------------------ */

static const struct hs_addr *host_addr_of(const struct hs_topo *t, int i)
{
	return &t->hosts[i].addr;
}

static const struct hs_addr *mirror_addr_of(const struct hs_topo *t, int i)
{
	return &t->sw[i].mirror;
}

static const struct hs_addr *loop_addr_of(const struct hs_topo *t, int i)
{
	return &t->sw[i].loopback;
}

/* an empty index for n entries, at most half full */
static void idx_alloc(struct hs_topo_aidx *x, int n)
{
	uint32_t size = 16;

	while (size < (uint32_t)n * 2)
		size <<= 1;
	x->slot = hs_xcalloc(size, sizeof(*x->slot));
	x->mask = size - 1;
	for (uint32_t i = 0; i < size; i++)
		x->slot[i] = -1;
}

/* entry i, unless an equal address is there before it */
static void aidx_insert(struct hs_topo_aidx *x, const struct hs_topo *t, int i, addr_of_fn at)
{
	const struct hs_addr *a = at(t, i);

	if (a->af != 4 && a->af != 6)
		return;
	for (uint32_t h = hs_addr_hash(a) & x->mask;; h = (h + 1) & x->mask) {
		if (x->slot[h] < 0) {
			x->slot[h] = i;
			return;
		}
		if (hs_addr_eq(at(t, x->slot[h]), a))
			return;
	}
}

/* the first of equal addresses wins, as the scans it replaces did */
static void aidx_build(struct hs_topo_aidx *x, const struct hs_topo *t, int n, addr_of_fn at)
{
	idx_alloc(x, n);
	for (int i = 0; i < n; i++)
		aidx_insert(x, t, i, at);
}

/* entries 0 .. n-1 are read, n-1 the newest: the index grows as they do */
static void aidx_add(struct hs_topo_aidx *x, const struct hs_topo *t, int n, addr_of_fn at)
{
	if (!x->slot || (uint32_t)n * 2 > x->mask + 1) {
		free(x->slot);
		aidx_build(x, t, n, at);
		return;
	}
	aidx_insert(x, t, n - 1, at);
}

static int aidx_find(const struct hs_topo_aidx *x, const struct hs_topo *t, int n, addr_of_fn at,
		     const struct hs_addr *a)
{
	if (!x->slot) {
		for (int i = 0; i < n; i++)
			if (hs_addr_eq(at(t, i), a))
				return i;
		return -1;
	}
	for (uint32_t h = hs_addr_hash(a) & x->mask; x->slot[h] >= 0; h = (h + 1) & x->mask)
		if (hs_addr_eq(at(t, x->slot[h]), a))
			return x->slot[h];
	return -1;
}

/* Names, of switches and of hosts: links and hosts name their switches,
 * and each new name is checked against those before it. Scanned, a
 * fat-tree's thousands of them made both quadratic (most of parsing one).
 * The index grows as names are read, a power of two at least twice their
 * number. */
static uint32_t name_hash(const char *name)
{
	return (uint32_t)hs_fnv1a(0xcbf29ce484222325ULL, name, strlen(name));
}

static int32_t name_find(const struct hs_topo_aidx *x, const struct hs_topo *t,
			 const char *(*name_of)(const struct hs_topo *, int), const char *name)
{
	if (!x->slot)
		return -1;
	for (uint32_t h = name_hash(name) & x->mask; x->slot[h] >= 0; h = (h + 1) & x->mask)
		if (strcmp(name_of(t, x->slot[h]), name) == 0)
			return x->slot[h];
	return -1;
}

/* names 0 .. n-1 are read, n-1 the newest (and no duplicate of another) */
static void name_add(struct hs_topo_aidx *x, const struct hs_topo *t,
		     const char *(*name_of)(const struct hs_topo *, int), int n)
{
	int from = n - 1;

	if (!x->slot || (uint32_t)n * 2 > x->mask + 1) {
		free(x->slot);
		idx_alloc(x, n * 2);
		from = 0;
	}
	for (int i = from; i < n; i++) {
		uint32_t h = name_hash(name_of(t, i)) & x->mask;
		while (x->slot[h] >= 0)
			h = (h + 1) & x->mask;
		x->slot[h] = i;
	}
}

static void build_indexes(struct hs_topo *t)
{
	aidx_build(&t->host_idx, t, t->nhosts, host_addr_of);
	aidx_build(&t->mirror_idx, t, t->nsw, mirror_addr_of);
	aidx_build(&t->loop_idx, t, t->nsw, loop_addr_of);
}

struct hs_topo *hs_topo_parse(const char *text, const char *name, char *err, size_t errlen)
{
	struct parser p;
	struct hs_topo *t = hs_xcalloc(1, sizeof(*t));

	memset(&p, 0, sizeof(p));
	p.t = t;
	p.name = name ? name : "-";
	p.err = err;
	p.errlen = errlen;
	if (errlen)
		err[0] = '\0';
	bool ok = run_pass(&p, text, 1) == 0 && run_pass(&p, text, 2) == 0;

	free(p.host_names.slot);
	free(p.mirrors.slot);
	if (!ok) {
		hs_topo_free(t);
		return NULL;
	}
	t->path = hs_xstrdup(p.name);
	compute_dist(t);
	build_indexes(t);
	return t;
}

struct hs_topo *hs_topo_load(const char *path, char *err, size_t errlen)
{
	FILE *fp = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0, cap = 0;
	struct hs_topo *t;

	if (!fp) {
		snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
		return NULL;
	}
	for (;;) {
		if (cap - len < 4096) {
			cap = cap ? cap * 2 : 8192;
			if (cap > (64u << 20)) {
				snprintf(err, errlen, "'%s' is too large for a topology", path);
				free(buf);
				fclose(fp);
				return NULL;
			}
			char *nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				fclose(fp);
				snprintf(err, errlen, "cannot read '%s': out of memory", path);
				return NULL;
			}
			buf = nb;
		}
		size_t n = fread(buf + len, 1, cap - len - 1, fp);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(fp)) {
		snprintf(err, errlen, "cannot read '%s': %s", path, strerror(errno));
		free(buf);
		fclose(fp);
		return NULL;
	}
	fclose(fp);
	buf[len] = '\0';
	if (strlen(buf) != len) {
		int line = 1;
		for (const char *c = buf; *c; c++)
			line += *c == '\n';
		snprintf(err, errlen, "%s:%d:1: expected text, found a NUL byte", path, line);
		free(buf);
		return NULL;
	}
	t = hs_topo_parse(buf, path, err, errlen);
	free(buf);
	return t;
}

void hs_topo_free(struct hs_topo *t)
{
	if (!t)
		return;
	free(t->path);
	free(t->sw);
	free(t->links);
	free(t->hosts);
	free(t->subnets);
	free(t->dist);
	free(t->host_idx.slot);
	free(t->mirror_idx.slot);
	free(t->loop_idx.slot);
	free(t->name_idx.slot);
	free(t);
}

int hs_topo_switch_by_name(const struct hs_topo *t, const char *name)
{
	if (!t || !name)
		return -1;
	if (!t->name_idx.slot) {	/* no index: scan */
		for (int i = 0; i < t->nsw; i++)
			if (strcmp(t->sw[i].name, name) == 0)
				return i;
		return -1;
	}
	return name_find(&t->name_idx, t, sw_name_of, name);
}

int hs_topo_switch_by_addr(const struct hs_topo *t, const struct hs_addr *a)
{
	int i;

	if (!t || !a || a->af == 0)
		return -1;
	i = aidx_find(&t->mirror_idx, t, t->nsw, mirror_addr_of, a);
	return i >= 0 ? i : aidx_find(&t->loop_idx, t, t->nsw, loop_addr_of, a);
}

int hs_topo_leaf_for(const struct hs_topo *t, const struct hs_addr *a)
{
	int best = -1, best_plen = -1;

	if (!t || !a || a->af == 0)
		return -1;
	int h = aidx_find(&t->host_idx, t, t->nhosts, host_addr_of, a);
	if (h >= 0)
		return t->hosts[h].leaf;
	for (int i = 0; i < t->nsubnets; i++) {
		const struct hs_subnet *s = &t->subnets[i];
		if (s->plen > best_plen && hs_addr_in(a, &s->net, s->plen)) {
			best = s->leaf;
			best_plen = s->plen;
		}
	}
	return best;
}

int hs_topo_next_hops(const struct hs_topo *t, int sw, int dst, int *out, int max)
{
	int n = 0;

	if (!t || !t->dist || sw < 0 || dst < 0 || sw >= t->nsw || dst >= t->nsw || sw == dst)
		return 0;
	int16_t d = t->dist[(size_t)sw * (size_t)t->nsw + (size_t)dst];
	if (d <= 0)
		return 0;
	for (int l = 0; l < t->nlinks && n < max; l++) {
		int v;
		if (t->links[l].a == sw)
			v = t->links[l].b;
		else if (t->links[l].b == sw)
			v = t->links[l].a;
		else
			continue;
		if (t->dist[(size_t)v * (size_t)t->nsw + (size_t)dst] != d - 1)
			continue;
		bool seen = false;	/* parallel links name a neighbour once */
		for (int i = 0; i < n; i++)
			seen |= out[i] == v;
		if (!seen)
			out[n++] = v;
	}
	return n;
}

int hs_topo_link(const struct hs_topo *t, int a, int b)
{
	if (!t)
		return -1;
	for (int l = 0; l < t->nlinks; l++)
		if ((t->links[l].a == a && t->links[l].b == b) ||
		    (t->links[l].a == b && t->links[l].b == a))
			return l;
	return -1;
}

char *hs_topo_text(const struct hs_topo *t, size_t *len)
{
	char *buf = NULL, a[HS_ADDRSTRLEN], b[HS_ADDRSTRLEN];
	FILE *fp = open_memstream(&buf, len);

	if (!fp)
		abort();
	for (int i = 0; i < t->nsw; i++) {
		const struct hs_switch *s = &t->sw[i];
		fprintf(fp, "switch %s role %s mirror %s", s->name, s->role,
			hs_addr_str(&s->mirror, a, sizeof(a)));
		if (s->loopback.af)
			fprintf(fp, " loopback %s", hs_addr_str(&s->loopback, a, sizeof(a)));
		if (strcmp(s->driver, "sonic") == 0)
			fprintf(fp, " driver sonic redis %s", s->redis);
		fputc('\n', fp);
	}
	for (int i = 0; i < t->nlinks; i++) {
		const struct hs_link *l = &t->links[i];
		fprintf(fp, "link %s %s %s %s", t->sw[l->a].name, l->a_port, t->sw[l->b].name,
			l->b_port);
		if (l->speed >= 1)
			fprintf(fp, " speed %.0f", l->speed);
		fputc('\n', fp);
	}
	for (int i = 0; i < t->nhosts; i++)
		fprintf(fp, "host %s addr %s leaf %s\n", t->hosts[i].name,
			hs_addr_str(&t->hosts[i].addr, a, sizeof(a)), t->sw[t->hosts[i].leaf].name);
	for (int i = 0; i < t->nsubnets; i++)
		fprintf(fp, "subnet %s %s/%d\n", t->sw[t->subnets[i].leaf].name,
			hs_addr_str(&t->subnets[i].net, b, sizeof(b)), t->subnets[i].plen);
	if (t->analyzer.af) {
		fprintf(fp, "analyzer %s", hs_addr_str(&t->analyzer, a, sizeof(a)));
		if (t->analyzer_iface[0])
			fprintf(fp, " iface %s", t->analyzer_iface);
		fputc('\n', fp);
	}
	if (fclose(fp) != 0)
		abort();
	return buf;
}
