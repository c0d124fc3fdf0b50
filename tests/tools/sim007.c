/* sim007.c - 007's evaluation: lossy links in a Clos fabric, found by blame
 *
 * A three-tier Clos fabric (pods of ToRs and aggregation switches, a core
 * layer joined to every aggregation switch) is built as a topology in
 * memory. Each trial picks failed links with drop rates in a range, gives
 * every other link a rare background drop rate, and sends random TCP flows
 * between ToRs over ECMP paths (a random choice per flow at every hop).
 * Each flow's SYN is traced along its path; when any of its packets is
 * dropped (per link, 1 - (1 - p)^packets) the dropped packet's trace ends
 * before the link that lost it and its retransmission is traced again, all
 * the way. The traces go through the same hs_an_blame() as the console's
 * 'blame' verb.
 *
 * Per scenario over its trials:
 *   accuracy   failed links among the k links with the most votes (k = the
 *              number of failed links), over k
 *   precision  failed links among the links reported above the noise, over
 *              the links reported
 *   recall     failed links reported, over the failed links
 *
 * Usage: sim007 [--full] [--seed N] [--trials N] [--flows N] [--noise P]
 *               [--k K] [--min-share S]  (the blame noise threshold)
 * The default table is the reduced one the tests run; --full is the bench's.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"

#define T0 (1800000000ULL * HS_NS_PER_SEC)
#define MAX_PATH 8
#define MAX_FAILED 16

/* the fabric */
static int P = 4, TORS = 8, AGGS = 4, CORES = 16;
static struct hs_topo *topo;
static int ntor;
static int *tor_sw;		/* ToR number -> switch index */
static int *nh_tab;		/* [sw][dst tor] -> up to MAX_NH next hops */
static int *nh_cnt;
#define MAX_NH 32

/* xorshift64*: reproducible from the seed */
static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static double urand(void)
{
	return (double)(rnd() >> 11) / (double)(1ULL << 53);
}

static int irand(int n)
{
	return (int)(rnd() % (uint64_t)n);
}

/* (1 - p)^n: the chance that none of n packets is lost */
static double pow1m(double p, int n)
{
	return pow(1.0 - p, n);
}

static void build_fabric(void)
{
	size_t cap = 1 << 20, len = 0;
	char *txt = hs_xcalloc(cap, 1);
	char err[256];

#define OUT(...) (len += (size_t)snprintf(txt + len, cap - len, __VA_ARGS__))
	for (int p = 0; p < P; p++) {
		for (int t = 0; t < TORS; t++)
			OUT("switch tor%d.%d role tor mirror 10.250.%d.%d\n", p, t, p, t);
		for (int a = 0; a < AGGS; a++)
			OUT("switch agg%d.%d role agg mirror 10.251.%d.%d\n", p, a, p, a);
	}
	for (int c = 0; c < CORES; c++)
		OUT("switch core%d role core mirror 10.252.0.%d\n", c, c);
	for (int p = 0; p < P; p++) {
		for (int t = 0; t < TORS; t++)
			for (int a = 0; a < AGGS; a++)
				OUT("link tor%d.%d up%d agg%d.%d down%d\n", p, t, a, p, a, t);
		for (int a = 0; a < AGGS; a++)
			for (int c = 0; c < CORES; c++)
				OUT("link agg%d.%d up%d core%d down%d.%d\n", p, a, c, c, p, a);
		for (int t = 0; t < TORS; t++)
			OUT("subnet tor%d.%d 10.%d.%d.0/24\n", p, t, p, t);
	}
#undef OUT
	topo = hs_topo_parse(txt, "clos", err, sizeof(err));
	free(txt);
	if (!topo) {
		fprintf(stderr, "sim007: %s\n", err);
		exit(2);
	}
	ntor = P * TORS;
	tor_sw = hs_xcalloc((size_t)ntor, sizeof(int));
	for (int p = 0; p < P; p++)
		for (int t = 0; t < TORS; t++) {
			char name[32];
			snprintf(name, sizeof(name), "tor%d.%d", p, t);
			tor_sw[p * TORS + t] = hs_topo_switch_by_name(topo, name);
		}
	nh_tab = hs_xcalloc((size_t)topo->nsw * (size_t)ntor * MAX_NH, sizeof(int));
	nh_cnt = hs_xcalloc((size_t)topo->nsw * (size_t)ntor, sizeof(int));
	for (int s = 0; s < topo->nsw; s++)
		for (int d = 0; d < ntor; d++) {
			size_t k = (size_t)s * (size_t)ntor + (size_t)d;
			nh_cnt[k] = hs_topo_next_hops(topo, s, tor_sw[d], nh_tab + k * MAX_NH, MAX_NH);
		}
}

