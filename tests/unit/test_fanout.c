/* test_fanout.c - the kernel's fanout program against the decoder: run by
 * libpcap's BPF interpreter over frames of every encapsulation it reads and
 * over the bundled, golden and conformance captures, it gives every frame
 * the worker hs_shard() gives it, and every copy of one packet one worker;
 * a worker's decoder leaves undecoded only frames the decoder gives
 * another worker, and decodes the rest as the decoder does */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <linux/filter.h>
#include <pcap/pcap.h>
#include <cmocka.h>

#include "fanout.h"
#include "../tools/pktw.h"

#define MAXF 4096

static struct bpf_insn prog[HS_FANOUT_MAX_INSNS];
static int prog_len;

static struct hs_addr A(const char *s)
{
	struct hs_addr a;

	assert_int_equal(hs_addr_parse(s, &a), 0);
	return a;
}

/* the program's answer for a frame */
static uint32_t run(const uint8_t *f, size_t len)
{
	return bpf_filter(prog, f, (u_int)len, (u_int)len);
}

static void test_program(void **state)
{
	static struct bpf_insn kernel[HS_FANOUT_MAX_INSNS];

	(void)state;
	assert_true(prog_len > 100 && prog_len <= HS_FANOUT_MAX_INSNS);
	assert_true(bpf_validate(prog, prog_len));
	/* the kernel's: the same program, its loads from the link header */
	int n = hs_fanout_prog(DLT_EN10MB, SKF_LL_OFF, kernel, HS_FANOUT_MAX_INSNS);
	assert_int_equal(n, prog_len);
	for (int i = 0; i < n; i++) {
		bool load = BPF_CLASS(prog[i].code) == BPF_LD &&
			    (BPF_MODE(prog[i].code) == BPF_ABS || BPF_MODE(prog[i].code) == BPF_IND);
		assert_int_equal(kernel[i].code, prog[i].code);
		assert_int_equal(kernel[i].k, load ? prog[i].k + (uint32_t)SKF_LL_OFF : prog[i].k);
	}
	/* too little room, and a link type it does not read */
	assert_int_equal(hs_fanout_prog(DLT_EN10MB, 0, kernel, 64), -1);
	assert_int_equal(hs_fanout_prog(DLT_LINUX_SLL, 0, kernel, HS_FANOUT_MAX_INSNS), -1);
	assert_true(hs_fanout_prog(DLT_RAW, 0, kernel, HS_FANOUT_MAX_INSNS) > 0);
}

static struct pktw_inner inner(bool six, int proto, uint16_t id)
{
	struct pktw_inner in;

	memset(&in, 0, sizeof(in));
	in.key.src = A(six ? "2001:db8::1:1" : "10.0.1.1");
	in.key.dst = A(six ? "2001:db8::2:2" : "10.0.2.2");
	in.key.proto = (uint8_t)proto;
	in.key.sport = 33000;
	in.key.dport = 80;
	in.ttl = 60;
	in.ip_id = id;
	in.tcp_flags = 0x02;
	in.ip_options = !six && id % 2;
	return in;
}

/* Frames built of every encapsulation the program reads, with tags, GRE
 * options and ERSPAN III's subheader: the decoder's inner packet, hashed */
