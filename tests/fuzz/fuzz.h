/* fuzz.h - helpers shared by the libFuzzer targets */
#ifndef HS_FUZZ_H
#define HS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "topo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* the input as a NUL-terminated string (embedded NULs end it early) */
static inline char *fuzz_str(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/* the fabric of the bundled sample, for parsers that name switches */
static const char fuzz_topo_text[] =
	"switch spine1 role spine mirror 10.255.0.1 loopback 10.254.0.1\n"
	"switch spine2 role spine mirror 10.255.0.2 loopback 10.254.0.2\n"
	"switch leaf1 role leaf mirror 10.255.0.3 loopback 10.254.0.3\n"
	"switch leaf2 role leaf mirror 10.255.0.4 loopback 10.254.0.4\n"
	"link leaf1 spine1 spine1 leaf1\n"
	"link leaf1 spine2 spine2 leaf1\n"
	"link leaf2 spine1 spine1 leaf2\n"
	"link leaf2 spine2 spine2 leaf2\n"
	"subnet leaf1 10.1.1.0/24\n"
	"host h1 addr 10.1.1.11 leaf leaf1\n"
	"subnet leaf2 10.1.2.0/24\n"
	"host h3 addr 10.1.2.11 leaf leaf2\n"
	"analyzer 10.255.0.254 iface hs-mirror\n";

/* that fabric parsed, for a target's LLVMFuzzerInitialize; aborts if it fails */
static inline struct hs_topo *fuzz_topo(void)
{
	char err[256];
	struct hs_topo *t = hs_topo_parse(fuzz_topo_text, "fuzz.topo", err, sizeof(err));

	if (!t)
		abort();
	return t;
}

/* fuzz_decode: the first byte of an input picks one of these link types
 * (DLT_EN10MB, DLT_LINUX_SLL, DLT_LINUX_SLL2, DLT_RAW, LINKTYPE_RAW,
 * DLT_IPV4, DLT_IPV6, and DLT_NULL, which hs_decode refuses) */
static const int fuzz_dlts[] = { 1, 113, 276, 12, 101, 228, 229, 0 };

#endif
