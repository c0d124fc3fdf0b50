/* test_mirror.c - the mirror verb's rule parser and the driver argv */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "mirror.h"
#include "privsep.h"

#define MAXW 16

static const char topo_text[] =
	"switch spine1 role spine mirror 10.255.0.1 loopback 10.254.0.1\n"
	"switch leaf1 role leaf mirror 10.255.0.2 loopback 10.254.0.2\n"
	"switch leaf2 role leaf mirror 10.255.0.3 loopback 10.254.0.3\n"
	"link spine1 leaf1 leaf1 spine1\n"
	"link spine1 leaf2 leaf2 spine1\n";

/* split a line into words (blanks only) and parse it */
static int parse(const char *line, const struct hs_topo *t, struct hs_mirror_rule *r,
		 char *err, size_t errlen)
{
	static char buf[512];
	char *argv[MAXW];
	int argc = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	for (char *w = strtok(buf, " "); w && argc < MAXW; w = strtok(NULL, " "))
		argv[argc++] = w;
	err[0] = '\0';
	return hs_mirror_parse(argc, argv, t, r, err, errlen);
}

static void match_is(const struct hs_mirror_rule *r, const char *want)
{
	char m[256];

	assert_string_equal(hs_mirror_match_str(r, m, sizeof(m)), want);
}

static void test_simple_matches(void **state)
{
	const char *kinds[] = { "default", "syn", "fin", "rst", "debug", "bgp", "roce" };
	struct hs_mirror_rule r;
	char line[64], err[256];

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		snprintf(line, sizeof(line), "add %s", kinds[i]);
		assert_int_equal(parse(line, NULL, &r, err, sizeof(err)), 0);
		assert_int_equal(r.op, HS_MIRROR_ADD);
		assert_int_equal(r.session, 1);
		assert_string_equal(r.switches, "all");
		assert_int_equal(r.nmatch, 1);
		match_is(&r, kinds[i]);
	}
}

static void test_on_and_session(void **state)
{
	struct hs_mirror_rule r;
	char err[256];
	struct hs_topo *t = hs_topo_parse(topo_text, "t", err, sizeof(err));

	assert_non_null(t);
	assert_int_equal(parse("add on leaf1,spine1 session 42 syn", t, &r, err, sizeof(err)), 0);
	assert_string_equal(r.switches, "leaf1,spine1");
	assert_int_equal(r.session, 42);
	match_is(&r, "syn");
	/* either order, and 'all' */
	assert_int_equal(parse("add session 0 on all debug", t, &r, err, sizeof(err)), 0);
	assert_string_equal(r.switches, "all");
	assert_int_equal(r.session, 0);
	assert_int_equal(parse("add session 1023 rst", t, &r, err, sizeof(err)), 0);
	assert_int_equal(r.session, 1023);

	assert_int_equal(parse("add on leaf9 syn", t, &r, err, sizeof(err)), -1);
	assert_string_equal(err, "unknown switch 'leaf9'");
	assert_int_equal(parse("add on leaf1,leaf7 syn", t, &r, err, sizeof(err)), -1);
	assert_string_equal(err, "unknown switch 'leaf7'");
	/* without a topology any well-formed name is taken */
	assert_int_equal(parse("add on leaf9 syn", NULL, &r, err, sizeof(err)), 0);
	assert_string_equal(r.switches, "leaf9");
	hs_topo_free(t);
}

