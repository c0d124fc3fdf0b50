/* agent.c - hs-agent: the per-switch mirror and IP-in-IP agent of the lab
 *
 *   hs-agent --switch NAME --group G --mirror-src ADDR --analyzer ADDR
 *            --loopback ADDR [--erspan 3|2] [--tun IFNAME] [--log FILE]
 *            [--pidfile FILE] [--stats FILE] [--sonic SOCKET] [--daemon]
 *
 * One libuv loop: a poll on the NFLOG netlink socket (mirror), a poll on an
 * IPPROTO_IPIP raw socket (decapsulation), SIGTERM/SIGINT (clean exit),
 * SIGUSR1 and a one-second timer (counters to --stats). Every copy is sent
 * from the NFLOG callback: no batching, no allocation per packet.
 */
#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <linux/if_tun.h>
#include <uv.h>
#include <libnetfilter_log/libnetfilter_log.h>
#include "agent.h"

#define AG_RXBUF	(256 * 1024)
#define AG_TXBUF	(65536 + AG_ENCAP_MAX)
#define AG_DRAIN_MAX	256		/* reads per poll callback */

#define AG_COUNTERS(X) \
	X(mirrored) \
	X(mirrored_bytes) \
	X(truncated) \
	X(decapsulated) \
	X(dropped) \
	X(dropped_malformed) \
	X(dropped_send) \
	X(dropped_overrun) \
	X(dropped_decap) \
	X(nflog_received) \
	X(kernel_stamped) \
	X(ipip_received)

struct agent {
	/* options */
	const char *sw;
	unsigned group;
	int erspan;
	struct in_addr mirror_src, analyzer, loopback;
	const char *tun_name;
	const char *log_path, *pid_path, *stats_path;
	const char *sonic;		/* the switch's redis: configured from CONFIG_DB */
	bool decap;			/* IP-in-IP decapsulation on */
	bool daemon;

	FILE *log;
	struct nflog_handle *nfh;
	struct nflog_g_handle *gh;
	int stampfd;		/* keeps the kernel stamping packets as they arrive */
	int nlfd, txfd, ipipfd, tunfd;
	size_t tx_max;			/* largest IP payload that fits the mirror MTU */
	bool pidfile_written;

	uv_loop_t loop;
	uv_poll_t nl_poll, ipip_poll;
	uv_signal_t sig_term, sig_int, sig_usr1;
	uv_timer_t stats_timer;

	struct ag_erspan er;
	struct {
#define AG_FIELD(n) uint64_t n;
		AG_COUNTERS(AG_FIELD)
#undef AG_FIELD
	} c;

	uint8_t rx[AG_RXBUF];
	uint8_t tx[AG_TXBUF];
};

/* one agent a process; its buffers live here, not on the heap */
static struct agent the_agent;

static struct agent *ag_init(void)
{
	struct agent *a = &the_agent;

	a->nlfd = a->txfd = a->ipipfd = a->tunfd = a->stampfd = -1;
	a->erspan = 3;
	a->tun_name = "hs-tun";
	a->decap = true;
	return a;
}

/* release what setup made; safe on a half-made agent */
static void ag_release(struct agent *a)
{
	if (a->gh)
		nflog_unbind_group(a->gh);
	if (a->nfh)
		nflog_close(a->nfh);	/* closes nlfd */
	if (a->ipipfd >= 0)
		close(a->ipipfd);
	if (a->tunfd >= 0)
		close(a->tunfd);	/* removes the TUN device */
	if (a->txfd >= 0)
		close(a->txfd);
	if (a->stampfd >= 0)
		close(a->stampfd);
	a->gh = NULL;
	a->nfh = NULL;
	a->nlfd = a->ipipfd = a->tunfd = a->txfd = a->stampfd = -1;
}

