/* hs-mkgolden - write the golden decoder captures into a directory
 *
 * usage: hs-mkgolden DIR
 *
 * Each capture holds a few frames of one encapsulation or link type. The
 * output is deterministic (fixed addresses, payloads and timestamps), so
 * tests/e2e/golden.sh can check the committed copies under tests/golden/
 * are exactly what this program writes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcapng.h"
#include "pktw.h"

#define T0 1700000000000000000ULL	/* 2023-11-14T22:13:20Z */
#define MAXF 16384

struct cap {
	struct pktw_file f;
	uint64_t ts;
	int dlt;
};

static const char *outdir;
static int failed;

static void addr(struct hs_addr *a, const char *s)
{
	if (hs_addr_parse(s, a) < 0) {
		fprintf(stderr, "hs-mkgolden: bad address '%s'\n", s);
		exit(1);
	}
}

static int cap_open(struct cap *c, const char *name, int dlt)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s.pcap", outdir, name);
	c->ts = T0;
	c->dlt = dlt;
	if (pktw_open(&c->f, path, dlt) < 0) {
		failed = 1;
		return -1;
	}
	return 0;
}

/* the default inner packet: a TCP SYN from a tenant host */
static struct pktw_inner tcp4(void)
{
	struct pktw_inner in;

	memset(&in, 0, sizeof(in));
	addr(&in.key.src, "10.1.1.10");
	addr(&in.key.dst, "10.2.2.20");
	in.key.proto = 6;
	in.key.sport = 40000;
	in.key.dport = 443;
	in.ttl = 62;
	in.ip_id = 0x1234;
	in.tcp_flags = 0x02;
	in.seq = 1000000;
	return in;
}

static struct pktw_inner udp4(void)
{
	struct pktw_inner in = tcp4();

	in.key.proto = 17;
	in.key.sport = 5353;
	in.key.dport = 4791;	/* RoCEv2 */
	in.tcp_flags = 0;
	in.seq = 0;
	in.payload_len = 24;
	return in;
}

static struct pktw_inner six(int proto)
{
	struct pktw_inner in = tcp4();

	addr(&in.key.src, "2001:db8:1::10");
	addr(&in.key.dst, "2001:db8:2::20");
	in.key.proto = (uint8_t)proto;
	in.ip_id = 0;
	if (proto == 17) {
		in.tcp_flags = 0;
		in.payload_len = 16;
	}
	if (proto == 58) {
		in.icmp_type = 128;	/* echo request */
		in.key.sport = 7;	/* identifier */
		in.key.dport = 1;	/* sequence */
		in.payload_len = 8;
	}
	return in;
}

static struct pktw_mirror mirror(int encap)
{
	struct pktw_mirror m;

	memset(&m, 0, sizeof(m));
	m.encap = encap;
	addr(&m.src, "192.0.2.11");
	addr(&m.dst, "192.0.2.250");
	m.session = 17;
	m.gre_seq = 100;
	return m;
}

/* one frame; ttl_step > 0 adds copies as seen at later hops */
static void put(struct cap *c, const struct pktw_mirror *m, const struct pktw_inner *in,
		int hops)
{
	uint8_t inner[MAXF], frame[MAXF];

	for (int h = 0; h < (hops ? hops : 1); h++) {
		struct pktw_inner x = *in;
		struct pktw_mirror y = *m;

		x.ttl = (uint8_t)(in->ttl - h);
		y.src.a[3] = (uint8_t)(m->src.a[3] + h);
		y.gre_seq = m->gre_seq + (uint32_t)h;
		y.hw_ts = m->hw_ts + (uint32_t)h * 1000;
		size_t n = pktw_inner(inner, sizeof(inner), &x);
		size_t f = n ? pktw_frame(frame, sizeof(frame), c->dlt, &y, inner, n) : 0;
		if (!f) {
			fprintf(stderr, "hs-mkgolden: cannot build a frame\n");
			failed = 1;
			return;
		}
		pktw_write(&c->f, c->ts, frame, f);
		c->ts += 1000 + 17;
	}
}

static void one(const char *name, int dlt, const struct pktw_mirror *m,
		const struct pktw_inner *in, int hops)
{
	struct cap c;

	if (cap_open(&c, name, dlt) < 0)
		return;
	put(&c, m, in, hops);
	pktw_close(&c.f);
}

/* ---- control traffic: BGP, RoCEv2, MAC control ------------------------------ */

