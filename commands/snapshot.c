/* snapshot.c - snapshot take|list|show ID|diff A B: synchronized counters
 *
 * take asks the fabric's drivers (the ones 'mirror' uses) for a snapshot:
 * each has every switch it serves read its port counters at one common
 * instant, the same for every driver, and prints them (format in
 * include/snapshot.h). The driver runs as a child
 * process (src/driver.c: an argv array, no shell); when it exits its output is
 * checked as a whole, and only then stored. list, show and diff read the
 * history.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "answer.h"
#include "cmd.h"
#include "console.h"
#include "driverun.h"
#include "snapshot.h"

/* the summary of one snapshot: one JSON object, or one text line */
static void print_summary(struct hs_out *o, const struct hs_snap *s, bool close)
{
	out_obj_open(o, NULL);
	out_int(o, "id", "snapshot %" PRId64 ": ", s->id);
	out_time(o, "target_ns", "%s, ", s->target_ns);
	out_time(o, "taken_ns", NULL, s->taken_ns);
	out_uint(o, "switches", "%" PRIu64 " switches, ", s->nswitches);
	out_uint(o, "ports", "%" PRIu64 " ports, ", s->nports);
	out_dur(o, "spread_ns", "read within %s", (int64_t)s->spread_ns);
	if (s->session > 0)
		out_int(o, "session", " (capture session %" PRId64 ")", s->session);
	else
		out_null(o, "session");
	if (close) {
		out_obj_close(o);
		out_nl(o);
	}
}

static void print_port(struct hs_out *o, const struct hs_snap_port *p)
{
	out_obj_open(o, NULL);
	out_str(o, "switch", "%-12s ", p->sw);
	out_str(o, "port", "%-12s", p->port);
	for (int k = 0; k < HS_SNAP__NCOUNTERS; k++)
		out_uint(o, hs_snap_counter_names[k], " %12" PRIu64, p->c[k]);
	if (p->has_backlog) {
		out_uint(o, "backlog_bytes", " %9" PRIu64, p->backlog_bytes);
		out_uint(o, "backlog_packets", NULL, p->backlog_packets);
	} else {
		out_null(o, "backlog_bytes");
		out_null(o, "backlog_packets");
		out_text(o, " %9s", "-");
	}
	out_time(o, "read_ns", NULL, p->read_ns);
	out_obj_close(o);
	out_nl(o);
}

static void port_header(struct hs_out *o)
{
	out_text(o, "%-12s %-12s %12s %12s %12s %12s %12s %12s %9s\n", "SWITCH", "PORT", "RX_PKTS",
		 "RX_BYTES", "RX_DROPS", "TX_PKTS", "TX_BYTES", "TX_DROPS", "BACKLOG");
}

/* switches of the topology the snapshot lacks: a warning each */
static void warn_missing(struct hs_ctx *ctx, const struct hs_snap *s)
{
	if (!ctx->topo)
		return;
	for (int i = 0; i < ctx->topo->nsw; i++) {
		bool seen = false;

		for (size_t k = 0; k < s->nports && !seen; k++)
			seen = strcmp(s->ports[k].sw, ctx->topo->sw[i].name) == 0;
		if (!seen)
			out_warn(ctx->out, "snapshot %" PRId64 " has no counters of switch '%s'", s->id,
				 ctx->topo->sw[i].name);
	}
}

/* ---- take: the driver reads, the console checks and stores ---------------------- */

/* what take_done() is given */
struct take_arg {
	uint64_t taken_ns;
	const char *kind[HS_DRIVER_MAX];	/* of each driver run */
};

static int take_done(struct hs_ctx *ctx, struct hs_driver_result *r, int n, void *arg)
{
	const struct take_arg *ta = arg;
	struct hs_out *o = ctx->out;
	struct hs_snap s = { 0 }, more;
	struct hs_store *st;
	char err[512];

	for (int i = 0; i < n; i++)
		if (hs_driver_failed(ctx, &r[i], "snapshot driver") < 0)
			return HS_CMD_FAIL;
	/* a fabric mixing switch kinds: every driver read at the same instant */
	for (int i = 0; i < n; i++) {
		if (r[i].out_cut || r[i].out_nul || hs_snap_parse(r[i].out, i ? &more : &s, err, sizeof(err)) < 0 ||
		    (i && hs_snap_merge(&s, &more, err, sizeof(err)) < 0)) {
			hs_snap_free(&s);
			return hs_driver_bad_answer(ctx, &r[i], ta->kind[i], "snapshot", err);
		}
	}
	s.taken_ns = ta->taken_ns;
	s.session = ctx->session;
	if (!(st = hs_ctx_store(ctx))) {
		hs_snap_free(&s);
		return HS_CMD_FAIL;
	}
	hs_store_commit(st);
	if (hs_store_snapshot(st, &s, err, sizeof(err)) < 0) {
		hs_snap_free(&s);
		return out_err(o, "%s in '%s'", err, hs_store_name(st));
	}
	print_summary(o, &s, true);
	warn_missing(ctx, &s);
	hs_snap_free(&s);
	return HS_CMD_OK;
}

