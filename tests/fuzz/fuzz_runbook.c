/* fuzz_runbook.c - runbook text through the real command runner
 *
 * The input is split like the text of -c (';' and newlines) and each line
 * runs through hs_run_line() on a console context with no terminal, output
 * to /dev/null, the sample's topology and an in-memory history. Verbs that
 * reach outside the process (files, interfaces, raw sockets, drivers, the
 * terminal, timers) are skipped: their parsers have targets of their own.
 */
#include <stdio.h>

#include "cmd.h"
#include "console.h"
#include "engine.h"
#include "runner.h"
#include "fuzz.h"

static struct hs_ctx ctx;
static struct hs_out out;
static uv_loop_t loop;

static const char *const skipped[] = {
	"source", "sleep", "capture", "decode", "probe", "traceroute", "watch", "mirror",
	"sql",		/* a recursive query may run for as long as it likes */
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	FILE *sink = fopen("/dev/null", "w");
	char err[256];

	(void)argc;
	(void)argv;
	if (!sink || uv_loop_init(&loop) != 0)
		abort();
	ctx.loop = &loop;
	ctx.out = &out;
	out_init(ctx.out, sink, sink, false);
	ctx.set.db_path = hs_xstrdup(":memory:");
	ctx.topo = fuzz_topo();
	if (!ctx.topo)
		abort();
	hs_runner_init(&ctx);
	if (hs_engine_init(&ctx, err, sizeof(err)) < 0)
		abort();
	return 0;
}

/* whether a line may run here */
static bool allowed(const char *line)
{
	char *buf = hs_xstrdup(line);
	char *argv[HS_MAX_WORDS + 1];
	int col, argc = hs_split_words(buf, argv, HS_MAX_WORDS, &col);
	bool ok = true;

	if (argc > 0) {
		const struct hs_cmd *c = hs_cmd_lookup(argv[0], NULL);
		for (size_t i = 0; c && i < HS_ARRAY_SIZE(skipped); i++)
			if (strcmp(c->name, skipped[i]) == 0)
				ok = false;
		/* no files: 'set db' and 'topo load' stay out */
		if (c && argc > 1 && strcmp(c->name, "set") == 0 && strcmp(argv[1], "db") == 0)
			ok = false;
		if (c && argc > 1 && strcmp(c->name, "topo") == 0 && strcmp(argv[1], "show") != 0)
			ok = false;
	}
	free(buf);
	return ok;
}

/* each input starts from the same settings and no filters */
static void reset(void)
{
	int id;
	const char *expr;
	uint64_t matches;

	while (hs_filter_at(ctx.filters, 0, &id, &expr, &matches))
		if (hs_filter_del(ctx.filters, id) < 0)
			abort();
	ctx.set.json = false;
	ctx.out->json = false;
	ctx.set.policy = HS_POLICY_DEFAULT;
	ctx.set.trace_timeout_ns = HS_NS_PER_SEC;
	ctx.quit = false;
	ctx.exit_status = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_str(data, size);
	char **cmds = NULL;
	int n = hs_split_commands(text, &cmds);

	reset();
	for (int i = 0; i < n; i++) {
		if (allowed(cmds[i])) {
			int rc = hs_run_line(&ctx, cmds[i]);
			if (rc != HS_CMD_OK && rc != HS_CMD_FAIL)
				abort();	/* nothing here may be left pending */
			if (ctx.out->depth != 0)
				abort();	/* a JSON object left open */
		}
		free(cmds[i]);
	}
	free(cmds);
	free(text);
	return 0;
}
