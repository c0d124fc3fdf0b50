/* fuzz_proto.c - bytes from an attach socket through the frame reader
 *
 * The first byte sets how many bytes arrive per read (1 to 256), as a
 * socket hands them over; the rest is the stream. Every frame taken must
 * be whole and of a known type; after a malformed one nothing is taken.
 */
#include <stdio.h>

#include "fuzz.h"
#include "proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hs_proto_rd r;
	struct hs_frame f;
	char err[128], version[64];
	uint8_t proto, flags;
	bool bad = false;

	if (size < 1)
		return 0;
	size_t chunk = (size_t)data[0] + 1;
	data++;
	size--;
	hs_proto_rd_init(&r);
	for (size_t i = 0; i < size; i += chunk) {
		hs_proto_rd_feed(&r, data + i, size - i < chunk ? size - i : chunk);
		int rc;
		while ((rc = hs_proto_rd_next(&r, &f, err, sizeof(err))) == 1) {
			if (bad || f.type < HS_FR_HELLO || f.type > HS_FR_LAST ||
			    f.len > HS_PROTO_MAX - 1 || f.data < r.buf || f.data + f.len > r.buf + r.len)
				abort();
			if (f.type == HS_FR_HELLO &&
			    hs_hello_parse(&f, &proto, &flags, version, sizeof(version)) == 0 &&
			    strlen(version) >= sizeof(version))
				abort();
		}
		if (rc < 0) {
			if (!strstr(err, "frame"))
				abort();
			bad = true;
		}
	}
	hs_proto_rd_free(&r);
	return 0;
}
