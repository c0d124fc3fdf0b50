/* hs-traffic - real TCP traffic and ICMP/TCP probes between lab hosts
 *
 *   hs-traffic serve  [--bind ADDR] [--port P] [--duration T]
 *   hs-traffic client --dst ADDR[,ADDR...] [--src ADDR] [--port P]
 *                     [--rate R] [--flows N] [--flow-rate BPS] [--count N]
 *                     [--duration T]
 *   hs-traffic ping   ADDR [--ttl N] [--tos N] [--count N] [--timeout T]
 *   hs-traffic trace  ADDR [--max-ttl N] [--timeout T] [--tcp PORT [--sport P]]
 *   hs-traffic duration T
 *
 * serve accepts connections and discards what it reads. client opens short
 * connections at --rate per second (a SYN, a little data, a FIN) and keeps
 * --flows long connections streaming until --duration ends: 16 KB every
 * 100 ms each (1.3 Mbit/s), or --flow-rate bits a second each, written every
 * 10 ms. Both stop on
 * their own: traffic never outlives its duration. Destinations must lie in
 * the lab's host prefix (--allow, default 10.1.0.0/16).
 *
 * ping sends ICMP echo requests with a chosen TTL and prints what came back
 * (an echo reply, a time exceeded or an unreachable, with the sender). trace
 * raises the TTL from 1 until the destination answers; with --tcp it sends
 * TCP SYNs that keep one 5-tuple, so every TTL follows the same ECMP path.
 *
 * duration prints T, read as the console reads a duration (500ms, 20s, 1m;
 * a bare number is seconds), in nanoseconds: hopscope-lab's options take
 * durations through it, so that they read them as the console does.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip_icmp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "hs.h"

#define PROG "hs-traffic"
#define MAX_DST 256
#define MAX_CONN 512
#define DEFAULT_PORT 5001
#define SHORT_TIMEOUT_NS (3 * HS_NS_PER_SEC)
#define LONG_CHUNK 16384
#define LONG_PERIOD_NS (100 * 1000000ULL)	/* one chunk per flow per 100ms */
#define PACED_PERIOD_NS (10 * 1000000ULL)	/* with --flow-rate */
#define MAX_FLOW_BPS 100e6
#define PACED_CHUNK_MAX 125000			/* MAX_FLOW_BPS for 10 ms */

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static void usage(FILE *f)
{
	fputs("usage: hs-traffic serve  [--bind ADDR] [--port P] [--duration T]\n"
	      "       hs-traffic client --dst ADDR[,ADDR...] [--src ADDR] [--port P]\n"
	      "                         [--rate R] [--flows N] [--flow-rate BPS] [--count N]\n"
	      "                         [--duration T] [--allow PREFIX]\n"
	      "       hs-traffic ping   ADDR [--ttl N] [--tos N] [--count N] [--timeout T]\n"
	      "       hs-traffic trace  ADDR [--max-ttl N] [--timeout T] [--tcp PORT [--sport P]]\n"
	      "       hs-traffic duration T\n",
	      f);
}

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int fail(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 2;
}

struct opts {
	const char *mode;
	struct in_addr bind, src;
	bool have_src;
	struct in_addr dst[MAX_DST];
	int ndst;
	struct hs_addr allow;
	int allow_plen;
	uint16_t port, sport;
	uint64_t rate, flows, count, duration_ns, timeout_ns;
	uint64_t ttl, tos, max_ttl;
	bool tcp;
	double flow_bps;	/* long flows' rate, 0: a chunk per LONG_PERIOD_NS */
};

static int parse_in(const char *s, struct in_addr *out)
{
	return inet_pton(AF_INET, s, out) == 1 ? 0 : -1;
}

static int parse_dst_list(const char *s, struct opts *o)
{
	char buf[4096], *save = NULL, *tok;

	if (strlen(s) >= sizeof(buf))
		return fail("destination list '%.40s...' is too long", s);
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (o->ndst == MAX_DST)
			return fail("too many destinations (at most %d)", MAX_DST);
		if (parse_in(tok, &o->dst[o->ndst]) < 0)
			return fail("invalid destination '%s': expected an IPv4 address", tok);
		o->ndst++;
	}
	if (o->ndst == 0)
		return fail("empty destination list");
	return 0;
}