static void test_every_encap(void **state)
{
	static const int encaps[] = {
		HS_ENCAP_NONE, HS_ENCAP_ERSPAN1, HS_ENCAP_ERSPAN2, HS_ENCAP_ERSPAN3,
		HS_ENCAP_GRE_TEB, HS_ENCAP_GRE_IP, HS_ENCAP_IPIP,
	};
	uint8_t ib[MAXF], f[MAXF];
	struct hs_pkt p;
	unsigned frames = 0;
	uint32_t seen[2] = { 0, 0 };

	(void)state;
	for (size_t e = 0; e < sizeof(encaps) / sizeof(encaps[0]); e++)
		for (int v = 0; v < 32; v++) {
			bool six = v & 1;
			struct pktw_inner in = inner(six, v & 2 ? 17 : 6, (uint16_t)(1000 + v));
			struct pktw_mirror m;

			memset(&m, 0, sizeof(m));
			m.encap = encaps[e];
			m.src = A(v & 4 ? "2001:db8:ff::1" : "192.0.2.1");
			m.dst = A(v & 4 ? "2001:db8:ff::99" : "192.0.2.99");
			m.session = 7;
			m.gra = 1;
			m.platform3 = v & 8;
			m.gre_key = v & 8;
			m.gre_csum = v & 16;
			m.gre_seqf = v & 2;
			m.vlan = v & 16 ? 100 : 0;
			m.vlan2 = v & 8 ? 200 : 0;
			m.overlay = v & 4 && encaps[e] == HS_ENCAP_NONE ? 4789 : 0;
			m.vni = 42;
			size_t il = pktw_inner(ib, sizeof(ib), &in);
			size_t n = pktw_frame(f, sizeof(f), DLT_EN10MB, &m, ib, il);
			if (!n)
				continue;	/* a combination the writer does not make */
			assert_int_equal(hs_decode(DLT_EN10MB, f, (uint32_t)n, (uint32_t)n, 1, &p), 0);
			assert_true(p.key.src.af == (six ? 6 : 4));
			uint32_t h = run(f, n);
			if (h != hs_ident_hash(&p))
				fail_msg("encap %s, variant %d: %08x, not %08x", hs_encap_name(encaps[e]),
					 v, h, hs_ident_hash(&p));
			seen[h % 2]++;
			frames++;
		}
	assert_true(frames > 150);
	/* two workers both get some */
	assert_true(seen[0] > frames / 4 && seen[1] > frames / 4);
}

/* The inner packet's identity does not depend on the copy: the same packet
 * mirrored by three switches in three encapsulations, TTL apart, one hash */
static void test_copies_meet(void **state)
{
	uint8_t ib[MAXF], f[MAXF];
	static const int encaps[] = { HS_ENCAP_ERSPAN2, HS_ENCAP_ERSPAN3, HS_ENCAP_GRE_TEB };
	static const char *const sw[] = { "192.0.2.1", "192.0.2.2", "192.0.2.3" };

	(void)state;
	for (uint16_t id = 1; id < 200; id++) {
		uint32_t first = 0;
		for (int c = 0; c < 3; c++) {
			struct pktw_inner in = inner(false, 6, id);
			struct pktw_mirror m;

			in.ttl = (uint8_t)(64 - c);
			memset(&m, 0, sizeof(m));
			m.encap = encaps[c];
			m.src = A(sw[c]);
			m.dst = A("192.0.2.99");
			m.session = (uint16_t)(c + 1);
			m.platform3 = id % 2;
			size_t n = pktw_frame(f, sizeof(f), DLT_EN10MB, &m, ib,
					      pktw_inner(ib, sizeof(ib), &in));
			assert_true(n > 0);
			uint32_t h = run(f, n);
			assert_int_not_equal(h, 0);
			if (c == 0)
				first = h;
			assert_int_equal(h, first);
		}
	}
}