static void ag_log(struct agent *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void ag_log(struct agent *a, const char *fmt, ...)
{
	FILE *fp = a->log ? a->log : stderr;
	struct timespec ts;
	struct tm tm;
	char when[32];
	va_list ap;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	fprintf(fp, "%s.%06ldZ hs-agent[%s]: ", when, ts.tv_nsec / 1000,
		a->sw ? a->sw : "?");
	va_start(ap, fmt);
	vfprintf(fp, fmt, ap);
	va_end(ap);
	fputc('\n', fp);
	fflush(fp);
}

static void sonic_log(void *arg, const char *msg)
{
	ag_log(arg, "%s", msg);
}

/* ---- options ----------------------------------------------------------- */

static void usage(FILE *fp)
{
	fprintf(fp,
		"usage: hs-agent --switch NAME --group G --mirror-src ADDR --analyzer ADDR\n"
		"                --loopback ADDR [--erspan 3|2] [--tun IFNAME] [--log FILE]\n"
		"                [--pidfile FILE] [--stats FILE] [--sonic SOCKET] [--daemon]\n");
}

static int bad_arg(const char *opt, const char *val, const char *want)
{
	fprintf(stderr, "hs-agent: invalid %s '%s': expected %s\n", opt, val, want);
	return -1;
}

static bool name_ok(const char *s, size_t max)
{
	size_t n = strlen(s);

	if (n == 0 || n > max)
		return false;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' || ch == '.'))
			return false;
	}
	return s[0] != '-' && s[0] != '.';
}

static int parse_addr(const char *opt, const char *s, struct in_addr *out)
{
	if (inet_pton(AF_INET, s, out) != 1)
		return bad_arg(opt, s, "an IPv4 address");
	return 0;
}

