/* decode.c - decode FILE: one line per frame, nothing traced or stored
 *
 * Streams the file frame by frame (pcap_next_ex), so its size does not
 * matter. A frame the decoder cannot take apart is a line with its reason,
 * not a failure; a damaged file stops with an error after the good frames.
 */
#include <errno.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "console.h"

int cmd_decode(struct hs_ctx *ctx, int argc, char **argv)
{
	char errbuf[PCAP_ERRBUF_SIZE] = "";
	struct pcap_pkthdr *h;
	const u_char *data;
	struct hs_pkt pkt;
	uint32_t frame = 0;
	int rc;

	if (argc != 2)
		return out_err(&ctx->out, "decode needs one capture file");
	const char *path = argv[1];
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return out_err(&ctx->out, "cannot open '%s': %s", path, strerror(errno));
	pcap_t *pc = pcap_fopen_offline_with_tstamp_precision(fp, PCAP_TSTAMP_PRECISION_NANO,
							      errbuf);
	if (!pc) {
		fclose(fp);
		return out_err(&ctx->out, "cannot read '%s': %s", path, errbuf);
	}
	int dlt = pcap_datalink(pc);
	if (!hs_decode_linktype_ok(dlt)) {
		const char *name = pcap_datalink_val_to_name(dlt);
		out_err(&ctx->out, "cannot decode '%s': unsupported link type %s (%d)", path,
			name ? name : "unknown", dlt);
		pcap_close(pc);
		return HS_CMD_FAIL;
	}

	while ((rc = pcap_next_ex(pc, &h, &data)) == 1) {
		uint64_t ts = (uint64_t)h->ts.tv_sec * HS_NS_PER_SEC + (uint64_t)h->ts.tv_usec;
		uint32_t wirelen = h->len < h->caplen ? h->caplen : h->len;

		hs_decode(dlt, data, h->caplen, wirelen, ts, &pkt);
		pkt.frame = ++frame;
		if (ctx->out.json)
			hs_pkt_json(ctx->out.fp, &pkt);
		else
			hs_pkt_text(ctx->out.fp, &pkt);
	}
	if (rc == PCAP_ERROR) {
		out_err(&ctx->out, "'%s': %s", path, pcap_geterr(pc));
		pcap_close(pc);
		return HS_CMD_FAIL;
	}
	pcap_close(pc);
	return HS_CMD_OK;
}
