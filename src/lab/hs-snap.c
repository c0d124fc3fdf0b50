/* hs-snap - read one switch's port counters at an agreed instant
 *
 *   hs-snap --at NS --switch NAME [--skip IFNAME]...
 *
 * Run inside a switch's network namespace by the lab driver, one per switch,
 * all with the same --at: an absolute CLOCK_REALTIME instant in nanoseconds
 * since the epoch. Everything is prepared first (the netlink socket, the
 * request); then it sleeps until that instant (clock_nanosleep with
 * TIMER_ABSTIME) and reads every interface's counters with one RTM_GETLINK
 * dump (IFLA_STATS64), then the root qdiscs' backlog (RTM_GETQDISC). An
 * instant already past is read at once; the read time printed says when.
 *
 * One line per interface (loopbacks and --skip interfaces left out), the
 * JSON object of one port in the lab driver's snapshot answer
 * (share/drivers/README):
 *
 *   {"switch":"SW","port":"IFNAME","read_ns":NS,"rx_packets":N,"rx_bytes":N,
 *    "rx_drops":N,"tx_packets":N,"tx_bytes":N,"tx_drops":N,
 *    "backlog_bytes":N,"backlog_packets":N}
 *
 * read_ns is the middle of the link dump, CLOCK_REALTIME. tx_drops adds
 * the root qdisc's drops (a full or rate-limited queue) to the interface's
 * own. The backlog pair is null when the interface has no queueing qdisc
 * (noqueue). Names are checked (hs_name_ok, hs_ifname_ok), so they need no
 * escaping. Bad
 * arguments exit 2, a failed read exits 1, each with one line on stderr.
 */
#include <errno.h>
#include <linux/gen_stats.h>
#include <linux/if.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "hs.h"

#define PROG "hs-snap"
#define MAX_IFS 512
#define MAX_SKIP 16
#define MAX_AHEAD_NS (60 * HS_NS_PER_SEC)	/* --at at most a minute ahead */

struct port {
	int ifindex;
	char name[IFNAMSIZ];
	struct rtnl_link_stats64 st;
	bool has_backlog;
	uint32_t backlog, qlen, qdrops;
};

static struct port ports[MAX_IFS];
static int nports;
static bool too_many;			/* more interfaces than MAX_IFS */
static char rbuf[1 << 16] __attribute__((aligned(8)));