/* a frame of no IP packet, or cut short: worker 0 */
static void test_not_read(void **state)
{
	uint8_t ib[MAXF], f[MAXF];
	struct pktw_inner in = inner(false, 6, 9);
	struct pktw_mirror m;

	(void)state;
	memset(&m, 0, sizeof(m));
	m.encap = HS_ENCAP_ERSPAN3;
	m.src = A("192.0.2.1");
	m.dst = A("192.0.2.99");
	size_t n = pktw_frame(f, sizeof(f), DLT_EN10MB, &m, ib, pktw_inner(ib, sizeof(ib), &in));
	assert_true(run(f, n) != 0);
	assert_int_equal(run(f, 14 + 20 + 8 + 12 + 14 + 10), 0);	/* the inner header cut */
	f[12] = 0x08;
	f[13] = 0x06;		/* ARP */
	assert_int_equal(run(f, n), 0);
	/* MPLS: the associated channel (no IP), and a stack cut short */
	memset(&m, 0, sizeof(m));
	m.encap = HS_ENCAP_GRE_MPLS;
	m.src = A("192.0.2.1");
	m.dst = A("192.0.2.99");
	m.mpls_n = 2;
	m.mpls[0] = 100;
	m.mpls[1] = 200;
	n = pktw_frame(f, sizeof(f), DLT_EN10MB, &m, ib, pktw_inner(ib, sizeof(ib), &in));
	assert_true(run(f, n) != 0);
	assert_int_equal(run(f, 14 + 20 + 4 + 6), 0);
	f[14 + 20 + 4 + 8] = 0x10;
	assert_int_equal(run(f, n), 0);
}

/* MPLS (after Ethernet, in GRE, in a Geneve overlay's frame; IP at the
 * bottom of the stack, or an Ethernet pseudowire with a control word or
 * without) and Geneve: the decoder's inner packet, hashed */
static void test_mpls_geneve(void **state)
{
	static const int encaps[] = {
		HS_ENCAP_NONE, HS_ENCAP_ERSPAN2, HS_ENCAP_ERSPAN3, HS_ENCAP_GRE_TEB, HS_ENCAP_GRE_MPLS,
	};
	uint8_t ib[MAXF], f[MAXF];
	struct hs_pkt p;
	unsigned mpls = 0, geneve = 0;

	(void)state;
	for (size_t e = 0; e < sizeof(encaps) / sizeof(encaps[0]); e++)
		for (int v = 0; v < 96; v++) {
			bool six = v & 1;
			struct pktw_inner in = inner(six, v & 2 ? 17 : 6, (uint16_t)(2000 + v));
			struct pktw_mirror m;

			memset(&m, 0, sizeof(m));
			m.encap = encaps[e];
			m.src = A("192.0.2.1");
			m.dst = A("192.0.2.99");
			m.session = 3;
			m.mpls_n = (uint8_t)((v >> 2) % 4);
			if (encaps[e] == HS_ENCAP_GRE_MPLS && !m.mpls_n)
				m.mpls_n = 1;
			for (int i = 0; i < m.mpls_n; i++)
				m.mpls[i] = (uint32_t)(16 + 1000 * i + v);
			m.mpls_mcast = v & 16;
			m.pw = m.mpls_n ? (v >> 4) % 3 : 0;
			m.overlay = encaps[e] == HS_ENCAP_NONE && v & 32 ? 6081 : 0;
			m.vni = 42;
			m.vlan = v & 64 ? 10 : 0;
			size_t il = pktw_inner(ib, sizeof(ib), &in);
			size_t n = pktw_frame(f, sizeof(f), DLT_EN10MB, &m, ib, il);
			if (!n)
				continue;
			assert_int_equal(hs_decode(DLT_EN10MB, f, (uint32_t)n, (uint32_t)n, 1, &p), 0);
			assert_true(p.key.src.af == (six ? 6 : 4));
			uint32_t h = run(f, n);
			if (h != hs_ident_hash(&p))
				fail_msg("encap %s, %u labels, pseudowire %d, overlay %d, variant %d: "
					 "%08x, not %08x", hs_encap_name(encaps[e]), m.mpls_n, m.pw,
					 m.overlay, v, h, hs_ident_hash(&p));
			mpls += m.mpls_n > 0;
			geneve += m.overlay == 6081;
		}
	assert_true(mpls > 250);
	assert_true(geneve > 20);
}

/* ---- the encapsulations read by walking a header's own chain --------------- */

/* h (hl bytes) put before the n bytes at b */
static size_t wrap(uint8_t *b, size_t n, const void *h, size_t hl)
{
	memmove(b + hl, b, n);
	memcpy(b, h, hl);
	return n + hl;
}

