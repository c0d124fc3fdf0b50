/* sonic.c - the lab agent configured the way SONiC is: from its CONFIG_DB
 *
 * With --sonic SOCKET the agent takes its configuration from the switch's
 * redis (hopscope-lab up --sonic runs one per switch), as SONiC's own daemons
 * do: it subscribes to the keyspace notifications of CONFIG_DB (database 4)
 * and, a moment after the last change, programs the switch from the rows:
 *
 *   ACL_RULE rows with MIRROR_INGRESS_ACTION   NFLOG rules in raw/HS_MIRROR,
 *       in priority order, each logging to the session "hs:N" of its mirror
 *       session row (N from the name "..._sN", else 1)
 *   TUNNEL rows of type IPINIP to the loopback   IP-in-IP decapsulation on
 *
 * and it publishes the counters of every PORT row in COUNTERS_DB (database
 * 2) as SONiC does: COUNTERS_PORT_NAME_MAP maps a port to "oid:0x...", whose
 * row COUNTERS:oid:0x... holds SAI_PORT_STAT_* fields, every 100 ms.
 * A row it cannot express as a netfilter match (an ether type other than
 * IPv4's, a field it does not know) is left out, and said once in the log.
 */
#include <errno.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/wait.h>

#include <hiredis/hiredis.h>
#include <hiredis/async.h>
#include <hiredis/adapters/libuv.h>

#include "agent.h"

extern char **environ;

#define RULES_MAX 512
#define PORTS_MAX 128
#define OID_BASE 0x1000000000000ull

struct sonic {
	struct ag_sonic_cfg cfg;
	redisContext *c;		/* reads and counter writes */
	redisAsyncContext *sub;		/* keyspace notifications */
	uv_timer_t settle, counters;
	char ports[PORTS_MAX][16];
	int nports;
	bool applied;			/* the rules applied match the rows */
	char last[65536];		/* the batch last applied */
};

static struct sonic sn;

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void note(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	sn.cfg.log(sn.cfg.arg, msg);
}

static redisReply *q(const char *fmt, ...)
{
	redisReply *r;
	va_list ap;

	va_start(ap, fmt);
	r = redisvCommand(sn.c, fmt, ap);
	va_end(ap);
	if (!r) {
		note("sonic: redis: %s", sn.c->errstr);
		return NULL;
	}
	if (r->type == REDIS_REPLY_ERROR) {
		note("sonic: redis: %s", r->str);
		freeReplyObject(r);
		return NULL;
	}
	return r;
}

static const char *field(const redisReply *h, const char *name)
{
	for (size_t i = 0; h && i + 1 < h->elements; i += 2)
		if (strcmp(h->element[i]->str, name) == 0)
			return h->element[i + 1]->str;
	return NULL;
}

/* a number of at most max, in decimal (or 0x hex when hex) */
static bool num(const char *s, unsigned long max, bool hex, unsigned long *out)
{
	char *end;

	if (!s || !*s || *s == '-' || *s == '+')
		return false;
	errno = 0;
	*out = strtoul(s, &end, hex ? 0 : 10);
	return !errno && !*end && *out <= max;
}

static bool prefix_ok(const char *s)
{
	char a[INET_ADDRSTRLEN];
	const char *slash = strchr(s, '/');
	size_t n = slash ? (size_t)(slash - s) : strlen(s);
	unsigned long plen;
	struct in_addr x;

	if (n >= sizeof(a))
		return false;
	memcpy(a, s, n);
	a[n] = '\0';
	return inet_pton(AF_INET, a, &x) == 1 && (!slash || num(slash + 1, 32, false, &plen));
}

static void flag_names(unsigned long v, char *out, size_t len)
{
	static const char *const names[] = { "FIN", "SYN", "RST", "PSH", "ACK", "URG" };
	size_t off = 0;

	out[0] = '\0';
	for (int i = 0; i < 6; i++)
		if (v & (1u << i))
			off += (size_t)snprintf(out + off, len - off, "%s%s", off ? "," : "", names[i]);
	if (!off)
		snprintf(out, len, "NONE");
}

