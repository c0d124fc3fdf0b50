/* probecmd.h - what the probe and traceroute verbs share (src/console/probecmd.c):
 * the grammar of their words, and running the engine's probe (probe.h) for
 * a verb, its results printed on the client's output
 */
#ifndef HS_PROBECMD_H
#define HS_PROBECMD_H

#include <stdio.h>
#include "ctx.h"
#include "out.h"
#include "probe.h"
#include "watch.h"

/* Parse the words after 'probe' (or 'traceroute' with hs_traceroute_parse).
 * topo may be NULL. Returns 0, or -1 with one message naming the bad word in
 * err ("probe: unknown switch 'leaf9'"). */
int hs_probe_parse(int argc, char **argv, const struct hs_topo *topo,
		   struct hs_probe_spec *s, char *err, size_t errlen);
int hs_traceroute_parse(int argc, char **argv, const struct hs_topo *topo,
			struct hs_probe_spec *s, char *err, size_t errlen);

/* a verb's run, as its renderers see it (the callbacks' arg) */
struct hs_probe_view {
	struct hs_ctx *ctx;
	int drawn;		/* traceroute: lines of the live table on the terminal */
	struct hs_wblock block;	/* traceroute: the live table in watch's events pane */
};

/* run s for the verb with the renderers of cb (its error, done and arg are
 * filled in): HS_CMD_PENDING, or HS_CMD_FAIL with the error printed */
int hs_probe_verb_run(struct hs_ctx *ctx, struct hs_probe_spec *s, const char *words,
		      struct hs_probe_cbs cb);
/* the run renders JSON (--json before or after the verb) */
bool hs_probe_json(const struct hs_probe_view *v, const struct hs_probe_run *r);
/* an hs_out writing to memory, then what it wrote printed above the prompt,
 * or in a runbook on the verb's output */
FILE *hs_probe_mem_open(char **buf, size_t *len, struct hs_out *o, bool json);
void hs_probe_mem_print(struct hs_ctx *ctx, FILE *fp, char **bufp, size_t *lenp);

#endif