static size_t wrap_eth(uint8_t *b, size_t n, uint16_t type)
{
	uint8_t h[14] = { 0x02, 0, 0, 0, 0, 0x99, 0x02, 0, 0, 0, 0, 0x01 };

	h[12] = (uint8_t)(type >> 8);
	h[13] = (uint8_t)type;
	return wrap(b, n, h, sizeof(h));
}

static size_t wrap_ip4(uint8_t *b, size_t n, uint8_t proto)
{
	uint8_t h[20] = { 0x45, 0, 0, 0, 0, 7, 0, 0, 64, 0, 0, 0, 192, 0, 2, 1, 192, 0, 2, 99 };

	h[2] = (uint8_t)((20 + n) >> 8);
	h[3] = (uint8_t)(20 + n);
	h[9] = proto;
	return wrap(b, n, h, sizeof(h));
}

static size_t wrap_ip6(uint8_t *b, size_t n, uint8_t next)
{
	uint8_t h[40] = { 0x60, 0, 0, 0, 0, 0, 0, 64 };

	h[4] = (uint8_t)(n >> 8);
	h[5] = (uint8_t)n;
	h[6] = next;
	h[8] = h[24] = 0x20;
	h[9] = h[25] = 0x01;
	h[23] = 1;
	h[39] = 0x99;
	return wrap(b, n, h, sizeof(h));
}

static size_t wrap_udp(uint8_t *b, size_t n, uint16_t dport)
{
	uint8_t h[8] = { 0xc0, 0x01 };

	h[2] = (uint8_t)(dport >> 8);
	h[3] = (uint8_t)dport;
	h[4] = (uint8_t)((8 + n) >> 8);
	h[5] = (uint8_t)(8 + n);
	return wrap(b, n, h, sizeof(h));
}

/* the program against the decoder on the frame at f: the inner packet's
 * hash when the decoder reads it (read), else 0 */
static void same_as_decoder(const uint8_t *f, size_t n, const char *what, bool read)
{
	struct hs_pkt p;
	int drc = hs_decode(DLT_EN10MB, f, (uint32_t)n, (uint32_t)n, 1, &p);
	uint32_t h = run(f, n);

	if (read && (drc != 0 || !(p.have & HS_HAVE_IP)))
		fail_msg("%s: the decoder does not read it (%d)", what, drc);
	if (!read && drc >= 0)
		fail_msg("%s: the decoder reads it", what);
	/* a frame the decoder refuses goes to worker 0 (hs_shard) */
	uint32_t want = read ? hs_ident_hash(&p) : 0;
	if (h != want)
		fail_msg("%s: %08x, not %08x", what, h, want);
}

/* VXLAN-GPE, WCCP, GRE with source route entries and tunnels behind IPv6
 * extension headers: the decoder's inner packet, hashed; what the decoder
 * refuses (a next protocol it does not know, a later fragment, a route
 * never ended) goes to worker 0 */
