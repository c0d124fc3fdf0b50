/* test_util.c - durations, numbers, addresses and prefixes (src/util.c) */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "hs.h"

static void test_duration_units(void **state)
{
	static const struct { const char *s; uint64_t ns; } ok[] = {
		{ "250ms", 250000000ULL }, { "2s", 2000000000ULL },
		{ "1.5s", 1500000000ULL }, { "1m", 60000000000ULL },
		{ "100us", 100000ULL }, { "5", 5000000000ULL },
		{ "7ns", 7 }, { "0", 0 }, { ".5s", 500000000ULL },
		{ "2min", 120000000000ULL }, { "1h", 3600000000000ULL },
	};
	(void)state;
	for (size_t i = 0; i < HS_ARRAY_SIZE(ok); i++) {
		uint64_t ns = 12345;
		assert_int_equal(hs_parse_duration(ok[i].s, &ns), 0);
		assert_true(ns == ok[i].ns);
	}
}

static void test_duration_bad(void **state)
{
	static const char *const bad[] = {
		"", "ms", "-1s", "1 s", "1sec", "1x", "abc", "+2s", "1e30s", " 1s", "1s ",
	};
	(void)state;
	for (size_t i = 0; i < HS_ARRAY_SIZE(bad); i++) {
		uint64_t ns = 42;
		assert_int_equal(hs_parse_duration(bad[i], &ns), -1);
		assert_true(ns == 42);	/* untouched on error */
	}
	assert_int_equal(hs_parse_duration(NULL, &(uint64_t){ 0 }), -1);
}

static void test_fmt_duration(void **state)
{
	char b[32];

	(void)state;
	assert_string_equal(hs_fmt_duration(999, b, sizeof(b)), "999ns");
	assert_string_equal(hs_fmt_duration(1500, b, sizeof(b)), "1.5us");
	assert_string_equal(hs_fmt_duration(1250000, b, sizeof(b)), "1.250ms");
	assert_string_equal(hs_fmt_duration(3200000000ULL, b, sizeof(b)), "3.200s");
	assert_string_equal(hs_fmt_ts(1700000000123456789ULL, b, sizeof(b)),
			    "1700000000.123456789");
	assert_string_equal(hs_fmt_ts(5, b, sizeof(b)), "0.000000005");

	/* text times: date and time to the microsecond, UTC unless local */
	assert_string_equal(hs_fmt_time(1700000000123456789ULL, b, sizeof(b)),
			    "2023-11-14 22:13:20.123456");
	assert_string_equal(hs_fmt_time(5, b, sizeof(b)), "1970-01-01 00:00:00.000000");
	setenv("TZ", "EST5", 1);
	tzset();
	assert_string_equal(hs_fmt_time(1700000000123456789ULL, b, sizeof(b)),
			    "2023-11-14 22:13:20.123456");
	hs_set_tz_local(true);
	assert_string_equal(hs_fmt_time(1700000000123456789ULL, b, sizeof(b)),
			    "2023-11-14 17:13:20.123456");
	hs_set_tz_local(false);
	unsetenv("TZ");
	tzset();
}

/* strict decimal: what the mirror specs and the snapshot driver's lines take */
static void test_dec(void **state)
{
	uint64_t v = 0;

	(void)state;
	assert_int_equal(hs_parse_dec("0", 10, &v), 0);
	assert_true(v == 0);
	assert_int_equal(hs_parse_dec("65535", 65535, &v), 0);
	assert_true(v == 65535);
	assert_int_equal(hs_parse_dec("9223372036854775807", INT64_MAX, &v), 0);
	assert_true(v == INT64_MAX);
	assert_int_equal(hs_parse_dec("18446744073709551615", UINT64_MAX, &v), 0);
	assert_true(v == UINT64_MAX);
	v = 7;
	assert_int_equal(hs_parse_dec("9223372036854775808", INT64_MAX, &v), -1);
	assert_int_equal(hs_parse_dec("18446744073709551616", UINT64_MAX, &v), -1);
	assert_int_equal(hs_parse_dec("65536", 65535, &v), -1);
	assert_int_equal(hs_parse_dec("007", 100, &v), -1);
	assert_int_equal(hs_parse_dec("0x1f", 255, &v), -1);
	assert_int_equal(hs_parse_dec("+1", 100, &v), -1);
	assert_int_equal(hs_parse_dec("", 100, &v), -1);
	assert_int_equal(hs_parse_dec("1 ", 100, &v), -1);
	assert_true(v == 7);
}

