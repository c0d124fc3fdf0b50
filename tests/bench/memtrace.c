/* memtrace.c - memory of open traces and flows, through the real APIs
 *
 *   memtrace traces [-n N] [--hops H]   N open traces of H hops each
 *   memtrace flows [-n N]               N flows (one closed trace each)
 *
 * Each mode runs in its own process, because the peak resident set (VmHWM
 * in /proc/self/status) never goes down. "traces" builds a tracer whose pool
 * holds N traces (hs_tracer_new, max_open = N), feeds it H mirrored copies
 * of each of N distinct packets and checks that all N are still open; the
 * growth of the peak divided by N is the cost of one open trace, pool slot,
 * hash index and hop storage included. "flows" does the same with a flow
 * table of N flows fed N closed traces of distinct 5-tuples. The time spent
 * feeding is printed too, as a rough figure for the tracer alone.
 *
 * Output: one "name<TAB>value" line per figure.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hs.h"
#include "decode.h"
#include "tracer.h"
#include "flows.h"

static long status_kb(const char *field)
{
	FILE *fp = fopen("/proc/self/status", "r");
	char line[256];
	size_t n = strlen(field);
	long kb = -1;

	if (!fp) {
		fprintf(stderr, "memtrace: cannot open '/proc/self/status': %s\n", strerror(errno));
		exit(1);
	}
	while (fgets(line, sizeof(line), fp)) {
		if (strncmp(line, field, n) == 0 && line[n] == ':') {
			kb = strtol(line + n + 1, NULL, 10);
			break;
		}
	}
	fclose(fp);
	if (kb < 0) {
		fprintf(stderr, "memtrace: no '%s' in /proc/self/status\n", field);
		exit(1);
	}
	return kb;
}

/* distinct hosts 10.x.y.z for i < 2^24, distinct ports and ids per packet */
static void make_key(uint64_t i, struct hs_flowkey *k)
{
	memset(k, 0, sizeof(*k));
	k->src.af = k->dst.af = 4;
	k->src.a[0] = 10;
	k->src.a[1] = (uint8_t)(i >> 16);
	k->src.a[2] = (uint8_t)(i >> 8);
	k->src.a[3] = (uint8_t)i;
	k->dst.a[0] = 10;
	k->dst.a[1] = 200;
	k->dst.a[2] = (uint8_t)(i >> 10);
	k->dst.a[3] = (uint8_t)(i * 7);
	k->sport = (uint16_t)(1024 + (i % 60000));
	k->dport = 443;
	k->proto = 6;
}

static unsigned long long closed_cb_count;

static void on_close(void *arg, const struct hs_trace *t)
{
	(void)arg;
	(void)t;
	closed_cb_count++;
}

static int run_traces(size_t n, unsigned hops)
{
	struct hs_pkt p;
	struct hs_tracer_stats st;
	long before = status_kb("VmHWM");
	struct hs_tracer_cfg cfg = {
		.timeout_ns = 3600 * HS_NS_PER_SEC,	/* nothing closes while we fill */
		.max_open = n,
		.ring = 1024,
		.on_close = on_close,
	};
	struct hs_tracer *tr = hs_tracer_new(&cfg);
	uint64_t t0 = hs_mono_ns(), ts = 1700000000ULL * HS_NS_PER_SEC;

	memset(&p, 0, sizeof(p));
	p.have = HS_HAVE_MIRROR | HS_HAVE_ERSPAN | HS_HAVE_IP | HS_HAVE_PORTS | HS_HAVE_TCP |
		 HS_HAVE_IPID | HS_HAVE_HWNS;
	p.encap = HS_ENCAP_ERSPAN3;
	p.erspan_ver = 2;
	p.mirror_src.af = 4;
	p.mirror_src.a[0] = 10;
	p.mirror_src.a[1] = 255;
	p.tcp_flags = 0x10;
	p.len = 1500;
	for (size_t i = 0; i < n; i++) {
		make_key(i, &p.key);
		p.ip_id = (uint16_t)(i * 31);
		p.seq = (uint32_t)(i * 2654435761u);
		for (unsigned h = 0; h < hops; h++) {
			p.frame++;
			p.ts_ns = ts + i * 100 + h * 5;
			p.hw_ns = p.ts_ns;
			p.ttl = (uint8_t)(64 - h);
			p.mirror_src.a[3] = (uint8_t)(1 + (i + h) % 200);
			p.mirror_src.a[2] = (uint8_t)h;
			hs_tracer_add(tr, &p, 0);
		}
	}
	uint64_t t1 = hs_mono_ns();
	long after = status_kb("VmHWM");

	hs_tracer_get_stats(tr, &st);
	printf("open_traces\t%llu\n", (unsigned long long)st.open);
	printf("copies\t%llu\n", (unsigned long long)st.copies);
	printf("evicted\t%llu\n", (unsigned long long)st.evicted);
	printf("hops_per_trace\t%u\n", hops);
	printf("peak_rss_kb\t%ld\n", after);
	printf("bytes_per_open_trace\t%.1f\n", (double)(after - before) * 1024.0 / (double)n);
	printf("tracer_add_mcps\t%.2f\n",
	       (double)st.copies / ((double)(t1 - t0) / 1e9) / 1e6);
	hs_tracer_close_all(tr);
	hs_tracer_get_stats(tr, &st);
	hs_tracer_free(tr);
	if (st.closed != n || closed_cb_count != n) {
		fprintf(stderr, "memtrace: %zu traces fed, %llu closed\n", n,
			(unsigned long long)st.closed);
		return 1;
	}
	return 0;
}