static void test_walked(void **state)
{
	uint8_t ib[MAXF], f[MAXF];
	char what[128];

	(void)state;
	for (int v = 0; v < 16; v++) {
		bool six = v & 1;
		struct pktw_inner in = inner(six, v & 2 ? 17 : 6, (uint16_t)(3000 + v));
		size_t il = pktw_inner(ib, sizeof(ib), &in), n;

		/* VXLAN-GPE: without the P bit an Ethernet frame; with it, what
		 * its next protocol names: IPv4 or IPv6, Ethernet, MPLS */
		for (int np = -1; np <= 5; np++) {
			uint8_t gpe[8] = { 0x08, 0, 0, 0, 0, 0, 42, 0 };
			bool read = np != 0 && np != 4;

			if ((np == 1 && six) || (np == 2 && !six))
				continue;	/* an IP version its next protocol does not name */

			memcpy(f, ib, il);
			n = il;
			if (np < 0 || np == 3)
				n = wrap_eth(f, n, six ? 0x86dd : 0x0800);
			if (np == 5) {
				uint8_t lse[4] = { 0, 0x10, 0x01, 64 };	/* label 1, bottom */
				n = wrap(f, n, lse, sizeof(lse));
			}
			if (np >= 0) {
				gpe[0] |= 0x04;
				gpe[3] = (uint8_t)np;
			}
			n = wrap(f, n, gpe, sizeof(gpe));
			n = wrap_udp(f, n, 4790);
			n = wrap_eth(f, wrap_ip4(f, n, 17), 0x0800);
			snprintf(what, sizeof(what), "VXLAN-GPE, next protocol %d, variant %d", np, v);
			same_as_decoder(f, n, what, read);
		}

		/* WCCP: IPv4 at once, or after the redirect header */
		for (int redirect = 0; !six && redirect < 2; redirect++) {
			uint8_t gre[4] = { 0, 0, 0x88, 0x3e }, rh[4] = { 0, 0, 0, 0x11 };

			memcpy(f, ib, il);
			n = redirect ? wrap(f, il, rh, sizeof(rh)) : il;
			n = wrap(f, n, gre, sizeof(gre));
			n = wrap_eth(f, wrap_ip4(f, n, 47), 0x0800);
			snprintf(what, sizeof(what), "WCCP, redirect header %d, variant %d", redirect, v);
			same_as_decoder(f, n, what, true);
		}

		/* GRE with routing: the offset word, the key and sequence when
		 * asked, then up to HS_FANOUT_ROUTES entries and the null one;
		 * one more is not read */
		for (int routes = 0; routes <= HS_FANOUT_ROUTES + 1; routes++) {
			uint16_t flags = (uint16_t)(0x4000 | (v & 4 ? 0x2000 : 0) | (v & 8 ? 0x1000 : 0) |
						    (v & 2 ? 0x8000 : 0));
			uint8_t gre[16] = { (uint8_t)(flags >> 8), 0, 0x08, 0x00 };
			uint8_t sre[4 + 12] = { 0x08, 0x00, 0, 12 }, null[4] = { 0 };
			size_t gl = 4 + 4 + (v & 4 ? 4 : 0) + (v & 8 ? 4 : 0);

			if (six)
				gre[2] = 0x86, gre[3] = 0xdd;
			memcpy(f, ib, il);
			n = routes <= HS_FANOUT_ROUTES ? wrap(f, il, null, sizeof(null)) : il;
			for (int r = 0; r < routes; r++) {
				sre[3] = (uint8_t)(4 * (r % 4));
				n = wrap(f, n, sre, 4 + sre[3]);
			}
			n = wrap(f, n, gre, gl);
			n = wrap_eth(f, wrap_ip4(f, n, 47), 0x0800);
			snprintf(what, sizeof(what), "GRE, flags %04x, %d routes, variant %d", flags,
				 routes, v);
			if (routes <= HS_FANOUT_ROUTES)
				same_as_decoder(f, n, what, true);
			else
				assert_int_equal(run(f, n), 0);
		}

		/* IPv6 with extension headers before GRE: hop-by-hop first, then
		 * destination options, routing, a first fragment, AH, up to
		 * HS_FANOUT_IP6_EXT of them; a later fragment is not read, nor
		 * is one header more */
		for (int ext = 0; ext <= HS_FANOUT_IP6_EXT + 1; ext++) {
			static const uint8_t types[] = { 60, 43, 44, 51 };
			uint8_t gre[4] = { 0, 0, 0x08, 0x00 }, h[24];
			uint8_t next = 47;
			bool later = ext == 3 && v & 4;

			if (six)
				gre[2] = 0x86, gre[3] = 0xdd;
			memcpy(f, ib, il);
			n = wrap(f, il, gre, sizeof(gre));
			for (int k = ext - 1; k >= 0; k--) {
				uint8_t t = k == 0 ? 0 : types[k % 4];
				size_t hl = t == 44 ? 8 : t == 51 ? 24 : 8 * (1 + (size_t)(k % 2));

				memset(h, 0, sizeof(h));
				h[0] = next;
				h[1] = t == 44 ? 0 : t == 51 ? 4 : (uint8_t)(hl / 8 - 1);
				if (t == 44 && later)
					h[3] = 0x08;	/* offset 1 */
				n = wrap(f, n, h, hl);
				next = t;
			}
			n = wrap_eth(f, wrap_ip6(f, n, next), 0x86dd);
			snprintf(what, sizeof(what), "IPv6, %d extension headers, variant %d", ext, v);
			if (ext <= HS_FANOUT_IP6_EXT)
				same_as_decoder(f, n, what, !later);
			else
				assert_int_equal(run(f, n), 0);
			/* cut short in the first header: not read */
			if (ext > 0) {
				snprintf(what, sizeof(what), "IPv6, %d extension headers, cut", ext);
				same_as_decoder(f, 14 + 40 + 2, what, false);
			}
		}
	}
}

