/* attach.c - a console attached to hopscope serve
 *
 * The console is the same (libedit, runbooks, -c, --json, exit statuses):
 * only its lines run in the daemon. Each line goes out as a frame
 * (proto.h) and is pending until the daemon's 'done'; what the daemon
 * prints comes back as frames and is written here, errors after the
 * runbook's FILE:LINE as a local line's would be. 'quit' and 'source'
 * run here: they are the console's. Ctrl-C sends an interrupt. When the
 * daemon goes away the console says so in one line and ends, status 1.
 * Over TCP the same frames go through TLS, on a socket of the console's
 * own: its handshake and the daemon's hello are awaited before the loop
 * runs (with a deadline), then a uv_poll on the socket reads records;
 * the secret, if any, goes first, once TLS is up.
 *
 * 'watch' runs here too, on the daemon's feed: while it is up the console
 * keeps the traces the daemon sends in a ring and its last status, and
 * the view reads those (watch.h, struct hs_wfeed). The topology the
 * daemon sends after hello, and again when it changes, is the console's
 * ctx->topo: the view draws the links from it and TAB completes switch
 * names from it. Trace names TAB asks of the daemon (NAMES), waiting for
 * the answer a short while; the Links pane's load is what the daemon last
 * sent with its status (LOAD). A daemon that takes neither (an older one)
 * is asked neither: its trace names are not completed, its load not shown.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "cmd.h"
#include "complete.h"
#include "console.h"
#include "fabric.h"
#include "proto.h"
#include "runner.h"
#include "serve.h"
#include "console/tls.h"
#include "ssl.h"
#include "watch.h"

#define HELLO_WAIT_MS	10000
#define NAMES_WAIT_MS	1000		/* TAB waits this long for the daemon's names */
#define FEED_RING	8192		/* traces of the feed kept, as the view reads at most */

static struct attach {
	struct hs_ctx *ctx;
	char *path;
	uv_pipe_t pipe;
	bool open;
	bool pending;			/* a line was sent, its 'done' has not come */
	bool lost;
	bool err_bol;			/* the daemon's error output is at a line's start */
	char bye[128];			/* the daemon's goodbye, if it said one */
	struct hs_proto_rd rd;
	int fd;
	SSL_CTX *sslctx;		/* over TCP */
	SSL *ssl;
	uv_poll_t poll;			/* over TCP: the socket is readable */
	char tlserr[160];		/* what TLS said last */
	bool fed;			/* the watch is up: the daemon feeds it */
	struct hs_trace *ring;		/* FEED_RING traces it sent, the newest at next - 1 */
	size_t ring_n, ring_next;
	struct hs_feed_status st;	/* the last status it sent */
	uint8_t dflags;			/* the optional frames the daemon's hello kept */
	char (*load)[HS_LOAD_TEXT];	/* the links' load it sent last, 2 a link of ctx->topo */
	uint32_t names_seq;		/* the last names asked */
	struct hs_cands *names;		/* ... for these candidates, until they come */
	bool asking;			/* TAB waits for names: the end waits for it */
	char ended[160];		/* the connection ended while TAB waited: why */
	uv_timer_t end_timer;		/* ... said from the loop, once TAB is done */
	bool end_timer_init;
} at;

/* ---- the connection's bytes: a unix socket's, or TLS's ----------------------------- */

/* like send(2) and recv(2) on a non-blocking socket: -1 with EAGAIN when
 * TLS wants the socket to be ready first; EPROTO with at.tlserr */
/* what SSL_write or SSL_read's rc says, as send(2) or recv(2) would */
static ssize_t tls_result(int rc)
{
	if (rc > 0)
		return rc;
	switch (SSL_get_error(at.ssl, rc)) {
	case SSL_ERROR_WANT_READ:
	case SSL_ERROR_WANT_WRITE:
		errno = EAGAIN;
		return -1;
	case SSL_ERROR_ZERO_RETURN:
		return 0;
	default:
		hs_tls_error(at.tlserr, sizeof(at.tlserr));
		/* the daemon closed without TLS's goodbye: it went, as a socket's EOF */
		if (!strcmp(at.tlserr, "unexpected eof while reading"))
			return 0;
		errno = EPROTO;
		return -1;
	}
}