static int link_of(int a, int b)
{
	return hs_topo_link(topo, a, b);
}

struct scenario {
	const char *name;
	int nfailed;		/* failed links */
	double lo, hi;		/* drop rate range of failed links */
	int trials;
};

struct result {
	double acc, prec, rec;
	int prec_n;		/* trials that reported something */
};

static void add_hop(struct hs_trace *t, int sw, uint64_t ts)
{
	struct hs_hop *h = &t->hops[t->nhops];
	h->sw = sw;
	h->addr = topo->sw[sw].mirror;
	h->ts_ns = ts + t->nhops * 5000ULL;
	h->hw_ns = h->ts_ns;
	h->ttl = (uint8_t)(64 - t->nhops);
	t->nhops++;
}

static struct hs_blame_cfg blame_cfg = { .epoch_ns = 30 * HS_NS_PER_SEC, .min_share = -1,
					 .k = -1 };
static struct hs_trace *tr;	/* room for three traces per flow, reused */
static const struct hs_trace **ptr;

static void run_trial(int nfailed, double lo, double hi, int nflows, double noise,
		      struct result *r)
{
	int nl = topo->nlinks;
	double *rate = hs_xcalloc((size_t)nl, sizeof(double));
	bool *failed = hs_xcalloc((size_t)nl, sizeof(bool));
	size_t nt = 0;

	for (int l = 0; l < nl; l++)
		rate[l] = noise;
	for (int f = 0; f < nfailed;) {
		int l = irand(nl);
		if (failed[l])
			continue;
		failed[l] = true;
		rate[l] = lo + (hi - lo) * urand();
		f++;
	}

