/* hs-ratecap.c - a capture of sampled TCP flows with known rates, for the
 * rates and alert tests
 *
 *   hs-ratecap OUT.pcap
 *
 * On the fabric of share/sample/sample.topo (spine1 .1, spine2 .2, leaf1 .3,
 * leaf2 .4 mirror addresses), for 3 seconds from T0 = 1700000000 s:
 *
 *   A 10.1.1.11:40000 > 10.1.2.11:5001  40 Mbit/s  leaf1 > spine1 > leaf2,
 *     its sequence numbers crossing the 32-bit wrap, one segment sent
 *     again late every 500 ms (a retransmission)
 *   B 10.1.1.12:40001 > 10.1.2.12:5001  10 Mbit/s  leaf1 > spine2 > leaf2
 *   C 10.1.1.11:40002 > 10.1.2.11:5001  mirrored at leaf1 only: dropped,
 *     20 packets a second
 *
 * A and B are sampled one packet in every 10 ms (the mirror need not copy
 * every packet), each sample copied by every switch on the path, 20 us
 * apart, as ERSPAN type III.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pktw.h"

#define T0 (1700000000ULL * HS_NS_PER_SEC)
#define MS 1000000ULL
#define US 1000ULL

static struct pktw_file out;
static uint16_t ip_id = 1;
static uint32_t gre_seq;

static void die(const char *what)
{
	fprintf(stderr, "hs-ratecap: %s\n", what);
	exit(1);
}

static struct hs_addr addr(const char *s)
{
	struct hs_addr a;

	if (hs_addr_parse(s, &a) < 0)
		die("bad address");
	return a;
}

/* one original packet, copied by the switches of path (mirror addresses) */
static void sample(const char *src, uint16_t sport, const char *dst, uint32_t seq, uint64_t ts,
		   const char *const *path, int n)
{
	struct pktw_inner in;
	uint8_t inner[1600], frame[2048];

	memset(&in, 0, sizeof(in));
	in.key.src = addr(src);
	in.key.dst = addr(dst);
	in.key.sport = sport;
	in.key.dport = 5001;
	in.key.proto = 6;
	in.tcp_flags = 0x10;
	in.seq = seq;
	in.ack = 1;
	in.window = 512;
	in.ip_id = ip_id++;
	in.payload_len = 1000;
	for (int h = 0; h < n; h++) {
		struct pktw_mirror m;
		uint64_t t = ts + (uint64_t)h * 20 * US;
		in.ttl = (uint8_t)(64 - h);
		size_t il = pktw_inner(inner, sizeof(inner), &in);
		memset(&m, 0, sizeof(m));
		m.encap = HS_ENCAP_ERSPAN3;
		m.src = addr(path[h]);
		m.dst = addr("10.255.0.254");
		m.session = 1;
		m.gra = 1;
		m.hw_ts = (uint32_t)(t / 100);
		m.gre_seq = gre_seq++;
		size_t fl = il ? pktw_frame(frame, sizeof(frame), DLT_EN10MB, &m, inner, il) : 0;
		if (!fl)
			die("cannot build a frame");
		pktw_write(&out, t, frame, fl);
	}
}

int main(int argc, char **argv)
{
	static const char *const pa[] = { "10.255.0.3", "10.255.0.1", "10.255.0.4" };
	static const char *const pb[] = { "10.255.0.3", "10.255.0.2", "10.255.0.4" };
	static const char *const pc[] = { "10.255.0.3" };
	uint32_t sa = 0xFFFFFFFFu - 7000000u, sb = 12345;

	if (argc != 2)
		die("usage: hs-ratecap OUT.pcap");
	if (pktw_open(&out, argv[1], DLT_EN10MB) < 0)
		die("cannot open the output");
	for (uint64_t t = 0; t <= 3000 * MS; t += 10 * MS) {
		sample("10.1.1.11", 40000, "10.1.2.11", sa, T0 + t, pa, 3);
		sample("10.1.1.12", 40001, "10.1.2.12", sb, T0 + t + 3 * MS, pb, 3);
		if (t % (50 * MS) == 0)
			sample("10.1.1.11", 40002, "10.1.2.11", (uint32_t)(777 + t / MS), T0 + t + 5 * MS,
			       pc, 1);
		if (t % (500 * MS) == 250 * MS)
			sample("10.1.1.11", 40000, "10.1.2.11", sa - 50000, T0 + t + 7 * MS, pa, 3);
		sa += 50000;		/* 50 kB per 10 ms: 40 Mbit/s */
		sb += 12500;		/* 10 Mbit/s */
	}
	pktw_close(&out);
	return 0;
}
