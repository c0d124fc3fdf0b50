/* test_topo.c - topology parser, lookups and paths */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <cmocka.h>

#include "topo.h"

static const char fabric[] =
	"# two spines, three leaves\n"
	"switch spine1 role spine mirror 10.255.0.1 loopback 10.254.0.1\n"
	"switch spine2 role spine mirror 10.255.0.2 loopback 10.254.0.2\n"
	"switch leaf1 role leaf mirror 10.255.0.3 loopback 10.254.0.3\n"
	"switch leaf2 role leaf mirror 10.255.0.4 loopback 10.254.0.4\n"
	"  switch   leaf3\trole leaf mirror 10.255.0.5   # no loopback\n"
	"link leaf1 spine1 spine1 leaf1\n"
	"link leaf1 spine2 spine2 leaf1 speed 10G\n"
	"link leaf2 spine1 spine1 leaf2 speed 2.5gbit   # per direction\n"
	"link leaf2 spine2 spine2 leaf2\n"
	"link leaf3 spine1 spine1 leaf3\n"
	"host h1 addr 10.1.1.10 leaf leaf1\n"
	"host odd addr 10.1.2.99 leaf leaf3\n"
	"subnet leaf1 10.1.1.0/24\n"
	"subnet leaf2 10.1.2.0/24\n"
	"subnet leaf3 10.1.0.0/16\n"
	"analyzer 10.255.0.254 iface hs-mirror\n";

static struct hs_topo *load(void)
{
	char err[256];
	struct hs_topo *t = hs_topo_parse(fabric, "fabric.topo", err, sizeof(err));

	if (!t)
		fail_msg("%s", err);
	return t;
}

static struct hs_addr A(const char *s)
{
	struct hs_addr a;

	assert_int_equal(hs_addr_parse(s, &a), 0);
	return a;
}

static void test_parse_ok(void **state)
{
	struct hs_topo *t = load();
	char buf[HS_ADDRSTRLEN];

	assert_int_equal(t->nsw, 5);
	assert_int_equal(t->nlinks, 5);
	assert_int_equal(t->nhosts, 2);
	assert_int_equal(t->nsubnets, 3);
	assert_string_equal(t->sw[4].name, "leaf3");
	assert_string_equal(t->sw[4].role, "leaf");
	assert_int_equal(t->sw[4].loopback.af, 0);
	assert_string_equal(hs_addr_str(&t->sw[0].loopback, buf, sizeof(buf)), "10.254.0.1");
	assert_string_equal(hs_addr_str(&t->analyzer, buf, sizeof(buf)), "10.255.0.254");
	assert_string_equal(t->analyzer_iface, "hs-mirror");
	assert_string_equal(t->links[0].a_port, "spine1");
	assert_string_equal(t->links[0].b_port, "leaf1");
	/* the speed is optional */
	assert_true(t->links[0].speed == 0);
	assert_true(t->links[1].speed == 10e9);
	assert_true(t->links[2].speed == 2.5e9);
	hs_topo_free(t);
}

static void test_lookups(void **state)
{
	struct hs_topo *t = load();
	struct hs_addr a;

	assert_int_equal(hs_topo_switch_by_name(t, "leaf2"), 3);
	assert_int_equal(hs_topo_switch_by_name(t, "leaf9"), -1);
	a = A("10.255.0.2");
	assert_int_equal(hs_topo_switch_by_addr(t, &a), 1);
	a = A("10.254.0.3");	/* loopback */
	assert_int_equal(hs_topo_switch_by_addr(t, &a), 2);
	a = A("10.254.0.9");
	assert_int_equal(hs_topo_switch_by_addr(t, &a), -1);

	/* hosts first, then the longest prefix */
	a = A("10.1.2.99");
	assert_int_equal(hs_topo_leaf_for(t, &a), 4);
	a = A("10.1.2.7");
	assert_int_equal(hs_topo_leaf_for(t, &a), 3);
	a = A("10.1.9.7");
	assert_int_equal(hs_topo_leaf_for(t, &a), 4);
	a = A("192.168.0.1");
	assert_int_equal(hs_topo_leaf_for(t, &a), -1);
	a = A("2001:db8::1");
	assert_int_equal(hs_topo_leaf_for(t, &a), -1);

	assert_int_equal(hs_topo_link(t, 0, 2), 0);
	assert_int_equal(hs_topo_link(t, 2, 0), 0);
	assert_int_equal(hs_topo_link(t, 2, 3), -1);
	hs_topo_free(t);
}

