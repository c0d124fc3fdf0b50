/* fanout.c - the inner packet's identity in classic BPF, and the kernel's
 * fanout group of a live capture's workers (fanout.h)
 *
 * The program is written twice by the same code: the first pass learns
 * where each label falls, the second writes the jumps to them. Classic BPF
 * jumps only forward, so the layers are unrolled, one block per IP header
 * level, each with its MPLS label stack and Ethernet header before it; a block hands the next
 * one the offset of its header in X. The identity words go to scratch
 * memory as each IP header is read (a deeper one overwrites them), and are
 * hashed once at the end: M[0..7] the words, M[9] how many.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/if_packet.h>
#include <pcap/dlt.h>
#include <string.h>
#include <stdio.h>
#include <sys/socket.h>

#include "fanout.h"

#ifndef DLT_IPV4
#define DLT_IPV4 228
#define DLT_IPV6 229
#endif
#define LINKTYPE_RAW 101

#define MAX_LABELS                                                                        \
	(HS_FANOUT_LEVELS * (HS_FANOUT_TAGS + HS_FANOUT_LABELS + 5 * (HS_FANOUT_IP6_EXT + 1) + \
			     HS_FANOUT_ROUTES + 47) + 8)

/* scratch memory */
enum { M_WORDS = 0, M_N = 9, M_CUR = 10, M_PROTO = 11, M_GRE = 12, M_FLAGS = 13, M_T = 14,
       M_S = 15 };

struct prog {
	struct bpf_insn *out;
	size_t n, max;
	int32_t base;
	int nlabels;
	long at[MAX_LABELS];	/* where each label falls, -1: not yet */
	bool bad;		/* too long, or a jump too far */
};

static int label(struct prog *p)
{
	if (p->nlabels >= MAX_LABELS) {
		p->bad = true;
		return 0;
	}
	return p->nlabels++;
}

static void here(struct prog *p, int l)
{
	p->at[l] = (long)p->n;
}

static void emit(struct prog *p, uint16_t code, uint8_t jt, uint8_t jf, uint32_t k)
{
	if (p->n < p->max)
		p->out[p->n] = (struct bpf_insn){ .code = code, .jt = jt, .jf = jf, .k = k };
	else
		p->bad = true;
	p->n++;
}

/* the offset of a jump from the next instruction to label l (first pass:
 * not known yet, 0) */
static uint32_t dist(struct prog *p, int l)
{
	long d = p->at[l] < 0 ? 0 : p->at[l] - (long)p->n - 1;

	if (d < 0)
		p->bad = true;
	return (uint32_t)d;
}

/* a conditional jump: to t when true, else to f (-1: the next instruction) */
static void jmp(struct prog *p, uint16_t op, uint32_t k, int t, int f)
{
	uint32_t dt = t < 0 ? 0 : dist(p, t), df = f < 0 ? 0 : dist(p, f);

	if (dt > 255 || df > 255)
		p->bad = true;
	emit(p, BPF_JMP | op | BPF_K, (uint8_t)dt, (uint8_t)df, k);
}

static void ja(struct prog *p, int l)
{
	emit(p, BPF_JMP | BPF_JA, 0, 0, dist(p, l));
}

/* to l, however far, when the test is true; else on */
static void jmp_far(struct prog *p, uint16_t op, uint32_t k, int l)
{
	emit(p, BPF_JMP | op | BPF_K, 0, 1, k);
	ja(p, l);
}

/* A = the size bytes at X + off */
static void ldx_rel(struct prog *p, uint16_t size, uint32_t off)
{
	emit(p, BPF_LD | size | BPF_IND, 0, 0, (uint32_t)p->base + off);
}

static void alu(struct prog *p, uint16_t op, uint32_t k)
{
	emit(p, BPF_ALU | op | BPF_K, 0, 0, k);
}

static void alu_x(struct prog *p, uint16_t op)
{
	emit(p, BPF_ALU | op | BPF_X, 0, 0, 0);
}