static int take(struct hs_ctx *ctx)
{
	static struct hs_driver_set ds;
	char *argv[HS_DRIVER_MAX][8], **argvs[HS_DRIVER_MAX], at[24];
	struct take_arg ta = { .taken_ns = hs_wall_ns() };

	if (!ctx->topo)
		return out_err(ctx->out, "snapshot take needs the fabric: run 'hopscope --lab' with "
			       "the lab up, or load its topology (topo load FILE)");
	hs_driver_set(ctx->topo, &ds);
	/* several drivers are given one instant, 200 ms from now */
	snprintf(at, sizeof(at), "%" PRIu64, ta.taken_ns + 200000000u);
	for (int i = 0; i < ds.n; i++) {
		int n = 0;

		ta.kind[i] = ds.kind[i];
		argv[i][n++] = ds.path[i];
		if (ctx->lab_state) {
			argv[i][n++] = (char *)"--state";
			argv[i][n++] = ctx->lab_state;
		}
		argv[i][n++] = (char *)"snapshot";
		if (ds.n > 1) {
			argv[i][n++] = (char *)"--at-ns";
			argv[i][n++] = at;
		}
		argv[i][n] = NULL;
		argvs[i] = argv[i];
	}
	return hs_driver_run_all(ctx, ds.n, argvs, HS_ANSWER_MAX, take_done, &ta, sizeof(ta),
				 "snapshot driver", "interrupted: no snapshot stored");
}

/* ---- list, show, diff ------------------------------------------------------------ */

static int parse_id(struct hs_out *o, const char *w, int64_t *id)
{
	uint64_t v;

	if (!w)
		return out_err(o, "snapshot: a snapshot id is needed (see 'snapshot list')");
	if (w[0] < '1' || w[0] > '9' || hs_parse_uint(w, INT64_MAX, &v) < 0)
		return out_err(o, "snapshot: bad snapshot id '%s' (a number, see 'snapshot list')", w);
	*id = (int64_t)v;
	return 0;
}

static int load(struct hs_ctx *ctx, int64_t id, bool ports, struct hs_snap *s)
{
	struct hs_store *st;
	char err[512];
	int rc;

	if (hs_ctx_store_read(ctx, false, &st) < 0)
		return HS_CMD_FAIL;
	rc = hs_store_snapshot_load(st, id, ports, s, err, sizeof(err));
	if (rc > 0)
		return out_err(ctx->out, "no snapshot %" PRId64 " in '%s'", id, hs_store_name(st));
	if (rc < 0)
		return out_err(ctx->out, "%s in '%s'", err, hs_store_name(st));
	return 0;
}

struct listing {
	struct hs_out *o;
	int rows;
};

static void list_one(void *arg, const struct hs_snap *s)
{
	struct listing *l = arg;

	print_summary(l->o, s, true);
	l->rows++;
}

static int list(struct hs_ctx *ctx)
{
	struct hs_store *st;
	struct listing l = { .o = ctx->out };
	char err[512];
	int rc;

	if ((rc = hs_ctx_store_read(ctx, true, &st)) < 0)
		return HS_CMD_FAIL;
	out_list_open(ctx->out, "snapshots");
	if (rc == 0) {		/* no history: an empty list */
		out_list_close(ctx->out);
		return HS_CMD_OK;
	}
	if (hs_store_snapshots(st, list_one, &l, err, sizeof(err)) < 0)
		return out_err(ctx->out, "cannot read snapshots in '%s': %s", hs_store_name(st),
			       err);
	if (l.rows == 0)
		out_text(ctx->out, "no snapshots (snapshot take)\n");
	out_list_close(ctx->out);
	return HS_CMD_OK;
}

static int show(struct hs_ctx *ctx, int64_t id)
{
	struct hs_out *o = ctx->out;
	struct hs_snap s;

	if (load(ctx, id, true, &s) < 0)
		return HS_CMD_FAIL;
	print_summary(o, &s, false);
	out_arr_open(o, "counters");
	out_text(o, "\n");
	port_header(o);
	for (size_t i = 0; i < s.nports; i++)
		print_port(o, &s.ports[i]);
	out_arr_close(o);
	out_obj_close(o);
	hs_snap_free(&s);
	return HS_CMD_OK;
}