static int num_opt(const char *name, const char *val, uint64_t max, uint64_t *out)
{
	if (hs_parse_uint(val, max, out) < 0)
		return fail("invalid %s '%s': expected a number up to %llu", name, val,
			    (unsigned long long)max);
	return 0;
}

static int dur_opt(const char *name, const char *val, uint64_t *out)
{
	if (hs_parse_duration(val, out) < 0 || *out == 0)
		return fail("invalid %s '%s': expected a duration such as 10s or 500ms",
			    name, val);
	return 0;
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	uint64_t v;
	int i;

	memset(o, 0, sizeof(*o));
	o->port = DEFAULT_PORT;
	o->rate = 10;
	o->flows = 2;
	o->duration_ns = 10 * HS_NS_PER_SEC;
	o->timeout_ns = HS_NS_PER_SEC;
	o->ttl = 64;
	o->count = 0;
	o->max_ttl = 15;
	hs_prefix_parse("10.1.0.0/16", &o->allow, &o->allow_plen);
	o->mode = argv[1];
	if (strcmp(o->mode, "ping") == 0) {
		o->count = 1;
	}
	for (i = 2; i < argc; i++) {
		const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
		int r = 0;

		if (a[0] != '-') {
			if ((strcmp(o->mode, "ping") && strcmp(o->mode, "trace")) || o->ndst)
				return fail("unexpected argument '%s'", a);
			if (parse_in(a, &o->dst[0]) < 0)
				return fail("invalid destination '%s': expected an IPv4 address", a);
			o->ndst = 1;
			continue;
		}
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout);
			exit(0);
		}
		if (!val)
			return fail("option '%s' needs a value", a);
		i++;
		if (strcmp(a, "--bind") == 0) {
			if (parse_in(val, &o->bind) < 0)
				return fail("invalid address '%s'", val);
		} else if (strcmp(a, "--src") == 0) {
			if (parse_in(val, &o->src) < 0)
				return fail("invalid address '%s'", val);
			o->have_src = true;
		} else if (strcmp(a, "--dst") == 0) {
			r = parse_dst_list(val, o);
		} else if (strcmp(a, "--allow") == 0) {
			if (hs_prefix_parse(val, &o->allow, &o->allow_plen) < 0 || o->allow.af != 4)
				return fail("invalid prefix '%s': expected A.B.C.D/LEN", val);
		} else if (strcmp(a, "--port") == 0 || strcmp(a, "--tcp") == 0) {
			r = num_opt(a, val, 65535, &v);
			if (!r && v == 0)
				r = fail("invalid port '0'");
			o->port = (uint16_t)v;
			if (a[2] == 't')
				o->tcp = true;
		} else if (strcmp(a, "--sport") == 0) {
			r = num_opt(a, val, 65535, &v);
			o->sport = (uint16_t)v;
		} else if (strcmp(a, "--rate") == 0) {
			r = num_opt(a, val, 10000, &o->rate);
		} else if (strcmp(a, "--flows") == 0) {
			r = num_opt(a, val, 128, &o->flows);
		} else if (strcmp(a, "--flow-rate") == 0) {
			if (hs_parse_bps(val, &o->flow_bps) < 0 || o->flow_bps < 8000 ||
			    o->flow_bps > MAX_FLOW_BPS)
				r = fail("invalid --flow-rate '%s': expected a rate from 8k to 100M "
					 "such as 10M", val);
		} else if (strcmp(a, "--count") == 0) {
			r = num_opt(a, val, 1000000, &o->count);
		} else if (strcmp(a, "--ttl") == 0) {
			r = num_opt(a, val, 255, &o->ttl);
			if (!r && o->ttl == 0)
				r = fail("invalid ttl '0'");
		} else if (strcmp(a, "--max-ttl") == 0) {
			r = num_opt(a, val, 64, &o->max_ttl);
			if (!r && o->max_ttl == 0)
				r = fail("invalid max-ttl '0'");
		} else if (strcmp(a, "--tos") == 0) {
			r = num_opt(a, val, 255, &o->tos);
		} else if (strcmp(a, "--duration") == 0) {
			r = dur_opt(a, val, &o->duration_ns);
		} else if (strcmp(a, "--timeout") == 0) {
			r = dur_opt(a, val, &o->timeout_ns);
		} else {
			return fail("unknown option '%s'", a);
		}
		if (r)
			return r;
	}
	return 0;
}