static void st(struct prog *p, uint32_t m)
{
	emit(p, BPF_ST, 0, 0, m);
}

static void stx(struct prog *p, uint32_t m)
{
	emit(p, BPF_STX, 0, 0, m);
}

static void ld_mem(struct prog *p, uint32_t m)
{
	emit(p, BPF_LD | BPF_MEM, 0, 0, m);
}

static void ldx_mem(struct prog *p, uint32_t m)
{
	emit(p, BPF_LDX | BPF_MEM, 0, 0, m);
}

static void ld_imm(struct prog *p, uint32_t k)
{
	emit(p, BPF_LD | BPF_IMM, 0, 0, k);
}

static void tax(struct prog *p)
{
	emit(p, BPF_MISC | BPF_TAX, 0, 0, 0);
}

static void txa(struct prog *p)
{
	emit(p, BPF_MISC | BPF_TXA, 0, 0, 0);
}

/* X += k */
static void x_add(struct prog *p, uint32_t k)
{
	txa(p);
	alu(p, BPF_ADD, k);
	tax(p);
}

/* the labels of one level */
struct level {
	int mpls;		/* its MPLS label stack at X */
	int eth, ip;		/* its Ethernet header at X, its IP header at X */
};

/* A = the EtherType of an Ethernet header at X + off, one the decoder
 * reads: to yes, else to no (mpls.c, eth_at) */
static void eth_at(struct prog *p, uint32_t off, int yes, int no)
{
	static const uint32_t types[] = { 0x0800, 0x86dd, 0x8100, 0x88a8, 0x9100, 0x8847 };

	ldx_rel(p, BPF_H, off + 12);
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		jmp(p, BPF_JEQ, types[i], yes, -1);
	jmp(p, BPF_JEQ, 0x8848, yes, no);
}

/* A = the protocol of a tunnel's payload by EtherType (the decoder's
 * dec_proto, and GRE's): Ethernet to eth, IPv4 and IPv6 to ip, MPLS to
 * mpls, anything else to no */
static void payload_jumps(struct prog *p, int eth, int ip, int mpls, int no)
{
	jmp(p, BPF_JEQ, 0x6558, eth, -1);
	jmp(p, BPF_JEQ, 0x0800, ip, -1);
	jmp(p, BPF_JEQ, 0x86dd, ip, -1);
	jmp(p, BPF_JEQ, 0x8847, mpls, -1);
	jmp(p, BPF_JEQ, 0x8848, mpls, no);
}

/* The label stack at X, down to what its bottom carries, as the decoder
 * reads it (mpls.c): IPv4 or IPv6 at ip, an Ethernet pseudowire (after
 * its control word, if any) at eth; more than DEC_MAX_LABELS labels, or
 * the associated channel, are not read. X moves past the stack. */
static void mpls_block(struct prog *p, int eth, int ip, int unread)
{
	int bos = label(p), at[HS_FANOUT_LABELS];
	int v4or6 = label(p), cw = label(p), cw_yes = label(p), cw_no = label(p);
	int to_unread = label(p), to_ip = label(p);

	for (int k = 0; k < HS_FANOUT_LABELS; k++)
		at[k] = label(p);
	for (int k = 0; k < HS_FANOUT_LABELS; k++) {
		ldx_rel(p, BPF_W, 4 * (uint32_t)k);
		jmp(p, BPF_JSET, 0x100, at[k], -1);	/* the bottom of the stack */
	}
	ja(p, to_unread);
	for (int k = 0; k < HS_FANOUT_LABELS; k++) {
		here(p, at[k]);
		ld_imm(p, 4 * ((uint32_t)k + 1));
		if (k + 1 < HS_FANOUT_LABELS)
			ja(p, bos);
	}
	here(p, bos);
	alu_x(p, BPF_ADD);
	tax(p);
	/* the first nibble tells */
	ldx_rel(p, BPF_B, 0);
	alu(p, BPF_RSH, 4);
	jmp(p, BPF_JEQ, 4, v4or6, -1);
	jmp(p, BPF_JEQ, 6, v4or6, -1);
	jmp(p, BPF_JEQ, 1, to_unread, -1);
	jmp(p, BPF_JEQ, 0, cw, eth);
	here(p, v4or6);
	ja(p, to_ip);
	/* 0: a control word when an Ethernet header the decoder reads
	 * follows it, or none does where the frame begins */
	here(p, cw);
	eth_at(p, 4, cw_yes, -1);
	eth_at(p, 0, eth, cw_no);
	here(p, cw_yes);
	here(p, cw_no);
	x_add(p, 4);
	ja(p, eth);
	here(p, to_unread);
	ja(p, unread);
	here(p, to_ip);
	ja(p, ip);
}

