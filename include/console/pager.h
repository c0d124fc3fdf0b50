/* pager.h - long interactive output through a pager, as git does
 *
 * At a terminal, what a listing verb (HS_CMDF_PAGE in the command table:
 * done before it returns) prints is held back while it runs; when it is
 * longer than the screen it goes through $PAGER (default 'less -FRX'),
 * otherwise straight to the terminal. Never for a runbook, -c, a pipe, a
 * watch pane, or while a live capture runs (the pager would stop the loop
 * that reads it).
 */
#ifndef HS_PAGER_H
#define HS_PAGER_H

#include <stdbool.h>
#include <stdio.h>

struct hs_ctx;
struct hs_cmd;

struct hs_pager {
	FILE *saved;		/* the output it replaced, NULL when not paging */
	FILE *mem;
	char *buf;
	size_t len;
};

/* hold back what the verb about to run prints, when that is wanted */
void hs_pager_begin(struct hs_ctx *ctx, const struct hs_cmd *c, struct hs_pager *p);
/* show it: through the pager when it is longer than the screen and the
 * verb finished (pending false), else as it is */
void hs_pager_end(struct hs_ctx *ctx, struct hs_pager *p, bool pending);

#endif