static ssize_t conn_send(int fd, const void *p, size_t n)
{
	if (!at.ssl)
		return send(fd, p, n, MSG_NOSIGNAL);
	ERR_clear_error();
	return tls_result(SSL_write(at.ssl, p, (int)n));
}

static ssize_t conn_recv(int fd, void *p, size_t n)
{
	if (!at.ssl)
		return read(fd, p, n);
	ERR_clear_error();
	return tls_result(SSL_read(at.ssl, p, (int)n));
}

static const char *conn_error(int e)
{
	return e == EPROTO && at.ssl ? at.tlserr : strerror(e);
}

static int connect_to(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

const char *hs_serve_socket(void)
{
	const char *env = getenv("HOPSCOPE_SOCKET");

	return env && *env ? env : HS_SERVE_SOCKET;
}

bool hs_attach_socket_there(const char *path)
{
	int fd = connect_to(path);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
	while (n > 0) {
		ssize_t w = conn_send(fd, p, n);
		if (w < 0 && (errno == EINTR || errno == EAGAIN)) {
			struct pollfd pf = { .fd = fd, .events = POLLIN | POLLOUT };
			poll(&pf, 1, 100);
			continue;
		}
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* ---- frames ------------------------------------------------------------------- */

static void lost(const char *why);

/* a frame to the daemon, written at once: they are short (a line, an
 * interrupt). MSG_NOSIGNAL: a daemon gone is EPIPE here, not SIGPIPE. */
static void send_frame(uint8_t type, const void *data, size_t len)
{
	uint8_t *b;
	size_t off = 0;
	uv_os_fd_t fd = -1;

	if (!at.open || at.lost || len > HS_PROTO_MAX - 1)
		return;
	if (at.ssl)
		fd = at.fd;
	else if (uv_fileno((uv_handle_t *)&at.pipe, &fd) < 0)
		return;
	b = hs_xcalloc(1, HS_PROTO_HDR + len);
	hs_frame_header(b, type, len);
	if (len)
		memcpy(b + HS_PROTO_HDR, data, len);
	while (off < HS_PROTO_HDR + len) {
		ssize_t w = conn_send(fd, b + off, HS_PROTO_HDR + len - off);
		if (w > 0) {
			off += (size_t)w;
		} else if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
			struct pollfd p = { .fd = fd, .events = POLLIN | POLLOUT };
			poll(&p, 1, 100);
		} else {
			lost(w == 0 ? "the connection closed" : conn_error(errno));
			break;
		}
	}
	free(b);
}

/* the daemon's error output: each line after the runbook's FILE:LINE */
static void put_err(const uint8_t *p, size_t n)
{
	FILE *fp = at.ctx->out->err ? at.ctx->out->err : stderr;

	fflush(at.ctx->out->fp);
	while (n > 0) {
		const uint8_t *nl = memchr(p, '\n', n);
		size_t k = nl ? (size_t)(nl - p) + 1 : n;
		if (at.err_bol)
			fputs(at.ctx->out->where, fp);
		fwrite(p, 1, k, fp);
		at.err_bol = nl != NULL;
		p += k;
		n -= k;
	}
	fflush(fp);
}

static void end_later(uv_timer_t *t)
{
	(void)t;
	lost(at.ended);
}

static void lost(const char *why)
{
	struct hs_ctx *ctx = at.ctx;

	if (at.lost)
		return;
	/* inside TAB's wait, in the line editor: said once it has returned */
	if (at.asking) {
		if (!at.ended[0] && why != at.ended)
			snprintf(at.ended, sizeof(at.ended), "%s", why);
		return;
	}
	at.lost = true;
	if (at.ssl)
		uv_poll_stop(&at.poll);
	else
		uv_read_stop((uv_stream_t *)&at.pipe);
	/* the terminal back from the view first: the message is the prompt's */
	if (hs_watch_active(ctx) && ctx->cancel)
		ctx->cancel(ctx);
	/* at the prompt: the message on a line of its own */
	if (ctx->interactive && !hs_runner_busy(ctx))
		fputs("\n", ctx->out->fp);
	fflush(ctx->out->fp);
	ctx->out->where[0] = '\0';
	out_err(ctx->out, "lost the daemon at '%s': %s", at.path, at.bye[0] ? at.bye : why);
	if (ctx->exit_status == 0)
		ctx->exit_status = 1;
	ctx->cancel = NULL;
	ctx->quit = true;
	hs_console_end(ctx);
}

/* ---- the feed -------------------------------------------------------------------- */

/* a new topology: the console's; hops of switches it does not have are unknown */
static void on_topo(const struct hs_frame *f)
{
	struct hs_ctx *ctx = at.ctx;
	struct hs_topo *t = NULL, *old = ctx->topo;
	char err[256], msg[300];

	if (f->len) {
		char *text;
		if (memchr(f->data, '\0', f->len)) {
			lost("its topology has a NUL byte");
			return;
		}
		text = hs_xcalloc(1, (size_t)f->len + 1);
		memcpy(text, f->data, f->len);
		t = hs_topo_parse(text, "topology", err, sizeof(err));
		free(text);
		if (!t) {
			snprintf(msg, sizeof(msg), "its topology: %s", err);
			lost(msg);
			return;
		}
	}
	ctx->topo = t;
	free(at.load);		/* of the links of the topology before */
	at.load = NULL;
	for (size_t i = 0; i < at.ring_n; i++) {
		struct hs_trace *tr = &at.ring[i];
		int nsw = t ? t->nsw : 0;
		if (tr->last_sw >= nsw)
			tr->last_sw = -1;
		for (int k = 0; k < tr->n_next; k++)
			if (tr->expected_next[k] >= nsw)
				tr->expected_next[k] = -1;
		for (int k = 0; k < tr->nhops; k++)
			if (tr->hops[k].sw >= nsw)
				tr->hops[k].sw = -1;
	}
	hs_watch_fed(ctx, true);
	if (old)
		hs_topo_free(old);
}

static void on_feed(const struct hs_frame *f)
{
	struct hs_ctx *ctx = at.ctx;
	char line[HS_WEVENT_LEN];
	size_t n;

	if (!at.fed)
		return;		/* sent before the daemon heard the view left */
	switch (f->type) {
	case HS_FR_TRACE: {
		char names[HS_FEED_ANALYZER_MAX];
		struct hs_trace *t = &at.ring[at.ring_next];
		if (f->len == 0) {
			at.ring_n = at.ring_next = 0;	/* the traces before are gone */
			break;
		}
		if (hs_feed_trace_unpack(f->data, f->len, ctx->topo ? ctx->topo->nsw : 0, t,
					 at.dflags & HS_HELLO_ANALYZER ? names : NULL,
					 sizeof(names)) < 0) {
			lost("it sent a trace that is not one");
			return;
		}
		if (at.dflags & HS_HELLO_ANALYZER)
			t->analyzer = hs_fabric_analyzers_id(names);
		at.ring_next = (at.ring_next + 1) % FEED_RING;
		if (at.ring_n < FEED_RING)
			at.ring_n++;
		break;
	}
	case HS_FR_STATUS:
		if (hs_feed_status_unpack(f->data, f->len, &at.st) < 0) {
			lost("it sent a status that is not one");
			return;
		}
		break;
	case HS_FR_LOAD: {
		int nl = ctx->topo ? ctx->topo->nlinks : 0;
		if (nl <= 0)
			break;
		if (!at.load)
			at.load = hs_xcalloc(2 * (size_t)nl, sizeof(*at.load));
		/* 1: of a topology other than the console's: it is on its way */
		if (hs_feed_load_unpack(f->data, f->len, nl, at.load) < 0) {
			lost("it sent a load that is not one");
			return;
		}
		break;
	}
	case HS_FR_EVENT:
		n = f->len < sizeof(line) - 1 ? f->len : sizeof(line) - 1;
		for (size_t i = 0; i < n; i++)
			line[i] = f->data[i] < 0x20 || f->data[i] > 0x7e ? '?' : (char)f->data[i];
		line[n] = '\0';
		hs_watch_event(ctx, line);
		break;
	}
	hs_watch_fed(ctx, false);
}

static void send_frame(uint8_t type, const void *data, size_t len);

static void feed_start(struct hs_ctx *ctx)
{
	(void)ctx;
	if (!at.ring)
		at.ring = hs_xcalloc(FEED_RING, sizeof(*at.ring));
	/* the daemon sends its recent traces first */
	at.ring_n = at.ring_next = 0;
	memset(&at.st, 0, sizeof(at.st));
	at.fed = true;
	send_frame(HS_FR_WATCH, NULL, 0);
}

static void feed_stop(struct hs_ctx *ctx)
{
	(void)ctx;
	at.fed = false;
	send_frame(HS_FR_UNWATCH, NULL, 0);
}

static size_t feed_recent(struct hs_ctx *ctx, const struct hs_trace **out, size_t max)
{
	size_t n = at.ring_n < max ? at.ring_n : max;

	(void)ctx;
	for (size_t i = 0; i < n; i++)
		out[i] = &at.ring[(at.ring_next + FEED_RING - 1 - i) % FEED_RING];
	return n;
}

static void feed_status(struct hs_ctx *ctx, struct hs_feed_status *st)
{
	(void)ctx;
	*st = at.st;
}

/* the load of link from switch from, as the daemon sent it */
static void feed_load(struct hs_ctx *ctx, int link, int from, char *buf, size_t len)
{
	buf[0] = '\0';
	if (!at.load || !ctx->topo || link < 0 || link >= ctx->topo->nlinks)
		return;
	snprintf(buf, len, "%s", at.load[2 * link + (ctx->topo->links[link].a == from ? 0 : 1)]);
}

static int exec_line(struct hs_ctx *ctx, const char *line);

static const struct hs_wfeed feed = {
	.start = feed_start,
	.stop = feed_stop,
	.recent = feed_recent,
	.status = feed_status,
	.load = feed_load,
	.run = exec_line,
};

static void names_add(void *arg, const char *name)
{
	hs_cands_add(arg, name);
}

/* the daemon's answer to TAB: one it waits for, or a late one, dropped */
static void on_names(const struct hs_frame *f)
{
	uint32_t seq = 0;

	if (hs_names_unpack(f->data, f->len, &seq, NULL, NULL) < 0) {
		lost("it sent names that are not any");
		return;
	}
	if (at.names && seq == at.names_seq) {
		hs_names_unpack(f->data, f->len, &seq, names_add, at.names);
		at.names = NULL;
	}
}

static void on_frame(const struct hs_frame *f)
{
	struct hs_ctx *ctx = at.ctx;

	switch (f->type) {
	case HS_FR_TOPO:
		on_topo(f);
		break;
	case HS_FR_TRACE:
	case HS_FR_STATUS:
	case HS_FR_EVENT:
	case HS_FR_LOAD:
		on_feed(f);
		break;
	case HS_FR_NAMES:
		on_names(f);
		break;
	case HS_FR_OUT:
		fwrite(f->data, 1, f->len, ctx->out->fp);
		break;
	case HS_FR_ERR:
		put_err(f->data, f->len);
		break;
	case HS_FR_DONE:
		if (!at.pending || f->len != 1) {
			lost("it answered a line not sent");
			return;
		}
		at.pending = false;
		fflush(ctx->out->fp);
		ctx->cancel = NULL;
		hs_cmd_finish(ctx, f->data[0] ? HS_CMD_FAIL : HS_CMD_OK);
		break;
	case HS_FR_BYE: {
		size_t n = f->len < sizeof(at.bye) - 1 ? f->len : sizeof(at.bye) - 1;
		memcpy(at.bye, f->data, n);
		at.bye[n] = '\0';
		for (size_t i = 0; i < n; i++)
			if (at.bye[i] < 0x20 || at.bye[i] > 0x7e)
				at.bye[i] = '?';
		if (!at.bye[0])
			snprintf(at.bye, sizeof(at.bye), "it said goodbye");
		lost(at.bye);
		break;
	}
	default:
		lost("it sent a frame a console does not take");
		break;
	}
}

static void read_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
	static char space[65536];

	(void)h;
	(void)hint;
	buf->base = space;
	buf->len = sizeof(space);
}

/* the frames read and not taken yet */
static void take_frames(void)
{
	struct hs_frame f;
	char err[128];
	int rc;

	while (!at.lost && !at.ended[0] &&
	       (rc = hs_proto_rd_next(&at.rd, &f, err, sizeof(err))) != 0) {
		if (rc < 0) {
			lost(err);
			return;
		}
		on_frame(&f);
	}
}

static void got(const void *data, size_t n)
{
	hs_proto_rd_feed(&at.rd, data, n);
	take_frames();
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
	(void)s;
	/* a daemon that ends before it read our last frame resets the
	 * socket rather than end it: closed all the same */
	if (n < 0) {
		lost(n == UV_EOF || n == UV_ECONNRESET ? "the connection closed" :
		     uv_strerror((int)n));
		return;
	}
	got(buf->base, (size_t)n);
}

/* over TCP: TLS's records have come; all the plaintext they hold */
static void on_poll(uv_poll_t *h, int status, int events)
{
	char buf[16384];
	ssize_t n;

	(void)h;
	(void)events;
	if (status < 0) {
		lost(uv_strerror(status));
		return;
	}
	while (!at.lost && (n = conn_recv(at.fd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno != EAGAIN && errno != EINTR)
				lost(conn_error(errno));
			return;
		}
		got(buf, (size_t)n);
	}
	if (!at.lost)
		lost("the connection closed");
}

/* ---- lines ---------------------------------------------------------------------- */

static void cancel_line(struct hs_ctx *ctx)
{
	send_frame(HS_FR_INTR, NULL, 0);
	/* pending still: the daemon's 'done' ends the line; Ctrl-C again asks again */
	ctx->cancel = cancel_line;
}

/* the console's own verbs run here */
static bool local_verb(const char *line)
{
	char *buf = hs_xstrdup(line), *argv[HS_MAX_WORDS + 1];
	int col, argc = hs_split_words(buf, argv, HS_MAX_WORDS, &col);
	const struct hs_cmd *c = argc > 0 ? hs_cmd_lookup(argv[0], NULL) : NULL;
	bool local = c && (strcmp(c->name, "quit") == 0 || strcmp(c->name, "source") == 0 ||
			   strcmp(c->name, "watch") == 0);

	free(buf);
	return local;
}

static int exec_line(struct hs_ctx *ctx, const char *line)
{
	size_t n = strlen(line);

	if (local_verb(line))
		return hs_run_line(ctx, line);
	if (at.lost)
		return out_err(ctx->out, "lost the daemon at '%s'", at.path);
	if (n > HS_PROTO_MAX - 1)
		return out_err(ctx->out, "a line of %zu bytes is longer than the daemon takes (%u)",
			       n, HS_PROTO_MAX - 1);
	send_frame(HS_FR_LINE, line, n);
	at.pending = true;
	at.err_bol = true;
	ctx->cancel = cancel_line;
	return HS_CMD_PENDING;
}

static const struct hs_runner_front front = {
	.exec = exec_line,
};

/* ---- names for TAB --------------------------------------------------------------- */

/* the daemon's trace names WORD begins, into c: asked, and awaited here
 * (TAB runs inside the line editor) for at most NAMES_WAIT_MS; what else
 * comes meanwhile is taken as it would be */
static void ask_names(struct hs_ctx *ctx, bool stored, const char *word, struct hs_cands *c)
{
	uint8_t q[5 + HS_NAMES_WORD_MAX];
	uint64_t deadline = hs_mono_ns() + (uint64_t)NAMES_WAIT_MS * 1000000ULL;
	uv_os_fd_t fd = at.fd;

	(void)ctx;
	if (!at.open || at.lost || at.ended[0] || !(at.dflags & HS_HELLO_NAMES) ||
	    (!at.ssl && uv_fileno((uv_handle_t *)&at.pipe, &fd) < 0))
		return;
	at.names = c;
	at.asking = true;
	send_frame(HS_FR_NAMES, q, hs_names_ask_pack(q, ++at.names_seq, stored, word));
	while (at.names && !at.lost && !at.ended[0]) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		uint64_t now = hs_mono_ns();
		char buf[16384];
		ssize_t n;
		int rc;

		if (now >= deadline)
			break;
		rc = at.ssl && SSL_pending(at.ssl) ? 1 :
		     poll(&p, 1, (int)((deadline - now) / 1000000ULL) + 1);
		if (rc < 0 && errno != EINTR)
			break;
		if (rc <= 0)
			continue;
		n = conn_recv(fd, buf, sizeof(buf));
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0) {
			lost(n == 0 ? "the connection closed" : conn_error(errno));
			break;
		}
		got(buf, (size_t)n);
	}
	at.asking = false;
	at.names = NULL;	/* an answer after the wait is dropped */
	if (at.ended[0])
		uv_timer_start(&at.end_timer, end_later, 0, 0);
}