/* IPv6's extension headers from X on, as the decoder walks them (ip.c): X
 * moves past them and M_PROTO is what follows, to past; a fragment other
 * than the first, a header cut short or more than HS_FANOUT_IP6_EXT of
 * them, to unread */
static void ip6_ext(struct prog *p, int past, int unread)
{
	for (int k = 0; k <= HS_FANOUT_IP6_EXT; k++) {
		int opt = label(p), ah = label(p), frag = label(p), len = label(p), none = label(p);

		ld_mem(p, M_PROTO);
		jmp(p, BPF_JEQ, 0, opt, -1);	/* hop-by-hop */
		jmp(p, BPF_JEQ, 43, opt, -1);	/* routing */
		jmp(p, BPF_JEQ, 60, opt, -1);	/* destination options */
		jmp(p, BPF_JEQ, 51, ah, -1);
		jmp(p, BPF_JEQ, 44, frag, none);
		here(p, none);
		ja(p, past);
		if (k == HS_FANOUT_IP6_EXT) {	/* one more than the program reads */
			here(p, opt);
			here(p, ah);
			here(p, frag);
			ja(p, unread);
			break;
		}
		here(p, opt);	/* 8-byte units after the first */
		ldx_rel(p, BPF_B, 1);
		alu(p, BPF_ADD, 1);
		alu(p, BPF_LSH, 3);
		ja(p, len);
		here(p, ah);	/* 4-byte units after the first two */
		ldx_rel(p, BPF_B, 1);
		alu(p, BPF_ADD, 2);
		alu(p, BPF_LSH, 2);
		ja(p, len);
		here(p, frag);
		ldx_rel(p, BPF_H, 2);
		jmp_far(p, BPF_JSET, 0xfff8, unread);
		ld_imm(p, 8);
		here(p, len);	/* A: the header's length; its last byte is there */
		st(p, M_T);
		ldx_rel(p, BPF_B, 0);
		st(p, M_PROTO);
		ld_mem(p, M_T);
		alu_x(p, BPF_ADD);
		alu(p, BPF_SUB, 1);
		tax(p);
		ldx_rel(p, BPF_B, 0);
		x_add(p, 1);
	}
}

/* GRE's source route entries (RFC 1701) from X on, ended by a null one: X
 * moves past them; more than HS_FANOUT_ROUTES before the null one, to
 * unread */
static void gre_routes(struct prog *p, int unread)
{
	int end = label(p);

	for (int k = 0; k <= HS_FANOUT_ROUTES; k++) {
		int next = label(p);

		ldx_rel(p, BPF_B, 3);	/* its length */
		st(p, M_T);
		ldx_rel(p, BPF_H, 0);	/* its address family */
		st(p, M_S);
		ld_mem(p, M_T);
		alu(p, BPF_ADD, 4);
		alu_x(p, BPF_ADD);
		tax(p);
		ld_mem(p, M_S);
		jmp(p, BPF_JEQ, 0, -1, next);
		ld_mem(p, M_T);
		jmp(p, BPF_JEQ, 0, end, next);
		here(p, next);
	}
	ja(p, unread);
	here(p, end);
}

/* the block of level i: an Ethernet header at X (eth), or an IP header at X
 * (ip); deeper headers go to next, what is not read to unread, an inner
 * packet found to done */