static void test_flow_and_prefix(void **state)
{
	struct hs_mirror_rule r;
	char err[256];

	assert_int_equal(parse("add flow tcp 10.1.1.10:40000 10.1.3.10:80", NULL, &r, err,
			       sizeof(err)), 0);
	assert_int_equal(r.nmatch, 4);
	match_is(&r, "flow tcp 10.1.1.10:40000 10.1.3.10:80");
	assert_int_equal(parse("add flow udp 10.1.1.0/24 any:4791", NULL, &r, err, sizeof(err)), 0);
	match_is(&r, "flow udp 10.1.1.0/24 any:4791");
	assert_int_equal(parse("add flow icmp any 10.1.3.10", NULL, &r, err, sizeof(err)), 0);
	match_is(&r, "flow icmp any 10.1.3.10");
	assert_int_equal(parse("add flow any 10.1.1.10 10.1.3.0/24", NULL, &r, err, sizeof(err)), 0);
	match_is(&r, "flow any 10.1.1.10 10.1.3.0/24");
	assert_int_equal(parse("add prefix 10.1.3.0/24", NULL, &r, err, sizeof(err)), 0);
	match_is(&r, "prefix 10.1.3.0/24");
	assert_int_equal(parse("add prefix 10.1.3.7", NULL, &r, err, sizeof(err)), 0);
	match_is(&r, "prefix 10.1.3.7");
	/* IPv6: a port needs the address in brackets; the text is canonical */
	assert_int_equal(parse("add flow tcp [2001:DB8:0::1]:443 2001:db8:1::/48", NULL, &r, err,
			       sizeof(err)), 0);
	match_is(&r, "flow tcp [2001:db8::1]:443 2001:db8:1::/48");
	assert_int_equal(parse("add flow udp any [2001:db8::/32]:4791", NULL, &r, err,
			       sizeof(err)), 0);
	match_is(&r, "flow udp any [2001:db8::/32]:4791");
	assert_int_equal(parse("add flow icmp [fe80::1] any", NULL, &r, err, sizeof(err)), 0);
	match_is(&r, "flow icmp fe80::1 any");
	assert_int_equal(parse("add prefix 2001:db8:0:0::/64", NULL, &r, err, sizeof(err)), 0);
	match_is(&r, "prefix 2001:db8::/64");
}

static void test_list_del(void **state)
{
	struct hs_mirror_rule r;
	char err[256];

	assert_int_equal(parse("list", NULL, &r, err, sizeof(err)), 0);
	assert_int_equal(r.op, HS_MIRROR_LIST);
	assert_int_equal(parse("del 17", NULL, &r, err, sizeof(err)), 0);
	assert_int_equal(r.op, HS_MIRROR_DEL);
	assert_int_equal(r.id, 17);
}

struct bad {
	const char *line;
	const char *err;
};