	for (int i = 0; i < nflows; i++) {
		int s = irand(ntor), d = irand(ntor - 1);
		if (d >= s)
			d++;
		int path[MAX_PATH], links[MAX_PATH], np = 0;
		path[np++] = tor_sw[s];
		while (path[np - 1] != tor_sw[d] && np < MAX_PATH) {
			size_t k = (size_t)path[np - 1] * (size_t)ntor + (size_t)d;
			path[np] = nh_tab[k * MAX_NH + (size_t)irand(nh_cnt[k])];
			links[np - 1] = link_of(path[np - 1], path[np]);
			np++;
		}
		/* 10 to 500 packets; the first link that loses one */
		int pkts = 10 + irand(491), drop_at = -1;
		for (int h = 0; h + 1 < np && drop_at < 0; h++) {
			double p_any = 1.0 - pow1m(rate[links[h]], pkts);
			if (urand() < p_any)
				drop_at = h;
		}
		struct hs_flowkey key = { .sport = (uint16_t)(1024 + irand(60000)), .dport = 443,
					  .proto = 6 };
		key.src.af = key.dst.af = 4;
		key.src.a[0] = key.dst.a[0] = 10;
		key.src.a[1] = (uint8_t)(s / TORS);
		key.src.a[2] = (uint8_t)(s % TORS);
		key.src.a[3] = (uint8_t)(10 + irand(200));
		key.dst.a[1] = (uint8_t)(d / TORS);
		key.dst.a[2] = (uint8_t)(d % TORS);
		key.dst.a[3] = (uint8_t)(10 + irand(200));
		uint64_t ts = T0 + (uint64_t)(urand() * 20.0 * HS_NS_PER_SEC);
		uint32_t seq = (uint32_t)rnd();

		/* the SYN, all the way */
		struct hs_trace *t = &tr[nt++];
		memset(t, 0, sizeof(*t));
		t->id = nt;
		t->key = key;
		t->seq = seq;
		t->tcp_flags = 0x02;
		t->len = 60;
		for (int h = 0; h < np; h++)
			add_hop(t, path[h], ts);
		hs_trace_classify(t, topo);
		if (drop_at < 0)
			continue;
		/* a data packet lost after path[drop_at], and its retransmission */
		for (int k = 0; k < 2; k++) {
			t = &tr[nt++];
			memset(t, 0, sizeof(*t));
			t->id = nt;
			t->key = key;
			t->seq = seq + 1 + 1000u * (uint32_t)irand(50);
			t->tcp_flags = 0x18;
			t->len = 1040;
			if (k == 1)
				t->seq = tr[nt - 2].seq;
			int upto = k == 0 ? drop_at + 1 : np;
			for (int h = 0; h < upto; h++)
				add_hop(t, path[h], ts + (uint64_t)(k + 1) * 200000000ULL);
			hs_trace_classify(t, topo);
		}
	}
	for (size_t i = 0; i < nt; i++)
		ptr[i] = &tr[i];

	struct hs_blame b;
	hs_an_blame(ptr, nt, topo, &blame_cfg, &b);

	int top_hits = 0, reported = 0, rep_hits = 0;
	if (b.nepochs == 1) {
		const struct hs_blame_epoch *ep = &b.epochs[0];
		for (size_t i = 0; i < ep->nlinks; i++) {
			const struct hs_blame_link *l = &b.links[ep->link_off + i];
			bool bad = failed[link_of(l->a, l->b)];
			if ((int)i < nfailed && bad)
				top_hits++;
			if (l->reported) {
				reported++;
				rep_hits += bad;
			}
		}
	}
	r->acc += (double)top_hits / nfailed;
	r->rec += (double)rep_hits / nfailed;
	if (reported) {
		r->prec += (double)rep_hits / reported;
		r->prec_n++;
	}
	hs_blame_free(&b);
	free(failed);
	free(rate);
}

static const struct scenario reduced[] = {
	{ "1x0.05%", 1, 0.0005, 0.0005, 25 },
	{ "1x0.1%", 1, 0.001, 0.001, 25 },
	{ "1x0.5%", 1, 0.005, 0.005, 25 },
	{ "1x1%", 1, 0.01, 0.01, 25 },
	{ "1x0.05-1%", 1, 0.0005, 0.01, 25 },
	{ "3x0.05-1%", 3, 0.0005, 0.01, 15 },
	{ "5x0.05-1%", 5, 0.0005, 0.01, 15 },
	{ "7x0.05-1%", 7, 0.0005, 0.01, 15 },
};

static const struct scenario full[] = {
	{ "1x0.05%", 1, 0.0005, 0.0005, 50 },
	{ "1x0.1%", 1, 0.001, 0.001, 50 },
	{ "1x0.5%", 1, 0.005, 0.005, 50 },
	{ "1x1%", 1, 0.01, 0.01, 50 },
	{ "1x0.05-1%", 1, 0.0005, 0.01, 50 },
	{ "2x0.05-1%", 2, 0.0005, 0.01, 30 },
	{ "3x0.05-1%", 3, 0.0005, 0.01, 30 },
	{ "4x0.05-1%", 4, 0.0005, 0.01, 30 },
	{ "5x0.05-1%", 5, 0.0005, 0.01, 30 },
	{ "6x0.05-1%", 6, 0.0005, 0.01, 30 },
	{ "7x0.05-1%", 7, 0.0005, 0.01, 30 },
	{ "8x0.05-1%", 8, 0.0005, 0.01, 30 },
	{ "9x0.05-1%", 9, 0.0005, 0.01, 30 },
	{ "10x0.05-1%", 10, 0.0005, 0.01, 30 },
};