/* ---- the connection --------------------------------------------------------------- */

/* over TCP with a secret: it goes first, once TLS is up; 0, or -1 printed */
static int send_secret(struct hs_ctx *ctx, int fd, const char *path)
{
	uint8_t b[HS_PROTO_HDR + HS_SECRET_MAX + 2];
	char err[512];
	int n = hs_tls_read_secret(path, (char *)b + HS_PROTO_HDR, sizeof(b) - HS_PROTO_HDR, err,
				   sizeof(err));
	int rc;

	if (n < 0)
		return out_err(ctx->out, "cannot attach to '%s': %s", at.path, err);
	hs_frame_header(b, HS_FR_AUTH, (size_t)n);
	rc = write_all(fd, b, HS_PROTO_HDR + (size_t)n);
	OPENSSL_cleanse(b, sizeof(b));
	return rc < 0 ? out_err(ctx->out, "cannot attach to '%s': %s", at.path, conn_error(errno)) : 0;
}

/* the daemon's hello: 0, or -1 with the error printed */
static int handshake(struct hs_ctx *ctx, int fd, uint64_t deadline)
{
	uint8_t hello[128], buf[4096];
	uint8_t want = (ctx->set.json ? HS_HELLO_JSON : 0) | HS_HELLO_NAMES | HS_HELLO_LOAD |
		       HS_HELLO_ANALYZER;
	size_t n = hs_hello_make(hello + HS_PROTO_HDR, sizeof(hello) - HS_PROTO_HDR, want, VERSION);
	bool said = false;

	hs_frame_header(hello, HS_FR_HELLO, n);
	if (write_all(fd, hello, HS_PROTO_HDR + n) < 0)
		return out_err(ctx->out, "cannot attach to '%s': %s", at.path, conn_error(errno));
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		uint64_t now = hs_mono_ns();
		struct hs_frame f;
		char err[128], version[64];
		uint8_t proto = 0, flags = 0;
		ssize_t r;
		int rc;

		while ((rc = hs_proto_rd_next(&at.rd, &f, err, sizeof(err))) == 1) {
			if (f.type == HS_FR_ERR) {
				at.err_bol = true;
				put_err(f.data, f.len);
				said = true;
			} else if (f.type == HS_FR_HELLO &&
				   hs_hello_parse(&f, &proto, &flags, version, sizeof(version)) == 0) {
				/* of the optional frames, those the console asked for */
				at.dflags = flags & (HS_HELLO_NAMES | HS_HELLO_LOAD |
						     HS_HELLO_ANALYZER);
				return 0;
			} else if (f.type == HS_FR_BYE) {
				return said ? -1 : out_err(ctx->out, "cannot attach to '%s': the daemon "
							   "refused the console", at.path);
			} else {
				return out_err(ctx->out, "cannot attach to '%s': the daemon answered "
					       "with a %s frame", at.path, hs_frame_name(f.type));
			}
		}
		if (rc < 0)
			return out_err(ctx->out, "cannot attach to '%s': %s", at.path, err);
		if (now >= deadline)
			return out_err(ctx->out, "cannot attach to '%s': no answer from the daemon in "
				       "%d s", at.path, HELLO_WAIT_MS / 1000);
		/* what TLS holds already needs no wait */
		rc = at.ssl && SSL_pending(at.ssl) ? 1 :
		     poll(&p, 1, (int)((deadline - now) / 1000000ULL) + 1);
		if (rc < 0 && errno != EINTR)
			return out_err(ctx->out, "cannot attach to '%s': %s", at.path, strerror(errno));
		if (rc <= 0)
			continue;
		r = conn_recv(fd, buf, sizeof(buf));
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r < 0 && !said)
			return out_err(ctx->out, "cannot attach to '%s': %s", at.path, conn_error(errno));
		if (r <= 0)
			return said ? -1 : out_err(ctx->out, "cannot attach to '%s': the daemon closed "
						   "the connection", at.path);
		hs_proto_rd_feed(&at.rd, buf, (size_t)r);
	}
}

