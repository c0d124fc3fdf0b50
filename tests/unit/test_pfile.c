/* test_pfile.c - capture files whose pcapng interfaces differ (link type,
 * snapshot length, timestamp resolution and offset, byte order, sections):
 * each frame with its own interface's link type and time; blocks skipped,
 * damage and undescribed interfaces named with their place in the file */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "pfile.h"

/* ---- a pcapng file written byte by byte, in either byte order ---------------- */

struct nb {
	uint8_t b[4096];
	size_t n, start;
	bool be;
};

static void p8(struct nb *w, uint8_t v)
{
	assert_true(w->n < sizeof(w->b));
	w->b[w->n++] = v;
}

static void p16(struct nb *w, uint16_t v)
{
	if (w->be) {
		p8(w, (uint8_t)(v >> 8));
		p8(w, (uint8_t)v);
	} else {
		p8(w, (uint8_t)v);
		p8(w, (uint8_t)(v >> 8));
	}
}

static void p32(struct nb *w, uint32_t v)
{
	if (w->be) {
		p16(w, (uint16_t)(v >> 16));
		p16(w, (uint16_t)v);
	} else {
		p16(w, (uint16_t)v);
		p16(w, (uint16_t)(v >> 16));
	}
}

static void block(struct nb *w, uint32_t type)
{
	w->start = w->n;
	p32(w, type);
	p32(w, 0);		/* its length, set by end() */
}

static void end(struct nb *w)
{
	while (w->n % 4)
		p8(w, 0);
	uint32_t len = (uint32_t)(w->n - w->start + 4);
	size_t keep = w->n;
	w->n = w->start + 4;
	p32(w, len);
	w->n = keep;
	p32(w, len);
}

static void shb(struct nb *w, bool be)
{
	w->be = be;
	block(w, 0x0A0D0D0A);
	p32(w, 0x1A2B3C4D);
	p16(w, 1);
	p16(w, 0);
	p32(w, 0xffffffff);
	p32(w, 0xffffffff);
	end(w);
}

/* res: the if_tsresol byte, 0 for none (microseconds); offset: if_tsoffset */
static void idb(struct nb *w, uint16_t linktype, uint32_t snaplen, uint8_t res, int64_t offset)
{
	block(w, 1);
	p16(w, linktype);
	p16(w, 0);
	p32(w, snaplen);
	if (res) {
		p16(w, 9);
		p16(w, 1);
		p32(w, (uint32_t)res << (w->be ? 24 : 0));
	}
	if (offset) {
		uint64_t o = (uint64_t)offset;
		p16(w, 14);
		p16(w, 8);
		if (w->be) {
			p32(w, (uint32_t)(o >> 32));
			p32(w, (uint32_t)o);
		} else {
			p32(w, (uint32_t)o);
			p32(w, (uint32_t)(o >> 32));
		}
	}
	p16(w, 0);
	p16(w, 0);
	end(w);
}

static void epb(struct nb *w, uint32_t ifn, uint64_t ts, const uint8_t *d, uint32_t n,
		uint32_t wire)
{
	block(w, 6);
	p32(w, ifn);
	p32(w, (uint32_t)(ts >> 32));
	p32(w, (uint32_t)ts);
	p32(w, n);
	p32(w, wire);
	for (uint32_t i = 0; i < n; i++)
		p8(w, d[i]);
	end(w);
}

static char *save(const struct nb *w, size_t n)
{
	char *path = strdup("/tmp/hs-test-pfile.XXXXXX");
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, w->b, n), (ssize_t)n);
	close(fd);
	return path;
}

static const uint8_t eth[20] = { 2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00, 0x45 };
static const uint8_t raw[8] = { 0x45, 0, 0, 8, 1, 2, 3, 4 };
static const uint8_t usb[12] = { 'u', 's', 'b' };

/* Ethernet in microseconds ten seconds on, raw IP in 1/1024 s with another
 * snapshot length, USB; a name resolution block between, a simple packet
 * block, an interface statistics block at the end */
static size_t mixed(struct nb *w, bool be)
{
	memset(w, 0, sizeof(*w));
	shb(w, be);
	idb(w, 1, 65535, 0, 10);
	idb(w, 101, 128, 0x8a, 0);
	idb(w, 189, 1024, 9, 0);
	epb(w, 0, 1000007, eth, sizeof(eth), 60);
	block(w, 4);		/* name resolution: skipped */
	p32(w, 0);
	end(w);
	epb(w, 1, 1024 * 5 + 512, raw, sizeof(raw), sizeof(raw));
	block(w, 3);		/* simple packet block: interface 0 */
	p32(w, sizeof(eth));
	for (size_t i = 0; i < sizeof(eth); i++)
		p8(w, eth[i]);
	end(w);
	epb(w, 2, 42, usb, sizeof(usb), sizeof(usb));
	block(w, 5);		/* interface statistics: skipped */
	p32(w, 0);
	p32(w, 0);
	p32(w, 0);
	end(w);
	return w->n;
}

