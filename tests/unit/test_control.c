/* test_control.c - control traffic: the BGP, RoCEv2 and MAC control decoders
 * on the golden captures (plain and mirrored), at every truncation length of
 * every frame, on malformed messages; and the control log's ring */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <pcap/pcap.h>

#include "control.h"
#include "decode.h"

#define MAXFR 64

struct frame {
	uint8_t *data;
	uint32_t len;
	int dlt;
};

/* the frames of tests/golden/NAME.pcap */
static size_t load(const char *name, struct frame *fr)
{
	char path[4096], err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *d;
	size_t n = 0;

	snprintf(path, sizeof(path), "%s/tests/golden/%s.pcap", HS_SRCDIR, name);
	pcap_t *pc = pcap_open_offline(path, err);
	assert_non_null(pc);
	while (n < MAXFR && pcap_next_ex(pc, &h, &d) == 1) {
		fr[n].len = h->caplen;
		fr[n].data = malloc(h->caplen ? h->caplen : 1);
		assert_non_null(fr[n].data);
		memcpy(fr[n].data, d, h->caplen);
		fr[n].dlt = pcap_datalink(pc);
		n++;
	}
	pcap_close(pc);
	assert_true(n > 0);
	return n;
}

static void unload(struct frame *fr, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(fr[i].data);
}

/* decode the first cut bytes of a frame from an exact-size copy, so that a
 * read past them is a heap overflow under ASan; messages into m[], their
 * count returned, the error (or HS_CERR_NONE) in *err */
static int ctl_all(const struct frame *f, uint32_t cut, struct hs_ctl_msg *m, int max,
		   int *err, struct hs_pkt *p)
{
	uint8_t *copy = malloc(cut ? cut : 1);
	uint32_t off = 0;
	int n = 0, rc;

	assert_non_null(copy);
	memset(m, 0, (size_t)max * sizeof(*m));	/* padding compares equal */
	memcpy(copy, f->data, cut);
	hs_decode(f->dlt, copy, cut, f->len, 1, p);
	*err = HS_CERR_NONE;
	if (p->ctl) {
		assert_true(p->l4_payload >= copy &&
			    p->l4_payload + p->l4_payload_caplen <= copy + cut);
	}
	struct hs_ctl_msg tmp;
	while ((rc = hs_ctl_decode(p, &off, n < max ? &m[n] : &tmp, err)) == 1)
		n++;
	if (rc < 0)
		assert_int_not_equal(*err, HS_CERR_NONE);
	else
		assert_int_equal(*err, HS_CERR_NONE);
	free(copy);
	p->l3 = p->l4_payload = NULL;	/* they pointed into the copy */
	return n;
}

static void test_bgp(void **state)
{
	static const char *const caps[] = { "bgp", "bgp-erspan" };
	struct frame fr[MAXFR];
	struct hs_ctl_msg m[8];
	struct hs_pkt p;
	int err;

	(void)state;
	for (size_t c = 0; c < HS_ARRAY_SIZE(caps); c++) {
		size_t nf = load(caps[c], fr);
		assert_int_equal(nf, 5);

		/* OPEN: version, AS, four-octet AS, hold time, BGP id */
		assert_int_equal(ctl_all(&fr[0], fr[0].len, m, 8, &err, &p), 1);
		assert_int_equal(p.ctl, HS_CTL_BGP);
		assert_int_equal(m[0].proto, HS_CTL_BGP);
		const struct hs_bgp_msg *b = &m[0].u.bgp;
		assert_int_equal(b->type, HS_BGP_OPEN);
		assert_int_equal(b->len, 39);
		assert_int_equal(b->version, 4);
		assert_int_equal(b->as, 65001);
		assert_int_equal(b->as4, 4200000001u);
		assert_int_equal(b->hold, 90);
		assert_int_equal(b->bgp_id, 0x0a000001);
		assert_int_equal(p.encap, c ? HS_ENCAP_ERSPAN3 : HS_ENCAP_NONE);

		/* UPDATE: one withdrawn prefix, two announced */
		assert_int_equal(ctl_all(&fr[1], fr[1].len, m, 8, &err, &p), 1);
		b = &m[0].u.bgp;
		assert_int_equal(b->type, HS_BGP_UPDATE);
		assert_int_equal(b->withdrawn_len, 3);
		assert_int_equal(b->attr_len, 20);
		assert_int_equal(b->nlri_len, 7);
		assert_true(b->counts_ok);
		assert_int_equal(b->withdrawn, 1);
		assert_int_equal(b->nlri, 2);

		/* KEEPALIVE from the peer's side (destination port 179) */
		assert_int_equal(ctl_all(&fr[2], fr[2].len, m, 8, &err, &p), 1);
		assert_int_equal(m[0].u.bgp.type, HS_BGP_KEEPALIVE);
		assert_int_equal(m[0].u.bgp.len, 19);
		assert_int_equal(p.key.dport, 179);

		/* NOTIFICATION: cease, administrative shutdown */
		assert_int_equal(ctl_all(&fr[3], fr[3].len, m, 8, &err, &p), 1);
		assert_int_equal(m[0].u.bgp.type, HS_BGP_NOTIFICATION);
		assert_int_equal(m[0].u.bgp.err_code, 6);
		assert_int_equal(m[0].u.bgp.err_subcode, 2);

		/* three messages in one segment */
		assert_int_equal(ctl_all(&fr[4], fr[4].len, m, 8, &err, &p), 3);
		assert_int_equal(m[0].u.bgp.type, HS_BGP_KEEPALIVE);
		assert_int_equal(m[1].u.bgp.type, HS_BGP_UPDATE);
		assert_int_equal(m[1].u.bgp.nlri, 2);
		assert_int_equal(m[2].u.bgp.type, HS_BGP_ROUTE_REFRESH);
		assert_int_equal(m[2].u.bgp.len, 23);
		assert_int_equal(err, HS_CERR_NONE);
		unload(fr, nf);
	}
}