bool hs_attach_is_tcp(const char *where)
{
	return !strchr(where, '/') && strchr(where, ':');
}

/* HOST:PORT, [V6]:PORT: a connected TCP socket, non-blocking; -1 with the
 * error printed */
static int connect_tcp(struct hs_ctx *ctx, const char *where, char *host, size_t hostlen)
{
	const char *colon = strrchr(where, ':');
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *ai, *a;
	int fd = -1, rc, e = 0;

	if (where[0] == '[' && colon > where + 1 && colon[-1] == ']')
		snprintf(host, hostlen, "%.*s", (int)(colon - where - 2), where + 1);
	else
		snprintf(host, hostlen, "%.*s", (int)(colon - where), where);
	if (!host[0] || !colon[1])
		return out_err(ctx->out, "cannot attach to '%s': not a HOST:PORT", where);
	rc = getaddrinfo(host, colon + 1, &hints, &ai);
	if (rc != 0)
		return out_err(ctx->out, "cannot attach to '%s': %s", where, gai_strerror(rc));
	for (a = ai; a && fd < 0; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
		if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) < 0) {
			e = errno;
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(ai);
	if (fd < 0)
		return out_err(ctx->out, "cannot attach to '%s': %s (is 'hopscope serve' listening "
			       "there?)", where, strerror(e ? e : errno));
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	return fd;
}

