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
#include "stats.h"

pcap_t *hs_pcap_open_file(struct hs_out *o, const char *path, const char *what)
{
	char errbuf[PCAP_ERRBUF_SIZE] = "";
	FILE *fp = fopen(path, "rb");

	if (!fp) {
		out_err(o, "%scannot open '%s': %s", what, path, strerror(errno));
		return NULL;
	}
	pcap_t *pc = pcap_fopen_offline_with_tstamp_precision(fp, PCAP_TSTAMP_PRECISION_NANO,
							      errbuf);
	if (!pc) {
		fclose(fp);
		out_err(o, "%scannot read '%s': %s", what, path, errbuf);
		return NULL;
	}
	int dlt = pcap_datalink(pc);
	if (!hs_decode_linktype_ok(dlt)) {
		const char *name = pcap_datalink_val_to_name(dlt);
		out_err(o, "%scannot decode '%s': unsupported link type %s (%d)", what, path,
			name ? name : "unknown", dlt);
		pcap_close(pc);
		return NULL;
	}
	return pc;
}

uint64_t hs_pcap_ts(const struct pcap_pkthdr *h)
{
	return (uint64_t)h->ts.tv_sec * HS_NS_PER_SEC + (uint64_t)h->ts.tv_usec;
}

int cmd_decode(struct hs_ctx *ctx, int argc, char **argv)
{
	struct pcap_pkthdr *h;
	const u_char *data;
	struct hs_pkt pkt;
	uint32_t frame = 0;
	int rc;

	if (argc != 2)
		return out_err(&ctx->out, "decode needs one capture file");
	const char *path = argv[1];
	pcap_t *pc = hs_pcap_open_file(&ctx->out, path, "");
	if (!pc)
		return HS_CMD_FAIL;
	int dlt = pcap_datalink(pc);

	while ((rc = pcap_next_ex(pc, &h, &data)) == 1) {
		uint32_t wirelen = h->len < h->caplen ? h->caplen : h->len;

		hs_decode(dlt, data, h->caplen, wirelen, hs_pcap_ts(h), &pkt);
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
