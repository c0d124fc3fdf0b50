/* test_cmd.c - words, the command table, argument counts, the output writer
 * and runbooks run through the runner with a console-less context */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "cmd.h"
#include "complete.h"
#include "console.h"
#include "runner.h"

/* ---- a context whose output goes to memory ----------------------------------- */

struct fake {
	struct hs_ctx ctx;
	struct hs_out o;
	char *out, *err;
	size_t outlen, errlen;
	FILE *fo, *fe;
	uv_loop_t loop;
};

static struct fake *fake_new(void)
{
	struct fake *f = hs_xcalloc(1, sizeof(*f));

	f->fo = open_memstream(&f->out, &f->outlen);
	f->fe = open_memstream(&f->err, &f->errlen);
	assert_non_null(f->fo);
	assert_non_null(f->fe);
	f->ctx.out = &f->o;
	out_init(f->ctx.out, f->fo, f->fe, false);
	assert_int_equal(uv_loop_init(&f->loop), 0);
	f->ctx.loop = &f->loop;
	f->ctx.set.trace_timeout_ns = HS_NS_PER_SEC;
	hs_runner_init(&f->ctx);
	return f;
}

static void fake_flush(struct fake *f)
{
	fflush(f->fo);
	fflush(f->fe);
}

static void fake_free(struct fake *f)
{
	hs_runner_free(&f->ctx);
	uv_run(&f->loop, UV_RUN_DEFAULT);
	assert_int_equal(uv_loop_close(&f->loop), 0);
	fclose(f->fo);
	fclose(f->fe);
	free(f->out);
	free(f->err);
	free(f->ctx.set.db_path);
	free(f->ctx.set.analyzer);
	free(f);
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++)
		n++;
	return n;
}

static char *write_file(const char *text)
{
	char tmpl[] = "/tmp/hs-test-rb.XXXXXX";
	int fd = mkstemp(tmpl);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return hs_xstrdup(tmpl);
}

/* ---- words ------------------------------------------------------------------------ */

static void test_split_plain(void **state)
{
	char buf[] = "  capture   start\tx.pcap  ";
	char *argv[8];
	int col;

	(void)state;
	assert_int_equal(hs_split_words(buf, argv, 8, &col), 3);
	assert_string_equal(argv[0], "capture");
	assert_string_equal(argv[1], "start");
	assert_string_equal(argv[2], "x.pcap");
}

static void test_split_quotes(void **state)
{
	char buf[] = "filter add 'tcp port 80' \"a 'b'\" x'y z'w \"\"";
	char *argv[8];
	int col;

	(void)state;
	assert_int_equal(hs_split_words(buf, argv, 8, &col), 6);
	assert_string_equal(argv[2], "tcp port 80");
	assert_string_equal(argv[3], "a 'b'");
	assert_string_equal(argv[4], "xy zw");
	assert_string_equal(argv[5], "");
}

static void test_split_comments(void **state)
{
	char a[] = "# only a comment";
	char b[] = "help   # says hello";
	char c[] = "sql 'select 1 # not a comment' a#b";
	char d[] = "";
	char *argv[8];
	int col;

	(void)state;
	assert_int_equal(hs_split_words(a, argv, 8, &col), 0);
	assert_int_equal(hs_split_words(b, argv, 8, &col), 1);
	assert_string_equal(argv[0], "help");
	assert_int_equal(hs_split_words(c, argv, 8, &col), 3);
	assert_string_equal(argv[1], "select 1 # not a comment");
	assert_string_equal(argv[2], "a#b");
	assert_int_equal(hs_split_words(d, argv, 8, &col), 0);
}

static void test_split_errors(void **state)
{
	char a[] = "sql 'select 1";
	char b[] = "a \"b";
	char c[] = "a b c d";
	char *argv[8];
	int col = 0;

	(void)state;
	assert_int_equal(hs_split_words(a, argv, 8, &col), -1);
	assert_int_equal(col, 5);
	assert_int_equal(hs_split_words(b, argv, 8, &col), -1);
	assert_int_equal(col, 3);
	assert_int_equal(hs_split_words(c, argv, 3, &col), -1);
	assert_int_equal(col, 7);
}

static void test_split_commands(void **state)
{
	char **v;
	int n;

	(void)state;
	n = hs_split_commands("help; sql 'select 1; 2' ;quit\nset # a; b\nx", &v);
	assert_int_equal(n, 5);
	assert_string_equal(v[0], "help");
	assert_string_equal(v[1], " sql 'select 1; 2' ");
	assert_string_equal(v[2], "quit");
	assert_string_equal(v[3], "set # a; b");
	assert_string_equal(v[4], "x");
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
	n = hs_split_commands("", &v);
	assert_int_equal(n, 1);
	assert_string_equal(v[0], "");
	free(v[0]);
	free(v);
}

/* ---- the table -------------------------------------------------------------------- */

