/* snapshot.c - synchronized counter snapshots: read the driver's answer,
 * store and load them, and compare two (per-port deltas, ECMP group shares)
 */
#include <stdarg.h>
#include <stdio.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "answer.h"
#include "snapshot.h"

#define MAX_SKEW_NS (60 * HS_NS_PER_SEC)	/* a read this far from T is garbage */

const char *const hs_snap_counter_names[HS_SNAP__NCOUNTERS] = {
	"rx_packets", "rx_bytes", "rx_drops", "tx_packets", "tx_bytes", "tx_drops",
};

/* ---- parsing ------------------------------------------------------------------ */

static int cmp_port(const void *x, const void *y)
{
	const struct hs_snap_port *p = *(const struct hs_snap_port *const *)x;
	const struct hs_snap_port *q = *(const struct hs_snap_port *const *)y;
	int c = strcmp(p->sw, q->sw);

	return c ? c : strcmp(p->port, q->port);
}

/* spread and switch count from the ports; -1 when a (switch, port) repeats */
static int summarize(struct hs_snap *s, const struct hs_snap_port **dup)
{
	const struct hs_snap_port **v;
	uint64_t lo = UINT64_MAX, hi = 0;

	s->nswitches = 0;
	s->spread_ns = 0;
	if (s->nports == 0)
		return 0;
	v = hs_xcalloc(s->nports, sizeof(*v));
	for (size_t i = 0; i < s->nports; i++) {
		v[i] = &s->ports[i];
		if (s->ports[i].read_ns < lo)
			lo = s->ports[i].read_ns;
		if (s->ports[i].read_ns > hi)
			hi = s->ports[i].read_ns;
	}
	s->spread_ns = hi - lo;
	qsort(v, s->nports, sizeof(*v), cmp_port);
	for (size_t i = 0; i < s->nports; i++) {
		if (i && cmp_port(&v[i - 1], &v[i]) == 0) {
			*dup = v[i];
			free(v);
			return -1;
		}
		if (i == 0 || strcmp(v[i - 1]->sw, v[i]->sw) != 0)
			s->nswitches++;
	}
	free(v);
	return 0;
}

/* one {"switch","port","read_ns",counters...,"backlog_bytes","backlog_packets"} */
static int parse_port(const json_t *o, uint64_t target, struct hs_snap_port *p, char *msg,
		      size_t msglen)
{
	char why[200], *err = why;
	size_t errlen = sizeof(why);
	static const char *const names[] = { "switch", "port", "read_ns", "rx_packets",
		"rx_bytes", "rx_drops", "tx_packets", "tx_bytes", "tx_drops", "backlog_bytes",
		"backlog_packets", NULL };
	bool null_b, null_p;

	memset(p, 0, sizeof(*p));
	if (!json_is_object(o))
		return hs_errf(msg, msglen, "not an object");
	if (hs_answer_str(o, "switch", p->sw, sizeof(p->sw), msg, msglen) < 0)
		return -1;
	if (!hs_name_ok(p->sw))
		return hs_errf(msg, msglen, "switch: '%.40s' is not a switch name", p->sw);
	/* from here on, the error names the switch */
	if (hs_answer_str(o, "port", p->port, sizeof(p->port), err, errlen) < 0)
		goto bad;
	if (!hs_ifname_ok(p->port)) {
		hs_errf(err, errlen, "port: '%.40s' is not a port name", p->port);
		goto bad;
	}
	if (hs_answer_only(o, names, err, errlen) < 0 ||
	    hs_answer_uint(o, "read_ns", INT64_MAX, &p->read_ns, err, errlen) < 0)
		goto bad;
	for (int i = 0; i < HS_SNAP__NCOUNTERS; i++)
		if (hs_answer_uint(o, hs_snap_counter_names[i], INT64_MAX, &p->c[i], err, errlen) < 0)
			goto bad;
	null_b = json_is_null(json_object_get(o, "backlog_bytes"));
	null_p = json_is_null(json_object_get(o, "backlog_packets"));
	if (null_b != null_p) {
		hs_errf(err, errlen, "backlog_bytes and backlog_packets: both numbers or both null");
		goto bad;
	}
	p->has_backlog = !null_b;
	if (p->has_backlog &&
	    (hs_answer_uint(o, "backlog_bytes", INT64_MAX, &p->backlog_bytes, err, errlen) < 0 ||
	     hs_answer_uint(o, "backlog_packets", INT64_MAX, &p->backlog_packets, err, errlen) < 0))
		goto bad;
	if (p->read_ns + MAX_SKEW_NS < target || p->read_ns > target + MAX_SKEW_NS) {
		hs_errf(err, errlen, "read_ns: %" PRIu64 " is more than a minute from the instant %"
			PRIu64, p->read_ns, target);
		goto bad;
	}
	return 0;
bad:
	return hs_errf(msg, msglen, "switch '%s' port '%s': %s", p->sw, p->port, why);
}