static void test_bad(void **state)
{
	static const struct bad cases[] = {
		{ "", "mirror needs add, del or list" },
		{ "show", "unknown mirror subcommand 'show' (add, del, list)" },
		{ "list all", "mirror list: unexpected 'all'" },
		{ "del", "mirror del needs a rule id (see 'mirror list')" },
		{ "del x1", "invalid rule id 'x1' (a number, see 'mirror list')" },
		{ "del -1", "invalid rule id '-1' (a number, see 'mirror list')" },
		{ "del 1 2", "mirror del: unexpected '2'" },
		{ "add", "mirror add needs a match (default, syn, fin, rst, debug, bgp, roce, flow or prefix)" },
		{ "add synn", "unknown match 'synn' (default, syn, fin, rst, debug, bgp, roce, flow or prefix)" },
		{ "add syn fin", "unexpected 'fin' after 'syn'" },
		{ "add session 1024 syn", "invalid session '1024' (0 to 1023)" },
		{ "add session 07 syn", "invalid session '07' (0 to 1023)" },
		{ "add session", "'session' needs a number (0 to 1023)" },
		{ "add session 1 session 2 syn", "'session' given twice" },
		{ "add on", "'on' needs switches (SW[,SW...] or all)" },
		{ "add on a;b syn", "invalid switch name 'a;b'" },
		{ "add on Leaf1 syn", "invalid switch name 'Leaf1'" },
		{ "add on leaf1,,leaf2 syn", "invalid switch list 'leaf1,,leaf2' (SW[,SW...] or all)" },
		{ "add on leaf1, syn", "invalid switch list 'leaf1,' (SW[,SW...] or all)" },
		{ "add on leaf1,leaf1 syn", "switch 'leaf1' listed twice" },
		{ "add on leaf1 on leaf2 syn", "'on' given twice" },
		{ "add flow tcp 10.0.0.1", "flow needs PROTO SRC[:PORT] DST[:PORT]" },
		{ "add flow tcp a b c", "unexpected 'c' after the flow" },
		{ "add flow gre any any", "invalid protocol 'gre' (tcp, udp, icmp or any)" },
		{ "add flow tcp 10.0.0.256 any", "invalid address '10.0.0.256' (IPv4 or IPv6 address, prefix or any)" },
		{ "add flow tcp 10.0.0.0/33 any", "invalid address '10.0.0.0/33' (IPv4 or IPv6 address, prefix or any)" },
		{ "add flow tcp 2001:db8::/129 any", "invalid address '2001:db8::/129' (IPv4 or IPv6 address, prefix or any)" },
		{ "add flow tcp [10.0.0.1]:80 any", "invalid address '10.0.0.1' (IPv4 or IPv6 address, prefix or any)" },
		{ "add flow tcp [any] any", "invalid address 'any' (IPv4 or IPv6 address, prefix or any)" },
		{ "add flow tcp [2001:db8::1 any", "invalid endpoint '[2001:db8::1' (ADDR[:PORT], with an IPv6 address [ADDR]:PORT)" },
		{ "add flow tcp [2001:db8::1]80 any", "invalid endpoint '[2001:db8::1]80' (ADDR[:PORT], with an IPv6 address [ADDR]:PORT)" },
		{ "add flow tcp [2001:db8::1]:0 any", "invalid port '0' in '[2001:db8::1]:0' (1 to 65535)" },
		{ "add flow tcp 10.0.0.1 2001:db8::1", "flow mixes IPv4 and IPv6 ('10.0.0.1', '2001:db8::1')" },
		{ "add flow tcp any 10.0.0.1:0", "invalid port '0' in '10.0.0.1:0' (1 to 65535)" },
		{ "add flow tcp any 10.0.0.1:65536", "invalid port '65536' in '10.0.0.1:65536' (1 to 65535)" },
		{ "add flow tcp any 10.0.0.1:http", "invalid port 'http' in '10.0.0.1:http' (1 to 65535)" },
		{ "add flow tcp :80 any", "invalid address in ':80' (IPv4 or IPv6 address, prefix or any)" },
		{ "add flow icmp any 10.0.0.1:80", "protocol 'icmp' has no ports (in '10.0.0.1:80')" },
		{ "add flow any 10.0.0.1:80 any", "protocol 'any' has no ports (in '10.0.0.1:80')" },
		{ "add prefix", "prefix needs an IPv4 or IPv6 prefix (e.g. 10.1.3.0/24)" },
		{ "add prefix any", "invalid prefix 'any' (e.g. 10.1.3.0/24 or 2001:db8::/32)" },
		{ "add prefix 10.1/8", "invalid prefix '10.1/8' (e.g. 10.1.3.0/24 or 2001:db8::/32)" },
		{ "add prefix [2001:db8::]/32", "invalid prefix '[2001:db8::]/32' (e.g. 10.1.3.0/24 or 2001:db8::/32)" },
		{ "add prefix 10.0.0.0/8 x", "unexpected 'x' after the prefix" },
	};
	struct hs_mirror_rule r;
	char err[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = parse(cases[i].line, NULL, &r, err, sizeof(err));

		if (rc != -1 || strcmp(err, cases[i].err) != 0)
			fail_msg("'%s': rc %d, error '%s', want '%s'", cases[i].line, rc, err,
				 cases[i].err);
	}
}