struct tally {
	unsigned frames, read, unread;
	unsigned mg, mg_unread;	/* in MPLS or Geneve, and of them not read */
	unsigned quick;		/* frames a worker of two left undecoded */
	uint32_t *read_h, *unread_h;	/* identity hashes of each kind */
	size_t nr, nu, cap;
};

static void check_share(const char *path, struct tally *t, const u_char *d, uint32_t cut,
			uint32_t len, unsigned shard, unsigned n)
{
	struct hs_pkt p, q;
	int want = hs_decode(DLT_EN10MB, d, cut, len, 5, &p);

	memset(&q, 0xa5, sizeof(q));
	int got = hs_decode_share(DLT_EN10MB, d, cut, len, 5, &q, shard, n);
	if (got == 1) {
		if (want < 0 || hs_ident_hash(&p) % n == shard)
			fail_msg("%s: frame %u cut at %u: called another's, the decoder's "
				 "worker is %u of %u", path, t->frames, cut, shard, n);
		if (cut == len && n == 2)
			t->quick++;
	} else if (got != want || memcmp(&p, &q, sizeof(p)) != 0) {
		fail_msg("%s: frame %u cut at %u: decoded for worker %u of %u not as the "
			 "decoder does", path, t->frames, cut, shard, n);
	}
}

