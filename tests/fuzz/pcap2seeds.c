/* pcap2seeds.c - frames of capture files as fuzz_decode inputs
 *
 *   pcap2seeds OUTDIR MAX FILE...
 *
 * writes up to MAX frames of each FILE (pcap or pcapng) as OUTDIR/NAME-N:
 * one byte naming the link type (its index in fuzz_dlts), then the frame.
 * Files of other link types are skipped.
 */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <pcap/pcap.h>

#include "hs.h"
#include "fuzz.h"

int main(int argc, char **argv)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	int status = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: pcap2seeds OUTDIR MAX FILE...\n");
		return 2;
	}
	long max = strtol(argv[2], NULL, 10);
	for (int i = 3; i < argc; i++) {
		pcap_t *pc = pcap_open_offline(argv[i], errbuf);
		if (!pc) {
			fprintf(stderr, "pcap2seeds: cannot open '%s': %s\n", argv[i], errbuf);
			status = 1;
			continue;
		}
		int dlt = pcap_datalink(pc), idx = -1;
		for (size_t k = 0; k < HS_ARRAY_SIZE(fuzz_dlts); k++)
			if (fuzz_dlts[k] == dlt)
				idx = (int)k;
		char *copy = hs_xstrdup(argv[i]);
		const char *name = basename(copy);
		struct pcap_pkthdr *h;
		const u_char *d;
		for (long n = 0; idx >= 0 && n < max && pcap_next_ex(pc, &h, &d) == 1; n++) {
			char path[4096];
			snprintf(path, sizeof(path), "%s/%s-%ld", argv[1], name, n);
			FILE *fp = fopen(path, "wb");
			if (!fp) {
				fprintf(stderr, "pcap2seeds: cannot create '%s': %s\n", path,
					strerror(errno));
				status = 1;
				break;
			}
			fputc(idx, fp);
			fwrite(d, 1, h->caplen, fp);
			fclose(fp);
		}
		free(copy);
		pcap_close(pc);
	}
	return status;
}