static int run_flows(size_t n)
{
	struct hs_trace t;
	long before = status_kb("VmHWM");
	struct hs_flowtab *ft = hs_flowtab_new(n);
	uint64_t t0 = hs_mono_ns();

	memset(&t, 0, sizeof(t));
	t.outcome = HS_OUT_DELIVERED;
	t.tcp_flags = 0x02;
	t.len = 60;
	t.nhops = 1;
	t.last_sw = -1;
	t.hops[0].sw = -1;
	for (size_t i = 0; i < n; i++) {
		t.id = i + 1;
		make_key(i, &t.key);
		t.key_hash = hs_flowkey_hash(&t.key);
		t.hops[0].ts_ns = 1700000000ULL * HS_NS_PER_SEC + i * 100;
		if (!hs_flowtab_add_trace(ft, &t))
			break;
	}
	uint64_t t1 = hs_mono_ns();
	long after = status_kb("VmHWM");
	size_t count = hs_flowtab_count(ft);

	printf("flows\t%zu\n", count);
	printf("overflow\t%llu\n", (unsigned long long)hs_flowtab_overflow(ft));
	printf("peak_rss_kb\t%ld\n", after);
	printf("bytes_per_flow\t%.1f\n", (double)(after - before) * 1024.0 / (double)n);
	printf("flow_add_mps\t%.2f\n", (double)count / ((double)(t1 - t0) / 1e9) / 1e6);
	hs_flowtab_free(ft);
	if (count != n) {
		fprintf(stderr, "memtrace: %zu flows fed, %zu kept\n", n, count);
		return 1;
	}
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: memtrace traces|flows [-n N] [--hops H]\n");
	return 2;
}

int main(int argc, char **argv)
{
	uint64_t n = 1000000, hops = 5;

	if (argc < 2)
		return usage();
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "-n") == 0 && i + 1 < argc) {
			if (hs_parse_uint(argv[++i], 1u << 24, &n) < 0 || n == 0) {
				fprintf(stderr, "memtrace: bad count '%s' (1 to 16777216)\n", argv[i]);
				return 2;
			}
		} else if (strcmp(argv[i], "--hops") == 0 && i + 1 < argc) {
			if (hs_parse_uint(argv[++i], HS_TRACE_MAX_HOPS, &hops) < 0 || hops == 0) {
				fprintf(stderr, "memtrace: bad hop count '%s' (1 to %d)\n", argv[i],
					HS_TRACE_MAX_HOPS);
				return 2;
			}
		} else {
			return usage();
		}
	}
	if (strcmp(argv[1], "traces") == 0)
		return run_traces((size_t)n, (unsigned)hops);
	if (strcmp(argv[1], "flows") == 0)
		return run_flows((size_t)n);
	return usage();
}
