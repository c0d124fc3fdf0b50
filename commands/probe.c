/* probe.c - probe: craft a packet, inject it anywhere in the fabric and
 * follow its mirrored copies hop by hop */
#include <string.h>

#include "cmd.h"
#include "console.h"
#include "probe.h"

/* the spec as typed, for the history */
static void join_words(int argc, char **argv, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (int i = 0; i < argc && used + 1 < len; i++) {
		int n = snprintf(buf + used, len - used, "%s%s", i ? " " : "", argv[i]);
		if (n < 0)
			break;
		used += (size_t)n;
	}
}

int cmd_probe(struct hs_ctx *ctx, int argc, char **argv)
{
	struct hs_probe_spec s;
	char err[256], words[1024];

	if (argc < 2)
		return out_err(&ctx->out, "probe needs a destination "
			       "(probe [tcp|udp|icmp] [SRC[:PORT]] > DST[:PORT] ..., or probe link A B)");
	if (hs_probe_parse(argc - 1, argv + 1, ctx->topo, &s, err, sizeof(err)) < 0)
		return out_err(&ctx->out, "%s", err);
	join_words(argc, argv, words, sizeof(words));
	return hs_probe_run(ctx, &s, words);
}