static size_t put16b(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
	return 2;
}

static size_t put32b(uint8_t *p, uint32_t v)
{
	put16b(p, (uint16_t)(v >> 16));
	put16b(p + 2, (uint16_t)v);
	return 4;
}

/* a BGP message: marker, length, type, body */
static size_t bgp_msg(uint8_t *p, uint8_t type, const uint8_t *body, size_t n)
{
	memset(p, 0xff, 16);
	put16b(p + 16, (uint16_t)(19 + n));
	p[18] = type;
	if (n)
		memcpy(p + 19, body, n);
	return 19 + n;
}

static size_t bgp_open(uint8_t *p)
{
	/* version 4, AS 65001, hold 90, id 10.0.0.1, capabilities: route
	 * refresh, four-octet AS 4200000001 */
	static const uint8_t b[] = { 4, 0xfd, 0xe9, 0, 90, 10, 0, 0, 1, 10,
				     2, 8, 2, 0, 65, 4, 0xfa, 0x56, 0xea, 0x01 };
	return bgp_msg(p, 1, b, sizeof(b));
}

static size_t bgp_update(uint8_t *p)
{
	/* withdrawn 10.9.0.0/16; ORIGIN IGP, AS_PATH 65001, NEXT_HOP 10.0.0.1;
	 * NLRI 10.1.0.0/16, 10.2.3.0/24 */
	static const uint8_t b[] = {
		0, 3, 16, 10, 9,
		0, 20,
		0x40, 1, 1, 0,
		0x40, 2, 6, 2, 1, 0, 0, 0xfd, 0xe9,
		0x40, 3, 4, 10, 0, 0, 1,
		16, 10, 1, 24, 10, 2, 3,
	};
	return bgp_msg(p, 2, b, sizeof(b));
}

static size_t bgp_notification(uint8_t *p)
{
	static const uint8_t b[] = { 6, 2 };	/* cease, administrative shutdown */
	return bgp_msg(p, 3, b, sizeof(b));
}

/* next sequence numbers of the speaker (port 179) and of its peer */
static uint32_t bgp_seq[2];

static struct pktw_inner bgp4(const uint8_t *pay, size_t n, bool from_peer)
{
	struct pktw_inner in = tcp4();
	uint32_t *seq = &bgp_seq[from_peer];

	addr(&in.key.src, from_peer ? "10.0.0.2" : "10.0.0.1");
	addr(&in.key.dst, from_peer ? "10.0.0.1" : "10.0.0.2");
	in.key.sport = from_peer ? 51000 : 179;
	in.key.dport = from_peer ? 179 : 51000;
	in.ttl = 1;
	in.tcp_flags = 0x18;	/* PSH ACK */
	in.seq = *seq;
	in.ack = bgp_seq[!from_peer];
	*seq += (uint32_t)n;
	in.payload = pay;
	in.payload_len = (uint16_t)n;
	return in;
}

/* OPEN, UPDATE, KEEPALIVE, NOTIFICATION, then KEEPALIVE + UPDATE +
 * ROUTE-REFRESH in one segment */
static void bgp_frames(struct cap *c, const struct pktw_mirror *m)
{
	uint8_t pay[512];
	struct pktw_inner in;
	size_t n;

	bgp_seq[0] = 9000;
	bgp_seq[1] = 5000;
	n = bgp_open(pay);
	in = bgp4(pay, n, false);
	put(c, m, &in, 1);
	n = bgp_update(pay);
	in = bgp4(pay, n, false);
	put(c, m, &in, 1);
	n = bgp_msg(pay, 4, NULL, 0);
	in = bgp4(pay, n, true);
	put(c, m, &in, 1);
	n = bgp_notification(pay);
	in = bgp4(pay, n, true);
	put(c, m, &in, 1);
	static const uint8_t rr[] = { 0, 1, 0, 1 };	/* IPv4 unicast */
	n = bgp_msg(pay, 4, NULL, 0);
	n += bgp_update(pay + n);
	n += bgp_msg(pay + n, 5, rr, sizeof(rr));
	in = bgp4(pay, n, false);
	put(c, m, &in, 1);
}

/* BTH: opcode, flags, pkey, dest QP, ack request, PSN */
static size_t bth(uint8_t *p, uint8_t op, uint32_t qp, bool ackreq, uint32_t psn)
{
	p[0] = op;
	p[1] = 0x40;		/* MigReq, pad 0, version 0 */
	put16b(p + 2, 0xffff);
	put32b(p + 4, qp & 0xffffff);
	put32b(p + 8, (ackreq ? 0x80000000u : 0) | (psn & 0xffffff));
	return 12;
}

