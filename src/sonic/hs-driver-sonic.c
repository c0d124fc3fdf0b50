/* hs-driver-sonic.c - hopscope's driver for SONiC switches: rows in CONFIG_DB
 *
 *   hs-driver-sonic [OPTIONS] add [--id ID] --session N --switches all|SW[,SW...] --match SPEC
 *   hs-driver-sonic [OPTIONS] del --id ID
 *   hs-driver-sonic [OPTIONS] list
 *   hs-driver-sonic [OPTIONS] snapshot [--delay-ms N | --at-ns T]
 *
 * The interface is the one every driver speaks (share/drivers/README). A
 * SONiC switch is configured through redis: CONFIG_DB (database 4) holds
 * one hash per row, "TABLE|KEY"; COUNTERS_DB (database 2) the port counters.
 * The topology names each switch's redis ("driver sonic redis ADDR").
 *
 * The driver keeps the rules it was asked for in STATE/sonic.rules. From
 * them it derives, for each switch, the whole set of rows hopscope wants
 * there (mirror sessions, an ACL table type, table and rules, an IP-in-IP
 * decap tunnel), every name starting with "hopscope", and makes CONFIG_DB
 * hold exactly that set among the rows with that prefix: add and del are
 * one reconciliation, and list reports where the switch differs (drift).
 * Rows without the prefix are never read for change, written or deleted.
 * A failure part way restores every row already changed, on every switch,
 * and says which switch and row failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <hiredis/hiredis.h>
#include <jansson.h>

#include "hs.h"
#include "topo.h"

#define PROG "hs-driver-sonic"
#define CONFIG_DB 4
#define COUNTERS_DB 2
#define PREFIX "hopscope"
#define TABLE PREFIX "_mirror"		/* ACL table and its custom type */
#define TABLE6 PREFIX "_mirror6"		/* the IPv6 matches: a MIRRORV6 table */
#define TUNNEL PREFIX "_decap"
#define PRIORITY "10000"
#define MAX_FIELDS 12
#define MAX_RULES 4096
#define MAX_MATCH 8			/* ACL rows of one rule (the default set) */

/* ---- small things ------------------------------------------------------------- */

static bool dry_run;
static int timeout_ms = 2000;

/* one line on stderr, then exit: 2 for a bad request, 1 for a failure */
static void __attribute__((noreturn)) quit(int code, const char *fmt, va_list ap)
{
	fputs(PROG ": ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	exit(code);
}

static void __attribute__((format(printf, 1, 2), noreturn)) bad(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	quit(2, fmt, ap);
}

static void __attribute__((format(printf, 1, 2), noreturn)) die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	quit(1, fmt, ap);
}

static void usage(FILE *f)
{
	fputs("usage: " PROG " [--topo FILE] [--state DIR] [--timeout-ms N] [--dry-run] COMMAND\n"
	      "  add [--id ID] --session N --switches all|SW[,SW...] --match SPEC\n"
	      "  del --id ID\n"
	      "  list\n"
	      "  snapshot [--delay-ms N | --at-ns T]\n"
	      "SPEC: default | syn | fin | rst | debug | bgp | roce\n"
	      "      | flow tcp|udp|icmp|any SRC[:PORT] DST[:PORT] | prefix PREFIX\n", f);
}

/* ---- rows --------------------------------------------------------------------- */

struct field {
	char name[32];
	char val[1024];
};

struct row {
	char key[160];
	int rank;			/* creation order: sessions first, rules last */
	int nf;
	struct field f[MAX_FIELDS];
};

struct rowset {
	struct row *v;
	int n, cap;
};

static struct row *row_new(struct rowset *s, int rank, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static struct row *row_new(struct rowset *s, int rank, const char *fmt, ...)
{
	struct row *r;
	va_list ap;

	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 16;
		s->v = realloc(s->v, (size_t)s->cap * sizeof(*s->v));
		if (!s->v)
			die("out of memory");
	}
	r = &s->v[s->n++];
	memset(r, 0, sizeof(*r));
	r->rank = rank;
	va_start(ap, fmt);
	vsnprintf(r->key, sizeof(r->key), fmt, ap);
	va_end(ap);
	return r;
}

static void set(struct row *r, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set(struct row *r, const char *name, const char *fmt, ...)
{
	struct field *f = &r->f[r->nf++];
	va_list ap;

	snprintf(f->name, sizeof(f->name), "%s", name);
	va_start(ap, fmt);
	vsnprintf(f->val, sizeof(f->val), fmt, ap);
	va_end(ap);
}

static const char *get(const struct row *r, const char *name)
{
	for (int i = 0; i < r->nf; i++)
		if (strcmp(r->f[i].name, name) == 0)
			return r->f[i].val;
	return NULL;
}

static struct row *find(const struct rowset *s, const char *key)
{
	for (int i = 0; i < s->n; i++)
		if (strcmp(s->v[i].key, key) == 0)
			return &s->v[i];
	return NULL;
}

/* same fields with the same values, in any order */
static bool row_eq(const struct row *a, const struct row *b)
{
	if (a->nf != b->nf)
		return false;
	for (int i = 0; i < a->nf; i++) {
		const char *v = get(b, a->f[i].name);
		if (!v || strcmp(v, a->f[i].val) != 0)
			return false;
	}
	return true;
}

static int rank_of(const char *key)
{
	static const char *const order[] = { "MIRROR_SESSION|", "TUNNEL|", "ACL_TABLE_TYPE|",
					     "ACL_TABLE|", "ACL_RULE|" };

	for (int i = 0; i < (int)HS_ARRAY_SIZE(order); i++)
		if (strncmp(key, order[i], strlen(order[i])) == 0)
			return i;
	return 0;
}

/* ---- the rules hopscope was asked for ------------------------------------------- */

struct rule {
	uint64_t id;
	unsigned session;
	char switches[512];		/* as asked: all or SW,SW */
	char resolved[512];		/* the switches it went to */
	char match[256];		/* canonical words */
};

static struct rule rules[MAX_RULES];
static int nrules;
static uint64_t next_id = 1;
static char state_dir[PATH_MAX] = "/var/lib/hopscope";
static char rules_path[PATH_MAX + 16];

static bool in_list(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
		if (strcspn(p, ",") == n && strncmp(p, name, n) == 0)
			return true;
	}
	return false;
}

