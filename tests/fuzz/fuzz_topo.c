/* fuzz_topo.c - topology files through hs_topo_parse, then the lookups
 * every consumer makes on what it accepted */
#include <stdio.h>

#include "topo.h"
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
	char err[512];
	struct hs_topo *t = hs_topo_parse(text, "fuzz.topo", err, sizeof(err));

	if (!t) {
		/* refused with "NAME:LINE:COL: what" */
		if (strncmp(err, "fuzz.topo:", 10) != 0 || strlen(err) >= sizeof(err))
			abort();
		free(text);
		return 0;
	}
	for (int i = 0; i < t->nsw; i++) {
		int hops[16];
		if (hs_topo_switch_by_name(t, t->sw[i].name) < 0)
			abort();
		hs_topo_switch_by_addr(t, &t->sw[i].mirror);
		for (int j = 0; j < t->nsw; j++) {
			int n = hs_topo_next_hops(t, i, j, hops, (int)HS_ARRAY_SIZE(hops));
			if (n < 0 || n > (int)HS_ARRAY_SIZE(hops))
				abort();
			for (int k = 0; k < n; k++)
				if (hops[k] < 0 || hops[k] >= t->nsw)
					abort();
			hs_topo_link(t, i, j);
		}
	}
	for (int i = 0; i < t->nlinks; i++)
		if (t->links[i].a < 0 || t->links[i].a >= t->nsw ||
		    t->links[i].b < 0 || t->links[i].b >= t->nsw)
			abort();
	for (int i = 0; i < t->nhosts; i++)
		if (hs_topo_leaf_for(t, &t->hosts[i].addr) < 0)
			abort();
	hs_topo_free(t);
	free(text);
	return 0;
}
