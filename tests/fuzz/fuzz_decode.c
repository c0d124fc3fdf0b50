/* fuzz_decode.c - one mirrored frame through hs_decode, both printers and,
 * for control traffic (BGP, RoCEv2, MAC control), every message of it; the
 * decode must be the layer-by-layer decoder's to the byte
 *
 * The first byte picks the link type (one of those hs_decode accepts, or
 * an unsupported one); the rest is the frame. Seeds are the frames of the
 * project's captures (pcap2seeds).
 */
#include <stdio.h>
#include <pcap/pcap.h>

#include "decode.h"
#include "fuzz.h"

static FILE *sink;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	sink = fopen("/dev/null", "w");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hs_pkt p;

	if (size < 1)
		return 0;
	int dlt = fuzz_dlts[data[0] % HS_ARRAY_SIZE(fuzz_dlts)];
	uint32_t caplen = (uint32_t)(size - 1);
	/* an exact-size copy: anything read past caplen is a heap overflow */
	uint8_t *frame = malloc(caplen ? caplen : 1);
	if (!frame)
		abort();
	memcpy(frame, data + 1, caplen);

	int rc = hs_decode(dlt, frame, caplen, caplen + (data[0] >> 4), 1000000000ULL, &p);
	struct hs_pkt g;
	if (hs_decode_general(dlt, frame, caplen, caplen + (data[0] >> 4), 1000000000ULL, &g) != rc ||
	    memcmp(&p, &g, sizeof(p)) != 0)
		abort();	/* the predicted shape decoded otherwise */
	if (rc == 0 && p.l3) {
		/* pointers handed on stay inside the frame */
		if (p.l3 < frame || p.l3 + p.l3_caplen > frame + caplen)
			abort();
		if (p.l4_payload &&
		    (p.l4_payload < frame || p.l4_payload + p.l4_payload_caplen > frame + caplen))
			abort();
	}
	if (rc != 0 && p.error == HS_DERR_NONE)
		abort();
	if (p.ctl) {
		struct hs_ctl_msg m;
		uint32_t off = 0, prev = 0;
		int err, r;

		if (!p.l4_payload || p.l4_payload < frame ||
		    p.l4_payload + p.l4_payload_caplen > frame + caplen)
			abort();
		while ((r = hs_ctl_decode(&p, &off, &m, &err)) == 1) {
			if (off <= prev)
				abort();	/* every message moves on */
			prev = off;
		}
		if (r < 0 && err == HS_CERR_NONE)
			abort();
	}
	if (sink) {
		hs_pkt_text(sink, &p);
		hs_pkt_json(sink, &p);
	}
	free(frame);
	return 0;
}
