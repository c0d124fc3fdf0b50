/* test_pcapng.c - the pcapng writer, byte by byte: block types and lengths
 * (leading equals trailing, a multiple of 4), option layout and padding,
 * nanosecond timestamps, and write errors */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "pcapng.h"

static uint32_t u32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

static uint16_t u16(const uint8_t *p)
{
	uint16_t v;
	memcpy(&v, p, 2);
	return v;
}

/* walk the blocks of buf: every one well formed; returns how many */
static int walk(const uint8_t *buf, size_t len, uint32_t *types, int max)
{
	size_t off = 0;
	int n = 0;

	while (off < len) {
		assert_true(off + 12 <= len);
		uint32_t blen = u32(buf + off + 4);
		assert_true(blen >= 12);
		assert_int_equal(blen % 4, 0);
		assert_true(off + blen <= len);
		assert_int_equal(u32(buf + off + blen - 4), blen);	/* trailing length */
		if (n < max)
			types[n] = u32(buf + off);
		n++;
		off += blen;
	}
	assert_int_equal(off, len);
	return n;
}

static void test_header_blocks(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	uint32_t types[4];

	(void)state;
	assert_int_equal(hs_pcapng_begin(fp, "hs", HS_LINKTYPE_RAW, 65535), 0);
	fclose(fp);
	const uint8_t *b = (const uint8_t *)buf;
	assert_int_equal(walk(b, len, types, 4), 2);
	assert_int_equal(types[0], HS_PCAPNG_SHB);
	assert_int_equal(types[1], HS_PCAPNG_IDB);

	/* SHB: magic, version 1.0, section length -1, shb_userappl "hs" padded */
	assert_int_equal(u32(b + 4), 40);
	assert_int_equal(u32(b + 8), HS_PCAPNG_MAGIC);
	assert_int_equal(u16(b + 12), 1);
	assert_int_equal(u16(b + 14), 0);
	assert_int_equal(u32(b + 16), 0xffffffffU);
	assert_int_equal(u32(b + 20), 0xffffffffU);
	assert_int_equal(u16(b + 24), 4);	/* shb_userappl */
	assert_int_equal(u16(b + 26), 2);
	assert_memory_equal(b + 28, "hs\0\0", 4);
	assert_int_equal(u32(b + 32), 0);	/* opt_endofopt */

	/* IDB: link type, snap length, if_tsresol 9 */
	const uint8_t *i = b + 40;
	assert_int_equal(u32(i + 4), 32);
	assert_int_equal(u16(i + 8), HS_LINKTYPE_RAW);
	assert_int_equal(u16(i + 10), 0);
	assert_int_equal(u32(i + 12), 65535);
	assert_int_equal(u16(i + 16), 9);
	assert_int_equal(u16(i + 18), 1);
	assert_int_equal(i[20], 9);
	assert_memory_equal(i + 21, "\0\0\0", 3);
	assert_int_equal(u32(i + 24), 0);
	free(buf);

	/* without an application name the SHB has only the end of options */
	fp = open_memstream(&buf, &len);
	assert_int_equal(hs_pcapng_begin(fp, NULL, 1, 262144), 0);
	fclose(fp);
	b = (const uint8_t *)buf;
	assert_int_equal(u32(b + 4), 32);
	assert_int_equal(walk(b, len, types, 4), 2);
	free(buf);
}

