/* filter.c - analyzer-side BPF filters on the innermost IP packet
 *
 * Expressions use tcpdump syntax and are compiled once by libpcap for the
 * raw-IP link type, then run with pcap_offline_filter() on the inner header
 * the decoder found, so "tcp port 80" means the mirrored packet, not the
 * GRE/ERSPAN envelope it came in.
 *
 * pcap_compile's time grows with about the cube of an expression's terms
 * (300 'or'ed ports: half a second; 2000: two minutes), and no length
 * bounds it for every shape of expression. So it runs in a child process
 * that is killed at HS_FILTER_COMPILE_NS or at a signal (interrupt.h); the
 * program comes back over a pipe.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pcap/pcap.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "filter.h"
#include "interrupt.h"

struct hs_filter {
	int id;
	char *expr;
	struct bpf_program prog;
	uint64_t matches;
};

struct hs_filterset {
	pcap_t *dead;		/* compiles for DLT_RAW; never captures */
	struct hs_filter f[HS_FILTER_MAX];
	size_t n;
	int next_id;
	char *summary;		/* cached hs_filter_summary(), NULL when stale */
};

struct hs_filterset *hs_filterset_new(void)
{
	struct hs_filterset *fs = hs_xcalloc(1, sizeof(*fs));

	fs->dead = pcap_open_dead(DLT_RAW, 65535);
	if (!fs->dead) {
		free(fs);
		return NULL;
	}
	fs->next_id = 1;
	return fs;
}

void hs_filterset_free(struct hs_filterset *fs)
{
	if (!fs)
		return;
	for (size_t i = 0; i < fs->n; i++) {
		pcap_freecode(&fs->f[i].prog);
		free(fs->f[i].expr);
	}
	free(fs->summary);
	pcap_close(fs->dead);
	free(fs);
}

/* the child: compile, write the status, then the program or the error */
static void __attribute__((noreturn)) compile_child(pcap_t *dead, const char *expr, int fd)
{
	struct bpf_program prog;
	int32_t head[2];
	const char *msg;
	const char *p;
	size_t left;

	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	if (pcap_compile(dead, &prog, expr, 1, PCAP_NETMASK_UNKNOWN) < 0) {
		msg = pcap_geterr(dead);
		head[0] = -1;
		head[1] = (int32_t)strlen(msg);
		p = msg;
	} else {
		head[0] = 0;
		head[1] = (int32_t)prog.bf_len;
		p = (const char *)prog.bf_insns;
	}
	left = head[0] == 0 ? (size_t)head[1] * sizeof(struct bpf_insn) : (size_t)head[1];
	if (write(fd, head, sizeof(head)) != (ssize_t)sizeof(head))
		_exit(1);
	while (left > 0) {
		ssize_t n = write(fd, p, left);
		if (n <= 0)
			_exit(1);
		p += n;
		left -= (size_t)n;
	}
	_exit(0);
}

/* read what the child wrote until it closes the pipe: 0, or -1 at the
 * deadline or a signal (err says which) */
static int compile_read(int fd, const char *expr, char **buf, size_t *len, char *err,
			size_t errlen)
{
	uint64_t end = hs_mono_ns() + HS_FILTER_COMPILE_NS;
	size_t cap = 4096;
	char clip[64];

	*buf = hs_xcalloc(1, cap);
	*len = 0;
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		uint64_t now = hs_mono_ns();
		int rc;

		if (hs_interrupted()) {
			snprintf(err, errlen, "filter not added: interrupted while compiling");
			return -1;
		}
		if (now >= end) {
			snprintf(err, errlen, "filter '%s' takes more than %llus to compile "
				 "(too many terms): split it into smaller filters",
				 hs_clip(expr, 40, clip, sizeof(clip)),
				 (unsigned long long)(HS_FILTER_COMPILE_NS / HS_NS_PER_SEC));
			return -1;
		}
		/* a tenth of a second at most between looks at the flag */
		rc = poll(&pfd, 1, 100);
		if (rc < 0 && errno != EINTR) {
			snprintf(err, errlen, "cannot compile filter: poll: %s", strerror(errno));
			return -1;
		}
		if (rc <= 0)
			continue;
		if (*len == cap) {
			cap *= 2;
			char *nb = realloc(*buf, cap);
			if (!nb) {
				snprintf(err, errlen, "cannot compile filter: out of memory");
				return -1;
			}
			*buf = nb;
		}
		ssize_t n = read(fd, *buf + *len, cap - *len);
		if (n < 0 && errno != EINTR) {
			snprintf(err, errlen, "cannot compile filter: read: %s", strerror(errno));
			return -1;
		}
		if (n == 0)
			return 0;
		if (n > 0)
			*len += (size_t)n;
	}
}

