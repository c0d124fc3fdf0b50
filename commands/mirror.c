/* mirror.c - mirror add|del|list: program the switches' mirror rules
 *
 * The rule is checked word by word against the loaded topology (the
 * grammar is the engine's, src/mirror.c); then the fabric's driver applies
 * it. The driver runs as a child process
 * (uv_spawn, an argv array, no shell); the verb finishes when it exits, its
 * stdout is the result and its stderr the error (src/driver.c). When the
 * console dropped root, the privileged broker (privsep.c) runs it instead,
 * after checking the argv again with hs_mirror_argv_check.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "cmd.h"
#include "console.h"
#include "driverun.h"
#include "mirror.h"

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

static void print_added(struct hs_ctx *ctx, const struct hs_mirror_rule *rule, const char *obuf)
{
	struct hs_out *o = &ctx->out;
	char m[HS_MIRROR_WORDS * HS_MIRROR_WORD_MAX];
	uint64_t id = 0;
	char line[32];
	size_t n = strcspn(obuf, "\n");

	snprintf(line, sizeof(line), "%.*s", (int)(n < sizeof(line) ? n : sizeof(line) - 1), obuf);
	out_obj_open(o, NULL);
	if (hs_parse_dec(line, UINT32_MAX, &id) == 0)
		out_uint(o, "id", "mirror rule %" PRIu64 " added: ", id);
	else
		out_text(o, "mirror rule added: ");
	out_uint(o, "session", "session %" PRIu64, rule->session);
	print_switches(o, " on %s", rule->switches);
	out_str(o, "match", ", match %s", hs_mirror_match_str(rule, m, sizeof(m)));
	out_obj_close(o);
	out_nl(o);
}

/* "drift SWITCH ROW WHAT...": where a switch differs from what was asked */
static void print_drift(struct hs_ctx *ctx, char *line, int *rows)
{
	struct hs_out *o = &ctx->out;
	char *save = NULL, *sw, *row, *what;

	strtok_r(line, " ", &save);
	sw = strtok_r(NULL, " ", &save);
	row = strtok_r(NULL, " ", &save);
	what = save;
	if (!sw || !row || !what || !*what || !hs_name_ok(sw))
		return;
	if ((*rows)++ == 0)
		out_text(o, "drift (the switches differ from what hopscope asked):\n");
	out_obj_open(o, NULL);
	out_str(o, "switch", "  %s", sw);
	if (strcmp(row, "-") != 0)
		out_str(o, "row", " %s", row);
	else
		out_null(o, "row");
	out_str(o, "what", ": %s", what);
	out_obj_close(o);
	out_nl(o);
}

/* driver list lines: "ID SESSION SWITCHES MATCH...", then any drift lines:
 * {"rules":[...],"drift":[...]} */
static void print_list(struct hs_ctx *ctx, const char *obuf)
{
	struct hs_out *o = &ctx->out;
	char *save = NULL, *line, *buf = hs_xstrdup(obuf);
	int rows = 0, drift = 0;

	out_obj_open(o, NULL);
	out_arr_open(o, "rules");
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *f[3], *rest = line;
		uint64_t id, session;
		int k;

		if (strncmp(line, "drift ", 6) == 0)
			continue;

		for (k = 0; k < 3; k++) {
			rest += strspn(rest, " \t");
			f[k] = rest;
			rest += strcspn(rest, " \t");
			if (!*rest)
				break;
			*rest++ = '\0';
		}
		if (k < 3)
			continue;
		rest += strspn(rest, " \t");
		if (hs_parse_dec(f[0], UINT32_MAX, &id) < 0 ||
		    hs_parse_dec(f[1], HS_MIRROR_SESSION_MAX, &session) < 0 || !*rest)
			continue;
		if (rows++ == 0)
			out_text(o, "%-5s %-8s %-24s %s\n", "ID", "SESSION", "SWITCHES", "MATCH");
		out_obj_open(o, NULL);
		out_uint(o, "id", "%-5" PRIu64 " ", id);
		out_uint(o, "session", "%-8" PRIu64 " ", session);
		print_switches(o, "%-24s ", f[2]);
		out_str(o, "match", "%s", rest);
		out_obj_close(o);
		out_nl(o);
	}
	out_arr_close(o);
	free(buf);
	buf = hs_xstrdup(obuf);
	out_arr_open(o, "drift");
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (strncmp(line, "drift ", 6) == 0)
			print_drift(ctx, line, &drift);
	out_arr_close(o);
	out_obj_close(o);
	free(buf);
	if (rows == 0 && drift == 0)
		out_text(o, "no mirror rules\n");
}

static int mirror_done(struct hs_ctx *ctx, const struct hs_driver_result *r, void *arg)
{
	const struct hs_mirror_rule *rule = arg;
	struct hs_out *o = &ctx->out;

	if (hs_driver_failed(ctx, r, "mirror driver") < 0)
		return HS_CMD_FAIL;
	if (rule->op == HS_MIRROR_ADD) {
		print_added(ctx, rule, r->out);
	} else if (rule->op == HS_MIRROR_DEL) {
		out_obj_open(o, NULL);
		out_uint(o, "id", "mirror rule %" PRIu64, rule->id);
		out_bool(o, "deleted", " deleted", true);
		out_obj_close(o);
		out_nl(o);
	} else {
		print_list(ctx, r->out);
	}
	return HS_CMD_OK;
}

static int job_start(struct hs_ctx *ctx, const struct hs_mirror_rule *rule)
{
	char *argv[HS_MIRROR_ARGV_MAX];
	char driver[PATH_MAX], idbuf[24], sessbuf[8];
	bool tree;

	hs_driver_path(ctx->topo, driver, sizeof(driver), &tree);
	hs_mirror_argv(rule, driver, ctx->lab_state, idbuf, sizeof(idbuf), sessbuf,
		       sizeof(sessbuf), argv);
	return hs_driver_run(ctx, argv, 32768, mirror_done, rule, sizeof(*rule), "mirror driver",
			     "interrupted: the mirror driver completes or undoes the change "
			     "on its own; see 'mirror list'");
}

int cmd_mirror(struct hs_ctx *ctx, int argc, char **argv)
{
	struct hs_mirror_rule rule;
	char err[256];

	if (hs_mirror_parse(argc - 1, argv + 1, ctx->topo, &rule, err, sizeof(err)) < 0)
		return out_err(&ctx->out, "%s", err);
	return job_start(ctx, &rule);
}
