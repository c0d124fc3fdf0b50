/* mirror.h - mirror rules: their grammar, and the argv a driver applies them by
 *
 *   add [on SW[,SW...]|all] [session N] MATCH
 *   del ID
 *   list
 *
 * MATCH is default, syn, fin, rst, debug, bgp, roce,
 * "flow PROTO SRC[:PORT] DST[:PORT]" (PROTO tcp, udp, icmp or any; SRC and
 * DST IPv4 or IPv6 addresses, prefixes or "any", of one family; an IPv6
 * address with a port in brackets, [ADDR]:PORT) or "prefix PREFIX". The parsed rule
 * keeps the match in canonical words, which become the driver's argv:
 *
 *   DRIVER [--state DIR] add [--id ID] --session N --switches all|SW,SW --match WORD...
 *   DRIVER [--state DIR] del --id ID
 *   DRIVER [--state DIR] list
 */
#ifndef HS_MIRROR_H
#define HS_MIRROR_H

#include "hs.h"
#include "topo.h"

#define HS_MIRROR_SESSION_MAX	1023	/* ERSPAN session ids are 10 bits */
#define HS_MIRROR_WORDS		4	/* "flow PROTO SRC DST" */
#define HS_MIRROR_WORD_MAX	64
#define HS_MIRROR_ARGV_MAX	(12 + HS_MIRROR_WORDS)

enum hs_mirror_op {
	HS_MIRROR_ADD,
	HS_MIRROR_DEL,
	HS_MIRROR_LIST,
};

struct hs_mirror_rule {
	enum hs_mirror_op op;
	unsigned session;		/* default 1 */
	char switches[512];		/* "all" or "SW,SW" */
	uint64_t id;			/* del; add: the id to give (0: the driver's) */
	int nmatch;
	char match[HS_MIRROR_WORDS][HS_MIRROR_WORD_MAX];
};

/* Parse the words after the verb ("add on leaf1 syn"). Switch names are
 * checked against topo when it is not NULL. Returns 0, or -1 with a message
 * naming the offending word in err. */
int hs_mirror_parse(int argc, char **argv, const struct hs_topo *topo,
		    struct hs_mirror_rule *r, char *err, size_t errlen);

/* the match as one line of text ("flow tcp 10.0.0.1:80 any") */
const char *hs_mirror_match_str(const struct hs_mirror_rule *r, char *buf, size_t len);

/* The driver's argv, NULL-ended, pointing into r, idbuf and the arguments;
 * state may be NULL (the driver's default). Returns argc. */
int hs_mirror_argv(const struct hs_mirror_rule *r, const char *driver, const char *state,
		   char *idbuf, size_t idlen, char *sessbuf, size_t sesslen,
		   char **argv);

/* the broker's check: argv must be exactly what hs_mirror_argv builds for
 * a rule hs_mirror_parse accepts, for this driver and state. 0 or -1. */
int hs_mirror_argv_check(int argc, char *const *argv, const char *driver, const char *state);

/* ---- what drivers answer (JSON, answer.h) ------------------------------------
 *
 *   add    {"id":ID}
 *   del    {"id":ID,"deleted":true}
 *   list   {"rules":[{"id":ID,"session":N,"switches":["all"]|["SW",...],
 *                     "match":"SPEC"},...],
 *           "drift":[{"switch":"SW","row":"KEY"|null,"what":"..."},...]}
 *
 * One listing gathers the answers of the fabric's drivers: a rule that
 * spans drivers (one id) is one row, its switches joined. */

/* the rule id of an answer to add (deleted false) or del; 0, or -1 with err */
int hs_mirror_answer_id(const char *text, bool deleted, uint64_t *id, char *err, size_t errlen);

#define HS_MIRROR_LIST_MAX	65536

struct hs_mirror_listed {
	uint64_t id, session;
	char switches[512];
	char match[HS_MIRROR_WORDS * HS_MIRROR_WORD_MAX];
};

struct hs_mirror_drift {
	char sw[HS_NAME_MAX];
	char row[160];			/* "-" for the switch as a whole */
	char what[256];
};

struct hs_mirror_listing {
	struct hs_mirror_listed *rules;
	size_t nrules;
	struct hs_mirror_drift *drift;
	size_t ndrift;
};

/* add one driver's answer to list; 0, or -1 with err (one line) and l
 * holding what came before */
int hs_mirror_listing_add(struct hs_mirror_listing *l, const char *text, char *err,
			  size_t errlen);
void hs_mirror_listing_free(struct hs_mirror_listing *l);

#endif
