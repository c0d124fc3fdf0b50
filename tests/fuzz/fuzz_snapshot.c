/* fuzz_snapshot.c - a driver's snapshot answer through hs_snap_parse, and
 * every accepted snapshot diffed against a later copy of itself */
#include <math.h>
#include <stdio.h>

#include "snapshot.h"
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
	char *text = fuzz_str(data, size);
	char err[512];
	struct hs_snap a, b;
	struct hs_snap_diff d;

	if (hs_snap_parse(text, &a, err, sizeof(err)) < 0) {
		/* refused with one line, and nothing kept */
		if (!*err || strchr(err, '\n') || a.ports || a.nports)
			abort();
		free(text);
		return 0;
	}
	if (!a.nports || a.nports > HS_SNAP_MAX_PORTS || !a.nswitches || a.nswitches > a.nports)
		abort();
	uint64_t lo = UINT64_MAX, hi = 0;
	for (size_t i = 0; i < a.nports; i++) {
		if (!hs_name_ok(a.ports[i].sw) || !hs_ifname_ok(a.ports[i].port))
			abort();
		lo = a.ports[i].read_ns < lo ? a.ports[i].read_ns : lo;
		hi = a.ports[i].read_ns > hi ? a.ports[i].read_ns : hi;
	}
	if (a.spread_ns != hi - lo)
		abort();
	/* b: a second later, every counter doubled (or reset to 1 when 0) */
	b = a;
	b.ports = malloc(a.nports * sizeof(*a.ports));
	if (!b.ports)
		abort();
	memcpy(b.ports, a.ports, a.nports * sizeof(*a.ports));
	b.target_ns += HS_NS_PER_SEC;
	for (size_t i = 0; i < b.nports; i++) {
		b.ports[i].read_ns += HS_NS_PER_SEC;
		for (int k = 0; k < HS_SNAP__NCOUNTERS; k++)
			b.ports[i].c[k] = b.ports[i].c[k] ? b.ports[i].c[k] * 2 : 1;
	}
	if (hs_snap_diff(&a, &b, topo, 0.25, &d, err, sizeof(err)) < 0 || d.nports != a.nports)
		abort();
	for (size_t i = 0; i < d.ngroups; i++) {
		const struct hs_snap_group *g = &d.groups[i];
		double sum = 0;

		if (g->n < 2 || g->n > HS_SNAP_MAX_NH || !(g->imbalance >= 0) || isnan(g->imbalance))
			abort();
		for (int j = 0; j < g->n; j++)
			sum += g->m[j].share;
		if (g->tx_bytes && fabs(sum - 1) > 1e-6)
			abort();
	}
	hs_snap_diff_free(&d);
	if (hs_snap_diff(&b, &a, topo, 0.25, &d, err, sizeof(err)) != -1)
		abort();
	hs_snap_free(&b);
	hs_snap_free(&a);
	free(text);
	return 0;
}