/* "1.23 Gbit/s" from bytes per second */
static const char *fmt_bits(double bytes_per_s, char *buf, size_t len)
{
	static const char *const unit[] = { "bit/s", "kbit/s", "Mbit/s", "Gbit/s", "Tbit/s" };
	double v = bytes_per_s * 8;
	int u = 0;

	while (v >= 1000 && u < 4) {
		v /= 1000;
		u++;
	}
	snprintf(buf, len, "%.*f %s", u ? 2 : 0, v, unit[u]);
	return buf;
}

/* a port's deltas; text gives the rates in bit/s with a unit, and the
 * drops of both directions summed */
static void print_delta(struct hs_out *o, const struct hs_snap_delta *d)
{
	char r[24];

	out_obj_open(o, NULL);
	out_str(o, "switch", "%-12s ", d->b->sw);
	out_str(o, "port", "%-12s", d->b->port);
	out_uint(o, "interval_ns", NULL, d->interval_ns);
	/* each direction: packets, bytes, drops, then its rates */
	for (int dir = 0; dir < 2; dir++) {
		const char *const *name = &hs_snap_counter_names[dir ? HS_SNAP_TX_PACKETS :
								  HS_SNAP_RX_PACKETS];
		const uint64_t *c = &d->d[dir ? HS_SNAP_TX_PACKETS : HS_SNAP_RX_PACKETS];
		const double *rate = &d->rate[dir ? HS_SNAP_TX_PACKETS : HS_SNAP_RX_PACKETS];

		out_uint(o, name[0], " %10" PRIu64, c[0]);
		out_uint(o, name[1], " %12" PRIu64, c[1]);
		out_uint(o, name[2], NULL, c[2]);
		out_double(o, dir ? "tx_bps" : "rx_bps", NULL, 8 * rate[1]);
		out_text(o, " %14s", fmt_bits(rate[1], r, sizeof(r)));
		out_double(o, dir ? "tx_pps" : "rx_pps", NULL, rate[0]);
	}
	out_text(o, " %8" PRIu64, d->d[HS_SNAP_RX_DROPS] + d->d[HS_SNAP_TX_DROPS]);
	if (d->b->has_backlog)
		out_uint(o, "backlog_bytes", NULL, d->b->backlog_bytes);
	else
		out_null(o, "backlog_bytes");
	out_bool(o, "reset", "  (counter reset)", d->reset);
	out_obj_close(o);
	out_nl(o);
}

static void print_group(struct hs_out *o, const struct hs_topo *t, const struct hs_snap_group *g,
			double threshold)
{
	out_obj_open(o, NULL);
	out_str(o, "switch", "\n%s", t->sw[g->sw].name);
	out_str(o, "toward", " toward %s: ", g->toward);
	out_uint(o, "tx_bytes", "%" PRIu64 " bytes sent, ", g->tx_bytes);
	out_double(o, "imbalance", "imbalance %.2f", g->imbalance);
	out_double(o, "threshold", NULL, threshold);
	out_bool(o, "flagged", "  FLAGGED", g->flagged);
	out_bool(o, "complete", NULL, g->complete);
	if (!g->complete)
		out_text(o, "  (ports missing from a snapshot)");
	out_nl(o);
	out_arr_open(o, "members");
	for (int j = 0; j < g->n; j++) {
		const struct hs_snap_member *m = &g->m[j];
		const char *nb = t->sw[m->neighbour].name;
		char who[2 * HS_NAME_MAX + 8];

		/* the port, and the neighbour when its name is not the port's */
		if (strcmp(m->port, nb) == 0)
			snprintf(who, sizeof(who), "%s", m->port);
		else
			snprintf(who, sizeof(who), "%s (%s)", m->port[0] ? m->port : "?", nb);
		out_obj_open(o, NULL);
		out_str(o, "port", NULL, m->port[0] ? m->port : nb);
		out_str(o, "neighbour", NULL, nb);
		out_text(o, "    %-24s", who);
		if (m->delta) {
			out_uint(o, "tx_bytes", " %12" PRIu64 " bytes", m->tx_bytes);
			out_share(o, "share", " %5.1f%%", m->share);
		} else {
			out_null(o, "tx_bytes");
			out_null(o, "share");
			out_text(o, " %12s", "not in both snapshots");
		}
		out_obj_close(o);
		out_nl(o);
	}
	out_arr_close(o);
	out_obj_close(o);
}