static struct pktw_inner roce4(const uint8_t *pay, size_t n, bool responder)
{
	struct pktw_inner in = udp4();

	addr(&in.key.src, responder ? "10.2.2.20" : "10.1.1.10");
	addr(&in.key.dst, responder ? "10.1.1.10" : "10.2.2.20");
	in.key.sport = responder ? 61000 : 52000;
	in.key.dport = 4791;
	in.tos = 0x6a;		/* DSCP 26, ECT(0) */
	in.payload = pay;
	in.payload_len = (uint16_t)n;
	return in;
}

/* RC send-only asking for an ack, its ACK, a PSN sequence NAK, an RNR NAK,
 * a remote access NAK on a read response, a write, a CNP */
static void roce_frames(struct cap *c, const struct pktw_mirror *m)
{
	static const struct { uint8_t op; uint32_t qp, psn; bool ackreq, resp;
			      int aeth; uint8_t syn; uint32_t msn; uint16_t data; } f[] = {
		{ 0x04, 0x000012, 1000, true, false, 0, 0, 0, 64 },
		{ 0x11, 0x000034, 1000, false, true, 1, 0x1f, 1, 0 },
		{ 0x11, 0x000034, 1001, false, true, 1, 0x60, 1, 0 },
		{ 0x11, 0x000034, 1002, false, true, 1, 0x2e, 1, 0 },
		{ 0x10, 0x000034, 1003, false, true, 1, 0x62, 2, 0 },
		{ 0x0a, 0x000012, 1004, true, false, 0, 0, 0, 32 },
		{ 0x81, 0x000012, 0, false, true, 0, 0, 0, 16 },
	};
	uint8_t pay[256];

	for (size_t i = 0; i < HS_ARRAY_SIZE(f); i++) {
		size_t n = bth(pay, f[i].op, f[i].qp, f[i].ackreq, f[i].psn);
		if (f[i].op == 0x0a) {	/* RETH: address, rkey, length */
			memset(pay + n, 0, 16);
			put32b(pay + n + 12, f[i].data);
			n += 16;
		}
		if (f[i].aeth) {
			pay[n] = f[i].syn;
			put16b(pay + n + 1, (uint16_t)(f[i].msn >> 8));
			pay[n + 3] = (uint8_t)f[i].msn;
			n += 4;
		}
		for (uint16_t k = 0; k < f[i].data; k++)
			pay[n++] = (uint8_t)k;
		put32b(pay + n, 0x5eed0000u + (uint32_t)i);	/* ICRC, not checked */
		n += 4;
		struct pktw_inner in = roce4(pay, n, f[i].resp);
		put(c, m, &in, 1);
	}
}

/* a MAC control frame's payload: padded to the 46-byte minimum */
static void macc_frame(struct cap *c, const struct pktw_mirror *m, uint16_t op,
		       uint16_t cev, const uint16_t *quanta, int nq)
{
	struct pktw_mirror x = *m;
	uint8_t pay[46], frame[MAXF];
	size_t n = 0;

	memset(pay, 0, sizeof(pay));
	n += put16b(pay, op);
	if (op == 0x0101)
		n += put16b(pay + n, cev);
	for (int i = 0; i < nq; i++)
		n += put16b(pay + n, quanta[i]);
	x.ethertype = 0x8808;
	size_t f = pktw_frame(frame, sizeof(frame), c->dlt, &x, pay, sizeof(pay));
	if (!f) {
		fprintf(stderr, "hs-mkgolden: cannot build a frame\n");
		failed = 1;
		return;
	}
	pktw_write(&c->f, c->ts, frame, f);
	c->ts += 1000 + 17;
}

/* PFC pausing priority 3, then releasing it; a classic PAUSE */
static void pfc_frames(struct cap *c, const struct pktw_mirror *m)
{
	static const uint16_t on[8] = { 0, 0, 0, 0xffff, 0, 0, 0, 0 };
	static const uint16_t off[8] = { 0 };
	static const uint16_t pause[1] = { 0x1000 };

	macc_frame(c, m, 0x0101, 0x08, on, 8);
	macc_frame(c, m, 0x0101, 0x88, off, 8);
	macc_frame(c, m, 0x0001, 0, pause, 1);
}