static int fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(int code, const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return code;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * HS_NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

static struct port *port_by_index(int ifindex)
{
	for (int i = 0; i < nports; i++)
		if (ports[i].ifindex == ifindex)
			return &ports[i];
	return NULL;
}

static int dump_request(int fd, uint16_t type, uint32_t seq)
{
	struct {
		struct nlmsghdr nh;
		union {
			struct ifinfomsg ifi;
			struct tcmsg tc;
		} u;
	} req;
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };

	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_type = type;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.nh.nlmsg_seq = seq;
	if (type == RTM_GETLINK) {
		req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg));
		req.u.ifi.ifi_family = AF_UNSPEC;
	} else {
		req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(struct tcmsg));
		req.u.tc.tcm_family = AF_UNSPEC;
	}
	if (sendto(fd, &req, req.nh.nlmsg_len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -1;
	return 0;
}

static void on_link(const struct nlmsghdr *nh)
{
	const struct ifinfomsg *ifi = NLMSG_DATA(nh);
	int len = (int)nh->nlmsg_len - (int)NLMSG_LENGTH(sizeof(*ifi));
	const char *name = NULL;
	const struct rtnl_link_stats64 *st = NULL;

	if (len < 0 || (ifi->ifi_flags & IFF_LOOPBACK))
		return;
	if (nports >= MAX_IFS) {
		too_many = true;
		return;
	}
	for (const struct rtattr *a = IFLA_RTA(ifi); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		size_t plen = RTA_PAYLOAD(a);

		if (a->rta_type == IFLA_IFNAME && plen > 0 && plen <= IFNAMSIZ &&
		    memchr(RTA_DATA(a), '\0', plen))
			name = RTA_DATA(a);
		else if (a->rta_type == IFLA_STATS64 && plen >= sizeof(*st))
			st = RTA_DATA(a);
	}
	if (!name || !st)
		return;
	struct port *p = &ports[nports++];
	memset(p, 0, sizeof(*p));
	p->ifindex = ifi->ifi_index;
	snprintf(p->name, sizeof(p->name), "%s", name);
	memcpy(&p->st, st, sizeof(p->st));
}

static void on_qdisc(const struct nlmsghdr *nh)
{
	const struct tcmsg *tc = NLMSG_DATA(nh);
	int len = (int)nh->nlmsg_len - (int)NLMSG_LENGTH(sizeof(*tc));
	struct port *p;
	bool noqueue = false, got = false;
	uint32_t backlog = 0, qlen = 0, qdrops = 0;

	if (len < 0 || tc->tcm_parent != TC_H_ROOT || !(p = port_by_index(tc->tcm_ifindex)))
		return;
	for (const struct rtattr *a = (const struct rtattr *)((const char *)tc +
							      NLMSG_ALIGN(sizeof(*tc)));
	     RTA_OK(a, len); a = RTA_NEXT(a, len)) {
		size_t plen = RTA_PAYLOAD(a);

		if (a->rta_type == TCA_KIND && plen >= 8 && memcmp(RTA_DATA(a), "noqueue", 8) == 0) {
			noqueue = true;
		} else if (a->rta_type == TCA_STATS2) {
			int nlen = (int)plen;

			for (const struct rtattr *b = RTA_DATA(a); RTA_OK(b, nlen);
			     b = RTA_NEXT(b, nlen)) {
				struct gnet_stats_queue q;

				if (b->rta_type != TCA_STATS_QUEUE || RTA_PAYLOAD(b) < sizeof(q))
					continue;
				memcpy(&q, RTA_DATA(b), sizeof(q));
				backlog = q.backlog;
				qlen = q.qlen;
				qdrops = q.drops;
				got = true;
			}
		}
	}
	if (!noqueue && got) {
		p->has_backlog = true;
		p->qdrops = qdrops;
		p->backlog = backlog;
		p->qlen = qlen;
	}
}

/* read a dump to its end; 0, or -1 with errno set */
static int dump_read(int fd, uint32_t seq, void (*fn)(const struct nlmsghdr *))
{
	for (;;) {
		ssize_t n = recv(fd, rbuf, sizeof(rbuf), 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		int left = (int)n;
		for (const struct nlmsghdr *nh = (const struct nlmsghdr *)rbuf; NLMSG_OK(nh, left);
		     nh = NLMSG_NEXT(nh, left)) {
			if (nh->nlmsg_seq != seq)
				continue;
			if (nh->nlmsg_type == NLMSG_DONE)
				return 0;
			if (nh->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(nh);

				errno = nh->nlmsg_len >= NLMSG_LENGTH(sizeof(*e)) && e->error ?
					-e->error : EPROTO;
				return -1;
			}
			fn(nh);
		}
	}
}

int main(int argc, char **argv)
{
	const char *sw = NULL, *skip[MAX_SKIP];
	int nskip = 0;
	uint64_t at = 0;
	bool have_at = false;

	for (int i = 1; i < argc; i += 2) {
		const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(k, "-h") == 0 || strcmp(k, "--help") == 0) {
			puts("usage: hs-snap --at NS --switch NAME [--skip IFNAME]...");
			return 0;
		}
		if (!v)
			return fail(2, "option '%s' needs a value", k);
		if (strcmp(k, "--at") == 0) {
			if (hs_parse_uint(v, UINT64_MAX / 2, &at) < 0)
				return fail(2, "invalid instant '%s': expected nanoseconds since the epoch", v);
			have_at = true;
		} else if (strcmp(k, "--switch") == 0) {
			if (!hs_name_ok(v))
				return fail(2, "invalid switch name '%s'", v);
			sw = v;
		} else if (strcmp(k, "--skip") == 0) {
			if (!hs_ifname_ok(v))
				return fail(2, "invalid interface name '%s'", v);
			if (nskip == MAX_SKIP)
				return fail(2, "too many --skip (at most %d)", MAX_SKIP);
			skip[nskip++] = v;
		} else {
			return fail(2, "unknown option '%s'", k);
		}
	}
	if (!have_at || !sw)
		return fail(2, "usage: hs-snap --at NS --switch NAME [--skip IFNAME]...");
	if (at > now_ns() + MAX_AHEAD_NS)
		return fail(2, "instant '%llu' is more than a minute ahead", (unsigned long long)at);

	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return fail(1, "cannot open a netlink socket: %s", strerror(errno));
	int rcv = 1 << 20;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));

	struct timespec t = { .tv_sec = (time_t)(at / HS_NS_PER_SEC),
			      .tv_nsec = (long)(at % HS_NS_PER_SEC) };
	int rc;
	while ((rc = clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &t, NULL)) == EINTR)
		;
	if (rc != 0)
		return fail(1, "cannot sleep until %llu: %s", (unsigned long long)at, strerror(rc));

	uint64_t t0 = now_ns();
	if (dump_request(fd, RTM_GETLINK, 1) < 0 || dump_read(fd, 1, on_link) < 0)
		return fail(1, "cannot read the link counters: %s", strerror(errno));
	uint64_t t1 = now_ns();
	if (too_many)
		return fail(1, "more than %d interfaces: not all could be read", MAX_IFS);
	if (dump_request(fd, RTM_GETQDISC, 2) < 0 || dump_read(fd, 2, on_qdisc) < 0)
		return fail(1, "cannot read the qdiscs: %s", strerror(errno));
	close(fd);

	uint64_t read_ns = t0 + (t1 - t0) / 2;
	for (int i = 0; i < nports; i++) {
		const struct port *p = &ports[i];
		bool skipped = false;

		for (int k = 0; k < nskip; k++)
			skipped |= strcmp(p->name, skip[k]) == 0;
		if (skipped || !hs_ifname_ok(p->name))
			continue;
		printf("{\"switch\":\"%s\",\"port\":\"%s\",\"read_ns\":%llu,\"rx_packets\":%llu,"
		       "\"rx_bytes\":%llu,\"rx_drops\":%llu,\"tx_packets\":%llu,\"tx_bytes\":%llu,"
		       "\"tx_drops\":%llu,", sw, p->name,
		       (unsigned long long)read_ns, (unsigned long long)p->st.rx_packets,
		       (unsigned long long)p->st.rx_bytes, (unsigned long long)p->st.rx_dropped,
		       (unsigned long long)p->st.tx_packets, (unsigned long long)p->st.tx_bytes,
		       (unsigned long long)(p->st.tx_dropped + p->qdrops));
		if (p->has_backlog)
			printf("\"backlog_bytes\":%lu,\"backlog_packets\":%lu}\n",
			       (unsigned long)p->backlog, (unsigned long)p->qlen);
		else
			printf("\"backlog_bytes\":null,\"backlog_packets\":null}\n");
	}
	if (fflush(stdout) != 0 || ferror(stdout))
		return fail(1, "cannot write: %s", strerror(errno));
	return 0;
}