static void state_read(void)
{
	char line[2048];
	FILE *f;

	snprintf(rules_path, sizeof(rules_path), "%s/sonic.rules", state_dir);
	f = fopen(rules_path, "r");
	if (!f) {
		if (errno == ENOENT)
			return;
		die("cannot read '%s': %s", rules_path, strerror(errno));
	}
	while (fgets(line, sizeof(line), f)) {
		struct rule *r = &rules[nrules];
		uint64_t v;
		int pos = 0;

		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "# next-id %" SCNu64, &v) == 1) {
			if (v > next_id)
				next_id = v;
			continue;
		}
		if (nrules == MAX_RULES)
			die("too many rules in '%s' (at most %d)", rules_path, MAX_RULES);
		if (sscanf(line, "%" SCNu64 " %u %511s %511s %n", &r->id, &r->session, r->switches,
			   r->resolved, &pos) != 4 || !line[pos])
			continue;
		snprintf(r->match, sizeof(r->match), "%s", line + pos);
		if (r->id >= next_id)
			next_id = r->id + 1;
		nrules++;
	}
	fclose(f);
}

/* DIR/next-id: the next id any driver keeping its rules in DIR may give,
 * so that the drivers of one fabric never give the same id to two rules */
static uint64_t shared_next(void)
{
	char path[PATH_MAX + 16], line[32];
	uint64_t v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/next-id", state_dir);
	f = fopen(path, "r");
	if (!f) {
		if (errno != ENOENT)
			die("cannot read '%s': %s", path, strerror(errno));
		return 0;
	}
	if (!fgets(line, sizeof(line), f) ||
	    hs_parse_dec((line[strcspn(line, "\n")] = '\0', line), UINT32_MAX, &v) < 0)
		v = 0;		/* unreadable: the drivers' own records still hold */
	fclose(f);
	return v;
}

static void shared_write(uint64_t next)
{
	char path[PATH_MAX + 16], tmp[PATH_MAX + 32];
	FILE *f;

	if (next <= shared_next())
		return;
	snprintf(path, sizeof(path), "%s/next-id", state_dir);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		die("cannot write '%s': %s", tmp, strerror(errno));
	fprintf(f, "%" PRIu64 "\n", next);
	if (fflush(f) != 0 || fsync(fileno(f)) != 0 || fclose(f) != 0 || rename(tmp, path) != 0)
		die("cannot write '%s': %s", path, strerror(errno));
}

static void state_write(void)
{
	char tmp[PATH_MAX + 32];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", rules_path);
	f = fopen(tmp, "w");
	if (!f)
		die("cannot write '%s': %s", tmp, strerror(errno));
	fprintf(f, "# next-id %" PRIu64 "\n", next_id);
	for (int i = 0; i < nrules; i++)
		fprintf(f, "%" PRIu64 " %u %s %s %s\n", rules[i].id, rules[i].session,
			rules[i].switches, rules[i].resolved, rules[i].match);
	if (fflush(f) != 0 || fsync(fileno(f)) != 0 || fclose(f) != 0 || rename(tmp, rules_path) != 0)
		die("cannot write '%s': %s", rules_path, strerror(errno));
}