static int set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static int ms_until(uint64_t deadline)
{
	uint64_t now = hs_mono_ns();

	if (deadline <= now)
		return 0;
	return (int)((deadline - now + 999999) / 1000000);
}

/* --- serve ------------------------------------------------------------------ */

static int serve(const struct opts *o)
{
	struct pollfd pfd[MAX_CONN + 1];
	int nfd = 1, one = 1, lfd;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(o->port),
				  .sin_addr = o->bind };
	uint64_t end = hs_mono_ns() + o->duration_ns, accepted = 0, bytes = 0;
	static char buf[65536];

	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0)
		return fail("cannot create socket: %s", strerror(errno)), 1;
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(lfd, 512) < 0) {
		fail("cannot listen on '%s:%u': %s", inet_ntoa(o->bind), o->port, strerror(errno));
		close(lfd);
		return 1;
	}
	set_nonblock(lfd);
	pfd[0].fd = lfd;
	pfd[0].events = POLLIN;
	while (!stop_flag && hs_mono_ns() < end) {
		int n = poll(pfd, (nfds_t)nfd, ms_until(end) > 500 ? 500 : ms_until(end));

		if (n < 0 && errno != EINTR)
			break;
		if (n <= 0)
			continue;
		for (int i = nfd - 1; i >= 1; i--) {
			ssize_t r;

			if (!pfd[i].revents)
				continue;
			r = read(pfd[i].fd, buf, sizeof(buf));
			if (r > 0) {
				bytes += (uint64_t)r;
				continue;
			}
			if (r < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			close(pfd[i].fd);
			pfd[i] = pfd[--nfd];
		}
		if (pfd[0].revents & POLLIN) {
			int c;

			while ((c = accept4(lfd, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
				accepted++;
				if (nfd == MAX_CONN + 1) {
					close(c);
					continue;
				}
				pfd[nfd].fd = c;
				pfd[nfd].events = POLLIN;
				pfd[nfd].revents = 0;
				nfd++;
			}
		}
	}
	for (int i = 0; i < nfd; i++)
		close(pfd[i].fd);
	printf("serve accepted %llu bytes %llu\n", (unsigned long long)accepted,
	       (unsigned long long)bytes);
	return 0;
}

/* --- client ----------------------------------------------------------------- */

enum conn_kind { C_FREE, C_SHORT, C_LONG };

struct conn {
	enum conn_kind kind;
	int fd;
	bool connected, wrote;
	uint64_t started, next_send;
};

struct client {
	const struct opts *o;
	struct conn c[MAX_CONN];
	uint64_t opened, ok, failed, bytes;
	uint64_t next_long;	/* a failed long flow is reopened after a pause */
	unsigned rnd;
};

static int open_conn(struct client *cl, enum conn_kind kind)
{
	const struct opts *o = cl->o;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(o->port) };
	int fd, slot;

	for (slot = 0; slot < MAX_CONN && cl->c[slot].kind != C_FREE; slot++)
		;
	if (slot == MAX_CONN)
		return -1;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	if (o->have_src) {
		struct sockaddr_in ss = { .sin_family = AF_INET, .sin_addr = o->src };
		int one = 1;

		/* the port is picked at connect, per destination: picked at bind,
		 * every connection needs a port of its own among all of them, and
		 * at --rate 1000 the ones in TIME_WAIT used them up in half a
		 * minute, after which no connection, long or short, could open */
		setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)&ss, sizeof(ss)) < 0) {
			close(fd);
			return -1;
		}
	}
	sa.sin_addr = o->dst[rand_r(&cl->rnd) % (unsigned)o->ndst];
	cl->opened++;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno != EINPROGRESS) {
		close(fd);
		cl->failed++;
		return 0;
	}
	cl->c[slot] = (struct conn){ .kind = kind, .fd = fd, .started = hs_mono_ns() };
	return 0;
}

