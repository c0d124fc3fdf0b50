/* watchmodel.c - what the watch panes show, without a terminal
 *
 * Rows, columns, the display filter, sorting, selection and scrolling, the
 * per-link counters and the events log. watch.c draws this and turns keys
 * into calls here; the tests drive it with hand-built traces.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyze.h"
#include "fabric.h"
#include "watch.h"

/* ---- display filter -------------------------------------------------------- */

static const char *const outcome_words[] = {
	[HS_OUT_DELIVERED] = "delivered",
	[HS_OUT_DROPPED] = "dropped",
	[HS_OUT_LOOPED] = "looped",
	[HS_OUT_UNKNOWN] = "unknown",
};

/* "ADDR", "ADDR:PORT", "[V6]:PORT", "V6" */
static int parse_flow_word(const char *w, struct hs_wfilter *f, char *err, size_t errlen)
{
	char buf[HS_ADDRSTRLEN + 16];
	const char *port = NULL;
	uint64_t p;

	if (strlen(w) >= sizeof(buf))
		goto bad;
	if (w[0] == '[') {
		const char *close = strchr(w, ']');
		if (!close)
			goto bad;
		size_t n = (size_t)(close - w - 1);
		memcpy(buf, w + 1, n);
		buf[n] = '\0';
		if (close[1] == ':')
			port = close + 2;
		else if (close[1] != '\0')
			goto bad;
	} else {
		snprintf(buf, sizeof(buf), "%s", w);
		char *colon = strchr(buf, ':');
		/* exactly one colon: IPv4 with a port; more: a bare IPv6 address */
		if (colon && !strchr(colon + 1, ':')) {
			*colon = '\0';
			port = colon + 1;
		}
	}
	if (hs_addr_parse(buf, &f->addr) < 0)
		goto bad;
	f->has_flow = true;
	f->has_port = false;
	if (port) {
		if (hs_parse_uint(port, 65535, &p) < 0) {
			snprintf(err, errlen, "bad port in flow '%s': expected 0-65535", w);
			return -1;
		}
		f->has_port = true;
		f->port = (uint16_t)p;
	}
	return 0;
bad:
	snprintf(err, errlen, "bad flow '%s': expected ADDR[:PORT]", w);
	return -1;
}