static int parse_args(struct agent *a, int argc, char **argv)
{
	enum { O_SWITCH = 256, O_GROUP, O_MSRC, O_ANALYZER, O_LOOPBACK, O_ERSPAN,
	       O_TUN, O_LOG, O_PID, O_STATS, O_SONIC, O_DAEMON };
	static const struct option opts[] = {
		{ "switch", required_argument, NULL, O_SWITCH },
		{ "group", required_argument, NULL, O_GROUP },
		{ "mirror-src", required_argument, NULL, O_MSRC },
		{ "analyzer", required_argument, NULL, O_ANALYZER },
		{ "loopback", required_argument, NULL, O_LOOPBACK },
		{ "erspan", required_argument, NULL, O_ERSPAN },
		{ "tun", required_argument, NULL, O_TUN },
		{ "log", required_argument, NULL, O_LOG },
		{ "pidfile", required_argument, NULL, O_PID },
		{ "stats", required_argument, NULL, O_STATS },
		{ "sonic", required_argument, NULL, O_SONIC },
		{ "daemon", no_argument, NULL, O_DAEMON },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool have_msrc = false, have_an = false, have_lo = false, have_group = false;
	int ch;

	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		char *end;
		unsigned long v;

		switch (ch) {
		case O_SWITCH:
			if (!name_ok(optarg, 31))
				return bad_arg("--switch", optarg,
					       "a name of 1-31 letters, digits, '-', '_' or '.'");
			a->sw = optarg;
			break;
		case O_GROUP:
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (optarg[0] < '0' || optarg[0] > '9' || *end || errno || v > 65535)
				return bad_arg("--group", optarg, "a number from 0 to 65535");
			a->group = (unsigned)v;
			have_group = true;
			break;
		case O_MSRC:
			if (parse_addr("--mirror-src", optarg, &a->mirror_src) < 0)
				return -1;
			have_msrc = true;
			break;
		case O_ANALYZER:
			if (parse_addr("--analyzer", optarg, &a->analyzer) < 0)
				return -1;
			have_an = true;
			break;
		case O_LOOPBACK:
			if (parse_addr("--loopback", optarg, &a->loopback) < 0)
				return -1;
			have_lo = true;
			break;
		case O_ERSPAN:
			if (strcmp(optarg, "2") && strcmp(optarg, "3"))
				return bad_arg("--erspan", optarg, "2 or 3");
			a->erspan = optarg[0] - '0';
			break;
		case O_TUN:
			if (!name_ok(optarg, IFNAMSIZ - 1))
				return bad_arg("--tun", optarg, "an interface name of 1-15 characters");
			a->tun_name = optarg;
			break;
		case O_LOG:
		case O_PID:
		case O_STATS:
			if (!*optarg)
				return bad_arg(argv[optind - 1], optarg, "a file name");
			if (ch == O_LOG)
				a->log_path = optarg;
			else if (ch == O_PID)
				a->pid_path = optarg;
			else
				a->stats_path = optarg;
			break;
		case O_SONIC:
			if (optarg[0] != '/')
				return bad_arg("--sonic", optarg, "the absolute path of a redis socket");
			a->sonic = optarg;
			a->decap = false;	/* until a TUNNEL row asks for it */
			break;
		case O_DAEMON:
			a->daemon = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case ':':
			fprintf(stderr, "hs-agent: option '%s' needs a value\n", argv[optind - 1]);
			return -1;
		default:
			fprintf(stderr, "hs-agent: unknown option '%s'\n", argv[optind - 1]);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "hs-agent: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	if (!a->sw || !have_group || !have_msrc || !have_an || !have_lo) {
		fprintf(stderr, "hs-agent: missing %s\n",
			!a->sw ? "--switch" : !have_group ? "--group" :
			!have_msrc ? "--mirror-src" : !have_an ? "--analyzer" : "--loopback");
		return -1;
	}
	return 0;
}

/* ---- counters ---------------------------------------------------------- */

static void write_stats(struct agent *a)
{
	char tmp[4096];
	FILE *fp;

	if (!a->stats_path)
		return;
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", a->stats_path) >= (int)sizeof(tmp))
		return;
	fp = fopen(tmp, "w");
	if (!fp) {
		ag_log(a, "cannot write '%s': %s", tmp, strerror(errno));
		return;
	}
	fprintf(fp, "switch %s\n", a->sw);
#define AG_PRINT(n) fprintf(fp, #n " %llu\n", (unsigned long long)a->c.n);
	AG_COUNTERS(AG_PRINT)
#undef AG_PRINT
	if (fclose(fp) != 0 || rename(tmp, a->stats_path) != 0) {
		ag_log(a, "cannot write '%s': %s", a->stats_path, strerror(errno));
		unlink(tmp);
	}
}

static void drop(struct agent *a, uint64_t *reason)
{
	(*reason)++;
	a->c.dropped++;
}

/* ---- mirror: NFLOG -> ERSPAN ------------------------------------------- */

static int on_nflog(struct nflog_g_handle *gh, struct nfgenmsg *nfmsg,
		    struct nflog_data *nfd, void *data)
{
	struct agent *a = data;
	struct ag_copy cp = { 0 };
	struct timespec ts;
	char *payload = NULL;
	int len, session, ver;
	size_t n;
	bool trunc;
	ssize_t sent;

	a->c.nflog_received++;
	/* the time the packet reached the switch, as the kernel stamped it; the
	 * time this process got to read it is later by however long the
	 * scheduler took, enough to put hops out of order */
	struct timeval tv;
	if (nflog_get_timestamp(nfd, &tv) == 0 && tv.tv_sec > 0) {
		ts.tv_sec = tv.tv_sec;
		ts.tv_nsec = tv.tv_usec * 1000L;
		a->c.kernel_stamped++;
	} else {
		clock_gettime(CLOCK_REALTIME, &ts);
	}
	len = nflog_get_payload(nfd, &payload);
	session = ag_session_from_prefix(nflog_get_prefix(nfd));
	if (len <= 0 || !payload || session < 0) {
		drop(a, &a->c.dropped_malformed);
		return 0;
	}
	/* at least a whole IP header of a known version */
	ver = (uint8_t)payload[0] >> 4;
	if ((ver != 4 || len < 20) && (ver != 6 || len < 40)) {
		drop(a, &a->c.dropped_malformed);
		return 0;
	}
	if (nflog_get_hwtype(nfd) == 1 && nflog_get_msg_packet_hwhdrlen(nfd) >= 14) {
		char *hw = nflog_get_msg_packet_hwhdr(nfd);

		if (hw)
			cp.macs = (const uint8_t *)hw;
	}
	cp.session = (uint16_t)session;
	cp.now_ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	cp.port = nflog_get_indev(nfd);
	cp.pkt = (const uint8_t *)payload;
	cp.len = (size_t)len;
	n = ag_erspan_build(&a->er, a->tx, a->tx_max, &cp, &trunc);
	if (n == 0) {
		drop(a, &a->c.dropped_malformed);
		return 0;
	}
	sent = send(a->txfd, a->tx, n, MSG_DONTWAIT);
	if (sent < 0) {
		if (a->c.dropped_send++ == 0)
			ag_log(a, "cannot send to '%s': %s", inet_ntoa(a->analyzer),
			       strerror(errno));
		a->c.dropped++;
		return 0;
	}
	a->c.mirrored++;
	a->c.mirrored_bytes += (uint64_t)n;
	if (trunc)
		a->c.truncated++;
	return 0;
}

/* libuv stops a poll whose socket reports an error (POLLERR) and calls it
 * once with a negative status. The netlink socket reports one after every
 * overrun (ENOBUFS), the raw socket after some ICMP errors; the recv that
 * follows reads and clears it. So each callback drains and then starts its
 * poll again: left stopped, the agent would never read that socket again. */
static void rearm(uv_poll_t *h, int status, uv_poll_cb cb)
{
	if (status < 0)
		uv_poll_start(h, UV_READABLE, cb);
}

static void nl_drain(struct agent *a)
{
	for (int i = 0; i < AG_DRAIN_MAX; i++) {
		ssize_t n = recv(a->nlfd, a->rx, sizeof(a->rx), MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ENOBUFS) {	/* the kernel dropped some: count and go on */
				a->c.dropped_overrun++;
				a->c.dropped++;
				continue;
			}
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				ag_log(a, "netlink receive failed: %s", strerror(errno));
			return;
		}
		if (n == 0)
			return;
		nflog_handle_packet(a->nfh, (char *)a->rx, (int)n);
	}
}

