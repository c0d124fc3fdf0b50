/* set.c - show or change a setting: format, db, analyzer, trace-timeout, history,
 * view, pager, tz, retention (kept in the history itself) */
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "console.h"
#include "follow.h"
#include "retention.h"

static const char *db_path(const struct hs_ctx *ctx)
{
	return ctx->set.db_path ? ctx->set.db_path : "hopscope.db";
}

static uint64_t timeout_ns(const struct hs_ctx *ctx)
{
	return ctx->set.trace_timeout_ns ? ctx->set.trace_timeout_ns : HS_NS_PER_SEC;
}

/* one setting, or all of them when name is NULL */
static void show(struct hs_ctx *ctx, const char *name)
{
	struct hs_out *o = ctx->out;
	char dur[32];
	bool all = name == NULL;

	out_obj_open(o, NULL);
	if (all || strcmp(name, "format") == 0) {
		out_text(o, "%-14s", "format");
		out_str(o, "format", "%s\n", ctx->set.json ? "json" : "text");
	}
	if (all || strcmp(name, "db") == 0) {
		out_text(o, "%-14s", "db");
		out_str(o, "db", "%s", db_path(ctx));
		out_bool(o, "db_open", NULL, ctx->store != NULL);
		out_text(o, "%s\n", ctx->store ? " (open)" : "");
	}
	if (all || strcmp(name, "analyzer") == 0) {
		const char *an = hs_ctx_analyzer(ctx);
		out_text(o, "%-14s", "analyzer");
		if (an) {
			out_str(o, "analyzer", "%s\n", an);
		} else {
			out_null(o, "analyzer");
			out_text(o, "none\n");
		}
	}
	if (all || strcmp(name, "trace-timeout") == 0) {
		out_text(o, "%-14s", "trace-timeout");
		out_text(o, "%s\n", hs_fmt_duration(timeout_ns(ctx), dur, sizeof(dur)));
		out_uint(o, "trace_timeout_ns", NULL, timeout_ns(ctx));
	}
	if (all || strcmp(name, "history") == 0) {
		out_text(o, "%-14s", "history");
		out_str(o, "history", "%s\n", hs_capture_policy_name((int)ctx->set.policy));
	}
	if (all || strcmp(name, "view") == 0) {
		out_text(o, "%-14s", "view");
		out_str(o, "view", "%s\n", hs_view_name(ctx->set.view));
	}
	if (all || strcmp(name, "pager") == 0) {
		out_text(o, "%-14s", "pager");
		out_bool(o, "pager", NULL, !ctx->set.no_pager);
		out_text(o, "%s\n", ctx->set.no_pager ? "off" : "on");
	}
	if (all || strcmp(name, "tz") == 0) {
		out_text(o, "%-14s", "tz");
		out_str(o, "tz", "%s\n", hs_tz_local() ? "local" : "utc");
	}
	/* the history's own: shown when it is open, never opened to show it */
	struct hs_retention r;
	if ((all || strcmp(name, "retention") == 0) && ctx->store &&
	    hs_store_retention(ctx->store, &r) == 0) {
		char age[32], size[32];
		out_text(o, "%-14s", "retention");
		if (!r.age_ns && !r.max_bytes)
			out_text(o, "off");
		if (r.age_ns)
			out_text(o, "%s", hs_fmt_age(r.age_ns, age, sizeof(age)));
		if (r.max_bytes)
			out_text(o, "%s%s", r.age_ns ? " " : "",
				 hs_fmt_size(r.max_bytes, size, sizeof(size)));
		out_text(o, " (in the history)\n");
		out_uint(o, "retention_age_ns", NULL, r.age_ns);
		out_uint(o, "retention_bytes", NULL, r.max_bytes);
	}
	out_obj_close(o);
}

static int set_format(struct hs_ctx *ctx, const char *v)
{
	if (strcmp(v, "text") == 0)
		ctx->set.json = false;
	else if (strcmp(v, "json") == 0)
		ctx->set.json = true;
	else
		return out_err(ctx->out, "bad format '%s' (text or json)", v);
	ctx->out->json = ctx->set.json;
	return HS_CMD_OK;
}

static int set_db(struct hs_ctx *ctx, const char *v)
{
	if (!*v)
		return out_err(ctx->out, "the history database needs a path");
	if (hs_capture_running(ctx))
		return out_err(ctx->out, "cannot change the history database while a capture "
			       "runs (capture stop first)");
	if (ctx->store) {
		hs_store_close(ctx->store);	/* commits what is queued */
		ctx->store = NULL;
	}
	free(ctx->set.db_path);
	ctx->set.db_path = hs_xstrdup(v);
	hs_capture_set_policy(ctx, ctx->set.policy);	/* what it keeps there */
	return HS_CMD_OK;
}

static int set_analyzer(struct hs_ctx *ctx, const char *v)
{
	if (!hs_analyzer_name_ok(v))
		return out_err(ctx->out, "bad analyzer name '%s' (1 to %d letters, digits, '.', "
			       "'-' or '_')", v, HS_ANALYZER_MAX - 1);
	if (hs_capture_running(ctx))
		return out_err(ctx->out, "cannot rename the analyzer while a capture runs "
			       "(capture stop first)");
	free(ctx->set.analyzer);
	ctx->set.analyzer = hs_xstrdup(v);
	if (ctx->store)
		hs_store_set_analyzer(ctx->store, v);
	return HS_CMD_OK;
}