static void test_lookup(void **state)
{
	int amb = -1;
	const struct hs_cmd *c;

	(void)state;
	c = hs_cmd_lookup("help", &amb);
	assert_non_null(c);
	assert_string_equal(c->name, "help");
	assert_int_equal(amb, 0);
	c = hs_cmd_lookup("he", &amb);
	assert_non_null(c);
	assert_string_equal(c->name, "help");
	c = hs_cmd_lookup("exit", &amb);
	assert_non_null(c);
	assert_string_equal(c->name, "exit");
	assert_true(c->fn == cmd_quit);
	c = hs_cmd_lookup("q", &amb);
	assert_non_null(c);
	assert_true(c->fn == cmd_quit);
	c = hs_cmd_lookup("s", &amb);	/* set, source, sleep, sql, ... */
	assert_null(c);
	assert_true(amb >= 4);
	c = hs_cmd_lookup("nosuchverb", &amb);
	assert_null(c);
	assert_int_equal(amb, 0);
	assert_null(hs_cmd_lookup("", &amb));
	assert_null(hs_cmd_lookup("helpx", &amb));
}

static void test_table_sane(void **state)
{
	(void)state;
	assert_true(hs_ncmds > 5);
	for (unsigned i = 0; i < hs_ncmds; i++) {
		const struct hs_cmd *c = &hs_cmds[i];
		assert_non_null(c->name);
		assert_non_null(c->fn);
		assert_non_null(c->args);
		assert_non_null(c->summary);
		/* every name is found as itself */
		assert_ptr_equal(hs_cmd_lookup(c->name, NULL), c);
		/* summaries are lowercase without a full stop */
		size_t n = strlen(c->summary);
		assert_true(n > 0 && c->summary[n - 1] != '.');
		for (unsigned j = 0; j < i; j++)
			assert_string_not_equal(hs_cmds[j].name, c->name);
	}
}

static void arity(const char *spec, int *min, int *max)
{
	struct hs_cmd c = { "x", cmd_help, spec, "x", NULL, 0 };

	hs_cmd_arity(&c, min, max);
}

static void test_arity_specs(void **state)
{
	static const struct { const char *spec; int min, max; } t[] = {
		{ "", 0, 0 },
		{ "[VERB]", 0, 1 },
		{ "<FILE>", 1, 1 },
		{ "<QUERY...>", 1, -1 },
		{ "start|stop|status [IFACE|FILE] [--for DURATION]", 1, 4 },
		{ "add|del|list [EXPR...|ID]", 1, -1 },
		{ "[format|db|trace-timeout|history] [VALUE]", 0, 2 },
		{ "[show ID] [flow FLOW] [switch SW] [outcome O] [since T] [limit N]", 0, 12 },
		{ "[sessions|flows|traces|show ID] [limit N]", 0, 4 },
		{ "load|show [FILE]", 1, 2 },
		{ "<SRC> <DST> [OPTION...]", 2, -1 },
		{ "<A B>", 2, 2 },
	};
	int min, max;

	(void)state;
	for (size_t i = 0; i < HS_ARRAY_SIZE(t); i++) {
		arity(t[i].spec, &min, &max);
		if (min != t[i].min || max != t[i].max)
			fail_msg("'%s': %d..%d, expected %d..%d", t[i].spec, min, max,
				 t[i].min, t[i].max);
	}
}

/* every verb in the table: one argument too few or too many is refused by
 * the runner before the verb runs, naming the verb and its usage */
static void test_arity_every_verb(void **state)
{
	(void)state;
	for (unsigned i = 0; i < hs_ncmds; i++) {
		const struct hs_cmd *c = &hs_cmds[i];
		int min, max;
		char line[1024];

		hs_cmd_arity(c, &min, &max);
		assert_true(min >= 0);
		assert_true(max == -1 || max >= min);
		assert_true((strstr(c->args, "...") != NULL) == (max == -1));
		assert_true(count(c->args, "<") <= min);
		if (min > 0) {
			struct fake *f = fake_new();
			snprintf(line, sizeof(line), "%s", c->name);
			for (int k = 0; k < min - 1; k++)
				strcat(line, " a");
			assert_int_equal(hs_run_line(&f->ctx, line), HS_CMD_FAIL);
			fake_flush(f);
			assert_non_null(strstr(f->err, "too few arguments"));
			assert_non_null(strstr(f->err, c->name));
			assert_int_equal(f->outlen, 0);
			fake_free(f);
		}
		if (max >= 0) {
			struct fake *f = fake_new();
			snprintf(line, sizeof(line), "%s", c->name);
			for (int k = 0; k < max + 1; k++)
				strcat(line, " a");
			assert_int_equal(hs_run_line(&f->ctx, line), HS_CMD_FAIL);
			fake_flush(f);
			assert_non_null(strstr(f->err, "too many arguments"));
			assert_non_null(strstr(f->err, "usage: "));
			assert_int_equal(f->outlen, 0);
			fake_free(f);
		}
	}
}