int ag_sonic_match(const char *const *f, size_t nf, char *out, size_t len)
{
	unsigned long proto = 0, v, m;
	char buf[512] = "", flags[32], mask[32];
	size_t off = 0;
	const char *sp = NULL, *dp = NULL, *tf = NULL;

#define ADD(...) (off += (size_t)snprintf(buf + off, sizeof(buf) - off, __VA_ARGS__))
	for (size_t i = 0; i + 1 < nf; i += 2) {
		const char *k = f[i], *val = f[i + 1];

		if (!strcmp(k, "PRIORITY") || !strcmp(k, "MIRROR_INGRESS_ACTION"))
			continue;
		if (!strcmp(k, "IP_PROTOCOL")) {
			if (!num(val, 255, false, &proto))
				return -1;
			ADD(" -p %lu", proto);
		} else if (!strcmp(k, "SRC_IP") || !strcmp(k, "DST_IP")) {
			if (!prefix_ok(val))
				return -1;
			ADD(" -%c %s", k[0] == 'S' ? 's' : 'd', val);
		} else if (!strcmp(k, "L4_SRC_PORT")) {
			sp = val;
		} else if (!strcmp(k, "L4_DST_PORT")) {
			dp = val;
		} else if (!strcmp(k, "TCP_FLAGS")) {
			tf = val;
		} else if (!strcmp(k, "DSCP")) {
			if (!num(val, 63, false, &v))
				return -1;
			ADD(" -m dscp --dscp %lu", v);
		} else if (!strcmp(k, "ETHER_TYPE")) {
			if (!num(val, 0xffff, true, &v) || v != 0x0800)
				return -1;	/* netfilter sees IPv4 only */
		} else {
			return -1;
		}
	}
	if (sp || dp || tf) {
		if (proto != 6 && proto != 17)
			return -1;
		if (tf && proto != 6)
			return -1;
		ADD(" -m %s", proto == 6 ? "tcp" : "udp");
		if (sp) {
			if (!num(sp, 65535, false, &v) || !v)
				return -1;
			ADD(" --sport %lu", v);
		}
		if (dp) {
			if (!num(dp, 65535, false, &v) || !v)
				return -1;
			ADD(" --dport %lu", v);
		}
		if (tf) {
			char f1[8], f2[8];
			const char *slash = strchr(tf, '/');

			if (!slash || (size_t)(slash - tf) >= sizeof(f1) || strlen(slash + 1) >= sizeof(f2))
				return -1;
			snprintf(f1, sizeof(f1), "%.*s", (int)(slash - tf), tf);
			snprintf(f2, sizeof(f2), "%s", slash + 1);
			if (!num(f1, 0xff, true, &v) || !num(f2, 0xff, true, &m))
				return -1;
			flag_names(m, mask, sizeof(mask));
			flag_names(v & m, flags, sizeof(flags));
			ADD(" --tcp-flags %s %s", mask, flags);
		}
	}
#undef ADD
	if (off >= sizeof(buf) || strlen(buf) >= len)
		return -1;
	snprintf(out, len, "%s", buf[0] == ' ' ? buf + 1 : buf);
	return 0;
}

/* ---- programming the switch ------------------------------------------------------ */

struct mrule {
	unsigned long prio;
	unsigned session;
	char match[512];
};

static int by_prio(const void *x, const void *y)
{
	const struct mrule *a = x, *b = y;

	return a->prio < b->prio ? 1 : a->prio > b->prio ? -1 : strcmp(a->match, b->match);
}