static void close_conn(struct client *cl, struct conn *c, bool ok)
{
	close(c->fd);
	if (ok)
		cl->ok++;
	else
		cl->failed++;
	if (c->kind == C_LONG)
		cl->next_long = hs_mono_ns() + LONG_PERIOD_NS * 5;
	c->kind = C_FREE;
}

static int nlong(const struct client *cl)
{
	int n = 0;

	for (int i = 0; i < MAX_CONN; i++)
		n += cl->c[i].kind == C_LONG;
	return n;
}

/* one step of a connection after poll said something about it */
static void step_conn(struct client *cl, struct conn *c, short rev, uint64_t now)
{
	static char data[PACED_CHUNK_MAX > LONG_CHUNK ? PACED_CHUNK_MAX : LONG_CHUNK];
	const struct opts *o = cl->o;
	static char sink[4096];

	if (!c->connected) {
		int err = 0;
		socklen_t len = sizeof(err);

		if (!(rev & (POLLOUT | POLLERR | POLLHUP)))
			return;
		getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
		if (err) {
			close_conn(cl, c, false);
			return;
		}
		c->connected = true;
		c->next_send = now;
	}
	if (rev & (POLLERR | POLLHUP)) {
		close_conn(cl, c, c->wrote && c->kind == C_SHORT);
		return;
	}
	if (c->kind == C_SHORT) {
		if (!c->wrote && (rev & POLLOUT)) {
			ssize_t w = write(c->fd, data, 1024);

			if (w > 0)
				cl->bytes += (uint64_t)w;
			c->wrote = true;
			shutdown(c->fd, SHUT_WR);
		}
		if (rev & POLLIN) {
			ssize_t r = read(c->fd, sink, sizeof(sink));

			if (r == 0 || (r < 0 && errno != EAGAIN))
				close_conn(cl, c, r == 0);
		}
		return;
	}
	if (rev & POLLIN) {
		ssize_t r = read(c->fd, sink, sizeof(sink));

		if (r == 0 || (r < 0 && errno != EAGAIN)) {
			close_conn(cl, c, false);
			return;
		}
	}
	if ((rev & POLLOUT) && now >= c->next_send) {
		size_t len = o->flow_bps > 0 ? (size_t)(o->flow_bps / 8 / 100) : LONG_CHUNK;
		ssize_t w = write(c->fd, data, len);

		if (w > 0)
			cl->bytes += (uint64_t)w;
		c->wrote = true;
		if (o->flow_bps > 0) {
			/* paced on a fixed clock, so a late wake-up does not lower the rate */
			c->next_send += PACED_PERIOD_NS;
			if (c->next_send + PACED_PERIOD_NS < now)
				c->next_send = now;
		} else {
			c->next_send = now + LONG_PERIOD_NS;
		}
	}
}