static void want(struct hs_pfile *f, int dlt, uint64_t ns, const uint8_t *d, uint32_t n,
		 uint32_t wire)
{
	struct pcap_pkthdr *h;
	const u_char *data;

	assert_int_equal(hs_pfile_next(f, &h, &data), 1);
	assert_int_equal(hs_pfile_dlt(f), dlt);
	assert_int_equal((uint64_t)h->ts.tv_sec * 1000000000u + (uint64_t)h->ts.tv_usec, ns);
	assert_int_equal(h->caplen, n);
	assert_int_equal(h->len, wire);
	assert_memory_equal(data, d, n);
}

static void check_mixed(bool be)
{
	struct nb w;
	char err[512];
	size_t n = mixed(&w, be);
	char *path = save(&w, n);
	struct hs_pfile *f = hs_pfile_open(path, NULL, 0, err, sizeof(err));
	struct pcap_pkthdr *h;
	const u_char *data;
	uint64_t frames = 0;
	int dlt = -1;

	assert_non_null(f);
	assert_true(hs_pfile_mixed(f));
	assert_int_equal(hs_pfile_dlt(f), 1);
	want(f, 1, 11000007000ull, eth, sizeof(eth), 60);
	want(f, 101, 5500000000ull, raw, sizeof(raw), sizeof(raw));
	want(f, 1, 10000000000ull, eth, sizeof(eth), sizeof(eth));
	want(f, 189, 42, usb, sizeof(usb), sizeof(usb));
	assert_int_equal(hs_pfile_next(f, &h, &data), PCAP_ERROR_BREAK);
	const int dlts[] = { 1, 101, 189 };
	const uint64_t counts[] = { 2, 1, 1 };
	for (unsigned i = 0; i < 3; i++) {
		assert_true(hs_pfile_interface(f, i, &dlt, &frames));
		assert_int_equal(dlt, dlts[i]);
		assert_int_equal(frames, counts[i]);
	}
	assert_false(hs_pfile_interface(f, 3, &dlt, &frames));
	hs_pfile_close(f);
	unlink(path);
	free(path);
}

static void test_mixed_interfaces(void **state)
{
	(void)state;
	check_mixed(false);
}

static void test_big_endian(void **state)
{
	(void)state;
	check_mixed(true);
}

struct seen {
	int dlt[8];
	uint32_t caplen[8];
	int n;
	struct hs_pfile *f;
};

static void seen_cb(u_char *user, const struct pcap_pkthdr *h, const u_char *data)
{
	struct seen *s = (struct seen *)user;

	(void)data;
	assert_true(s->n < 8);
	s->dlt[s->n] = hs_pfile_dlt(s->f);
	s->caplen[s->n++] = h->caplen;
}

/* dispatch gives the same frames, a batch at a time */
static void test_dispatch(void **state)
{
	struct nb w;
	struct seen s;
	char err[512];

	(void)state;
	char *path = save(&w, mixed(&w, false));
	memset(&s, 0, sizeof(s));
	s.f = hs_pfile_open(path, NULL, 0, err, sizeof(err));
	assert_non_null(s.f);
	assert_int_equal(hs_pfile_dispatch(s.f, 3, seen_cb, (u_char *)&s), 3);
	assert_int_equal(hs_pfile_dispatch(s.f, 3, seen_cb, (u_char *)&s), 1);
	assert_int_equal(hs_pfile_dispatch(s.f, 3, seen_cb, (u_char *)&s), 0);
	assert_int_equal(s.n, 4);
	assert_int_equal(s.dlt[1], 101);
	assert_int_equal(s.dlt[3], 189);
	assert_int_equal(s.caplen[1], sizeof(raw));
	hs_pfile_close(s.f);
	unlink(path);
	free(path);
}

/* a second section numbers its interfaces from 0 again */
static void test_sections(void **state)
{
	struct nb w;
	char err[512];
	uint64_t frames = 0;
	int dlt = -1;

	(void)state;
	mixed(&w, false);
	bool be = w.be;
	shb(&w, !be);
	idb(&w, 113, 2000, 9, 0);
	epb(&w, 0, 77, raw, sizeof(raw), sizeof(raw));
	char *path = save(&w, w.n);
	struct hs_pfile *f = hs_pfile_open(path, NULL, 0, err, sizeof(err));
	struct pcap_pkthdr *h;
	const u_char *data;

	assert_non_null(f);
	for (int i = 0; i < 4; i++)
		assert_int_equal(hs_pfile_next(f, &h, &data), 1);
	want(f, 113, 77, raw, sizeof(raw), sizeof(raw));
	assert_int_equal(hs_pfile_next(f, &h, &data), PCAP_ERROR_BREAK);
	assert_true(hs_pfile_interface(f, 3, &dlt, &frames));
	assert_int_equal(dlt, 113);
	assert_int_equal(frames, 1);
	hs_pfile_close(f);
	unlink(path);
	free(path);
}