static void test_paths(void **state)
{
	struct hs_topo *t = load();
	int next[4], n;
	size_t ns = (size_t)t->nsw;

	assert_int_equal(t->dist[2 * ns + 3], 2);	/* leaf1 - leaf2 */
	assert_int_equal(t->dist[2 * ns + 2], 0);
	assert_int_equal(t->dist[1 * ns + 4], 3);	/* spine2 - leaf1|leaf2 - spine1 - leaf3 */
	assert_int_equal(t->dist[4 * ns + 1], 3);

	n = hs_topo_next_hops(t, 2, 3, next, 4);	/* leaf1 -> leaf2: both spines */
	assert_int_equal(n, 2);
	assert_true((next[0] == 0 && next[1] == 1) || (next[0] == 1 && next[1] == 0));
	n = hs_topo_next_hops(t, 2, 4, next, 4);	/* leaf1 -> leaf3: spine1 only */
	assert_int_equal(n, 1);
	assert_int_equal(next[0], 0);
	n = hs_topo_next_hops(t, 0, 3, next, 4);	/* spine1 -> leaf2 */
	assert_int_equal(n, 1);
	assert_int_equal(next[0], 3);
	assert_int_equal(hs_topo_next_hops(t, 3, 3, next, 4), 0);
	assert_int_equal(hs_topo_next_hops(t, 3, 2, next, 1), 1);	/* max honoured */
	assert_int_equal(hs_topo_next_hops(t, -1, 2, next, 4), 0);
	assert_int_equal(hs_topo_next_hops(t, 0, 99, next, 4), 0);
	hs_topo_free(t);
}

static void test_unreachable(void **state)
{
	char err[256];
	struct hs_topo *t = hs_topo_parse("switch a role leaf mirror 10.0.0.1\n"
					  "switch b role leaf mirror 10.0.0.2\n", "x", err,
					  sizeof(err));
	int next[4];

	assert_non_null(t);
	assert_int_equal(t->dist[1], -1);
	assert_int_equal(hs_topo_next_hops(t, 0, 1, next, 4), 0);
	hs_topo_free(t);
}

/* each switch names its driver (lab unless said) and a sonic switch its redis */
static void test_drivers(void **state)
{
	char err[256];
	struct hs_topo *t = hs_topo_parse(
		"switch a role leaf mirror 10.0.0.1\n"
		"switch b role leaf mirror 10.0.0.2 driver lab\n"
		"switch c role leaf mirror 10.0.0.3 driver sonic redis unix:/run/c/redis.sock\n"
		"switch d role spine redis sw-d.example:6379 driver sonic mirror 10.0.0.4\n",
		"x", err, sizeof(err));

	(void)state;
	assert_non_null(t);
	assert_string_equal(t->sw[0].driver, "lab");
	assert_string_equal(t->sw[0].redis, "");
	assert_string_equal(t->sw[1].driver, "lab");
	assert_string_equal(t->sw[2].driver, "sonic");
	assert_string_equal(t->sw[2].redis, "unix:/run/c/redis.sock");
	assert_string_equal(t->sw[3].driver, "sonic");
	assert_string_equal(t->sw[3].redis, "sw-d.example:6379");
	hs_topo_free(t);
}

struct bad {
	const char *text;
	const char *err;	/* expected prefix of the message */
};