static void control_captures(void)
{
	struct pktw_mirror m, plain = mirror(HS_ENCAP_NONE);
	struct cap c;

	plain.src.af = 0;
	m = mirror(HS_ENCAP_ERSPAN3);
	m.gra = 1;
	m.hw_ts = 5000;
	if (cap_open(&c, "bgp", DLT_EN10MB) == 0) {
		bgp_frames(&c, &plain);
		pktw_close(&c.f);
	}
	if (cap_open(&c, "bgp-erspan", DLT_EN10MB) == 0) {
		bgp_frames(&c, &m);
		pktw_close(&c.f);
	}
	if (cap_open(&c, "roce", DLT_EN10MB) == 0) {
		roce_frames(&c, &plain);
		pktw_close(&c.f);
	}
	m = mirror(HS_ENCAP_ERSPAN2);
	if (cap_open(&c, "roce-erspan", DLT_EN10MB) == 0) {
		roce_frames(&c, &m);
		pktw_close(&c.f);
	}
	if (cap_open(&c, "pfc", DLT_EN10MB) == 0) {
		pfc_frames(&c, &plain);
		pktw_close(&c.f);
	}
	m = mirror(HS_ENCAP_ERSPAN3);
	m.gra = 1;
	if (cap_open(&c, "pfc-erspan", DLT_EN10MB) == 0) {
		pfc_frames(&c, &m);
		pktw_close(&c.f);
	}
	m = mirror(HS_ENCAP_GRE_TEB);
	if (cap_open(&c, "pfc-gre-teb", DLT_EN10MB) == 0) {
		pfc_frames(&c, &m);
		pktw_close(&c.f);
	}

	/* cut short: a BGP UPDATE whose capture ends inside it, an UPDATE
	 * going on in the next segment, a RoCEv2 ACK cut inside its AETH, a
	 * PFC frame cut inside its quanta */
	if (cap_open(&c, "control-truncated", DLT_EN10MB) == 0) {
		uint8_t pay[512], inner[MAXF], frame[MAXF];
		struct pktw_inner in;
		size_t n = bgp_msg(pay, 4, NULL, 0);
		n += bgp_update(pay + n);
		in = bgp4(pay, n, false);
		size_t k = pktw_inner(inner, sizeof(inner), &in);
		size_t f = k ? pktw_frame(frame, sizeof(frame), DLT_EN10MB, &plain, inner, k) : 0;
		if (f) {
			pktw_write_cut(&c.f, c.ts, frame, f - 10, f);
			c.ts += 1000;
		}
		n = bgp_update(pay);
		in = bgp4(pay, n - 12, false);	/* the last 12 bytes go in the next segment */
		put(&c, &plain, &in, 1);
		n = bth(pay, 0x11, 0x34, false, 77);
		pay[n++] = 0x60;
		pay[n++] = 0;
		in = roce4(pay, n, true);
		put(&c, &plain, &in, 1);
		static const uint16_t on[8] = { 0, 0, 0, 0xffff, 0, 0, 0, 0 };
		uint8_t mp[46];
		memset(mp, 0, sizeof(mp));
		size_t mn = put16b(mp, 0x0101);
		mn += put16b(mp + mn, 0x08);
		for (int i = 0; i < 8; i++)
			mn += put16b(mp + mn, on[i]);
		plain.ethertype = 0x8808;
		f = pktw_frame(frame, sizeof(frame), DLT_EN10MB, &plain, mp, sizeof(mp));
		if (f) {
			pktw_write_cut(&c.f, c.ts, frame, 14 + 10, f);
			c.ts += 1000;
		}
		pktw_close(&c.f);
	}
}

/* ---- packet identity: one mirror point, every packet distinct ------------- */

/* one TCP segment of a flow: flags, sequence and ack numbers, data bytes */
static void segment(struct cap *c, struct pktw_mirror *m, struct pktw_inner in,
		    uint8_t flags, uint32_t seq, uint32_t ack, uint16_t len)
{
	in.tcp_flags = flags;
	in.seq = seq;
	in.ack = ack;
	in.payload_len = len;
	put(c, m, &in, 1);
	m->gre_seq++;
}

/* One switch's copies of an IPv4 flow whose stack sends IP ID 0 and of an
 * IPv6 flow, each a SYN, a pure ACK and a data segment with one sequence
 * number, then an ACK and a FIN with one sequence and ack number; two IPv6
 * UDP datagrams of one length; and the IPv4 data segment mirrored twice by
 * the same session: 12 packets in 13 copies */
