/* cmdline.h - a command line's words, and its verb in the command table
 * (cmdline.c; the table's own lookups, hs_cmd_lookup and hs_cmd_arity, are
 * declared with it in cmd.h)
 */
#ifndef HS_CMDLINE_H
#define HS_CMDLINE_H

#include <stddef.h>

struct hs_cmd;

/* split a line into words: blanks separate, '...' and "..." quote, # starts a
 * comment outside quotes. Returns argc or -1 (unterminated quote) with the
 * column in *errcol. argv points into buf (modified). */
int hs_split_words(char *buf, char **argv, int max, int *errcol);
/* split the text of -c into commands at ';' outside quotes; returns how
 * many, each a new string in *out (free each and the array) */
int hs_split_commands(const char *s, char ***out);
/* the text that follows a verb in its errors: "usage: VERB SPEC" */
const char *hs_cmd_usage(const struct hs_cmd *c, char *buf, size_t len);

#endif
