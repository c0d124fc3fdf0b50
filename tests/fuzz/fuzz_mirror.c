/* fuzz_mirror.c - mirror-rule specs through hs_mirror_parse, and the
 * driver's argv built from every accepted rule */
#include <stdio.h>

#include "console.h"
#include "mirror.h"
#include "runner.h"
#include "fuzz.h"

static struct hs_topo *topo;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	topo = fuzz_topo();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[HS_MAX_WORDS + 1], *dargv[HS_MIRROR_ARGV_MAX + 1];
	struct hs_mirror_rule r;
	char err[512], idbuf[32], sessbuf[16], match[512];
	int col;

	if (size < 1)
		return 0;
	char *text = fuzz_str(data + 1, size - 1);
	int argc = hs_split_words(text, argv, HS_MAX_WORDS, &col);
	if (argc < 0)
		goto out;
	argv[argc] = NULL;
	memset(&r, 0, sizeof(r));
	err[0] = '\0';
	if (hs_mirror_parse(argc, argv, (data[0] & 1) ? NULL : topo, &r, err, sizeof(err)) < 0) {
		if (!err[0])
			abort();
		goto out;
	}
	if (r.nmatch < 0 || r.nmatch > HS_MIRROR_WORDS || r.session > HS_MIRROR_SESSION_MAX)
		abort();
	hs_mirror_match_str(&r, match, sizeof(match));
	int n = hs_mirror_argv(&r, "driver", (data[0] & 2) ? "/state" : NULL, idbuf,
			       sizeof(idbuf), sessbuf, sizeof(sessbuf), dargv);
	if (n < 1 || n > HS_MIRROR_ARGV_MAX || dargv[n] != NULL)
		abort();
	for (int i = 0; i < n; i++)
		if (!dargv[i])
			abort();
out:
	free(text);
	return 0;
}