static void identity_capture(void)
{
	struct pktw_mirror m = mirror(HS_ENCAP_ERSPAN2);
	struct pktw_inner in;
	struct cap c;

	if (cap_open(&c, "identity", DLT_EN10MB) < 0)
		return;
	for (int v6 = 0; v6 < 2; v6++) {
		in = v6 ? six(6) : tcp4();
		in.ip_id = 0;
		segment(&c, &m, in, 0x02, 1000, 0, 0);		/* SYN */
		segment(&c, &m, in, 0x10, 1001, 5001, 0);	/* ACK */
		segment(&c, &m, in, 0x18, 1001, 5001, 100);	/* PSH ACK, data */
		if (!v6) {
			m.gre_seq--;
			segment(&c, &m, in, 0x18, 1001, 5001, 100);	/* again */
		}
		segment(&c, &m, in, 0x10, 1101, 5101, 0);	/* ACK */
		segment(&c, &m, in, 0x11, 1101, 5101, 0);	/* FIN ACK */
	}
	static const uint8_t d1[16] = "first datagram.", d2[16] = "other datagram.";
	in = six(17);
	in.payload = d1;
	put(&c, &m, &in, 1);
	in.payload = d2;
	put(&c, &m, &in, 1);
	pktw_close(&c.f);
}

/* two hosts' captures merged into one pcapng file, as mergecap writes them:
 * an ERSPAN II SYN seen at three switches, the first copy captured on an
 * Ethernet interface, the second on a Linux cooked one with another
 * snapshot length, the third on a raw IP one; between them a frame of an
 * interface whose link type (USB) hopscope does not decode */
static void mixed_pcapng(void)
{
	static const struct { int dlt; uint32_t snaplen; } ifs[] = {
		{ DLT_EN10MB, 262144 }, { DLT_LINUX_SLL, 1500 }, { 101, 96 }, { 189, 1024 },
	};
	static const int order[] = { 0, 3, 1, 2 };
	char path[4096];
	uint8_t inner[MAXF], frame[MAXF];
	struct pktw_mirror m = mirror(HS_ENCAP_ERSPAN2);
	struct pktw_inner in = tcp4();
	int rc = 0, hop = 0;

	snprintf(path, sizeof(path), "%s/mixed.pcapng", outdir);
	FILE *fp = fopen(path, "wb");
	if (!fp) {
		fprintf(stderr, "hs-mkgolden: cannot write '%s'\n", path);
		failed = 1;
		return;
	}
	rc |= hs_pcapng_begin(fp, "hs-mkgolden", (uint16_t)ifs[0].dlt, ifs[0].snaplen);
	for (size_t i = 1; i < HS_ARRAY_SIZE(ifs); i++)
		rc |= hs_pcapng_interface(fp, (uint16_t)ifs[i].dlt, ifs[i].snaplen);
	for (size_t k = 0; k < HS_ARRAY_SIZE(order); k++) {
		int i = order[k];
		uint64_t ts = T0 + k * 1017;
		size_t f;

		if (ifs[i].dlt == 189) {
			/* a USB URB header: id, type 'S', transfer bulk, endpoint 0x81 */
			memset(frame, 0, 64);
			frame[8] = 'S';
			frame[9] = 3;
			frame[10] = 0x81;
			f = 64;
		} else {
			struct pktw_inner x = in;
			struct pktw_mirror y = m;
			x.ttl = (uint8_t)(in.ttl - hop);
			y.src.a[3] = (uint8_t)(m.src.a[3] + hop);
			y.gre_seq = m.gre_seq + (uint32_t)hop;
			hop++;
			size_t n = pktw_inner(inner, sizeof(inner), &x);
			f = n ? pktw_frame(frame, sizeof(frame), ifs[i].dlt, &y, inner, n) : 0;
		}
		if (!f) {
			fprintf(stderr, "hs-mkgolden: cannot build a frame\n");
			failed = 1;
			break;
		}
		rc |= hs_pcapng_packet_on(fp, (uint32_t)i, ts, frame, (uint32_t)f, (uint32_t)f,
					  NULL);
	}
	if (fclose(fp) != 0 || rc) {
		fprintf(stderr, "hs-mkgolden: cannot write '%s'\n", path);
		failed = 1;
	}
}

