/* attach.c - a console attached to hopscope serve
 *
 * The console is the same (libedit, runbooks, -c, --json, exit statuses):
 * only its lines run in the daemon. Each line goes out as a frame
 * (proto.h) and is pending until the daemon's 'done'; what the daemon
 * prints comes back as frames and is written here, errors after the
 * runbook's FILE:LINE as a local line's would be. 'quit' and 'source'
 * run here: they are the console's. Ctrl-C sends an interrupt. When the
 * daemon goes away the console says so in one line and ends, status 1.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "cmd.h"
#include "console.h"
#include "proto.h"
#include "runner.h"
#include "serve.h"

#define HELLO_WAIT_MS	10000

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
} at;

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
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
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

	if (!at.open || at.lost || len > HS_PROTO_MAX - 1 ||
	    uv_fileno((uv_handle_t *)&at.pipe, &fd) < 0)
		return;
	b = hs_xcalloc(1, HS_PROTO_HDR + len);
	hs_frame_header(b, type, len);
	if (len)
		memcpy(b + HS_PROTO_HDR, data, len);
	while (off < HS_PROTO_HDR + len) {
		ssize_t w = send(fd, b + off, HS_PROTO_HDR + len - off, MSG_NOSIGNAL);
		if (w > 0) {
			off += (size_t)w;
		} else if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
			struct pollfd p = { .fd = fd, .events = POLLOUT };
			poll(&p, 1, 100);
		} else {
			lost(strerror(errno));
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

static void lost(const char *why)
{
	struct hs_ctx *ctx = at.ctx;

	if (at.lost)
		return;
	at.lost = true;
	uv_read_stop((uv_stream_t *)&at.pipe);
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

static void on_frame(const struct hs_frame *f)
{
	struct hs_ctx *ctx = at.ctx;

	switch (f->type) {
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

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
	struct hs_frame f;
	char err[128];
	int rc;

	(void)s;
	if (n < 0) {
		lost(n == UV_EOF ? "the connection closed" : uv_strerror((int)n));
		return;
	}
	hs_proto_rd_feed(&at.rd, buf->base, (size_t)n);
	while (!at.lost && (rc = hs_proto_rd_next(&at.rd, &f, err, sizeof(err))) != 0) {
		if (rc < 0) {
			lost(err);
			return;
		}
		on_frame(&f);
	}
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
	bool local = c && (strcmp(c->name, "quit") == 0 || strcmp(c->name, "source") == 0);

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

/* ---- the connection --------------------------------------------------------------- */

/* the daemon's hello: 0, or -1 with the error printed */
static int handshake(struct hs_ctx *ctx, int fd)
{
	uint8_t hello[128], buf[4096];
	size_t n = hs_hello_make(hello + HS_PROTO_HDR, sizeof(hello) - HS_PROTO_HDR,
				 ctx->set.json ? HS_HELLO_JSON : 0, VERSION);
	uint64_t deadline = hs_mono_ns() + (uint64_t)HELLO_WAIT_MS * 1000000ULL;
	bool said = false;

	hs_frame_header(hello, HS_FR_HELLO, n);
	if (write_all(fd, hello, HS_PROTO_HDR + n) < 0)
		return out_err(ctx->out, "cannot attach to '%s': %s", at.path, strerror(errno));
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
		rc = poll(&p, 1, (int)((deadline - now) / 1000000ULL) + 1);
		if (rc < 0 && errno != EINTR)
			return out_err(ctx->out, "cannot attach to '%s': %s", at.path, strerror(errno));
		if (rc <= 0)
			continue;
		r = read(fd, buf, sizeof(buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return said ? -1 : out_err(ctx->out, "cannot attach to '%s': the daemon closed "
						   "the connection", at.path);
		hs_proto_rd_feed(&at.rd, buf, (size_t)r);
	}
}

int hs_attach_open(struct hs_ctx *ctx, const char *path)
{
	int fd, rc;

	memset(&at, 0, sizeof(at));
	at.ctx = ctx;
	at.path = hs_xstrdup(path);
	hs_proto_rd_init(&at.rd);
	fd = connect_to(path);
	if (fd < 0)
		return out_err(ctx->out, "cannot attach to '%s': %s (is 'hopscope serve' running?)",
			       path, strerror(errno));
	if (handshake(ctx, fd) < 0) {
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
	at.open = true;
	hs_runner_set_front(ctx, &front);
	return 0;
}

void hs_attach_close(struct hs_ctx *ctx)
{
	(void)ctx;
	/* the daemon hears the end of the connection: its pending verb of
	 * ours, if any, is cancelled */
	if (at.open && !uv_is_closing((uv_handle_t *)&at.pipe))
		uv_close((uv_handle_t *)&at.pipe, NULL);
	at.open = false;
	hs_proto_rd_free(&at.rd);
	free(at.path);
	at.path = NULL;
}