static void test_uint(void **state)
{
	uint64_t v = 0;

	(void)state;
	assert_int_equal(hs_parse_uint("0", 10, &v), 0);
	assert_true(v == 0);
	assert_int_equal(hs_parse_uint("65535", 65535, &v), 0);
	assert_true(v == 65535);
	assert_int_equal(hs_parse_uint("0x1f", 255, &v), 0);
	assert_true(v == 31);
	assert_int_equal(hs_parse_uint("18446744073709551615", UINT64_MAX, &v), 0);
	assert_true(v == UINT64_MAX);
	v = 7;
	assert_int_equal(hs_parse_uint("65536", 65535, &v), -1);
	assert_int_equal(hs_parse_uint("-1", 100, &v), -1);
	assert_int_equal(hs_parse_uint("+1", 100, &v), -1);
	assert_int_equal(hs_parse_uint("", 100, &v), -1);
	assert_int_equal(hs_parse_uint(" 1", 100, &v), -1);
	assert_int_equal(hs_parse_uint("1x", 100, &v), -1);
	assert_int_equal(hs_parse_uint("99999999999999999999", UINT64_MAX, &v), -1);
	assert_true(v == 7);
}

static void test_addr(void **state)
{
	struct hs_addr a, b;
	char buf[HS_ADDRSTRLEN];

	(void)state;
	assert_int_equal(hs_addr_parse("10.1.2.3", &a), 0);
	assert_int_equal(a.af, 4);
	assert_int_equal(a.a[0], 10);
	assert_int_equal(a.a[3], 3);
	assert_string_equal(hs_addr_str(&a, buf, sizeof(buf)), "10.1.2.3");

	assert_int_equal(hs_addr_parse("2001:db8::1", &b), 0);
	assert_int_equal(b.af, 6);
	assert_int_equal(b.a[0], 0x20);
	assert_int_equal(b.a[15], 1);
	assert_string_equal(hs_addr_str(&b, buf, sizeof(buf)), "2001:db8::1");
	assert_false(hs_addr_eq(&a, &b));

	assert_int_equal(hs_addr_parse("10.1.2.3", &b), 0);
	assert_true(hs_addr_eq(&a, &b));
	b.a[3] = 4;
	assert_false(hs_addr_eq(&a, &b));

	assert_int_equal(hs_addr_parse("10.1.2", &a), -1);
	assert_int_equal(hs_addr_parse("256.1.1.1", &a), -1);
	assert_int_equal(hs_addr_parse("", &a), -1);
	assert_int_equal(hs_addr_parse("::g", &a), -1);
	memset(&a, 0, sizeof(a));
	assert_string_equal(hs_addr_str(&a, buf, sizeof(buf)), "-");
}

static void test_prefix(void **state)
{
	struct hs_addr net, a;
	int plen = -1;

	(void)state;
	assert_int_equal(hs_prefix_parse("10.0.0.0/24", &net, &plen), 0);
	assert_int_equal(plen, 24);
	assert_int_equal(hs_addr_parse("10.0.0.200", &a), 0);
	assert_true(hs_addr_in(&a, &net, plen));
	assert_int_equal(hs_addr_parse("10.0.1.1", &a), 0);
	assert_false(hs_addr_in(&a, &net, plen));

	/* a prefix that does not end on a byte */
	assert_int_equal(hs_prefix_parse("192.168.4.0/22", &net, &plen), 0);
	assert_int_equal(hs_addr_parse("192.168.7.255", &a), 0);
	assert_true(hs_addr_in(&a, &net, plen));
	assert_int_equal(hs_addr_parse("192.168.8.0", &a), 0);
	assert_false(hs_addr_in(&a, &net, plen));

	/* no length: the whole address */
	assert_int_equal(hs_prefix_parse("10.9.9.9", &net, &plen), 0);
	assert_int_equal(plen, 32);
	assert_int_equal(hs_prefix_parse("2001:db8::/32", &net, &plen), 0);
	assert_int_equal(plen, 32);
	assert_int_equal(hs_addr_parse("2001:db8:ffff::1", &a), 0);
	assert_true(hs_addr_in(&a, &net, plen));
	assert_int_equal(hs_addr_parse("10.0.0.1", &a), 0);
	assert_false(hs_addr_in(&a, &net, plen));	/* other family */

	assert_int_equal(hs_prefix_parse("0.0.0.0/0", &net, &plen), 0);
	assert_true(hs_addr_in(&a, &net, plen));

	assert_int_equal(hs_prefix_parse("10.0.0.0/33", &net, &plen), -1);
	assert_int_equal(hs_prefix_parse("10.0.0.0/", &net, &plen), -1);
	assert_int_equal(hs_prefix_parse("10.0.0.0/-1", &net, &plen), -1);
	assert_int_equal(hs_prefix_parse("nonsense/8", &net, &plen), -1);
	assert_int_equal(hs_prefix_parse("2001:db8::/129", &net, &plen), -1);
	{
		char longs[200];
		memset(longs, '1', sizeof(longs) - 1);
		longs[sizeof(longs) - 1] = '\0';
		assert_int_equal(hs_prefix_parse(longs, &net, &plen), -1);
	}
}