/* ---- lines ------------------------------------------------------------------------- */

static void test_run_line_errors(void **state)
{
	struct fake *f = fake_new();

	(void)state;
	assert_int_equal(hs_run_line(&f->ctx, "nosuchverb 1 2"), HS_CMD_FAIL);
	assert_int_equal(hs_run_line(&f->ctx, "s"), HS_CMD_FAIL);
	assert_int_equal(hs_run_line(&f->ctx, "help 'x"), HS_CMD_FAIL);
	assert_int_equal(hs_run_line(&f->ctx, "   # nothing"), HS_CMD_OK);
	fake_flush(f);
	assert_non_null(strstr(f->err, "error: unknown verb 'nosuchverb' (try 'help')\n"));
	assert_non_null(strstr(f->err, "error: 's' is ambiguous: "));
	assert_non_null(strstr(f->err, "source"));
	assert_non_null(strstr(f->err, "sleep"));
	assert_non_null(strstr(f->err, "error: unterminated quote at column 6\n"));
	assert_int_equal(f->outlen, 0);
	fake_free(f);
}

static void test_run_line_json(void **state)
{
	struct fake *f = fake_new();

	(void)state;
	assert_int_equal(hs_run_line(&f->ctx, "help --json sleep"), HS_CMD_OK);
	assert_false(f->ctx.out->json);	/* only for that line */
	assert_int_equal(hs_run_line(&f->ctx, "help quit"), HS_CMD_OK);
	fake_flush(f);
	assert_non_null(strstr(f->out, "{\"name\":\"sleep\",\"synopsis\":\"sleep <DURATION>\","));
	assert_non_null(strstr(f->out, "usage: quit\n"));
	assert_int_equal(f->errlen, 0);
	fake_free(f);
}

/* ---- what a verb asks of the console above it (reply.h) ------------------------------ */

static int frob_fn(struct hs_ctx *ctx, int argc, char **argv)
{
	(void)ctx;
	(void)argc;
	(void)argv;
	return HS_CMD_OK;
}

static const struct hs_cmd up_cmds[] = {
	{ "help", cmd_help, "[VERB]", "list the verbs", NULL, 0 },
	{ "frob", frob_fn, "<N>", "frob the fabric", NULL, 0 },
};
static const unsigned up_ncmds = HS_ARRAY_SIZE(up_cmds);

static const struct hs_cmd *up_lookup(const char *word, int *ambiguous)
{
	*ambiguous = 0;
	for (unsigned i = 0; i < up_ncmds; i++)
		if (strcmp(up_cmds[i].name, word) == 0)
			return &up_cmds[i];
	return NULL;
}

static const char *up_suggest(const char *word)
{
	return strcmp(word, "frb") == 0 ? "frob" : NULL;
}

static int up_finished = -2;

static void up_finish(struct hs_ctx *ctx, int status)
{
	(void)ctx;
	up_finished = status;
}

static void up_vprint(struct hs_ctx *ctx, const char *fmt, va_list ap)
{
	fputs("above: ", ctx->out->fp);
	vfprintf(ctx->out->fp, fmt, ap);
}

/* the verbs and what they use reach the table, the runner and the terminal
 * through ctx->con, whatever console is above them */
static void test_verb_reaches_up(void **state)
{
	struct fake *f = fake_new();
	const struct hs_con up = {
		.cmds = up_cmds,
		.ncmds = &up_ncmds,
		.lookup = up_lookup,
		.suggest_verb = up_suggest,
		.finish = up_finish,
		.vprint = up_vprint,
	};
	char *list[] = { "help", NULL }, *one[] = { "help", "frob", NULL },
	     *typo[] = { "help", "frb", NULL };

	(void)state;
	f->ctx.con = &up;
	assert_int_equal(cmd_help(&f->ctx, 1, list), HS_CMD_OK);
	assert_int_equal(cmd_help(&f->ctx, 2, one), HS_CMD_OK);
	assert_int_equal(cmd_help(&f->ctx, 2, typo), HS_CMD_FAIL);
	hs_cmd_finish(&f->ctx, HS_CMD_FAIL);
	assert_int_equal(up_finished, HS_CMD_FAIL);
	hs_async_print(&f->ctx, "alert %d", 7);
	fake_flush(f);
	assert_non_null(strstr(f->out, "frob <N>"));
	assert_non_null(strstr(f->out, "usage: frob <N>\n"));
	assert_null(strstr(f->out, "traces"));
	assert_non_null(strstr(f->out, "above: alert 7"));
	assert_string_equal(f->err, "error: no verb 'frb': did you mean 'frob'?\n");
	f->ctx.con = NULL;
	fake_free(f);
}

/* ---- what may come next: completion, '?', sub-verbs, did-you-mean -------------------- */

