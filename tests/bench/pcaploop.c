/* pcaploop.c - the reference limit: a bare libpcap read loop over a file
 *
 *   pcaploop [-b BYTES] FILE        count frames and bytes, nothing else
 *   pcaploop FILE -w OUT -n COUNT   copy the first COUNT frames to OUT
 *
 * The file is opened the way hopscope opens it (nanosecond precision), and
 * frames are read with pcap_dispatch in batches of the same size, so the
 * difference between the two is hopscope's own work per frame. The second
 * form cuts a slice of a large capture for slower reference tools. -b gives
 * the file a stdio buffer of BYTES (libpcap reads through stdio, whose
 * default buffer is one block), to show what larger reads are worth.
 */
#include <errno.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BATCH 4096	/* the console's frames per loop turn, reading a file */

struct count {
	unsigned long long packets, bytes;
	unsigned sum;		/* touches each frame, as any reader must */
};

static void on_frame(u_char *user, const struct pcap_pkthdr *h, const u_char *bytes)
{
	struct count *c = (struct count *)user;

	c->packets++;
	c->bytes += h->caplen;
	if (h->caplen)
		c->sum += bytes[h->caplen - 1];
}

static int usage(void)
{
	fprintf(stderr, "usage: pcaploop [-b BYTES] FILE [-w OUT -n COUNT]\n");
	return 2;
}

static pcap_t *open_file(const char *path, long bufsize)
{
	char errbuf[PCAP_ERRBUF_SIZE] = "";
	FILE *fp = fopen(path, "rb");
	pcap_t *pc;

	if (!fp) {
		fprintf(stderr, "pcaploop: cannot open '%s': %s\n", path, strerror(errno));
		return NULL;
	}
	/* glibc ignores the size unless it is given the buffer */
	static char *buf;
	if (bufsize > 0 && (!(buf = malloc((size_t)bufsize)) ||
			    setvbuf(fp, buf, _IOFBF, (size_t)bufsize) != 0)) {
		fprintf(stderr, "pcaploop: cannot buffer '%s': %s\n", path, strerror(errno));
		fclose(fp);
		return NULL;
	}
	pc = pcap_fopen_offline_with_tstamp_precision(fp, PCAP_TSTAMP_PRECISION_NANO, errbuf);
	if (!pc) {
		fclose(fp);
		fprintf(stderr, "pcaploop: cannot read '%s': %s\n", path, errbuf);
	}
	return pc;
}

static int slice(pcap_t *pc, const char *in, const char *out, long long count)
{
	pcap_dumper_t *d = pcap_dump_open(pc, out);
	int rc;

	if (!d) {
		fprintf(stderr, "pcaploop: cannot write '%s': %s\n", out, pcap_geterr(pc));
		return 1;
	}
	rc = pcap_loop(pc, (int)count, pcap_dump, (u_char *)d);
	if (rc == PCAP_ERROR)
		fprintf(stderr, "pcaploop: '%s': %s\n", in, pcap_geterr(pc));
	if (pcap_dump_flush(d) < 0) {
		fprintf(stderr, "pcaploop: cannot write '%s': %s\n", out, strerror(errno));
		rc = PCAP_ERROR;
	}
	pcap_dump_close(d);
	return rc == PCAP_ERROR;
}

int main(int argc, char **argv)
{
	const char *in = NULL, *out = NULL;
	long long count = -1;
	long bufsize = 0;
	struct count c = { 0 };
	pcap_t *pc;
	int n, st = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-w") == 0 && i + 1 < argc) {
			out = argv[++i];
		} else if (strcmp(argv[i], "-n") == 0 && i + 1 < argc) {
			char *end;
			errno = 0;
			count = strtoll(argv[++i], &end, 10);
			if (errno || *end || count <= 0 || count > 0x7fffffff) {
				fprintf(stderr, "pcaploop: bad count '%s'\n", argv[i]);
				return 2;
			}
		} else if (strcmp(argv[i], "-b") == 0 && i + 1 < argc) {
			char *end;
			errno = 0;
			bufsize = strtol(argv[++i], &end, 10);
			if (errno || *end || bufsize <= 0 || bufsize > (1L << 30)) {
				fprintf(stderr, "pcaploop: bad buffer size '%s'\n", argv[i]);
				return 2;
			}
		} else if (!in && argv[i][0] != '-') {
			in = argv[i];
		} else {
			return usage();
		}
	}
	if (!in || (out && count < 0) || (!out && count >= 0))
		return usage();
	if (!(pc = open_file(in, bufsize)))
		return 1;
	if (out) {
		st = slice(pc, in, out, count);
		pcap_close(pc);
		return st;
	}
	while ((n = pcap_dispatch(pc, BATCH, on_frame, (u_char *)&c)) > 0)
		;
	if (n == PCAP_ERROR) {
		fprintf(stderr, "pcaploop: '%s': %s\n", in, pcap_geterr(pc));
		st = 1;
	}
	pcap_close(pc);
	printf("packets\t%llu\nbytes\t%llu\nchecksum\t%u\n", c.packets, c.bytes, c.sum);
	return st;
}
