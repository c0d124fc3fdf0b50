/* complete.c - what may come next on a command line
 *
 * Everything here is read from the command table (commands/table.c): the
 * verbs, each verb's argument spec ("[limit N] [switch SW]"), its keywords
 * (words) and what completes a keyword's value (hs_cmd_values). TAB, '?',
 * sub-verb prefixes ('capture stat') and did-you-mean all use it, so they
 * cannot disagree.
 */
#include <ctype.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "complete.h"
#include "console.h"
#include "hs.h"
#include "out.h"
#include "runner.h"
#include "store.h"
#include "topo.h"
#include "tracer.h"

/* ---- candidates ----------------------------------------------------------- */

static void cand_add(struct hs_cands *c, const char *s, size_t len)
{
	if (c->n >= HS_MAX_CANDS)
		return;
	for (int i = 0; i < c->n; i++)
		if (strlen(c->v[i]) == len && strncmp(c->v[i], s, len) == 0)
			return;
	c->v[c->n] = hs_xcalloc(1, len + 1);
	memcpy(c->v[c->n++], s, len);
}

void hs_cands_free(struct hs_cands *c)
{
	for (int i = 0; i < c->n; i++)
		free(c->v[i]);
	c->n = 0;
}

static bool prefixes(const char *pfx, const char *s)
{
	return strncmp(s, pfx, strlen(pfx)) == 0;
}

static void cand_words(struct hs_cands *c, const char *const *words, const char *pfx)
{
	for (; words && *words; words++)
		if (prefixes(pfx, *words))
			cand_add(c, *words, strlen(*words));
}

static void cand_verbs(struct hs_cands *c, const char *pfx)
{
	for (unsigned i = 0; i < hs_ncmds; i++)
		if (prefixes(pfx, hs_cmds[i].name))
			cand_add(c, hs_cmds[i].name, strlen(hs_cmds[i].name));
}

static void cand_files(struct hs_cands *c, const char *pfx)
{
	const char *slash = strrchr(pfx, '/');
	size_t dlen = slash ? (size_t)(slash - pfx) + 1 : 0;
	const char *base = pfx + dlen;
	char dir[4096];
	DIR *d;
	struct dirent *e;

	if (dlen >= sizeof(dir))
		return;
	memcpy(dir, pfx, dlen);
	dir[dlen] = '\0';
	d = opendir(dlen ? dir : ".");
	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		char full[8192];
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (e->d_name[0] == '.' && base[0] != '.')
			continue;
		if (!prefixes(base, e->d_name))
			continue;
		int k = snprintf(full, sizeof(full), "%s%s", dir, e->d_name);
		if (k < 0 || (size_t)k >= sizeof(full) - 1)
			continue;
		DIR *sub = opendir(full);
		if (sub) {
			closedir(sub);
			full[k++] = '/';
			full[k] = '\0';
		}
		cand_add(c, full, (size_t)k);
	}
	closedir(d);
	if (c->n == 1 && c->v[0][strlen(c->v[0]) - 1] == '/')
		c->no_space = true;
}

/* a comma-separated list: complete its last element, keep what came before */
static void cand_list(struct hs_cands *c, const char *const *words, const char *pfx)
{
	const char *last = strrchr(pfx, ',');
	size_t head = last ? (size_t)(last - pfx) + 1 : 0;
	char buf[512];

	for (; words && *words; words++) {
		if (!prefixes(pfx + head, *words))
			continue;
		/* not twice in one list */
		bool dup = false;
		for (const char *p = pfx; p < pfx + head;) {
			size_t n = strcspn(p, ",");
			if (n == strlen(*words) && strncmp(p, *words, n) == 0)
				dup = true;
			p += n + 1;
		}
		int k = snprintf(buf, sizeof(buf), "%.*s%s", (int)head, pfx, *words);
		if (!dup && k > 0 && (size_t)k < sizeof(buf))
			cand_add(c, buf, (size_t)k);
	}
	if (c->n == 1)
		c->no_space = true;	/* another ',' may follow */
}

static void cand_switches(struct hs_ctx *ctx, struct hs_cands *c, const char *pfx, bool list)
{
	const char **names;
	struct hs_topo *t = ctx ? ctx->topo : NULL;

	if (!t || t->nsw <= 0) {
		c->hint = "SWITCH (no topology: 'topo load FILE')";
		return;
	}
	names = hs_xcalloc((size_t)t->nsw + 1, sizeof(*names));
	for (int i = 0; i < t->nsw; i++)
		names[i] = t->sw[i].name;
	if (list)
		cand_list(c, names, pfx);
	else
		cand_words(c, names, pfx);
	free(names);
}