static void test_errors(void **state)
{
	static const struct bad cases[] = {
		{ "bogus a b\n", "t:1:1: expected switch, link, host, subnet or analyzer" },
		{ "\n\n   frob\n", "t:3:4: expected switch" },
		{ "switch a role leaf mirror 10.0.0.1\nswitch a role spine mirror 10.0.0.2\n",
		  "t:2:8: duplicate switch 'a'" },
		{ "switch a role leaf mirror 10.0.0.1\nlink a p1 b p2\n",
		  "t:2:11: unknown switch 'b'" },
		{ "switch a role leaf mirror 10.0.0.300\n", "t:1:27: expected mirror address" },
		{ "switch a role leaf mirror 10.0.0.1 loopback x::y::z\n",
		  "t:1:45: expected loopback address" },
		{ "switch a role leaf\n", "t:1:20: expected 'mirror ADDR'" },
		{ "switch a mirror 10.0.0.1\n", "t:1:26: expected 'role ROLE'" },
		{ "switch a role leaf mirror\n", "t:1:27: expected a value after 'mirror'" },
		{ "switch a role router mirror 10.0.0.1\n", "t:1:15: expected role" },
		{ "switch a colour blue\n",
		  "t:1:10: expected 'role', 'mirror', 'loopback', 'driver' or 'redis'" },
		{ "switch a role leaf mirror 10.0.0.1 driver eos\n", "t:1:43: expected driver lab or sonic" },
		{ "switch a role leaf mirror 10.0.0.1 driver sonic\n",
		  "t:1:49: expected 'redis ADDR' for a switch with driver sonic" },
		{ "switch a role leaf mirror 10.0.0.1 redis 10.0.0.1:6379\n",
		  "t:1:8: switch 'a' has a redis address but not driver sonic" },
		{ "switch a role leaf mirror 10.0.0.1 driver sonic redis 10.0.0.1\n",
		  "t:1:55: expected redis address unix:/PATH or HOST:PORT, got '10.0.0.1'" },
		{ "switch a role leaf mirror 10.0.0.1 driver sonic redis h:0\n",
		  "t:1:55: expected redis address" },
		{ "switch a role leaf mirror 10.0.0.1 driver sonic redis unix:\n",
		  "t:1:55: expected redis address" },
		{ "switch a role leaf mirror 10.0.0.1 driver sonic redis a;b:22\n",
		  "t:1:55: expected redis address" },
		{ "switch\n", "t:1:8: expected switch name" },
		{ "switch abcdefghijklmnopqrstuvwxyz0123456789 role leaf mirror 10.0.0.1\n",
		  "t:1:8: switch name too long" },
		{ "switch a role leaf mirror 10.0.0.1\nswitch b role leaf mirror 10.0.0.1\n",
		  "t:2:8: switch 'b' has the mirror address of 'a'" },
		{ "switch a role leaf mirror 10.0.0.1\nlink a p1\n", "t:2:11: expected switch name" },
		{ "switch a role leaf mirror 10.0.0.1\nlink a p1 a p2\n", "t:2:11: link from 'a' to itself" },
		{ "switch a role leaf mirror 10.0.0.1\nswitch b role leaf mirror 10.0.0.2\n"
		  "link a p1 b p2 extra\n", "t:3:16: expected end of line" },
		{ "switch a role leaf mirror 10.0.0.1\nswitch b role leaf mirror 10.0.0.2\n"
		  "link a p1 b p2 speed\n", "t:3:22: expected link speed such as 10G" },
		{ "switch a role leaf mirror 10.0.0.1\nswitch b role leaf mirror 10.0.0.2\n"
		  "link a p1 b p2 speed 10Q\n", "t:3:22: expected link speed such as 10G or 100M, got '10Q'" },
		{ "switch a role leaf mirror 10.0.0.1\nswitch b role leaf mirror 10.0.0.2\n"
		  "link a p1 b p2 speed 0\n", "t:3:22: expected link speed" },
		{ "switch a role leaf mirror 10.0.0.1\nswitch b role leaf mirror 10.0.0.2\n"
		  "link a p1 b p2 speed 1G fast\n", "t:3:25: expected end of line" },
		{ "switch a role leaf mirror 10.0.0.1\nhost h addr 10.1.1.1\n",
		  "t:2:22: expected 'leaf SWITCH'" },
		{ "switch a role leaf mirror 10.0.0.1\nhost h leaf a\n", "t:2:15: expected 'addr ADDR'" },
		{ "switch a role leaf mirror 10.0.0.1\nhost h addr 10.1.1.1 leaf z\n",
		  "t:2:27: unknown switch 'z'" },
		{ "switch a role leaf mirror 10.0.0.1\nsubnet a 10.1.1.0/33\n",
		  "t:2:10: expected prefix" },
		{ "switch a role leaf mirror 10.0.0.1\nsubnet a\n", "t:2:10: expected prefix" },
		{ "switch a role leaf mirror 10.0.0.1\nhost h addr 10.1.1.1 leaf a\n"
		  "host h addr 10.1.1.2 leaf a\n", "t:3:6: duplicate host 'h'" },
		{ "analyzer nowhere\n", "t:1:10: expected analyzer address" },
		{ "analyzer 10.0.0.9 port 3\n", "t:1:19: expected 'iface' or end of line" },
		{ "switch a role leaf mirror 10.0.0.1\nlink a p1 zz p2\nbogus\n",
		  "t:3:1: expected switch" },	/* keywords are checked before names */
	};

	for (size_t i = 0; i < HS_ARRAY_SIZE(cases); i++) {
		char err[256] = "";
		struct hs_topo *t = hs_topo_parse(cases[i].text, "t", err, sizeof(err));
		if (t || strncmp(err, cases[i].err, strlen(cases[i].err)) != 0)
			fail_msg("case %zu: got %s '%s', want '%s...'", i, t ? "a topology and" : "",
				 err, cases[i].err);
	}
}