int main(int argc, char **argv)
{
	struct pktw_mirror m;
	struct pktw_inner in;
	struct cap c;

	if (argc != 2) {
		fprintf(stderr, "usage: hs-mkgolden DIR\n");
		return 2;
	}
	outdir = argv[1];

	/* ERSPAN II: a SYN seen at three switches */
	m = mirror(HS_ENCAP_ERSPAN2);
	in = tcp4();
	one("erspan2", DLT_EN10MB, &m, &in, 3);

	/* ERSPAN I: no ERSPAN header */
	m = mirror(HS_ENCAP_ERSPAN1);
	one("erspan1", DLT_EN10MB, &m, &in, 1);

	/* ERSPAN III, 100 ns granularity, no platform subheader; UDP inner */
	m = mirror(HS_ENCAP_ERSPAN3);
	m.gra = 1;
	m.hw_ts = 123456789;
	in = udp4();
	one("erspan3", DLT_EN10MB, &m, &in, 2);

	/* ERSPAN III, IEEE 1588 with a platform-id 3 subheader */
	m = mirror(HS_ENCAP_ERSPAN3);
	m.gra = 2;
	m.hw_ts = 0x89abcdef;
	m.platform3 = true;
	m.ts_hi = 0x65;
	in = tcp4();
	in.tcp_flags = 0x11;	/* FIN ACK */
	in.ack = 777;
	one("erspan3-platform", DLT_EN10MB, &m, &in, 2);

	/* ERSPAN II over an 802.1Q tag and over QinQ */
	m = mirror(HS_ENCAP_ERSPAN2);
	m.vlan = 100;
	in = tcp4();
	one("erspan2-vlan", DLT_EN10MB, &m, &in, 1);
	m.vlan = 200;
	m.vlan2 = 300;
	one("erspan2-qinq", DLT_EN10MB, &m, &in, 1);

	/* GRE transparent Ethernet bridging */
	m = mirror(HS_ENCAP_GRE_TEB);
	one("gre-teb", DLT_EN10MB, &m, &in, 1);

	/* GRE carrying IP with checksum, key and sequence number */
	m = mirror(HS_ENCAP_GRE_IP);
	m.gre_csum = m.gre_key = m.gre_seqf = true;
	m.gre_keyval = 0xdeadbeef;
	one("gre-ip-options", DLT_EN10MB, &m, &in, 1);

	/* GRE version 1 (PPTP): no mirror format, decoded no further */
	m = mirror(HS_ENCAP_GRE_IP);
	m.pptp = true;
	one("gre-pptp", DLT_EN10MB, &m, &in, 1);

	/* IP in IP: 4in4, 6in4, 4in6 */
	m = mirror(HS_ENCAP_IPIP);
	one("ipip", DLT_EN10MB, &m, &in, 1);
	in = six(6);
	one("ip6in4", DLT_EN10MB, &m, &in, 1);
	addr(&m.src, "2001:db8:ff::1");
	addr(&m.dst, "2001:db8:ff::2");
	in = tcp4();
	one("ip4in6", DLT_EN10MB, &m, &in, 1);

	/* overlays: VXLAN and Geneve as the mirror transport (a SYN seen at
	 * three mirror points, and at two with a VNI past 16 bits), and Geneve
	 * as a tenant's overlay inside ERSPAN II */
	m = mirror(HS_ENCAP_NONE);
	m.overlay = 4789;
	m.vni = 5001;
	in = tcp4();
	one("vxlan", DLT_EN10MB, &m, &in, 3);
	m.overlay = 6081;
	m.vni = 700001;
	one("geneve", DLT_EN10MB, &m, &in, 2);
	m.vni = 6001;
	m.encap = HS_ENCAP_ERSPAN2;
	one("erspan2-geneve", DLT_EN10MB, &m, &in, 1);

	/* MPLS: a two-label stack over IPv4, one label over IPv6, multicast
	 * (0x8848); Ethernet pseudowires with and without a control word; MPLS
	 * in GRE */
	if (cap_open(&c, "mpls", DLT_EN10MB) == 0) {
		m = mirror(HS_ENCAP_NONE);
		m.mpls_n = 2;
		m.mpls[0] = 16000;
		m.mpls[1] = 24001;
		in = tcp4();
		put(&c, &m, &in, 1);
		m.mpls_n = 1;
		m.mpls[0] = 2;	/* IPv6 explicit null */
		in = six(17);
		put(&c, &m, &in, 1);
		m.mpls_mcast = true;
		m.mpls[0] = 1048575;	/* the largest label */
		in = udp4();
		in.key.dport = 9000;
		put(&c, &m, &in, 1);
		pktw_close(&c.f);
	}
	if (cap_open(&c, "mpls-pw", DLT_EN10MB) == 0) {
		m = mirror(HS_ENCAP_NONE);
		m.mpls_n = 2;
		m.mpls[0] = 17001;
		m.mpls[1] = 299776;
		m.pw = 2;
		in = tcp4();
		put(&c, &m, &in, 1);
		m.pw = 1;
		put(&c, &m, &in, 1);
		pktw_close(&c.f);
	}
	m = mirror(HS_ENCAP_GRE_MPLS);
	m.mpls_n = 1;
	m.mpls[0] = 18000;
	in = tcp4();
	one("gre-mpls", DLT_EN10MB, &m, &in, 2);

	/* link types */
	m = mirror(HS_ENCAP_ERSPAN3);
	m.gra = 1;
	m.hw_ts = 42;
	one("sll", DLT_LINUX_SLL, &m, &in, 1);
	one("sll2", DLT_LINUX_SLL2, &m, &in, 1);
	one("raw", DLT_RAW, &m, &in, 1);
	/* PPP, as MPLS core links run it: MPLS over PPP, and IPv6 */
	if (cap_open(&c, "ppp-mpls", DLT_PPP) == 0) {
		m = mirror(HS_ENCAP_NONE);
		m.mpls_n = 2;
		m.mpls[0] = 17;
		m.mpls[1] = 3001;
		in = tcp4();
		put(&c, &m, &in, 1);
		m.mpls_n = 0;
		in = six(6);
		put(&c, &m, &in, 1);
		pktw_close(&c.f);
	}

	/* IPv4 options; IPv6 extension headers with TCP, UDP, ICMPv6 */
	m = mirror(HS_ENCAP_ERSPAN2);
	in = tcp4();
	in.ip_options = true;
	one("ipv4-options", DLT_EN10MB, &m, &in, 1);
	if (cap_open(&c, "ipv6-ext", DLT_EN10MB) == 0) {
		int protos[] = { 6, 17, 58 };
		for (size_t i = 0; i < HS_ARRAY_SIZE(protos); i++) {
			in = six(protos[i]);
			in.ip6_ext = true;
			put(&c, &m, &in, 1);
		}
		pktw_close(&c.f);
	}

	/* ICMP: echo, and a time-exceeded quoting a UDP header; ICMPv6 echo */
	if (cap_open(&c, "icmp", DLT_EN10MB) == 0) {
		uint8_t quote[MAXF];
		struct pktw_inner q = udp4();

		in = tcp4();
		in.key.proto = 1;
		in.icmp_type = 8;
		in.key.sport = 99;
		in.key.dport = 1;
		in.payload_len = 16;
		put(&c, &m, &in, 1);

		q.payload_len = 0;
		size_t qn = pktw_inner(quote, sizeof(quote), &q);
		in.icmp_type = 11;
		in.key.sport = in.key.dport = 0;
		addr(&in.key.src, "10.9.9.1");
		in.payload = quote;
		in.payload_len = (uint16_t)qn;
		put(&c, &m, &in, 1);

		in = six(58);
		put(&c, &m, &in, 1);
		pktw_close(&c.f);
	}

	/* truncated frames: the ERSPAN III header cut, the inner TCP header cut */
	if (cap_open(&c, "truncated", DLT_EN10MB) == 0) {
		uint8_t inner[MAXF], frame[MAXF];

		m = mirror(HS_ENCAP_ERSPAN3);
		m.gra = 1;
		in = tcp4();
		size_t n = pktw_inner(inner, sizeof(inner), &in);
		size_t f = pktw_frame(frame, sizeof(frame), DLT_EN10MB, &m, inner, n);
		/* eth 14 + ip 20 + gre 8 = 42; cut inside the 12-byte ERSPAN header */
		pktw_write_cut(&c.f, c.ts, frame, 48, f);
		c.ts += 1000;
		/* keep the inner IP header but only 10 bytes of TCP */
		pktw_write_cut(&c.f, c.ts, frame, f - n + 20 + 10, f);
		pktw_close(&c.f);
	}

	control_captures();
	identity_capture();
	mixed_pcapng();
	return failed;
}