static int client(const struct opts *o)
{
	static struct client cl;
	static struct pollfd pfd[MAX_CONN];
	static int idx[MAX_CONN];
	uint64_t start = hs_mono_ns(), end = start + o->duration_ns, next_short = start;
	uint64_t period = o->rate ? HS_NS_PER_SEC / o->rate : 0, shorts = 0;

	if (o->ndst == 0)
		return fail("client needs --dst ADDR[,ADDR...]");
	for (int i = 0; i < o->ndst; i++) {
		struct hs_addr a = { .af = 4 };

		memcpy(a.a, &o->dst[i], 4);
		if (!hs_addr_in(&a, &o->allow, o->allow_plen))
			return fail("destination '%s' is outside the lab hosts' prefix",
				    inet_ntoa(o->dst[i]));
	}
	cl.o = o;
	cl.rnd = (unsigned)getpid() ^ (unsigned)start;
	for (;;) {
		uint64_t now = hs_mono_ns(), wake = end;
		int n = 0, r;
		bool done = stop_flag || now >= end;

		if (!done && o->count && shorts >= o->count) {
			/* counted mode: finish once every short connection settled */
			bool busy = false;

			for (int i = 0; i < MAX_CONN; i++)
				busy |= cl.c[i].kind == C_SHORT;
			done = !busy && (uint64_t)nlong(&cl) == 0;
		}
		if (done)
			break;
		if ((!o->count || shorts < o->count) && now >= cl.next_long) {
			uint64_t tries = o->flows;

			while ((uint64_t)nlong(&cl) < o->flows && tries-- && open_conn(&cl, C_LONG) == 0)
				;
		}
		if (period && now >= next_short && (!o->count || shorts < o->count)) {
			open_conn(&cl, C_SHORT);
			shorts++;
			next_short += period;
			if (next_short < now)
				next_short = now + period;
		}
		if (period && (!o->count || shorts < o->count) && next_short < wake)
			wake = next_short;
		if ((uint64_t)nlong(&cl) < o->flows && cl.next_long > now && cl.next_long < wake)
			wake = cl.next_long;
		now = hs_mono_ns();
		for (int i = 0; i < MAX_CONN; i++) {
			struct conn *c = &cl.c[i];

			if (c->kind == C_FREE)
				continue;
			if (c->kind == C_SHORT && now - c->started > SHORT_TIMEOUT_NS) {
				close_conn(&cl, c, false);
				continue;
			}
			if (c->kind == C_LONG && o->count && shorts >= o->count) {
				close_conn(&cl, c, c->wrote);
				continue;
			}
			pfd[n].fd = c->fd;
			pfd[n].events = POLLIN;
			if (!c->connected || (c->kind == C_SHORT && !c->wrote))
				pfd[n].events |= POLLOUT;
			if (c->kind == C_LONG && c->connected) {
				if (now >= c->next_send)
					pfd[n].events |= POLLOUT;
				else if (c->next_send < wake)
					wake = c->next_send;
			}
			pfd[n].revents = 0;
			idx[n++] = i;
		}
		r = poll(pfd, (nfds_t)n, ms_until(wake) > 200 ? 200 : ms_until(wake));
		if (r < 0 && errno != EINTR)
			break;
		now = hs_mono_ns();
		for (int i = 0; i < n && r > 0; i++)
			if (pfd[i].revents)
				step_conn(&cl, &cl.c[idx[i]], pfd[i].revents, now);
	}
	for (int i = 0; i < MAX_CONN; i++)
		if (cl.c[i].kind != C_FREE)
			close_conn(&cl, &cl.c[i], cl.c[i].kind == C_LONG && cl.c[i].wrote);
	printf("client connections %llu ok %llu failed %llu bytes %llu\n",
	       (unsigned long long)cl.opened, (unsigned long long)cl.ok,
	       (unsigned long long)cl.failed, (unsigned long long)cl.bytes);
	return 0;
}

/* --- ping and trace ------------------------------------------------------------ */