static void on_nl_readable(uv_poll_t *h, int status, int events)
{
	nl_drain(h->data);
	rearm(h, status, on_nl_readable);
}

/* ---- IP-in-IP: raw socket -> TUN --------------------------------------- */

static void ipip_drain(struct agent *a)
{
	for (int i = 0; i < AG_DRAIN_MAX; i++) {
		ssize_t n = recv(a->ipipfd, a->rx, sizeof(a->rx), MSG_DONTWAIT);
		size_t off, len;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				ag_log(a, "ip-in-ip receive failed: %s", strerror(errno));
			return;
		}
		a->c.ipip_received++;
		if (!a->decap || ag_ipip_inner(a->rx, (size_t)n, a->loopback.s_addr, &off, &len) < 0) {
			drop(a, &a->c.dropped_decap);
			continue;
		}
		if (write(a->tunfd, a->rx + off, len) != (ssize_t)len) {
			if (a->c.dropped_send++ == 0)
				ag_log(a, "cannot write to '%s': %s", a->tun_name, strerror(errno));
			a->c.dropped++;
			continue;
		}
		a->c.decapsulated++;
	}
}

static void on_ipip_readable(uv_poll_t *h, int status, int events)
{
	ipip_drain(h->data);
	rearm(h, status, on_ipip_readable);
}

/* ---- signals and timers ------------------------------------------------- */

static void on_stop(uv_signal_t *h, int signum)
{
	struct agent *a = h->data;

	ag_log(a, "%s received, stopping", strsignal(signum));
	uv_stop(&a->loop);
}

static void on_usr1(uv_signal_t *h, int signum)
{
	write_stats(h->data);
}

static void on_stats_timer(uv_timer_t *h)
{
	write_stats(h->data);
}

/* ---- setup -------------------------------------------------------------- */

static int setup_nflog(struct agent *a)
{
	int rcv = 4 * 1024 * 1024;

	a->nfh = nflog_open();
	if (!a->nfh) {
		fprintf(stderr, "hs-agent: cannot open nflog: %s\n", strerror(errno));
		return -1;
	}
	/* older kernels want the family bound; newer ones ignore it */
	nflog_unbind_pf(a->nfh, AF_INET);
	if (nflog_bind_pf(a->nfh, AF_INET) < 0) {
		fprintf(stderr, "hs-agent: cannot bind nflog to IPv4: %s\n", strerror(errno));
		return -1;
	}
	nflog_bind_pf(a->nfh, AF_INET6);
	a->gh = nflog_bind_group(a->nfh, (uint16_t)a->group);
	if (!a->gh) {
		fprintf(stderr, "hs-agent: cannot bind nflog group %u: %s\n", a->group,
			strerror(errno));
		return -1;
	}
	if (nflog_set_mode(a->gh, NFULNL_COPY_PACKET, 0xffff) < 0 ||
	    nflog_set_qthresh(a->gh, 1) < 0 || nflog_set_timeout(a->gh, 0) < 0) {
		fprintf(stderr, "hs-agent: cannot configure nflog group %u: %s\n", a->group,
			strerror(errno));
		return -1;
	}
	nflog_callback_register(a->gh, on_nflog, a);
	/* a socket asking for receive timestamps makes the kernel stamp every
	 * packet on arrival, and NFLOG then hands that stamp over */
	int on = 1;
	a->stampfd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (a->stampfd >= 0)
		setsockopt(a->stampfd, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof(on));
	a->nlfd = nflog_fd(a->nfh);
	setsockopt(a->nlfd, SOL_SOCKET, SO_RCVBUFFORCE, &rcv, sizeof(rcv));
	fcntl(a->nlfd, F_SETFL, fcntl(a->nlfd, F_GETFL) | O_NONBLOCK);
	return 0;
}