static void level_block(struct prog *p, const struct level *lv, const struct level *next,
			int unread, int done)
{
	int v4 = label(p), v6 = label(p), ip_l = label(p), gre = label(p), udp = label(p);
	int et = label(p), e12 = label(p), e2 = label(p), e3 = label(p), e3n = label(p);
	int vx = label(p), gpe = label(p), gnv = label(p), mpls_l = label(p), mpls_udp = label(p);
	int wccp = label(p), opts = label(p);
	/* far targets, through a jump of any length */
	int to_unread = label(p), to_done = label(p), to_eth = label(p), to_ip = label(p);
	int to_mpls = label(p);

	/* MPLS, reached from the level before */
	if (lv->mpls >= 0) {
		here(p, lv->mpls);
		mpls_block(p, lv->eth, lv->ip, unread);
	}

	/* Ethernet, with its tags */
	here(p, lv->eth);
	ldx_rel(p, BPF_H, 12);
	for (int t = 0; t <= HS_FANOUT_TAGS; t++) {
		int tag = label(p);
		jmp(p, BPF_JEQ, 0x8100, tag, -1);
		jmp(p, BPF_JEQ, 0x88a8, tag, -1);
		jmp(p, BPF_JEQ, 0x9100, tag, et);
		here(p, tag);
		if (t == HS_FANOUT_TAGS) {
			ja(p, to_unread);
			break;
		}
		x_add(p, 4);
		ldx_rel(p, BPF_H, 12);
	}
	here(p, et);
	jmp(p, BPF_JEQ, 0x0800, ip_l, -1);
	jmp(p, BPF_JEQ, 0x86dd, ip_l, -1);
	jmp(p, BPF_JEQ, 0x8847, mpls_l, -1);
	jmp(p, BPF_JEQ, 0x8848, mpls_l, -1);
	ja(p, unread);
	here(p, mpls_l);
	x_add(p, 14);
	ja(p, to_mpls);
	here(p, ip_l);
	x_add(p, 14);

	/* IP: the identity words, then what it carries */
	here(p, lv->ip);
	stx(p, M_CUR);
	ldx_rel(p, BPF_B, 0);
	alu(p, BPF_RSH, 4);
	jmp(p, BPF_JEQ, 4, v4, -1);
	jmp(p, BPF_JEQ, 6, v6, -1);
	ja(p, unread);

	here(p, v4);
	ldx_rel(p, BPF_W, 12);
	st(p, M_WORDS + 0);
	ldx_rel(p, BPF_W, 16);
	st(p, M_WORDS + 1);
	ldx_rel(p, BPF_H, 4);	/* IP ID */
	st(p, M_WORDS + 2);
	ldx_rel(p, BPF_B, 9);
	st(p, M_PROTO);
	alu(p, BPF_LSH, 16);
	ldx_mem(p, M_WORDS + 2);
	alu_x(p, BPF_OR);
	st(p, M_WORDS + 2);
	ld_imm(p, 0);		/* every word is written on every way to the hash */
	for (uint32_t m = 3; m < 8; m++)
		st(p, M_WORDS + m);
	ld_imm(p, 3);
	st(p, M_N);
	ldx_mem(p, M_CUR);
	ldx_rel(p, BPF_H, 6);
	jmp_far(p, BPF_JSET, 0x1fff, done);	/* a fragment: the decoder stops */
	ldx_rel(p, BPF_B, 0);
	alu(p, BPF_AND, 0x0f);
	alu(p, BPF_LSH, 2);
	alu_x(p, BPF_ADD);
	tax(p);
	int v4p = label(p);
	ja(p, v4p);

	here(p, v6);
	for (uint32_t w = 0; w < 8; w++) {
		ldx_rel(p, BPF_W, 8 + 4 * w);
		st(p, M_WORDS + w);
	}
	ld_imm(p, 8);
	st(p, M_N);
	ldx_rel(p, BPF_B, 6);
	st(p, M_PROTO);
	x_add(p, 40);
	ip6_ext(p, v4p, unread);

	here(p, v4p);
	ld_mem(p, M_PROTO);
	jmp(p, BPF_JEQ, 4, to_ip, -1);	/* IP in IP */
	jmp(p, BPF_JEQ, 41, to_ip, -1);
	jmp(p, BPF_JEQ, 47, gre, -1);
	jmp(p, BPF_JEQ, 17, udp, to_done);	/* anything else: this is the packet */

	/* UDP: VXLAN, VXLAN-GPE, Geneve and MPLS in UDP go on */
	here(p, udp);
	ldx_rel(p, BPF_H, 2);
	jmp(p, BPF_JEQ, 4789, vx, -1);
	jmp(p, BPF_JEQ, 4790, gpe, -1);
	jmp(p, BPF_JEQ, 6081, gnv, -1);
	jmp(p, BPF_JEQ, 6635, mpls_udp, to_done);
	/* VXLAN-GPE: an Ethernet frame, as VXLAN's, unless its P bit names
	 * what it carries: IPv4, IPv6, Ethernet or MPLS (1, 2, 3, 5) */
	here(p, gpe);
	ldx_rel(p, BPF_B, 8);
	jmp(p, BPF_JSET, 0x04, -1, vx);
	ldx_rel(p, BPF_B, 8 + 3);
	st(p, M_PROTO);
	x_add(p, 16);
	ld_mem(p, M_PROTO);
	jmp(p, BPF_JEQ, 1, to_ip, -1);
	jmp(p, BPF_JEQ, 2, to_ip, -1);
	jmp(p, BPF_JEQ, 3, to_eth, -1);
	jmp(p, BPF_JEQ, 5, to_mpls, to_unread);
	here(p, vx);
	x_add(p, 16);
	ja(p, to_eth);
	here(p, mpls_udp);
	x_add(p, 8);
	ja(p, to_mpls);
	/* Geneve: version 0, its options (4 bytes each) after 8 bytes, and
	 * what it carries by EtherType */
	here(p, gnv);
	ldx_rel(p, BPF_H, 8 + 2);
	st(p, M_PROTO);
	ldx_rel(p, BPF_B, 8);
	jmp(p, BPF_JSET, 0xc0, to_unread, -1);
	alu(p, BPF_AND, 0x3f);
	alu(p, BPF_LSH, 2);
	alu(p, BPF_ADD, 16);
	alu_x(p, BPF_ADD);
	tax(p);
	ld_mem(p, M_PROTO);
	payload_jumps(p, to_eth, to_ip, to_mpls, to_unread);

	/* GRE: 4 bytes, and 4 more for each of checksum (or routing's
	 * offset: one word for both), key, sequence */
	here(p, gre);
	stx(p, M_GRE);
	ldx_rel(p, BPF_H, 2);
	st(p, M_PROTO);
	ldx_rel(p, BPF_H, 0);
	jmp(p, BPF_JSET, 0x0007, to_unread, -1);	/* not version 0 */
	st(p, M_FLAGS);
	ld_imm(p, 0);
	st(p, M_T);
	static const uint32_t option_bits[] = { 15, 13, 12 };	/* C or R, K, S */
	for (size_t i = 0; i < sizeof(option_bits) / sizeof(option_bits[0]); i++) {
		ld_mem(p, M_FLAGS);
		if (i == 0) {	/* R is the bit below C */
			alu(p, BPF_LSH, 1);
			ldx_mem(p, M_FLAGS);
			alu_x(p, BPF_OR);
		}
		alu(p, BPF_RSH, option_bits[i]);
		alu(p, BPF_AND, 1);
		ldx_mem(p, M_T);
		alu_x(p, BPF_ADD);
		st(p, M_T);
	}
	alu(p, BPF_LSH, 2);
	alu(p, BPF_ADD, 4);
	ldx_mem(p, M_GRE);
	alu_x(p, BPF_ADD);
	tax(p);
	ld_mem(p, M_FLAGS);
	jmp(p, BPF_JSET, 0x4000, -1, opts);
	gre_routes(p, unread);
	here(p, opts);
	ld_mem(p, M_PROTO);
	jmp(p, BPF_JEQ, 0x88be, e12, -1);
	jmp(p, BPF_JEQ, 0x22eb, e3, -1);
	jmp(p, BPF_JEQ, 0x883e, wccp, -1);
	payload_jumps(p, to_eth, to_ip, to_mpls, to_unread);
	/* WCCP: IPv4 at once (version 1), or after a 4-byte redirect header */
	here(p, wccp);
	ldx_rel(p, BPF_B, 0);
	alu(p, BPF_RSH, 4);
	jmp(p, BPF_JEQ, 4, to_ip, -1);
	x_add(p, 4);
	ldx_rel(p, BPF_B, 0);
	alu(p, BPF_RSH, 4);
	jmp(p, BPF_JEQ, 4, to_ip, to_unread);
	/* ERSPAN I has no header of its own, II 8 bytes (the sequence bit
	 * tells them apart) */
	here(p, e12);
	ld_mem(p, M_FLAGS);
	jmp(p, BPF_JSET, 0x1000, e2, to_eth);
	here(p, e2);
	x_add(p, 8);
	ja(p, to_eth);
	/* ERSPAN III: 12 bytes, 8 more with the platform subheader; an
	 * Ethernet frame (0) or an IP packet (2) */
	here(p, e3);
	ldx_rel(p, BPF_H, 10);
	st(p, M_T);
	x_add(p, 12);
	ld_mem(p, M_T);
	jmp(p, BPF_JSET, 1, -1, e3n);
	x_add(p, 8);
	here(p, e3n);
	ld_mem(p, M_T);
	alu(p, BPF_RSH, 10);
	alu(p, BPF_AND, 0x1f);
	jmp(p, BPF_JEQ, 0, to_eth, -1);
	jmp(p, BPF_JEQ, 2, to_ip, to_unread);

	here(p, to_unread);
	ja(p, unread);
	here(p, to_done);
	ja(p, done);
	here(p, to_eth);
	ja(p, next ? next->eth : unread);
	here(p, to_ip);
	ja(p, next ? next->ip : unread);
	here(p, to_mpls);
	ja(p, next ? next->mpls : unread);
}