/* Names are indexed as they are read (the index grows several times on
 * the way): every switch is found by name, and a duplicate switch or host
 * far down a long file is refused at its own line. */
static char *many_names(int nsw, int nhosts, const char *extra)
{
	size_t cap = (size_t)(nsw + nhosts) * 64 + strlen(extra) + 1, len = 0;
	char *text = malloc(cap);

	assert_non_null(text);
	for (int i = 0; i < nsw; i++)
		len += (size_t)snprintf(text + len, cap - len,
					"switch sw%d role leaf mirror 10.%d.%d.1\n", i, 100 + i / 256,
					i % 256);
	for (int i = 0; i < nhosts; i++)
		len += (size_t)snprintf(text + len, cap - len, "host h%d addr 10.%d.%d.%d leaf sw%d\n",
					i, 1 + i / 65536, i / 256 % 256, i % 256, i % nsw);
	snprintf(text + len, cap - len, "%s", extra);
	return text;
}

static void test_many_names(void **state)
{
	char err[256] = "", name[32];
	char *text = many_names(1000, 5000, "");
	struct hs_topo *t = hs_topo_parse(text, "m", err, sizeof(err));

	assert_non_null(t);
	assert_int_equal(t->nsw, 1000);
	assert_int_equal(t->nhosts, 5000);
	for (int i = 0; i < 1000; i++) {
		snprintf(name, sizeof(name), "sw%d", i);
		assert_int_equal(hs_topo_switch_by_name(t, name), i);
	}
	assert_int_equal(hs_topo_switch_by_name(t, "sw1000"), -1);
	for (int i = 0; i < 5000; i += 7)
		assert_int_equal(t->hosts[i].leaf, i % 1000);
	hs_topo_free(t);
	free(text);

	text = many_names(1000, 5000, "host h4321 addr 10.9.9.9 leaf sw3\n");
	assert_null(hs_topo_parse(text, "m", err, sizeof(err)));
	assert_string_equal(err, "m:6001:6: duplicate host 'h4321'");
	free(text);
	text = many_names(1000, 10, "switch sw777 role spine mirror 10.200.0.1\n");
	assert_null(hs_topo_parse(text, "m", err, sizeof(err)));
	assert_string_equal(err, "m:1011:8: duplicate switch 'sw777'");
	free(text);
}

/* 300,000 switches are refused at the first one too many, at once (they
 * were read in full first, each mirror address compared with every one
 * before it: two minutes); a duplicate mirror address far down a long
 * file is found through an index */
static void test_too_many_switches(void **state)
{
	char err[256] = "";
	char *text = many_names(300000, 0, "");
	uint64_t t0 = hs_mono_ns();

	(void)state;
	assert_null(hs_topo_parse(text, "big", err, sizeof(err)));
	assert_string_equal(err, "big:4097:1: too many switches (at most 4096)");
	assert_true(hs_mono_ns() - t0 < 2 * HS_NS_PER_SEC);
	free(text);

	text = many_names(HS_TOPO_MAX_SWITCHES, 0, "");
	struct hs_topo *t = hs_topo_parse(text, "max", err, sizeof(err));
	assert_non_null(t);
	assert_int_equal(t->nsw, HS_TOPO_MAX_SWITCHES);
	hs_topo_free(t);
	free(text);

	text = many_names(4000, 0, "switch late role leaf mirror 10.115.100.1\n");
	assert_null(hs_topo_parse(text, "dup", err, sizeof(err)));
	assert_string_equal(err, "dup:4001:8: switch 'late' has the mirror address of 'sw3940'");
	free(text);
}