/* the candidates for LINE, joined by spaces */
static const char *cands(const char *line)
{
	static char buf[2048];
	struct hs_cands c;

	hs_complete(NULL, line, &c);
	buf[0] = '\0';
	for (int i = 0; i < c.n; i++) {
		strcat(buf, i ? " " : "");
		strcat(buf, c.v[i]);
	}
	if (!c.n && c.hint) {
		strcat(buf, "<");
		strcat(buf, c.hint);
		strcat(buf, ">");
	}
	hs_cands_free(&c);
	return buf;
}

static void test_complete(void **state)
{
	(void)state;
	assert_string_equal(cands("tra"), "traces traceroute");
	assert_string_equal(cands("traces outcome "), "delivered dropped looped unknown");
	assert_string_equal(cands("traces outcome d"), "delivered dropped");
	assert_string_equal(cands("traces limit "), "<N>");
	/* keywords already given are not offered again */
	assert_string_equal(cands("traces limit 5 "), "show flow switch outcome since");
	assert_string_equal(cands("stats by "), "src dst sport dport proto switch flow dscp");
	assert_string_equal(cands("stats by src,d"), "src,dst src,dport src,dscp");
	assert_string_equal(cands("stats by src "), "window where file for keys");
	assert_string_equal(cands("set format "), "text json");
	assert_string_equal(cands("set history "), "default all off");
	assert_string_equal(cands("capture "), "start stop status buffer workers again --for");
	/* a sub-verb only first */
	assert_string_equal(cands("snapshot diff 1 2 "), "--threshold");
	assert_string_equal(cands("export pcap x.pcap records "), "all traces packets");
	/* a keyword's values after it only, never where the verb refuses them */
	assert_string_equal(cands("traceroute h8 "),
			    "count interval --report proto from max-ttl timeout --json");
	assert_string_equal(cands("traceroute h8 proto "), "tcp udp");
	assert_null(strstr(cands("probe tcp > h8:80 "), "delivered"));
	assert_string_equal(cands("probe tcp > h8:80 --expect "), "delivered lost");
	assert_string_equal(cands("flows "), "limit");
	/* every sub-verb of history is one (not only those before 'show ID'),
	 * and 'since' is load's alone */
	assert_string_equal(cands("history traces "), "limit");
	assert_string_equal(cands("history load "), "since");
	assert_string_equal(cands("history lo"), "load");
	assert_string_equal(cands("help sl"), "sleep");
	assert_string_equal(cands("show tra"), "traces traceroute");
	/* switches need a topology; without one, say so */
	assert_non_null(strstr(cands("ecmp "), "no topology"));
	assert_string_equal(cands("nosuchverb "), "");
	/* trace names come from the traces in memory; without any, say what is expected */
	assert_string_equal(cands("traces show "), "<ID (N, or SESSION:N)>");
	assert_string_equal(cands("history show "), "<ID (SESSION:N, see 'history traces')>");
}

/* every sub-verb a spec lists is a keyword (completion and dispatch share it) */
static void test_subverbs(void **state)
{
	const char *subs[32];
	int m;

	(void)state;
	for (unsigned i = 0; i < hs_ncmds; i++) {
		const struct hs_cmd *c = &hs_cmds[i];
		const char *a = c->args[0] == '[' ? c->args + 1 : c->args;
		size_t len = strcspn(a, " ]");
		int bars = 0;
		for (size_t k = 0; k < len; k++)
			bars += a[k] == '|';
		int n = hs_cmd_subverbs(c, subs, 32);
		assert_int_equal(n, bars ? bars + 1 : 0);
	}
	const struct hs_cmd *cap = hs_cmd_lookup("capture", NULL);
	assert_string_equal(hs_cmd_subverb(cap, "stat", &m), "status");
	assert_string_equal(hs_cmd_subverb(cap, "star", &m), "start");
	assert_null(hs_cmd_subverb(cap, "st", &m));
	assert_int_equal(m, 3);
	assert_null(hs_cmd_subverb(cap, "restart", &m));
	assert_int_equal(m, 0);
}

static void test_suggest(void **state)
{
	const char *w[] = { "start", "stop", "status" };

	(void)state;
	assert_string_equal(hs_suggest_verb("tarces"), "traces");
	assert_string_equal(hs_suggest_verb("histroy"), "history");
	assert_string_equal(hs_suggest_verb("snapshots"), "snapshot");
	assert_string_equal(hs_suggest_verb("wacth"), "watch");
	assert_null(hs_suggest_verb("xyzzy"));
	assert_null(hs_suggest_verb("a"));
	assert_string_equal(hs_suggest("satus", w, 3), "status");
	assert_null(hs_suggest("frobnicate", w, 3));
}