/* trace names, newest first, as many as a screen shows */
#define TRACE_CANDS 64

/* the traces in memory, by the name 'traces' gives them; typed without a
 * session, by the number alone */
static void cand_traces(struct hs_ctx *ctx, struct hs_cands *c, const char *pfx)
{
	const struct hs_trace **recent;
	size_t n, max = 1u << 16;
	bool bare = !strchr(pfx, ':');
	char name[48];

	if (!ctx || !ctx->tracer)
		return;
	recent = hs_xcalloc(max, sizeof(*recent));
	n = hs_tracer_recent(ctx->tracer, recent, max);
	for (size_t i = 0; i < n && c->n < TRACE_CANDS; i++) {
		hs_fmt_trace_ref(ctx->ring_session, recent[i]->id, name, sizeof(name));
		if (prefixes(pfx, name))
			cand_add(c, name, strlen(name));
		else if (bare && strchr(name, ':') && prefixes(pfx, strchr(name, ':') + 1))
			cand_add(c, strchr(name, ':') + 1, strlen(strchr(name, ':') + 1));
	}
	free(recent);
}

static void cand_add_name(void *arg, const char *name)
{
	cand_add(arg, name, strlen(name));
}

void hs_cands_add(struct hs_cands *c, const char *name)
{
	cand_add(c, name, strlen(name));
}

/* the history's traces (those it kept), by their SESSION:N names; only
 * once the history is open, so that TAB never creates one */
static void cand_stored_traces(struct hs_ctx *ctx, struct hs_cands *c, const char *pfx)
{
	if (ctx && ctx->store)
		hs_store_trace_names(ctx->store, pfx, TRACE_CANDS, cand_add_name, c);
}

void hs_complete_traces(struct hs_ctx *ctx, bool stored, const char *word, struct hs_cands *c)
{
	if (stored)
		cand_stored_traces(ctx, c, word);
	else
		cand_traces(ctx, c, word);
}

/* trace names: this process's, or those of the daemon it is attached to */
static void cand_trace_names(struct hs_ctx *ctx, struct hs_cands *c, bool stored, const char *pfx)
{
	c->hint = stored ? "ID (SESSION:N, see 'history traces')" : "ID (N, or SESSION:N)";
	if (ctx && ctx->names)
		ctx->names(ctx, stored, pfx, c);
	else
		hs_complete_traces(ctx, stored, pfx, c);
}

static void cand_value(struct hs_ctx *ctx, struct hs_cands *c, const struct hs_cmd_value *v,
		       const char *pfx)
{
	switch (v->kind) {
	case HS_VAL_WORDS:
		cand_words(c, v->words, pfx);
		break;
	case HS_VAL_LIST:
		cand_list(c, v->words, pfx);
		break;
	case HS_VAL_SWITCH:
		cand_switches(ctx, c, pfx, false);
		break;
	case HS_VAL_SWITCHES:
		cand_switches(ctx, c, pfx, true);
		break;
	case HS_VAL_VERB:
		cand_verbs(c, pfx);
		break;
	case HS_VAL_FILE:
		cand_files(c, pfx);
		if (!c->n)
			c->hint = "FILE";
		break;
	case HS_VAL_TRACE:
		cand_trace_names(ctx, c, false, pfx);
		break;
	case HS_VAL_STORED_TRACE:
		cand_trace_names(ctx, c, true, pfx);
		break;
	}
}

/* the value rule of KEYWORD (NULL: the first argument) for verb C */
static const struct hs_cmd_value *value_rule(const struct hs_cmd *c, const char *keyword)
{
	const struct hs_cmd_value *any = NULL;

	for (unsigned i = 0; i < hs_ncmd_values; i++) {
		const struct hs_cmd_value *v = &hs_cmd_values[i];
		bool kw = keyword ? v->keyword && strcmp(v->keyword, keyword) == 0 : !v->keyword;
		if (!kw)
			continue;
		if (v->verb && strcmp(v->verb, c->name) == 0)
			return v;
		if (!v->verb && keyword && strstr(c->args, keyword))
			any = v;
	}
	return any;
}

/* the placeholder that follows KEYWORD in C's spec ("[limit N]" -> "N"), copied
 * to BUF; false when the keyword takes no value */
