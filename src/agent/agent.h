/* agent.h - hs-agent internals: ERSPAN encapsulation and IP-in-IP checks
 *
 * The agent runs inside one switch namespace of the lab fabric. Netfilter
 * NFLOG hands it the packets the switch's mirror rules matched; it wraps
 * each one in GRE + ERSPAN (type III by default, type II on request) and
 * sends it to the analyzer. It also strips the outer header of IP-in-IP
 * packets addressed to the switch loopback and hands the inner packet to
 * the kernel through a TUN device, which forwards it as if it had arrived.
 */
#ifndef HS_AGENT_H
#define HS_AGENT_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#define AG_GRE_ERSPAN2	0x88BE
#define AG_GRE_ERSPAN3	0x22EB
#define AG_SESSION_MAX	1023		/* ERSPAN session ids are 10 bits */

#define AG_GRE_LEN	8		/* flags/proto + sequence number */
#define AG_ERSPAN2_LEN	8
#define AG_ERSPAN3_LEN	12
#define AG_PLATFORM_LEN	8		/* platform-specific subheader (O bit) */
#define AG_ETH_LEN	14
/* room taken in front of the mirrored packet, largest case */
#define AG_ENCAP_MAX	(AG_GRE_LEN + AG_ERSPAN3_LEN + AG_PLATFORM_LEN + AG_ETH_LEN)

struct ag_erspan {
	int type;			/* 2 or 3 */
	uint32_t seq[AG_SESSION_MAX + 1];	/* next GRE sequence number per session */
};

/* what to put around one mirrored packet */
struct ag_copy {
	uint16_t session;
	uint64_t now_ns;		/* switch CLOCK_REALTIME, nanoseconds */
	const uint8_t *macs;		/* 12 bytes: destination then source, or NULL */
	uint32_t port;			/* input interface index */
	const uint8_t *pkt;		/* the mirrored IP packet */
	size_t len;
};

void ag_erspan_init(struct ag_erspan *e, int type);

/* Write GRE + ERSPAN + Ethernet + packet into out (the IP payload of the
 * outer packet). A packet that would make the result longer than max is cut
 * and the ERSPAN T bit set (*truncated true). Returns the length written, or
 * 0 when the copy cannot be encapsulated (bad session, IP version, room). */
size_t ag_erspan_build(struct ag_erspan *e, uint8_t *out, size_t max,
		       const struct ag_copy *c, bool *truncated);

/* "hs:N" -> session N (0..1023); a NULL or empty prefix gives the default
 * session 1. Returns -1 for anything else. */
int ag_session_from_prefix(const char *prefix);

/* An IPv4 packet of protocol 4 addressed to loopback (network order): the
 * inner IPv4 packet's offset and length inside it. 0, or -1 when the packet
 * is not a well-formed IP-in-IP packet for this switch. */
int ag_ipip_inner(const uint8_t *p, size_t len, uint32_t loopback,
		  size_t *inner_off, size_t *inner_len);

/* --sonic: configuration from the switch's CONFIG_DB (sonic.c) */
struct ag_sonic_cfg {
	const char *sock;		/* the switch's redis, a Unix socket */
	unsigned group;			/* the NFLOG group the rules log to */
	uint32_t loopback;		/* network order: the decap address */
	bool *decap;			/* set while a TUNNEL row asks for decapsulation */
	void (*log)(void *arg, const char *msg);
	void *arg;
};

struct uv_loop_s;

/* connect, program the switch from its rows, and follow their changes;
 * -1 with a message on stderr when the redis cannot be reached */
int ag_sonic_start(struct uv_loop_s *loop, const struct ag_sonic_cfg *cfg);
void ag_sonic_stop(void);

/* An ACL rule's fields (name, value, name, value...) as iptables match
 * words; -1 when a field has no netfilter form or a value is not valid. */
int ag_sonic_match(const char *const *f, size_t nf, char *out, size_t len);

#endif
