/* fuzz_alert.c - alert conditions through hs_acond_parse, and every
 * accepted one added, measured and evaluated on a small rates table
 *
 * The first byte chooses whether the fabric is known (link conditions need
 * it); the rest is the condition as typed after 'alert add'.
 */
#include <math.h>
#include <stdio.h>

#include "alert.h"
#include "fuzz.h"

static struct hs_topo *topo;
static struct hs_rates *rates;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	topo = fuzz_topo();
	rates = hs_rates_new(8);
	if (!topo || !rates)
		abort();
	hs_rates_set_topo(rates, topo);
	/* one flow over leaf1 > spine1 > leaf2 at 8 Mbit/s, one drop */
	struct hs_flowkey k = { .sport = 1, .dport = 5001, .proto = 6 };
	int32_t path[2] = { 0, 5 };
	hs_addr_parse("10.1.1.11", &k.src);
	hs_addr_parse("10.1.2.11", &k.dst);
	for (uint32_t i = 0; i <= 20; i++)
		hs_rates_sample(rates, &k, i * 10000, 1000000000ULL + i * 10000000ULL, path, 2);
	hs_rates_drop(rates, 1100000000ULL);
	hs_rates_compute(rates, rates->now, HS_RATE_DEFAULT_WINDOW, NULL, NULL, NULL);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct hs_alerts as;
	struct hs_acond c;
	char err[256], val[64];

	if (size < 1)
		return 0;
	char *text = fuzz_str(data + 1, size - 1);
	const struct hs_topo *t = (data[0] & 1) ? NULL : topo;
	memset(err, 0, sizeof(err));
	if (hs_acond_parse(text, t, &c, err, sizeof(err)) < 0) {
		/* a refusal names the place */
		if (!strstr(err, "column") || strlen(err) >= sizeof(err))
			abort();
		free(text);
		return 0;
	}
	if (c.kind < HS_AK_LINK || c.kind > HS_AK_RETX || c.metric < HS_AM_BPS ||
	    c.metric > HS_AM_PER_SEC || !(c.threshold >= 0) || isinf(c.threshold))
		abort();
	if (c.kind == HS_AK_LINK && (!t || c.link < 0 || c.link >= topo->nlinks))
		abort();
	double v;
	if (hs_acond_measure(&c, rates, rates->now, HS_RATE_DEFAULT_WINDOW, &v)) {
		if (!(v >= 0) || isinf(v))
			abort();
		hs_acond_holds(&c, v);
		if (strlen(hs_acond_fmt(&c, v, val, sizeof(val))) >= sizeof(val))
			abort();
	}
	/* the same text through the set, evaluated twice: at most one firing */
	hs_alerts_init(&as);
	if (hs_alerts_add(&as, text, t, err, sizeof(err)) != 1 || as.n != 1)
		abort();
	hs_alerts_eval(&as, rates, rates->now, HS_RATE_DEFAULT_WINDOW, NULL, NULL);
	hs_alerts_eval(&as, rates, rates->now, HS_RATE_DEFAULT_WINDOW, NULL, NULL);
	if (as.a[0].fired > 1 || strlen(as.a[0].text) >= sizeof(as.a[0].text))
		abort();
	if (hs_alerts_del(&as, 1) != 0 || as.n != 0)
		abort();
	free(text);
	return 0;
}
