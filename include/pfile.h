/* pfile.h - capture files frame by frame, whatever interfaces they mix
 *
 * libpcap reads pcap and pcapng files, but refuses a pcapng file whose
 * interfaces differ in link type or snapshot length (what mergecap makes of
 * two hosts' captures). Such a file is read here by a small pcapng block
 * reader instead: every frame with its own interface's link type and
 * timestamp resolution. Every other file goes to libpcap, which reads it
 * as ever. Which one reads a pcapng file is decided from the blocks before
 * its first packet, where capture tools put the interfaces.
 *
 * Frames come as libpcap gives them (a pcap_pkthdr with nanoseconds in
 * tv_usec), through hs_pfile_next or hs_pfile_dispatch; hs_pfile_dlt is the
 * link type of the frame just given. A frame of an interface whose link
 * type hopscope does not decode is given all the same (hs_decode names it
 * unsupported-linktype) and counted on its interface (hs_pfile_interface).
 * Nothing is allocated per frame.
 */
#ifndef HS_PFILE_H
#define HS_PFILE_H

#include <pcap/pcap.h>
#include <stdio.h>

#include "hs.h"

struct hs_pfile;

/* Open path. buf (may be NULL) of buflen bytes becomes its stdio buffer and
 * must outlive the file. NULL with err set ("cannot open|read|decode 'PATH':
 * ...") when it cannot be opened, is no capture file, or none of the
 * interfaces described before its first frame has a link type hopscope
 * decodes. */
struct hs_pfile *hs_pfile_open(const char *path, char *buf, size_t buflen, char *err,
			       size_t errlen);
void hs_pfile_close(struct hs_pfile *f);

/* as pcap_next_ex: 1 with a frame, PCAP_ERROR_BREAK at the end, PCAP_ERROR
 * when the file is damaged (hs_pfile_geterr says where) */
int hs_pfile_next(struct hs_pfile *f, struct pcap_pkthdr **h, const u_char **data);
/* as pcap_dispatch: up to cnt frames to cb; their number, 0 at the end,
 * PCAP_ERROR when damaged (the frames before it were given) */
int hs_pfile_dispatch(struct hs_pfile *f, int cnt, pcap_handler cb, u_char *user);
/* the link type of the frame just given (before any: the first interface's) */
int hs_pfile_dlt(const struct hs_pfile *f);
/* a regular file, which another reader may open and read from its start
 * (a FIFO, a terminal or a pipe is read by one reader: the first one's
 * reads are gone for the others) */
bool hs_pfile_regular(const struct hs_pfile *f);
/* the frames may differ in link type (the block reader reads the file): when
 * false, hs_pfile_dlt is the same for every frame */
bool hs_pfile_mixed(const struct hs_pfile *f);
const char *hs_pfile_geterr(struct hs_pfile *f);

/* The interfaces the file described so far, numbered from 0 across its
 * sections: false past the last. *dlt its link type, *frames those given. */
bool hs_pfile_interface(const struct hs_pfile *f, unsigned i, int *dlt, uint64_t *frames);

#endif