static void usage(void)
{
	fprintf(stderr, "usage: sim007 [--full] [--seed N] [--trials N] [--flows N] "
		"[--noise P]\n"
		"              [--k K] [--min-share S]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	bool big = false;
	uint64_t seed = 7, trials = 0, flows = 20000;
	double noise = 2e-6;

	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(argv[i], "--full") == 0) {
			big = true;
		} else if (strcmp(argv[i], "--seed") == 0 && v) {
			if (hs_parse_uint(v, UINT64_MAX, &seed) < 0)
				usage();
			i++;
		} else if (strcmp(argv[i], "--trials") == 0 && v) {
			if (hs_parse_uint(v, 100000, &trials) < 0 || trials == 0)
				usage();
			i++;
		} else if (strcmp(argv[i], "--flows") == 0 && v) {
			if (hs_parse_uint(v, 10000000, &flows) < 0 || flows == 0)
				usage();
			i++;
		} else if (strcmp(argv[i], "--k") == 0 && v) {
			char *end;
			blame_cfg.k = strtod(v, &end);
			if (*end || blame_cfg.k < 0)
				usage();
			i++;
		} else if (strcmp(argv[i], "--min-share") == 0 && v) {
			char *end;
			blame_cfg.min_share = strtod(v, &end);
			if (*end || blame_cfg.min_share < 0 || blame_cfg.min_share > 1)
				usage();
			i++;
		} else if (strcmp(argv[i], "--noise") == 0 && v) {
			char *end;
			noise = strtod(v, &end);
			if (*end || noise < 0 || noise >= 1)
				usage();
			i++;
		} else {
			usage();
		}
	}
	rng_state = seed ? seed : 1;
	build_fabric();
	tr = hs_xcalloc((size_t)flows * 3, sizeof(*tr));
	ptr = hs_xcalloc((size_t)flows * 3, sizeof(*ptr));
	printf("# Clos: %d pods of %d ToRs and %d aggs, %d cores; %d switches, %d links\n",
	       P, TORS, AGGS, CORES, topo->nsw, topo->nlinks);
	printf("# %" PRIu64 " flows per trial, 10-500 packets each, background drop rate %g, "
	       "seed %" PRIu64 "\n", flows, noise, seed);
	printf("%-12s %6s %6s %9s %10s %7s\n", "scenario", "failed", "trials", "accuracy",
	       "precision", "recall");

	const struct scenario *sc = big ? full : reduced;
	size_t nsc = big ? HS_ARRAY_SIZE(full) : HS_ARRAY_SIZE(reduced);
	for (size_t i = 0; i < nsc; i++) {
		struct result r = { 0 };
		int n = trials ? (int)trials : sc[i].trials;
		for (int k = 0; k < n; k++)
			run_trial(sc[i].nfailed, sc[i].lo, sc[i].hi, (int)flows, noise, &r);
		char prec[16];
		if (r.prec_n)
			snprintf(prec, sizeof(prec), "%.1f%%", 100.0 * r.prec / r.prec_n);
		else
			snprintf(prec, sizeof(prec), "-");
		printf("%-12s %6d %6d %8.1f%% %10s %6.1f%%\n", sc[i].name, sc[i].nfailed, n,
		       100.0 * r.acc / n, prec, 100.0 * r.rec / n);
		fflush(stdout);
	}
	free(ptr);
	free(tr);
	free(nh_tab);
	free(nh_cnt);
	free(tor_sw);
	hs_topo_free(topo);
	return 0;
}