static bool keyword_value(const struct hs_cmd *c, const char *keyword, char *buf, size_t len)
{
	size_t n = strlen(keyword);

	for (const char *p = c->args; (p = strstr(p, keyword)) != NULL; p += n) {
		bool start = p == c->args || strchr(" [<|", p[-1]);
		if (!start || p[n] != ' ')
			continue;
		const char *v = p + n + 1;
		size_t k = strcspn(v, " ]>|");
		if (k == 0 || !isupper((unsigned char)v[0]))
			return false;
		snprintf(buf, len, "%.*s", (int)k, v);
		return true;
	}
	return false;
}

void hs_complete(struct hs_ctx *ctx, const char *line, struct hs_cands *c)
{
	char *buf = hs_xstrdup(line);
	char *argv[64];
	int argc, col;
	const char *pfx = "";
	size_t len = strlen(line);
	bool new_word = len == 0 || line[len - 1] == ' ' || line[len - 1] == '\t';
	const struct hs_cmd *cmd;
	const struct hs_cmd_value *rule;
	static char hint[64];

	c->n = 0;
	c->no_space = false;
	c->hint = NULL;
	argc = hs_split_words(buf, argv, (int)HS_ARRAY_SIZE(argv) - 1, &col);
	if (argc < 0)
		goto out;
	if (!new_word && argc > 0)
		pfx = argv[--argc];
	/* 'show traces' is 'traces' */
	if (argc >= 1 && strlen(argv[0]) >= 2 && prefixes(argv[0], "show") &&
	    !hs_cmd_lookup(argv[0], NULL)) {
		memmove(argv, argv + 1, (size_t)argc * sizeof(*argv));
		argc--;
	}
	if (argc == 0) {
		cand_verbs(c, pfx);
		goto out;
	}
	cmd = hs_cmd_lookup(argv[0], NULL);
	if (!cmd)
		goto out;
	if (argc == 1 && (rule = value_rule(cmd, NULL)) != NULL) {
		cand_value(ctx, c, rule, pfx);
		goto out;
	}
	if (argc >= 2) {
		const char *prev = argv[argc - 1];
		const char *sub = hs_cmd_subverb(cmd, prev, NULL);
		if (argc == 2 && sub)
			prev = sub;
		if ((rule = value_rule(cmd, prev)) != NULL) {
			cand_value(ctx, c, rule, pfx);
			goto out;
		}
		/* a keyword whose value is free (limit N, since T): nothing to offer */
		if (keyword_value(cmd, prev, hint, sizeof(hint))) {
			c->hint = hint;
			goto out;
		}
	}
	/* the verb's keywords, except those already given (a sub-verb only first) */
	{
		const char *subs[32];
		int nsub = hs_cmd_subverbs(cmd, subs, (int)HS_ARRAY_SIZE(subs));
		for (const char *const *w = cmd->words; w && *w; w++) {
			bool used = false, is_sub = false;
			for (int i = 1; i < argc; i++)
				if (strcmp(argv[i], *w) == 0)
					used = true;
			for (int i = 0; i < nsub; i++)
				if (subs[i] == *w)
					is_sub = true;
			if (used || (is_sub && argc > 1) || !prefixes(pfx, *w))
				continue;
			cand_add(c, *w, strlen(*w));
		}
	}
out:
	free(buf);
}

void hs_describe(struct hs_ctx *ctx, struct hs_out *o, const char *line)
{
	struct hs_cands c;
	char *buf = hs_xstrdup(line), *argv[64];
	int argc, col;
	const struct hs_cmd *cmd = NULL;
	char usage[512];
	size_t len = strlen(line);
	bool new_word = len == 0 || line[len - 1] == ' ' || line[len - 1] == '\t';

	argc = hs_split_words(buf, argv, (int)HS_ARRAY_SIZE(argv) - 1, &col);
	if (argc > 0 && strlen(argv[0]) >= 2 && prefixes(argv[0], "show") &&
	    !hs_cmd_lookup(argv[0], NULL)) {
		memmove(argv, argv + 1, (size_t)argc * sizeof(*argv));
		argc--;
	}
	if (argc > 1 || (argc == 1 && new_word))
		cmd = hs_cmd_lookup(argv[0], NULL);
	hs_complete(ctx, line, &c);
	out_obj_open(o, NULL);
	if (cmd) {
		out_str(o, "verb", NULL, cmd->name);
		out_str(o, "usage", "%s\n", hs_cmd_usage(cmd, usage, sizeof(usage)) + 7);
		out_arr_open(o, "next");
		if (c.n)
			out_text(o, "  ");
		for (int i = 0; i < c.n; i++)
			out_str(o, NULL, i ? "  %s" : "%s", c.v[i]);
		out_arr_close(o);
		if (c.n)
			out_nl(o);
		else if (c.hint)
			out_str(o, "expects", "  <%s>\n", c.hint);
		else
			out_text(o, "  <cr>\n");
	} else {
		out_arr_open(o, "verbs");
		for (int i = 0; i < c.n; i++) {
			const struct hs_cmd *v = hs_cmd_lookup(c.v[i], NULL);
			out_obj_open(o, NULL);
			out_str(o, "name", "  %-12s", v->name);
			out_str(o, "summary", " %s\n", v->summary);
			out_obj_close(o);
		}
		out_arr_close(o);
	}
	out_obj_close(o);
	hs_cands_free(&c);
	free(buf);
}

