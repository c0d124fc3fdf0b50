/* mirror.c - the mirror-rule grammar (mirror.h): a rule from the words a
 * user typed, the driver's argv from a rule, and the broker's check that an
 * argv is exactly what some rule gives
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "answer.h"
#include "mirror.h"

/* [a-z][a-z0-9_-]{0,30}: what the lab's namespaces and the driver accept */
static bool name_ok(const char *s, size_t n)
{
	if (n == 0 || n > 31 || s[0] < 'a' || s[0] > 'z')
		return false;
	for (size_t i = 1; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_'))
			return false;
	}
	return true;
}


static int parse_switches(const char *w, const struct hs_topo *topo,
			  struct hs_mirror_rule *r, char *err, size_t errlen)
{
	const char *p = w;

	if (strcmp(w, "all") == 0) {
		snprintf(r->switches, sizeof(r->switches), "all");
		return 0;
	}
	if (strlen(w) >= sizeof(r->switches))
		return hs_errf(err, errlen, "too many switches in '%.40s...'", w);
	for (;;) {
		size_t n = strcspn(p, ",");
		char name[HS_NAME_MAX];

		if (n == 0)
			return hs_errf(err, errlen, "invalid switch list '%s' (SW[,SW...] or all)", w);
		if (!name_ok(p, n))
			return hs_errf(err, errlen, "invalid switch name '%.*s'", (int)n, p);
		memcpy(name, p, n);
		name[n] = '\0';
		if (topo && hs_topo_switch_by_name(topo, name) < 0)
			return hs_errf(err, errlen, "unknown switch '%s'", name);
		for (const char *q = w; q < p; q += strcspn(q, ",") + 1) {
			if (strcspn(q, ",") == n && memcmp(q, p, n) == 0)
				return hs_errf(err, errlen, "switch '%s' listed twice", name);
		}
		p += n;
		if (!*p)
			break;
		p++;
	}
	snprintf(r->switches, sizeof(r->switches), "%s", w);
	return 0;
}

/* an IPv4 or IPv6 address or prefix, or "any", in canonical text; *af gets
 * 4 or 6 (0 for any) */
static int canon_addr(const char *s, char *out, size_t len, int *af)
{
	struct hs_addr a;
	char buf[HS_ADDRSTRLEN];
	int plen;

	*af = 0;
	if (strcmp(s, "any") == 0) {
		snprintf(out, len, "any");
		return 0;
	}
	if (hs_prefix_parse(s, &a, &plen) < 0)
		return -1;
	hs_addr_str(&a, buf, sizeof(buf));
	if (strchr(s, '/'))
		snprintf(out, len, "%s/%d", buf, plen);
	else
		snprintf(out, len, "%s", buf);
	*af = a.af;
	return 0;
}

#define ENDPOINT_HELP "ADDR[:PORT], with an IPv6 address [ADDR]:PORT"
#define ADDR_HELP "IPv4 or IPv6 address, prefix or any"

/* SRC[:PORT] -> canonical word ("10.0.0.1:80", "[2001:db8::1]:80",
 * "2001:db8::/32"); *has_port set, *af 4, 6 or 0 for any */
static int parse_endpoint(const char *w, char *out, size_t len, bool *has_port, int *af,
			  char *err, size_t errlen)
{
	char addr[HS_ADDRSTRLEN + 8], canon[HS_ADDRSTRLEN + 8];
	const char *colon;
	bool bracketed;
	int n = hs_endpoint_split(w, addr, sizeof(addr), &colon, &bracketed);
	uint64_t port = 0;

	if (n < 0)
		return hs_errf(err, errlen, "invalid endpoint '%s' (" ENDPOINT_HELP ")", w);
	if (n == 0 || (size_t)n >= sizeof(addr))
		return hs_errf(err, errlen, "invalid address in '%s' (" ADDR_HELP ")", w);
	if (canon_addr(addr, canon, sizeof(canon), af) < 0 || (bracketed && *af != 6))
		return hs_errf(err, errlen, "invalid address '%s' (" ADDR_HELP ")", addr);
	*has_port = colon != NULL;
	if (colon && (hs_parse_dec(colon, 65535, &port) < 0 || port == 0))
		return hs_errf(err, errlen, "invalid port '%s' in '%s' (1 to 65535)", colon, w);
	if (colon && *af == 6)
		snprintf(out, len, "[%s]:%u", canon, (unsigned)port);
	else if (colon)
		snprintf(out, len, "%s:%u", canon, (unsigned)port);
	else
		snprintf(out, len, "%s", canon);
	return 0;
}

