/* control.h - the control log: recent BGP, RoCEv2 and PAUSE/PFC messages
 *
 * The decoder marks control frames (hs_pkt.ctl); the pipeline publishes
 * those (HS_PK_CONTROL) to the log subscribed by hs_control_subscribe(),
 * which hands them to hs_control_frame(), which decodes their messages
 * (hs_ctl_decode) into a bounded ring of records allocated once, and counts
 * them by kind. A message that cannot be decoded is counted by reason and
 * skipped. The 'control' verb lists the ring newest first. During a capture
 * with a history session open (policy not 'off'), each record is also queued
 * into the history's 'control' table in the current batch.
 */
#ifndef HS_CONTROL_H
#define HS_CONTROL_H

#include "decode.h"

#define HS_CONTROL_RING 4096	/* records kept */

struct hs_ctl_rec {
	uint64_t ts_ns;
	struct hs_addr sw;	/* mirror source (af 0: a plain SPAN copy) */
	struct hs_flowkey key;	/* inner endpoints (BGP, RoCEv2); zero for MAC control */
	struct hs_ctl_msg msg;
};

struct hs_control_stats {
	uint64_t frames[HS_CTL__COUNT];	/* control frames seen */
	uint64_t records[HS_CTL__COUNT];	/* messages decoded */
	uint64_t bgp_type[6];		/* by BGP type; [0] any other type */
	uint64_t roce_ack[5];		/* by enum hs_roce_ack ([0]: no AETH) */
	uint64_t roce_nak[6];		/* NAKs by code; [5] any other code */
	uint64_t roce_cnp;
	uint64_t pause, pfc;		/* MAC control PAUSE, PFC */
	uint64_t errors[HS_CERR__COUNT];	/* undecoded, by reason */
	uint64_t overwritten;		/* records pushed out of the ring */
};

struct hs_control;

struct hs_control *hs_control_new(size_t ring);
void hs_control_free(struct hs_control *c);
void hs_control_clear(struct hs_control *c);

/* decode a marked frame's messages into the ring: the records added (0
 * for a frame with none, or one that does not decode); allocates nothing */
size_t hs_control_frame(struct hs_control *c, const struct hs_pkt *p);

size_t hs_control_count(const struct hs_control *c);	/* records held */
/* i = 0 is the newest; NULL past the end */
const struct hs_ctl_rec *hs_control_at(const struct hs_control *c, size_t i);
const struct hs_control_stats *hs_control_stats(const struct hs_control *c);

struct hs_ctx;

#define HS_CTL_DETAIL_MAX 192
/* the mirroring switch: topology name, else its address; NULL for a plain SPAN copy */
const char *hs_ctl_switch_name(const struct hs_ctx *ctx, const struct hs_ctl_rec *r, char *buf,
			       size_t len);
/* BGP type, RoCEv2 opcode name (or "type-N", "opcode-0xNN"), "pause" or "pfc" */
const char *hs_ctl_kind(const struct hs_ctl_msg *m, char *buf, size_t len);
/* The fields of a message, in the order its line gives them, to a
 * renderer: each with its JSON key (NULL: a text-only word) and its text
 * format (NULL: JSON only). uint's format takes a uint64_t, str's a
 * string; a flag's format is text printed when it is set; list opens the
 * array under key, whose elements have no key, and list(NULL) closes it. */
struct hs_ctl_sink {
	void (*uint)(void *arg, const char *key, const char *fmt, uint64_t v);
	void (*str)(void *arg, const char *key, const char *fmt, const char *v);
	void (*flag)(void *arg, const char *key, const char *fmt, bool v);
	void (*list)(void *arg, const char *key);
	void *arg;
};
void hs_ctl_fields(const struct hs_ctl_msg *m, const struct hs_ctl_sink *sink);
/* the message's fields in one line, as 'control' prints them (and the
 * history keeps them) */
const char *hs_ctl_detail(const struct hs_ctl_msg *m, char *buf, size_t len);
const char *hs_ctl_ipv4_str(uint32_t v, char *buf, size_t len);

/* the context's log subscribes to the pipeline's control frames: made on
 * the first, emptied when a new capture begins; 0, or -1 when the pipeline
 * has no room. Unsubscribing frees the log. */
int hs_control_subscribe(struct hs_ctx *ctx);
void hs_control_unsubscribe(struct hs_ctx *ctx);

#endif