/* ---- sub-verbs ------------------------------------------------------------- */

int hs_cmd_subverbs(const struct hs_cmd *c, const char **out, int max)
{
	const char *s = c->args ? c->args : "";
	size_t len;
	int n = 0;

	if (*s == '[')
		s++;
	len = strcspn(s, " ]");
	if (!memchr(s, '|', len))
		return 0;
	while (len > 0 && n < max) {
		size_t k = strcspn(s, "|");
		if (k > len)
			k = len;
		/* point into the keyword list, where the name ends in a NUL */
		for (const char *const *w = c->words; w && *w; w++)
			if (strlen(*w) == k && strncmp(*w, s, k) == 0) {
				out[n++] = *w;
				break;
			}
		if (k == len)
			break;
		s += k + 1;
		len -= k + 1;
	}
	return n;
}

const char *hs_cmd_subverb(const struct hs_cmd *c, const char *word, int *nmatch)
{
	const char *subs[32], *found = NULL;
	int n = hs_cmd_subverbs(c, subs, (int)HS_ARRAY_SIZE(subs)), m = 0;

	if (nmatch)
		*nmatch = 0;
	if (!*word)
		return NULL;
	for (int i = 0; i < n; i++)
		if (strcmp(subs[i], word) == 0)
			return subs[i];
	for (int i = 0; i < n; i++)
		if (prefixes(word, subs[i])) {
			found = subs[i];
			m++;
		}
	if (nmatch)
		*nmatch = m;
	return m == 1 ? found : NULL;
}

void hs_join_prefixed(const char *word, const char *const *words, size_t n, char *buf,
		      size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && off < len; i++) {
		if (!words[i] || !prefixes(word, words[i]))
			continue;
		int k = snprintf(buf + off, len - off, "%s%s", off ? ", " : "", words[i]);
		if (k < 0)
			break;
		off += (size_t)k;
	}
}

void hs_verbs_prefixed(const char *word, char *buf, size_t len)
{
	const char *names[128];
	size_t n = 0;

	for (unsigned i = 0; i < hs_ncmds && n < HS_ARRAY_SIZE(names); i++)
		if (!(hs_cmds[i].flags & HS_CMDF_ALIAS))
			names[n++] = hs_cmds[i].name;
	hs_join_prefixed(word, names, n, buf, len);
}

/* ---- did you mean ------------------------------------------------------------ */

/* optimal string alignment distance (an adjacent swap costs one), capped */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t d[33][33];

	if (la > 32 || lb > 32)
		return (size_t)-1;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			size_t cost = a[i - 1] != b[j - 1];
			size_t v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (d[i - 1][j - 1] + cost < v)
				v = d[i - 1][j - 1] + cost;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	return d[la][lb];
}

const char *hs_suggest(const char *word, const char *const *words, size_t n)
{
	const char *best = NULL;
	size_t bd = (size_t)-1, len = strlen(word);
	/* a typo is one or two edits, and fewer than half the word */
	size_t limit = len <= 3 ? 1 : 2;

	for (size_t i = 0; i < n; i++) {
		if (!words[i])
			continue;
		size_t dd = distance(word, words[i]);
		if (dd < bd) {
			bd = dd;
			best = words[i];
		}
	}
	return bd <= limit && bd < len ? best : NULL;
}

const char *hs_suggest_verb(const char *word)
{
	const char *names[128];
	size_t n = 0;

	for (unsigned i = 0; i < hs_ncmds && n < HS_ARRAY_SIZE(names); i++)
		names[n++] = hs_cmds[i].name;
	return hs_suggest(word, names, n);
}