/* TLS up on fd, the daemon's certificate checked against host; 0, or -1 printed */
static int tls_start(struct hs_ctx *ctx, int fd, const char *host,
		     const struct hs_attach_tls *tls, uint64_t deadline)
{
	char err[512];
	struct in6_addr a6;
	struct in_addr a4;
	bool ip = inet_pton(AF_INET, host, &a4) == 1 || inet_pton(AF_INET6, host, &a6) == 1;

	/* a daemon gone is EPIPE from TLS's writes, not SIGPIPE */
	signal(SIGPIPE, SIG_IGN);
	at.sslctx = hs_tls_client_ctx(tls->ca, tls->cert, tls->key, err, sizeof(err));
	if (!at.sslctx)
		return out_err(ctx->out, "cannot attach to '%s': %s", at.path, err);
	at.ssl = SSL_new(at.sslctx);
	if (!at.ssl || SSL_set_fd(at.ssl, fd) != 1)
		abort();
	if (ip) {
		X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(at.ssl), host);
	} else {
		SSL_set_tlsext_host_name(at.ssl, host);
		SSL_set1_host(at.ssl, host);
	}
	for (;;) {
		uint64_t now = hs_mono_ns();
		int rc, e;
		struct pollfd p = { .fd = fd };

		ERR_clear_error();
		rc = SSL_connect(at.ssl);
		if (rc == 1)
			return 0;
		e = SSL_get_error(at.ssl, rc);
		if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
			long v = SSL_get_verify_result(at.ssl);
			if (v != X509_V_OK)
				return out_err(ctx->out, "cannot attach to '%s': the daemon's certificate: "
					       "%s", at.path, X509_verify_cert_error_string(v));
			hs_tls_error(at.tlserr, sizeof(at.tlserr));
			return out_err(ctx->out, "cannot attach to '%s': TLS handshake failed: %s",
				       at.path, at.tlserr);
		}
		if (now >= deadline)
			return out_err(ctx->out, "cannot attach to '%s': no answer from the daemon in "
				       "%d s", at.path, HELLO_WAIT_MS / 1000);
		p.events = e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
		poll(&p, 1, (int)((deadline - now) / 1000000ULL) + 1);
	}
}