static uint16_t cksum(const void *p, size_t len)
{
	const uint8_t *b = p;
	uint32_t s = 0;

	for (size_t i = 0; i + 1 < len; i += 2)
		s += (uint32_t)(b[i] << 8 | b[i + 1]);
	if (len & 1)
		s += (uint32_t)b[len - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return htons((uint16_t)~s);
}

enum answer { A_NONE, A_REPLY, A_EXCEEDED, A_UNREACH };

static const char *const answer_name[] = { "timeout", "reply", "exceeded", "unreachable" };

struct result {
	enum answer what;
	struct in_addr from;
	int code, ttl;
	uint64_t rtt_ns;
};

static inline uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* Does this ICMP message (bounded by len) answer our echo id/seq? */
static enum answer icmp_match(const uint8_t *icmp, size_t len, uint16_t id, uint16_t seq,
			      int *code)
{
	const uint8_t *in;
	size_t ihl;

	if (len < 8)
		return A_NONE;
	*code = icmp[1];
	if (icmp[0] == ICMP_ECHOREPLY)
		return rd16(icmp + 4) == id && rd16(icmp + 6) == seq ? A_REPLY : A_NONE;
	if (icmp[0] != ICMP_TIME_EXCEEDED && icmp[0] != ICMP_DEST_UNREACH)
		return A_NONE;
	in = icmp + 8;
	len -= 8;
	if (len < 20 || (in[0] >> 4) != 4)
		return A_NONE;
	ihl = (size_t)(in[0] & 0x0f) * 4;
	if (ihl < 20 || len < ihl + 8 || in[9] != IPPROTO_ICMP)
		return A_NONE;
	in += ihl;
	if (in[0] != ICMP_ECHO || rd16(in + 4) != id || rd16(in + 6) != seq)
		return A_NONE;
	return icmp[0] == ICMP_TIME_EXCEEDED ? A_EXCEEDED : A_UNREACH;
}

static int icmp_probe(int fd, struct in_addr dst, int ttl, int tos, uint16_t id, uint16_t seq,
		      uint64_t timeout_ns, struct result *res)
{
	uint8_t pkt[64] = { ICMP_ECHO, 0 };
	uint8_t buf[1500];
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr = dst };
	uint64_t t0 = hs_mono_ns(), end = t0 + timeout_ns;
	uint16_t ck;

	memset(res, 0, sizeof(*res));
	if (setsockopt(fd, IPPROTO_IP, IP_TTL, &ttl, sizeof(ttl)) < 0 ||
	    setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos)) < 0)
		return fail("cannot set ttl/tos: %s", strerror(errno)), -1;
	pkt[4] = (uint8_t)(id >> 8);
	pkt[5] = (uint8_t)id;
	pkt[6] = (uint8_t)(seq >> 8);
	pkt[7] = (uint8_t)seq;
	memcpy(pkt + 8, "hopscope-lab probe", 18);
	ck = cksum(pkt, sizeof(pkt));
	memcpy(pkt + 2, &ck, 2);
	if (sendto(fd, pkt, sizeof(pkt), 0, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		res->what = A_UNREACH;
		res->from = dst;
		res->code = -errno;
		return 0;
	}
	while (!stop_flag) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		struct sockaddr_in from;
		socklen_t fl = sizeof(from);
		ssize_t n;
		size_t ihl;
		int r = poll(&p, 1, ms_until(end));

		if (r == 0)
			break;
		if (r < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);
		if (n < 20)
			continue;
		ihl = (size_t)(buf[0] & 0x0f) * 4;
		if (ihl < 20 || (size_t)n < ihl)
			continue;
		res->what = icmp_match(buf + ihl, (size_t)n - ihl, id, seq, &res->code);
		if (res->what != A_NONE) {
			res->from = from.sin_addr;
			res->ttl = buf[8];
			res->rtt_ns = hs_mono_ns() - t0;
			return 0;
		}
	}
	res->what = A_NONE;
	return 0;
}

static int tcp_probe(const struct opts *o, int ttl, struct result *res)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(o->port),
				  .sin_addr = o->dst[0] };
	struct sockaddr_in ss = { .sin_family = AF_INET, .sin_port = htons(o->sport) };
	uint64_t t0 = hs_mono_ns(), end = t0 + o->timeout_ns;
	int one = 1, fd;

	memset(res, 0, sizeof(*res));
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return fail("cannot create socket: %s", strerror(errno)), -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(fd, IPPROTO_IP, IP_RECVERR, &one, sizeof(one));
	setsockopt(fd, IPPROTO_IP, IP_TTL, &ttl, sizeof(ttl));
	if (o->sport && bind(fd, (struct sockaddr *)&ss, sizeof(ss)) < 0) {
		fail("cannot bind source port %u: %s", o->sport, strerror(errno));
		close(fd);
		return -1;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		res->what = A_REPLY;
		res->from = o->dst[0];
		close(fd);
		return 0;
	}
	while (!stop_flag && errno == EINPROGRESS) {
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		int r = poll(&p, 1, ms_until(end));
		char cbuf[512];
		struct msghdr m = { .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
		struct cmsghdr *cm;

		if (r == 0)
			break;
		if (r < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		res->rtt_ns = hs_mono_ns() - t0;
		if (recvmsg(fd, &m, MSG_ERRQUEUE) >= 0) {
			for (cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm)) {
				struct sock_extended_err ee;
				struct sockaddr_in off;

				if (cm->cmsg_level != IPPROTO_IP || cm->cmsg_type != IP_RECVERR)
					continue;
				if (cm->cmsg_len < CMSG_LEN(sizeof(ee) + sizeof(off)))
					continue;
				memcpy(&ee, CMSG_DATA(cm), sizeof(ee));
				memcpy(&off, CMSG_DATA(cm) + sizeof(ee), sizeof(off));
				if (ee.ee_origin != SO_EE_ORIGIN_ICMP)
					continue;
				res->what = ee.ee_type == ICMP_TIME_EXCEEDED ? A_EXCEEDED : A_UNREACH;
				res->code = ee.ee_code;
				res->from = off.sin_addr;
			}
			if (res->what != A_NONE)
				break;
			continue;
		}
		{
			int err = 0;
			socklen_t len = sizeof(err);

			getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
			/* connected, or refused by the destination host: it answered */
			if (err == 0 || err == ECONNREFUSED) {
				res->what = A_REPLY;
				res->from = o->dst[0];
			}
		}
		break;
	}
	/* a reset on close keeps the server side from holding a half-open flow */
	if (res->what == A_REPLY) {
		struct linger lg = { 1, 0 };

		setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	}
	close(fd);
	return 0;
}

