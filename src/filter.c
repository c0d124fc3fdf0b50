/* filter.c - analyzer-side BPF filters on the innermost IP packet
 *
 * Expressions use tcpdump syntax and are compiled once by libpcap for the
 * raw-IP link type, then run with pcap_offline_filter() on the inner header
 * the decoder found, so "tcp port 80" means the mirrored packet, not the
 * GRE/ERSPAN envelope it came in.
 */
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"

struct hs_filter {
	int id;
	char *expr;
	struct bpf_program prog;
	uint64_t matches;
};

struct hs_filterset {
	pcap_t *dead;		/* compiles for DLT_RAW; never captures */
	struct hs_filter f[HS_FILTER_MAX];
	size_t n;
	int next_id;
	char *summary;		/* cached hs_filter_summary(), NULL when stale */
};

struct hs_filterset *hs_filterset_new(void)
{
	struct hs_filterset *fs = hs_xcalloc(1, sizeof(*fs));

	fs->dead = pcap_open_dead(DLT_RAW, 65535);
	if (!fs->dead) {
		free(fs);
		return NULL;
	}
	fs->next_id = 1;
	return fs;
}

void hs_filterset_free(struct hs_filterset *fs)
{
	if (!fs)
		return;
	for (size_t i = 0; i < fs->n; i++) {
		pcap_freecode(&fs->f[i].prog);
		free(fs->f[i].expr);
	}
	free(fs->summary);
	pcap_close(fs->dead);
	free(fs);
}

int hs_filter_add(struct hs_filterset *fs, const char *expr, char *err, size_t errlen)
{
	struct bpf_program prog;

	if (!expr || !*expr) {
		snprintf(err, errlen, "empty filter expression");
		return -1;
	}
	if (fs->n >= HS_FILTER_MAX) {
		snprintf(err, errlen, "too many filters (at most %d)", HS_FILTER_MAX);
		return -1;
	}
	if (pcap_compile(fs->dead, &prog, expr, 1, PCAP_NETMASK_UNKNOWN) < 0) {
		snprintf(err, errlen, "bad filter '%s': %s", expr, pcap_geterr(fs->dead));
		return -1;
	}
	struct hs_filter *f = &fs->f[fs->n++];
	f->id = fs->next_id++;
	f->expr = hs_xstrdup(expr);
	f->prog = prog;
	f->matches = 0;
	free(fs->summary);
	fs->summary = NULL;
	return f->id;
}

int hs_filter_del(struct hs_filterset *fs, int id)
{
	for (size_t i = 0; i < fs->n; i++) {
		if (fs->f[i].id != id)
			continue;
		pcap_freecode(&fs->f[i].prog);
		free(fs->f[i].expr);
		memmove(&fs->f[i], &fs->f[i + 1], (fs->n - i - 1) * sizeof(fs->f[0]));
		fs->n--;
		free(fs->summary);
		fs->summary = NULL;
		return 0;
	}
	return -1;
}

size_t hs_filter_count(const struct hs_filterset *fs)
{
	return fs->n;
}

bool hs_filter_at(const struct hs_filterset *fs, size_t i, int *id, const char **expr,
		  uint64_t *matches)
{
	if (i >= fs->n)
		return false;
	if (id)
		*id = fs->f[i].id;
	if (expr)
		*expr = fs->f[i].expr;
	if (matches)
		*matches = fs->f[i].matches;
	return true;
}

const char *hs_filter_summary(struct hs_filterset *fs)
{
	if (fs->n == 0)
		return "";
	if (fs->summary)
		return fs->summary;
	if (fs->n == 1) {
		fs->summary = hs_xstrdup(fs->f[0].expr);
		return fs->summary;
	}
	/* "(a) or (b)": still one valid expression */
	size_t len = 1;
	for (size_t i = 0; i < fs->n; i++)
		len += strlen(fs->f[i].expr) + 6;
	char *s = hs_xcalloc(1, len), *p = s;
	for (size_t i = 0; i < fs->n; i++)
		p += sprintf(p, "%s(%s)", i ? " or " : "", fs->f[i].expr);
	fs->summary = s;
	return s;
}

/* out of line: with no filter set, hs_filter_match is a test and a return
 * for every copy, without this loop's register saves */
static __attribute__((noinline)) bool match_set(struct hs_filterset *fs, const struct hs_pkt *p,
						bool *matched)
{
	struct pcap_pkthdr h;
	bool any = false;

	if (!(p->have & HS_HAVE_IP) || !p->l3)
		return false;
	memset(&h, 0, sizeof(h));
	h.caplen = p->l3_caplen;
	h.len = p->len > p->l3_caplen ? p->len : p->l3_caplen;
	for (size_t i = 0; i < fs->n; i++) {
		if (pcap_offline_filter(&fs->f[i].prog, &h, p->l3)) {
			fs->f[i].matches++;
			any = true;
		}
	}
	if (matched)
		*matched = any;
	return any;
}

bool hs_filter_match(struct hs_filterset *fs, const struct hs_pkt *p, bool *matched)
{
	if (matched)
		*matched = false;
	if (fs->n == 0)
		return true;
	return match_set(fs, p, matched);
}
