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

/* one verb: its line of the list (width: the synopsis column), or with
 * width -1 its usage, summary and page */
static void print_verb(struct hs_ctx *ctx, const struct hs_cmd *c, int width)
{
	struct hs_out *o = ctx->out;
	char syn[512], fmt[32], page[64];

	snprintf(syn, sizeof(syn), "%s%s%s", c->name, *c->args ? " " : "", c->args);
	out_obj_open(o, NULL);
	out_str(o, "name", NULL, c->name);
	if (width < 0) {
		out_str(o, "synopsis", "usage: %s\n", syn);
	} else if ((int)strlen(syn) > width) {
		/* too long for the column: the summary goes below it */
		out_str(o, "synopsis", "  %s\n", syn);
		out_text(o, "  %*s  ", width, "");
	} else {
		snprintf(fmt, sizeof(fmt), "  %%-%ds  ", width);
		out_str(o, "synopsis", fmt, syn);
	}
	out_str(o, "args", NULL, c->args);
	out_str(o, "summary", "%s\n", c->summary);
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
		if (!(c->flags & HS_CMDF_ALIAS) && w > width && w <= 40)
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