int hs_snap_parse(const char *text, struct hs_snap *s, char *err, size_t errlen)
{
	static const char *const names[] = { "snapshot_ns", "switches", "ports", NULL };
	json_t *doc = hs_answer_parse(text, strlen(text), err, errlen);
	const json_t *ports = NULL, *x;
	const struct hs_snap_port *dup = NULL;
	uint64_t nsw = 0;
	char why[300];
	size_t i;

	memset(s, 0, sizeof(*s));
	if (!doc)
		return -1;
	if (hs_answer_only(doc, names, err, errlen) < 0 ||
	    hs_answer_uint(doc, "snapshot_ns", INT64_MAX, &s->target_ns, err, errlen) < 0 ||
	    hs_answer_uint(doc, "switches", HS_SNAP_MAX_PORTS, &nsw, err, errlen) < 0 ||
	    !(ports = hs_answer_arr(doc, "ports", err, errlen)))
		goto bad;
	if (json_array_size(ports) > HS_SNAP_MAX_PORTS) {
		hs_errf(err, errlen, "ports: more than %d", HS_SNAP_MAX_PORTS);
		goto bad;
	}
	if (json_array_size(ports) == 0) {
		hs_errf(err, errlen, "the snapshot has no ports");
		goto bad;
	}
	s->ports = hs_xcalloc(json_array_size(ports), sizeof(*s->ports));
	json_array_foreach(ports, i, x) {
		if (parse_port(x, s->target_ns, &s->ports[i], why, sizeof(why)) < 0) {
			hs_errf(err, errlen, "ports[%zu]: %s", i, why);
			goto bad;
		}
		s->nports++;
	}
	if (summarize(s, &dup) < 0) {
		hs_errf(err, errlen, "port '%s' of switch '%s' appears twice", dup->port, dup->sw);
		goto bad;
	}
	if (nsw != s->nswitches) {
		hs_errf(err, errlen, "switches: %" PRIu64 ", but the ports are of %u", nsw,
			s->nswitches);
		goto bad;
	}
	json_decref(doc);
	return 0;
bad:
	json_decref(doc);
	hs_snap_free(s);
	return -1;
}

void hs_snap_free(struct hs_snap *s)
{
	free(s->ports);
	memset(s, 0, sizeof(*s));
}

int hs_snap_merge(struct hs_snap *into, struct hs_snap *from, char *err, size_t errlen)
{
	const struct hs_snap_port *dup = NULL;
	size_t n = into->nports;

	if (from->target_ns != into->target_ns) {
		hs_errf(err, errlen, "the drivers read at different instants (%" PRIu64 " and %"
			PRIu64 ")", into->target_ns, from->target_ns);
		hs_snap_free(from);
		return -1;
	}
	into->ports = realloc(into->ports, (n + from->nports + 1) * sizeof(*into->ports));
	if (!into->ports)
		abort();
	memcpy(into->ports + n, from->ports, from->nports * sizeof(*from->ports));
	into->nports += from->nports;
	hs_snap_free(from);
	if (summarize(into, &dup) < 0)
		return hs_errf(err, errlen, "port '%s' of switch '%s' read by two drivers",
			    dup->port, dup->sw);
	return 0;
}

/* ---- comparing two snapshots -------------------------------------------------- */

static const struct hs_snap_delta *find_delta(const struct hs_snap_diff *d, const char *sw,
					      const char *port)
{
	for (size_t i = 0; i < d->nports; i++)
		if (strcmp(d->ports[i].b->sw, sw) == 0 && strcmp(d->ports[i].b->port, port) == 0)
			return &d->ports[i];
	return NULL;
}

/* destinations of ECMP groups: the ToRs with hosts or subnets; every switch
 * when the topology names none */
static bool is_dest(const struct hs_topo *t, int sw)
{
	bool any = t->nsubnets > 0 || t->nhosts > 0;

	if (!any)
		return true;
	for (int i = 0; i < t->nsubnets; i++)
		if (t->subnets[i].leaf == sw)
			return true;
	for (int i = 0; i < t->nhosts; i++)
		if (t->hosts[i].leaf == sw)
			return true;
	return false;
}

static int cmp_int(const void *x, const void *y)
{
	int a = *(const int *)x, b = *(const int *)y;

	return (a > b) - (a < b);
}

static void add_toward(struct hs_snap_group *g, const char *name)
{
	size_t l = strlen(g->toward);

	if (l + strlen(name) + 2 >= sizeof(g->toward))
		return;
	snprintf(g->toward + l, sizeof(g->toward) - l, "%s%s", l ? "," : "", name);
}