static void test_run_line_habits(void **state)
{
	struct fake *f = fake_new();

	(void)state;
	assert_int_equal(hs_run_line(&f->ctx, "tarces"), HS_CMD_FAIL);
	assert_int_equal(hs_run_line(&f->ctx, "show help sleep"), HS_CMD_OK);
	assert_int_equal(hs_run_line(&f->ctx, "sh help quit"), HS_CMD_OK);
	assert_int_equal(hs_run_line(&f->ctx, "help trace"), HS_CMD_FAIL);
	assert_int_equal(hs_run_line(&f->ctx, "set form js"), HS_CMD_FAIL);	/* a value is no sub-verb */
	assert_int_equal(hs_run_line(&f->ctx, "set form json"), HS_CMD_OK);
	assert_true(f->ctx.set.json);
	assert_int_equal(hs_run_line(&f->ctx, "set f text"), HS_CMD_OK);
	assert_false(f->ctx.set.json);
	assert_int_equal(hs_run_line(&f->ctx, "topo lo"), HS_CMD_FAIL);	/* too few */
	assert_int_equal(hs_run_line(&f->ctx, "topo frob x"), HS_CMD_FAIL);
	assert_int_equal(hs_run_line(&f->ctx, "capture st"), HS_CMD_FAIL);
	assert_int_equal(hs_run_line(&f->ctx, "set format ?"), HS_CMD_OK);
	assert_int_equal(hs_run_line(&f->ctx, "cap?"), HS_CMD_OK);
	fake_flush(f);
	assert_non_null(strstr(f->err, "error: unknown verb 'tarces': did you mean 'traces'?\n"));
	assert_non_null(strstr(f->out, "usage: sleep <DURATION>\n"));
	assert_non_null(strstr(f->out, "usage: quit\n"));
	assert_non_null(strstr(f->err, "error: 'trace' is ambiguous: traces, traceroute\n"));
	assert_non_null(strstr(f->err, "error: unknown topo subcommand 'frob' (load, show)\n"));
	assert_non_null(strstr(f->err, "error: capture: 'st' is ambiguous: start, stop, status\n"));
	assert_non_null(strstr(f->out, "set [format|db|analyzer|trace-timeout|history|view|pager|tz|retention] [VALUE...]\n  text  json\n"));
	assert_non_null(strstr(f->out, "  capture      start, stop or show the packet source\n"));
	fake_free(f);
}

static void test_set_verb(void **state)
{
	struct fake *f = fake_new();

	(void)state;
	assert_int_equal(hs_run_line(&f->ctx, "set trace-timeout 250ms"), HS_CMD_OK);
	assert_true(f->ctx.set.trace_timeout_ns == 250000000ULL);
	assert_int_equal(hs_run_line(&f->ctx, "set trace-timeout soon"), HS_CMD_FAIL);
	assert_int_equal(hs_run_line(&f->ctx, "set trace-timeout 0"), HS_CMD_FAIL);
	assert_true(f->ctx.set.trace_timeout_ns == 250000000ULL);
	assert_int_equal(hs_run_line(&f->ctx, "set history all"), HS_CMD_OK);
	assert_int_equal(f->ctx.set.policy, HS_POLICY_ALL);
	assert_int_equal(hs_run_line(&f->ctx, "set history some"), HS_CMD_FAIL);
	assert_int_equal(f->ctx.set.policy, HS_POLICY_ALL);
	assert_int_equal(hs_run_line(&f->ctx, "set db /tmp/x.db"), HS_CMD_OK);
	assert_string_equal(f->ctx.set.db_path, "/tmp/x.db");
	assert_int_equal(hs_run_line(&f->ctx, "set colour red"), HS_CMD_FAIL);
	assert_int_equal(hs_run_line(&f->ctx, "set format yaml"), HS_CMD_FAIL);
	assert_int_equal(hs_run_line(&f->ctx, "set pager maybe"), HS_CMD_FAIL);
	assert_int_equal(hs_run_line(&f->ctx, "set pager off"), HS_CMD_OK);
	assert_true(f->ctx.set.no_pager);
	assert_int_equal(hs_run_line(&f->ctx, "set pager on"), HS_CMD_OK);
	assert_false(f->ctx.set.no_pager);
	assert_int_equal(hs_run_line(&f->ctx, "set format json"), HS_CMD_OK);
	assert_true(f->ctx.set.json && f->ctx.out->json);
	assert_int_equal(hs_run_line(&f->ctx, "set"), HS_CMD_OK);
	fake_flush(f);
	assert_non_null(strstr(f->out, "{\"format\":\"json\",\"db\":\"/tmp/x.db\","));
	assert_non_null(strstr(f->out, "\"trace_timeout_ns\":250000000,\"history\":\"all\",\"view\":\"auto\",\"pager\":true,\"tz\":\"utc\"}\n"));
	assert_non_null(strstr(f->err, "unknown setting 'colour'"));
	assert_non_null(strstr(f->err, "bad format 'yaml'"));
	/* the time zone of text times: utc or local, nothing else */
	assert_int_equal(hs_run_line(&f->ctx, "set tz mars"), HS_CMD_FAIL);
	assert_false(hs_tz_local());
	assert_int_equal(hs_run_line(&f->ctx, "set tz local"), HS_CMD_OK);
	assert_true(hs_tz_local());
	assert_int_equal(hs_run_line(&f->ctx, "set tz utc"), HS_CMD_OK);
	assert_false(hs_tz_local());
	fake_flush(f);
	assert_non_null(strstr(f->err, "bad time zone 'mars' (utc or local)"));
	/* where the verbs' traces come from */
	assert_int_equal(hs_run_line(&f->ctx, "set view fabric"), HS_CMD_OK);
	assert_int_equal(f->ctx.set.view, HS_VIEW_FABRIC);
	assert_int_equal(hs_run_line(&f->ctx, "set view everything"), HS_CMD_FAIL);
	assert_int_equal(f->ctx.set.view, HS_VIEW_FABRIC);
	assert_int_equal(hs_run_line(&f->ctx, "set view local"), HS_CMD_OK);
	assert_int_equal(f->ctx.set.view, HS_VIEW_LOCAL);
	fake_flush(f);
	assert_non_null(strstr(f->err, "bad view 'everything' (auto, fabric or local)"));
	fake_free(f);
}