static void test_roce(void **state)
{
	static const char *const caps[] = { "roce", "roce-erspan" };
	static const struct { uint8_t op; uint32_t qp, psn; bool ackreq, aeth; uint8_t ack, code;
			      uint32_t msn; } want[] = {
		{ 0x04, 0x12, 1000, true, false, 0, 0, 0 },
		{ 0x11, 0x34, 1000, false, true, HS_ROCE_ACK, 0, 1 },
		{ 0x11, 0x34, 1001, false, true, HS_ROCE_NAK, 0, 1 },
		{ 0x11, 0x34, 1002, false, true, HS_ROCE_RNR_NAK, 14, 1 },
		{ 0x10, 0x34, 1003, false, true, HS_ROCE_NAK, 2, 2 },
		{ 0x0a, 0x12, 1004, true, false, 0, 0, 0 },
		{ 0x81, 0x12, 0, false, false, 0, 0, 0 },
	};
	struct frame fr[MAXFR];
	struct hs_ctl_msg m[2];
	struct hs_pkt p;
	int err;

	(void)state;
	for (size_t c = 0; c < HS_ARRAY_SIZE(caps); c++) {
		size_t nf = load(caps[c], fr);
		assert_int_equal(nf, HS_ARRAY_SIZE(want));
		for (size_t i = 0; i < nf; i++) {
			assert_int_equal(ctl_all(&fr[i], fr[i].len, m, 2, &err, &p), 1);
			assert_int_equal(p.ctl, HS_CTL_ROCE);
			const struct hs_roce_pkt *r = &m[0].u.roce;
			assert_int_equal(r->opcode, want[i].op);
			assert_int_equal(r->qp, want[i].qp);
			assert_int_equal(r->psn, want[i].psn);
			assert_int_equal(r->ackreq, want[i].ackreq);
			assert_int_equal(r->pkey, 0xffff);
			assert_true(r->migreq);
			assert_false(r->se);
			assert_int_equal(r->aeth, want[i].aeth);
			if (want[i].aeth) {
				assert_int_equal(r->ack, want[i].ack);
				assert_int_equal(r->nak_code, want[i].code);
				assert_int_equal(r->msn, want[i].msn);
			}
		}
		unload(fr, nf);
	}
	assert_string_equal(hs_roce_opcode_name(0x04), "rc-send-only");
	assert_string_equal(hs_roce_opcode_name(0x11), "rc-acknowledge");
	assert_string_equal(hs_roce_opcode_name(0x64), "ud-send-only");
	assert_string_equal(hs_roce_opcode_name(0xb1), "xrc-acknowledge");
	assert_string_equal(hs_roce_opcode_name(0x81), "cnp");
	assert_null(hs_roce_opcode_name(0x1f));
	assert_null(hs_roce_opcode_name(0xe0));
	assert_string_equal(hs_roce_nak_name(0), "psn-sequence-error");
	assert_string_equal(hs_roce_nak_name(3), "remote-operational-error");
	assert_null(hs_roce_nak_name(9));
	assert_string_equal(hs_roce_ack_name(HS_ROCE_RNR_NAK), "rnr-nak");
}

