/* complete.h - what may come next on a command line: TAB completion, '?',
 * sub-verb prefixes and did-you-mean, all read from the one command table
 * (cmd.h) and its argument specs.
 */
#ifndef HS_COMPLETE_H
#define HS_COMPLETE_H

#include <stdbool.h>
#include <stddef.h>

struct hs_ctx;
struct hs_cmd;

#define HS_MAX_CANDS 256

struct hs_cands {
	char *v[HS_MAX_CANDS];
	int n;
	bool no_space;		/* a directory: keep typing the path */
	const char *hint;	/* what is expected when there is no word to offer ("N", "FILE") */
};

/* the candidates for the last, partly typed word of LINE (a line that ends
 * in a blank completes a new word); ctx may be NULL (no topology) */
void hs_complete(struct hs_ctx *ctx, const char *line, struct hs_cands *c);
void hs_cands_free(struct hs_cands *c);
/* NAME as a candidate (once) */
void hs_cands_add(struct hs_cands *c, const char *name);
/* the trace names this process has that WORD begins, newest first, at most
 * a screenful: the history's (stored), by SESSION:N, or those in memory, by
 * the name 'traces' gives them (by the number alone when WORD has no ':') */
void hs_complete_traces(struct hs_ctx *ctx, bool stored, const char *word, struct hs_cands *c);

/* '?': print what may come next after LINE (without its '?'): the verbs
 * with their summaries, or the verb's synopsis and the words it takes there */
struct hs_out;
void hs_describe(struct hs_ctx *ctx, struct hs_out *o, const char *line);

/* the closest of N words to WORD by edit distance, when close enough to be a
 * likely typo; NULL otherwise */
const char *hs_suggest(const char *word, const char *const *words, size_t n);
/* the same over the verbs of the command table */
const char *hs_suggest_verb(const char *word);

/* the sub-verbs of a verb whose spec starts with a choice (a|b|c or [a|b|c]):
 * the number written to OUT (pointers into c->words), 0 when it has none */
int hs_cmd_subverbs(const struct hs_cmd *c, const char **out, int max);
/* WORD as a sub-verb of C: the full sub-verb for an exact name or a unique
 * prefix; NULL with *nmatch set to the number of sub-verbs it prefixes */
const char *hs_cmd_subverb(const struct hs_cmd *c, const char *word, int *nmatch);

/* the words that WORD prefixes ("": all), joined by ", ", for a message */
void hs_join_prefixed(const char *word, const char *const *words, size_t n, char *buf,
		      size_t len);
/* the same over the verbs, aliases left out */
void hs_verbs_prefixed(const char *word, char *buf, size_t len);

#endif