static void print_result(const char *lead, const struct result *r)
{
	printf("%s %s", lead, answer_name[r->what]);
	if (r->what != A_NONE) {
		printf(" %s", inet_ntoa(r->from));
		if (r->what == A_REPLY && r->ttl)
			printf(" ttl=%d", r->ttl);
		if (r->what == A_UNREACH)
			printf(" code=%d", r->code);
		printf(" rtt=%.3fms", (double)r->rtt_ns / 1e6);
	}
	putchar('\n');
	fflush(stdout);
}

static int open_icmp(void)
{
	int fd = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);

	if (fd < 0)
		fail("cannot open an ICMP socket: %s", strerror(errno));
	return fd;
}

static int ping(const struct opts *o)
{
	uint16_t id = (uint16_t)getpid();
	int fd, replies = 0;
	char lead[32];

	if (o->ndst != 1)
		return fail("ping needs one destination address");
	fd = open_icmp();
	if (fd < 0)
		return 1;
	for (uint64_t i = 1; i <= o->count && !stop_flag; i++) {
		struct result r;

		if (icmp_probe(fd, o->dst[0], (int)o->ttl, (int)o->tos, id, (uint16_t)i,
			       o->timeout_ns, &r) < 0)
			break;
		snprintf(lead, sizeof(lead), "seq=%llu", (unsigned long long)i);
		print_result(lead, &r);
		replies += r.what == A_REPLY;
	}
	close(fd);
	return replies ? 0 : 1;
}

static int trace(const struct opts *o)
{
	uint16_t id = (uint16_t)getpid();
	int fd = -1, reached = 0;
	char lead[16];

	if (o->ndst != 1)
		return fail("trace needs one destination address");
	if (!o->tcp && (fd = open_icmp()) < 0)
		return 1;
	for (int ttl = 1; ttl <= (int)o->max_ttl && !stop_flag && !reached; ttl++) {
		struct result r;
		int rc = o->tcp ? tcp_probe(o, ttl, &r)
			: icmp_probe(fd, o->dst[0], ttl, (int)o->tos, id, (uint16_t)ttl,
				     o->timeout_ns, &r);

		if (rc < 0)
			break;
		snprintf(lead, sizeof(lead), "%d", ttl);
		print_result(lead, &r);
		reached = r.what == A_REPLY || r.what == A_UNREACH;
	}
	if (fd >= 0)
		close(fd);
	return reached ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct opts o;
	int r;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "duration") == 0) {
		uint64_t ns;

		if (argc != 3)
			return fail("duration takes one argument");
		if (hs_parse_duration(argv[2], &ns) < 0)
			return fail("invalid duration '%s': expected a duration such as 10s or 500ms",
				    argv[2]);
		printf("%llu\n", (unsigned long long)ns);
		return 0;
	}
	if (strcmp(argv[1], "serve") && strcmp(argv[1], "client") && strcmp(argv[1], "ping") &&
	    strcmp(argv[1], "trace")) {
		fail("unknown mode '%s': expected serve, client, ping, trace or duration", argv[1]);
		usage(stderr);
		return 2;
	}
	r = parse_args(argc, argv, &o);
	if (r)
		return r;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (strcmp(o.mode, "serve") == 0)
		return serve(&o);
	if (strcmp(o.mode, "client") == 0)
		return client(&o);
	if (strcmp(o.mode, "ping") == 0)
		return ping(&o);
	return trace(&o);
}