static void test_flowkey(void **state)
{
	struct hs_flowkey x, y;

	(void)state;
	memset(&x, 0xaa, sizeof(x));	/* padding must not matter */
	memset(&y, 0x55, sizeof(y));
	hs_addr_parse("10.0.0.1", &x.src);
	hs_addr_parse("10.0.0.2", &x.dst);
	hs_addr_parse("10.0.0.1", &y.src);
	hs_addr_parse("10.0.0.2", &y.dst);
	x.sport = y.sport = 1234;
	x.dport = y.dport = 80;
	x.proto = y.proto = 6;
	assert_true(hs_flowkey_eq(&x, &y));
	assert_true(hs_flowkey_hash(&x) == hs_flowkey_hash(&y));
	y.dport = 81;
	assert_false(hs_flowkey_eq(&x, &y));
	assert_true(hs_flowkey_hash(&x) != hs_flowkey_hash(&y));
}

static void test_share_and_names(void **state)
{
	double v = -1;

	(void)state;
	assert_int_equal(hs_parse_share("0.25", &v), 0);
	assert_true(v == 0.25);
	assert_int_equal(hs_parse_share("25%", &v), 0);
	assert_true(v == 0.25);
	assert_int_equal(hs_parse_share("0", &v), 0);
	assert_true(v == 0);
	static const char *const bad[] = { "", "x", "-0.1", "25%%", "1e999", "nan", "inf", "0.5x", "%" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(hs_parse_share(bad[i], &v), -1);

	uint64_t sz = 0;
	assert_int_equal(hs_parse_size("64M", UINT64_MAX, &sz), 0);
	assert_true(sz == 64u << 20);
	assert_int_equal(hs_parse_size("512k", UINT64_MAX, &sz), 0);
	assert_true(sz == 512u << 10);
	assert_int_equal(hs_parse_size("1GiB", UINT64_MAX, &sz), 0);
	assert_true(sz == 1u << 30);
	assert_int_equal(hs_parse_size("4096", UINT64_MAX, &sz), 0);
	assert_true(sz == 4096);
	assert_int_equal(hs_parse_size("1G", 1u << 30, &sz), 0);
	static const char *const badsz[] = { "", "M", "-1", "+1", " 1", "1.5M", "1T", "1MB", "1M ",
					     "99999999999999999999", "17179869184G" };
	for (size_t i = 0; i < sizeof(badsz) / sizeof(badsz[0]); i++)
		assert_int_equal(hs_parse_size(badsz[i], UINT64_MAX, &sz), -1);
	assert_int_equal(hs_parse_size("1025M", 1u << 30, &sz), -1);
	assert_true(sz == 1u << 30);	/* untouched on error */
	char szbuf[32];
	assert_string_equal(hs_fmt_size(64u << 20, szbuf, sizeof(szbuf)), "64 MiB");
	assert_string_equal(hs_fmt_size((32u << 20) - (128u << 10), szbuf, sizeof(szbuf)),
			    "31.9 MiB");
	assert_string_equal(hs_fmt_size(2u << 30, szbuf, sizeof(szbuf)), "2 GiB");
	assert_string_equal(hs_fmt_size(512u << 10, szbuf, sizeof(szbuf)), "512 KiB");
	assert_string_equal(hs_fmt_size(100, szbuf, sizeof(szbuf)), "100 B");

	assert_true(hs_name_ok("leaf1"));
	assert_true(hs_name_ok("a-b_c9"));
	assert_true(hs_name_ok("abcdefghijklmnopqrstuvwxyzabcde"));	/* 31 */
	assert_false(hs_name_ok("abcdefghijklmnopqrstuvwxyzabcdef"));	/* 32 */
	assert_false(hs_name_ok(""));
	assert_false(hs_name_ok("1leaf"));
	assert_false(hs_name_ok("Leaf1"));
	assert_false(hs_name_ok("leaf 1"));
	assert_false(hs_name_ok("leaf;1"));

	assert_true(hs_ifname_ok("eth0"));
	assert_true(hs_ifname_ok("hs-m-spine1"));
	assert_true(hs_ifname_ok("eth0.100"));
	assert_true(hs_ifname_ok("abcdefghijklmno"));	/* 15 */
	assert_false(hs_ifname_ok("abcdefghijklmnop"));	/* 16 */
	assert_false(hs_ifname_ok(""));
	assert_false(hs_ifname_ok("eth 0"));
	assert_false(hs_ifname_ok("eth0/1"));
	assert_false(hs_ifname_ok("e$(x)"));
}

/* what a file's mappings add up to: how the capture tells the ring it got */
static void test_mapped_bytes(void **state)
{
	long page = sysconf(_SC_PAGESIZE);
	FILE *fp = tmpfile();
	FILE *other = tmpfile();

	(void)state;
	assert_non_null(fp);
	assert_non_null(other);
	int fd = fileno(fp);
	assert_int_equal(ftruncate(fd, 4 * page), 0);
	assert_int_equal(ftruncate(fileno(other), page), 0);
	assert_true(hs_mapped_bytes(fd) == 0);
	assert_true(hs_mapped_bytes(-1) == 0);
	void *a = mmap(NULL, 2 * (size_t)page, PROT_READ, MAP_SHARED, fd, 0);
	void *b = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, fd, 3 * page);
	void *c = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, fileno(other), 0);
	assert_true(a != MAP_FAILED && b != MAP_FAILED && c != MAP_FAILED);
	assert_true(hs_mapped_bytes(fd) == 3 * (uint64_t)page);
	assert_true(hs_mapped_bytes(fileno(other)) == (uint64_t)page);
	munmap(a, 2 * (size_t)page);
	assert_true(hs_mapped_bytes(fd) == (uint64_t)page);
	munmap(b, (size_t)page);
	munmap(c, (size_t)page);
	fclose(fp);
	fclose(other);
}