static void test_pfc(void **state)
{
	static const char *const caps[] = { "pfc", "pfc-erspan", "pfc-gre-teb" };
	struct frame fr[MAXFR];
	struct hs_ctl_msg m[2];
	struct hs_pkt p;
	int err;

	(void)state;
	for (size_t c = 0; c < HS_ARRAY_SIZE(caps); c++) {
		size_t nf = load(caps[c], fr);
		assert_int_equal(nf, 3);
		/* PFC pausing priority 3 */
		assert_int_equal(ctl_all(&fr[0], fr[0].len, m, 2, &err, &p), 1);
		assert_int_equal(p.ctl, HS_CTL_PFC);
		assert_int_equal(p.error, HS_DERR_NOT_IP);	/* still not IP */
		assert_int_equal(!!(p.have & HS_HAVE_MIRROR), c > 0);
		const struct hs_pfc_frame *f = &m[0].u.pfc;
		assert_int_equal(f->opcode, HS_MACC_PFC);
		assert_int_equal(f->class_enable, 0x08);
		for (int q = 0; q < 8; q++)
			assert_int_equal(f->quanta[q], q == 3 ? 0xffff : 0);
		/* releasing it */
		assert_int_equal(ctl_all(&fr[1], fr[1].len, m, 2, &err, &p), 1);
		assert_int_equal(m[0].u.pfc.class_enable, 0x88);
		assert_int_equal(m[0].u.pfc.quanta[3], 0);
		/* classic PAUSE */
		assert_int_equal(ctl_all(&fr[2], fr[2].len, m, 2, &err, &p), 1);
		assert_int_equal(m[0].u.pfc.opcode, HS_MACC_PAUSE);
		assert_int_equal(m[0].u.pfc.quanta[0], 0x1000);
		unload(fr, nf);
	}
}

/* every prefix of every frame: the messages decoded are a prefix of the
 * full decode, equal to it, and a cut inside a message is an error */
static void test_every_truncation(void **state)
{
	static const char *const caps[] = { "bgp", "bgp-erspan", "roce", "roce-erspan", "pfc",
					    "pfc-erspan", "pfc-gre-teb" };
	struct frame fr[MAXFR];
	struct hs_ctl_msg full[8], m[8];
	struct hs_pkt p;
	int err;

	(void)state;
	for (size_t c = 0; c < HS_ARRAY_SIZE(caps); c++) {
		size_t nf = load(caps[c], fr);
		for (size_t i = 0; i < nf; i++) {
			int nfull = ctl_all(&fr[i], fr[i].len, full, 8, &err, &p);
			assert_true(nfull > 0);
			assert_int_equal(err, HS_CERR_NONE);
			int cut_errors = 0;
			for (uint32_t cut = 0; cut < fr[i].len; cut++) {
				int n = ctl_all(&fr[i], cut, m, 8, &err, &p);
				assert_true(n <= nfull);
				for (int k = 0; k < n; k++)
					assert_memory_equal(&m[k], &full[k], sizeof(m[k]));
				if (n < nfull && p.ctl)
					assert_int_not_equal(err, HS_CERR_NONE);
				if (err != HS_CERR_NONE) {
					cut_errors++;
					assert_true(err == HS_CERR_TRUNC_BGP ||
						    err == HS_CERR_TRUNC_BTH ||
						    err == HS_CERR_TRUNC_AETH ||
						    err == HS_CERR_TRUNC_MACC);
				}
			}
			assert_true(cut_errors > 0);
		}
		unload(fr, nf);
	}
}

/* the golden capture of cut messages: one reason each */
static void test_truncated_capture(void **state)
{
	static const int want[] = { HS_CERR_TRUNC_BGP, HS_CERR_BGP_SPLIT, HS_CERR_TRUNC_AETH,
				    HS_CERR_TRUNC_MACC };
	struct frame fr[MAXFR];
	struct hs_ctl_msg m[8];
	struct hs_pkt p;
	int err;

	(void)state;
	size_t nf = load("control-truncated", fr);
	assert_int_equal(nf, HS_ARRAY_SIZE(want));
	for (size_t i = 0; i < nf; i++) {
		int n = ctl_all(&fr[i], fr[i].len, m, 8, &err, &p);
		assert_int_equal(n, i == 0 ? 1 : 0);	/* the KEEPALIVE before the cut */
		assert_int_equal(err, want[i]);
	}
	unload(fr, nf);
}