/* pcap_compile in a child, bounded in time; 0, or -1 with err set */
static int compile(pcap_t *dead, const char *expr, struct bpf_program *prog, char *err,
		   size_t errlen)
{
	int fds[2], status, rc;
	char *buf = NULL;
	size_t len = 0;
	int32_t head[2];
	char clip[256];
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return hs_errf(err, errlen, "cannot compile filter: pipe: %s", strerror(errno));
	fflush(NULL);		/* the child leaves by _exit: nothing of ours twice */
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return hs_errf(err, errlen, "cannot compile filter: fork: %s", strerror(errno));
	}
	if (pid == 0) {
		close(fds[0]);
		compile_child(dead, expr, fds[1]);
	}
	close(fds[1]);
	rc = compile_read(fds[0], expr, &buf, &len, err, errlen);
	close(fds[0]);
	if (rc < 0)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (rc == 0 && (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || len < sizeof(head)))
		rc = hs_errf(err, errlen, "cannot compile filter '%s': its compiler failed",
			     hs_clip(expr, 40, clip, sizeof(clip)));
	if (rc == 0) {
		memcpy(head, buf, sizeof(head));
		size_t body = len - sizeof(head);
		if (head[0] < 0) {
			snprintf(err, errlen, "bad filter '%s': %.*s",
				 hs_clip(expr, 200, clip, sizeof(clip)), (int)body,
				 buf + sizeof(head));
			rc = -1;
		} else if (head[1] <= 0 || body != (size_t)head[1] * sizeof(struct bpf_insn)) {
			rc = hs_errf(err, errlen, "cannot compile filter '%s': its compiler failed",
				     hs_clip(expr, 40, clip, sizeof(clip)));
		} else {
			prog->bf_len = (u_int)head[1];
			prog->bf_insns = malloc(body);
			if (!prog->bf_insns) {
				free(buf);
				return hs_errf(err, errlen, "cannot compile filter: out of memory");
			}
			memcpy(prog->bf_insns, buf + sizeof(head), body);
		}
	}
	free(buf);
	return rc;
}

int hs_filter_add(struct hs_filterset *fs, const char *expr, char *err, size_t errlen)
{
	struct bpf_program prog;

	if (!expr || !*expr) {
		snprintf(err, errlen, "empty filter expression");
		return -1;
	}
	if (fs->n >= HS_FILTER_MAX) {
		snprintf(err, errlen, "too many filters (at most %d)", HS_FILTER_MAX);
		return -1;
	}
	if (compile(fs->dead, expr, &prog, err, errlen) < 0)
		return -1;
	struct hs_filter *f = &fs->f[fs->n++];
	f->id = fs->next_id++;
	f->expr = hs_xstrdup(expr);
	f->prog = prog;
	f->matches = 0;
	free(fs->summary);
	fs->summary = NULL;
	return f->id;
}

int hs_filter_del(struct hs_filterset *fs, int id)
{
	for (size_t i = 0; i < fs->n; i++) {
		if (fs->f[i].id != id)
			continue;
		pcap_freecode(&fs->f[i].prog);
		free(fs->f[i].expr);
		memmove(&fs->f[i], &fs->f[i + 1], (fs->n - i - 1) * sizeof(fs->f[0]));
		fs->n--;
		free(fs->summary);
		fs->summary = NULL;
		return 0;
	}
	return -1;
}

size_t hs_filter_count(const struct hs_filterset *fs)
{
	return fs->n;
}

bool hs_filter_at(const struct hs_filterset *fs, size_t i, int *id, const char **expr,
		  uint64_t *matches)
{
	if (i >= fs->n)
		return false;
	if (id)
		*id = fs->f[i].id;
	if (expr)
		*expr = fs->f[i].expr;
	if (matches)
		*matches = __atomic_load_n(&fs->f[i].matches, __ATOMIC_RELAXED);
	return true;
}

const char *hs_filter_summary(struct hs_filterset *fs)
{
	if (fs->n == 0)
		return "";
	if (fs->summary)
		return fs->summary;
	if (fs->n == 1) {
		fs->summary = hs_xstrdup(fs->f[0].expr);
		return fs->summary;
	}
	/* "(a) or (b)": still one valid expression */
	size_t len = 1;
	for (size_t i = 0; i < fs->n; i++)
		len += strlen(fs->f[i].expr) + 6;
	char *s = hs_xcalloc(1, len), *p = s;
	for (size_t i = 0; i < fs->n; i++)
		p += sprintf(p, "%s(%s)", i ? " or " : "", fs->f[i].expr);
	fs->summary = s;
	return s;
}

/* out of line: with no filter set, hs_filter_match is a test and a return
 * for every copy, without this loop's register saves */
static __attribute__((noinline)) bool match_set(struct hs_filterset *fs, const struct hs_pkt *p,
						bool *matched)
{
	struct pcap_pkthdr h;
	bool any = false;

	if (!(p->have & HS_HAVE_IP) || !p->l3)
		return false;
	memset(&h, 0, sizeof(h));
	h.caplen = p->l3_caplen;
	h.len = p->len > p->l3_caplen ? p->len : p->l3_caplen;
	for (size_t i = 0; i < fs->n; i++) {
		if (pcap_offline_filter(&fs->f[i].prog, &h, p->l3)) {
			/* workers.h: several threads may match at once */
			__atomic_fetch_add(&fs->f[i].matches, 1, __ATOMIC_RELAXED);
			any = true;
		}
	}
	if (matched)
		*matched = any;
	return any;
}

bool hs_filter_match(struct hs_filterset *fs, const struct hs_pkt *p, bool *matched)
{
	if (matched)
		*matched = false;
	if (fs->n == 0)
		return true;
	return match_set(fs, p, matched);
}
