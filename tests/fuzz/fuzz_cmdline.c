/* fuzz_cmdline.c - the text of -c and runbook lines: commands, words,
 * verb lookup, argument counts and the usage text of the verb found */
#include <stdio.h>

#include "cmd.h"
#include "console.h"
#include "runner.h"
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_str(data, size);
	char **cmds = NULL;
	int n = hs_split_commands(text, &cmds);

	for (int i = 0; i < n; i++) {
		size_t len = strlen(cmds[i]);
		char *argv[HS_MAX_WORDS + 1];
		int col = 0, amb = 0, min, max;
		char usage[512];

		if (len > strlen(text))
			abort();
		int argc = hs_split_words(cmds[i], argv, HS_MAX_WORDS, &col);
		if (argc < 0) {
			if (col < 1 || (size_t)col > len + 1)
				abort();
		} else {
			for (int k = 0; k < argc; k++) {
				/* every word lies inside the command's own buffer */
				if (argv[k] < cmds[i] || argv[k] + strlen(argv[k]) > cmds[i] + len)
					abort();
			}
			if (argc > 0) {
				const struct hs_cmd *c = hs_cmd_lookup(argv[0], &amb);
				if (c) {
					hs_cmd_arity(c, &min, &max);
					if (min < 0 || (max >= 0 && max < min))
						abort();
					hs_cmd_usage(c, usage, sizeof(usage));
				} else if (amb == 1) {
					abort();
				}
			}
		}
		free(cmds[i]);
	}
	free(cmds);
	free(text);
	return 0;
}