/* run iptables-restore --noflush with batch on its stdin */
static int restore(const char *batch)
{
	char *argv[] = { (char *)"iptables-restore", (char *)"--noflush", NULL };
	posix_spawn_file_actions_t fa;
	int p[2], st, rc;
	size_t len = strlen(batch), off = 0;
	pid_t pid;

	if (pipe(p) < 0)
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[0], 0);
	posix_spawn_file_actions_addclose(&fa, p[1]);
	rc = posix_spawnp(&pid, "iptables-restore", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(p[0]);
	if (rc != 0) {
		close(p[1]);
		note("sonic: cannot run iptables-restore: %s", strerror(rc));
		return -1;
	}
	while (off < len) {
		ssize_t n = write(p[1], batch + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	close(p[1]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return off == len && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static unsigned session_of(const char *name)
{
	const char *s = name ? strrchr(name, '_') : NULL;
	unsigned long v;

	if (s && s[1] == 's' && num(s + 2, AG_SESSION_MAX, false, &v))
		return (unsigned)v;
	return 1;
}

static void program(void)
{
	static struct mrule rules[RULES_MAX];
	static char batch[sizeof(sn.last)];
	redisReply *keys, *h;
	int n = 0, skipped = 0;
	size_t off = 0;
	bool decap = false;

	/* the ports whose counters are published: the PORT rows */
	if ((keys = q("KEYS PORT|*"))) {
		sn.nports = 0;
		for (size_t i = 0; i < keys->elements && sn.nports < PORTS_MAX; i++) {
			const char *p = keys->element[i]->str + 5;

			if (strlen(p) < sizeof(sn.ports[0]) && !strchr(p, '/') && strcmp(p, ".") &&
			    strcmp(p, ".."))
				snprintf(sn.ports[sn.nports++], sizeof(sn.ports[0]), "%s", p);
		}
		freeReplyObject(keys);
	}

	/* decapsulation: a TUNNEL row of type IPINIP to this switch's loopback */
	if (!(keys = q("KEYS TUNNEL|*")))
		return;
	for (size_t i = 0; i < keys->elements; i++) {
		struct in_addr dst;
		const char *t, *d;

		if (!(h = q("HGETALL %s", keys->element[i]->str)))
			continue;
		t = field(h, "tunnel_type");
		d = field(h, "dst_ip");
		if (t && !strcmp(t, "IPINIP") && d && inet_pton(AF_INET, d, &dst) == 1 &&
		    dst.s_addr == sn.cfg.loopback)
			decap = true;
		freeReplyObject(h);
	}
	freeReplyObject(keys);
	if (decap != *sn.cfg.decap)
		note("sonic: ip-in-ip decapsulation %s", decap ? "on" : "off");
	*sn.cfg.decap = decap;

	/* mirror rules: every ACL rule with a mirror action to a session row */
	if (!(keys = q("KEYS ACL_RULE|*")))
		return;
	for (size_t i = 0; i < keys->elements && n < RULES_MAX; i++) {
		const char **f;
		const char *sess, *prio;
		redisReply *s;
		unsigned long pv = 0;

		if (!(h = q("HGETALL %s", keys->element[i]->str)))
			continue;
		sess = field(h, "MIRROR_INGRESS_ACTION");
		prio = field(h, "PRIORITY");
		if (!sess || !(s = q("EXISTS MIRROR_SESSION|%s", sess))) {
			freeReplyObject(h);
			continue;
		}
		if (s->integer != 1 || !num(prio, 999999, false, &pv)) {
			freeReplyObject(s);
			freeReplyObject(h);
			continue;
		}
		freeReplyObject(s);
		f = calloc(h->elements + 1, sizeof(*f));
		for (size_t k = 0; f && k < h->elements; k++)
			f[k] = h->element[k]->str;
		if (f && ag_sonic_match(f, h->elements, rules[n].match, sizeof(rules[n].match)) == 0) {
			rules[n].prio = pv;
			rules[n].session = session_of(sess);
			n++;
		} else {
			skipped++;
		}
		free(f);
		freeReplyObject(h);
	}
	freeReplyObject(keys);
	qsort(rules, (size_t)n, sizeof(rules[0]), by_prio);

#define ADD(...) (off += (size_t)snprintf(batch + off, off < sizeof(batch) ? sizeof(batch) - off : 0, __VA_ARGS__))
	ADD("*raw\n-F HS_MIRROR\n-A HS_MIRROR -i mir0 -j RETURN\n");
	for (int i = 0; i < n; i++) {
		/* mirror once: the first rule that matches copies, the next one returns */
		ADD("-A HS_MIRROR %s -j NFLOG --nflog-group %u --nflog-prefix hs:%u\n", rules[i].match,
		    sn.cfg.group, rules[i].session);
		ADD("-A HS_MIRROR %s -j RETURN\n", rules[i].match);
	}
	ADD("COMMIT\n");
#undef ADD
	if (off >= sizeof(batch)) {
		note("sonic: too many mirror rules to program");
		return;
	}
	if (sn.applied && strcmp(batch, sn.last) == 0)
		return;
	if (restore(batch) < 0) {
		note("sonic: cannot program %d mirror rule(s) with iptables-restore", n);
		sn.applied = false;
		return;
	}
	memcpy(sn.last, batch, off + 1);
	sn.applied = true;
	note("sonic: programmed %d mirror rule(s) from CONFIG_DB%s", n,
	     skipped ? " (some rows have no netfilter form and were left out)" : "");
}

static void on_settled(uv_timer_t *t)
{
	(void)t;
	program();
}

static void on_change(redisAsyncContext *c, void *reply, void *arg)
{
	(void)c;
	(void)reply;
	(void)arg;
	/* a burst of row writes is programmed once, when it is over */
	uv_timer_start(&sn.settle, on_settled, 30, 0);
}

/* ---- counters ------------------------------------------------------------------------ */

static uint64_t sysstat(const char *port, const char *name)
{
	char path[128], buf[32];
	uint64_t v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/%s", port, name);
	if ((f = fopen(path, "r"))) {
		if (fgets(buf, sizeof(buf), f))
			v = strtoull(buf, NULL, 10);
		fclose(f);
	}
	return v;
}

static void publish(uv_timer_t *t)
{
	int sent = 0;

	(void)t;
	if (!sn.nports)
		return;
	redisAppendCommand(sn.c, "SELECT 2");
	for (int i = 0; i < sn.nports; i++) {
		const char *p = sn.ports[i];
		char oid[32];

		snprintf(oid, sizeof(oid), "oid:0x%" PRIx64, (uint64_t)(OID_BASE + (unsigned)i));
		redisAppendCommand(sn.c, "HSET COUNTERS_PORT_NAME_MAP %s %s", p, oid);
		redisAppendCommand(sn.c,
				   "HSET COUNTERS:%s SAI_PORT_STAT_IF_IN_UCAST_PKTS %" PRIu64
				   " SAI_PORT_STAT_IF_IN_NON_UCAST_PKTS 0"
				   " SAI_PORT_STAT_IF_IN_OCTETS %" PRIu64
				   " SAI_PORT_STAT_IF_IN_DISCARDS %" PRIu64
				   " SAI_PORT_STAT_IF_OUT_UCAST_PKTS %" PRIu64
				   " SAI_PORT_STAT_IF_OUT_NON_UCAST_PKTS 0"
				   " SAI_PORT_STAT_IF_OUT_OCTETS %" PRIu64
				   " SAI_PORT_STAT_IF_OUT_DISCARDS %" PRIu64, oid,
				   sysstat(p, "rx_packets"), sysstat(p, "rx_bytes"), sysstat(p, "rx_dropped"),
				   sysstat(p, "tx_packets"), sysstat(p, "tx_bytes"), sysstat(p, "tx_dropped"));
		sent += 2;
	}
	redisAppendCommand(sn.c, "SELECT 4");
	for (int i = 0; i < sent + 2; i++) {
		redisReply *r;

		if (redisGetReply(sn.c, (void **)&r) != REDIS_OK) {
			note("sonic: cannot publish counters: %s", sn.c->errstr);
			uv_timer_stop(&sn.counters);
			return;
		}
		freeReplyObject(r);
	}
}

int ag_sonic_start(uv_loop_t *loop, const struct ag_sonic_cfg *cfg)
{
	struct timeval tv = { 2, 0 };
	redisReply *r;

	sn.cfg = *cfg;
	sn.c = redisConnectUnixWithTimeout(cfg->sock, tv);
	if (!sn.c || sn.c->err) {
		fprintf(stderr, "hs-agent: cannot reach redis 'unix:%s': %s\n", cfg->sock,
			sn.c ? sn.c->errstr : "out of memory");
		return -1;
	}
	redisSetTimeout(sn.c, tv);
	if (!(r = q("SELECT 4"))) {
		fprintf(stderr, "hs-agent: cannot select CONFIG_DB in 'unix:%s'\n", cfg->sock);
		return -1;
	}
	freeReplyObject(r);
	sn.sub = redisAsyncConnectUnix(cfg->sock);
	if (!sn.sub || sn.sub->err || redisLibuvAttach(sn.sub, loop) != REDIS_OK) {
		fprintf(stderr, "hs-agent: cannot subscribe to 'unix:%s': %s\n", cfg->sock,
			sn.sub ? sn.sub->errstr : "out of memory");
		return -1;
	}
	redisAsyncCommand(sn.sub, on_change, NULL, "PSUBSCRIBE __keyspace@4__:*");
	uv_timer_init(loop, &sn.settle);
	uv_timer_init(loop, &sn.counters);
	program();
	uv_timer_start(&sn.counters, publish, 0, 100);
	return 0;
}

void ag_sonic_stop(void)
{
	if (sn.sub) {
		redisAsyncDisconnect(sn.sub);
		sn.sub = NULL;
	}
	if (sn.c) {
		redisFree(sn.c);
		sn.c = NULL;
	}
}