static void state_lock(void)
{
	int fd = open(state_dir, O_RDONLY | O_DIRECTORY);

	if (fd < 0 && errno == ENOENT && mkdir(state_dir, 0700) == 0)
		fd = open(state_dir, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		die("cannot open state directory '%s': %s", state_dir, strerror(errno));
	for (int i = 0; flock(fd, LOCK_EX | LOCK_NB) < 0; i++) {
		if (i == 600)
			die("cannot lock '%s': another driver is running", state_dir);
		usleep(100000);
	}
}

/* ---- matches: a rule's words -> the match fields of its ACL rows ------------------- */

struct acl {
	int n;
	int af;				/* 6: the rows go to the MIRRORV6 table */
	struct row r[MAX_MATCH];	/* only the match fields are used */
};

/* IP_PROTOCOL (the IPv6 next header): ICMP is ICMPv6 over IPv6 */
static const char *proto_num(const char *p, int af)
{
	return !strcmp(p, "tcp") ? "6" : !strcmp(p, "udp") ? "17" :
	       !strcmp(p, "icmp") ? (af == 6 ? "58" : "1") : NULL;
}

/* an address or prefix: its family, 0 for any */
static int check_addr(const char *a, const char *what)
{
	struct hs_addr x;
	int plen;

	if (strcmp(a, "any") == 0)
		return 0;
	if (hs_prefix_parse(a, &x, &plen) < 0)
		bad("invalid %s '%s': expected an IPv4 or IPv6 address or prefix", what, a);
	return x.af;
}

/* ADDR[:PORT] or [ADDR6]:PORT -> "A.B.C.D/N" or "ADDR6/N" (or "" for any)
 * and port ("" for none); returns the family, 0 for any */
static int endpoint(const char *w, char *addr, size_t alen, char *port, size_t plen)
{
	const char *colon;
	char a[64];
	uint64_t p;
	bool bracketed;
	int n = hs_endpoint_split(w, a, sizeof(a), &colon, &bracketed), af;

	if (n <= 0 || (size_t)n >= sizeof(a))
		bad("invalid endpoint '%s': expected ADDR[:PORT] or [ADDR]:PORT", w);
	af = check_addr(a, "address");
	if (bracketed && af != 6)
		bad("invalid endpoint '%s': only an IPv6 address goes in brackets", w);
	port[0] = '\0';
	if (colon) {
		if (hs_parse_dec(colon, 65535, &p) < 0 || p == 0)
			bad("invalid port in '%s': expected 1 to 65535", w);
		snprintf(port, plen, "%u", (unsigned)p);
	}
	if (strcmp(a, "any") == 0)
		addr[0] = '\0';
	else
		snprintf(addr, alen, "%s%s", a, strchr(a, '/') ? "" : af == 6 ? "/128" : "/32");
	return af;
}

static struct row *acl_add(struct acl *m)
{
	struct row *r = &m->r[m->n++];

	memset(r, 0, sizeof(*r));
	return r;
}

static void flow_row(struct acl *m, const char *proto, const char *sa, const char *sp,
		     const char *da, const char *dp)
{
	struct row *r = acl_add(m);

	if (proto_num(proto, m->af))
		set(r, "IP_PROTOCOL", "%s", proto_num(proto, m->af));
	if (*sa)
		set(r, m->af == 6 ? "SRC_IPV6" : "SRC_IP", "%s", sa);
	if (*da)
		set(r, m->af == 6 ? "DST_IPV6" : "DST_IP", "%s", da);
	if (*sp)
		set(r, "L4_SRC_PORT", "%s", sp);
	if (*dp)
		set(r, "L4_DST_PORT", "%s", dp);
	if (r->nf == 0)		/* flow any any any: every IPv4 packet */
		set(r, "ETHER_TYPE", "0x0800");
}

/* Parse SPEC (argc words); m gets its ACL matches, canon its canonical text.
 * A bad spec exits 2 with one line. */
static void expand(int argc, char **argv, struct acl *m, char *canon, size_t clen)
{
	const char *k;
	bool all;

	m->n = 0;
	m->af = 4;
	if (argc < 1)
		bad("missing match: expected default, syn, fin, rst, debug, bgp, roce, flow or prefix");
	k = argv[0];
	if (!strcmp(k, "flow")) {
		char sa[80], sp[8], da[80], dp[8];
		int saf, daf;

		if (argc != 4)
			bad("invalid flow: expected 'flow PROTO SRC[:PORT] DST[:PORT]'");
		if (!proto_num(argv[1], 4) && strcmp(argv[1], "any"))
			bad("invalid protocol '%s': expected tcp, udp, icmp or any", argv[1]);
		saf = endpoint(argv[2], sa, sizeof(sa), sp, sizeof(sp));
		daf = endpoint(argv[3], da, sizeof(da), dp, sizeof(dp));
		if (saf && daf && saf != daf)
			bad("invalid flow: '%s' and '%s' are not of one family", argv[2], argv[3]);
		m->af = saf ? saf : daf ? daf : 4;
		if ((*sp || *dp) && (!strcmp(argv[1], "icmp") || !strcmp(argv[1], "any")))
			bad("invalid flow: protocol '%s' has no ports", argv[1]);
		snprintf(canon, clen, "flow %s %s %s", argv[1], argv[2], argv[3]);
		flow_row(m, argv[1], sa, sp, da, dp);
		if (strcmp(sa, da) || strcmp(sp, dp))
			flow_row(m, argv[1], da, dp, sa, sp);
		return;
	}
	if (!strcmp(k, "prefix")) {
		char a[80], p[8];

		if (argc != 2 || !strcmp(argv[1], "any") || argv[1][0] == '[')
			bad("invalid prefix: expected 'prefix PREFIX'");
		m->af = endpoint(argv[1], a, sizeof(a), p, sizeof(p));
		if (*p)
			bad("invalid prefix '%s': expected no port", argv[1]);
		snprintf(canon, clen, "prefix %s", argv[1]);
		set(acl_add(m), m->af == 6 ? "SRC_IPV6" : "SRC_IP", "%s", a);
		set(acl_add(m), m->af == 6 ? "DST_IPV6" : "DST_IP", "%s", a);
		return;
	}
	if (strcmp(k, "default") && strcmp(k, "syn") && strcmp(k, "fin") && strcmp(k, "rst") &&
	    strcmp(k, "debug") && strcmp(k, "bgp") && strcmp(k, "roce"))
		bad("unknown match '%s': expected default, syn, fin, rst, debug, bgp, roce, flow or prefix",
		    k);
	if (argc > 1)
		bad("unexpected '%s' after '%s'", argv[1], k);
	snprintf(canon, clen, "%s", k);
	all = !strcmp(k, "default");
	/* TCP_FLAGS is FLAGS/MASK; the debug bit is the lowest DSCP bit (TOS 0x04),
	 * and SONiC matches DSCP by value: a probe's DSCP is 1 */
	static const struct { const char *kind, *f1, *v1, *f2, *v2; } set_rows[] = {
		{ "syn", "IP_PROTOCOL", "6", "TCP_FLAGS", "0x02/0x02" },
		{ "fin", "IP_PROTOCOL", "6", "TCP_FLAGS", "0x01/0x01" },
		{ "rst", "IP_PROTOCOL", "6", "TCP_FLAGS", "0x04/0x04" },
		{ "debug", "DSCP", "1", NULL, NULL },
		{ "bgp", "IP_PROTOCOL", "6", "L4_DST_PORT", "179" },
		{ "bgp", "IP_PROTOCOL", "6", "L4_SRC_PORT", "179" },
		{ "roce", "IP_PROTOCOL", "17", "L4_DST_PORT", "4791" },
	};
	for (size_t i = 0; i < HS_ARRAY_SIZE(set_rows); i++) {
		struct row *r;

		if (!all && strcmp(k, set_rows[i].kind))
			continue;
		r = acl_add(m);
		set(r, set_rows[i].f1, "%s", set_rows[i].v1);
		if (set_rows[i].f2)
			set(r, set_rows[i].f2, "%s", set_rows[i].v2);
	}
	if (all)		/* PFC and PAUSE frames: MAC control */
		set(acl_add(m), "ETHER_TYPE", "0x8808");
}

/* ---- switches and their redis ------------------------------------------------------ */

static struct hs_topo *topo;
static char topo_path[PATH_MAX + 16];

struct sw {
	const struct hs_switch *s;
	redisContext *c;
	char err[512];			/* why it could not be reached */
	struct rowset want, have, before;
	int nchanged;			/* rows of before[] already written */
};

static struct sw *sws;
static int nsws;

static void load_topo(void)
{
	char err[512];

	const char *env = getenv("HOPSCOPE_TOPO");

	if (!topo_path[0] && env && *env)
		snprintf(topo_path, sizeof(topo_path), "%s", env);
	if (!topo_path[0])
		snprintf(topo_path, sizeof(topo_path), "%s/topo", state_dir);
	topo = hs_topo_load(topo_path, err, sizeof(err));
	if (!topo)
		die("%s", err);
	sws = calloc((size_t)topo->nsw + 1, sizeof(*sws));
	for (int i = 0; i < topo->nsw; i++)
		if (strcmp(topo->sw[i].driver, "sonic") == 0)
			sws[nsws++].s = &topo->sw[i];
	if (nsws == 0)
		bad("no switch with driver sonic in '%s'", topo_path);
}

static struct sw *sw_by_name(const char *name)
{
	for (int i = 0; i < nsws; i++)
		if (strcmp(sws[i].s->name, name) == 0)
			return &sws[i];
	return NULL;
}

/* one command; NULL with w->err set on failure (connection, timeout, error reply) */
static redisReply *cmd(struct sw *w, const char *what, int argc, const char **argv)
{
	redisReply *r = redisCommandArgv(w->c, argc, argv, NULL);

	if (!r) {
		snprintf(w->err, sizeof(w->err), "%s: %s", what,
			 w->c->err == REDIS_ERR_IO && (errno == EAGAIN || errno == ETIMEDOUT)
				 ? "timed out" : w->c->errstr);
		return NULL;
	}
	if (r->type == REDIS_REPLY_ERROR) {
		snprintf(w->err, sizeof(w->err), "%s: %s", what, r->str);
		freeReplyObject(r);
		return NULL;
	}
	return r;
}

static redisReply *cmdf(struct sw *w, const char *what, ...)
{
	const char *argv[8];
	int argc = 0;
	va_list ap;

	va_start(ap, what);
	while (argc < 8 && (argv[argc] = va_arg(ap, const char *)) != NULL)
		argc++;
	va_end(ap);
	return cmd(w, what, argc, argv);
}

static int sw_connect(struct sw *w, int db)
{
	const char *a = w->s->redis;
	struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
	char dbs[4];
	redisReply *r;

	if (strncmp(a, "unix:", 5) == 0) {
		w->c = redisConnectUnixWithTimeout(a + 5, tv);
	} else {
		char host[108];
		const char *colon = strrchr(a, ':');

		snprintf(host, sizeof(host), "%.*s", (int)(colon - a), a);
		w->c = redisConnectWithTimeout(host, atoi(colon + 1), tv);
	}
	if (!w->c || w->c->err) {
		snprintf(w->err, sizeof(w->err), "cannot reach redis '%s': %.200s", a,
			 w->c ? w->c->errstr : "out of memory");
		return -1;
	}
	redisSetTimeout(w->c, tv);
	snprintf(dbs, sizeof(dbs), "%d", db);
	r = cmdf(w, "select", "SELECT", dbs, NULL);
	if (!r)
		return -1;
	freeReplyObject(r);
	return 0;
}

/* every key matching pattern (SCAN, so a large CONFIG_DB does not block redis) */
static int scan(struct sw *w, const char *pattern, void (*each)(struct sw *, const char *, void *),
		void *arg)
{
	char cursor[32] = "0";

	do {
		redisReply *r = cmdf(w, "scan", "SCAN", cursor, "MATCH", pattern, "COUNT", "1000", NULL);

		if (!r)
			return -1;
		if (r->type != REDIS_REPLY_ARRAY || r->elements != 2) {
			freeReplyObject(r);
			snprintf(w->err, sizeof(w->err), "scan: unexpected reply");
			return -1;
		}
		snprintf(cursor, sizeof(cursor), "%s", r->element[0]->str);
		for (size_t i = 0; i < r->element[1]->elements; i++)
			each(w, r->element[1]->element[i]->str, arg);
		freeReplyObject(r);
	} while (strcmp(cursor, "0") != 0);
	return 0;
}

static void add_key(struct sw *w, const char *key, void *arg)
{
	struct rowset *s = arg;

	(void)w;
	if (strlen(key) < sizeof(s->v[0].key) && !find(s, key))
		row_new(s, rank_of(key), "%s", key);
}

/* read row key into r (r->nf 0 when absent) */
static int read_row(struct sw *w, struct row *r)
{
	char what[200];
	redisReply *rep;

	snprintf(what, sizeof(what), "cannot read row '%s'", r->key);
	rep = cmdf(w, what, "HGETALL", r->key, NULL);
	if (!rep)
		return -1;
	r->nf = 0;
	for (size_t i = 0; i + 1 < rep->elements && r->nf < MAX_FIELDS; i += 2)
		set(r, rep->element[i]->str, "%s", rep->element[i + 1]->str);
	freeReplyObject(rep);
	return 0;
}

/* the rows with hopscope's prefix, as the switch has them */
static int read_ours(struct sw *w)
{
	static const char *const pats[] = {
		"MIRROR_SESSION|" PREFIX "*", "TUNNEL|" PREFIX "*", "ACL_TABLE_TYPE|" PREFIX "*",
		"ACL_TABLE|" PREFIX "*", "ACL_RULE|" TABLE "|" PREFIX "*",
		"ACL_RULE|" TABLE6 "|" PREFIX "*",
	};

	for (size_t i = 0; i < HS_ARRAY_SIZE(pats); i++)
		if (scan(w, pats[i], add_key, &w->have) < 0)
			return -1;
	for (int i = 0; i < w->have.n; i++)
		if (read_row(w, &w->have.v[i]) < 0)
			return -1;
	return 0;
}

/* the ports the ACL table binds to: the switch's ports in the topology
 * links, each of which must be a PORT row; else every PORT row */
static int ports_of(struct sw *w, char *out, size_t len)
{
	struct rowset ports = { 0 };
	int idx = (int)(w->s - topo->sw);
	size_t off = 0;

	out[0] = '\0';
	for (int i = 0; i < topo->nlinks; i++) {
		const struct hs_link *l = &topo->links[i];
		const char *p = l->a == idx ? l->a_port : l->b == idx ? l->b_port : NULL;
		redisReply *r;
		char key[64], what[128];

		if (!p || in_list(out, p))
			continue;
		snprintf(key, sizeof(key), "PORT|%s", p);
		snprintf(what, sizeof(what), "cannot read row '%s'", key);
		r = cmdf(w, what, "EXISTS", key, NULL);
		if (!r)
			return -1;
		if (r->integer != 1) {
			freeReplyObject(r);
			snprintf(w->err, sizeof(w->err),
				 "port '%s' of the topology has no PORT row in CONFIG_DB", p);
			return -1;
		}
		freeReplyObject(r);
		off += (size_t)snprintf(out + off, len - off, "%s%s", off ? "," : "", p);
		if (off >= len)
			goto long_list;
	}
	if (off)
		return 0;
	if (scan(w, "PORT|*", add_key, &ports) < 0)
		return -1;
	for (int i = 0; i < ports.n; i++) {
		off += (size_t)snprintf(out + off, len - off, "%s%s", off ? "," : "",
					ports.v[i].key + 5);
		if (off >= len) {
			free(ports.v);
			goto long_list;
		}
	}
	free(ports.v);
	if (!off) {
		snprintf(w->err, sizeof(w->err), "no PORT rows in CONFIG_DB to bind the ACL table to");
		return -1;
	}
	return 0;
long_list:
	snprintf(w->err, sizeof(w->err), "too many ports to bind (more than %zu characters)", len);
	return -1;
}

/* the rows hopscope wants on switch w, from the recorded rules */
static int want_rows(struct sw *w)
{
	char lo[HS_ADDRSTRLEN], an[HS_ADDRSTRLEN], ports[1024];
	bool any = false;
	unsigned maxs = 0;

	for (int i = 0; i < nrules; i++)
		any |= in_list(rules[i].resolved, w->s->name);
	if (!any)
		return 0;
	if (w->s->loopback.af != 4) {
		snprintf(w->err, sizeof(w->err), "no IPv4 loopback in the topology (the session's "
			 "source and the decap address)");
		return -1;
	}
	if (topo->analyzer.af != 4) {
		snprintf(w->err, sizeof(w->err), "no IPv4 analyzer in '%.200s' (the session's destination)",
			 topo_path);
		return -1;
	}
	hs_addr_str(&w->s->loopback, lo, sizeof(lo));
	hs_addr_str(&topo->analyzer, an, sizeof(an));
	if (ports_of(w, ports, sizeof(ports)) < 0)
		return -1;

	/* one session per session number in use on this switch */
	for (int i = 0; i < nrules; i++)
		if (in_list(rules[i].resolved, w->s->name) && rules[i].session + 1 > maxs)
			maxs = rules[i].session + 1;
	for (unsigned s = 0; s < maxs; s++) {
		bool used = false;
		struct row *r;

		for (int i = 0; i < nrules; i++)
			used |= rules[i].session == s && in_list(rules[i].resolved, w->s->name);
		if (!used)
			continue;
		r = row_new(&w->want, 0, "MIRROR_SESSION|" PREFIX "_s%u", s);
		set(r, "type", "ERSPAN");
		set(r, "src_ip", "%s", lo);
		set(r, "dst_ip", "%s", an);
		set(r, "gre_type", "0x88be");
		set(r, "dscp", "8");
		set(r, "ttl", "64");
		set(r, "queue", "0");
	}
	struct row *r = row_new(&w->want, 1, "TUNNEL|" TUNNEL);
	set(r, "tunnel_type", "IPINIP");
	set(r, "dst_ip", "%s", lo);
	set(r, "dscp_mode", "pipe");
	set(r, "ecn_mode", "copy_from_outer");
	set(r, "ttl_mode", "pipe");
	for (int i = 0; i < nrules; i++) {
		char *words[8], buf[256], canon[256], *save = NULL;
		struct acl m;
		int nw = 0;

		if (!in_list(rules[i].resolved, w->s->name))
			continue;
		snprintf(buf, sizeof(buf), "%s", rules[i].match);
		for (char *t = strtok_r(buf, " ", &save); t && nw < 8; t = strtok_r(NULL, " ", &save))
			words[nw++] = t;
		expand(nw, words, &m, canon, sizeof(canon));
		/* a table (the IPv4 one with its type) with the first rule it holds */
		if (m.af == 6 && !find(&w->want, "ACL_TABLE|" TABLE6)) {
			r = row_new(&w->want, 3, "ACL_TABLE|" TABLE6);
			set(r, "type", "MIRRORV6");
			set(r, "stage", "ingress");
			set(r, "policy_desc", "hopscope IPv6 mirror rules");
			set(r, "ports@", "%s", ports);
		} else if (m.af != 6 && !find(&w->want, "ACL_TABLE|" TABLE)) {
			r = row_new(&w->want, 2, "ACL_TABLE_TYPE|" TABLE);
			set(r, "MATCHES@", "IP_PROTOCOL,SRC_IP,DST_IP,L4_SRC_PORT,L4_DST_PORT,"
			    "TCP_FLAGS,DSCP,ETHER_TYPE");
			set(r, "ACTIONS@", "MIRROR_INGRESS_ACTION");
			set(r, "BIND_POINTS@", "PORT");
			r = row_new(&w->want, 3, "ACL_TABLE|" TABLE);
			set(r, "type", TABLE);
			set(r, "stage", "ingress");
			set(r, "policy_desc", "hopscope mirror rules");
			set(r, "ports@", "%s", ports);
		}
		for (int k = 0; k < m.n; k++) {
			r = row_new(&w->want, 4, "ACL_RULE|%s|" PREFIX "_%" PRIu64 "_%d",
				    m.af == 6 ? TABLE6 : TABLE, rules[i].id, k + 1);
			set(r, "PRIORITY", PRIORITY);
			set(r, "MIRROR_INGRESS_ACTION", PREFIX "_s%u", rules[i].session);
			for (int f = 0; f < m.r[k].nf; f++)
				set(r, m.r[k].f[f].name, "%s", m.r[k].f[f].val);
		}
	}
	return 0;
}

/* ---- reconciling: make the switch's hopscope rows what hopscope wants --------------- */

enum { OP_DEL, OP_SET };

struct op {
	int kind;
	const struct row *want;		/* OP_SET */
	const struct row *have;		/* what was there (NULL: absent) */
	const char *key;
};

static int op_order(const void *x, const void *y)
{
	const struct op *a = x, *b = y;
	/* rules go first, then rows are set from sessions to rules, then the
	 * remaining rows removed from tables back to sessions */
	int pa = a->kind == OP_DEL ? (rank_of(a->key) == 4 ? 0 : 2) : 1;
	int pb = b->kind == OP_DEL ? (rank_of(b->key) == 4 ? 0 : 2) : 1;
	int ra = rank_of(a->key), rb = rank_of(b->key);

	if (pa != pb)
		return pa - pb;
	if (ra != rb)
		return pa == 2 ? rb - ra : ra - rb;
	return strcmp(a->key, b->key);
}

static int plan(struct sw *w, struct op **ops)
{
	int n = 0;

	*ops = calloc((size_t)(w->want.n + w->have.n) + 1, sizeof(**ops));
	for (int i = 0; i < w->want.n; i++) {
		const struct row *h = find(&w->have, w->want.v[i].key);

		if (!h || !row_eq(h, &w->want.v[i]))
			(*ops)[n++] = (struct op){ OP_SET, &w->want.v[i], h, w->want.v[i].key };
	}
	for (int i = 0; i < w->have.n; i++)
		if (!find(&w->want, w->have.v[i].key))
			(*ops)[n++] = (struct op){ OP_DEL, NULL, &w->have.v[i], w->have.v[i].key };
	qsort(*ops, (size_t)n, sizeof(**ops), op_order);
	return n;
}

/* write row r in place of what is there (absent when r is NULL) */
static int put(struct sw *w, const char *key, const struct row *r, const struct row *old)
{
	const char *argv[2 + 2 * MAX_FIELDS];
	char what[200];
	redisReply *rep;
	int argc = 0;

	snprintf(what, sizeof(what), "cannot write row '%s'", key);
	if (!r || (old && old->nf)) {
		/* fields the new row does not have go; a removed row goes whole */
		bool stale = !r;

		for (int i = 0; old && r && i < old->nf; i++)
			stale |= get(r, old->f[i].name) == NULL;
		if (stale) {
			if (!(rep = cmdf(w, what, "DEL", key, NULL)))
				return -1;
			freeReplyObject(rep);
		}
	}
	if (!r || r->nf == 0)
		return 0;
	argv[argc++] = "HSET";
	argv[argc++] = key;
	for (int i = 0; i < r->nf; i++) {
		argv[argc++] = r->f[i].name;
		argv[argc++] = r->f[i].val;
	}
	if (!(rep = cmd(w, what, argc, argv)))
		return -1;
	freeReplyObject(rep);
	return 0;
}

static void print_row(const char *sw, const char *verb, const char *key, const struct row *r)
{
	printf("%s %s %s", sw, verb, key);
	for (int i = 0; r && i < r->nf; i++)
		printf(" %s=%s", r->f[i].name, r->f[i].val);
	putchar('\n');
}

struct done {
	struct sw *w;
	struct op op;
};

/* undo what was done, newest first; returns how many rows could not be restored */
static int rollback(struct done *d, int n)
{
	int left = 0;

	while (n-- > 0) {
		const struct row *old = d[n].op.have;
		struct sw *w = d[n].w;

		/* a connection that failed (a timeout) is not usable again */
		if (!w->c || w->c->err) {
			if (w->c)
				redisFree(w->c);
			w->c = NULL;
			if (sw_connect(w, CONFIG_DB) < 0) {
				left++;
				continue;
			}
		}
		if (put(d[n].w, d[n].op.key, old && old->nf ? old : NULL, d[n].op.want) < 0)
			left++;
	}
	return left;
}

/* connect, read and plan every switch in list (or every sonic switch when
 * list is NULL), then apply; exits with an error (after rolling back) on
 * the first failure */
static void reconcile(const char *list)
{
	/* static: what a failure exits with is still held, not leaked */
	static struct op **ops;
	static int *nops;
	static struct done *done;
	int total = 0, ndone = 0;

	ops = calloc((size_t)nsws, sizeof(*ops));
	nops = calloc((size_t)nsws, sizeof(*nops));

	for (int i = 0; i < nsws; i++) {
		struct sw *w = &sws[i];

		nops[i] = 0;
		ops[i] = NULL;
		if (list && !in_list(list, w->s->name))
			continue;
		if (sw_connect(w, CONFIG_DB) < 0 || read_ours(w) < 0 || want_rows(w) < 0)
			die("switch '%s': %s; nothing was changed", w->s->name, w->err);
		nops[i] = plan(w, &ops[i]);
		total += nops[i];
	}
	if (dry_run) {
		for (int i = 0; i < nsws; i++)
			for (int k = 0; k < nops[i]; k++)
				print_row(sws[i].s->name, ops[i][k].kind == OP_SET ? "set" : "del",
					  ops[i][k].key, ops[i][k].want);
	}
	done = dry_run ? NULL : calloc((size_t)total + 1, sizeof(*done));
	for (int i = 0; i < nsws && !dry_run; i++) {
		for (int k = 0; k < nops[i]; k++) {
			struct sw *w = &sws[i];

			if (put(w, ops[i][k].key, ops[i][k].want, ops[i][k].have) < 0) {
				char why[sizeof(w->err)];
				int left;

				snprintf(why, sizeof(why), "%s", w->err);
				/* the failed row itself may be half written */
				done[ndone++] = (struct done){ w, ops[i][k] };
				left = rollback(done, ndone);
				if (left)
					die("switch '%s': %s; %d row(s) could not be restored: see "
					    "'list'", w->s->name, why, left);
				die("switch '%s': %s; every change was rolled back", w->s->name, why);
			}
			done[ndone++] = (struct done){ w, ops[i][k] };
		}
	}
	for (int i = 0; i < nsws; i++)
		free(ops[i]);
	free(ops);
	free(nops);
	free(done);
	ops = NULL;
	nops = NULL;
	done = NULL;
}

/* ---- commands ------------------------------------------------------------------------ */

static void cmd_add(int argc, char **argv)
{
	struct rule nr, *r = &nr;
	char canon[256], *switches = NULL;
	struct acl m;
	uint64_t v, given = 0;
	int i;

	memset(r, 0, sizeof(*r));
	r->session = 1;
	for (i = 0; i < argc; i += 2) {
		if (!strcmp(argv[i], "--match")) {
			i++;
			break;
		}
		if (i + 1 >= argc)
			bad("option '%s' needs a value", argv[i]);
		if (!strcmp(argv[i], "--session")) {
			if (hs_parse_dec(argv[i + 1], 1023, &v) < 0)
				bad("invalid session '%s': expected 0 to 1023", argv[i + 1]);
			r->session = (unsigned)v;
		} else if (!strcmp(argv[i], "--id")) {
			if (hs_parse_dec(argv[i + 1], UINT32_MAX, &given) < 0 || given == 0)
				bad("invalid rule id '%s': expected 1 to %u", argv[i + 1], UINT32_MAX);
		} else if (!strcmp(argv[i], "--switches")) {
			switches = argv[i + 1];
		} else {
			bad("unknown option '%s'", argv[i]);
		}
	}
	if (!switches)
		bad("missing --switches");
	expand(argc - i, argv + i, &m, canon, sizeof(canon));
	if (strlen(switches) >= sizeof(r->switches))
		bad("invalid switch list '%.40s...': too long", switches);
	load_topo();
	if (strcmp(switches, "all") == 0) {
		size_t off = 0;

		for (int k = 0; k < nsws; k++)
			off += (size_t)snprintf(r->resolved + off, sizeof(r->resolved) - off, "%s%s",
						k ? "," : "", sws[k].s->name);
		if (off >= sizeof(r->resolved))
			bad("too many switches for one rule");
	} else {
		const char *p = switches;

		if (!*p || strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789_-,") != strlen(p) ||
		    *p == ',' || p[strlen(p) - 1] == ',' || strstr(p, ",,"))
			bad("invalid switch list '%s': expected all or SW[,SW...]", switches);
		for (; *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
			char name[HS_NAME_MAX];
			int ti;

			snprintf(name, sizeof(name), "%.*s", (int)strcspn(p, ","), p);
			ti = hs_topo_switch_by_name(topo, name);
			if (ti < 0)
				bad("unknown switch '%s'", name);
			if (!sw_by_name(name))
				bad("switch '%s' is not a sonic switch (driver %s)", name,
				    topo->sw[ti].driver);
		}
		snprintf(r->resolved, sizeof(r->resolved), "%s", switches);
	}
	snprintf(r->switches, sizeof(r->switches), "%s", switches);
	snprintf(r->match, sizeof(r->match), "%s", canon);
	state_lock();
	state_read();
	if (nrules == MAX_RULES)
		die("too many rules (at most %d)", MAX_RULES);
	if (shared_next() > next_id)
		next_id = shared_next();
	for (int k = 0; given && k < nrules; k++)
		if (rules[k].id == given)
			bad("rule id '%" PRIu64 "' is in use", given);
	nr.id = given ? given : next_id;
	r = &rules[nrules++];
	*r = nr;
	reconcile(r->resolved);
	if (dry_run)
		return;
	if (r->id >= next_id)
		next_id = r->id + 1;
	state_write();
	shared_write(next_id);
	printf("{\"id\":%" PRIu64 "}\n", r->id);
}

static void cmd_del(int argc, char **argv)
{
	uint64_t id;
	char resolved[512];
	int i;

	if (argc != 2 || strcmp(argv[0], "--id"))
		bad("expected 'del --id ID'");
	if (hs_parse_dec(argv[1], UINT32_MAX, &id) < 0)
		bad("invalid rule id '%s': expected a number", argv[1]);
	load_topo();
	state_lock();
	state_read();
	for (i = 0; i < nrules && rules[i].id != id; i++)
		;
	if (i == nrules)
		bad("no mirror rule '%s'", argv[1]);
	snprintf(resolved, sizeof(resolved), "%s", rules[i].resolved);
	memmove(&rules[i], &rules[i + 1], (size_t)(nrules - i - 1) * sizeof(rules[0]));
	nrules--;
	reconcile(resolved);
	if (dry_run)
		return;
	state_write();
	printf("{\"id\":%" PRIu64 ",\"deleted\":true}\n", id);
}

/* a JSON string of s, bytes that are not UTF-8 shown as '?' (a row's key
 * is whatever redis holds) */
static json_t *jstr(const char *s)
{
	json_t *j = json_string(s);
	char buf[512];
	size_t i;

	if (j)
		return j;
	for (i = 0; s[i] && i + 1 < sizeof(buf); i++)
		buf[i] = (unsigned char)s[i] < 0x80 ? s[i] : '?';
	buf[i] = '\0';
	return json_string(buf);
}

static void drift(json_t *list, const char *sw, const char *row, const char *what)
{
	json_array_append_new(list, json_pack("{s:s, s:o, s:o}", "switch", sw, "row",
					      row ? jstr(row) : json_null(), "what", jstr(what)));
}

/* the rules, then where a switch differs from what hopscope asked */
static void cmd_list(int argc, char **argv)
{
	json_t *doc = json_pack("{s:[], s:[]}", "rules", "drift");
	json_t *list = json_object_get(doc, "rules"), *dl = json_object_get(doc, "drift");

	(void)argv;
	if (argc)
		bad("unexpected '%s'", argv[0]);
	load_topo();
	state_read();
	for (int i = 0; i < nrules; i++) {
		json_t *sw = json_array();

		for (const char *p = rules[i].switches; *p;) {
			size_t n = strcspn(p, ",");

			json_array_append_new(sw, json_stringn(p, n));
			p += n + (p[n] == ',');
		}
		json_array_append_new(list, json_pack("{s:I, s:i, s:o, s:s}", "id",
						      (json_int_t)rules[i].id, "session",
						      (int)rules[i].session, "switches", sw, "match",
						      rules[i].match));
	}
	for (int i = 0; i < nsws; i++) {
		struct sw *w = &sws[i];
		struct op *ops;
		char why[600];
		int n;

		if (sw_connect(w, CONFIG_DB) < 0 || read_ours(w) < 0 || want_rows(w) < 0) {
			snprintf(why, sizeof(why), "unreachable: %s", w->err);
			drift(dl, w->s->name, NULL, why);
			continue;
		}
		n = plan(w, &ops);
		for (int k = 0; k < n; k++) {
			const struct op *o = &ops[k];

			drift(dl, w->s->name, o->key, o->kind == OP_DEL ? "not asked for" :
			      !o->have ? "missing" : "changed");
		}
		free(ops);
	}
	if (json_dumpf(doc, stdout, JSON_COMPACT) < 0 || putchar('\n') == EOF)
		die("cannot write the list: %s", strerror(errno));
	json_decref(doc);
}

/* ---- snapshot: every switch's port counters at one instant --------------------------- */

static const char *const stats[] = {
	"SAI_PORT_STAT_IF_IN_UCAST_PKTS", "SAI_PORT_STAT_IF_IN_NON_UCAST_PKTS",
	"SAI_PORT_STAT_IF_IN_OCTETS", "SAI_PORT_STAT_IF_IN_DISCARDS",
	"SAI_PORT_STAT_IF_OUT_UCAST_PKTS", "SAI_PORT_STAT_IF_OUT_NON_UCAST_PKTS",
	"SAI_PORT_STAT_IF_OUT_OCTETS", "SAI_PORT_STAT_IF_OUT_DISCARDS",
};

static uint64_t counter(const redisReply *r, size_t i)
{
	uint64_t v = 0;

	if (r->element[i]->type == REDIS_REPLY_STRING)
		hs_parse_dec(r->element[i]->str, INT64_MAX, &v);
	return v;
}

/* in a child: connect, learn the ports, sleep until at_ns, read them all */
static int snap_one(struct sw *w, uint64_t at_ns, FILE *out)
{
	redisReply *map, *r;
	struct timespec ts = { (time_t)(at_ns / 1000000000u), (long)(at_ns % 1000000000u) };
	uint64_t read_ns;

	if (sw_connect(w, COUNTERS_DB) < 0 ||
	    !(map = cmdf(w, "cannot read COUNTERS_PORT_NAME_MAP", "HGETALL",
			 "COUNTERS_PORT_NAME_MAP", NULL)))
		return -1;
	if (map->elements == 0) {
		snprintf(w->err, sizeof(w->err), "no ports in COUNTERS_PORT_NAME_MAP");
		return -1;
	}
	while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
	read_ns = hs_wall_ns();
	/* pipelined: every port's read leaves before the first answer is awaited */
	for (size_t i = 0; i + 1 < map->elements; i += 2) {
		const char *argv[2 + HS_ARRAY_SIZE(stats)];
		char key[128];

		snprintf(key, sizeof(key), "COUNTERS:%s", map->element[i + 1]->str);
		argv[0] = "HMGET";
		argv[1] = key;
		memcpy(argv + 2, stats, sizeof(stats));
		redisAppendCommandArgv(w->c, 2 + (int)HS_ARRAY_SIZE(stats), argv, NULL);
	}
	for (size_t i = 0; i + 1 < map->elements; i += 2) {
		const char *port = map->element[i]->str;

		if (redisGetReply(w->c, (void **)&r) != REDIS_OK || !r) {
			snprintf(w->err, sizeof(w->err), "cannot read counters of '%s': %s", port,
				 w->c->errstr);
			return -1;
		}
		if (r->type != REDIS_REPLY_ARRAY || r->elements != HS_ARRAY_SIZE(stats)) {
			snprintf(w->err, sizeof(w->err), "cannot read counters of '%s': %s", port,
				 r->type == REDIS_REPLY_ERROR ? r->str : "unexpected reply");
			return -1;
		}
		if (!hs_ifname_ok(port)) {
			freeReplyObject(r);
			continue;
		}
		/* the names are checked: no escaping needed */
		fprintf(out, "{\"switch\":\"%s\",\"port\":\"%s\",\"read_ns\":%" PRIu64 ","
			"\"rx_packets\":%" PRIu64 ",\"rx_bytes\":%" PRIu64 ",\"rx_drops\":%" PRIu64 ","
			"\"tx_packets\":%" PRIu64 ",\"tx_bytes\":%" PRIu64 ",\"tx_drops\":%" PRIu64 ","
			"\"backlog_bytes\":null,\"backlog_packets\":null}\n", w->s->name, port, read_ns,
			counter(r, 0) + counter(r, 1), counter(r, 2), counter(r, 3),
			counter(r, 4) + counter(r, 5), counter(r, 6), counter(r, 7));
		freeReplyObject(r);
	}
	freeReplyObject(map);
	return 0;
}

static void cmd_snapshot(int argc, char **argv)
{
	uint64_t delay = 200, at;
	static FILE **tmp;	/* static: held, not leaked, when a failure exits */
	static pid_t *pids;
	char first[512] = "";
	int ports = 0, nread = 0;

	uint64_t now = hs_wall_ns(), given = 0;

	for (int i = 0; i < argc; i += 2) {
		if (strcmp(argv[i], "--delay-ms") && strcmp(argv[i], "--at-ns"))
			bad("unknown option '%s'", argv[i]);
		if (i + 1 >= argc)
			bad("option '%s' needs a value", argv[i]);
		if (!strcmp(argv[i], "--at-ns")) {
			/* an instant other drivers were given too: from now to 5 s on */
			if (hs_parse_dec(argv[i + 1], UINT64_MAX, &given) < 0 ||
			    given > now + 5000000000u)
				bad("invalid instant '%s': expected nanoseconds since the epoch, "
				    "at most 5 s ahead", argv[i + 1]);
		} else if (hs_parse_dec(argv[i + 1], 5000, &delay) < 0 || delay < 10) {
			bad("invalid delay '%s': expected 10 to 5000 milliseconds", argv[i + 1]);
		}
	}
	load_topo();
	at = given ? given : now + delay * 1000000u;
	tmp = calloc((size_t)nsws, sizeof(*tmp));
	pids = calloc((size_t)nsws, sizeof(*pids));
	fflush(stdout);
	for (int i = 0; i < nsws; i++) {
		if (!(tmp[i] = tmpfile()))
			die("cannot make a temporary file: %s", strerror(errno));
		pids[i] = fork();
		if (pids[i] < 0)
			die("cannot fork: %s", strerror(errno));
		if (pids[i] == 0) {
			if (snap_one(&sws[i], at, tmp[i]) < 0) {
				fprintf(stderr, "cannot read switch '%s': %s\n", sws[i].s->name,
					sws[i].err);
				_exit(1);
			}
			_exit(fflush(tmp[i]) == 0 ? 0 : 1);
		}
	}
	for (int i = 0; i < nsws; i++) {
		int st;

		while (waitpid(pids[i], &st, 0) < 0 && errno == EINTR)
			;
		if ((!WIFEXITED(st) || WEXITSTATUS(st) != 0) && !first[0])
			snprintf(first, sizeof(first), "cannot read switch '%s'", sws[i].s->name);
	}
	if (first[0])
		exit(1);	/* the child said why on stderr */
	/* {"snapshot_ns":T,"switches":N,"ports":[one line of a child's each]} */
	fputs("{\"ports\":[", stdout);
	for (int i = 0; i < nsws; i++) {
		char line[1024];
		bool any = false;

		rewind(tmp[i]);
		while (fgets(line, sizeof(line), tmp[i])) {
			line[strcspn(line, "\n")] = '\0';
			printf("%s%s", ports++ ? "," : "", line);
			any = true;
		}
		nread += any;
	}
	printf("],\"snapshot_ns\":%" PRIu64 ",\"switches\":%d}\n", at, nread);
	for (int i = 0; i < nsws; i++)
		fclose(tmp[i]);
	free(tmp);
	free(pids);
}

int main(int argc, char **argv)
{
	bool state_set = false;
	int i;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		const char *o = argv[i];
		uint64_t v;

		if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(o, "--dry-run")) {
			dry_run = true;
			continue;
		}
		if (i + 1 >= argc)
			bad("option '%s' needs a value", o);
		if (!strcmp(o, "--state")) {
			if (!argv[i + 1][0] || strlen(argv[i + 1]) >= sizeof(state_dir))
				bad("invalid state directory '%s'", argv[i + 1]);
			snprintf(state_dir, sizeof(state_dir), "%s", argv[++i]);
			state_set = true;
		} else if (!strcmp(o, "--topo")) {
			if (!argv[i + 1][0] || strlen(argv[i + 1]) >= PATH_MAX)
				bad("invalid topology file '%s'", argv[i + 1]);
			snprintf(topo_path, sizeof(topo_path), "%s", argv[++i]);
		} else if (!strcmp(o, "--timeout-ms")) {
			if (hs_parse_dec(argv[i + 1], 60000, &v) < 0 || v < 10)
				bad("invalid timeout '%s': expected 10 to 60000 milliseconds", argv[i + 1]);
			timeout_ms = (int)v;
			i++;
		} else if (!strcmp(o, "--group") || !strcmp(o, "--netns-prefix")) {
			i++;	/* the lab driver's options: nothing to do here */
		} else {
			bad("unknown option '%s'", o);
		}
	}
	if (i >= argc) {
		usage(stderr);
		return 2;
	}
	if (!state_set && getenv("HOPSCOPE_STATE") && *getenv("HOPSCOPE_STATE"))
		snprintf(state_dir, sizeof(state_dir), "%s", getenv("HOPSCOPE_STATE"));
	/* a change runs to its end or is undone, each step bounded by the
	 * timeout: an interrupt does not stop it half way */
	signal(SIGPIPE, SIG_IGN);
	if (!strcmp(argv[i], "add") || !strcmp(argv[i], "del")) {
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
	}
	if (!strcmp(argv[i], "add"))
		cmd_add(argc - i - 1, argv + i + 1);
	else if (!strcmp(argv[i], "del"))
		cmd_del(argc - i - 1, argv + i + 1);
	else if (!strcmp(argv[i], "list"))
		cmd_list(argc - i - 1, argv + i + 1);
	else if (!strcmp(argv[i], "snapshot"))
		cmd_snapshot(argc - i - 1, argv + i + 1);
	else
		bad("unknown command '%s': expected add, del, list or snapshot", argv[i]);
	return fflush(stdout) == 0 ? 0 : 1;
}
