/* cmd.h - the command table
 *
 * One line per verb in commands/table.c drives dispatch, 'help', TAB
 * completion, argument-count checks and the man-page lint. Each verb lives
 * in commands/<verb>.c and is documented in man/hopscope-<verb>.1.
 *
 * The argument spec is the synopsis shown by 'help': <x> is required, [x]
 * optional, "..." repeats; a first word a|b|c lists sub-verbs. The minimum
 * and maximum argument counts are derived from it.
 */
#ifndef HS_CMD_H
#define HS_CMD_H

struct hs_ctx;

/* what a verb returns */
#define HS_CMD_OK	0
#define HS_CMD_FAIL	(-1)
#define HS_CMD_PENDING	1	/* finishes later through hs_cmd_finish() */

typedef int (*hs_cmd_fn)(struct hs_ctx *ctx, int argc, char **argv);

/* flags */
#define HS_CMDF_ALIAS	0x01	/* not listed by help, no man page of its own */
#define HS_CMDF_PAGE	0x02	/* a listing, done before it returns: paged at a terminal (pager.h) */

struct hs_cmd {
	const char *name;
	hs_cmd_fn fn;
	const char *args;	/* argument spec, e.g. "start|stop|status [SOURCE] [--for DURATION]" */
	const char *summary;	/* one line, lowercase, no full stop */
	const char *const *words;	/* completion candidates for arguments, NULL-ended */
	unsigned flags;
};

extern const struct hs_cmd hs_cmds[];
extern const unsigned hs_ncmds;

/* exact name or unambiguous prefix; NULL with *ambiguous set when several
 * match (cmdline.c, as the next) */
const struct hs_cmd *hs_cmd_lookup(const char *word, int *ambiguous);
/* derived from args: min and max (-1 = no limit) argument counts */
void hs_cmd_arity(const struct hs_cmd *c, int *min, int *max);

/* what completes the word after a keyword of a verb (or its first argument,
 * keyword NULL): one line each in commands/table.c, beside the verbs */
enum hs_val_kind {
	HS_VAL_WORDS,		/* one of words */
	HS_VAL_LIST,		/* a comma-separated list of words */
	HS_VAL_SWITCH,		/* a switch of the topology */
	HS_VAL_SWITCHES,	/* a comma-separated list of switches */
	HS_VAL_VERB,		/* a verb */
	HS_VAL_FILE,		/* a file name */
	HS_VAL_TRACE,		/* a trace in memory (N, or SESSION:N) */
	HS_VAL_STORED_TRACE,	/* a trace of the history (SESSION:N) */
};

struct hs_cmd_value {
	const char *verb;	/* NULL: any verb */
	const char *keyword;	/* NULL: the verb's first argument */
	enum hs_val_kind kind;
	const char *const *words;	/* HS_VAL_WORDS, HS_VAL_LIST */
};

extern const struct hs_cmd_value hs_cmd_values[];
extern const unsigned hs_ncmd_values;

/* what may write the history (a verb, or a verb's sub-verb): root makes a
 * history before it drops its rights only for lines these begin; one line
 * each in commands/table.c */
struct hs_cmd_store {
	const char *verb;
	const char *sub;	/* NULL: any use of the verb */
};

extern const struct hs_cmd_store hs_cmd_stores[];
extern const unsigned hs_ncmd_stores;

#define HS_DECLARE_CMD(v) int cmd_##v(struct hs_ctx *ctx, int argc, char **argv)

HS_DECLARE_CMD(help);
HS_DECLARE_CMD(quit);
HS_DECLARE_CMD(set);
HS_DECLARE_CMD(source);
HS_DECLARE_CMD(sleep);
HS_DECLARE_CMD(capture);
HS_DECLARE_CMD(filter);
HS_DECLARE_CMD(decode);
HS_DECLARE_CMD(traces);
HS_DECLARE_CMD(flows);
HS_DECLARE_CMD(topo);
HS_DECLARE_CMD(history);
HS_DECLARE_CMD(sql);
HS_DECLARE_CMD(probe);
HS_DECLARE_CMD(traceroute);
HS_DECLARE_CMD(watch);
HS_DECLARE_CMD(mirror);
HS_DECLARE_CMD(drops);
HS_DECLARE_CMD(loops);
HS_DECLARE_CMD(latency);
HS_DECLARE_CMD(ecmp);
HS_DECLARE_CMD(blame);
HS_DECLARE_CMD(control);
HS_DECLARE_CMD(stats);
HS_DECLARE_CMD(export);
HS_DECLARE_CMD(rates);
HS_DECLARE_CMD(alert);
HS_DECLARE_CMD(snapshot);

#endif
