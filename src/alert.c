/* alert.c - parse threshold conditions, measure them on the rates, fire once */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alert.h"

#define MAX_WORDS 12
#define WORD_MAX 96

struct cword {
	char s[WORD_MAX];
	int col;		/* 1-based */
};

struct cparse {
	struct cword w[MAX_WORDS];
	int n;
	int eol;		/* column just past the text */
	char *err;
	size_t errlen;
};

static int cerr(struct cparse *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int cerr(struct cparse *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->err, p->errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static int split(struct cparse *p, const char *text)
{
	const char *s = text;

	p->n = 0;
	while (*s) {
		if (*s == ' ' || *s == '\t') {
			s++;
			continue;
		}
		const char *b = s;
		while (*s && *s != ' ' && *s != '\t')
			s++;
		int col = (int)(b - text) + 1;
		size_t len = (size_t)(s - b);
		if (p->n == MAX_WORDS)
			return cerr(p, "too many words at column %d (a condition is at most %d)", col,
				    MAX_WORDS);
		if (len >= WORD_MAX)
			return cerr(p, "word too long at column %d", col);
		memcpy(p->w[p->n].s, b, len);
		p->w[p->n].s[len] = '\0';
		p->w[p->n].col = col;
		p->n++;
	}
	p->eol = (int)(s - text) + 1;
	return 0;
}

/* word i, or an error naming what was expected at the end */
static const struct cword *need(struct cparse *p, int i, const char *what)
{
	if (i < p->n)
		return &p->w[i];
	cerr(p, "expected %s at column %d (end of condition)", what, p->eol);
	return NULL;
}

static int parse_op(struct cparse *p, int i, bool *above)
{
	const struct cword *w = need(p, i, "'>' or '<'");

	if (!w)
		return -1;
	if (strcmp(w->s, ">") == 0)
		*above = true;
	else if (strcmp(w->s, "<") == 0)
		*above = false;
	else
		return cerr(p, "expected '>' or '<' at column %d, got '%s'", w->col, w->s);
	return 0;
}

static int parse_number(struct cparse *p, const struct cword *w, const char *suffix,
			double max, double *v)
{
	char buf[WORD_MAX], *end;
	size_t l = strlen(w->s), sl = strlen(suffix);

	snprintf(buf, sizeof(buf), "%s", w->s);
	if (sl && l > sl && strcmp(buf + l - sl, suffix) == 0)
		buf[l - sl] = '\0';
	if (!(buf[0] >= '0' && buf[0] <= '9') && buf[0] != '.')
		goto bad;
	*v = strtod(buf, &end);
	if (*end || end == buf || !(*v >= 0) || *v > max)
		goto bad;
	return 0;
bad:
	return cerr(p, "bad threshold '%s' at column %d (expected a number%s%s, at most %g)", w->s,
		    w->col, sl ? " with an optional " : "", suffix, max);
}

static int parse_endpoint(struct cparse *p, const struct cword *w, struct hs_addr *a, int *port)
{
	char host[WORD_MAX];
	const char *ps = NULL;

	*port = -1;
	snprintf(host, sizeof(host), "%s", w->s);
	if (host[0] == '[') {
		char *close = strchr(host, ']');
		if (!close || (close[1] && close[1] != ':'))
			goto bad;
		*close = '\0';
		if (close[1] == ':')
			ps = close + 2;
		memmove(host, host + 1, strlen(host + 1) + 1);
	} else {
		char *colon = strchr(host, ':');
		if (colon && !strchr(colon + 1, ':')) {
			*colon = '\0';
			ps = colon + 1;
		}
	}
	if (hs_addr_parse(host, a) < 0)
		goto bad;
	if (ps) {
		uint64_t v;
		if (hs_parse_uint(ps, 65535, &v) < 0)
			return cerr(p, "bad port '%s' at column %d (expected 0-65535)", ps, w->col);
		*port = (int)v;
	}
	return 0;
bad:
	return cerr(p, "bad endpoint '%s' at column %d (expected ADDR, ADDR:PORT or [V6ADDR]:PORT)",
		    w->s, w->col);
}

/* "A-B": the first '-' that splits it into two switches with a link */
static int parse_link(struct cparse *p, const struct cword *w, const struct hs_topo *topo,
		      struct hs_acond *c)
{
	const char *s = w->s;
	const char *dash = strchr(s, '-');

	if (!dash || dash == s || !dash[1])
		return cerr(p, "bad link '%s' at column %d (expected SWITCH-SWITCH such as "
			    "leaf1-spine1)", s, w->col);
	if (!topo)
		return cerr(p, "link '%s' at column %d needs a topology (topo load FILE)", s, w->col);
	for (; dash; dash = strchr(dash + 1, '-')) {
		size_t la = (size_t)(dash - s);
		if (la == 0 || la >= HS_NAME_MAX || strlen(dash + 1) >= HS_NAME_MAX)
			continue;
		memcpy(c->a, s, la);
		c->a[la] = '\0';
		snprintf(c->b, sizeof(c->b), "%s", dash + 1);
		int a = hs_topo_switch_by_name(topo, c->a), b = hs_topo_switch_by_name(topo, c->b);
		if (a < 0 || b < 0)
			continue;
		c->link = hs_topo_link(topo, a, b);
		if (c->link < 0)
			return cerr(p, "no link between '%s' and '%s' at column %d", c->a, c->b,
				    w->col);
		return 0;
	}
	return cerr(p, "unknown switch in '%s' at column %d (expected SWITCH-SWITCH of the "
		    "topology)", s, w->col);
}

static int end_of(struct cparse *p, int i)
{
	if (i < p->n)
		return cerr(p, "expected end of condition at column %d, got '%s'", p->w[i].col,
			    p->w[i].s);
	return 0;
}

int hs_acond_parse(const char *text, const struct hs_topo *topo, struct hs_acond *out, char *err,
		   size_t errlen)
{
	struct cparse p = { .err = err, .errlen = errlen };
	struct hs_acond c;
	const struct cword *w;

	memset(&c, 0, sizeof(c));
	c.link = -1;
	c.sport = c.dport = -1;
	if (errlen)
		err[0] = '\0';
	if (split(&p, text) < 0)
		return -1;
	if (!(w = need(&p, 0, "link, flow, drops or retx")))
		return -1;
	if (strcmp(w->s, "link") == 0) {
		c.kind = HS_AK_LINK;
		if (!(w = need(&p, 1, "a link SWITCH-SWITCH")) || parse_link(&p, w, topo, &c) < 0)
			return -1;
		if (!(w = need(&p, 2, "util or bps")))
			return -1;
		if (strcmp(w->s, "util") == 0)
			c.metric = HS_AM_UTIL;
		else if (strcmp(w->s, "bps") == 0)
			c.metric = HS_AM_BPS;
		else
			return cerr(&p, "expected util or bps at column %d, got '%s'", w->col, w->s);
		if (parse_op(&p, 3, &c.above) < 0 || !(w = need(&p, 4, "a threshold")))
			return -1;
		if (c.metric == HS_AM_UTIL) {
			if (parse_number(&p, w, "%", 1000, &c.threshold) < 0)
				return -1;
		} else if (hs_parse_bps(w->s, &c.threshold) < 0) {
			return cerr(&p, "bad threshold '%s' at column %d (expected a rate such as "
				    "5M or 10G)", w->s, w->col);
		}
		if (end_of(&p, 5) < 0)
			return -1;
		/* utilization only against a known speed: never an assumed one */
		if (c.metric == HS_AM_UTIL && !hs_link_speed_source(topo, c.link))
			return cerr(&p, "no speed for 'util' at column %d: link %s-%s has none "
				    "in the topology (give its link line 'speed RATE', or use "
				    "bps)", p.w[2].col, c.a, c.b);
	} else if (strcmp(w->s, "flow") == 0) {
		c.kind = HS_AK_FLOW;
		c.metric = HS_AM_BPS;
		if (!(w = need(&p, 1, "SRC[:PORT]")) || parse_endpoint(&p, w, &c.src, &c.sport) < 0)
			return -1;
		if (!(w = need(&p, 2, "'>' between the endpoints")))
			return -1;
		if (strcmp(w->s, ">") != 0)
			return cerr(&p, "expected '>' between the endpoints at column %d, got '%s'",
				    w->col, w->s);
		if (!(w = need(&p, 3, "DST[:PORT]")) || parse_endpoint(&p, w, &c.dst, &c.dport) < 0)
			return -1;
		if (!(w = need(&p, 4, "bps")))
			return -1;
		if (strcmp(w->s, "bps") != 0)
			return cerr(&p, "expected bps at column %d, got '%s'", w->col, w->s);
		if (parse_op(&p, 5, &c.above) < 0 || !(w = need(&p, 6, "a threshold")))
			return -1;
		if (hs_parse_bps(w->s, &c.threshold) < 0)
			return cerr(&p, "bad threshold '%s' at column %d (expected a rate such as "
				    "5M or 10G)", w->s, w->col);
		if (end_of(&p, 7) < 0)
			return -1;
	} else if (strcmp(w->s, "drops") == 0 || strcmp(w->s, "retx") == 0) {
		c.kind = strcmp(w->s, "drops") == 0 ? HS_AK_DROPS : HS_AK_RETX;
		c.metric = HS_AM_PER_SEC;
		if (parse_op(&p, 1, &c.above) < 0 || !(w = need(&p, 2, "a threshold")))
			return -1;
		if (parse_number(&p, w, "/s", 1e9, &c.threshold) < 0 || end_of(&p, 3) < 0)
			return -1;
	} else {
		return cerr(&p, "expected link, flow, drops or retx at column %d, got '%s'", w->col,
			    w->s);
	}
	*out = c;
	return 0;
}

void hs_acond_resolve(struct hs_acond *c, const struct hs_topo *topo)
{
	if (c->kind != HS_AK_LINK)
		return;
	int a = topo ? hs_topo_switch_by_name(topo, c->a) : -1;
	int b = topo ? hs_topo_switch_by_name(topo, c->b) : -1;
	c->link = a >= 0 && b >= 0 ? hs_topo_link(topo, a, b) : -1;
}

static bool flow_matches(const struct hs_acond *c, const struct hs_flowkey *k)
{
	return hs_addr_eq(&c->src, &k->src) && hs_addr_eq(&c->dst, &k->dst) &&
	       (c->sport < 0 || c->sport == k->sport) && (c->dport < 0 || c->dport == k->dport);
}

bool hs_acond_measure(const struct hs_acond *c, const struct hs_rates *r, uint64_t now,
		      uint64_t window, double *value)
{
	switch (c->kind) {
	case HS_AK_LINK: {
		if (c->link < 0 || c->link >= r->nlinks)
			return false;
		double ab = r->link_bps[2 * c->link], ba = r->link_bps[2 * c->link + 1];
		int d = ab >= ba ? 2 * c->link : 2 * c->link + 1;
		double bps = ab >= ba ? ab : ba, util;
		if (c->metric == HS_AM_BPS) {
			*value = bps;
			return true;
		}
		if (!hs_link_util(r->topo, d, bps, &util))
			return false;
		*value = 100.0 * util;
		return true;
	}
	case HS_AK_FLOW: {
		double sum = 0;
		for (size_t i = 0; i < r->nused; i++)
			if (r->flows[i].used && r->flows[i].has_rate && flow_matches(c, &r->flows[i].key))
				sum += r->flows[i].bps;
		*value = sum;
		return true;
	}
	case HS_AK_DROPS:
		*value = hs_rates_drops_per_sec(r, now, window);
		return true;
	case HS_AK_RETX:
		*value = hs_rates_retx_per_sec(r, now, window);
		return true;
	}
	return false;
}

bool hs_acond_holds(const struct hs_acond *c, double value)
{
	return c->above ? value > c->threshold : value < c->threshold;
}

const char *hs_acond_fmt(const struct hs_acond *c, double value, char *buf, size_t len)
{
	if (c->metric == HS_AM_UTIL)
		snprintf(buf, len, "%.1f%%", value);
	else if (c->metric == HS_AM_BPS)
		hs_fmt_bps(value, buf, len);
	else
		snprintf(buf, len, "%.1f/s", value);
	return buf;
}

/* ---- the set ------------------------------------------------------------------ */

void hs_alerts_init(struct hs_alerts *as)
{
	memset(as, 0, sizeof(*as));
	as->next_id = 1;
}

int hs_alerts_add(struct hs_alerts *as, const char *text, const struct hs_topo *topo, char *err,
		  size_t errlen)
{
	struct hs_acond c;

	if (hs_acond_parse(text, topo, &c, err, errlen) < 0)
		return -1;
	if (as->n == HS_ALERT_MAX) {
		snprintf(err, errlen, "too many alerts (at most %d; alert del ID)", HS_ALERT_MAX);
		return -1;
	}
	struct hs_alert *a = &as->a[as->n++];
	memset(a, 0, sizeof(*a));
	a->id = as->next_id++;
	a->c = c;
	a->armed = true;
	/* the words as parsed, one blank between them */
	size_t o = 0;
	const char *s = text;
	while (*s && o + 1 < sizeof(a->text)) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s)
			break;
		if (o)
			a->text[o++] = ' ';
		while (*s && *s != ' ' && *s != '\t' && o + 1 < sizeof(a->text))
			a->text[o++] = *s++;
	}
	a->text[o] = '\0';
	return (int)a->id;
}