/* malformed BGP and MAC control, on hand-made payloads */
static int one(int proto, const uint8_t *d, uint32_t len, struct hs_ctl_msg *m)
{
	struct hs_pkt p;
	uint32_t off = 0;
	int err;

	memset(&p, 0, sizeof(p));
	p.ctl = (uint8_t)proto;
	uint8_t *copy = malloc(len ? len : 1);
	assert_non_null(copy);
	memcpy(copy, d, len);
	p.l4_payload = copy;
	p.l4_payload_caplen = p.l4_len = (uint16_t)len;
	int rc = hs_ctl_decode(&p, &off, m, &err);
	free(copy);
	return rc < 0 ? -err : rc;
}

static void test_malformed(void **state)
{
	uint8_t b[64];
	struct hs_ctl_msg m;

	(void)state;
	memset(b, 0xff, 16);
	b[16] = 0;
	b[17] = 19;
	b[18] = 4;
	assert_int_equal(one(HS_CTL_BGP, b, 19, &m), 1);
	b[3] = 0;	/* no marker: the middle of a message */
	assert_int_equal(one(HS_CTL_BGP, b, 19, &m), -HS_CERR_BAD_BGP);
	b[3] = 0xff;
	b[17] = 18;	/* shorter than its header */
	assert_int_equal(one(HS_CTL_BGP, b, 19, &m), -HS_CERR_BAD_BGP);
	b[17] = 25;	/* OPEN with a 6-byte body */
	b[18] = 1;
	memset(b + 19, 0, 6);
	assert_int_equal(one(HS_CTL_BGP, b, 25, &m), -HS_CERR_BAD_BGP);
	b[17] = 23;	/* UPDATE whose withdrawn length overruns it */
	b[18] = 2;
	b[19] = 0;
	b[20] = 9;
	assert_int_equal(one(HS_CTL_BGP, b, 23, &m), -HS_CERR_BAD_BGP);
	b[20] = 0;	/* empty UPDATE (End-of-RIB) */
	b[17] = 23;
	b[21] = 0;
	b[22] = 0;
	assert_int_equal(one(HS_CTL_BGP, b, 23, &m), 1);
	assert_true(m.u.bgp.counts_ok);
	assert_int_equal(m.u.bgp.nlri + m.u.bgp.withdrawn, 0);
	b[17] = 25;	/* an NLRI prefix longer than 32 bits: lengths, no counts */
	b[23] = 40;
	b[24] = 1;
	assert_int_equal(one(HS_CTL_BGP, b, 25, &m), 1);
	assert_int_equal(m.u.bgp.nlri_len, 2);
	assert_false(m.u.bgp.counts_ok);
	b[17] = 21;	/* NOTIFICATION with one byte of body */
	b[18] = 3;
	assert_int_equal(one(HS_CTL_BGP, b, 20, &m), -HS_CERR_BGP_SPLIT);
	b[17] = 20;
	assert_int_equal(one(HS_CTL_BGP, b, 20, &m), -HS_CERR_BAD_BGP);
	assert_int_equal(one(HS_CTL_BGP, b, 0, &m), 0);	/* a bare ACK */

	static const uint8_t mpcp[] = { 0x00, 0x02, 0, 0, 0, 0 };
	assert_int_equal(one(HS_CTL_PFC, mpcp, sizeof(mpcp), &m), -HS_CERR_OTHER_MACC);
	assert_int_equal(one(HS_CTL_PFC, mpcp, 1, &m), -HS_CERR_TRUNC_MACC);
	static const uint8_t pause[] = { 0x00, 0x01, 0x12, 0x34 };
	assert_int_equal(one(HS_CTL_PFC, pause, 4, &m), 1);
	assert_int_equal(m.u.pfc.quanta[0], 0x1234);
	assert_int_equal(one(HS_CTL_PFC, pause, 3, &m), -HS_CERR_TRUNC_MACC);
	assert_int_equal(one(HS_CTL_ROCE, pause, 4, &m), -HS_CERR_TRUNC_BTH);
	assert_int_equal(one(HS_CTL_NONE, pause, 4, &m), 0);

	assert_string_equal(hs_cerr_name(HS_CERR_BGP_SPLIT), "bgp-split");
	assert_string_equal(hs_cerr_name(HS_CERR__COUNT), "unknown");
	assert_string_equal(hs_ctl_proto_name(HS_CTL_PFC), "pfc");
	assert_string_equal(hs_bgp_type_name(5), "route-refresh");
	assert_null(hs_bgp_type_name(9));
}