/* damage after good frames: those come first, then one error naming the
 * block's place; a packet of an interface never described */
static void test_damage(void **state)
{
	struct nb w;
	char err[512];
	struct pcap_pkthdr *h;
	const u_char *data;

	(void)state;
	size_t n = mixed(&w, false);
	size_t first_epb = 28 + 36 + 32 + 32;	/* SHB, IDBs with their options */
	/* cut inside the last block */
	char *path = save(&w, n - 6);
	struct hs_pfile *f = hs_pfile_open(path, NULL, 0, err, sizeof(err));
	assert_non_null(f);
	for (int i = 0; i < 4; i++)
		assert_int_equal(hs_pfile_next(f, &h, &data), 1);
	assert_int_equal(hs_pfile_next(f, &h, &data), PCAP_ERROR);
	assert_non_null(strstr(hs_pfile_geterr(f), "truncated block"));
	assert_non_null(strstr(hs_pfile_geterr(f), "byte "));
	hs_pfile_close(f);
	unlink(path);
	free(path);

	/* the first packet block's trailing length differs */
	mixed(&w, false);
	uint32_t len;
	memcpy(&len, w.b + first_epb + 4, 4);
	w.b[first_epb + len - 4] ^= 4;
	path = save(&w, n);
	f = hs_pfile_open(path, NULL, 0, err, sizeof(err));
	assert_non_null(f);
	assert_int_equal(hs_pfile_next(f, &h, &data), PCAP_ERROR);
	char want_err[96];
	snprintf(want_err, sizeof(want_err), "pcapng block at byte %zu: trailing length", first_epb);
	assert_non_null(strstr(hs_pfile_geterr(f), want_err));
	hs_pfile_close(f);
	unlink(path);
	free(path);

	/* a packet of interface 7 of three */
	mixed(&w, false);
	w.b[first_epb + 8] = 7;
	path = save(&w, n);
	f = hs_pfile_open(path, NULL, 0, err, sizeof(err));
	assert_non_null(f);
	assert_int_equal(hs_pfile_next(f, &h, &data), PCAP_ERROR);
	assert_non_null(strstr(hs_pfile_geterr(f), "interface 7, which the section has not "
				"described"));
	hs_pfile_close(f);
	unlink(path);
	free(path);

	/* a captured length past its block */
	mixed(&w, false);
	w.b[first_epb + 20] = 200;
	path = save(&w, n);
	f = hs_pfile_open(path, NULL, 0, err, sizeof(err));
	assert_non_null(f);
	assert_int_equal(hs_pfile_next(f, &h, &data), PCAP_ERROR);
	assert_non_null(strstr(hs_pfile_geterr(f), "captured length 200 runs past the block"));
	hs_pfile_close(f);
	unlink(path);
	free(path);
}

/* one interface, or none hopscope decodes: libpcap's answer, as before */
static void test_libpcap_files(void **state)
{
	struct nb w;
	char err[512];
	struct pcap_pkthdr *h;
	const u_char *data;

	(void)state;
	memset(&w, 0, sizeof(w));
	shb(&w, false);
	idb(&w, 1, 65535, 9, 0);
	epb(&w, 0, 5, eth, sizeof(eth), sizeof(eth));
	char *path = save(&w, w.n);
	struct hs_pfile *f = hs_pfile_open(path, NULL, 0, err, sizeof(err));
	assert_non_null(f);
	assert_false(hs_pfile_mixed(f));	/* libpcap reads it */
	want(f, 1, 5, eth, sizeof(eth), sizeof(eth));
	assert_int_equal(hs_pfile_next(f, &h, &data), PCAP_ERROR_BREAK);
	hs_pfile_close(f);
	unlink(path);
	free(path);

	memset(&w, 0, sizeof(w));
	shb(&w, false);
	idb(&w, 189, 65535, 0, 0);
	idb(&w, 147, 1000, 0, 0);
	epb(&w, 0, 5, usb, sizeof(usb), sizeof(usb));
	path = save(&w, w.n);
	assert_null(hs_pfile_open(path, NULL, 0, err, sizeof(err)));
	assert_non_null(strstr(err, "unsupported link type USB_LINUX (189)"));
	unlink(path);
	free(path);

	assert_null(hs_pfile_open("/nonexistent/x.pcapng", NULL, 0, err, sizeof(err)));
	assert_string_equal(err, "cannot open '/nonexistent/x.pcapng': No such file or directory");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mixed_interfaces),
		cmocka_unit_test(test_big_endian),
		cmocka_unit_test(test_dispatch),
		cmocka_unit_test(test_sections),
		cmocka_unit_test(test_damage),
		cmocka_unit_test(test_libpcap_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