/* ---- runbooks ---------------------------------------------------------------------- */

static void test_runbook_stops(void **state)
{
	char *path = write_file("# a runbook\n\nhelp quit\nnosuchverb\nhelp quit\n");
	struct fake *f = fake_new();
	char want[256];

	(void)state;
	assert_int_equal(hs_runner_add_file(&f->ctx, path), 0);
	hs_runner_start(&f->ctx);
	fake_flush(f);
	snprintf(want, sizeof(want), "%s:4: error: unknown verb 'nosuchverb'", path);
	assert_non_null(strstr(f->err, want));
	assert_int_equal(count(f->out, "usage: quit"), 1);	/* line 5 did not run */
	assert_int_equal(f->ctx.exit_status, 1);
	assert_true(f->ctx.quit);
	fake_free(f);

	f = fake_new();
	f->ctx.keep_going = true;
	assert_int_equal(hs_runner_add_file(&f->ctx, path), 0);
	hs_runner_start(&f->ctx);
	fake_flush(f);
	assert_non_null(strstr(f->err, want));
	assert_int_equal(count(f->out, "usage: quit"), 2);
	assert_int_equal(f->ctx.exit_status, 1);
	fake_free(f);
	unlink(path);
	free(path);
}

static void test_runbook_cmds(void **state)
{
	struct fake *f = fake_new();

	(void)state;
	hs_runner_add_cmds(&f->ctx, "help quit; ; help nosuchverb; help quit");
	hs_runner_add_cmds(&f->ctx, "help quit");	/* a later -c does not run either */
	hs_runner_start(&f->ctx);
	fake_flush(f);
	assert_non_null(strstr(f->err, "-c:3: error: no verb 'nosuchverb'"));
	assert_int_equal(count(f->out, "usage: quit"), 1);
	assert_int_equal(f->ctx.exit_status, 1);
	fake_free(f);

	f = fake_new();
	assert_int_equal(hs_runner_add_file(&f->ctx, "/nonexistent/x.rb"), -1);
	fake_flush(f);
	assert_non_null(strstr(f->err, "cannot open '/nonexistent/x.rb': No such file or directory"));
	fake_free(f);
}

/* what may write the history names real verbs and sub-verbs; only lines
 * that begin with one of them (or lines not read yet) may store */
static void test_may_store(void **state)
{
	static const struct {
		const char *cmds;
		bool stores;
	} cases[] = {
		{ "sql 'select 1'; history sessions; snapshot list; snapshot show 1", false },
		{ "decode x.pcap; traces; help capture; capture status", false },
		{ "set db x.db; capture start x.pcap", true },
		{ "snapshot take", true },
		{ "sn take", true },		/* a verb's prefix is the verb */
		{ "probe tcp > 10.0.0.1:80", true },
		{ "source rb.hs", true },
		{ "'capture start' x", false },	/* one quoted word is no verb */
		{ "", false },
	};
	struct fake *f;

	(void)state;
	for (unsigned i = 0; i < hs_ncmd_stores; i++) {
		const struct hs_cmd *c = hs_cmd_lookup(hs_cmd_stores[i].verb, NULL);
		assert_non_null(c);
		assert_string_equal(c->name, hs_cmd_stores[i].verb);
		bool known = !hs_cmd_stores[i].sub;
		for (const char *const *w = c->words; w && *w && !known; w++)
			known = strcmp(*w, hs_cmd_stores[i].sub) == 0;
		assert_true(known);
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		f = fake_new();
		hs_runner_add_cmds(&f->ctx, cases[i].cmds);
		if (hs_runner_may_store(&f->ctx) != cases[i].stores)
			fail_msg("'%s' may store: %d", cases[i].cmds, !cases[i].stores);
		fake_free(f);
	}
	/* a runbook's lines are not read before they run: it may store */
	char *path = write_file("sql 'select 1'\n");
	f = fake_new();
	assert_int_equal(hs_runner_add_file(&f->ctx, path), 0);
	assert_true(hs_runner_may_store(&f->ctx));
	fake_free(f);
	unlink(path);
	free(path);
}

