/* fwalk.h - a verb that reads a capture file: pending while the engine's
 * reader (freader.h) gives it the file's frames, a slice per turn of the loop
 */
#ifndef HS_FWALK_H
#define HS_FWALK_H

#include <stdbool.h>

#include "decode.h"

struct hs_ctx;

/* Read path, a slice (about 10 ms) per turn of the console's loop, so the
 * console keeps capturing and answering and Ctrl-C stops the read. frame
 * gets each frame decoded (ok: hs_decode succeeded; p->frame is its number
 * from 1) and returns false to stop reading; end gets 0 at the end of the
 * file (or when frame stopped), PCAP_ERROR for a damaged file (the error
 * printed: "<what>'PATH': ...") or 1 when interrupted, and returns the
 * verb's HS_CMD_* status; arg is not used after it. Returns HS_CMD_PENDING,
 * or HS_CMD_FAIL with an error when the file cannot be read ("<what>cannot
 * open|read|decode 'PATH': ...") or there is no loop to read on (arg
 * untouched). what is "" or a "verb: " prefix. A warning is printed for
 * each interface of the file whose link type is not decoded. */
typedef bool (*hs_fwalk_frame_cb)(void *arg, struct hs_pkt *p, bool ok);
typedef int (*hs_fwalk_end_cb)(void *arg, int rc);
int hs_fwalk(struct hs_ctx *ctx, const char *what, const char *path, hs_fwalk_frame_cb frame,
	     hs_fwalk_end_cb end, void *arg);

#endif
