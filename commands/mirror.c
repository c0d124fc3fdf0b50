/* mirror.c - mirror add|del|list: program the switches' mirror rules
 *
 * The rule is checked word by word against the loaded topology (the
 * grammar is the engine's, src/mirror.c); then the fabric's drivers apply
 * it, each to the switches it serves (a fabric may mix lab and SONiC
 * switches). A driver runs as a child process (uv_spawn, an argv array, no
 * shell); its stdout is the result and its stderr the error (src/driver.c).
 * When the console dropped root, the privileged broker (privsep.c) runs it
 * instead, after checking the argv again with hs_mirror_argv_check.
 *
 * add runs the first driver with switches of the rule; the id it gives goes
 * to the others (add --id), run together; a failure takes the rule back
 * from every driver that had added it. del and list run every driver; a
 * driver that never had the rule is not an error unless none had it.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "answer.h"
#include "cmd.h"
#include "console.h"
#include "driverun.h"
#include "mirror.h"

/* one mirror verb across the fabric's drivers, one per switch kind */
enum { STEP_FIRST, STEP_REST, STEP_UNDO };

struct mirror_job {
	struct hs_mirror_rule rule;
	struct hs_driver_set ds;
	int step;
	char sw[HS_DRIVER_MAX][512];	/* add: the rule's switches each driver serves */
	bool use[HS_DRIVER_MAX];	/* this step runs driver i */
	bool added[HS_DRIVER_MAX];	/* add: driver i holds the rule */
	char err[1024];			/* the failure being undone */
};

/* "leaf1,spine2" as ["leaf1","spine2"] in JSON, as it is in text */
static void print_switches(struct hs_out *o, const char *fmt, const char *list)
{
	char sw[HS_MIRROR_WORD_MAX];

	out_str(o, NULL, fmt, list);
	out_arr_open(o, "switches");
	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ",");
		snprintf(sw, sizeof(sw), "%.*s", (int)n, p);
		out_str(o, NULL, NULL, sw);
		p += n + (p[n] == ',');
	}
	out_arr_close(o);
}

static void print_added(struct hs_ctx *ctx, const struct hs_mirror_rule *rule, uint64_t id)
{
	struct hs_out *o = ctx->out;
	char m[HS_MIRROR_WORDS * HS_MIRROR_WORD_MAX];

	out_obj_open(o, NULL);
	if (id)
		out_uint(o, "id", "mirror rule %" PRIu64 " added: ", id);
	else
		out_text(o, "mirror rule added: ");
	out_uint(o, "session", "session %" PRIu64, rule->session);
	print_switches(o, " on %s", rule->switches);
	out_str(o, "match", ", match %s", hs_mirror_match_str(rule, m, sizeof(m)));
	out_obj_close(o);
	out_nl(o);
}

/* the drivers' lists: the rules (one row for a rule spanning drivers), then
 * where the switches differ from what hopscope asked (drift) */
static int print_list(struct hs_ctx *ctx, const struct mirror_job *job,
		      struct hs_driver_result *r, int n)
{
	struct hs_out *o = ctx->out;
	struct hs_mirror_listing l = { 0 };
	char err[512];

	for (int d = 0; d < n; d++) {
		if (r[d].out_cut || r[d].out_nul ||
		    hs_mirror_listing_add(&l, r[d].out, err, sizeof(err)) < 0) {
			hs_mirror_listing_free(&l);
			return hs_driver_bad_answer(ctx, &r[d], job->ds.kind[d], "mirror list", err);
		}
	}
	out_obj_open(o, NULL);
	out_arr_open(o, "rules");
	for (size_t k = 0; k < l.nrules; k++) {
		const struct hs_mirror_listed *x = &l.rules[k];

		if (k == 0)
			out_text(o, "%-5s %-8s %-24s %s\n", "ID", "SESSION", "SWITCHES", "MATCH");
		out_obj_open(o, NULL);
		out_uint(o, "id", "%-5" PRIu64 " ", x->id);
		out_uint(o, "session", "%-8" PRIu64 " ", x->session);
		print_switches(o, "%-24s ", x->switches);
		out_str(o, "match", "%s", x->match);
		out_obj_close(o);
		out_nl(o);
	}
	out_arr_close(o);
	out_arr_open(o, "drift");
	for (size_t k = 0; k < l.ndrift; k++) {
		const struct hs_mirror_drift *x = &l.drift[k];

		if (k == 0)
			out_text(o, "drift (the switches differ from what hopscope asked):\n");
		out_obj_open(o, NULL);
		out_str(o, "switch", "  %s", x->sw);
		if (strcmp(x->row, "-") != 0)
			out_str(o, "row", " %s", x->row);
		else
			out_null(o, "row");
		out_str(o, "what", ": %s", x->what);
		out_obj_close(o);
		out_nl(o);
	}
	out_arr_close(o);
	out_obj_close(o);
	if (l.nrules == 0 && l.ndrift == 0)
		out_text(o, "no mirror rules\n");
	hs_mirror_listing_free(&l);
	return HS_CMD_OK;
}

