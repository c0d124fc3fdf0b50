/* fuzz_probe.c - probe and traceroute specs through their parsers, and
 * every accepted spec crafted with libnet (built, never sent)
 *
 * The first byte chooses probe or traceroute; the rest is the words after
 * the verb, split as the console splits them.
 */
#include <stdio.h>
#include <libnet.h>
#include <pcap/pcap.h>

#include "console.h"
#include "probe.h"
#include "probecmd.h"
#include "runner.h"
#include "fuzz.h"

static struct hs_topo *topo;
static libnet_t *ln;
static uint8_t pkt[65536];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[LIBNET_ERRBUF_SIZE > 256 ? LIBNET_ERRBUF_SIZE : 256];

	(void)argc;
	(void)argv;
	topo = fuzz_topo();
	ln = libnet_init(LIBNET_NONE, NULL, err);
	if (!topo || !ln)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[HS_MAX_WORDS + 1];
	struct hs_probe_spec s;
	char err[512];
	int col, rc;

	if (size < 1)
		return 0;
	char *text = fuzz_str(data + 1, size - 1);
	int argc = hs_split_words(text, argv, HS_MAX_WORDS, &col);
	if (argc < 0)
		goto out;
	argv[argc] = NULL;
	memset(&s, 0, sizeof(s));
	err[0] = '\0';
	if (data[0] & 1)
		rc = hs_traceroute_parse(argc, argv, (data[0] & 2) ? NULL : topo, &s, err, sizeof(err));
	else
		rc = hs_probe_parse(argc, argv, (data[0] & 2) ? NULL : topo, &s, err, sizeof(err));
	if (rc < 0) {
		if (!err[0])
			abort();	/* a refusal always says why */
		goto out;
	}
	if (s.nvia < 0 || s.nvia > HS_PROBE_MAX_VIA)
		abort();
	/* a traceroute sends rounds of max_ttl packets, without end when no
	 * count was given */
	if (s.kind == HS_PROBE_TRACEROUTE ?
	    s.max_ttl < 1 || s.max_ttl > HS_TRACEROUTE_MAX_TTL || s.rounds > HS_PROBE_MAX_COUNT ||
	    (s.rounds && s.count != s.rounds * s.max_ttl) || (!s.rounds && !s.table) :
	    s.count > HS_PROBE_MAX_COUNT)
		abort();
	if (s.kind == HS_PROBE_PLAIN && (s.len && (s.len < hs_probe_min_len(&s) ||
						     s.len > hs_probe_max_len(&s))))
		abort();
	struct hs_probe_pkt pk;
	unsigned n = s.count < 3 ? s.count : 3;
	for (unsigned seq = 0; seq < n || seq == 0; seq++) {
		hs_probe_pkt_init(&s, 0x1234, seq, 1700000000000000000ULL, &pk);
		size_t len = hs_probe_craft(ln, &s, &pk, pkt, sizeof(pkt), err, sizeof(err));
		if (len > sizeof(pkt))
			abort();
		if (len > 0) {
			/* the crafted packet carries its signature back */
			struct hs_pkt p;
			uint32_t id;
			uint64_t sent;
			if (hs_decode(DLT_RAW, pkt, (uint32_t)len, (uint32_t)len, 0, &p) == 0 &&
			    hs_probe_sig_parse(&p, &id, &sent) && id != 0x1234)
				abort();
		}
	}
out:
	free(text);
	return 0;
}