static int setup_tx(struct agent *a)
{
	struct sockaddr_in src = { .sin_family = AF_INET, .sin_addr = a->mirror_src };
	struct sockaddr_in dst = { .sin_family = AF_INET, .sin_addr = a->analyzer };
	int mtu = 0, pmtu = IP_PMTUDISC_DONT;
	socklen_t sl = sizeof(mtu);
	char as[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &a->mirror_src, as, sizeof(as));
	a->txfd = socket(AF_INET, SOCK_RAW, IPPROTO_GRE);
	if (a->txfd < 0) {
		fprintf(stderr, "hs-agent: cannot open a GRE raw socket: %s\n", strerror(errno));
		return -1;
	}
	if (bind(a->txfd, (struct sockaddr *)&src, sizeof(src)) < 0) {
		fprintf(stderr, "hs-agent: cannot bind to mirror source '%s': %s\n", as,
			strerror(errno));
		return -1;
	}
	if (connect(a->txfd, (struct sockaddr *)&dst, sizeof(dst)) < 0) {
		fprintf(stderr, "hs-agent: cannot reach analyzer '%s': %s\n",
			inet_ntoa(a->analyzer), strerror(errno));
		return -1;
	}
	setsockopt(a->txfd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu));
	if (getsockopt(a->txfd, IPPROTO_IP, IP_MTU, &mtu, &sl) < 0 || mtu < 576)
		mtu = 1500;
	a->tx_max = (size_t)mtu - 20;	/* the outer IPv4 header is the kernel's */
	if (a->tx_max > AG_TXBUF)
		a->tx_max = AG_TXBUF;
	return 0;
}

static void write_sysctl(struct agent *a, const char *fmt, const char *val)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), fmt, a->tun_name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, val, strlen(val)) < 0)
		ag_log(a, "cannot set '%s': %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
}

static int setup_ipip(struct agent *a)
{
	struct sockaddr_in lo = { .sin_family = AF_INET, .sin_addr = a->loopback };
	struct ifreq ifr;
	int s;

	a->ipipfd = socket(AF_INET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_IPIP);
	if (a->ipipfd < 0) {
		fprintf(stderr, "hs-agent: cannot open an IP-in-IP raw socket: %s\n",
			strerror(errno));
		return -1;
	}
	if (bind(a->ipipfd, (struct sockaddr *)&lo, sizeof(lo)) < 0) {
		fprintf(stderr, "hs-agent: cannot bind to loopback '%s': %s\n",
			inet_ntoa(a->loopback), strerror(errno));
		return -1;
	}

	a->tunfd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (a->tunfd < 0) {
		fprintf(stderr, "hs-agent: cannot open '/dev/net/tun': %s\n", strerror(errno));
		return -1;
	}
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", a->tun_name);
	if (ioctl(a->tunfd, TUNSETIFF, &ifr) < 0) {
		fprintf(stderr, "hs-agent: cannot create TUN device '%s': %s\n", a->tun_name,
			strerror(errno));
		return -1;
	}
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) < 0 ||
	    (ifr.ifr_flags |= IFF_UP | IFF_RUNNING, ioctl(s, SIOCSIFFLAGS, &ifr) < 0)) {
		fprintf(stderr, "hs-agent: cannot bring '%s' up: %s\n", a->tun_name,
			strerror(errno));
		if (s >= 0)
			close(s);
		return -1;
	}
	close(s);
	/* forwarded as if it arrived here: no source check, local sources allowed */
	write_sysctl(a, "/proc/sys/net/ipv4/conf/%s/rp_filter", "0");
	write_sysctl(a, "/proc/sys/net/ipv4/conf/%s/accept_local", "1");
	return 0;
}

static int write_pidfile(struct agent *a)
{
	FILE *fp;

	if (!a->pid_path)
		return 0;
	fp = fopen(a->pid_path, "w");
	if (!fp || fprintf(fp, "%ld\n", (long)getpid()) < 0 || fclose(fp) != 0) {
		ag_log(a, "cannot write '%s': %s", a->pid_path, strerror(errno));
		return -1;
	}
	a->pidfile_written = true;
	return 0;
}

static void remove_pidfile(struct agent *a)
{
	FILE *fp;
	long pid = 0;

	if (!a->pidfile_written)
		return;
	fp = fopen(a->pid_path, "r");
	if (fp) {
		if (fscanf(fp, "%ld", &pid) != 1)
			pid = 0;
		fclose(fp);
	}
	if (pid == (long)getpid())
		unlink(a->pid_path);
}