static void write_prog(struct prog *p, bool link)
{
	struct level lv[HS_FANOUT_LEVELS];
	int unread = label(p), done = label(p), v6 = label(p);

	p->n = 0;
	for (int i = 0; i < HS_FANOUT_LEVELS; i++) {
		lv[i].mpls = i ? label(p) : -1;	/* the first follows no header */
		lv[i].eth = label(p);
		lv[i].ip = label(p);
	}
	emit(p, BPF_LDX | BPF_IMM, 0, 0, 0);
	if (!link)
		ja(p, lv[0].ip);
	for (int i = 0; i < HS_FANOUT_LEVELS; i++)
		level_block(p, &lv[i], i + 1 < HS_FANOUT_LEVELS ? &lv[i + 1] : NULL, unread, done);

	/* the hash of the innermost packet's words (fanout.h, hs_ident_hash) */
	here(p, done);
	ld_mem(p, M_N);
	jmp(p, BPF_JEQ, 8, v6, -1);
	ld_imm(p, HS_IDENT_SEED);
	for (uint32_t w = 0; w < 3; w++) {
		ldx_mem(p, M_WORDS + w);
		alu_x(p, BPF_XOR);
		alu(p, BPF_MUL, HS_IDENT_PRIME);
	}
	int fin = label(p);
	ja(p, fin);
	here(p, v6);
	ld_imm(p, HS_IDENT_SEED);
	for (uint32_t w = 0; w < 8; w++) {
		ldx_mem(p, M_WORDS + w);
		alu_x(p, BPF_XOR);
		alu(p, BPF_MUL, HS_IDENT_PRIME);
	}
	here(p, fin);
	static const struct { uint32_t shift, mul; } mix[] = {
		{ 16, HS_IDENT_MIX1 }, { 15, HS_IDENT_MIX2 }, { 16, 0 },
	};
	for (size_t i = 0; i < sizeof(mix) / sizeof(mix[0]); i++) {
		tax(p);
		alu(p, BPF_RSH, mix[i].shift);
		alu_x(p, BPF_XOR);
		if (mix[i].mul)
			alu(p, BPF_MUL, mix[i].mul);
	}
	emit(p, BPF_RET | BPF_A, 0, 0, 0);
	here(p, unread);
	emit(p, BPF_RET | BPF_K, 0, 0, 0);
}