static void test_garbage(void **state)
{
	char text[600], err[256];
	unsigned seed = 12345;

	/* random bytes (no NUL) never crash the parser and are refused */
	for (int round = 0; round < 500; round++) {
		size_t n = 1 + (size_t)(seed % (sizeof(text) - 1));
		for (size_t i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			text[i] = (char)(1 + (seed >> 16) % 255);
		}
		text[n - 1] = '\0';
		struct hs_topo *t = hs_topo_parse(text, "g", err, sizeof(err));
		if (t) {
			hs_topo_free(t);
			continue;
		}
		assert_memory_equal(err, "g:", 2);
	}
	/* a long line of many words */
	memset(text, 'x', sizeof(text) - 1);
	for (size_t i = 1; i < sizeof(text) - 1; i += 2)
		text[i] = ' ';
	text[sizeof(text) - 1] = '\0';
	assert_null(hs_topo_parse(text, "g", err, sizeof(err)));
	/* a tiny error buffer is not overrun */
	char small[8];
	assert_null(hs_topo_parse("bogus\n", "a-long-file-name.topo", small, sizeof(small)));
	assert_true(strlen(small) < sizeof(small));
}

static void test_load_file(void **state)
{
	char path[] = "/tmp/hs-topo-XXXXXX";
	char err[512];
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, fabric, strlen(fabric)), (ssize_t)strlen(fabric));
	close(fd);
	struct hs_topo *t = hs_topo_load(path, err, sizeof(err));
	assert_non_null(t);
	assert_string_equal(t->path, path);
	assert_int_equal(t->nsw, 5);
	hs_topo_free(t);

	/* a NUL byte in the file is refused with its line */
	fd = open(path, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "switch a role leaf mirror 10.0.0.1\nx\0y\n", 40), 40);
	close(fd);
	assert_null(hs_topo_load(path, err, sizeof(err)));
	assert_non_null(strstr(err, ":2:1: expected text"));
	unlink(path);

	assert_null(hs_topo_load("/nonexistent/x.topo", err, sizeof(err)));
	assert_string_equal(err, "cannot open '/nonexistent/x.topo': No such file or directory");
}

/* written out and read back, a topology is the same; twice, the same text */
static void test_text_round_trip(void **state)
{
	struct hs_topo *t = load(), *u;
	char err[256], *text, *again;
	size_t len, len2;

	(void)state;
	text = hs_topo_text(t, &len);
	assert_int_equal(strlen(text), len);
	u = hs_topo_parse(text, "daemon", err, sizeof(err));
	if (!u)
		fail_msg("%s in:\n%s", err, text);
	assert_int_equal(u->nsw, t->nsw);
	assert_int_equal(u->nlinks, t->nlinks);
	assert_int_equal(u->nhosts, t->nhosts);
	assert_int_equal(u->nsubnets, t->nsubnets);
	for (int i = 0; i < t->nsw; i++) {
		assert_string_equal(u->sw[i].name, t->sw[i].name);
		assert_memory_equal(&u->sw[i].loopback, &t->sw[i].loopback, sizeof(struct hs_addr));
	}
	for (int i = 0; i < t->nlinks; i++) {
		assert_int_equal(u->links[i].a, t->links[i].a);
		assert_string_equal(u->links[i].b_port, t->links[i].b_port);
		assert_true(u->links[i].speed == t->links[i].speed);
	}
	assert_int_equal(u->subnets[2].plen, 16);
	assert_string_equal(u->analyzer_iface, "hs-mirror");
	again = hs_topo_text(u, &len2);
	assert_string_equal(again, text);
	free(again);
	free(text);
	hs_topo_free(u);
	hs_topo_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_ok),
		cmocka_unit_test(test_lookups),
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_unreachable),
		cmocka_unit_test(test_drivers),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_many_names),
		cmocka_unit_test(test_too_many_switches),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_load_file),
		cmocka_unit_test(test_text_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