static int daemonize(void)
{
	pid_t pid = fork();
	int fd;

	if (pid < 0) {
		fprintf(stderr, "hs-agent: cannot fork: %s\n", strerror(errno));
		return -1;
	}
	if (pid > 0)
		_exit(0);
	setsid();
	fd = open("/dev/null", O_RDWR);
	if (fd >= 0) {
		dup2(fd, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		if (fd > 2)
			close(fd);
	}
	return 0;
}

static void close_walk(uv_handle_t *h, void *arg)
{
	if (!uv_is_closing(h))
		uv_close(h, NULL);
}

int main(int argc, char **argv)
{
	struct agent *a = ag_init();
	int rc;

	if (parse_args(a, argc, argv) < 0) {
		usage(stderr);
		return 2;
	}
	if (a->log_path) {
		a->log = fopen(a->log_path, "a");
		if (!a->log) {
			fprintf(stderr, "hs-agent: cannot open '%s': %s\n", a->log_path,
				strerror(errno));
			return 1;
		}
	}
	ag_erspan_init(&a->er, a->erspan);
	if (setup_tx(a) < 0 || setup_ipip(a) < 0 || setup_nflog(a) < 0 ||
	    (a->daemon && daemonize() < 0)) {
		ag_release(a);
		if (a->log)
			fclose(a->log);
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);

	rc = uv_loop_init(&a->loop);
	if (rc) {
		fprintf(stderr, "hs-agent: cannot start the event loop: %s\n", uv_strerror(rc));
		ag_release(a);
		return 1;
	}
	a->nl_poll.data = a->ipip_poll.data = a;
	a->sig_term.data = a->sig_int.data = a->sig_usr1.data = a->stats_timer.data = a;
	uv_poll_init(&a->loop, &a->nl_poll, a->nlfd);
	uv_poll_init(&a->loop, &a->ipip_poll, a->ipipfd);
	uv_poll_start(&a->nl_poll, UV_READABLE, on_nl_readable);
	uv_poll_start(&a->ipip_poll, UV_READABLE, on_ipip_readable);
	uv_signal_init(&a->loop, &a->sig_term);
	uv_signal_init(&a->loop, &a->sig_int);
	uv_signal_init(&a->loop, &a->sig_usr1);
	uv_signal_start(&a->sig_term, on_stop, SIGTERM);
	uv_signal_start(&a->sig_int, on_stop, SIGINT);
	uv_signal_start(&a->sig_usr1, on_usr1, SIGUSR1);
	uv_timer_init(&a->loop, &a->stats_timer);
	uv_timer_start(&a->stats_timer, on_stats_timer, 1000, 1000);

	if (a->sonic) {
		struct ag_sonic_cfg sc = {
			.sock = a->sonic, .group = a->group, .loopback = a->loopback.s_addr,
			.decap = &a->decap, .log = sonic_log, .arg = a,
		};

		if (ag_sonic_start(&a->loop, &sc) < 0) {
			ag_sonic_stop();
			uv_walk(&a->loop, close_walk, NULL);
			uv_run(&a->loop, UV_RUN_DEFAULT);
			uv_loop_close(&a->loop);
			ag_release(a);
			return 1;
		}
	}
	write_pidfile(a);
	write_stats(a);
	{
		char an[INET_ADDRSTRLEN], lo[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, &a->analyzer, an, sizeof(an));
		inet_ntop(AF_INET, &a->loopback, lo, sizeof(lo));
		ag_log(a, "started: nflog group %u to %s as erspan type %s, "
		       "ip-in-ip to %s via '%s'", a->group, an,
		       a->erspan == 3 ? "III" : "II", lo, a->tun_name);
	}

	uv_run(&a->loop, UV_RUN_DEFAULT);

	ag_sonic_stop();
	uv_walk(&a->loop, close_walk, NULL);
	uv_run(&a->loop, UV_RUN_DEFAULT);
	uv_loop_close(&a->loop);

	ag_release(a);
	write_stats(a);
	ag_log(a, "stopped: mirrored %llu, decapsulated %llu, dropped %llu",
	       (unsigned long long)a->c.mirrored, (unsigned long long)a->c.decapsulated,
	       (unsigned long long)a->c.dropped);
	remove_pidfile(a);
	if (a->log)
		fclose(a->log);
	return 0;
}