/* the link types the program reads: *link, with an Ethernet header */
static bool link_of(int dlt, bool *link)
{
	switch (dlt) {
	case DLT_EN10MB:
		*link = true;
		return true;
	case DLT_RAW:
	case LINKTYPE_RAW:
	case DLT_IPV4:
	case DLT_IPV6:
		*link = false;
		return true;
	default:
		return false;
	}
}

int hs_fanout_prog(int dlt, int32_t base, struct bpf_insn *out, size_t max)
{
	struct prog p = { .out = out, .max = max, .base = base };
	bool link;

	if (!link_of(dlt, &link))
		return -1;
	for (int i = 0; i < MAX_LABELS; i++)
		p.at[i] = -1;
	write_prog(&p, link);	/* where the labels fall */
	p.nlabels = 0;
	p.bad = false;
	write_prog(&p, link);
	return p.bad || p.n > HS_FANOUT_MAX_INSNS ? -1 : (int)p.n;
}

bool hs_fanout_link_ok(int dlt, char *why, size_t len)
{
	bool link;

	if (link_of(dlt, &link))
		return true;
	const char *name = pcap_datalink_val_to_name(dlt);
	snprintf(why, len, "link type %s (%d) is read by one worker", name ? name : "unknown", dlt);
	return false;
}