/* only marked frames cost anything: plain TCP and UDP are not control */
static void test_marking(void **state)
{
	struct frame fr[MAXFR];
	struct hs_pkt p;

	(void)state;
	size_t nf = load("erspan2", fr);
	for (size_t i = 0; i < nf; i++) {
		assert_int_equal(hs_decode(fr[i].dlt, fr[i].data, fr[i].len, fr[i].len, 1, &p), 0);
		assert_int_equal(p.ctl, HS_CTL_NONE);
		assert_int_equal(p.ctl, HS_CTL_NONE);
	}
	unload(fr, nf);
}

/* the ring: newest first, bounded, counted, cleared */
static void test_ring(void **state)
{
	struct frame fr[MAXFR], bg[MAXFR];
	struct hs_pkt p;

	(void)state;
	size_t nf = load("roce-erspan", fr);
	size_t nb = load("bgp", bg);
	struct hs_control *c = hs_control_new(4);
	assert_int_equal(hs_control_count(c), 0);
	assert_null(hs_control_at(c, 0));

	for (size_t i = 0; i < nf; i++) {
		hs_decode(fr[i].dlt, fr[i].data, fr[i].len, fr[i].len, 100 + i, &p);
		assert_int_equal(hs_control_frame(c, &p), 1);	/* the records added */
	}
	const struct hs_control_stats *st = hs_control_stats(c);
	assert_int_equal(hs_control_count(c), 4);
	assert_int_equal(st->frames[HS_CTL_ROCE], nf);
	assert_int_equal(st->records[HS_CTL_ROCE], nf);
	assert_int_equal(st->overwritten, nf - 4);
	assert_int_equal(st->roce_ack[HS_ROCE_ACK], 1);
	assert_int_equal(st->roce_ack[HS_ROCE_NAK], 2);
	assert_int_equal(st->roce_ack[HS_ROCE_RNR_NAK], 1);
	assert_int_equal(st->roce_nak[0], 1);
	assert_int_equal(st->roce_nak[2], 1);
	assert_int_equal(st->roce_cnp, 1);
	for (size_t i = 0; i < 4; i++) {
		const struct hs_ctl_rec *r = hs_control_at(c, i);
		assert_non_null(r);
		assert_int_equal(r->ts_ns, 100 + nf - 1 - i);
		assert_int_equal(r->sw.af, 4);	/* the mirroring switch */
		assert_int_equal(r->key.dport, 4791);
	}
	assert_null(hs_control_at(c, 4));
	assert_int_equal(hs_control_at(c, 0)->msg.u.roce.opcode, HS_ROCE_CNP);

	/* a segment of three BGP messages is three records, in order */
	hs_decode(bg[4].dlt, bg[4].data, bg[4].len, bg[4].len, 500, &p);
	assert_int_equal(hs_control_frame(c, &p), 3);
	assert_int_equal(hs_control_at(c, 0)->msg.u.bgp.type, HS_BGP_ROUTE_REFRESH);
	assert_int_equal(hs_control_at(c, 2)->msg.u.bgp.type, HS_BGP_KEEPALIVE);
	assert_int_equal(hs_control_at(c, 0)->sw.af, 0);	/* plain SPAN */
	assert_int_equal(st->bgp_type[HS_BGP_UPDATE], 1);

	/* undecodable: counted by reason, no record */
	struct frame tr[MAXFR];
	size_t nt = load("control-truncated", tr);
	for (size_t i = 1; i < nt; i++) {
		hs_decode(tr[i].dlt, tr[i].data, tr[i].len, tr[i].len, 600, &p);
		assert_int_equal(hs_control_frame(c, &p), 0);
	}
	assert_int_equal(hs_control_at(c, 0)->ts_ns, 500);
	assert_int_equal(st->errors[HS_CERR_BGP_SPLIT], 1);
	assert_int_equal(st->errors[HS_CERR_TRUNC_AETH], 1);
	assert_int_equal(st->errors[HS_CERR_TRUNC_MACC], 1);

	hs_control_clear(c);
	assert_int_equal(hs_control_count(c), 0);
	assert_int_equal(st->records[HS_CTL_ROCE], 0);
	assert_null(hs_control_at(c, 0));
	hs_control_free(c);
	hs_control_free(NULL);
	unload(fr, nf);
	unload(bg, nb);
	unload(tr, nt);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bgp),
		cmocka_unit_test(test_roce),
		cmocka_unit_test(test_pfc),
		cmocka_unit_test(test_every_truncation),
		cmocka_unit_test(test_truncated_capture),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_marking),
		cmocka_unit_test(test_ring),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