int hs_wfilter_parse(const char *text, const struct hs_topo *topo, struct hs_wfilter *f,
		     char *err, size_t errlen)
{
	struct hs_wfilter nf;
	char buf[256], *save = NULL;

	memset(&nf, 0, sizeof(nf));
	nf.any = true;
	if (strlen(text) >= sizeof(buf)) {
		snprintf(err, errlen, "filter too long (at most %zu characters)", sizeof(buf) - 1);
		return -1;
	}
	snprintf(buf, sizeof(buf), "%s", text);
	for (char *w = strtok_r(buf, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		if (strcmp(w, "and") == 0)
			continue;
		char *v = strtok_r(NULL, " \t", &save);
		bool known = strcmp(w, "flow") == 0 || strcmp(w, "switch") == 0 ||
			     strcmp(w, "outcome") == 0;
		if (!known) {
			snprintf(err, errlen, "unknown filter word '%s': expected flow, switch or outcome", w);
			return -1;
		}
		if (!v) {
			snprintf(err, errlen, "'%s' needs a value", w);
			return -1;
		}
		nf.any = false;
		if (strcmp(w, "flow") == 0) {
			if (parse_flow_word(v, &nf, err, errlen) < 0)
				return -1;
		} else if (strcmp(w, "switch") == 0) {
			nf.has_sw_addr = hs_addr_parse(v, &nf.sw_addr) == 0;
			if (topo && hs_topo_switch_by_name(topo, v) < 0 && !nf.has_sw_addr) {
				snprintf(err, errlen, "unknown switch '%s'", v);
				return -1;
			}
			if (strlen(v) >= sizeof(nf.sw)) {
				snprintf(err, errlen, "switch name too long '%s'", v);
				return -1;
			}
			nf.has_switch = true;
			snprintf(nf.sw, sizeof(nf.sw), "%s", v);
		} else {
			int o = -1;
			if (strcmp(v, "probe") == 0)
				o = HS_WOUT_PROBE;
			for (int i = 0; o == -1 && i < (int)HS_ARRAY_SIZE(outcome_words); i++)
				if (outcome_words[i] && strcmp(v, outcome_words[i]) == 0)
					o = i;
			if (o == -1) {
				snprintf(err, errlen, "unknown outcome '%s': expected delivered, dropped, "
					 "looped, unknown or probe", v);
				return -1;
			}
			nf.has_outcome = true;
			nf.outcome = o;
		}
	}
	*f = nf;
	return 0;
}

bool hs_wfilter_match(const struct hs_wfilter *f, const struct hs_trace *t,
		      const struct hs_topo *topo)
{
	if (f->any)
		return true;
	if (f->has_flow) {
		bool s = hs_addr_eq(&t->key.src, &f->addr), d = hs_addr_eq(&t->key.dst, &f->addr);
		if (f->has_port) {
			s = s && t->key.sport == f->port;
			d = d && t->key.dport == f->port;
		}
		if (!s && !d)
			return false;
	}
	if (f->has_outcome) {
		if (f->outcome == HS_WOUT_PROBE ? !(t->flags & HS_TF_PROBE) : t->outcome != f->outcome)
			return false;
	}
	if (f->has_switch) {
		char name[HS_ADDRSTRLEN + HS_NAME_MAX];
		bool found = false;
		for (unsigned i = 0; i < t->nhops && !found; i++)
			found = (f->has_sw_addr && hs_addr_eq(&t->hops[i].addr, &f->sw_addr)) ||
				strcmp(hs_hop_name(topo, &t->hops[i], name, sizeof(name)), f->sw) == 0;
		if (!found)
			return false;
	}
	return true;
}

/* ---- scrolling ---------------------------------------------------------------- */

static void view_clamp(struct hs_wview *v)
{
	if (v->height < 1)
		v->height = 1;
	if (v->count == 0) {
		v->sel = v->top = 0;
		return;
	}
	if (v->sel >= v->count)
		v->sel = v->count - 1;
	if (v->sel < v->top)
		v->top = v->sel;
	if (v->sel >= v->top + (size_t)v->height)
		v->top = v->sel - (size_t)v->height + 1;
	/* no blank space below the last line when the list could fill it */
	if (v->count >= (size_t)v->height && v->top > v->count - (size_t)v->height)
		v->top = v->count - (size_t)v->height;
	if (v->count < (size_t)v->height)
		v->top = 0;
}

void hs_wview_set(struct hs_wview *v, size_t count, int height)
{
	v->count = count;
	v->height = height;
	view_clamp(v);
}

void hs_wview_move(struct hs_wview *v, long delta)
{
	if (delta < 0 && (size_t)-delta > v->sel)
		v->sel = 0;
	else
		v->sel = (size_t)((long)v->sel + delta);
	view_clamp(v);
}

void hs_wview_page(struct hs_wview *v, int dir)
{
	long step = v->height > 1 ? v->height - 1 : 1;
	hs_wview_move(v, dir < 0 ? -step : step);
}

void hs_wview_home(struct hs_wview *v)
{
	v->sel = 0;
	view_clamp(v);
}

void hs_wview_end(struct hs_wview *v)
{
	v->sel = v->count ? v->count - 1 : 0;
	view_clamp(v);
}

/* ---- layout --------------------------------------------------------------------- */

bool hs_wlayout_compute(int cols, int rows, struct hs_wlayout *l)
{
	memset(l, 0, sizeof(*l));
	if (cols < HS_WATCH_MIN_COLS || rows < HS_WATCH_MIN_ROWS)
		return false;
	int body = rows - 1;
	int th = body * 45 / 100;
	int mh = (body - th) * 55 / 100;
	int eh = body - th - mh;
	int dw = cols * 55 / 100;

	l->pane[HS_WP_TRACES] = (struct hs_wrect){ 0, 0, th, cols };
	l->pane[HS_WP_DETAIL] = (struct hs_wrect){ th, 0, mh, dw };
	l->pane[HS_WP_LINKS] = (struct hs_wrect){ th, dw, mh, cols - dw };
	l->pane[HS_WP_EVENTS] = (struct hs_wrect){ th + mh, 0, eh, cols };
	l->status = (struct hs_wrect){ rows - 1, 0, 1, cols };
	return true;
}

/* the narrowest a column is shown at, and what the flow column grows to
 * before the path gets the rest */
#define WC_FLOW_MIN	33	/* "10.1.1.11:40123 > 10.1.4.12:5001" */
#define WC_FLOW_WANT	42
#define WC_PATH_MIN	22	/* "leaf1 > spine2 > leaf4" */
#define WC_OUTCOME_MIN	9	/* "delivered" */
#define WC_TIME_OF_DAY	15	/* "22:13:20.000012", the date left out */

const struct hs_wcolumn hs_wcolumns[HS_WC__COUNT] = {
	[HS_WC_TIME] = { "time", 26, false },
	[HS_WC_FLOW] = { "flow", 0, false },
	[HS_WC_PATH] = { "path", 0, false },
	[HS_WC_OUTCOME] = { "outcome", 15, false },
	[HS_WC_LATENCY] = { "latency", 9, true },
};

void hs_wcols_layout(int width, int outcome_cells, int widths[HS_WC__COUNT])
{
	/* Columns give way by priority, as mtr's and trippy's do: the flow, the
	 * path (switch names) and the outcome always, latency and then the
	 * time of day when there is room, the date with it when there is more;
	 * what is left widens the flow, the outcome (to its widest, the names
	 * of the analyzers that stored a trace whole), then the path. */
	int used = WC_FLOW_MIN + 1 + WC_PATH_MIN + 1 + WC_OUTCOME_MIN;
	int full_time = hs_wcolumns[HS_WC_TIME].width;

	for (int i = 0; i < HS_WC__COUNT; i++)
		widths[i] = 0;
	widths[HS_WC_OUTCOME] = WC_OUTCOME_MIN;
	if (used + 1 + hs_wcolumns[HS_WC_LATENCY].width <= width) {
		widths[HS_WC_LATENCY] = hs_wcolumns[HS_WC_LATENCY].width;
		used += widths[HS_WC_LATENCY] + 1;
	}
	if (widths[HS_WC_LATENCY] && used + 1 + full_time <= width)
		widths[HS_WC_TIME] = full_time;
	else if (widths[HS_WC_LATENCY] && used + 1 + WC_TIME_OF_DAY <= width)
		widths[HS_WC_TIME] = WC_TIME_OF_DAY;
	if (widths[HS_WC_TIME])
		used += widths[HS_WC_TIME] + 1;
	int spare = width - used;
	if (spare < 0)
		spare = 0;
	int more = spare < WC_FLOW_WANT - WC_FLOW_MIN ? spare : WC_FLOW_WANT - WC_FLOW_MIN;
	widths[HS_WC_FLOW] = WC_FLOW_MIN + more;
	spare -= more;
	int want = outcome_cells > hs_wcolumns[HS_WC_OUTCOME].width ? outcome_cells
								      : hs_wcolumns[HS_WC_OUTCOME].width;
	more = want - WC_OUTCOME_MIN;
	more = spare < more ? spare : more;
	widths[HS_WC_OUTCOME] += more;
	widths[HS_WC_PATH] = WC_PATH_MIN + spare - more;
	if (width < used) {	/* below the minimum: flow and path share what there is */
		int flex = width - (used - WC_FLOW_MIN - WC_PATH_MIN);
		widths[HS_WC_FLOW] = flex > 2 ? flex * 45 / 100 : 1;
		widths[HS_WC_PATH] = flex > 2 ? flex - widths[HS_WC_FLOW] : 1;
	}
}

int hs_wfit(const char *s, int cells, char *out, size_t outlen)
{
	size_t o = 0;
	int used = 0;

	if (outlen == 0)
		return 0;
	for (const unsigned char *p = (const unsigned char *)s; *p; ) {
		size_t n = 1;
		if (*p >= 0xf0)
			n = 4;
		else if (*p >= 0xe0)
			n = 3;
		else if (*p >= 0xc0)
			n = 2;
		for (size_t k = 1; k < n; k++)
			if ((p[k] & 0xc0) != 0x80) {
				n = k;	/* broken sequence: take what is there */
				break;
			}
		if (used >= cells || o + n >= outlen)
			break;
		memcpy(out + o, p, n);
		o += n;
		p += n;
		used++;
	}
	out[o] = '\0';
	return used;
}

static int cells_of(const char *s)
{
	int n = 0;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		n += (*p & 0xc0) != 0x80;
	return n;
}

int hs_wfit_ell(const char *s, int cells, const char *ell, char *out, size_t outlen)
{
	int e = cells_of(ell);

	if (cells_of(s) <= cells || cells <= e)
		return hs_wfit(s, cells, out, outlen);
	int used = hs_wfit(s, cells - e, out, outlen);
	size_t o = strlen(out);
	if (o + strlen(ell) < outlen) {
		memcpy(out + o, ell, strlen(ell) + 1);
		used += e;
	}
	return used;
}

int hs_woutcome_fit(const char *s, int cells, const char *ell, char *out, size_t outlen)
{
	const char *open = strstr(s, " [");
	size_t len = strlen(s);
	int e = cells_of(ell);

	if (cells_of(s) <= cells || !open || len < 2 || s[len - 1] != ']')
		return hs_wfit_ell(s, cells, ell, out, outlen);
	/* the outcome and its bracket whole, the names cut inside it */
	size_t head = (size_t)(open - s) + 2;
	char h[64];
	if (head >= sizeof(h))
		return hs_wfit_ell(s, cells, ell, out, outlen);
	memcpy(h, s, head);
	h[head] = '\0';
	int hc = cells_of(h), room = cells - hc - 1;
	if (room <= e || head + 2 >= outlen)
		return hs_wfit_ell(s, cells, ell, out, outlen);
	memcpy(out, h, head);
	int used = hc + hs_wfit(open + 2, room - e, out + head, outlen - head);
	size_t o = strlen(out);
	if (o + strlen(ell) + 1 < outlen) {
		memcpy(out + o, ell, strlen(ell));
		o += strlen(ell);
		out[o++] = ']';
		out[o] = '\0';
		used += e + 1;
	}
	return used;
}

#define PATH_MAX_PARTS 256

int hs_wpath_fit(const char *path, const char *sep, const char *ell, int cells, char *out,
		 size_t outlen)
{
	const char *part[PATH_MAX_PARTS];
	int plen[PATH_MAX_PARTS], pcells[PATH_MAX_PARTS], n = 0;
	size_t sl = strlen(sep);
	int sc = cells_of(sep), ec = cells_of(ell);

	if (cells_of(path) <= cells || !*sep)
		return hs_wfit(path, cells, out, outlen);
	for (const char *p = path; n < PATH_MAX_PARTS;) {
		const char *q = strstr(p, sep);
		size_t len = q ? (size_t)(q - p) : strlen(p);
		char tmp[256];
		snprintf(tmp, sizeof(tmp), "%.*s", (int)len, p);
		part[n] = p;
		plen[n] = (int)len;
		pcells[n++] = cells_of(tmp);
		if (!q)
			break;
		p = q + sl;
	}
	/* the first, the ellipsis and the last; then more from each end */
	int head = 1, tail = 1;
	int need = pcells[0] + sc + ec + sc + pcells[n - 1];
	if (n < 3 || need > cells)
		return hs_wfit_ell(path, cells, ell, out, outlen);
	for (bool grew = true; grew && head + tail < n - 1;) {
		grew = false;
		if (head + tail < n - 1 && need + pcells[head] + sc <= cells) {
			need += pcells[head++] + sc;
			grew = true;
		}
		if (head + tail < n - 1 && need + pcells[n - 1 - tail] + sc <= cells) {
			need += pcells[n - 1 - tail++] + sc;
			grew = true;
		}
	}
	size_t o = 0;
	out[0] = '\0';
	for (int i = 0; i < n && o < outlen; i++) {
		if (i >= head && i < n - tail) {
			if (i == head)
				o += (size_t)snprintf(out + o, outlen - o, "%s%s", sep, ell);
			continue;
		}
		o += (size_t)snprintf(out + o, outlen - o, "%s%.*s", i ? sep : "", plen[i], part[i]);
	}
	if (o >= outlen)
		return hs_wfit_ell(path, cells, ell, out, outlen);
	return need;
}

/* ---- rows ------------------------------------------------------------------------ */

static const char *flow_endpoint(const struct hs_addr *a, uint16_t port, bool ports, char *buf,
				 size_t len)
{
	char as[HS_ADDRSTRLEN];

	hs_addr_str(a, as, sizeof(as));
	if (!ports)
		snprintf(buf, len, "%s", as);
	else if (a->af == 6)
		snprintf(buf, len, "[%s]:%u", as, port);
	else
		snprintf(buf, len, "%s:%u", as, port);
	return buf;
}

/* tcpdump's flag letters: S F R P U E W, '.' for ACK */
static void tcp_flags_str(uint8_t fl, char *buf)
{
	static const struct { uint8_t bit; char c; } map[] = {
		{ 0x02, 'S' }, { 0x01, 'F' }, { 0x04, 'R' }, { 0x08, 'P' },
		{ 0x20, 'U' }, { 0x40, 'E' }, { 0x80, 'W' }, { 0x10, '.' },
	};
	size_t n = 0;

	for (size_t i = 0; i < HS_ARRAY_SIZE(map); i++)
		if (fl & map[i].bit)
			buf[n++] = map[i].c;
	buf[n] = '\0';
	if (n == 0)
		strcpy(buf, "none");
}

static uint64_t trace_latency(const struct hs_trace *t)
{
	int64_t d = t->nhops < 2 ? 0 : hs_hop_delta(&t->hops[0], &t->hops[t->nhops - 1]);

	return d > 0 ? (uint64_t)d : 0;
}

static int trace_class(const struct hs_trace *t)
{
	switch (t->outcome) {
	case HS_OUT_DROPPED: return HS_WCL_DROPPED;
	case HS_OUT_LOOPED: return HS_WCL_LOOPED;
	default: break;
	}
	if (t->flags & HS_TF_PROBE)
		return HS_WCL_PROBE;
	if (t->outcome == HS_OUT_DELIVERED)
		return HS_WCL_DELIVERED;
	return HS_WCL_UNKNOWN;
}

void hs_wrow_fill(struct hs_wrow *r, const struct hs_trace *t, const struct hs_topo *topo,
		  const char *sep)
{
	char a[HS_ADDRSTRLEN + 16], b[HS_ADDRSTRLEN + 16], pb[16], fl[12];
	bool ports = t->key.proto == 6 || t->key.proto == 17;

	r->id = t->id;
	r->ts_ns = hs_trace_time(t);
	r->lat_ns = trace_latency(t);
	r->cls = trace_class(t);

	if (t->nhops)
		hs_fmt_time(r->ts_ns, r->col[HS_WC_TIME], sizeof(r->col[0]));
	else
		snprintf(r->col[HS_WC_TIME], sizeof(r->col[0]), "-");

	flow_endpoint(&t->key.src, t->key.sport, ports, a, sizeof(a));
	flow_endpoint(&t->key.dst, t->key.dport, ports, b, sizeof(b));
	if (t->key.proto == 6) {
		tcp_flags_str(t->tcp_flags, fl);
		snprintf(r->col[HS_WC_FLOW], sizeof(r->col[0]), "%s > %s [%s]", a, b, fl);
	} else {
		snprintf(r->col[HS_WC_FLOW], sizeof(r->col[0]), "%s > %s %s", a, b,
			 hs_proto_name(t->key.proto, pb, sizeof(pb)));
	}

	char *p = r->col[HS_WC_PATH];
	size_t cap = sizeof(r->col[0]), n = 0;
	p[0] = '\0';
	for (unsigned i = 0; i < t->nhops && n < cap; i++) {
		char name[HS_ADDRSTRLEN + HS_NAME_MAX];
		int k = snprintf(p + n, cap - n, "%s%s", i ? sep : "",
				 hs_hop_name(topo, &t->hops[i], name, sizeof(name)));
		if (k < 0)
			break;
		n += (size_t)k;
	}
	if (t->nhops == 0)
		snprintf(p, cap, "-");
	else if (t->extra_hops && n < cap)
		snprintf(p + n, cap - n, " +%u", t->extra_hops);

	/* of a shared history: the analyzers that stored it, after the outcome */
	const char *by = hs_fabric_analyzers(t->analyzer);
	snprintf(r->col[HS_WC_OUTCOME], sizeof(r->col[0]), "%s%s%s%s%s",
		 t->flags & HS_TF_PROBE ? "probe " : "", hs_outcome_name(t->outcome),
		 by ? " [" : "", by ? by : "", by ? "]" : "");

	if (t->nhops < 2)
		snprintf(r->col[HS_WC_LATENCY], sizeof(r->col[0]), "-");
	else
		hs_fmt_duration(r->lat_ns, r->col[HS_WC_LATENCY], sizeof(r->col[0]));
}

static const char *const ecn_names[4] = { "not-ect", "ect1", "ect0", "ce" };

static void add_change(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void add_change(char *buf, size_t len, const char *fmt, ...)
{
	size_t n = strlen(buf);
	va_list ap;

	if (n && n + 2 < len) {
		strcat(buf, ", ");
		n += 2;
	}
	if (n >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
}

int hs_whops_fill(struct hs_whop *hops, const struct hs_trace *t, const struct hs_topo *topo)
{
	for (unsigned i = 0; i < t->nhops && i < HS_TRACE_MAX_HOPS; i++) {
		const struct hs_hop *h = &t->hops[i], *prev = i ? &t->hops[i - 1] : NULL;
		struct hs_whop *w = &hops[i];

		hs_hop_name(topo, h, w->sw, sizeof(w->sw));
		hs_fmt_time(hs_hop_time(t, i), w->ts, sizeof(w->ts));
		if (!prev) {
			snprintf(w->delta, sizeof(w->delta), "-");
		} else if (!hs_hop_trusted(t, i)) {
			snprintf(w->delta, sizeof(w->delta), "?");	/* out of path order */
		} else {
			char d[20];
			int64_t dt = hs_hop_delta(prev, h);
			snprintf(w->delta, sizeof(w->delta), "%c%s", dt < 0 ? '-' : '+',
				 hs_fmt_duration(dt < 0 ? (uint64_t)-dt : (uint64_t)dt, d, sizeof(d)));
		}
		snprintf(w->ttl, sizeof(w->ttl), "%u", h->ttl);
		snprintf(w->dscp, sizeof(w->dscp), "%u/%s", h->tos >> 2, ecn_names[h->tos & 3]);

		w->changes[0] = '\0';
		if (!prev)
			continue;
		int dt = (int)h->ttl - (int)prev->ttl;
		if (dt != 0)
			add_change(w->changes, sizeof(w->changes), "TTL %+d", dt);
		else
			add_change(w->changes, sizeof(w->changes), "TTL unchanged");
		if ((h->tos >> 2) != (prev->tos >> 2))
			add_change(w->changes, sizeof(w->changes), "DSCP %u->%u", prev->tos >> 2,
				   h->tos >> 2);
		if ((h->tos & 3) != (prev->tos & 3))
			add_change(w->changes, sizeof(w->changes), "ECN %s->%s",
				   ecn_names[prev->tos & 3], ecn_names[h->tos & 3]);
		if (h->session != prev->session)
			add_change(w->changes, sizeof(w->changes), "session %u", h->session);
	}
	return t->nhops;
}

/* ---- the model ------------------------------------------------------------------ */

struct hs_wmodel *hs_wmodel_new(size_t cap, size_t events)
{
	struct hs_wmodel *m = hs_xcalloc(1, sizeof(*m));

	m->cap = cap ? cap : 1;
	m->traces = hs_xcalloc(m->cap, sizeof(*m->traces));
	m->rows = hs_xcalloc(m->cap, sizeof(*m->rows));
	m->sorted = hs_xcalloc(m->cap, sizeof(*m->sorted));
	m->ev_cap = events ? events : 1;
	m->events = hs_xcalloc(m->ev_cap, sizeof(*m->events));
	m->sep = " > ";
	m->ell = "...";
	m->follow = true;
	m->filter.any = true;
	for (int i = 0; i < HS_WP__COUNT; i++)
		m->view[i].height = 1;
	return m;
}

void hs_wmodel_free(struct hs_wmodel *m)
{
	if (!m)
		return;
	free(m->traces);
	free(m->rows);
	free(m->sorted);
	free(m->events);
	free(m->links);
	free(m->order);
	free(m);
}

static void links_sort(struct hs_wmodel *m);

void hs_wmodel_set_topo(struct hs_wmodel *m, const struct hs_topo *topo)
{
	free(m->links);
	free(m->order);
	m->links = NULL;
	m->order = NULL;
	m->nlinks = 0;
	m->topo = topo;
	if (topo && topo->nlinks > 0) {
		m->nlinks = 2 * topo->nlinks;
		m->links = hs_xcalloc((size_t)m->nlinks, sizeof(*m->links));
		m->order = hs_xcalloc((size_t)m->nlinks, sizeof(*m->order));
		for (int i = 0; i < m->nlinks; i++) {
			const struct hs_link *l = &topo->links[i / 2];
			m->links[i].link = i / 2;
			m->links[i].a = i % 2 ? l->b : l->a;
			m->links[i].b = i % 2 ? l->a : l->b;
			m->order[i] = i;
		}
	}
	links_sort(m);
	hs_wview_set(&m->view[HS_WP_LINKS], (size_t)m->nlinks, m->view[HS_WP_LINKS].height);
}

static const struct hs_wmodel *sort_model;	/* qsort has no argument */

static int link_cmp(const void *x, const void *y)
{
	const struct hs_wlink *a = &sort_model->links[*(const int *)x];
	const struct hs_wlink *b = &sort_model->links[*(const int *)y];

	if (a->drops != b->drops)
		return a->drops > b->drops ? -1 : 1;
	if (a->ambiguous != b->ambiguous)
		return a->ambiguous > b->ambiguous ? -1 : 1;
	if (a->votes != b->votes)
		return a->votes > b->votes ? -1 : 1;
	if (a->packets != b->packets)
		return a->packets > b->packets ? -1 : 1;
	return *(const int *)x - *(const int *)y;
}

static void links_sort(struct hs_wmodel *m)
{
	if (m->nlinks < 2)
		return;
	sort_model = m;
	qsort(m->order, (size_t)m->nlinks, sizeof(*m->order), link_cmp);
	sort_model = NULL;
}

void hs_wlink_text(const struct hs_wmodel *m, int i, char *name, size_t nlen, char *pkts,
		   char *drops, char *rate, char *ambig, size_t vlen)
{
	name[0] = pkts[0] = drops[0] = rate[0] = ambig[0] = '\0';
	if (i < 0 || i >= m->nlinks || !m->topo)
		return;
	const struct hs_wlink *w = &m->links[m->order[i]];
	snprintf(name, nlen, "%s > %s", m->topo->sw[w->a].name, m->topo->sw[w->b].name);
	snprintf(pkts, vlen, "%" PRIu32, w->packets);
	snprintf(drops, vlen, "%" PRIu32, w->drops);
	uint64_t seen = (uint64_t)w->packets + w->drops;
	if (seen > 0)
		snprintf(rate, vlen, "%.1f%%", 100.0 * w->drops / (double)seen);
	else
		snprintf(rate, vlen, "-");
	if (w->ambiguous)
		snprintf(ambig, vlen, "%" PRIu32, w->ambiguous);
	else
		snprintf(ambig, vlen, "-");
}

void hs_wmodel_links(struct hs_wmodel *m, const struct hs_trace *const *recent, size_t n)
{
	struct hs_drops d;
	struct hs_blame b;

	if (!m->topo || !m->links)
		return;
	hs_an_drops(recent, n, m->topo, &d);
	for (int i = 0; i < m->nlinks; i++) {
		struct hs_wlink *w = &m->links[i];
		w->packets = d.crossed[i];
		w->drops = w->ambiguous = 0;
		w->votes = 0;
		w->blamed = false;
	}
	for (size_t k = 0; k < d.n; k++) {
		const struct hs_drop_link *dl = &d.links[k];
		int l = hs_topo_link(m->topo, dl->a, dl->b);
		if (l < 0 || 2 * l + 1 >= m->nlinks)
			continue;
		struct hs_wlink *w = &m->links[2 * l + (m->topo->links[l].a == dl->a ? 0 : 1)];
		w->drops = dl->drops;
		w->ambiguous = dl->ambiguous;
	}
	hs_drops_free(&d);

	hs_an_blame(recent, n, m->topo, NULL, &b);
	if (b.nepochs > 0) {
		const struct hs_blame_epoch *e = &b.epochs[b.nepochs - 1];
		for (size_t k = 0; k < e->nlinks; k++) {
			const struct hs_blame_link *bl = &b.links[e->link_off + k];
			int l = hs_topo_link(m->topo, bl->a, bl->b);
			for (int dir = 0; dir < 2 && l >= 0 && 2 * l + dir < m->nlinks; dir++) {
				m->links[2 * l + dir].votes = bl->votes;
				m->links[2 * l + dir].blamed = bl->reported;
			}
		}
	}
	hs_blame_free(&b);
	links_sort(m);
}

void hs_wlink_votes_text(const struct hs_wmodel *m, int i, char *buf, size_t len)
{
	if (i < 0 || i >= m->nlinks || !m->topo) {
		buf[0] = '\0';
		return;
	}
	const struct hs_wlink *w = &m->links[m->order[i]];
	if (w->votes <= 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1f%s", w->votes, w->blamed ? "!" : "");
}

const char *hs_wload_title(const struct hs_topo *topo)
{
	int speeds = 0;

	if (!topo)
		return "load";
	for (int l = 0; l < topo->nlinks; l++)
		speeds += topo->links[l].speed > 0;
	return speeds == 0 ? "bit/s" : speeds == topo->nlinks ? "util" : "load";
}

void hs_wload_text(const struct hs_topo *topo, int link, const char *fig, char *out, size_t len)
{
	bool rate = fig[0] && topo && link >= 0 && link < topo->nlinks &&
		    !(topo->links[link].speed > 0);

	snprintf(out, len, "%s%s", fig,
		 rate && strcmp(hs_wload_title(topo), "load") == 0 ? "b/s" : "");
}

void hs_wcols_fit(int inner, int ncol, const char *const *titles, const char *const *cells,
		  int nrows, const int *min, const int *drop, int ndrop, int first_min, int *cw)
{
	int fixed = 0;

	for (int c = 1; c < ncol; c++) {
		cw[c] = min[c] > cells_of(titles[c]) ? min[c] : cells_of(titles[c]);
		for (int r = 0; r < nrows; r++) {
			int n = cells_of(cells[r * ncol + c]);
			if (n > cw[c])
				cw[c] = n;
		}
		fixed += cw[c] + 1;
	}
	cw[0] = inner - fixed;
	for (int d = 0; d < ndrop && cw[0] < first_min; d++) {
		if (drop[d] <= 0 || drop[d] >= ncol || !cw[drop[d]])
			continue;
		cw[0] += cw[drop[d]] + 1;
		cw[drop[d]] = 0;
	}
}

static int row_cmp(const void *x, const void *y)
{
	const struct hs_trace *a = *(const struct hs_trace *const *)x;
	const struct hs_trace *b = *(const struct hs_trace *const *)y;

	switch (sort_model->sort) {
	case HS_WSORT_LATENCY: {
		uint64_t la = trace_latency(a), lb = trace_latency(b);
		if (la != lb)
			return la > lb ? -1 : 1;
		break;
	}
	case HS_WSORT_OUTCOME: {
		/* the bad news first: looped, dropped, unknown, delivered */
		static const int rank[HS_OUT__COUNT] = {
			[HS_OUT_LOOPED] = 0, [HS_OUT_DROPPED] = 1, [HS_OUT_UNKNOWN] = 2,
			[HS_OUT_OPEN] = 3, [HS_OUT_DELIVERED] = 4,
		};
		int ra = a->outcome < HS_OUT__COUNT ? rank[a->outcome] : 5;
		int rb = b->outcome < HS_OUT__COUNT ? rank[b->outcome] : 5;
		if (ra != rb)
			return ra - rb;
		break;
	}
	default:
		break;
	}
	/* by the time the row shows: traces close in the order they go quiet,
	 * and a second worker's reach the console later than the first's, so
	 * neither their ids nor their arrival is their time order */
	return hs_trace_cmp_newest(a, b);
}

static void detail_refresh(struct hs_wmodel *m)
{
	const struct hs_trace *t = NULL;

	for (size_t i = 0; i < m->ntraces && m->sel_id; i++)
		if (m->traces[i].id == m->sel_id)
			t = &m->traces[i];
	if (!t) {
		/* keep showing a trace that scrolled out of the snapshot */
		if (!m->have_detail || m->detail.id != m->sel_id)
			m->have_detail = false;
		if (!m->have_detail)
			hs_wview_set(&m->view[HS_WP_DETAIL], 0, m->view[HS_WP_DETAIL].height);
		return;
	}
	bool same = m->have_detail && m->detail.id == t->id;
	m->detail = *t;
	m->have_detail = true;
	t = &m->detail;

	struct hs_wrow r;
	hs_wrow_fill(&r, t, m->topo, m->sep);
	m->detail_cls = r.cls;
	char ref[48];
	snprintf(m->detail_head[0], sizeof(m->detail_head[0]), "trace %s  %s",
		 hs_fmt_trace_ref(m->session, t->id, ref, sizeof(ref)), r.col[HS_WC_FLOW]);
	char *h1 = m->detail_head[1];
	size_t n = (size_t)snprintf(h1, sizeof(m->detail_head[1]),
				    "%s, %u hops, latency %s, len %u, ip id %u",
				    r.col[HS_WC_OUTCOME], t->nhops + t->extra_hops,
				    r.col[HS_WC_LATENCY], t->len, t->ip_id);
	if ((t->flags & HS_TF_PROBE) && n < sizeof(m->detail_head[1]))
		snprintf(h1 + n, sizeof(m->detail_head[1]) - n, ", probe %u", t->probe_id);
	m->detail_head[2][0] = '\0';
	if (t->outcome == HS_OUT_DROPPED && m->topo && t->last_sw >= 0 &&
	    t->last_sw < m->topo->nsw) {
		char *h2 = m->detail_head[2];
		size_t cap = sizeof(m->detail_head[2]);
		size_t k = (size_t)snprintf(h2, cap, "dropped after %s, expected next",
					    m->topo->sw[t->last_sw].name);
		for (int i = 0; i < t->n_next && i < HS_TRACE_MAX_NEXT && k < cap; i++) {
			int s = t->expected_next[i];
			if (s >= 0 && s < m->topo->nsw)
				k += (size_t)snprintf(h2 + k, cap - k, "%s%s", i ? " or " : " ",
						      m->topo->sw[s].name);
		}
		if (t->n_next == 0 && k < cap)
			snprintf(h2 + k, cap - k, " unknown");
	} else if (t->flags & HS_TF_EVICTED) {
		snprintf(m->detail_head[2], sizeof(m->detail_head[2]),
			 "closed early: too many open traces");
	}
	hs_whops_fill(m->hops, t, m->topo);
	struct hs_wview *dv = &m->view[HS_WP_DETAIL];
	if (!same)
		dv->sel = dv->top = 0;
	hs_wview_set(dv, t->nhops, dv->height);
}

void hs_wmodel_rebuild(struct hs_wmodel *m)
{
	const struct hs_trace **ptrs = m->sorted;
	struct hs_wview *v = &m->view[HS_WP_TRACES];
	size_t n = 0;

	for (size_t i = 0; i < m->ntraces; i++)
		if (hs_wfilter_match(&m->filter, &m->traces[i], m->topo))
			ptrs[n++] = &m->traces[i];
	sort_model = m;
	qsort(ptrs, n, sizeof(*ptrs), row_cmp);
	sort_model = NULL;
	m->outcome_cells = 0;
	for (size_t i = 0; i < n; i++) {
		hs_wrow_fill(&m->rows[i], ptrs[i], m->topo, m->sep);
		int c = cells_of(m->rows[i].col[HS_WC_OUTCOME]);
		if (c > m->outcome_cells)
			m->outcome_cells = c;
	}

	size_t sel = 0;
	if (!m->follow) {
		sel = v->sel < n ? v->sel : (n ? n - 1 : 0);
		for (size_t i = 0; i < n; i++)
			if (m->rows[i].id == m->sel_id) {
				sel = i;
				break;
			}
	}
	v->sel = sel;
	hs_wview_set(v, n, v->height);
	m->sel_id = n ? m->rows[v->sel].id : 0;
	detail_refresh(m);
}

void hs_wmodel_update(struct hs_wmodel *m, const struct hs_trace *const *recent, size_t n)
{
	if (m->paused)
		return;
	/* the ring may also have been cleared (a new capture) */
	size_t k = n < m->cap ? n : m->cap;
	if (k == m->ntraces && (k == 0 || m->traces[0].id == recent[0]->id))
		return;
	for (size_t i = 0; i < k; i++)
		m->traces[i] = *recent[i];
	m->ntraces = k;
	hs_wmodel_rebuild(m);
}

int hs_wmodel_set_filter(struct hs_wmodel *m, const char *text, char *err, size_t errlen)
{
	struct hs_wfilter f;

	if (hs_wfilter_parse(text, m->topo, &f, err, errlen) < 0)
		return -1;
	m->filter = f;
	/* keep the text trimmed of leading blanks, "" when cleared */
	while (*text == ' ' || *text == '\t')
		text++;
	snprintf(m->filter_text, sizeof(m->filter_text), "%s", f.any ? "" : text);
	hs_wmodel_rebuild(m);
	return 0;
}

static const char *const sort_names[HS_WSORT__COUNT] = {
	[HS_WSORT_NEWEST] = "newest",
	[HS_WSORT_LATENCY] = "latency",
	[HS_WSORT_OUTCOME] = "outcome",
};

const char *hs_wsort_name(int sort)
{
	return sort >= 0 && sort < HS_WSORT__COUNT ? sort_names[sort] : "?";
}

void hs_wmodel_set_sort(struct hs_wmodel *m, int sort)
{
	if (sort < 0 || sort >= HS_WSORT__COUNT)
		sort = HS_WSORT_NEWEST;
	m->sort = sort;
	hs_wmodel_rebuild(m);
}

void hs_wmodel_select(struct hs_wmodel *m, size_t row)
{
	struct hs_wview *v = &m->view[HS_WP_TRACES];

	v->sel = row;
	hs_wview_set(v, v->count, v->height);
	m->sel_id = v->count ? m->rows[v->sel].id : 0;
	m->follow = v->sel == 0 && m->sort == HS_WSORT_NEWEST;
	detail_refresh(m);
}

void hs_wmodel_scroll(struct hs_wmodel *m, enum hs_wpane p, int key)
{
	if (p < 0 || p >= HS_WP__COUNT)
		return;
	struct hs_wview *v = &m->view[p];
	struct hs_wview tmp = *v;

	switch (key) {
	case HS_WK_UP: hs_wview_move(&tmp, -1); break;
	case HS_WK_DOWN: hs_wview_move(&tmp, 1); break;
	case HS_WK_PGUP: hs_wview_page(&tmp, -1); break;
	case HS_WK_PGDN: hs_wview_page(&tmp, 1); break;
	case HS_WK_HOME: hs_wview_home(&tmp); break;
	case HS_WK_END: hs_wview_end(&tmp); break;
	default: return;
	}
	if (p == HS_WP_TRACES) {
		hs_wmodel_select(m, tmp.sel);
		return;
	}
	*v = tmp;
}

/* ---- events ------------------------------------------------------------------------ */

static void event_push(struct hs_wmodel *m, const char *s, size_t len)
{
	struct hs_wview *v = &m->view[HS_WP_EVENTS];
	bool at_end = v->count == 0 || v->sel + 1 >= v->count;
	size_t slot;

	if (m->ev_count < m->ev_cap) {
		slot = (m->ev_first + m->ev_count) % m->ev_cap;
		m->ev_count++;
	} else {
		slot = m->ev_first;
		m->ev_first = (m->ev_first + 1) % m->ev_cap;
		if (v->sel > 0)
			v->sel--;	/* the same line stays under the cursor */
	}
	if (len >= HS_WEVENT_LEN)
		len = HS_WEVENT_LEN - 1;
	char *e = m->events[slot];
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		e[i] = c == '\t' ? ' ' : (c < 0x20 || c == 0x7f) ? '?' : (char)c;
	}
	e[len] = '\0';
	m->ev_total++;
	v->count = m->ev_count;
	/* the log follows its newest line unless scrolled back */
	if (at_end)
		v->sel = m->ev_count - 1;
	hs_wview_set(v, m->ev_count, v->height);
}

/* the lines of text appended; returns how many */
static size_t event_lines(struct hs_wmodel *m, const char *line)
{
	const char *p = line;
	size_t n = 0;

	for (;;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (len && p[len - 1] == '\r')
			len--;
		if (!nl) {
			if (len || p == line) {
				event_push(m, p, len);
				n++;
			}
			break;
		}
		event_push(m, p, len);
		n++;
		p = nl + 1;
		if (!*p)
			break;
	}
	return n;
}

void hs_wmodel_event(struct hs_wmodel *m, const char *line)
{
	event_lines(m, line);
}

void hs_wmodel_event_block(struct hs_wmodel *m, struct hs_wblock *b, const char *text)
{
	struct hs_wview *v = &m->view[HS_WP_EVENTS];

	/* still the newest lines, all of them kept: taken back to be replaced */
	if (b->lines && b->end == m->ev_total && b->lines <= m->ev_count) {
		bool at_end = v->count == 0 || v->sel + 1 >= v->count;
		m->ev_count -= b->lines;
		m->ev_total -= b->lines;
		v->count = m->ev_count;
		if (at_end || v->sel >= v->count)
			v->sel = v->count ? v->count - 1 : 0;
		hs_wview_set(v, m->ev_count, v->height);
	}
	b->lines = event_lines(m, text);
	b->end = m->ev_total;
}

const char *hs_wmodel_event_at(const struct hs_wmodel *m, size_t i)
{
	if (i >= m->ev_count)
		return NULL;
	return m->events[(m->ev_first + i) % m->ev_cap];
}
