/* stats.h - 'stats' on the running capture: the pipeline's hooks
 *
 * When no stats are running ctx->stats is NULL and each hook costs the
 * caller one predictable branch (if (ctx->stats) ...).
 */
#ifndef HS_STATS_H
#define HS_STATS_H

#include <pcap/pcap.h>

#include "decode.h"
#include "out.h"
#include "pfile.h"
#include "tracer.h"

/* open a capture file for reading frame by frame, nanosecond timestamps,
 * link types checked (hs_pfile_open); NULL with "<what>cannot
 * open|read|decode 'PATH': ..." printed (what is "" or a "verb: " prefix) */
struct hs_pfile *hs_pcap_open_file(struct hs_out *o, const char *path, const char *what);
/* a warning for each interface of f whose link type is not decoded, with
 * the frames it had */
void hs_pfile_report(struct hs_out *o, const struct hs_pfile *f, const char *what,
		     const char *path);
/* a frame's capture time from a file opened so */
uint64_t hs_pcap_ts(const struct pcap_pkthdr *h);

/* A capture file read a slice (about 10 ms) per turn of the console's
 * loop, so the console keeps capturing and answering and Ctrl-C stops the
 * read. frame gets each frame decoded (ok: hs_decode succeeded; p->frame is
 * its number from 1) and returns false to stop reading; end gets 0 at the
 * end of the file (or when frame stopped), PCAP_ERROR for a damaged file
 * (the error printed: "<what>'PATH': ...") or 1 when interrupted, and
 * returns the verb's HS_CMD_* status; arg is not used after it. hs_fwalk
 * takes pc (closes it) and returns HS_CMD_PENDING, or HS_CMD_FAIL with an
 * error when there is no loop to read on (arg untouched). */
struct hs_ctx;
typedef bool (*hs_fwalk_frame_cb)(void *arg, struct hs_pkt *p, bool ok);
typedef int (*hs_fwalk_end_cb)(void *arg, int rc);
int hs_fwalk(struct hs_ctx *ctx, struct hs_pfile *pc, const char *what, const char *path,
	     hs_fwalk_frame_cb frame, hs_fwalk_end_cb end, void *arg);

struct hs_stats;

/* a decoded copy the pipeline keeps (its bytes are still there) */
void hs_stats_packet(struct hs_stats *s, const struct hs_pkt *p);
/* a trace closed */
void hs_stats_trace(struct hs_stats *s, const struct hs_trace *t);
/* the capture stopped, its open traces closed: the last windows go out */
void hs_stats_capture_stopped(struct hs_stats *s);

#endif