int hs_fanout_join(pcap_t *const *pcs, unsigned n, int dlt, char *err, size_t errlen)
{
	static struct bpf_insn insns[HS_FANOUT_MAX_INSNS];
	int len = hs_fanout_prog(dlt, SKF_LL_OFF, insns, HS_FANOUT_MAX_INSNS);
	struct sock_fprog fp = { .len = (unsigned short)len, .filter = (struct sock_filter *)insns };
	int arg, id = 0;
	socklen_t alen = sizeof(arg);

	if (!hs_fanout_link_ok(dlt, err, errlen))
		return -1;
	if (len < 0) {
		snprintf(err, errlen, "the fanout program does not fit %d instructions",
			 HS_FANOUT_MAX_INSNS);
		return -1;
	}
	for (unsigned i = 0; i < n; i++) {
		int fd = pcap_fileno(pcs[i]);

		/* the first asks the kernel for a group of its own, the others
		 * join it; the program is the group's */
		arg = i == 0 ? (PACKET_FANOUT_CBPF | PACKET_FANOUT_FLAG_UNIQUEID) << 16 :
			       id | PACKET_FANOUT_CBPF << 16;
		if (setsockopt(fd, SOL_PACKET, PACKET_FANOUT, &arg, sizeof(arg)) < 0) {
			snprintf(err, errlen, "cannot join worker %u to a fanout group: %s", i,
				 strerror(errno));
			return -1;
		}
		if (i == 0) {
			if (getsockopt(fd, SOL_PACKET, PACKET_FANOUT, &arg, &alen) < 0) {
				snprintf(err, errlen, "cannot read the fanout group: %s",
					 strerror(errno));
				return -1;
			}
			id = arg & 0xffff;
			if (setsockopt(fd, SOL_PACKET, PACKET_FANOUT_DATA, &fp, sizeof(fp)) < 0) {
				snprintf(err, errlen, "the kernel refused the fanout program: %s",
					 strerror(errno));
				return -1;
			}
		}
	}
	return 0;
}