static void test_argv(void **state)
{
	struct hs_mirror_rule r;
	char err[256], id[24], sess[8];
	char *argv[HS_MIRROR_ARGV_MAX];
	int argc;

	assert_int_equal(parse("add on leaf1,leaf2 session 5 flow tcp any 10.1.3.10:80", NULL,
			       &r, err, sizeof(err)), 0);
	argc = hs_mirror_argv(&r, "/x/drv", "/run/lab", id, sizeof(id), sess, sizeof(sess), argv);
	const char *want[] = { "/x/drv", "--state", "/run/lab", "add", "--session", "5",
		"--switches", "leaf1,leaf2", "--match", "flow", "tcp", "any", "10.1.3.10:80" };
	assert_int_equal(argc, (int)(sizeof(want) / sizeof(want[0])));
	for (int i = 0; i < argc; i++)
		assert_string_equal(argv[i], want[i]);
	assert_null(argv[argc]);

	assert_int_equal(parse("del 12", NULL, &r, err, sizeof(err)), 0);
	argc = hs_mirror_argv(&r, "drv", NULL, id, sizeof(id), sess, sizeof(sess), argv);
	assert_int_equal(argc, 4);
	assert_string_equal(argv[1], "del");
	assert_string_equal(argv[2], "--id");
	assert_string_equal(argv[3], "12");
	assert_null(argv[4]);

	assert_int_equal(parse("list", NULL, &r, err, sizeof(err)), 0);
	argc = hs_mirror_argv(&r, "drv", "/s", id, sizeof(id), sess, sizeof(sess), argv);
	assert_int_equal(argc, 4);
	assert_string_equal(argv[3], "list");
}

/* the broker's check: a valid rule's argv passes, anything else is refused */
static int check_line(const char *line)
{
	static char buf[1024];
	char *argv[40];
	int argc = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	for (char *w = strtok(buf, " "); w && argc < 39; w = strtok(NULL, " "))
		argv[argc++] = w;
	argv[argc] = NULL;
	return hs_mirror_argv_check(argc, argv, "/x/drv", "/run/lab");
}

