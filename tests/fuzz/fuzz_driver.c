/* fuzz_driver.c - what the console reads from the fabric's drivers, JSON
 * documents (answer.h): the input is up to three drivers' answers, split at
 * form feeds, read as answers to add and del, as 'mirror list' answers into
 * one listing and as snapshot answers merged into one snapshot. A bad
 * answer is refused with one line, never a crash. */
#include <stdio.h>

#include "mirror.h"
#include "snapshot.h"
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

static void check_err(const char *err)
{
	if (!*err || strchr(err, '\n'))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_str(data, size), *part[3] = { text, NULL, NULL };
	struct hs_mirror_listing l = { 0 };
	struct hs_snap s = { 0 }, more;
	char err[512];
	int n = 1;

	for (char *p = text; n < 3 && (p = strchr(p, '\f')); n++) {
		*p++ = '\0';
		part[n] = p;
	}
	for (int i = 0; i < n; i++) {
		uint64_t id = 0;

		for (int del = 0; del < 2; del++) {
			if (hs_mirror_answer_id(part[i], del, &id, err, sizeof(err)) < 0)
				check_err(err);
			else if (id == 0 || id > UINT32_MAX)
				abort();
		}
	}
	for (int i = 0; i < n; i++) {
		if (hs_mirror_listing_add(&l, part[i], err, sizeof(err)) < 0) {
			check_err(err);
			break;
		}
	}
	for (size_t i = 0; i < l.nrules; i++) {
		if (!l.rules[i].id || l.rules[i].session > HS_MIRROR_SESSION_MAX ||
		    !l.rules[i].match[0] || !l.rules[i].switches[0])
			abort();
		for (size_t k = 0; k < i; k++)
			if (l.rules[k].id == l.rules[i].id)
				abort();	/* one row per rule */
	}
	for (size_t i = 0; i < l.ndrift; i++)
		if (!hs_name_ok(l.drift[i].sw) || !l.drift[i].what[0])
			abort();
	hs_mirror_listing_free(&l);

	if (hs_snap_parse(part[0], &s, err, sizeof(err)) < 0) {
		check_err(err);
	} else {
		for (int i = 1; i < n; i++) {
			if (hs_snap_parse(part[i], &more, err, sizeof(err)) < 0) {
				check_err(err);
				break;
			}
			if (hs_snap_merge(&s, &more, err, sizeof(err)) < 0) {
				check_err(err);
				break;
			}
		}
		if (!s.nports || !s.nswitches || s.nswitches > s.nports)
			abort();
		hs_snap_free(&s);
	}
	free(text);
	return 0;
}