static const char *const simple_matches[] = {
	"default", "syn", "fin", "rst", "debug", "bgp", "roce",
};

#define MATCH_HELP "default, syn, fin, rst, debug, bgp, roce, flow or prefix"

static int parse_match(int argc, char **argv, struct hs_mirror_rule *r, char *err,
		       size_t errlen)
{
	const char *kind;

	if (argc < 1)
		return hs_errf(err, errlen, "mirror add needs a match (" MATCH_HELP ")");
	kind = argv[0];
	for (size_t i = 0; i < HS_ARRAY_SIZE(simple_matches); i++) {
		if (strcmp(kind, simple_matches[i]) == 0) {
			if (argc > 1)
				return hs_errf(err, errlen, "unexpected '%s' after '%s'", argv[1], kind);
			snprintf(r->match[0], HS_MIRROR_WORD_MAX, "%s", kind);
			r->nmatch = 1;
			return 0;
		}
	}
	if (strcmp(kind, "flow") == 0) {
		const char *proto;
		bool sp, dp;
		int saf, daf;

		if (argc < 4)
			return hs_errf(err, errlen, "flow needs PROTO SRC[:PORT] DST[:PORT]");
		if (argc > 4)
			return hs_errf(err, errlen, "unexpected '%s' after the flow", argv[4]);
		proto = argv[1];
		if (strcmp(proto, "tcp") && strcmp(proto, "udp") && strcmp(proto, "icmp") &&
		    strcmp(proto, "any"))
			return hs_errf(err, errlen, "invalid protocol '%s' (tcp, udp, icmp or any)", proto);
		snprintf(r->match[0], HS_MIRROR_WORD_MAX, "flow");
		snprintf(r->match[1], HS_MIRROR_WORD_MAX, "%s", proto);
		if (parse_endpoint(argv[2], r->match[2], HS_MIRROR_WORD_MAX, &sp, &saf, err,
				   errlen) < 0 ||
		    parse_endpoint(argv[3], r->match[3], HS_MIRROR_WORD_MAX, &dp, &daf, err,
				   errlen) < 0)
			return -1;
		if (saf && daf && saf != daf)
			return hs_errf(err, errlen, "flow mixes IPv4 and IPv6 ('%s', '%s')", argv[2],
				    argv[3]);
		if ((sp || dp) && (!strcmp(proto, "icmp") || !strcmp(proto, "any")))
			return hs_errf(err, errlen, "protocol '%s' has no ports (in '%s')", proto,
				    sp ? argv[2] : argv[3]);
		r->nmatch = 4;
		return 0;
	}
	if (strcmp(kind, "prefix") == 0) {
		int af;

		if (argc < 2)
			return hs_errf(err, errlen, "prefix needs an IPv4 or IPv6 prefix (e.g. "
				    "10.1.3.0/24)");
		if (argc > 2)
			return hs_errf(err, errlen, "unexpected '%s' after the prefix", argv[2]);
		if (strcmp(argv[1], "any") == 0 ||
		    canon_addr(argv[1], r->match[1], HS_MIRROR_WORD_MAX, &af) < 0)
			return hs_errf(err, errlen, "invalid prefix '%s' (e.g. 10.1.3.0/24 or "
				    "2001:db8::/32)", argv[1]);
		snprintf(r->match[0], HS_MIRROR_WORD_MAX, "prefix");
		r->nmatch = 2;
		return 0;
	}
	return hs_errf(err, errlen, "unknown match '%s' (" MATCH_HELP ")", kind);
}

int hs_mirror_parse(int argc, char **argv, const struct hs_topo *topo,
		    struct hs_mirror_rule *r, char *err, size_t errlen)
{
	const char *sub;
	bool have_on = false, have_session = false;
	int i;