static void test_strdup(void **state)
{
	char *p = hs_xstrdup("abc");

	(void)state;
	assert_string_equal(p, "abc");
	free(p);
	p = hs_xcalloc(0, 0);	/* never NULL */
	assert_non_null(p);
	free(p);
}

/* big tables: zeroed, every byte theirs, apart; on huge-page boundaries
 * except under AddressSanitizer, which takes them from the heap, and
 * aligned for the tree's most aligned types in every build */
static void test_big_tables(void **state)
{
	static const size_t sizes[][2] = {
		{ 1, 1 }, { 0, 0 }, { 3, 4099 }, { HS_HUGE_PAGE, 1 }, { HS_HUGE_PAGE / 8 + 1, 8 },
	};
#ifdef HS_ASAN
	bool asan = true;
#else
	bool asan = false;
#endif

	(void)state;
	for (size_t i = 0; i < HS_ARRAY_SIZE(sizes); i++) {
		size_t n = sizes[i][0], size = sizes[i][1], len = n * size > 0 ? n * size : 1;
		unsigned char *a = hs_xcalloc_big(n, size), *b = hs_xcalloc_big(n, size);

		assert_non_null(a);
		assert_non_null(b);
		assert_true(a + len <= b || b + len <= a);
		assert_int_equal((uintptr_t)a % HS_BIG_ALIGN, 0);
		assert_int_equal((uintptr_t)b % HS_BIG_ALIGN, 0);
		if (!asan) {
			assert_int_equal((uintptr_t)a % HS_HUGE_PAGE, 0);
			assert_int_equal((uintptr_t)b % HS_HUGE_PAGE, 0);
		}
		for (size_t k = 0; k < len; k++)
			assert_int_equal(a[k] | b[k], 0);
		memset(a, 0xa5, len);
		for (size_t k = 0; k < len; k += 4093)
			assert_int_equal(b[k], 0);
		assert_int_equal(b[len - 1], 0);
		assert_int_equal(a[len - 1], 0xa5);
		hs_free_big(a, n, size);
		hs_free_big(b, n, size);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dec),
		cmocka_unit_test(test_duration_units),
		cmocka_unit_test(test_duration_bad),
		cmocka_unit_test(test_fmt_duration),
		cmocka_unit_test(test_uint),
		cmocka_unit_test(test_addr),
		cmocka_unit_test(test_prefix),
		cmocka_unit_test(test_flowkey),
		cmocka_unit_test(test_share_and_names),
		cmocka_unit_test(test_mapped_bytes),
		cmocka_unit_test(test_strdup),
		cmocka_unit_test(test_big_tables),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