/* the connection is up and the hello answered, over either transport: the
 * daemon runs the console's lines, feeds its watch and completes its words */
static void attached(struct hs_ctx *ctx)
{
	at.open = true;
	hs_runner_set_front(ctx, &front);
	ctx->watch.feed = &feed;
	ctx->names = ask_names;
	take_frames();	/* what came with the hello (the topology) */
}

int hs_attach_open(struct hs_ctx *ctx, const char *path, const struct hs_attach_tls *tls)
{
	uint64_t deadline = hs_mono_ns() + (uint64_t)HELLO_WAIT_MS * 1000000ULL;
	char host[256];
	int fd, rc;

	memset(&at, 0, sizeof(at));
	at.ctx = ctx;
	at.fd = -1;
	uv_timer_init(ctx->loop, &at.end_timer);
	at.end_timer_init = true;
	at.path = hs_xstrdup(path);
	hs_proto_rd_init(&at.rd);
	if (hs_attach_is_tcp(path)) {
		char msg[512];
		/* a secret others may read is theirs too: nothing is sent with it */
		if (tls->secret && hs_tls_file_private(tls->secret, "secret", msg, sizeof(msg)) < 0)
			return out_err(ctx->out, "cannot attach to '%s': %s", path, msg);
		if ((fd = connect_tcp(ctx, path, host, sizeof(host))) < 0)
			return -1;
		at.fd = fd;
		if (tls_start(ctx, fd, host, tls, deadline) < 0 ||
		    (tls->secret && send_secret(ctx, fd, tls->secret) < 0) ||
		    handshake(ctx, fd, deadline) < 0)
			return -1;
		rc = uv_poll_init(ctx->loop, &at.poll, fd);
		if (rc == 0)
			rc = uv_poll_start(&at.poll, UV_READABLE, on_poll);
		if (rc < 0)
			return out_err(ctx->out, "cannot attach to '%s': %s", path, uv_strerror(rc));
		attached(ctx);
		/* what TLS read with the hello is there already */
		on_poll(&at.poll, 0, UV_READABLE);
		return 0;
	}
	fd = connect_to(path);
	if (fd < 0)
		return out_err(ctx->out, "cannot attach to '%s': %s (is 'hopscope serve' running?)",
			       path, strerror(errno));
	if (handshake(ctx, fd, deadline) < 0) {
		close(fd);
		return -1;
	}
	rc = uv_pipe_init(ctx->loop, &at.pipe, 0);
	if (rc == 0)
		rc = uv_pipe_open(&at.pipe, fd);
	if (rc == 0)
		rc = uv_read_start((uv_stream_t *)&at.pipe, read_alloc, on_read);
	if (rc < 0) {
		if (at.pipe.type)
			uv_close((uv_handle_t *)&at.pipe, NULL);
		else
			close(fd);
		return out_err(ctx->out, "cannot attach to '%s': %s", path, uv_strerror(rc));
	}
	attached(ctx);
	return 0;
}

