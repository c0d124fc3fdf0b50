/* help.c - list the verbs, or show one verb's synopsis: the table is
 * above the verbs, and help reads it through ctx->con (reply.h) */
#include <string.h>

#include "cmd.h"
#include "console.h"

/* the other names of c's verb: an array, empty when it has none (the
 * text shows none) */
static void aliases(struct hs_ctx *ctx, const struct hs_cmd *c)
{
	const struct hs_con *up = ctx->con;
	struct hs_out *o = ctx->out;

	out_arr_open(o, "aliases");
	for (unsigned i = 0; i < *up->ncmds; i++) {
		const struct hs_cmd *a = &up->cmds[i];
		if ((a->flags & HS_CMDF_ALIAS) && a->fn == c->fn)
			out_str(o, NULL, NULL, a->name);
	}
	out_arr_close(o);
}

/* the text's width: a line of help is never longer; and the widest
 * synopsis the list gives a column (a longer one has a line of its own,
 * its summary below it), leaving the summaries 44 columns */
#define HELP_COLS 80
#define HELP_SYN_COLS 32

/* s in text from column col, its words wrapped at HELP_COLS, each line
 * after the first begun at column indent; then a newline */
static void out_wrapped(struct hs_out *o, const char *s, int col, int indent)
{
	for (bool first = true; *(s += strspn(s, " ")); first = false) {
		int n = (int)strcspn(s, " ");
		if (!first && col + 1 + n > HELP_COLS) {
			out_text(o, "\n%*s", indent, "");
			col = indent;
		} else if (!first) {
			out_text(o, " ");
			col++;
		}
		out_text(o, "%.*s", n, s);
		col += n;
		s += n;
	}
	out_text(o, "\n");
}

/* one verb: its line of the list (width: the synopsis column), no line
 * of it past HELP_COLS; or with width -1 its usage, summary and page */
static void print_verb(struct hs_ctx *ctx, const struct hs_cmd *c, int width)
{
	struct hs_out *o = ctx->out;
	char syn[512], page[64];
	int sumcol = width + 4;

	snprintf(syn, sizeof(syn), "%s%s%s", c->name, *c->args ? " " : "", c->args);
	out_obj_open(o, NULL);
	out_str(o, "name", NULL, c->name);
	out_str(o, "synopsis", NULL, syn);
	if (width < 0) {
		/* one line, as errors quote it */
		out_text(o, "usage: %s\n", syn);
		sumcol = 0;
	} else if ((int)strlen(syn) > width) {
		/* too long for the column: the summary goes below it */
		out_text(o, "  ");
		out_wrapped(o, syn, 2, 6);
		out_text(o, "%*s", sumcol, "");
	} else {
		out_text(o, "  %-*s  ", width, syn);
	}
	out_str(o, "args", NULL, c->args);
	out_str(o, "summary", NULL, c->summary);
	out_wrapped(o, c->summary, sumcol, sumcol);
	if (width < 0) {
		snprintf(page, sizeof(page), "hopscope-%s(1)", c->name);
		out_str(o, "page", "see %s\n", page);
	}
	aliases(ctx, c);
	out_obj_close(o);
}

static int help_one(struct hs_ctx *ctx, const char *word)
{
	const struct hs_con *up = ctx->con;
	struct hs_out *o = ctx->out;
	int amb;
	const struct hs_cmd *c = up->lookup(word, &amb);

	if (!c) {
		const char *near = up->suggest_verb(word);
		if (amb) {
			char list[512];
			up->verbs_prefixed(word, list, sizeof(list));
			return out_err(o, "'%s' is ambiguous: %s", word, list);
		}
		if (near)
			return out_err(o, "no verb '%.64s': did you mean '%s'?", word, near);
		return out_err(o, "no verb '%.64s' (try 'help')", word);
	}
	/* help for an alias is help for the verb it names */
	if (c->flags & HS_CMDF_ALIAS)
		for (unsigned i = 0; i < *up->ncmds; i++)
			if (up->cmds[i].fn == c->fn && !(up->cmds[i].flags & HS_CMDF_ALIAS))
				c = &up->cmds[i];
	print_verb(ctx, c, -1);
	return HS_CMD_OK;
}

int cmd_help(struct hs_ctx *ctx, int argc, char **argv)
{
	const struct hs_con *up = ctx->con;
	struct hs_out *o = ctx->out;
	int width = 0;

	if (argc > 1)
		return help_one(ctx, argv[1]);
	for (unsigned i = 0; i < *up->ncmds; i++) {
		const struct hs_cmd *c = &up->cmds[i];
		int w = (int)(strlen(c->name) + 1 + strlen(c->args));
		if (!(c->flags & HS_CMDF_ALIAS) && w > width && w <= HELP_SYN_COLS)
			width = w;
	}
	out_list_open(o, "verbs");
	for (unsigned i = 0; i < *up->ncmds; i++) {
		if (!(up->cmds[i].flags & HS_CMDF_ALIAS))
			print_verb(ctx, &up->cmds[i], width);
	}
	out_list_close(o);
	out_text(o, "\n'help VERB' shows one verb; each verb has a page, hopscope-VERB(1)\n");
	return HS_CMD_OK;
}