static int diff(struct hs_ctx *ctx, int64_t ida, int64_t idb, double threshold)
{
	struct hs_out *o = ctx->out;
	struct hs_snap a, b;
	struct hs_snap_diff d;
	char err[256];
	size_t flagged = 0;

	if (ida == idb)
		return out_err(o, "snapshot diff needs two different snapshots, not %" PRId64 " twice",
			       ida);
	if (load(ctx, ida, true, &a) < 0)
		return HS_CMD_FAIL;
	if (load(ctx, idb, true, &b) < 0) {
		hs_snap_free(&a);
		return HS_CMD_FAIL;
	}
	if (hs_snap_diff(&a, &b, ctx->topo, threshold, &d, err, sizeof(err)) < 0) {
		hs_snap_free(&a);
		hs_snap_free(&b);
		return out_err(o, "snapshot diff: %s (diff OLDER NEWER)", err);
	}
	for (size_t i = 0; i < d.ngroups; i++)
		flagged += d.groups[i].flagged;
	out_obj_open(o, NULL);
	out_int(o, "a", "snapshot %" PRId64, a.id);
	out_int(o, "b", " to %" PRId64, b.id);
	out_dur(o, "interval_ns", " over %s", (int64_t)d.interval_ns);
	out_uint(o, "spread_a_ns", NULL, a.spread_ns);
	out_uint(o, "spread_b_ns", NULL, b.spread_ns);
	out_uint(o, "ports", ": %" PRIu64 " ports", d.nports);
	/* JSON has every key, whatever the text leaves out */
	bool unpaired = d.only_a || d.only_b;
	out_uint(o, "only_a", unpaired ? " (%" PRIu64 " only in the first" : NULL, d.only_a);
	out_uint(o, "only_b", unpaired ? ", %" PRIu64 " only in the second)" : NULL, d.only_b);
	if (ctx->topo) {
		out_uint(o, "groups", ", %" PRIu64 " ECMP groups", d.ngroups);
		out_uint(o, "flagged", ", %" PRIu64 " flagged", flagged);
	} else {
		out_null(o, "groups");
		out_null(o, "flagged");
		out_text(o, "; no topology, so no ECMP groups (topo load FILE)");
	}
	out_nl(o);
	out_arr_open(o, "deltas");
	out_text(o, "%-12s %-12s %10s %12s %14s %10s %12s %14s %8s\n", "SWITCH", "PORT",
			 "RX_PKTS", "RX_BYTES", "RX_RATE", "TX_PKTS", "TX_BYTES", "TX_RATE", "DROPS");
	for (size_t i = 0; i < d.nports; i++)
		print_delta(o, &d.ports[i]);
	out_arr_close(o);
	out_arr_open(o, "ecmp_groups");
	if (ctx->topo)
		out_text(o, "\nECMP groups: shares of the bytes sent toward the next hops; "
			 "imbalance = max share / mean share - 1, flagged above %.2f\n", threshold);
	for (size_t i = 0; i < d.ngroups; i++)
		print_group(o, ctx->topo, &d.groups[i], threshold);
	out_arr_close(o);
	out_obj_close(o);
	hs_snap_diff_free(&d);
	hs_snap_free(&a);
	hs_snap_free(&b);
	return HS_CMD_OK;
}

int cmd_snapshot(struct hs_ctx *ctx, int argc, char **argv)
{
	struct hs_out *o = ctx->out;
	const char *sub = argv[1];
	int64_t a = 0, b = 0;

	if (strcmp(sub, "take") == 0 || strcmp(sub, "list") == 0) {
		if (argc > 2)
			return out_err(o, "snapshot %s: unexpected '%s'", sub, argv[2]);
		return sub[0] == 't' ? take(ctx) : list(ctx);
	}
	if (strcmp(sub, "show") == 0) {
		if (argc > 3)
			return out_err(o, "snapshot show: unexpected '%s'", argv[3]);
		if (parse_id(o, argc > 2 ? argv[2] : NULL, &a) < 0)
			return HS_CMD_FAIL;
		return show(ctx, a);
	}
	if (strcmp(sub, "diff") == 0) {
		double threshold = HS_SNAP_DEFAULT_THRESHOLD;
		const char *ids[2] = { NULL, NULL };
		int nid = 0;

		for (int i = 2; i < argc; i++) {
			if (strcmp(argv[i], "--threshold") == 0) {
				if (i + 1 >= argc)
					return out_err(o, "snapshot diff: '--threshold' needs a value "
						       "(e.g. 0.25 or 25%%)");
				if (hs_parse_share(argv[++i], &threshold) < 0)
					return out_err(o, "snapshot diff: bad threshold '%s' (e.g. 0.25 or 25%%)", argv[i]);
			} else if (nid < 2) {
				ids[nid++] = argv[i];
			} else {
				return out_err(o, "snapshot diff: unexpected '%s'", argv[i]);
			}
		}
		if (nid < 2)
			return out_err(o, "snapshot diff needs two snapshot ids (diff OLDER NEWER)");
		if (parse_id(o, ids[0], &a) < 0 || parse_id(o, ids[1], &b) < 0)
			return HS_CMD_FAIL;
		return diff(ctx, a, b, threshold);
	}
	return out_err(o, "unknown snapshot subcommand '%s' (take, list, show, diff)", sub);
}