static void test_runbook_nested(void **state)
{
	char *inner = write_file("help quit\nhelp 'unterminated\nhelp quit\n");
	char outer_text[512], want[256];
	char *outer;
	struct fake *f = fake_new();

	(void)state;
	snprintf(outer_text, sizeof(outer_text), "help sleep\nsource %s\nhelp sleep\n", inner);
	outer = write_file(outer_text);
	assert_int_equal(hs_runner_add_file(&f->ctx, outer), 0);
	hs_runner_start(&f->ctx);
	fake_flush(f);
	snprintf(want, sizeof(want), "%s:2: error: unterminated quote", inner);
	assert_non_null(strstr(f->err, want));
	assert_int_equal(count(f->out, "usage: quit"), 1);
	assert_int_equal(count(f->out, "usage: sleep"), 1);	/* outer line 3 did not run */
	assert_int_equal(f->ctx.exit_status, 1);
	fake_free(f);

	/* a runbook that sources itself stops at the depth limit */
	unlink(outer);
	free(outer);
	snprintf(outer_text, sizeof(outer_text), "source %s\n", inner);
	{
		FILE *fp = fopen(inner, "w");
		assert_non_null(fp);
		fputs(outer_text, fp);
		fclose(fp);
	}
	f = fake_new();
	assert_int_equal(hs_runner_add_file(&f->ctx, inner), 0);
	hs_runner_start(&f->ctx);
	fake_flush(f);
	assert_non_null(strstr(f->err, "nest deeper than"));
	assert_int_equal(count(f->err, "error:"), 1);
	assert_int_equal(f->ctx.exit_status, 1);
	fake_free(f);
	unlink(inner);
	free(inner);
}

/* a pending verb holds the next line until it finishes */
static void test_runbook_pending(void **state)
{
	struct fake *f = fake_new();
	uint64_t t0 = hs_mono_ns();

	(void)state;
	hs_runner_add_cmds(&f->ctx, "sleep 50ms; help quit; sleep nonsense; help quit");
	hs_runner_start(&f->ctx);
	fake_flush(f);
	assert_int_equal(f->outlen, 0);		/* help waits for sleep */
	assert_false(f->ctx.quit);
	uv_run(&f->loop, UV_RUN_DEFAULT);
	fake_flush(f);
	assert_true(hs_mono_ns() - t0 >= 50000000ULL);
	assert_int_equal(count(f->out, "usage: quit"), 1);
	assert_non_null(strstr(f->err, "-c:3: error: sleep: bad duration 'nonsense'"));
	assert_int_equal(f->ctx.exit_status, 1);
	assert_true(f->ctx.quit);
	fake_free(f);
}

/* an interactive source prints errors and carries on */
static void test_input_interactive(void **state)
{
	struct fake *f = fake_new();
	const char *text = "nosuchverb\nhelp quit\nquit\nhelp quit\n";

	(void)state;
	hs_runner_add_input(&f->ctx, "stdin", true);
	hs_runner_start(&f->ctx);
	hs_runner_feed(&f->ctx, text, 5);	/* half a line: nothing runs */
	fake_flush(f);
	assert_int_equal(f->errlen, 0);
	hs_runner_feed(&f->ctx, text + 5, strlen(text) - 5);
	fake_flush(f);
	assert_non_null(strstr(f->err, "error: unknown verb 'nosuchverb'"));
	assert_null(strstr(f->err, "stdin:"));
	assert_int_equal(count(f->out, "usage: quit"), 1);	/* none after quit */
	assert_int_equal(f->ctx.exit_status, 0);
	assert_true(f->ctx.quit);
	fake_free(f);

	/* a runbook sourced at the prompt fails with its line, the console goes on */
	char *rb = write_file("help quit\nbogus\nhelp quit\n");
	char line[256], want[256];
	f = fake_new();
	hs_runner_add_input(&f->ctx, "stdin", true);
	hs_runner_start(&f->ctx);
	snprintf(line, sizeof(line), "source %s\nhelp sleep\n", rb);
	hs_runner_feed(&f->ctx, line, strlen(line));
	fake_flush(f);
	snprintf(want, sizeof(want), "%s:2: error: unknown verb 'bogus'", rb);
	assert_non_null(strstr(f->err, want));
	assert_int_equal(count(f->out, "usage: quit"), 1);
	assert_int_equal(count(f->out, "usage: sleep"), 1);
	assert_int_equal(f->ctx.exit_status, 0);
	assert_false(f->ctx.quit);
	hs_runner_feed_eof(&f->ctx);
	assert_true(f->ctx.quit);
	fake_free(f);
	unlink(rb);
	free(rb);
}