static int set_timeout(struct hs_ctx *ctx, const char *v)
{
	uint64_t ns;

	if (hs_parse_duration(v, &ns) < 0 || ns == 0)
		return out_err(ctx->out, "bad trace timeout '%s' (e.g. 250ms, 1s, 2s)", v);
	if (ns > 3600 * HS_NS_PER_SEC)
		return out_err(ctx->out, "trace timeout '%s' is too long (at most 1h)", v);
	ctx->set.trace_timeout_ns = ns;
	hs_capture_set_timeout(ctx, ns);
	return HS_CMD_OK;
}

static int set_history(struct hs_ctx *ctx, const char *v)
{
	for (int i = 0; hs_capture_policy_name(i); i++) {
		if (strcmp(v, hs_capture_policy_name(i)) == 0) {
			hs_capture_set_policy(ctx, i);
			return HS_CMD_OK;
		}
	}
	return out_err(ctx->out, "bad history policy '%s' (default, all or off)", v);
}

static int set_pager(struct hs_ctx *ctx, const char *v)
{
	if (strcmp(v, "on") == 0)
		ctx->set.no_pager = false;
	else if (strcmp(v, "off") == 0)
		ctx->set.no_pager = true;
	else
		return out_err(ctx->out, "bad pager setting '%s' (on or off)", v);
	return HS_CMD_OK;
}

static int set_view(struct hs_ctx *ctx, const char *v)
{
	enum hs_view view;

	if (hs_view_parse(v, &view) < 0)
		return out_err(ctx->out, "bad view '%s' (auto, fabric or local)", v);
	if (view != ctx->set.view && hs_capture_running(ctx))
		return out_err(ctx->out, "cannot change the view while a capture runs "
			       "(capture stop first)");
	ctx->set.view = view;
	return HS_CMD_OK;
}

static int set_tz(struct hs_ctx *ctx, const char *v)
{
	if (strcmp(v, "utc") != 0 && strcmp(v, "local") != 0)
		return out_err(ctx->out, "bad time zone '%s' (utc or local)", v);
	hs_set_tz_local(strcmp(v, "local") == 0);
	return HS_CMD_OK;
}

static const struct {
	const char *name;
	int (*fn)(struct hs_ctx *ctx, const char *v);
} settings[] = {
	{ "format", set_format },
	{ "db", set_db },
	{ "analyzer", set_analyzer },
	{ "trace-timeout", set_timeout },
	{ "history", set_history },
	{ "view", set_view },
	{ "pager", set_pager },
	{ "tz", set_tz },
};

/* set retention AGE|SIZE [AGE|SIZE] | off: written into the history */
static int set_retention(struct hs_ctx *ctx, int argc, char **argv)
{
	struct hs_retention r = { 0, 0 };
	bool age = false, size = false;
	struct hs_store *st;

	if (argc == 1 && strcmp(argv[0], "off") == 0)
		goto write;
	if (argc > 2)
		return out_err(ctx->out, "set retention: unexpected '%s' (an age, a size, or both)",
			       argv[2]);
	for (int i = 0; i < argc; i++) {
		uint64_t v;
		if (!age && hs_parse_duration(argv[i], &v) == 0 && v >= HS_NS_PER_SEC) {
			r.age_ns = v;
			age = true;
		} else if (!size && hs_parse_size(argv[i], UINT64_MAX, &v) == 0 && v >= (1u << 20)) {
			r.max_bytes = v;
			size = true;
		} else {
			return out_err(ctx->out, "bad retention '%s' (an age of 1s or more such as "
				       "7d or 12h, a size of 1MiB or more such as 2GiB, or off)",
				       argv[i]);
		}
	}
write:
	if (!(st = hs_ctx_store(ctx)))
		return HS_CMD_FAIL;
	hs_ctx_hold_store(ctx);
	if (hs_store_set_retention(st, &r) < 0)
		return out_err(ctx->out, "set retention: %s", hs_store_errmsg(st));
	return HS_CMD_OK;
}

int cmd_set(struct hs_ctx *ctx, int argc, char **argv)
{
	if (argc == 1) {
		show(ctx, NULL);
		return HS_CMD_OK;
	}
	if (strcmp(argv[1], "retention") == 0) {
		if (argc == 2) {
			struct hs_store *st;
			if (hs_ctx_store_read(ctx, false, &st) <= 0)
				return HS_CMD_FAIL;
			show(ctx, "retention");
			return HS_CMD_OK;
		}
		return set_retention(ctx, argc - 2, argv + 2);
	}
	for (size_t i = 0; i < HS_ARRAY_SIZE(settings); i++) {
		if (strcmp(argv[1], settings[i].name) != 0)
			continue;
		if (argc == 2) {
			show(ctx, settings[i].name);
			return HS_CMD_OK;
		}
		if (argc > 3)
			return out_err(ctx->out, "too many arguments for 'set' ('set %s' takes one "
				       "value)", settings[i].name);
		return settings[i].fn(ctx, argv[2]);
	}
	return out_err(ctx->out, "unknown setting '%s' (format, db, analyzer, trace-timeout, history, "
		       "view, pager, tz, retention)", argv[1]);
}