void hs_attach_close(struct hs_ctx *ctx)
{
	/* the daemon hears the end of the connection: its pending verb of
	 * ours, if any, is cancelled */
	if (at.ssl) {
		if (at.open && !uv_is_closing((uv_handle_t *)&at.poll))
			uv_close((uv_handle_t *)&at.poll, NULL);
		if (!at.lost)
			SSL_shutdown(at.ssl);
		SSL_free(at.ssl);
		at.ssl = NULL;
	} else if (at.open && !uv_is_closing((uv_handle_t *)&at.pipe)) {
		uv_close((uv_handle_t *)&at.pipe, NULL);
	}
	if (at.sslctx)		/* else OpenSSL may not be loaded */
		SSL_CTX_free(at.sslctx);
	at.sslctx = NULL;
	if (at.fd >= 0)
		close(at.fd);
	at.fd = -1;
	at.open = false;
	hs_proto_rd_free(&at.rd);
	free(at.path);
	at.path = NULL;
	free(at.ring);
	at.ring = NULL;
	free(at.load);
	at.load = NULL;
	if (at.end_timer_init && !uv_is_closing((uv_handle_t *)&at.end_timer))
		uv_close((uv_handle_t *)&at.end_timer, NULL);
	at.end_timer_init = false;
	ctx->watch.feed = NULL;
	ctx->names = NULL;
	if (ctx->topo)
		hs_topo_free(ctx->topo);
	ctx->topo = NULL;
}