static void make_groups(struct hs_snap_diff *d, const struct hs_topo *t, double threshold)
{
	size_t cap = 0;

	for (int s = 0; s < t->nsw; s++) {
		size_t first = d->ngroups;

		for (int dst = 0; dst < t->nsw; dst++) {
			int nh[HS_SNAP_MAX_NH], n;
			struct hs_snap_group *g = NULL;

			if (dst == s || !is_dest(t, dst))
				continue;
			n = hs_topo_next_hops(t, s, dst, nh, HS_SNAP_MAX_NH);
			if (n < 2)
				continue;
			qsort(nh, (size_t)n, sizeof(nh[0]), cmp_int);
			for (size_t k = first; k < d->ngroups && !g; k++) {
				struct hs_snap_group *o = &d->groups[k];
				bool same = o->n == n;

				for (int j = 0; same && j < n; j++)
					same = o->m[j].neighbour == nh[j];
				if (same)
					g = o;
			}
			if (!g) {
				if (d->ngroups == cap) {
					cap = cap ? 2 * cap : 16;
					d->groups = realloc(d->groups, cap * sizeof(*d->groups));
					if (!d->groups)
						abort();
				}
				g = &d->groups[d->ngroups++];
				memset(g, 0, sizeof(*g));
				g->sw = s;
				g->n = n;
				for (int j = 0; j < n; j++) {
					int l = hs_topo_link(t, s, nh[j]);

					g->m[j].neighbour = nh[j];
					if (l >= 0)
						snprintf(g->m[j].port, sizeof(g->m[j].port), "%s",
							 t->links[l].a == s ? t->links[l].a_port :
							 t->links[l].b_port);
				}
			}
			add_toward(g, t->sw[dst].name);
		}
		for (size_t k = first; k < d->ngroups; k++) {
			struct hs_snap_group *g = &d->groups[k];
			double share[HS_SNAP_MAX_NH];

			g->complete = true;
			for (int j = 0; j < g->n; j++) {
				g->m[j].delta = find_delta(d, t->sw[s].name, g->m[j].port);
				if (!g->m[j].delta) {
					g->complete = false;
					continue;
				}
				g->m[j].tx_bytes = g->m[j].delta->d[HS_SNAP_TX_BYTES];
				g->tx_bytes += g->m[j].tx_bytes;
			}
			for (int j = 0; j < g->n; j++) {
				g->m[j].share = g->tx_bytes ? (double)g->m[j].tx_bytes /
							      (double)g->tx_bytes : 0;
				share[j] = g->m[j].share;
			}
			g->imbalance = hs_an_imbalance(share, g->n);
			g->flagged = g->complete && g->imbalance > threshold &&
				     g->tx_bytes >= (uint64_t)g->n * HS_SNAP_MIN_MEMBER_BYTES;
		}
	}
}

int hs_snap_diff(const struct hs_snap *a, const struct hs_snap *b, const struct hs_topo *topo,
		 double threshold, struct hs_snap_diff *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (b->target_ns <= a->target_ns)
		return hs_errf(err, errlen, "snapshot %lld was not taken before snapshot %lld",
			    (long long)a->id, (long long)b->id);
	out->interval_ns = b->target_ns - a->target_ns;
	if (b->nports)
		out->ports = hs_xcalloc(b->nports, sizeof(*out->ports));

	/* match by (switch, port) through a sorted index of a */
	const struct hs_snap_port **ia = hs_xcalloc(a->nports ? a->nports : 1, sizeof(*ia));
	for (size_t i = 0; i < a->nports; i++)
		ia[i] = &a->ports[i];
	qsort(ia, a->nports, sizeof(*ia), cmp_port);
	for (size_t i = 0; i < b->nports; i++) {
		const struct hs_snap_port *pb = &b->ports[i], *key = pb, **hit;
		struct hs_snap_delta *dl;

		hit = a->nports ? bsearch(&key, ia, a->nports, sizeof(*ia), cmp_port) : NULL;
		if (!hit) {
			out->only_b++;
			continue;
		}
		dl = &out->ports[out->nports++];
		dl->a = *hit;
		dl->b = pb;
		dl->interval_ns = pb->read_ns > dl->a->read_ns ? pb->read_ns - dl->a->read_ns : 0;
		for (int k = 0; k < HS_SNAP__NCOUNTERS; k++) {
			if (pb->c[k] >= dl->a->c[k]) {
				dl->d[k] = pb->c[k] - dl->a->c[k];
			} else {
				dl->d[k] = pb->c[k];	/* the counter restarted */
				dl->reset = true;
			}
			dl->rate[k] = dl->interval_ns ?
				(double)dl->d[k] * 1e9 / (double)dl->interval_ns : 0;
		}
	}
	free(ia);
	out->only_a = a->nports - out->nports;
	if (topo)
		make_groups(out, topo, threshold);
	return 0;
}

void hs_snap_diff_free(struct hs_snap_diff *d)
{
	free(d->ports);
	free(d->groups);
	memset(d, 0, sizeof(*d));
}