	memset(r, 0, sizeof(*r));
	r->session = 1;
	snprintf(r->switches, sizeof(r->switches), "all");
	if (argc < 1)
		return hs_errf(err, errlen, "mirror needs add, del or list");
	sub = argv[0];
	if (strcmp(sub, "list") == 0) {
		if (argc > 1)
			return hs_errf(err, errlen, "mirror list: unexpected '%s'", argv[1]);
		r->op = HS_MIRROR_LIST;
		return 0;
	}
	if (strcmp(sub, "del") == 0) {
		if (argc < 2)
			return hs_errf(err, errlen, "mirror del needs a rule id (see 'mirror list')");
		if (argc > 2)
			return hs_errf(err, errlen, "mirror del: unexpected '%s'", argv[2]);
		if (hs_parse_dec(argv[1], UINT32_MAX, &r->id) < 0)
			return hs_errf(err, errlen, "invalid rule id '%s' (a number, see 'mirror list')",
				    argv[1]);
		r->op = HS_MIRROR_DEL;
		return 0;
	}
	if (strcmp(sub, "add") != 0)
		return hs_errf(err, errlen, "unknown mirror subcommand '%s' (add, del, list)", sub);

	r->op = HS_MIRROR_ADD;
	for (i = 1; i < argc; i += 2) {
		uint64_t v;

		if (strcmp(argv[i], "on") == 0) {
			if (have_on)
				return hs_errf(err, errlen, "'on' given twice");
			if (i + 1 >= argc)
				return hs_errf(err, errlen, "'on' needs switches (SW[,SW...] or all)");
			if (parse_switches(argv[i + 1], topo, r, err, errlen) < 0)
				return -1;
			have_on = true;
		} else if (strcmp(argv[i], "session") == 0) {
			if (have_session)
				return hs_errf(err, errlen, "'session' given twice");
			if (i + 1 >= argc)
				return hs_errf(err, errlen, "'session' needs a number (0 to %d)",
					    HS_MIRROR_SESSION_MAX);
			if (hs_parse_dec(argv[i + 1], HS_MIRROR_SESSION_MAX, &v) < 0)
				return hs_errf(err, errlen, "invalid session '%s' (0 to %d)", argv[i + 1],
					    HS_MIRROR_SESSION_MAX);
			r->session = (unsigned)v;
			have_session = true;
		} else {
			break;
		}
	}
	return parse_match(argc - i, argv + i, r, err, errlen);
}

const char *hs_mirror_match_str(const struct hs_mirror_rule *r, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 0; i < r->nmatch && off < len; i++) {
		int n = snprintf(buf + off, len - off, "%s%s", i ? " " : "", r->match[i]);

		if (n < 0)
			break;
		off += (size_t)n;
	}
	return buf;
}

int hs_mirror_argv(const struct hs_mirror_rule *r, const char *driver, const char *state,
		   char *idbuf, size_t idlen, char *sessbuf, size_t sesslen, char **argv)
{
	int n = 0;

	argv[n++] = (char *)driver;
	if (state) {
		argv[n++] = (char *)"--state";
		argv[n++] = (char *)state;
	}
	switch (r->op) {
	case HS_MIRROR_LIST:
		argv[n++] = (char *)"list";
		break;
	case HS_MIRROR_DEL:
		snprintf(idbuf, idlen, "%" PRIu64, r->id);
		argv[n++] = (char *)"del";
		argv[n++] = (char *)"--id";
		argv[n++] = idbuf;
		break;
	case HS_MIRROR_ADD:
		snprintf(sessbuf, sesslen, "%u", r->session);
		argv[n++] = (char *)"add";
		if (r->id) {	/* the id another driver gave the same rule */
			snprintf(idbuf, idlen, "%" PRIu64, r->id);
			argv[n++] = (char *)"--id";
			argv[n++] = idbuf;
		}
		argv[n++] = (char *)"--session";
		argv[n++] = sessbuf;
		argv[n++] = (char *)"--switches";
		argv[n++] = (char *)r->switches;
		argv[n++] = (char *)"--match";
		for (int i = 0; i < r->nmatch; i++)
			argv[n++] = (char *)r->match[i];
		break;
	}
	argv[n] = NULL;
	return n;
}

/* the broker's check: rebuild the rule from the driver's words, parse it as
 * a user's command, and require the very argv that rule gives */
