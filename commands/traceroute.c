/* traceroute.c - traceroute: the path of one flow, from packets that reuse
 * its 5-tuple with TTL 1, 2, ... (007's path discovery); or, the mtr way,
 * rounds of them toward a host with per-hop loss and latency */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "console.h"
#include "probe.h"

int cmd_traceroute(struct hs_ctx *ctx, int argc, char **argv)
{
	struct hs_probe_spec s;
	char err[256], words[1024];
	size_t used = 0;

	if (hs_traceroute_parse(argc - 1, argv + 1, ctx->topo, &s, err, sizeof(err)) < 0)
		return out_err(&ctx->out, "%s", err);
	/* until Ctrl-C only where a person can press it and watch the table */
	if (s.table && s.rounds == 0 && (s.report || s.json || ctx->out.json || !ctx->interactive ||
					 !isatty(fileno(ctx->out.fp)))) {
		s.rounds = HS_TRACEROUTE_ROUNDS;
		s.count = s.rounds * s.max_ttl;
	}
	words[0] = '\0';
	for (int i = 0; i < argc && used + 1 < sizeof(words); i++) {
		int n = snprintf(words + used, sizeof(words) - used, "%s%s", i ? " " : "", argv[i]);
		if (n < 0)
			break;
		used += (size_t)n;
	}
	return hs_probe_run(ctx, &s, words);
}
