/* filter.h - analyzer-side filters: BPF (tcpdump syntax) on the inner packet
 *
 * Compiled by libpcap for the raw-IP link type and run with
 * pcap_offline_filter() on the innermost IP header. With no filter every
 * packet is kept; with filters, a packet is kept when any of them matches.
 */
#ifndef HS_FILTER_H
#define HS_FILTER_H

#include "hs.h"
#include "decode.h"

#define HS_FILTER_MAX 32
/* a filter that takes longer to compile is refused (filter.c) */
#define HS_FILTER_COMPILE_NS (3 * HS_NS_PER_SEC)

struct hs_filterset;

struct hs_filterset *hs_filterset_new(void);
void hs_filterset_free(struct hs_filterset *fs);
/* compile and add; returns the new filter's id (>0) or -1 with err set */
int hs_filter_add(struct hs_filterset *fs, const char *expr, char *err, size_t errlen);
int hs_filter_del(struct hs_filterset *fs, int id);	/* 0 or -1 (no such id) */
size_t hs_filter_count(const struct hs_filterset *fs);
/* i-th filter: id, expression, matches so far; false past the end */
bool hs_filter_at(const struct hs_filterset *fs, size_t i, int *id, const char **expr,
		  uint64_t *matches);
/* the filters joined with " or ", for the session record ("" when none) */
const char *hs_filter_summary(struct hs_filterset *fs);
/* true when kept; sets *matched when an explicit filter matched */
bool hs_filter_match(struct hs_filterset *fs, const struct hs_pkt *p, bool *matched);

#endif