/* ---- the output writer ------------------------------------------------------------- */

static void test_out_json(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	struct hs_out o;

	(void)state;
	out_init(&o, fp, fp, true);
	out_obj_open(&o, NULL);
	out_str(&o, "s", "%s", "a\"b\\c\n\t\x01/é");
	out_uint(&o, "u", "%llu", 18446744073709551615ULL);
	out_int(&o, "i", "%lld", -5);
	out_double(&o, "d", "%g", 0.5);
	out_double(&o, "nan", "%g", 0.0 / 0.0);
	out_double(&o, "tenth", "%g", 0.1);		/* shortest that reads back */
	out_double(&o, "third", "%g", 1.0 / 3.0);
	out_double(&o, "big", "%g", 2e300);
	out_bool(&o, "b", "%s", true);
	out_null(&o, "n");
	out_raw(&o, "ts", "%s", "1.000000001");
	out_dur(&o, "lat_ns", "%s", -1500);		/* integer nanoseconds, signed */
	out_share(&o, "loss", "%.1f%%", 0.25);		/* the fraction, not percent */
	out_str(&o, NULL, "text only", "x");	/* no key: not in JSON */
	out_text(&o, "text only\n");
	out_arr_open(&o, "hops");
	out_obj_open(&o, NULL);
	out_str(&o, "sw", NULL, "leaf1");
	out_obj_close(&o);
	out_uint(&o, NULL, NULL, 7);
	out_arr_close(&o);
	out_obj_open(&o, "empty");
	out_obj_close(&o);
	out_nl(&o);
	out_obj_close(&o);
	out_obj_open(&o, NULL);
	out_obj_close(&o);
	fclose(fp);
	assert_string_equal(buf,
		"{\"s\":\"a\\\"b\\\\c\\n\\t\\u0001/é\",\"u\":18446744073709551615,\"i\":-5,"
		"\"d\":0.5,\"nan\":null,\"tenth\":0.1,\"third\":0.3333333333333333,"
		"\"big\":2e+300,\"b\":true,\"n\":null,\"ts\":1.000000001,\"lat_ns\":-1500,"
		"\"loss\":0.25,"
		"\"hops\":[{\"sw\":\"leaf1\"},7],\"empty\":{}}\n{}\n");
	free(buf);
}

static void test_out_text(void **state)
{
	char *buf = NULL, *ebuf = NULL;
	size_t len = 0, elen = 0;
	FILE *fp = open_memstream(&buf, &len);
	FILE *ep = open_memstream(&ebuf, &elen);
	struct hs_out o;

	(void)state;
	out_init(&o, fp, ep, false);
	out_obj_open(&o, NULL);
	out_str(&o, "s", "name %s ", "x");
	out_uint(&o, "u", "%llu ", 42);
	out_str(&o, "json_only", NULL, "hidden");
	out_bool(&o, "up", "UP ", true);
	out_bool(&o, "down", "DOWN ", false);
	out_double(&o, "d", "%.1f", 2.25);
	out_dur(&o, "lat_ns", " %s", -1500);
	out_dur(&o, "json_only_ns", NULL, 7);
	out_share(&o, "loss", " %.1f%%", 0.25);
	out_obj_close(&o);
	out_nl(&o);
	assert_int_equal(out_err(&o, "cannot open '%s': %s", "x.pcap", "gone"), -1);
	snprintf(o.where, sizeof(o.where), "rb:3: ");
	out_warn(&o, "careful");
	fclose(fp);
	fclose(ep);
	assert_string_equal(buf, "name x 42 UP 2.2 -1.5us 25.0%\n");
	assert_string_equal(ebuf, "error: cannot open 'x.pcap': gone\nrb:3: warning: careful\n");
	free(buf);
	free(ebuf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split_plain),
		cmocka_unit_test(test_split_quotes),
		cmocka_unit_test(test_split_comments),
		cmocka_unit_test(test_split_errors),
		cmocka_unit_test(test_split_commands),
		cmocka_unit_test(test_lookup),
		cmocka_unit_test(test_table_sane),
		cmocka_unit_test(test_arity_specs),
		cmocka_unit_test(test_arity_every_verb),
		cmocka_unit_test(test_run_line_errors),
		cmocka_unit_test(test_run_line_json),
		cmocka_unit_test(test_verb_reaches_up),
		cmocka_unit_test(test_complete),
		cmocka_unit_test(test_subverbs),
		cmocka_unit_test(test_suggest),
		cmocka_unit_test(test_run_line_habits),
		cmocka_unit_test(test_set_verb),
		cmocka_unit_test(test_runbook_stops),
		cmocka_unit_test(test_runbook_cmds),
		cmocka_unit_test(test_may_store),
		cmocka_unit_test(test_runbook_nested),
		cmocka_unit_test(test_runbook_pending),
		cmocka_unit_test(test_input_interactive),
		cmocka_unit_test(test_out_json),
		cmocka_unit_test(test_out_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
