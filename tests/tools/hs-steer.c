/* hs-steer.c - a capture whose packets all go to one worker of several
 *
 *   hs-steer WORKER WORKERS COUNT FIRST OUT.pcap
 *
 * COUNT original packets, each mirrored once (ERSPAN II, by 10.255.0.1 to
 * 10.255.0.100): TCP SYNs 10.1.1.11 > 10.1.4.12:5001, their IP IDs from
 * FIRST on, those whose identity the workers' hash (fanout.h, hs_shard)
 * gives worker WORKER of WORKERS, the others skipped. The frames are 1 us
 * apart. For tests/lab/queue.sh, which has one worker's queue of closed
 * traces fill while another holds an older trace open.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fanout.h"
#include "pktw.h"

#define T0 (1700000000ULL * HS_NS_PER_SEC)

static void die(const char *what)
{
	fprintf(stderr, "hs-steer: %s\n", what);
	exit(1);
}

static unsigned long arg(const char *s, unsigned long max)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (!*s || *end || v > max)
		die("bad number (usage: hs-steer WORKER WORKERS COUNT FIRST OUT.pcap)");
	return v;
}

int main(int argc, char **argv)
{
	struct pktw_file out;
	struct pktw_inner in;
	struct pktw_mirror m;
	uint8_t inner[256], frame[512];

	if (argc != 6)
		die("usage: hs-steer WORKER WORKERS COUNT FIRST OUT.pcap");
	unsigned long worker = arg(argv[1], 63), workers = arg(argv[2], 64);
	unsigned long count = arg(argv[3], 65535), id = arg(argv[4], 65535);
	if (workers == 0 || worker >= workers)
		die("WORKER must be below WORKERS");
	if (pktw_open(&out, argv[5], DLT_EN10MB) < 0)
		die("cannot open the output");

	memset(&in, 0, sizeof(in));
	if (hs_addr_parse("10.1.1.11", &in.key.src) < 0 ||
	    hs_addr_parse("10.1.4.12", &in.key.dst) < 0)
		die("bad address");
	in.key.sport = 40000;
	in.key.dport = 5001;
	in.key.proto = 6;
	in.tcp_flags = 0x02;
	in.window = 29200;
	in.ttl = 64;
	memset(&m, 0, sizeof(m));
	m.encap = HS_ENCAP_ERSPAN2;
	m.session = 1;
	if (hs_addr_parse("10.255.0.1", &m.src) < 0 || hs_addr_parse("10.255.0.100", &m.dst) < 0)
		die("bad address");

	unsigned long n = 0;
	for (; n < count && id <= 65535; id++) {
		if (hs_ident_hash4(in.key.src.a, in.key.dst.a, 6, (uint16_t)id) % workers != worker)
			continue;
		in.ip_id = (uint16_t)id;
		in.seq = (uint32_t)id * 2654435761u;
		m.gre_seq = (uint32_t)n;
		size_t il = pktw_inner(inner, sizeof(inner), &in);
		size_t fl = il ? pktw_frame(frame, sizeof(frame), DLT_EN10MB, &m, inner, il) : 0;
		if (!fl)
			die("cannot build a frame");
		pktw_write(&out, T0 + n * 1000, frame, fl);
		n++;
	}
	pktw_close(&out);
	if (n < count)
		die("the IP IDs ran out before COUNT packets");
	return 0;
}