int hs_mirror_argv_check(int argc, char *const *argv, const char *driver, const char *state)
{
	char *words[HS_MIRROR_ARGV_MAX], *again[HS_MIRROR_ARGV_MAX];
	char idbuf[24], sessbuf[8], err[256];
	struct hs_mirror_rule r;
	const char *id = NULL;
	uint64_t v;
	int i = 1, nw = 0, n;

	if (argc < 2 || argc >= HS_MIRROR_ARGV_MAX || !driver || strcmp(argv[0], driver) != 0)
		return -1;
	if (state) {
		if (argc < 4 || strcmp(argv[1], "--state") != 0 || strcmp(argv[2], state) != 0)
			return -1;
		i = 3;
	}
	if (strcmp(argv[i], "list") == 0) {
		words[nw++] = argv[i];
	} else if (strcmp(argv[i], "del") == 0 && argc == i + 3) {
		words[nw++] = argv[i];
		words[nw++] = argv[i + 2];
	} else if (strcmp(argv[i], "add") == 0) {
		int j = i;

		if (argc > i + 2 && strcmp(argv[i + 1], "--id") == 0) {
			id = argv[i + 2];
			j = i + 2;
		}
		if (argc <= j + 6 || argc - (j + 6) > HS_MIRROR_WORDS)
			return -1;
		words[nw++] = argv[i];
		words[nw++] = (char *)"on";
		words[nw++] = argv[j + 4];
		words[nw++] = (char *)"session";
		words[nw++] = argv[j + 2];
		for (int k = j + 6; k < argc; k++)
			words[nw++] = argv[k];
	} else {
		return -1;
	}
	if (hs_mirror_parse(nw, words, NULL, &r, err, sizeof(err)) < 0)
		return -1;
	if (id) {
		if (hs_parse_dec(id, UINT32_MAX, &v) < 0 || v == 0)
			return -1;
		r.id = v;
	}
	n = hs_mirror_argv(&r, driver, state, idbuf, sizeof(idbuf), sessbuf, sizeof(sessbuf),
			   again);
	if (n != argc)
		return -1;
	for (int k = 0; k < n; k++)
		if (strcmp(again[k], argv[k]) != 0)
			return -1;
	return 0;
}

/* ---- what drivers answer ---------------------------------------------------- */

int hs_mirror_answer_id(const char *text, bool deleted, uint64_t *id, char *err, size_t errlen)
{
	static const char *const added_names[] = { "id", NULL };
	static const char *const deleted_names[] = { "id", "deleted", NULL };
	json_t *doc = hs_answer_parse(text, strlen(text), err, errlen);
	int rc = -1;

	if (!doc)
		return -1;
	if (hs_answer_only(doc, deleted ? deleted_names : added_names, err, errlen) == 0 &&
	    hs_answer_uint(doc, "id", UINT32_MAX, id, err, errlen) == 0) {
		rc = 0;
		if (*id == 0)
			rc = hs_errf(err, errlen, "id: 0 is not a rule id");
		else if (deleted && !json_is_true(json_object_get(doc, "deleted")))
			rc = hs_errf(err, errlen, "deleted: missing or not true");
	}
	json_decref(doc);
	return rc;
}