static int mirror_step(struct hs_ctx *ctx, const struct mirror_job *job);

/* a driver that knows nothing of the rule: 'del' of an id it never gave */
static bool no_such_rule(const struct hs_driver_result *r)
{
	return r->exit_status == 2 && !r->term_signal && strstr(r->err, "no mirror rule");
}

static int add_done(struct hs_ctx *ctx, struct mirror_job *job, struct hs_driver_result *r,
		    int n)
{
	int k = 0, bad = -1, unread = -1;
	const char *unread_kind = NULL;
	char why[320] = "";

	for (int i = 0; i < job->ds.n; i++) {
		uint64_t id = 0;

		if (!job->use[i])
			continue;
		if (r[k].exit_status || r[k].term_signal) {
			if (bad < 0)
				bad = k;
			k++;
			continue;
		}
		job->added[i] = true;
		/* the first driver gives the id, the others must answer it back */
		if (unread < 0 && (r[k].out_cut || r[k].out_nul ||
				   hs_mirror_answer_id(r[k].out, false, &id, why, sizeof(why)) < 0 ||
				   (job->step != STEP_FIRST && id != job->rule.id))) {
			if (!*why)
				snprintf(why, sizeof(why), "id: %" PRIu64 ", not the rule's %" PRIu64,
					 id, job->rule.id);
			unread = k;
			unread_kind = job->ds.kind[i];
		} else if (job->step == STEP_FIRST) {
			job->rule.id = id;
		}
		k++;
	}
	(void)n;
	if (job->step == STEP_FIRST && unread >= 0) {	/* no id to take it back by */
		size_t len = strlen(why);

		snprintf(why + len, sizeof(why) - len, "; the rule may be installed: see 'mirror list'");
		return hs_driver_bad_answer(ctx, &r[unread], unread_kind, "mirror add", why);
	}
	if (job->step == STEP_FIRST && bad >= 0)
		return hs_driver_failed(ctx, &r[bad], "mirror driver");
	if (bad >= 0 || unread >= 0) {
		/* undo the rule where it went in, then say what failed */
		if (bad >= 0)
			hs_driver_failed(ctx, &r[bad], "mirror driver");
		else
			hs_driver_bad_answer(ctx, &r[unread], unread_kind, "mirror add", why);
		job->step = STEP_UNDO;
		for (int i = 0; i < job->ds.n; i++)
			job->use[i] = job->added[i];
		return mirror_step(ctx, job);
	}
	for (int i = 0; i < job->ds.n; i++)
		job->use[i] = !job->added[i] && job->sw[i][0];
	for (int i = 0; i < job->ds.n; i++) {
		if (job->use[i]) {
			job->step = STEP_REST;
			return mirror_step(ctx, job);
		}
	}
	print_added(ctx, &job->rule, job->rule.id);
	return HS_CMD_OK;
}

