/* cmdline.c - a command line's words, and its verb in the command table
 *
 * Blanks separate words, '...' and "..." quote, '#' begins a comment; -c
 * text splits into commands at ';'. A verb is found by its name or an
 * unambiguous prefix, and its argument counts are read from its spec
 * (cmd.h). Below the runner (runbook.c) and completion (complete.c), which
 * both read lines this way; no verb calls it (a verb reaches the table
 * through ctx->con, reply.h).
 */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "cmdline.h"
#include "hs.h"

/* ---- words ---------------------------------------------------------------- */

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

int hs_split_words(char *buf, char **argv, int max, int *errcol)
{
	char *r = buf, *w = buf;
	int argc = 0;

	*errcol = 0;
	for (;;) {
		while (blank(*r))
			r++;
		if (*r == '\0' || *r == '#')
			break;
		if (argc >= max) {
			*errcol = (int)(r - buf) + 1;
			return -1;
		}
		argv[argc++] = w;
		/* one word: runs of plain and quoted text until a blank */
		while (*r && !blank(*r)) {
			if (*r == '\'' || *r == '"') {
				char q = *r;
				char *open = r++;
				while (*r && *r != q)
					*w++ = *r++;
				if (*r != q) {
					*errcol = (int)(open - buf) + 1;
					return -1;
				}
				r++;
			} else {
				*w++ = *r++;
			}
		}
		/* the terminator may overwrite the blank just read, never text ahead */
		if (*r)
			r++;
		*w++ = '\0';
	}
	return argc;
}

int hs_split_commands(const char *s, char ***out)
{
	size_t n = 1, len = strlen(s);
	char quote = 0;
	bool comment = false, word_start = true;

	for (size_t i = 0; i < len; i++)
		if (s[i] == ';' || s[i] == '\n')
			n++;
	char **v = hs_xcalloc(n, sizeof(*v));
	size_t start = 0, cn = 0;

	/* each command is copied at its own length: memory stays linear in
	 * the text however many commands it holds */
	for (size_t i = 0; i <= len; i++) {
		char c = s[i];
		if (c == '\0' || (!quote && (c == '\n' || (c == ';' && !comment)))) {
			v[cn] = hs_xcalloc(1, i - start + 1);
			memcpy(v[cn++], s + start, i - start);
			if (c == '\0')
				break;
			start = i + 1;
			comment = false;
			word_start = true;
			continue;
		}
		if (comment)
			continue;
		if (quote) {
			if (c == quote)
				quote = 0;
		} else if (c == '\'' || c == '"') {
			quote = c;
		} else if (c == '#' && word_start) {
			comment = true;
		}
		word_start = blank(c);
	}
	*out = v;
	return (int)cn;
}

/* ---- the command table ------------------------------------------------------ */

const struct hs_cmd *hs_cmd_lookup(const char *word, int *ambiguous)
{
	const struct hs_cmd *found = NULL;
	size_t n = strlen(word);
	int matches = 0;

	if (ambiguous)
		*ambiguous = 0;
	if (n == 0)
		return NULL;
	for (unsigned i = 0; i < hs_ncmds; i++)
		if (strcmp(hs_cmds[i].name, word) == 0)
			return &hs_cmds[i];
	for (unsigned i = 0; i < hs_ncmds; i++) {
		const struct hs_cmd *c = &hs_cmds[i];
		if (strncmp(c->name, word, n) != 0)
			continue;
		/* an alias and the verb it names are one match */
		if (found && found->fn == c->fn) {
			if (found->flags & HS_CMDF_ALIAS)
				found = c;
			continue;
		}
		matches++;
		found = c;
	}
	if (matches > 1) {
		if (ambiguous)
			*ambiguous = matches;
		return NULL;
	}
	return found;
}

/* words inside one spec group, and whether one of them repeats */
static int group_words(const char *s, size_t len, bool *rep)
{
	int n = 0;
	bool in = false;

	for (size_t i = 0; i < len; i++) {
		if (blank(s[i])) {
			in = false;
		} else if (!in) {
			in = true;
			n++;
		}
		if (i + 2 < len && s[i] == '.' && s[i + 1] == '.' && s[i + 2] == '.')
			*rep = true;
	}
	return n;
}

void hs_cmd_arity(const struct hs_cmd *c, int *min, int *max)
{
	const char *s = c->args ? c->args : "";
	int lo = 0, hi = 0;
	bool unlimited = false;

	while (*s) {
		if (blank(*s)) {
			s++;
			continue;
		}
		if (*s == '[' || *s == '<') {
			char close = *s == '[' ? ']' : '>';
			const char *e = strchr(s + 1, close);
			size_t len = e ? (size_t)(e - s - 1) : strlen(s + 1);
			bool rep = false;
			int n = group_words(s + 1, len, &rep);
			if (*s == '<')
				lo += n;
			hi += n;
			unlimited |= rep;
			s = e ? e + 1 : s + 1 + len;
		} else {
			/* a literal word or a choice of sub-verbs: required */
			size_t len = strcspn(s, " \t");
			bool rep = false;
			group_words(s, len, &rep);
			lo++;
			hi++;
			unlimited |= rep;
			s += len;
		}
	}
	*min = lo;
	*max = unlimited ? -1 : hi;
}

const char *hs_cmd_usage(const struct hs_cmd *c, char *buf, size_t len)
{
	snprintf(buf, len, "usage: %s%s%s", c->name, c->args && *c->args ? " " : "",
		 c->args ? c->args : "");
	return buf;
}
