/* test_agent_sonic.c - the lab agent's reading of SONiC ACL rule rows as
 * netfilter matches (hs-agent --sonic) */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "../../src/agent/agent.h"

struct good {
	const char *f[12];	/* name, value, ..., NULL */
	const char *want;
};

static size_t nfields(const char *const *f)
{
	size_t n = 0;

	while (f[n])
		n++;
	return n;
}

/* the rows hs-driver-sonic writes, and the matches the lab driver uses */
static void test_rows(void **state)
{
	static const struct good cases[] = {
		{ { "PRIORITY", "10000", "MIRROR_INGRESS_ACTION", "hopscope_s1", "IP_PROTOCOL", "6",
		    "TCP_FLAGS", "0x02/0x02", NULL }, "-p 6 -m tcp --tcp-flags SYN SYN" },
		{ { "IP_PROTOCOL", "6", "TCP_FLAGS", "0x04/0x04", NULL }, "-p 6 -m tcp --tcp-flags RST RST" },
		{ { "IP_PROTOCOL", "6", "TCP_FLAGS", "0x12/0x17", NULL },
		  "-p 6 -m tcp --tcp-flags FIN,SYN,RST,ACK SYN,ACK" },
		{ { "DSCP", "1", NULL }, "-m dscp --dscp 1" },
		{ { "IP_PROTOCOL", "6", "L4_SRC_PORT", "179", NULL }, "-p 6 -m tcp --sport 179" },
		{ { "IP_PROTOCOL", "17", "L4_DST_PORT", "4791", NULL }, "-p 17 -m udp --dport 4791" },
		{ { "IP_PROTOCOL", "1", "SRC_IP", "10.1.1.11/32", "DST_IP", "10.1.2.0/24", NULL },
		  "-p 1 -s 10.1.1.11/32 -d 10.1.2.0/24" },
		{ { "SRC_IP", "10.1.3.0/24", NULL }, "-s 10.1.3.0/24" },
		{ { "ETHER_TYPE", "0x0800", NULL }, "" },
	};
	char out[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = ag_sonic_match(cases[i].f, nfields(cases[i].f), out, sizeof(out));

		if (rc != 0 || strcmp(out, cases[i].want) != 0)
			fail_msg("case %zu: got %d '%s', want '%s'", i, rc, rc ? "" : out, cases[i].want);
	}
}

/* what netfilter cannot express, and values that are not valid, are refused */
static void test_refused(void **state)
{
	static const char *const cases[][8] = {
		{ "ETHER_TYPE", "0x8808", NULL },		/* PFC frames: layer 2 */
		{ "SRC_IP", "10.1.1.300/32", NULL },
		{ "DST_IP", "10.1.1.1/33", NULL },
		{ "SRC_IP", "10.1.1.1 -j ACCEPT", NULL },
		{ "L4_DST_PORT", "80", NULL },			/* a port needs tcp or udp */
		{ "IP_PROTOCOL", "17", "TCP_FLAGS", "0x02/0x02", NULL },
		{ "IP_PROTOCOL", "6", "L4_DST_PORT", "0", NULL },
		{ "IP_PROTOCOL", "6", "L4_DST_PORT", "65536", NULL },
		{ "IP_PROTOCOL", "6", "TCP_FLAGS", "0x02", NULL },
		{ "IP_PROTOCOL", "x", NULL },
		{ "DSCP", "64", NULL },
		{ "VLAN_ID", "10", NULL },			/* a field it does not know */
	};
	char out[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (ag_sonic_match(cases[i], nfields(cases[i]), out, sizeof(out)) != -1)
			fail_msg("case %zu (%s %s) was accepted as '%s'", i, cases[i][0], cases[i][1], out);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