/* one {"id","session","switches","match"} of the answer's rules */
static int listing_rule(struct hs_mirror_listing *l, const json_t *o, char *err, size_t errlen)
{
	static const char *const names[] = { "id", "session", "switches", "match", NULL };
	struct hs_mirror_listed row = { 0 };
	const json_t *sws = NULL, *sw;
	size_t k, i, off = 0;

	if (!json_is_object(o))
		return hs_errf(err, errlen, "not an object");
	if (hs_answer_only(o, names, err, errlen) < 0 ||
	    hs_answer_uint(o, "id", UINT32_MAX, &row.id, err, errlen) < 0 ||
	    hs_answer_uint(o, "session", HS_MIRROR_SESSION_MAX, &row.session, err, errlen) < 0 ||
	    hs_answer_str(o, "match", row.match, sizeof(row.match), err, errlen) < 0 ||
	    !(sws = hs_answer_arr(o, "switches", err, errlen)))
		return -1;
	if (row.id == 0)
		return hs_errf(err, errlen, "id: 0 is not a rule id");
	if (json_array_size(sws) == 0)
		return hs_errf(err, errlen, "switches: empty");
	json_array_foreach(sws, i, sw) {
		const char *name = json_string_value(sw);

		if (!name || !(hs_name_ok(name) || (strcmp(name, "all") == 0 &&
						    json_array_size(sws) == 1)))
			return hs_errf(err, errlen, "switches[%zu]: not a switch name", i);
		if (off + strlen(name) + 2 > sizeof(row.switches))
			return hs_errf(err, errlen, "switches: too many");
		off += (size_t)snprintf(row.switches + off, sizeof(row.switches) - off, "%s%s",
					off ? "," : "", name);
	}
	for (k = 0; k < l->nrules && l->rules[k].id != row.id; k++)
		;
	if (k < l->nrules) {
		/* the same rule on another driver's switches */
		struct hs_mirror_listed *o2 = &l->rules[k];
		size_t len = strlen(o2->switches);

		if (strcmp(o2->switches, "all") == 0 || strcmp(row.switches, "all") == 0) {
			snprintf(o2->switches, sizeof(o2->switches), "all");
		} else if (len + 1 + strlen(row.switches) < sizeof(o2->switches)) {
			snprintf(o2->switches + len, sizeof(o2->switches) - len, ",%s", row.switches);
		} else {
			return hs_errf(err, errlen, "rule %" PRIu64 " spans too many switches",
				    row.id);
		}
		return 0;
	}
	if (l->nrules == HS_MIRROR_LIST_MAX)
		return hs_errf(err, errlen, "more than %d rules", HS_MIRROR_LIST_MAX);
	if (l->nrules % 16 == 0) {
		l->rules = realloc(l->rules, (l->nrules + 16) * sizeof(*l->rules));
		if (!l->rules)
			abort();
	}
	l->rules[l->nrules++] = row;
	return 0;
}

/* one {"switch","row","what"} of the answer's drift; row null: the switch */
static int listing_drift(struct hs_mirror_listing *l, const json_t *o, char *err, size_t errlen)
{
	static const char *const names[] = { "switch", "row", "what", NULL };
	struct hs_mirror_drift d = { 0 };

	if (!json_is_object(o))
		return hs_errf(err, errlen, "not an object");
	if (hs_answer_only(o, names, err, errlen) < 0 ||
	    hs_answer_str(o, "switch", d.sw, sizeof(d.sw), err, errlen) < 0 ||
	    hs_answer_str(o, "what", d.what, sizeof(d.what), err, errlen) < 0)
		return -1;
	if (!hs_name_ok(d.sw))
		return hs_errf(err, errlen, "switch: not a switch name");
	if (json_is_null(json_object_get(o, "row")))
		snprintf(d.row, sizeof(d.row), "-");
	else if (hs_answer_str(o, "row", d.row, sizeof(d.row), err, errlen) < 0)
		return -1;
	if (l->ndrift == HS_MIRROR_LIST_MAX)
		return hs_errf(err, errlen, "more than %d drift entries", HS_MIRROR_LIST_MAX);
	if (l->ndrift % 16 == 0) {
		l->drift = realloc(l->drift, (l->ndrift + 16) * sizeof(*l->drift));
		if (!l->drift)
			abort();
	}
	l->drift[l->ndrift++] = d;
	return 0;
}

int hs_mirror_listing_add(struct hs_mirror_listing *l, const char *text, char *err,
			  size_t errlen)
{
	static const char *const names[] = { "rules", "drift", NULL };
	json_t *doc = hs_answer_parse(text, strlen(text), err, errlen);
	const json_t *rules = NULL, *drift = NULL, *x;
	char why[256];
	size_t i;
	int rc = -1;

	if (!doc)
		return -1;
	if (hs_answer_only(doc, names, err, errlen) < 0 ||
	    !(rules = hs_answer_arr(doc, "rules", err, errlen)) ||
	    !(drift = hs_answer_arr(doc, "drift", err, errlen)))
		goto out;
	json_array_foreach(rules, i, x) {
		if (listing_rule(l, x, why, sizeof(why)) < 0) {
			hs_errf(err, errlen, "rules[%zu]: %s", i, why);
			goto out;
		}
	}
	json_array_foreach(drift, i, x) {
		if (listing_drift(l, x, why, sizeof(why)) < 0) {
			hs_errf(err, errlen, "drift[%zu]: %s", i, why);
			goto out;
		}
	}
	rc = 0;
out:
	json_decref(doc);
	return rc;
}

void hs_mirror_listing_free(struct hs_mirror_listing *l)
{
	free(l->rules);
	free(l->drift);
	memset(l, 0, sizeof(*l));
}
