/* freader.h - a capture file read on the loop, a slice per turn
 *
 * The one way a capture file is read: by the capture (-r, 'capture start
 * FILE'), 'decode', 'stats ... file' and 'export pcap'. The file is opened
 * with hs_pfile_open (pcap, pcapng, pcapng mixing link types); each turn of
 * the loop reads one slice of it, so the loop keeps capturing and answering
 * while a file of any size is read, and its owner can stop it between two
 * slices. Frames go to the owner either as libpcap gives them (the
 * capture's pipeline decodes them itself) or decoded, one struct hs_pkt
 * each. Nothing is printed: errors and warnings come back as text, through
 * the end callback and hs_freader_unsupported. Nothing is allocated per
 * frame.
 */
#ifndef HS_FREADER_H
#define HS_FREADER_H

#include <pcap/pcap.h>
#include <uv.h>

#include "decode.h"
#include "pfile.h"

struct hs_freader;

struct hs_freader_ops {
	/* Either raw: each frame as hs_pfile_dispatch gives it (user is arg),
	 * at most batch frames a slice ... */
	pcap_handler raw;
	unsigned batch;
	/* ... or decoded: each frame through hs_decode (ok: it succeeded;
	 * p->frame is its number from 1), for about slice_ns a slice; false
	 * stops the reading (end gets 0) */
	bool (*pkt)(void *arg, struct hs_pkt *p, bool ok);
	uint64_t slice_ns;
	/* after the frames of each slice (may be NULL) */
	void (*slice)(void *arg);
	/* The reading is over by itself: rc 0 at the end of the file (or when
	 * pkt stopped it), PCAP_ERROR when the file is damaged after the frames
	 * given, err then "'PATH': what is wrong". The reader is still open in
	 * it and reads no more: the owner closes it (hs_freader_close), there
	 * or later. Not called when the owner closes it first. */
	void (*end)(void *arg, int rc, const char *err);
	void *arg;
};

/* Open path for reading on loop. buf (may be NULL) of buflen bytes becomes
 * its stdio buffer and must outlive the reader. NULL with err set as
 * hs_pfile_open sets it ("cannot open|read|decode 'PATH': ..."). */
struct hs_freader *hs_freader_open(uv_loop_t *loop, const char *path, char *buf,
				   size_t buflen, char *err, size_t errlen);
/* read it, a slice per turn of the loop, to ops (copied) */
void hs_freader_start(struct hs_freader *r, const struct hs_freader_ops *ops);
/* stop reading (no end callback), close the file; r is freed once the loop
 * has let its handle go. Not from inside raw or pkt (pkt returns false to
 * stop). NULL is nothing. */
void hs_freader_close(struct hs_freader *r);

/* the file being read: its link types, interfaces and errors (pfile.h) */
struct hs_pfile *hs_freader_file(const struct hs_freader *r);

/* From i on, the next interface of the file whose link type hopscope does
 * not decode: false when there is none; else msg is "'PATH': interface N
 * has link type ... (unsupported-linktype)" and *i the one after it. */
bool hs_freader_unsupported(const struct hs_freader *r, unsigned *i, char *msg, size_t len);

/* a frame's capture time from a file opened so (nanoseconds in tv_usec) */
uint64_t hs_pcap_ts(const struct pcap_pkthdr *h);

#endif