int hs_alerts_del(struct hs_alerts *as, uint32_t id)
{
	for (int i = 0; i < as->n; i++) {
		if (as->a[i].id == id) {
			memmove(&as->a[i], &as->a[i + 1], (size_t)(as->n - i - 1) * sizeof(as->a[0]));
			as->n--;
			return 0;
		}
	}
	return -1;
}

void hs_alerts_resolve(struct hs_alerts *as, const struct hs_topo *topo)
{
	for (int i = 0; i < as->n; i++)
		hs_acond_resolve(&as->a[i].c, topo);
}

void hs_alerts_eval(struct hs_alerts *as, const struct hs_rates *r, uint64_t now, uint64_t window,
		    hs_alert_fire_cb fire, void *arg)
{
	for (int i = 0; i < as->n; i++) {
		struct hs_alert *a = &as->a[i];
		double v;
		if (!hs_acond_measure(&a->c, r, now, window, &v)) {
			a->measured = false;
			continue;
		}
		a->measured = true;
		a->value = v;
		if (!hs_acond_holds(&a->c, v)) {
			a->armed = true;
			continue;
		}
		if (!a->armed)
			continue;
		a->armed = false;
		a->fired++;
		a->fired_ts = now;
		if (fire)
			fire(arg, a, v, now);
	}
}