static int mirror_done(struct hs_ctx *ctx, struct hs_driver_result *r, int n, void *arg)
{
	struct mirror_job *job = arg;
	struct hs_out *o = ctx->out;
	int absent = 0, bad = -1;

	if (job->rule.op == HS_MIRROR_ADD && job->step != STEP_UNDO)
		return add_done(ctx, job, r, n);
	for (int i = 0; i < n; i++) {
		if (no_such_rule(&r[i]) && n > 1)
			absent++;
		else if ((r[i].exit_status || r[i].term_signal) && bad < 0)
			bad = i;
	}
	if (job->step == STEP_UNDO) {
		/* the failure itself was printed; say what undoing it left */
		for (int i = 0, k = 0; i < job->ds.n; i++) {
			if (!job->use[i])
				continue;
			if (r[k].exit_status || r[k].term_signal)
				out_err(o, "mirror rule %" PRIu64 " could not be taken back from "
					"the switches of '%s' (%s): see 'mirror list'", job->rule.id,
					job->ds.path[i], r[k].err);
			k++;
		}
		return HS_CMD_FAIL;
	}
	if (bad >= 0)
		return hs_driver_failed(ctx, &r[bad], "mirror driver");
	if (absent == n)
		return hs_driver_failed(ctx, &r[0], "mirror driver");
	if (job->rule.op == HS_MIRROR_DEL) {
		for (int i = 0; i < n; i++) {
			uint64_t id = 0;
			char why[256] = "";

			if (no_such_rule(&r[i]))
				continue;
			if (r[i].out_cut || r[i].out_nul ||
			    hs_mirror_answer_id(r[i].out, true, &id, why, sizeof(why)) < 0 ||
			    id != job->rule.id) {
				if (!*why)
					snprintf(why, sizeof(why), "id: %" PRIu64 ", not the rule's %"
						 PRIu64, id, job->rule.id);
				return hs_driver_bad_answer(ctx, &r[i], job->ds.kind[i], "mirror del",
							    why);
			}
		}
		out_obj_open(o, NULL);
		out_uint(o, "id", "mirror rule %" PRIu64, job->rule.id);
		out_bool(o, "deleted", " deleted", true);
		out_obj_close(o);
		out_nl(o);
	} else {
		return print_list(ctx, job, r, n);
	}
	return HS_CMD_OK;
}

/* run the drivers job->use names, each with its part of the rule */
static int mirror_step(struct hs_ctx *ctx, const struct mirror_job *job)
{
	struct hs_mirror_rule rules[HS_DRIVER_MAX];
	char *argv[HS_DRIVER_MAX][HS_MIRROR_ARGV_MAX], **argvs[HS_DRIVER_MAX];
	char idbuf[HS_DRIVER_MAX][24], sessbuf[HS_DRIVER_MAX][8];
	int n = 0;

	for (int i = 0; i < job->ds.n; i++) {
		if (!job->use[i])
			continue;
		rules[n] = job->rule;
		if (job->step == STEP_UNDO)
			rules[n].op = HS_MIRROR_DEL;
		else if (job->rule.op == HS_MIRROR_ADD)
			snprintf(rules[n].switches, sizeof(rules[n].switches), "%s", job->sw[i]);
		if (job->step == STEP_FIRST && job->rule.op == HS_MIRROR_ADD)
			rules[n].id = 0;	/* the first driver gives the id */
		hs_mirror_argv(&rules[n], job->ds.path[i], ctx->lab_state, idbuf[n],
			       sizeof(idbuf[n]), sessbuf[n], sizeof(sessbuf[n]), argv[n]);
		argvs[n] = argv[n];
		n++;
	}
	return hs_driver_run_all(ctx, n, argvs, HS_ANSWER_MAX, mirror_done, job, sizeof(*job),
				 "mirror driver",
				 "interrupted: the mirror driver completes or undoes the change "
				 "on its own; see 'mirror list'");
}

int cmd_mirror(struct hs_ctx *ctx, int argc, char **argv)
{
	static struct mirror_job job;
	char err[256];
	bool any = false;

	memset(&job, 0, sizeof(job));
	if (hs_mirror_parse(argc - 1, argv + 1, ctx->topo, &job.rule, err, sizeof(err)) < 0)
		return out_err(ctx->out, "%s", err);
	hs_driver_set(ctx->topo, &job.ds);
	job.step = STEP_FIRST;
	for (int i = 0; i < job.ds.n; i++) {
		bool has;

		job.use[i] = true;
		if (job.rule.op != HS_MIRROR_ADD)
			continue;
		/* add: the first driver with switches of the rule alone, first */
		has = hs_driver_switches(ctx->topo, job.ds.kind[i], job.rule.switches, job.sw[i],
					 sizeof(job.sw[i]));
		if (!has)
			job.sw[i][0] = '\0';
		job.use[i] = has && !any;
		any |= has;
	}
	if (!any && job.rule.op == HS_MIRROR_ADD)
		return out_err(ctx->out, "no driver serves the switches '%s'", job.rule.switches);
	return mirror_step(ctx, &job);
}
