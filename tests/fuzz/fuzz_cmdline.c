/* fuzz_cmdline.c - the text of -c and runbook lines: commands, words,
 * verb lookup, argument counts and the usage text of the verb found; the
 * commands together hold no more than the text (memory linear in it);
 * what an error echoes of a word is clipped; every word written as a JSON
 * string is valid UTF-8 */
#include <stdio.h>

#include "cmd.h"
#include "console.h"
#include "out.h"
#include "runner.h"
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

/* a well-formed UTF-8 character at p (n bytes left): its length, 0 if not */
static size_t utf8_char(const unsigned char *p, size_t n)
{
	uint32_t cp;
	size_t len;

	if (p[0] < 0x80)
		return 1;
	if ((p[0] & 0xe0) == 0xc0)
		len = 2, cp = p[0] & 0x1f;
	else if ((p[0] & 0xf0) == 0xe0)
		len = 3, cp = p[0] & 0x0f;
	else if ((p[0] & 0xf8) == 0xf0)
		len = 4, cp = p[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* a word as out.c writes it for --json: UTF-8 throughout, quoted */
static void check_json_string(const char *w)
{
	char *buf = NULL;
	size_t len = 0, k;
	FILE *fp = open_memstream(&buf, &len);

	if (!fp)
		abort();
	out_json_string(fp, w);
	if (fclose(fp) != 0 || len < 2 || buf[0] != '"' || buf[len - 1] != '"')
		abort();
	for (size_t i = 0; i < len; i += k)
		if ((k = utf8_char((const unsigned char *)buf + i, len - i)) == 0 ||
		    (unsigned char)buf[i] < 0x20)
			abort();
	free(buf);
}

/* an echo of a word in an error: a prefix of it, at most max bytes and
 * "...", cut at most 3 bytes short (before a character's continuation) */
static void check_clip(const char *w)
{
	char buf[80];
	const char *c = hs_clip(w, 64, buf, sizeof(buf));
	size_t n = strlen(c), wl = strlen(w);

	if (wl <= 64) {
		if (strcmp(c, w) != 0)
			abort();
		return;
	}
	if (n < 61 + 3 || n > 64 + 3 || strcmp(c + n - 3, "...") != 0 ||
	    strncmp(c, w, n - 3) != 0)
		abort();
	/* cut short only over continuation bytes */
	for (size_t i = n - 3 + 1; i <= 64; i++)
		if (((unsigned char)w[i] & 0xc0) != 0x80)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_str(data, size);
	char **cmds = NULL;
	int n = hs_split_commands(text, &cmds);
	size_t total = 0;

	for (int i = 0; i < n; i++)
		total += strlen(cmds[i]);
	/* each separator is a command's end, and no text is copied twice */
	if (n < 1 || total + (size_t)n - 1 > strlen(text))
		abort();

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
				check_json_string(argv[k]);
				check_clip(argv[k]);
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