static void test_packet_block(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	uint8_t pkt[45];
	uint32_t types[8];
	uint64_t ts = 1795336564595678123ULL;

	(void)state;
	for (size_t k = 0; k < sizeof(pkt); k++)
		pkt[k] = (uint8_t)(k + 1);
	/* 45 bytes of data (3 of padding), a 5-byte comment (3 of padding) */
	assert_int_equal(hs_pcapng_packet(fp, ts, pkt, 45, 1500, "hop 1"), 0);
	/* 4 bytes, no comment: no options at all */
	assert_int_equal(hs_pcapng_packet(fp, ts + 1, pkt, 4, 4, NULL), 0);
	/* an empty comment is no comment */
	assert_int_equal(hs_pcapng_packet(fp, ts + 2, pkt, 1, 0, ""), 0);
	fclose(fp);
	const uint8_t *b = (const uint8_t *)buf;
	assert_int_equal(walk(b, len, types, 8), 3);
	for (int k = 0; k < 3; k++)
		assert_int_equal(types[k], HS_PCAPNG_EPB);

	uint32_t blen = u32(b + 4);
	assert_int_equal(blen, 28 + 48 + 12 + 4 + 4);
	assert_int_equal(u32(b + 8), 0);			/* interface 0 */
	assert_int_equal(u32(b + 12), (uint32_t)(ts >> 32));
	assert_int_equal(u32(b + 16), (uint32_t)ts);
	assert_int_equal(u32(b + 20), 45);
	assert_int_equal(u32(b + 24), 1500);
	assert_memory_equal(b + 28, pkt, 45);
	assert_memory_equal(b + 28 + 45, "\0\0\0", 3);
	const uint8_t *o = b + 28 + 48;
	assert_int_equal(u16(o), 1);				/* opt_comment */
	assert_int_equal(u16(o + 2), 5);
	assert_memory_equal(o + 4, "hop 1\0\0\0", 8);
	assert_int_equal(u32(o + 12), 0);			/* opt_endofopt */

	const uint8_t *b2 = b + blen;
	assert_int_equal(u32(b2 + 4), 28 + 4 + 4);
	assert_int_equal(u32(b2 + 16), (uint32_t)(ts + 1));
	const uint8_t *b3 = b2 + u32(b2 + 4);
	assert_int_equal(u32(b3 + 4), 28 + 4 + 4);
	assert_int_equal(u32(b3 + 20), 1);
	assert_int_equal(u32(b3 + 24), 1);	/* original length never below captured */
	free(buf);
}

/* more interfaces after the first, and packets on each */
static void test_interfaces(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	uint8_t pkt[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	uint32_t types[8];

	(void)state;
	assert_int_equal(hs_pcapng_begin(fp, NULL, 1, 262144), 0);
	assert_int_equal(hs_pcapng_interface(fp, 113, 1500), 0);
	assert_int_equal(hs_pcapng_packet_on(fp, 1, 9, pkt, 8, 8, NULL), 0);
	assert_int_equal(hs_pcapng_packet(fp, 10, pkt, 8, 8, NULL), 0);
	fclose(fp);
	const uint8_t *b = (const uint8_t *)buf;
	assert_int_equal(walk(b, len, types, 8), 5);
	assert_int_equal(types[1], HS_PCAPNG_IDB);
	assert_int_equal(types[2], HS_PCAPNG_IDB);
	const uint8_t *i = b + 32 + u32(b + 32 + 4);	/* the second IDB */
	assert_int_equal(u16(i + 8), 113);
	assert_int_equal(u32(i + 12), 1500);
	assert_int_equal(i[20], 9);			/* nanoseconds too */
	const uint8_t *e = i + u32(i + 4);
	assert_int_equal(u32(e), HS_PCAPNG_EPB);
	assert_int_equal(u32(e + 8), 1);		/* on interface 1 */
	e += u32(e + 4);
	assert_int_equal(u32(e + 8), 0);
	free(buf);
}

static void test_write_error(void **state)
{
	FILE *fp = fopen("/dev/full", "w");
	uint8_t pkt[64] = { 0x45 };

	(void)state;
	if (!fp)
		skip();
	setvbuf(fp, NULL, _IONBF, 0);
	assert_int_equal(hs_pcapng_begin(fp, "hs", HS_LINKTYPE_RAW, 65535), -1);
	assert_int_equal(hs_pcapng_packet(fp, 1, pkt, sizeof(pkt), sizeof(pkt), "x"), -1);
	fclose(fp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header_blocks),
		cmocka_unit_test(test_packet_block),
		cmocka_unit_test(test_interfaces),
		cmocka_unit_test(test_write_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
