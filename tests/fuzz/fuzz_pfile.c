/* fuzz_pfile.c - any bytes as a capture file through hs_pfile (the pcapng
 * block reader where interfaces differ, libpcap otherwise), every frame
 * decoded in its own interface's link type */
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "decode.h"
#include "pfile.h"
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64], err[PCAP_ERRBUF_SIZE + 512] = "";
	int fd = memfd_create("fuzz.pcapng", 0);

	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size))
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	struct hs_pfile *f = hs_pfile_open(path, NULL, 0, err, sizeof(err));
	if (!f) {
		if (!*err)
			abort();	/* refused without a word */
		close(fd);
		return 0;
	}
	struct pcap_pkthdr *h;
	const u_char *d;
	struct hs_pkt p;
	uint64_t frames, total = 0, given = 0;
	int rc, dlt;

	while ((rc = hs_pfile_next(f, &h, &d)) == 1) {
		given++;
		hs_decode(hs_pfile_dlt(f), d, h->caplen, h->len, 0, &p);
	}
	if (rc == PCAP_ERROR && !*hs_pfile_geterr(f))
		abort();
	for (unsigned i = 0; hs_pfile_interface(f, i, &dlt, &frames); i++)
		total += frames;
	if (total && total != given)
		abort();	/* every frame the block reader gave is counted once */
	hs_pfile_close(f);
	close(fd);
	return 0;
}