static void test_argv_check(void **state)
{
	static const char *const good[] = {
		"/x/drv --state /run/lab list",
		"/x/drv --state /run/lab del --id 12",
		"/x/drv --state /run/lab add --session 1 --switches all --match default",
		"/x/drv --state /run/lab add --session 5 --switches leaf1,leaf2 --match flow tcp any 10.1.3.10:80",
		"/x/drv --state /run/lab add --session 1023 --switches spine1 --match prefix 10.1.3.0/24",
		"/x/drv --state /run/lab add --session 2 --switches all --match flow tcp [2001:db8::1]:443 any",
		"/x/drv --state /run/lab add --id 7 --session 1 --switches spine1 --match default",
	};
	static const char *const bad[] = {
		"/bin/sh --state /run/lab list",			/* another program */
		"/x/drv list",						/* no state */
		"/x/drv --state /tmp list",				/* another state */
		"/x/drv --state /run/lab list extra",
		"/x/drv --state /run/lab del --id 012",			/* not canonical */
		"/x/drv --state /run/lab del --id x;rm",
		"/x/drv --state /run/lab del 12",
		"/x/drv --state /run/lab add --session 1024 --switches all --match default",
		"/x/drv --state /run/lab add --session 1 --switches Leaf1 --match default",
		"/x/drv --state /run/lab add --session 1 --switches a;b --match default",
		"/x/drv --state /run/lab add --session 1 --switches all --match flow tcp any 10.1.3.010:80",
		"/x/drv --state /run/lab add --session 1 --switches all --match flow tcp [2001:DB8::1]:443 any",
		"/x/drv --state /run/lab add --session 1 --switches all --match prefix [2001:db8::]",
		"/x/drv --state /run/lab add --id 07 --session 1 --switches spine1 --match default",
		"/x/drv --state /run/lab add --id 0 --session 1 --switches spine1 --match default",
		"/x/drv --state /run/lab add --session 1 --id 7 --switches spine1 --match default",
		"/x/drv --state /run/lab add --id --session 1 --switches spine1 --match default",
		"/x/drv --state /run/lab add --session 1 --switches all --match default syn",
		"/x/drv --state /run/lab add --switches all --session 1 --match default",
		"/x/drv --state /run/lab add --session 1 --switches all --match $(reboot)",
		"/x/drv --state /run/lab flush",
		"/x/drv --state /run/lab",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (check_line(good[i]) != 0)
			fail_msg("refused: %s", good[i]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (check_line(bad[i]) == 0)
			fail_msg("accepted: %s", bad[i]);
	/* without a state, --state is refused */
	char a0[] = "/x/drv", a1[] = "list", a2[] = "--state", a3[] = "/s";
	char *nostate[] = { a0, a1, NULL }, *withstate[] = { a0, a2, a3, a1, NULL };
	assert_int_equal(hs_mirror_argv_check(2, nostate, "/x/drv", NULL), 0);
	assert_int_equal(hs_mirror_argv_check(4, withstate, "/x/drv", NULL), -1);
}

/* the broker runs mirror argvs and 'snapshot take''s fixed words, nothing else */
static void test_driver_argv_check(void **state)
{
	char d[] = "/x/drv", st[] = "--state", dir[] = "/run/lab", snap[] = "snapshot",
	     list[] = "list", delay[] = "--delay-ms", ms[] = "5", other[] = "/bin/sh",
	     dir2[] = "/tmp/other";
	char *s1[] = { d, st, dir, snap, NULL };
	char *s2[] = { d, snap, NULL };
	char *s3[] = { d, st, dir, snap, delay, ms, NULL };
	char *s4[] = { other, st, dir, snap, NULL };
	char *s5[] = { d, st, dir2, snap, NULL };
	char *m1[] = { d, st, dir, list, NULL };
	char *m2[] = { d, st, dir, snap, list, NULL };
	/* the one instant the drivers of a mixed fabric are given */
	char at[] = "--at-ns", t[] = "1764000000000000000", t0[] = "01764000000000000000",
	     tx[] = "1764000000000000000;reboot";
	char *a1[] = { d, st, dir, snap, at, t, NULL };
	char *a2[] = { d, st, dir, snap, at, t0, NULL };
	char *a3[] = { d, st, dir, snap, at, tx, NULL };
	char *a4[] = { d, st, dir, snap, at, NULL };
	(void)state;

	assert_int_equal(hs_driver_argv_check(4, s1, "/x/drv", "/run/lab"), 0);
	assert_int_equal(hs_driver_argv_check(2, s2, "/x/drv", NULL), 0);
	assert_int_equal(hs_driver_argv_check(2, s2, "/x/drv", "/run/lab"), -1);
	assert_int_equal(hs_driver_argv_check(6, s3, "/x/drv", "/run/lab"), -1);
	assert_int_equal(hs_driver_argv_check(4, s4, "/x/drv", "/run/lab"), -1);
	assert_int_equal(hs_driver_argv_check(4, s5, "/x/drv", "/run/lab"), -1);
	assert_int_equal(hs_driver_argv_check(4, m1, "/x/drv", "/run/lab"), 0);
	assert_int_equal(hs_driver_argv_check(5, m2, "/x/drv", "/run/lab"), -1);
	assert_int_equal(hs_driver_argv_check(1, s2, "/x/drv", NULL), -1);
	assert_int_equal(hs_driver_argv_check(6, a1, "/x/drv", "/run/lab"), 0);
	assert_int_equal(hs_driver_argv_check(6, a2, "/x/drv", "/run/lab"), -1);
	assert_int_equal(hs_driver_argv_check(6, a3, "/x/drv", "/run/lab"), -1);
	assert_int_equal(hs_driver_argv_check(5, a4, "/x/drv", "/run/lab"), -1);
}

/* what drivers answer: a listing joins the drivers' rules, and any answer
 * that is not the document asked for is refused with one line saying where */
static void test_answers(void **state)
{
	struct hs_mirror_listing l = { 0 };
	char err[256] = "";
	uint64_t id = 0;
	static const struct {
		const char *text, *err;
	} bad[] = {
		{ "", "an empty answer" },
		{ "1 1 all default\n", "line 1 column 1: " },
		{ "{\"rules\":[],\"drift\":[]", "line 1 column " },
		{ "{\"rules\":[]}", "drift: missing" },
		{ "{\"rules\":[],\"drift\":[],\"more\":0}", "unknown member 'more'" },
		{ "{\"rules\":[{\"id\":0,\"session\":1,\"switches\":[\"all\"],\"match\":\"syn\"}],"
		  "\"drift\":[]}", "rules[0]: id: 0 is not a rule id" },
		{ "{\"rules\":[{\"id\":1,\"session\":1024,\"switches\":[\"all\"],\"match\":\"syn\"}],"
		  "\"drift\":[]}", "rules[0]: session: 1024 is out of range (0 to 1023)" },
		{ "{\"rules\":[{\"id\":1,\"session\":1,\"switches\":[\"le;af\"],\"match\":\"syn\"}],"
		  "\"drift\":[]}", "rules[0]: switches[0]: not a switch name" },
		{ "{\"rules\":[{\"id\":1,\"session\":1,\"switches\":[],\"match\":\"syn\"}],"
		  "\"drift\":[]}", "rules[0]: switches: empty" },
		{ "{\"rules\":[{\"id\":1,\"session\":1,\"switches\":[\"all\"],\"match\":\"\"}],"
		  "\"drift\":[]}", "rules[0]: match: empty" },
		{ "{\"rules\":[],\"drift\":[{\"switch\":\"leaf1\",\"row\":7,\"what\":\"missing\"}]}",
		  "drift[0]: row: not a string" },
		{ "{\"rules\":[],\"drift\":[{\"switch\":\"leaf1\",\"row\":null,\"what\":\"a\\nb\"}]}",
		  "drift[0]: what: a control character" },
	};

	(void)state;
	assert_int_equal(hs_mirror_listing_add(&l, "{\"rules\":[{\"id\":2,\"session\":5,"
					       "\"switches\":[\"leaf2\"],\"match\":\"syn\"}],"
					       "\"drift\":[]}", err, sizeof(err)), 0);
	assert_int_equal(hs_mirror_listing_add(&l, "{\"drift\":[{\"switch\":\"leaf1\",\"row\":null,"
					       "\"what\":\"unreachable: timed out\"}],\"rules\":["
					       "{\"id\":2,\"session\":5,\"switches\":[\"leaf1\"],"
					       "\"match\":\"syn\"},{\"id\":3,\"session\":1,"
					       "\"switches\":[\"all\"],\"match\":\"default\"}]}",
					       err, sizeof(err)), 0);
	assert_int_equal(l.nrules, 2);
	assert_string_equal(l.rules[0].switches, "leaf2,leaf1");
	assert_string_equal(l.rules[1].switches, "all");
	assert_int_equal(l.ndrift, 1);
	assert_string_equal(l.drift[0].row, "-");
	assert_string_equal(l.drift[0].what, "unreachable: timed out");
	hs_mirror_listing_free(&l);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (hs_mirror_listing_add(&l, bad[i].text, err, sizeof(err)) != -1 ||
		    !strstr(err, bad[i].err) || strchr(err, '\n')) {
			fprintf(stderr, "case %zu: got '%s', want '%s'\n", i, err, bad[i].err);
			fail();
		}
		hs_mirror_listing_free(&l);
	}

	assert_int_equal(hs_mirror_answer_id("{\"id\":7}\n", false, &id, err, sizeof(err)), 0);
	assert_int_equal(id, 7);
	assert_int_equal(hs_mirror_answer_id("{\"id\":7,\"deleted\":true}", true, &id, err,
					     sizeof(err)), 0);
	assert_int_equal(hs_mirror_answer_id("7\n", false, &id, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "line 1 column"));
	assert_int_equal(hs_mirror_answer_id("{\"id\":7,\"deleted\":true}", false, &id, err,
					     sizeof(err)), -1);
	assert_non_null(strstr(err, "unknown member 'deleted'"));
	assert_int_equal(hs_mirror_answer_id("{\"id\":7}", true, &id, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "deleted: missing or not true"));
	assert_int_equal(hs_mirror_answer_id("{\"id\":4294967296}", false, &id, err, sizeof(err)),
			 -1);
	assert_non_null(strstr(err, "id: 4294967296 is out of range"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_simple_matches),
		cmocka_unit_test(test_on_and_session),
		cmocka_unit_test(test_flow_and_prefix),
		cmocka_unit_test(test_list_del),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_argv),
		cmocka_unit_test(test_driver_argv_check),
		cmocka_unit_test(test_argv_check),
		cmocka_unit_test(test_answers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