static void tally_file(const char *path, struct tally *t)
{
	char err[PCAP_ERRBUF_SIZE];
	pcap_t *pc = pcap_open_offline(path, err);
	struct pcap_pkthdr *h;
	const u_char *d;
	struct hs_pkt p;

	if (!pc)
		return;		/* not a capture libpcap reads */
	/* the program of Ethernet: a live capture's link type */
	while (pcap_datalink(pc) == DLT_EN10MB && pcap_next_ex(pc, &h, &d) == 1) {
		t->frames++;
		/* a worker's decoder, of 2 or 3: a frame it calls another's
		 * is one the decoder gives another, the rest it decodes as
		 * the decoder does; the whole frame and its cuts */
		for (uint32_t cut = h->caplen; cut > 0; cut = cut > 40 ? cut - 7 : 0)
			for (unsigned n = 2; n <= 3; n++)
				for (unsigned shard = 0; shard < n; shard++)
					check_share(path, t, d, cut, h->len, shard, n);
		if (hs_decode(DLT_EN10MB, d, h->caplen, h->len, 0, &p) < 0)
			continue;	/* no copy of a trace: any worker */
		uint32_t r = run(d, h->caplen), want = hs_ident_hash(&p);
		if (r != want && r != 0)
			fail_msg("%s: frame %u: %08x, not %08x", path, t->frames, r, want);
		if (p.mpls_n || p.encap == HS_ENCAP_GENEVE) {
			t->mg++;
			t->mg_unread += r == 0;
		}
		if (t->nr == t->cap || t->nu == t->cap) {
			t->cap = t->cap ? 2 * t->cap : 1024;
			t->read_h = realloc(t->read_h, t->cap * sizeof(uint32_t));
			t->unread_h = realloc(t->unread_h, t->cap * sizeof(uint32_t));
			assert_non_null(t->read_h);
			assert_non_null(t->unread_h);
		}
		if (r) {
			t->read++;
			t->read_h[t->nr++] = want;
		} else {
			t->unread++;
			t->unread_h[t->nu++] = want;
		}
	}
	pcap_close(pc);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* a copy the program reads and one of the same packet it does not would
 * go to two workers: there is none */
static void assert_apart(struct tally *t, const char *what)
{
	if (!t->nr || !t->nu)
		return;
	qsort(t->read_h, t->nr, sizeof(uint32_t), cmp_u32);
	for (size_t i = 0; i < t->nu; i++)
		if (bsearch(&t->unread_h[i], t->read_h, t->nr, sizeof(uint32_t), cmp_u32))
			fail_msg("%s: a packet with copies read and not read", what);
}

static void test_files(void **state)
{
	char path[1024];
	struct tally t = { 0 };
	const char *dirs[] = { "tests/golden", "../shared/corpus" };

	(void)state;
	snprintf(path, sizeof(path), "%s/share/sample/sample.pcap", HS_SRCDIR);
	tally_file(path, &t);
	/* the sample is ERSPAN III: every frame read, and most of them
	 * (TCP) known for the other's by a worker of two without decoding */
	assert_true(t.read > 1000);
	assert_int_equal(t.unread, 0);
	assert_true(t.quick > t.frames / 4);
	for (size_t k = 0; k < sizeof(dirs) / sizeof(dirs[0]); k++) {
		DIR *dir;
		struct dirent *e;

		snprintf(path, sizeof(path), "%s/%s", HS_SRCDIR, dirs[k]);
		if (!(dir = opendir(path))) {
			print_message("no captures at %s\n", path);
			continue;
		}
		while ((e = readdir(dir)) != NULL) {
			size_t n = strlen(e->d_name);
			if (n < 6 || strcmp(e->d_name + n - 5, ".pcap") != 0)
				continue;
			snprintf(path, sizeof(path), "%s/%s/%s", HS_SRCDIR, dirs[k], e->d_name);
			struct tally one = { 0 };
			tally_file(path, &one);
			assert_apart(&one, path);
			t.frames += one.frames;
			t.read += one.read;
			t.unread += one.unread;
			t.mg += one.mg;
			t.mg_unread += one.mg_unread;
			free(one.read_h);
			free(one.unread_h);
		}
		closedir(dir);
	}
	print_message("%u frames, %u with an inner packet read, %u not read (worker 0), "
		      "%u known for one worker's of two without decoding\n", t.frames, t.read,
		      t.unread, t.quick);
	assert_true(t.read > 10 * t.unread);
	/* the captures in MPLS and Geneve are read */
	print_message("%u frames in MPLS or Geneve, %u of them not read\n", t.mg, t.mg_unread);
	assert_true(t.mg > 0);
	assert_int_equal(t.mg_unread, 0);
	free(t.read_h);
	free(t.unread_h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_program),
		cmocka_unit_test(test_every_encap),
		cmocka_unit_test(test_copies_meet),
		cmocka_unit_test(test_not_read),
		cmocka_unit_test(test_mpls_geneve),
		cmocka_unit_test(test_walked),
		cmocka_unit_test(test_files),
	};

	prog_len = hs_fanout_prog(DLT_EN10MB, 0, prog, HS_FANOUT_MAX_INSNS);
	if (prog_len < 0) {
		fprintf(stderr, "test_fanout: no program for Ethernet\n");
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
