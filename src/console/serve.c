/* serve.c - hopscope serve: the analyzer as a daemon, consoles attached
 *
 * The configuration file is a runbook of the console's verbs, plus the
 * daemon's own: 'listen unix PATH [group G] [mode MODE]' and 'allow
 * USER|@GROUP RIGHT...'. It is checked whole before anything runs; then
 * its verbs run through the runner as any runbook's, and once they have,
 * the daemon listens: at a unix socket, and with 'listen tcp ... tls ...'
 * over TCP too, always through TLS (tls.h) driven by the loop's reads;
 * there a console proves who it is, by a certificate the CA signed or by
 * the shared secret, before its hello. Consoles speak frames (proto.h).
 * Each has its own output (a FILE whose writes become frames), its own settings (JSON or
 * text) and its own status per line. Lines of all consoles run one at a
 * time on the one engine, in turn: a pending verb (sleep, probe) holds
 * the others' lines until it ends. A console's interrupt or its going
 * away cancels its own pending verb, nothing else. A connection that
 * says no hello is closed after HELLO_MS; a console that does not take
 * its output holds only its own lines (past OUT_MAX), and is closed when
 * it takes none for STALL_MS or leaves OUT_HARD waiting (write_bytes is
 * the one way out, so every kind of frame is bounded alike).
 *
 * A console whose watch is up is fed (proto.h): the daemon subscribes to
 * the pipeline's closed traces and events once for all such consoles,
 * packs each trace into every fed console's buffer, and writes the
 * buffers out a few times a second with a status; the topology goes to
 * every console after hello and whenever a line changed it. The feed never
 * holds the daemon up: a console whose socket has more than FEED_BEHIND
 * bytes not taken yet, or whose buffer is full, is not sent the trace and
 * is told how many it missed.
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "alert.h"
#include "cmd.h"
#include "complete.h"
#include "console.h"
#include "engine.h"
#include "fabric.h"
#include "driver.h"
#include "planck.h"
#include "privsep.h"
#include "proto.h"
#include "retention.h"
#include "runner.h"
#include "serve.h"
#include "console/tls.h"
#include "ssl.h"
#include "watch.h"

#define MAX_QUEUED	64		/* lines a console may send ahead */
#define FLUSH_MS	100		/* a pending verb's output reaches its console this often */
#define HELLO_MS	5000		/* a connection says hello within this, or is closed */
#define OUT_MAX		(4u << 20)	/* past this much output not taken, a console's lines wait */
#define OUT_HARD	(64u << 20)	/* past this, it is closed at once */
#define STALL_MS	10000		/* past OUT_MAX, it takes some within this, or is closed */
#define FEED_MS		100		/* the feed goes out this often */
#define FEED_STATUS	10		/* ... and its status every this many times */
#define FEED_BUF	(256u << 10)	/* frames of a fed console's, until they go out */
#define FEED_BEHIND	(1u << 20)	/* past this much not taken, a fed console is sent no trace */
#define FEED_BACKLOG	2000		/* the recent traces a console is sent as watch starts */

/* what 'allow' gives */
enum {
	R_ATTACH = 1 << 0,
	R_MIRROR = 1 << 1,
	R_PROBE = 1 << 2,
	R_TRACEROUTE = 1 << 3,
	R_SNAPSHOT = 1 << 4,
	R_CAPTURE = 1 << 5,
	R_CONFIGURE = 1 << 6,
};

static const struct {
	const char *name;
	unsigned bit;
} rights[] = {
	{ "attach", R_ATTACH }, { "mirror", R_MIRROR }, { "probe", R_PROBE },
	{ "traceroute", R_TRACEROUTE }, { "snapshot", R_SNAPSHOT }, { "capture", R_CAPTURE },
	{ "configure", R_CONFIGURE },
	{ "all", R_ATTACH | R_MIRROR | R_PROBE | R_TRACEROUTE | R_SNAPSHOT | R_CAPTURE | R_CONFIGURE },
};

/* what a console may do only with a right (sub NULL: any use of the verb):
 * what changes the fabric or the capture, and ("configure") what names a
 * file of the daemon's machine, which it opens as the daemon's user, or
 * changes what every console shares; 'set', 'export' and 'stats' are
 * judged by their words (needs_right) */
static const struct {
	const char *verb, *sub;
	unsigned bit;
} guarded[] = {
	{ "mirror", "add", R_MIRROR }, { "mirror", "del", R_MIRROR },
	{ "probe", NULL, R_PROBE }, { "traceroute", NULL, R_TRACEROUTE },
	{ "snapshot", "take", R_SNAPSHOT },
	{ "capture", "start", R_CAPTURE }, { "capture", "stop", R_CAPTURE },
	{ "decode", NULL, R_CONFIGURE }, { "topo", "load", R_CONFIGURE },
	{ "filter", "add", R_CONFIGURE }, { "filter", "del", R_CONFIGURE },
	{ "alert", "add", R_CONFIGURE }, { "alert", "del", R_CONFIGURE },
	{ "history", "prune", R_CONFIGURE },
};

struct rule {
	bool group;
	uid_t uid;
	gid_t gid;
	char name[64];			/* the user's name: a console over TCP is matched by it */
	int line;			/* no local user of that name: for TCP only; its line */
	unsigned rights;
	struct rule *next;
};

struct qline {
	char *text;
	struct qline *next;
};

struct client;

/* a FILE of a client's: what is written to it goes out in frames of type */
struct sink {
	struct client *c;
	uint8_t type;
};

#define CSTREAM(c)	(&(c)->h.stream)

struct client {
	union {
		uv_stream_t stream;
		uv_pipe_t pipe;		/* attached at the unix socket */
		uv_tcp_t tcp;		/* over TCP, with TLS */
	} h;
	struct hs_tls *tls;		/* over TCP: its TLS; else NULL */
	bool authed;			/* over TCP: its certificate or the secret was good */
	bool by_secret;			/* by the secret, which is itself the right to attach */
	char peer[64];			/* over TCP: its address */
	uv_timer_t timer;		/* its hello is due; or, held, its output taken */
	int handles;			/* of those, not closed yet */
	unsigned id;
	struct hs_proto_rd rd;
	bool hello;			/* the versions agreed */
	uint8_t flags;			/* the optional frames agreed (HS_HELLO_NAMES, LOAD,
					 * ANALYZER) */
	bool gone;			/* the connection is closing */
	bool closed;			/* its handles are closed: free it when no line of its runs */
	bool held;			/* past OUT_MAX: its lines wait, unread */
	bool lingering;			/* refused: what it still sends is read and dropped */
	uid_t uid;
	gid_t gid;
	pid_t pid;
	char user[64];
	struct sink out_sink, err_sink;
	FILE *fp, *errfp;
	struct hs_out out;
	bool json;
	struct qline *lines, **tail;
	unsigned nlines;
	bool fed;			/* its watch is up: it is sent the feed */
	uint8_t *feed;			/* FEED_BUF: frames for it, until the next tick */
	size_t feed_len;
	uint64_t not_shown;		/* traces it was not sent, being behind */
	const struct hs_topo *topo_sent;	/* the topology it was sent last */
	bool topo_told;			/* ... it was sent one (or that there is none) */
	struct client *next;
};

static struct serve {
	struct hs_ctx *ctx;
	const char *config;
	char *sock_path;
	char *sock_dir;			/* its directory, when the daemon made it */
	unsigned mode;
	bool has_group;
	gid_t gid;
	struct rule *rules;
	bool attach_listed;
	char *lab_dir;			/* 'lab DIR': the lab's state, for its driver */		/* some 'allow' names who may attach */
	uv_pipe_t listener;
	bool listening;
	bool tcp;			/* 'listen tcp': consoles over TCP too, with TLS */
	struct sockaddr_storage tcp_addr;
	char tcp_name[80];		/* where, as said in the log ("127.0.0.1:4433") */
	struct hs_tls_conf tls;
	uv_tcp_t tcp_listener;
	bool tcp_listening;
	char *user;			/* -Z, else 'user': whom to become once listening */
	struct hs_privs privs;
	bool db_existed;		/* the history was there before the daemon */
	uv_timer_t flush;
	bool flush_init;
	struct client *clients;
	struct client *current;		/* whose line runs */
	struct client *last;		/* whose line ran last: the next turn is after it */
	unsigned next_id;
	struct hs_out log_out;		/* the daemon's own output: its log */
	struct hs_out *saved;		/* that, while a client's line runs */
	FILE *quiet;			/* its results once serving: the log says what matters */
	uv_timer_t feed_timer;
	bool feed_init;
	unsigned nfed;			/* consoles fed */
	bool subscribed;		/* to the pipeline, for them: until the tick after the last */
	unsigned feed_ticks;
	bool status_due;		/* a capture started or ended: a status at the next tick */
	const struct hs_trace **recent;	/* FEED_BACKLOG: scratch for the backlog */
} sv;

/* ---- the log: one line each, on standard error ------------------------------ */

static void slog(const char *level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void slog(const char *level, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", level);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
}

/* "client 3 (user=alice uid=1000 pid=4242)" */
static const char *who(const struct client *c, char *buf, size_t len)
{
	if (c->tls) {
		snprintf(buf, len, "client %u (peer %s user=%s)", c->id, c->peer,
			 c->user[0] ? c->user : "-");
		return buf;
	}
	snprintf(buf, len, "client %u (user=%s uid=%u pid=%d)", c->id, c->user, (unsigned)c->uid,
		 (int)c->pid);
	return buf;
}

/* ---- the configuration -------------------------------------------------------- */

static int bad(struct hs_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int bad(struct hs_ctx *ctx, const char *fmt, ...)
{
	va_list ap;
	char msg[512];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return out_err(ctx->out, "%s", msg);
}

/* listen tcp ADDR:PORT tls cert FILE key FILE [ca FILE] [secret FILE] */
static int conf_listen_tcp(struct hs_ctx *ctx, int argc, char **argv)
{
	const char *cert = NULL, *key = NULL, *ca = NULL, *secret = NULL;
	char host[64], err[512];
	const char *colon;
	char *end;
	unsigned long port;

	if (sv.tcp)
		return bad(ctx, "listen: tcp given twice (one address)");
	if (argc < 4 || strcmp(argv[3], "tls") != 0)
		return bad(ctx, "listen: tcp needs TLS (usage: listen tcp ADDR:PORT tls cert FILE key "
			   "FILE [ca FILE] [secret FILE])");
	colon = strrchr(argv[2], ':');
	port = colon ? strtoul(colon + 1, &end, 10) : 0;
	if (!colon || !colon[1] || *end || port > 65535 || (size_t)(colon - argv[2]) >= sizeof(host))
		return bad(ctx, "listen: '%s' is not an ADDR:PORT (127.0.0.1:4433, [::]:4433)", argv[2]);
	if (argv[2][0] == '[' && colon > argv[2] + 1 && colon[-1] == ']') {
		snprintf(host, sizeof(host), "%.*s", (int)(colon - argv[2] - 2), argv[2] + 1);
		if (uv_ip6_addr(host, (int)port, (struct sockaddr_in6 *)&sv.tcp_addr) != 0)
			return bad(ctx, "listen: '%s' is not an IPv6 address", host);
	} else {
		snprintf(host, sizeof(host), "%.*s", (int)(colon - argv[2]), argv[2]);
		if (uv_ip4_addr(host, (int)port, (struct sockaddr_in *)&sv.tcp_addr) != 0)
			return bad(ctx, "listen: '%s' is not an IPv4 address (an IPv6 one in [ ])", host);
	}
	for (int i = 4; i < argc; i += 2) {
		const char **slot = strcmp(argv[i], "cert") == 0 ? &cert : strcmp(argv[i], "key") == 0 ? &key :
				    strcmp(argv[i], "ca") == 0 ? &ca : strcmp(argv[i], "secret") == 0 ? &secret :
				    NULL;
		if (!slot)
			return bad(ctx, "listen: unknown option '%s' (cert, key, ca, secret)", argv[i]);
		if (i + 1 >= argc || !argv[i + 1][0])
			return bad(ctx, "listen: '%s' needs a file", argv[i]);
		*slot = argv[i + 1];
	}
	if (!cert || !key)
		return bad(ctx, "listen: tcp needs the daemon's certificate and key (cert FILE key FILE)");
	if (!ca && !secret)
		return bad(ctx, "listen: tcp needs a way for consoles to prove who they are: ca FILE "
			   "(their certificates), secret FILE, or both");
	if (hs_tls_conf_init(&sv.tls, cert, key, ca, secret, err, sizeof(err)) < 0)
		return bad(ctx, "listen: %s", err);
	/* what proves the daemon, or a console, is no other local user's to read */
	for (int i = 0; i < 2; i++) {
		const char *f = i ? secret : key;

		if (f && hs_tls_file_private(f, i ? "secret" : "key", err, sizeof(err)) < 0)
			out_warn(ctx->out, "listen: %s", err);
	}
	sv.tcp = true;
	snprintf(sv.tcp_name, sizeof(sv.tcp_name), "%s", argv[2]);
	return 0;
}

/* listen unix PATH [group G] [mode MODE] */
static int conf_listen(struct hs_ctx *ctx, int argc, char **argv, bool socket_given)
{
	if (argc >= 2 && strcmp(argv[1], "tcp") == 0)
		return conf_listen_tcp(ctx, argc, argv);
	if (sv.sock_path && !socket_given)
		return bad(ctx, "listen: given twice (one socket)");
	if (argc < 2)
		return bad(ctx, "listen: too few arguments (usage: listen unix PATH [group G] [mode MODE])");
	if (strcmp(argv[1], "unix") != 0)
		return bad(ctx, "listen: '%s' is not supported: consoles attach over a unix socket "
			   "(listen unix PATH) or TCP with TLS (listen tcp ADDR:PORT tls ...)", argv[1]);
	if (argc < 3 || !argv[2][0])
		return bad(ctx, "listen: unix needs a socket path");
	if (strlen(argv[2]) >= sizeof(((struct sockaddr_un *)0)->sun_path))
		return bad(ctx, "listen: socket path '%s' is too long (at most %zu bytes)", argv[2],
			   sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
	for (int i = 3; i < argc; i += 2) {
		if (i + 1 >= argc)
			return bad(ctx, "listen: '%s' needs a value", argv[i]);
		if (strcmp(argv[i], "group") == 0) {
			struct group *g = getgrnam(argv[i + 1]);
			if (!g)
				return bad(ctx, "listen: no group '%s'", argv[i + 1]);
			sv.has_group = true;
			sv.gid = g->gr_gid;
		} else if (strcmp(argv[i], "mode") == 0) {
			char *end;
			unsigned long m = strtoul(argv[i + 1], &end, 8);
			if (!argv[i + 1][0] || *end || m > 0777 || (m & 0600) != 0600)
				return bad(ctx, "listen: mode '%s' is not an octal mode the daemon can use "
					   "(0600 to 0777, owner read and write)", argv[i + 1]);
			sv.mode = (unsigned)m;
		} else {
			return bad(ctx, "listen: unknown option '%s' (group, mode)", argv[i]);
		}
	}
	if (!socket_given)
		sv.sock_path = hs_xstrdup(argv[2]);
	return 0;
}

/* allow USER|@GROUP RIGHT... */
static int conf_allow(struct hs_ctx *ctx, int argc, char **argv, int line)
{
	struct rule *r;
	unsigned bits = 0;

	if (argc < 3)
		return bad(ctx, "allow: too few arguments (usage: allow USER|@GROUP RIGHT...)");
	for (int i = 2; i < argc; i++) {
		unsigned b = 0;
		for (size_t k = 0; k < HS_ARRAY_SIZE(rights); k++)
			if (strcmp(argv[i], rights[k].name) == 0)
				b = rights[k].bit;
		if (!b)
			return bad(ctx, "allow: unknown right '%s' (attach, mirror, probe, traceroute, "
				   "snapshot, capture, configure, all)", argv[i]);
		bits |= b;
	}
	r = hs_xcalloc(1, sizeof(*r));
	if (argv[1][0] == '@') {
		struct group *g = getgrnam(argv[1] + 1);
		if (!g) {
			free(r);
			return bad(ctx, "allow: no group '%s'", argv[1] + 1);
		}
		r->group = true;
		r->gid = g->gr_gid;
	} else {
		struct passwd *pw = getpwnam(argv[1]);
		if (strlen(argv[1]) >= sizeof(r->name)) {
			free(r);
			return bad(ctx, "allow: user name '%s' is too long", argv[1]);
		}
		snprintf(r->name, sizeof(r->name), "%s", argv[1]);
		if (pw) {
			r->uid = pw->pw_uid;
		} else {
			/* a console's certificate's name, or 'secret': checked below */
			r->uid = (uid_t)-1;
			r->line = line;
		}
	}
	r->rights = bits;
	r->next = sv.rules;
	sv.rules = r;
	if (bits & R_ATTACH)
		sv.attach_listed = true;
	return 0;
}

/* user USER: once capturing and listening, run as USER (-Z wins) */
static int conf_user(struct hs_ctx *ctx, int argc, char **argv, bool user_given)
{
	struct hs_privs p;
	char err[256];

	if (argc != 2)
		return bad(ctx, "user: one argument, whom the daemon runs as (usage: user USER)");
	if (hs_privs_plan(argv[1], &p, err, sizeof(err)) < 0)
		return bad(ctx, "user: %s", err);
	if (!user_given) {
		free(sv.user);
		sv.user = hs_xstrdup(argv[1]);
	}
	return 0;
}

/* lab DIR: mirror and snapshot drive the lab fabric whose state is DIR */
static int conf_lab(struct hs_ctx *ctx, int argc, char **argv)
{
	struct stat st;

	if (argc != 2)
		return bad(ctx, "lab: one argument, the lab's state directory (usage: lab DIR)");
	if (stat(argv[1], &st) < 0 || !S_ISDIR(st.st_mode))
		return bad(ctx, "lab: no directory '%s' (the state of 'hopscope-lab up')", argv[1]);
	free(sv.lab_dir);
	sv.lab_dir = hs_xstrdup(argv[1]);
	return 0;
}

/* read and check the whole file: its lines to run in *lines (the daemon's
 * own blanked, so a line keeps its number), 0; or -1 with one error
 * "FILE:LINE: error: ..." printed */
static int conf_read(struct hs_ctx *ctx, const char *path, bool socket_given, bool user_given,
		     char ***lines, int *nlines)
{
	FILE *fp = fopen(path, "r");
	char *l = NULL, **v = NULL;
	size_t cap = 0;
	ssize_t n;
	int count = 0, rc = 0;
	struct stat st;

	*lines = NULL;
	*nlines = 0;
	if (!fp)
		return out_err(ctx->out, "cannot open configuration '%s': %s", path, strerror(errno));
	if (fstat(fileno(fp), &st) == 0 && S_ISDIR(st.st_mode)) {
		fclose(fp);
		return out_err(ctx->out, "cannot read configuration '%s': %s", path,
			       strerror(EISDIR));
	}
	while (rc == 0 && (n = getline(&l, &cap, fp)) >= 0) {
		char *buf, *argv[HS_MAX_WORDS + 1];
		int argc, col = 0;
		const struct hs_cmd *verb;
		const char *sub;

		while (n > 0 && (l[n - 1] == '\n' || l[n - 1] == '\r'))
			l[--n] = '\0';
		v = realloc(v, sizeof(*v) * (size_t)(count + 1));
		if (!v)
			abort();
		v[count++] = NULL;
		snprintf(ctx->out->where, sizeof(ctx->out->where), "%s:%d: ", path, count);
		if (memchr(l, '\0', (size_t)n)) {
			rc = out_err(ctx->out, "a NUL byte at column %zu: a command line is text",
				     (size_t)((char *)memchr(l, '\0', (size_t)n) - l) + 1);
			break;
		}
		buf = hs_xstrdup(l);
		argc = hs_split_words(buf, argv, HS_MAX_WORDS, &col);
		if (argc > 0 && strcmp(argv[0], "listen") == 0) {
			rc = conf_listen(ctx, argc, argv, socket_given);
			v[count - 1] = hs_xstrdup("");
		} else if (argc > 0 && strcmp(argv[0], "allow") == 0) {
			rc = conf_allow(ctx, argc, argv, count);
			v[count - 1] = hs_xstrdup("");
		} else if (argc > 0 && strcmp(argv[0], "lab") == 0) {
			rc = conf_lab(ctx, argc, argv);
			v[count - 1] = hs_xstrdup("");
		} else if (argc > 0 && strcmp(argv[0], "user") == 0) {
			rc = conf_user(ctx, argc, argv, user_given);
			v[count - 1] = hs_xstrdup("");
		} else if (hs_check_line(ctx, l, &verb, &sub) < 0) {
			rc = -1;
		} else if (verb && (strcmp(verb->name, "watch") == 0 ||
				    strcmp(verb->name, "quit") == 0)) {
			rc = out_err(ctx->out, "'%s' has no place in a daemon's configuration "
				     "(it needs a console)", verb->name);
		} else {
			v[count - 1] = hs_xstrdup(l);
		}
		free(buf);
	}
	if (rc == 0 && ferror(fp))
		rc = out_err(ctx->out, "cannot read configuration '%s': %s", path, strerror(errno));
	/* a name no local user has is a console's over TCP: there must be one */
	for (const struct rule *r = sv.rules; rc == 0 && r; r = r->next)
		if (r->line && !sv.tcp) {
			snprintf(ctx->out->where, sizeof(ctx->out->where), "%s:%d: ", path, r->line);
			rc = out_err(ctx->out, "allow: no user '%s' (a name of consoles over TCP needs "
				     "'listen tcp')", r->name);
		}
	ctx->out->where[0] = '\0';
	free(l);
	fclose(fp);
	if (rc < 0) {
		for (int i = 0; i < count; i++)
			free(v[i]);
		free(v);
		return -1;
	}
	*lines = v;
	*nlines = count;
	return 0;
}

/* ---- rights ------------------------------------------------------------------ */

static bool in_group(const struct client *c, gid_t gid)
{
	gid_t groups[256];
	int n = (int)HS_ARRAY_SIZE(groups);

	if (c->gid == gid)
		return true;
	if (!c->user[0] || strchr(c->user, '#'))
		return false;
	if (getgrouplist(c->user, c->gid, groups, &n) < 0)
		return false;
	for (int i = 0; i < n; i++)
		if (groups[i] == gid)
			return true;
	return false;
}

static bool may(const struct client *c, unsigned bit)
{
	/* root and the daemon's own user may do anything; a console over TCP
	 * is neither, whatever its name */
	if (!c->tls && (c->uid == 0 || c->uid == geteuid()))
		return true;
	if (bit == R_ATTACH && (!sv.attach_listed || c->by_secret))
		return true;	/* the socket's permissions decide, or TLS's proof */
	for (const struct rule *r = sv.rules; r; r = r->next) {
		if (!(r->rights & bit))
			continue;
		/* a name no local user has is for consoles over TCP alone */
		if (c->tls ? !r->group && strcmp(r->name, c->user) == 0
			   : r->group ? in_group(c, r->gid) : !r->line && r->uid == c->uid)
			return true;
	}
	return false;
}

static const char *right_name(unsigned bit)
{
	for (size_t k = 0; k < HS_ARRAY_SIZE(rights); k++)
		if (rights[k].bit == bit)
			return rights[k].name;
	return "?";
}

/* ---- frames out --------------------------------------------------------------- */

static size_t backlog(struct client *c)
{
	return uv_stream_get_write_queue_size(CSTREAM(c));
}

static void client_taken(struct client *c);

static void write_done(uv_write_t *req, int status)
{
	struct client *c = req->handle->data;

	free(req->data);
	free(req);
	if (status == 0 && c->held)
		client_taken(c);
}

static void client_close_now(struct client *c, const char *why);

/* what TLS has to send to a console over TCP (its handshake, its records), written */
static void tls_flush(struct client *c)
{
	size_t n;
	void *b;

	while ((b = hs_tls_out(c->tls, &n)) != NULL) {
		uv_write_t *req = hs_xcalloc(1, sizeof(*req));
		uv_buf_t buf = uv_buf_init(b, (unsigned)n);

		req->data = b;
		if (uv_write(req, CSTREAM(c), &buf, 1, write_done) < 0) {
			free(b);
			free(req);
			return;
		}
	}
}

/* n bytes of frames to c, queued (b was allocated and is the write's
 * now: sealed first over TLS); past OUT_HARD of what it has not taken,
 * the client is closed */
static void write_bytes(struct client *c, uint8_t *b, size_t n)
{
	uv_write_t *req;
	uv_buf_t buf;

	if (c->gone) {
		free(b);
		return;
	}
	if (backlog(c) + n > OUT_HARD) {
		char why[80];
		free(b);
		snprintf(why, sizeof(why), "closed: more than %u MiB of its output not taken",
			 OUT_HARD >> 20);
		client_close_now(c, why);
		return;
	}
	if (c->tls) {
		/* sealed, and what TLS made of it written */
		int rc = hs_tls_write(c->tls, b, n);
		free(b);
		if (rc == 0)
			tls_flush(c);
		return;
	}
	req = hs_xcalloc(1, sizeof(*req));
	req->data = b;
	buf = uv_buf_init((char *)b, (unsigned)n);
	if (uv_write(req, CSTREAM(c), &buf, 1, write_done) < 0) {
		free(b);
		free(req);
	}
}

static void send_frame(struct client *c, uint8_t type, const void *data, size_t len)
{
	do {
		size_t n = len < HS_PROTO_MAX - 1 ? len : HS_PROTO_MAX - 1;
		uint8_t *b;

		if (c->gone)
			return;
		b = hs_xcalloc(1, HS_PROTO_HDR + n);
		hs_frame_header(b, type, n);
		memcpy(b + HS_PROTO_HDR, data, n);
		write_bytes(c, b, HS_PROTO_HDR + n);
		data = (const uint8_t *)data + n;
		len -= n;
	} while (len > 0);
}

static ssize_t sink_write(void *cookie, const char *buf, size_t size)
{
	struct sink *s = cookie;

	if (size > 0)
		send_frame(s->c, s->type, buf, size);
	return (ssize_t)size;
}

static FILE *sink_open(struct client *c, struct sink *s, uint8_t type)
{
	cookie_io_functions_t io = { .write = sink_write };
	FILE *fp;

	s->c = c;
	s->type = type;
	fp = fopencookie(s, "w", io);
	if (!fp)
		abort();
	setvbuf(fp, NULL, _IOFBF, 65536);
	return fp;
}

/* ---- the feed ------------------------------------------------------------------- */

/* the topology, to a console that was not sent the one there is now */
static void topo_tell(struct client *c)
{
	const struct hs_topo *t = sv.ctx->topo;
	char *text, w[160];
	size_t len = 0;

	if (c->gone || !c->hello || (c->topo_told && c->topo_sent == t))
		return;
	c->topo_told = true;
	c->topo_sent = t;
	if (!t) {
		send_frame(c, HS_FR_TOPO, "", 0);
		return;
	}
	text = hs_topo_text(t, &len);
	if (len > HS_PROTO_MAX - 1)
		slog("warning", "%s is not sent the topology: %zu bytes is more than a frame takes "
		     "(%u)", who(c, w, sizeof(w)), len, HS_PROTO_MAX - 1);
	else
		send_frame(c, HS_FR_TOPO, text, len);
	free(text);
}

static void topo_tell_all(void)
{
	for (struct client *c = sv.clients; c; c = c->next)
		topo_tell(c);
}

/* a frame into c's feed: false when its buffer has no room */
static bool feed_put(struct client *c, uint8_t type, const void *data, size_t len)
{
	if (c->feed_len + HS_PROTO_HDR + len > FEED_BUF)
		return false;
	hs_frame_header(c->feed + c->feed_len, type, len);
	memcpy(c->feed + c->feed_len + HS_PROTO_HDR, data, len);
	c->feed_len += HS_PROTO_HDR + len;
	return true;
}

/* a closed trace, to each fed console not behind: packed once */
/* t packed for c: with the analyzers that stored it when c takes them */
static size_t feed_pack(const struct client *c, uint8_t *buf, const struct hs_trace *t)
{
	bool named = c->flags & HS_HELLO_ANALYZER;

	return hs_feed_trace_pack(buf, t, named ? hs_fabric_analyzers(t->analyzer) : NULL);
}

static void feed_trace(void *arg, const struct hs_trace *t)
{
	uint8_t packed[2][HS_FEED_TRACE_MAX];	/* without and with the analyzers */
	size_t n[2] = { 0, 0 };

	(void)arg;
	for (struct client *c = sv.clients; c; c = c->next) {
		if (!c->fed || c->gone)
			continue;
		if (backlog(c) > FEED_BEHIND ||
		    c->feed_len + HS_PROTO_HDR + HS_FEED_TRACE_MAX > FEED_BUF) {
			c->not_shown++;
			continue;
		}
		int k = c->flags & HS_HELLO_ANALYZER ? 1 : 0;
		if (!n[k])
			n[k] = feed_pack(c, packed[k], t);
		feed_put(c, HS_FR_TRACE, packed[k], n[k]);
	}
}

/* what the log says of an event, its level in *level; "" for none */
static void event_text(const struct hs_event *ev, const char **level, char *buf, size_t len)
{
	char val[32], when[HS_TIMESTRLEN];

	*level = "info";
	buf[0] = '\0';
	if (ev->kind == HS_EV_ALERT) {
		*level = "warning";
		snprintf(buf, len, "alert %u: %s (%s) at %s", ev->alert->id, ev->alert->text,
			 hs_acond_fmt(&ev->alert->c, ev->value, val, sizeof(val)),
			 hs_fmt_time(ev->ts, when, sizeof(when)));
	} else if (ev->kind == HS_EV_CAPTURE_STARTED) {
		snprintf(buf, len, "capture started on '%s'", ev->source);
	} else if (ev->kind == HS_EV_CAPTURE_ENDED) {
		*level = ev->status ? "error" : "info";
		snprintf(buf, len, "capture of '%s' ended: %s", ev->source, ev->text ? ev->text : "");
	}
}

static void feed_flush(struct client *c, bool status);
static void feed_backlog(struct client *c, bool reset);

static void feed_event(void *arg, const struct hs_event *ev)
{
	const char *level;
	char text[512];

	(void)arg;
	event_text(ev, &level, text, sizeof(text));
	sv.status_due = true;
	for (struct client *c = sv.clients; c; c = c->next) {
		if (!c->fed || c->gone)
			continue;
		/* what it was sent is not what is kept now: all of it again */
		if (ev->kind == HS_EV_TRACES_REPLACED) {
			feed_flush(c, false);
			feed_backlog(c, true);
		}
		/* its traces replace the last capture's, as in the tracer */
		if (ev->kind == HS_EV_CAPTURE_STARTED)
			feed_put(c, HS_FR_TRACE, "", 0);
		if (text[0])
			feed_put(c, HS_FR_EVENT, text, strlen(text));
	}
}

/* the load of each directed link, as the Links pane shows it, to a fed
 * console that takes it and has the topology it is of */
static void feed_load(struct client *c)
{
	const struct hs_topo *t = sv.ctx->topo;
	char (*text)[HS_LOAD_TEXT];
	size_t nd, cap, n;
	uint8_t *b;

	if (!(c->flags & HS_HELLO_LOAD) || !t || t->nlinks <= 0 || c->topo_sent != t)
		return;
	nd = 2 * (size_t)t->nlinks;
	cap = 4 + nd * (5 + HS_LOAD_TEXT);
	if (cap > HS_PROTO_MAX - 1)
		return;		/* as the topology itself: too big for a frame */
	text = hs_xcalloc(nd, sizeof(*text));
	for (int l = 0; l < t->nlinks; l++) {
		hs_planck_link_load(sv.ctx, l, t->links[l].a, text[2 * l], HS_LOAD_TEXT);
		hs_planck_link_load(sv.ctx, l, t->links[l].b, text[2 * l + 1], HS_LOAD_TEXT);
	}
	b = hs_xcalloc(1, HS_PROTO_HDR + cap);
	n = hs_feed_load_pack(b + HS_PROTO_HDR, t->nlinks, (const char (*)[HS_LOAD_TEXT])text);
	hs_frame_header(b, HS_FR_LOAD, n);
	write_bytes(c, b, HS_PROTO_HDR + n);
	free(text);
}

/* c's frames go out; with status, a status first, and the links' load */
static void feed_flush(struct client *c, bool status)
{
	if (status) {
		struct hs_feed_status st;
		uint8_t buf[sizeof(st) + 16];
		hs_watch_status(sv.ctx, &st);
		st.not_shown = c->not_shown;
		/* room kept for it: a full buffer is traces */
		if (!feed_put(c, HS_FR_STATUS, buf, hs_feed_status_pack(buf, &st))) {
			uint8_t *b = hs_xcalloc(1, HS_PROTO_HDR + sizeof(buf));
			size_t n = hs_feed_status_pack(b + HS_PROTO_HDR, &st);
			hs_frame_header(b, HS_FR_STATUS, n);
			write_bytes(c, b, HS_PROTO_HDR + n);
		}
		feed_load(c);
	}
	if (!c->feed_len)
		return;
	uint8_t *b = hs_xcalloc(1, c->feed_len);
	memcpy(b, c->feed, c->feed_len);
	write_bytes(c, b, c->feed_len);
	c->feed_len = 0;
}

static void feed_tick(uv_timer_t *t)
{
	bool status = ++sv.feed_ticks % FEED_STATUS == 0 || sv.status_due;

	(void)t;
	sv.status_due = false;
	if (sv.nfed == 0) {
		hs_unsub_traces(&sv.ctx->subs, feed_trace, &sv);
		hs_unsub_events(&sv.ctx->subs, feed_event, &sv);
		uv_timer_stop(&sv.feed_timer);
		sv.subscribed = false;
		return;
	}
	topo_tell_all();
	for (struct client *c = sv.clients; c; c = c->next)
		if (c->fed && !c->gone)
			feed_flush(c, status);
}

/* c's watch is up: the recent traces, oldest first, then what closes */
static void feed_start(struct client *c)
{
	struct hs_ctx *ctx = sv.ctx;
	char w[160];

	if (c->fed || c->gone)
		return;
	if (!sv.subscribed) {
		if (hs_sub_traces(&ctx->subs, HS_TRACES_ALL, feed_trace, NULL, &sv) < 0) {
			static const char no[] = "error: the daemon has no room for another "
						 "subscriber: no traces will come";
			send_frame(c, HS_FR_EVENT, no, sizeof(no) - 1);
			return;
		}
		if (hs_sub_events(&ctx->subs, feed_event, &sv) < 0) {
			static const char no[] = "error: the daemon has no room for another "
						 "subscriber: no events will come";
			send_frame(c, HS_FR_EVENT, no, sizeof(no) - 1);
		}
		uv_timer_start(&sv.feed_timer, feed_tick, FEED_MS, FEED_MS);
		sv.subscribed = true;
	}
	sv.nfed++;
	c->fed = true;
	slog("info", "%s watches: it is fed", who(c, w, sizeof(w)));
	c->not_shown = 0;
	c->feed_len = 0;
	if (!c->feed)
		c->feed = hs_xcalloc(1, FEED_BUF);
	topo_tell(c);
	feed_backlog(c, false);
	feed_flush(c, true);
}

/* the recent traces, oldest first, to c at once; after an empty trace
 * (the console forgets those it has) when reset */
static void feed_backlog(struct client *c, bool reset)
{
	struct hs_ctx *ctx = sv.ctx;
	size_t n, len = 0;
	uint8_t *b;

	n = ctx->tracer ? hs_tracer_recent(ctx->tracer, sv.recent, FEED_BACKLOG) : 0;
	b = hs_xcalloc(1, (n + 1) * (HS_PROTO_HDR + HS_FEED_TRACE_MAX));
	if (reset) {
		hs_frame_header(b, HS_FR_TRACE, 0);
		len += HS_PROTO_HDR;
	}
	for (size_t i = n; i-- > 0;) {
		size_t k = feed_pack(c, b + len + HS_PROTO_HDR, sv.recent[i]);
		hs_frame_header(b + len, HS_FR_TRACE, k);
		len += HS_PROTO_HDR + k;
	}
	if (len)
		write_bytes(c, b, len);
	else
		free(b);
}

static void feed_stop(struct client *c)
{
	char w[160];

	if (!c->fed)
		return;
	if (c->not_shown)
		slog("info", "%s stopped watching: %llu traces not sent, it was behind",
		     who(c, w, sizeof(w)), (unsigned long long)c->not_shown);
	else
		slog("info", "%s stopped watching", who(c, w, sizeof(w)));
	c->fed = false;
	c->feed_len = 0;
	sv.nfed--;	/* the subscription ends at the next tick: this may be inside a publish */
}

/* ---- clients ------------------------------------------------------------------ */

static void clear_lines(struct client *c)
{
	while (c->lines) {
		struct qline *q = c->lines;
		c->lines = q->next;
		free(q->text);
		free(q);
	}
	c->nlines = 0;
}

static void client_free(struct client *c)
{
	struct client **p;

	for (p = &sv.clients; *p && *p != c; p = &(*p)->next)
		;
	if (*p)
		*p = c->next;
	if (sv.last == c)
		sv.last = NULL;
	clear_lines(c);
	fclose(c->fp);
	fclose(c->errfp);
	hs_proto_rd_free(&c->rd);
	if (c->tls) {
		hs_tls_free(c->tls);
		free(c->tls);
	}
	free(c->feed);
	free(c);
}

/* a handle of a client's closed: when both are, and no line of its runs,
 * it goes; a line of its still pending is cancelled, which ends it */
static void client_closed(uv_handle_t *h)
{
	struct client *c = h->data;

	if (--c->handles > 0)
		return;
	c->closed = true;
	if (sv.current != c) {
		client_free(c);
	} else if (sv.ctx->cancel) {
		void (*cancel)(struct hs_ctx *) = sv.ctx->cancel;
		sv.ctx->cancel = NULL;
		cancel(sv.ctx);
	}
}

static void client_shut(uv_shutdown_t *req, int status)
{
	(void)status;
	uv_close((uv_handle_t *)req->handle, client_closed);
	free(req);
}

/* it does not take its output: closed at once, what was queued for it
 * dropped (a shutdown would wait for it to read); its pending verb is
 * cancelled when the close is done, outside the writing that got here */
static void client_close_now(struct client *c, const char *why)
{
	char w[160];

	slog("warning", "%s %s", who(c, w, sizeof(w)), why);
	feed_stop(c);
	c->gone = true;
	uv_read_stop(CSTREAM(c));
	clear_lines(c);
	uv_close((uv_handle_t *)&c->timer, client_closed);
	uv_close((uv_handle_t *)&c->h, client_closed);
}

static void run_next(void);

static void stalled(uv_timer_t *t)
{
	char why[96];

	snprintf(why, sizeof(why), "closed: it took none of its output for %d s (more than %u MiB "
		 "waiting)", STALL_MS / 1000, OUT_MAX >> 20);
	client_close_now(t->data, why);
}

/* past OUT_MAX after a line of its: its next lines wait, and are not
 * read, until it takes its output; if it takes none for STALL_MS, it goes */
static void client_hold(struct client *c)
{
	if (c->held || c->gone || backlog(c) <= OUT_MAX)
		return;
	c->held = true;
	uv_read_stop(CSTREAM(c));
	uv_timer_start(&c->timer, stalled, STALL_MS, STALL_MS);
}

static void client_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf);
static void client_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf);

/* a write of a held client's done: back under OUT_MAX, its lines run again */
static void client_taken(struct client *c)
{
	if (c->gone)
		return;
	if (backlog(c) > OUT_MAX) {
		uv_timer_again(&c->timer);
		return;
	}
	c->held = false;
	uv_timer_stop(&c->timer);
	uv_read_start(CSTREAM(c), client_alloc, client_read);
	run_next();
}

/* the connection ends (why: for the log); its pending verb is cancelled */
static void client_drop(struct client *c, const char *level, const char *why)
{
	char w[160];

	if (c->gone)
		return;
	if (why)
		slog(level, "%s %s", who(c, w, sizeof(w)), why);
	/* what it was sent goes first: an error, a goodbye */
	fflush(c->fp);
	fflush(c->errfp);
	feed_stop(c);
	c->gone = true;
	uv_read_stop(CSTREAM(c));
	uv_close((uv_handle_t *)&c->timer, client_closed);
	clear_lines(c);
	if (sv.current == c && sv.ctx->cancel) {
		void (*cancel)(struct hs_ctx *) = sv.ctx->cancel;
		sv.ctx->cancel = NULL;
		cancel(sv.ctx);
	}
	if (c->tls && c->tls->ready) {
		SSL_shutdown(c->tls->ssl);
		tls_flush(c);
	}
	/* what was written reaches it before the close */
	uv_shutdown_t *req = hs_xcalloc(1, sizeof(*req));
	if (uv_shutdown(req, CSTREAM(c), client_shut) < 0) {
		free(req);
		uv_close((uv_handle_t *)&c->h, client_closed);
	}
}

static void linger_shut(uv_shutdown_t *req, int status)
{
	(void)status;
	free(req);
}

/* refused before its hello (logged already, before the console could hear
 * why: it may look at the log as soon as it has): what it was sent, then
 * the end of what the daemon sends; what it still sends is read and dropped
 * until it closes or its hello would have been due. Closed at once, its
 * next bytes would meet a reset that can cost it the reason it was sent. */
static void client_linger(struct client *c)
{
	uv_shutdown_t *req;

	c->gone = true;
	c->lingering = true;
	clear_lines(c);
	req = hs_xcalloc(1, sizeof(*req));
	if (uv_shutdown(req, CSTREAM(c), linger_shut) < 0) {
		free(req);
		c->lingering = false;
		uv_read_stop(CSTREAM(c));
		uv_close((uv_handle_t *)&c->timer, client_closed);
		uv_close((uv_handle_t *)&c->h, client_closed);
	}
}

static void linger_end(struct client *c)
{
	c->lingering = false;
	uv_read_stop(CSTREAM(c));
	uv_close((uv_handle_t *)&c->timer, client_closed);
	uv_close((uv_handle_t *)&c->h, client_closed);
}

/* refused: one error the console prints, a goodbye, and a line in the log */
static void client_refuse(struct client *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void client_refuse(struct client *c, const char *fmt, ...)
{
	char msg[512], line[600], w[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	slog("warning", "%s refused: %s", who(c, w, sizeof(w)), msg);
	snprintf(line, sizeof(line), "error: %s\n", msg);
	send_frame(c, HS_FR_ERR, line, strlen(line));
	send_frame(c, HS_FR_BYE, "refused", 7);
	fflush(c->fp);
	fflush(c->errfp);
	client_linger(c);
}

static void on_hello(struct client *c, const struct hs_frame *f)
{
	uint8_t proto = 0, flags = 0, reply[128];
	char version[64] = "", w[160];
	size_t n;

	if (hs_hello_parse(f, &proto, &flags, version, sizeof(version)) < 0) {
		client_drop(c, "warning", "closed: its hello is malformed");
		return;
	}
	if (proto != HS_PROTO_VERSION || strcmp(version, VERSION) != 0) {
		client_refuse(c, "the console is hopscope %s (protocol %u), the daemon hopscope %s "
			      "(protocol %u): attach with the daemon's version", version, proto,
			      VERSION, HS_PROTO_VERSION);
		return;
	}
	if (!may(c, R_ATTACH)) {
		client_refuse(c, "user '%s' may not attach to this daemon (its configuration "
			      "says who may: allow USER attach)", c->user);
		return;
	}
	c->hello = true;
	uv_timer_stop(&c->timer);
	c->json = flags & HS_HELLO_JSON;
	c->out.json = c->json;
	c->flags = flags & (HS_HELLO_NAMES | HS_HELLO_LOAD | HS_HELLO_ANALYZER);
	n = hs_hello_make(reply, sizeof(reply), c->flags, VERSION);
	send_frame(c, HS_FR_HELLO, reply, n);
	topo_tell(c);	/* for its completion */
	slog("info", "%s attached", who(c, w, sizeof(w)));
}

static void on_line(struct client *c, const struct hs_frame *f)
{
	struct qline *q;

	if (c->nlines >= MAX_QUEUED) {
		client_drop(c, "warning", "closed: it sent more lines than the daemon queues");
		return;
	}
	q = hs_xcalloc(1, sizeof(*q));
	q->text = hs_xcalloc(1, (size_t)f->len + 1);
	memcpy(q->text, f->data, f->len);
	if (memchr(q->text, '\0', f->len) || memchr(q->text, '\n', f->len)) {
		free(q->text);
		free(q);
		client_drop(c, "warning", "closed: a line with a NUL byte or a newline");
		return;
	}
	*c->tail = q;
	c->tail = &q->next;
	c->nlines++;
	run_next();
}

/* the trace names TAB may offer the console: answered at once, whoever's
 * line runs */
static void on_names(struct client *c, const struct hs_frame *f)
{
	char word[HS_NAMES_WORD_MAX + 1] = "";
	uint32_t seq = 0;
	bool stored = false;
	struct hs_cands cands = { .n = 0 };
	uint8_t *b;
	size_t n;

	if (!(c->flags & HS_HELLO_NAMES) ||
	    hs_names_ask_unpack(f->data, f->len, &seq, &stored, word, sizeof(word)) < 0) {
		client_drop(c, "warning", "closed: a names frame that is not a question it may "
			    "ask");
		return;
	}
	hs_complete_traces(sv.ctx, stored, word, &cands);
	b = hs_xcalloc(1, 4 + (size_t)HS_MAX_CANDS * HS_NAMES_ITEM_MAX);
	n = hs_names_pack(b, 4 + (size_t)HS_MAX_CANDS * HS_NAMES_ITEM_MAX, seq, cands.v, cands.n);
	send_frame(c, HS_FR_NAMES, b, n);
	free(b);
	hs_cands_free(&cands);
}

static void on_interrupt(struct client *c)
{
	if (sv.current != c)
		return;		/* nothing of its pending: its next line runs as sent */
	if (sv.ctx->cancel) {
		void (*cancel)(struct hs_ctx *) = sv.ctx->cancel;
		sv.ctx->cancel = NULL;
		cancel(sv.ctx);
	} else {
		fputs("this cannot be interrupted; it ends by itself\n", c->errfp);
		fflush(c->errfp);
	}
}

static void client_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
	static char space[65536];

	(void)h;
	(void)hint;
	buf->base = space;
	buf->len = sizeof(space);
}

/* over TCP, the frame before hello: the secret, unless a certificate
 * said who the console is; false when the console was refused */
static bool on_auth(struct client *c, const struct hs_frame *f)
{
	if (f->type == HS_FR_AUTH && !c->authed && sv.tls.has_secret) {
		if (!hs_tls_secret_ok(&sv.tls, f->data, f->len)) {
			client_refuse(c, "the secret is not this daemon's");
			return false;
		}
		c->authed = true;
		c->by_secret = true;
		snprintf(c->user, sizeof(c->user), "secret");
		return true;
	}
	if (f->type == HS_FR_HELLO && !c->authed) {
		client_refuse(c, "this daemon takes a console over TCP with %s",
			      sv.tls.has_ca && sv.tls.has_secret ? "a certificate its CA signed, or its "
			      "secret (--tls-cert and --tls-key, or --secret)" :
			      sv.tls.has_ca ? "a certificate its CA signed (--tls-cert and --tls-key)" :
			      "its secret (--secret FILE)");
		return false;
	}
	return true;
}

static void client_frames(struct client *c)
{
	struct hs_frame f;
	char err[128], msg[200];
	int rc;

	while (!c->gone && (rc = hs_proto_rd_next(&c->rd, &f, err, sizeof(err))) != 0) {
		if (rc < 0) {
			snprintf(msg, sizeof(msg), "closed: %s", err);
			client_drop(c, "warning", msg);
			return;
		}
		if (c->tls && !c->hello && !on_auth(c, &f))
			return;
		if (f.type == HS_FR_AUTH && c->tls && !c->hello && c->authed)
			continue;
		if (!c->hello && f.type != HS_FR_HELLO) {
			snprintf(msg, sizeof(msg), "closed: a %s frame before hello",
				 hs_frame_name(f.type));
			client_drop(c, "warning", msg);
			return;
		}
		switch (f.type) {
		case HS_FR_HELLO:
			if (c->hello)
				client_drop(c, "warning", "closed: a second hello");
			else
				on_hello(c, &f);
			break;
		case HS_FR_LINE:
			on_line(c, &f);
			break;
		case HS_FR_INTR:
			on_interrupt(c);
			break;
		case HS_FR_NAMES:
			on_names(c, &f);
			break;
		case HS_FR_WATCH:
			feed_start(c);
			break;
		case HS_FR_UNWATCH:
			feed_stop(c);
			break;
		case HS_FR_BYE:
			client_drop(c, "info", "detached");
			return;
		default:
			snprintf(msg, sizeof(msg), "closed: a %s frame from a console",
				 hs_frame_name(f.type));
			client_drop(c, "warning", msg);
			return;
		}
	}
}

/* over TCP: TLS's records in; its handshake advanced and answered, and
 * once it is done, the plaintext's frames */
static void tls_read(struct client *c, const char *data, size_t n)
{
	char err[160], msg[240], plain[16384], w[160];
	bool was_ready = c->tls->ready;
	long got;

	if (hs_tls_in(c->tls, data, n, err, sizeof(err)) < 0) {
		slog("warning", "%s refused: TLS handshake failed: %s", who(c, w, sizeof(w)), err);
		tls_flush(c);	/* its alert: the console hears why */
		client_linger(c);
		return;
	}
	tls_flush(c);
	if (!c->tls->ready)
		return;
	if (!was_ready && c->tls->cert) {
		c->authed = true;
		snprintf(c->user, sizeof(c->user), "%s", c->tls->cn);
	}
	while (!c->gone && (got = hs_tls_read(c->tls, plain, sizeof(plain), err, sizeof(err))) != 0) {
		if (got < 0) {
			tls_flush(c);
			snprintf(msg, sizeof(msg), "%s%s%s", c->hello ? "detached" : "closed",
				 err[0] ? ": " : "", err);
			client_drop(c, c->hello ? "info" : "warning", msg);
			return;
		}
		hs_proto_rd_feed(&c->rd, plain, (size_t)got);
		client_frames(c);
	}
}

static void client_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
	struct client *c = s->data;

	if (c->lingering) {
		if (n < 0)
			linger_end(c);
		return;
	}
	if (n < 0) {
		client_drop(c, "info", n == UV_EOF ? "detached" : "detached: the connection failed");
		return;
	}
	if (c->tls) {
		tls_read(c, buf->base, (size_t)n);
		return;
	}
	hs_proto_rd_feed(&c->rd, buf->base, (size_t)n);
	client_frames(c);
}

static void unaccepted(uv_handle_t *h)
{
	free(h->data);
}

static void hello_late(uv_timer_t *t)
{
	struct client *c = t->data;
	char why[64];

	if (c->lingering) {
		linger_end(c);
		return;
	}
	snprintf(why, sizeof(why), "closed: no hello in %d s", HELLO_MS / 1000);
	client_drop(c, "warning", why);
}

/* a connection accepted on server (status: the listener's), of a unix
 * socket or over TCP: its client, or NULL */
static struct client *client_accept(uv_stream_t *server, int status, bool tcp)
{
	struct client *c;

	if (status < 0) {
		slog("warning", "cannot accept a console%s: %s", tcp ? " over TCP" : "",
		     uv_strerror(status));
		return NULL;
	}
	c = hs_xcalloc(1, sizeof(*c));
	if (tcp)
		uv_tcp_init(sv.ctx->loop, &c->h.tcp);
	else
		uv_pipe_init(sv.ctx->loop, &c->h.pipe, 0);
	c->h.stream.data = c;
	if (uv_accept(server, CSTREAM(c)) < 0) {
		uv_close((uv_handle_t *)&c->h, unaccepted);
		return NULL;
	}
	c->id = ++sv.next_id;
	c->handles = 2;
	uv_timer_init(sv.ctx->loop, &c->timer);
	c->timer.data = c;
	uv_timer_start(&c->timer, hello_late, HELLO_MS, 0);
	c->tail = &c->lines;
	hs_proto_rd_init(&c->rd);
	c->fp = sink_open(c, &c->out_sink, HS_FR_OUT);
	c->errfp = sink_open(c, &c->err_sink, HS_FR_ERR);
	out_init(&c->out, c->fp, c->errfp, false);
	c->next = sv.clients;
	sv.clients = c;
	return c;
}

static void on_connection(uv_stream_t *server, int status)
{
	struct client *c;
	struct ucred cred = { 0 };
	socklen_t len = sizeof(cred);
	uv_os_fd_t fd = -1;
	struct passwd *pw;

	if (!(c = client_accept(server, status, false)))
		return;
	if (uv_fileno((uv_handle_t *)&c->h, &fd) == 0 &&
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
		c->uid = cred.uid;
		c->gid = cred.gid;
		c->pid = cred.pid;
	} else {
		c->uid = (uid_t)-1;
		c->gid = (gid_t)-1;
	}
	pw = getpwuid(c->uid);
	if (pw)
		snprintf(c->user, sizeof(c->user), "%s", pw->pw_name);
	else
		snprintf(c->user, sizeof(c->user), "#%u", (unsigned)c->uid);
	uv_read_start(CSTREAM(c), client_alloc, client_read);
}

/* "192.0.2.7:4433", "[2001:db8::7]:4433" */
static void addr_name(const struct sockaddr_storage *sa, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";

	if (sa->ss_family == AF_INET6) {
		uv_ip6_name((const struct sockaddr_in6 *)sa, host, sizeof(host));
		snprintf(buf, len, "[%s]:%u", host, ntohs(((const struct sockaddr_in6 *)sa)->sin6_port));
	} else {
		uv_ip4_name((const struct sockaddr_in *)sa, host, sizeof(host));
		snprintf(buf, len, "%s:%u", host, ntohs(((const struct sockaddr_in *)sa)->sin_port));
	}
}

/* a console over TCP: nobody until its certificate or the secret says */
static void on_tcp_connection(uv_stream_t *server, int status)
{
	struct sockaddr_storage sa;
	int len = (int)sizeof(sa);
	struct client *c;

	if (!(c = client_accept(server, status, true)))
		return;
	c->uid = (uid_t)-1;
	c->gid = (gid_t)-1;
	if (uv_tcp_getpeername(&c->h.tcp, (struct sockaddr *)&sa, &len) == 0)
		addr_name(&sa, c->peer, sizeof(c->peer));
	c->tls = hs_xcalloc(1, sizeof(*c->tls));
	hs_tls_init(c->tls, &sv.tls);
	uv_tcp_nodelay(&c->h.tcp, 1);
	uv_read_start(CSTREAM(c), client_alloc, client_read);
}

/* ---- lines, one at a time ------------------------------------------------------- */

static void swap_in(struct client *c)
{
	struct hs_ctx *ctx = sv.ctx;

	sv.saved = ctx->out;
	ctx->out = &c->out;
	ctx->out->where[0] = '\0';
	ctx->set.json = c->json;
	ctx->out->json = c->json;
}

static void swap_out(struct client *c)
{
	struct hs_ctx *ctx = sv.ctx;

	c->json = ctx->set.json;
	ctx->out = sv.saved;
	ctx->set.json = false;
	ctx->out->json = false;
}

static void flush_tick(uv_timer_t *t)
{
	(void)t;
	if (sv.current) {
		fflush(sv.current->fp);
		fflush(sv.current->errfp);
	}
}

/* the current line ended with status (HS_CMD_OK or HS_CMD_FAIL) */
static void line_end(int status)
{
	struct client *c = sv.current;
	uint8_t st = status == HS_CMD_FAIL ? 1 : 0;

	if (!c)
		return;
	if (sv.flush_init)
		uv_timer_stop(&sv.flush);
	swap_out(c);
	fflush(c->fp);
	fflush(c->errfp);
	/* a line cut short by the daemon's end is not done: the console hears
	 * the goodbye instead */
	if (!sv.ctx->quit)
		send_frame(c, HS_FR_DONE, &st, 1);
	client_hold(c);
	sv.current = NULL;
	sv.last = c;
	if (c->closed)
		client_free(c);
	topo_tell_all();	/* the line may have loaded one */
}

static void on_finish(struct hs_ctx *ctx, int status)
{
	(void)ctx;
	line_end(status);
	run_next();
}

/* the next client with a line, in turn after the one served last */
static struct client *next_client(void)
{
	struct client *start = sv.last && sv.last->next ? sv.last->next : sv.clients;

	for (int pass = 0; pass < 2; pass++)
		for (struct client *c = pass ? sv.clients : start; c; c = c->next)
			if (c->lines && !c->gone && !c->held)
				return c;
	return NULL;
}

/* the right a line needs, 0 for none */
static unsigned needs_right(const struct hs_cmd *verb, const char *sub, const char *line)
{
	char *buf, *argv[HS_MAX_WORDS + 1];
	int argc, col, n = 0;
	unsigned bit = 0;

	for (size_t i = 0; i < HS_ARRAY_SIZE(guarded); i++)
		if (strcmp(guarded[i].verb, verb->name) == 0 &&
		    (!guarded[i].sub || (sub && strcmp(guarded[i].sub, sub) == 0)))
			return guarded[i].bit;
	/* a setting of everyone's; the format is the console's own */
	if (strcmp(verb->name, "set") == 0)
		return sub && strcmp(sub, "format") != 0 && strcmp(sub, "pager") != 0 ? R_CONFIGURE : 0;
	if (strcmp(verb->name, "export") != 0 && strcmp(verb->name, "stats") != 0)
		return 0;
	/* export to a file rather than to the console ('-'); stats over a file */
	buf = hs_xstrdup(line);
	argc = hs_split_words(buf, argv, HS_MAX_WORDS, &col);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			continue;
		n++;
		if (strcmp(verb->name, "export") == 0 ? n == 2 && strcmp(argv[i], "-") != 0
						      : strcmp(argv[i], "file") == 0)
			bit = R_CONFIGURE;
	}
	free(buf);
	return bit;
}

/* a line of a console, checked against what consoles may do here */
static int run_client_line(struct client *c, const char *line)
{
	struct hs_ctx *ctx = sv.ctx;
	const struct hs_cmd *verb;
	const char *sub;
	unsigned bit;

	if (hs_check_line(ctx, line, &verb, &sub) < 0)
		return HS_CMD_FAIL;
	if (verb && (strcmp(verb->name, "quit") == 0 || strcmp(verb->name, "source") == 0 ||
		     strcmp(verb->name, "watch") == 0))
		return out_err(ctx->out, "'%s' runs in the console, not in the daemon", verb->name);
	bit = verb ? needs_right(verb, sub, line) : 0;
	if (bit && !may(c, bit)) {
		char w[160];
		slog("warning", "%s refused: '%s%s%s' needs the right '%s'", who(c, w, sizeof(w)),
		     verb->name, sub ? " " : "", sub ? sub : "", right_name(bit));
		return out_err(ctx->out, "%s%s%s: user '%s' may not do this here (the daemon's "
			       "configuration says who may: allow USER %s)", verb->name,
			       sub ? " " : "", sub ? sub : "", c->user, right_name(bit));
	}
	return hs_run_line(ctx, line);
}

static void run_next(void)
{
	struct hs_ctx *ctx = sv.ctx;
	struct client *c;

	while (!sv.current && !ctx->quit && (c = next_client()) != NULL) {
		struct qline *q = c->lines;
		int rc;

		c->lines = q->next;
		if (!c->lines)
			c->tail = &c->lines;
		c->nlines--;
		sv.current = c;
		swap_in(c);
		rc = run_client_line(c, q->text);
		free(q->text);
		free(q);
		if (rc == HS_CMD_PENDING) {
			uv_timer_start(&sv.flush, flush_tick, FLUSH_MS, FLUSH_MS);
			return;
		}
		line_end(rc);
	}
}

/* ---- the socket ------------------------------------------------------------------ */

/* the socket's directory, when it is not there: made (0755, so that
 * consoles reach the socket, whose own mode says who may attach) and,
 * when the daemon will drop root, given to its user, as systemd's
 * RuntimeDirectory= is to a unit's: so that it can remove its socket at
 * its end. One that is there already is left as it is. 0, or -1 said. */
static int sock_dir(struct hs_ctx *ctx, const char *path)
{
	char *dir = hs_xstrdup(path), *slash = strrchr(dir, '/');
	int rc = 0;

	if (!slash || slash == dir) {
		free(dir);
		return 0;	/* in the working directory, or in / */
	}
	*slash = '\0';
	if (mkdir(dir, 0755) < 0) {
		if (errno != EEXIST)
			rc = out_err(ctx->out, "cannot make the socket's directory '%s': %s", dir,
				     strerror(errno));
		free(dir);
		return rc;
	}
	if (chmod(dir, 0755) < 0)
		rc = out_err(ctx->out, "cannot make the socket's directory '%s' 0755: %s", dir,
			     strerror(errno));
	else if (sv.privs.drop && chown(dir, sv.privs.uid, sv.privs.gid) < 0)
		rc = out_err(ctx->out, "cannot give the socket's directory '%s' to user '%s': %s",
			     dir, sv.privs.user, strerror(errno));
	else if (sv.privs.drop)
		slog("info", "made the socket's directory '%s', given to user '%s'", dir,
		     sv.privs.user);
	else
		slog("info", "made the socket's directory '%s'", dir);
	if (rc == 0) {
		sv.sock_dir = dir;	/* removed at the daemon's end */
		return 0;
	}
	free(dir);
	return rc;
}

static int listen_start(struct hs_ctx *ctx)
{
	const char *path = sv.sock_path;
	struct stat st;
	mode_t old;
	int rc;

	if (sock_dir(ctx, path) < 0)
		return -1;

	if (lstat(path, &st) == 0) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		int fd;

		if (!S_ISSOCK(st.st_mode))
			return out_err(ctx->out, "cannot listen on '%s': it exists and is not a socket",
				       path);
		/* a daemon there still answers: leave it; else the socket is stale */
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			close(fd);
			return out_err(ctx->out, "cannot listen on '%s': another daemon listens there",
				       path);
		}
		if (fd >= 0)
			close(fd);
		unlink(path);
	}
	uv_pipe_init(ctx->loop, &sv.listener, 0);
	sv.listening = true;
	old = umask(0177);
	rc = uv_pipe_bind(&sv.listener, path);
	umask(old);
	if (rc == 0 && chmod(path, sv.mode) < 0)
		rc = uv_translate_sys_error(errno);
	if (rc == 0 && sv.has_group && chown(path, (uid_t)-1, sv.gid) < 0)
		rc = uv_translate_sys_error(errno);
	if (rc == 0)
		rc = uv_listen((uv_stream_t *)&sv.listener, 16, on_connection);
	if (rc < 0)
		return out_err(ctx->out, "cannot listen on '%s': %s", path, uv_strerror(rc));
	if (sv.tcp) {
		struct sockaddr_storage sa;
		int len = (int)sizeof(sa);

		uv_tcp_init(ctx->loop, &sv.tcp_listener);
		sv.tcp_listening = true;
		rc = uv_tcp_bind(&sv.tcp_listener, (struct sockaddr *)&sv.tcp_addr, 0);
		if (rc == 0)
			rc = uv_listen((uv_stream_t *)&sv.tcp_listener, 16, on_tcp_connection);
		if (rc < 0)
			return out_err(ctx->out, "cannot listen on TCP '%s': %s", sv.tcp_name,
				       uv_strerror(rc));
		/* port 0 is the kernel's choice: the log says which */
		if (uv_tcp_getsockname(&sv.tcp_listener, (struct sockaddr *)&sa, &len) == 0)
			addr_name(&sa, sv.tcp_name, sizeof(sv.tcp_name));
	}
	return 0;
}

/* capturing and listening: root (or the capabilities it has) goes, as the
 * console's -Z does, keeping CAP_NET_RAW; the history is opened first,
 * and a new one given to the user. What needs more (the fabric's
 * drivers) goes through a broker forked now. */
static int drop_root(struct hs_ctx *ctx)
{
	char err[512];

	if (!sv.privs.drop)
		return 0;
	if (ctx->topo) {
		struct hs_driver_set ds;
		const char *drivers[HS_DRIVER_MAX + 1] = { NULL };

		hs_driver_set(ctx->topo, &ds);
		for (int i = 0; i < ds.n; i++)
			drivers[i] = ds.path[i];
		if (hs_broker_start(ctx->loop, drivers, ctx->lab_state, err, sizeof(err)) < 0)
			return out_err(ctx->out, "%s", err);
	}
	if (hs_ctx_store_early(ctx) && !sv.db_existed && !hs_store_is_pg(ctx->set.db_path))
		hs_privs_give(&sv.privs, ctx->set.db_path, NULL, NULL);
	/* the socket's directory it made: its user may not remove it from
	 * where it is, so a process that stays root does at the end */
	if (sv.sock_dir && hs_privs_rmdir_at_end(sv.sock_dir, err, sizeof(err)) < 0)
		return out_err(ctx->out, "%s", err);
	if (hs_privs_drop(&sv.privs, err, sizeof(err)) < 0)
		return out_err(ctx->out, "%s", err);
	slog("info", "running as user '%s' (uid %u), keeping CAP_NET_RAW only", sv.privs.user,
	     (unsigned)sv.privs.uid);
	return 0;
}

/* the configuration has run: consoles may come */
static void on_idle(struct hs_ctx *ctx)
{
	if (sv.listening)
		return;
	if (listen_start(ctx) < 0 || drop_root(ctx) < 0) {
		ctx->exit_status = 1;
		hs_console_end(ctx);
		return;
	}
	if (sv.tcp)
		slog("info", "ready: configuration '%s' run, consoles attach at '%s' and over TCP "
		     "at %s (TLS)", sv.config, sv.sock_path, sv.tcp_name);
	else
		slog("info", "ready: configuration '%s' run, consoles attach at '%s'", sv.config,
		     sv.sock_path);
}

static void on_event(void *arg, const struct hs_event *ev)
{
	const char *level;
	char text[512];

	(void)arg;
	/* an alert is the operator's whoever's line runs as it fires */
	event_text(ev, &level, text, sizeof(text));
	if (text[0])
		slog(level, "%s", text);
}

static const struct hs_runner_front front = {
	.idle = on_idle,
	.finish = on_finish,
};

/* ---- the daemon ---------------------------------------------------------------- */

static void usage(FILE *fp)
{
	fprintf(fp,
		"usage: hopscope serve [--config FILE] [--socket PATH] [--db PATH] [--name NAME]\n"
		"                      [-Z USER] [--check]\n"
		"\n"
		"  --config FILE   the configuration, a runbook (default " HS_SERVE_CONFIG ")\n"
		"  --socket PATH   where consoles attach (default: its 'listen' line, else\n"
		"                  $HOPSCOPE_SOCKET, else " HS_SERVE_SOCKET ")\n"
		"  --db PATH       history database (default $HOPSCOPE_DB, else ./hopscope.db)\n"
		"  --name NAME     the analyzer's name in the rows it writes (default: the\n"
		"                  host's); 'set analyzer NAME' in the configuration wins\n"
		"  -Z, --user USER once capturing and listening, run as USER keeping\n"
		"                  CAP_NET_RAW (default: its 'user' line, else stay)\n"
		"  --check         check the configuration and exit\n"
		"  -h, --help      this help\n"
		"\n"
		"Consoles attach with 'hopscope --attach [SOCKET]'. See hopscope-serve(1).\n");
}

static void close_handle(uv_handle_t *h, void *arg)
{
	(void)arg;
	if (!uv_is_closing(h))
		uv_close(h, NULL);
}

int hs_serve_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'C' },
		{ "socket", required_argument, NULL, 'S' },
		{ "db", required_argument, NULL, 'D' },
		{ "name", required_argument, NULL, 'N' },
		{ "check", no_argument, NULL, 'K' },
		{ "user", required_argument, NULL, 'Z' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct hs_ctx ctx = { 0 };
	const char *config = HS_SERVE_CONFIG, *sock = NULL, *db = NULL, *name = NULL, *user = NULL;
	bool check = false;
	char **lines = NULL, perr[512];
	int nlines = 0, c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+:hZ:", longopts, NULL)) != -1) {
		switch (c) {
		case 'C': config = optarg; break;
		case 'S': sock = optarg; break;
		case 'D': db = optarg; break;
		case 'N': name = optarg; break;
		case 'K': check = true; break;
		case 'Z': user = optarg; break;
		case 'h':
			usage(stdout);
			return 0;
		case ':':
			fprintf(stderr, "hopscope serve: option '%s' needs a value (try 'hopscope serve "
				"--help')\n", argv[optind - 1]);
			return 2;
		default:
			fprintf(stderr, "hopscope serve: unknown option '%s' (try 'hopscope serve "
				"--help')\n", argv[optind - 1]);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "hopscope serve: unexpected argument '%s' (try 'hopscope serve "
			"--help')\n", argv[optind]);
		return 2;
	}
	if ((sock && !*sock) || (db && !*db)) {
		fprintf(stderr, "hopscope serve: %s needs a path\n", sock && !*sock ? "--socket" : "--db");
		return 2;
	}

	if (name && !hs_analyzer_name_ok(name)) {
		fprintf(stderr, "hopscope serve: bad analyzer name '%s' (1 to %d letters, digits, "
			"'.', '-' or '_')\n", name, HS_ANALYZER_MAX - 1);
		return 2;
	}

	/* a console gone while its answer is written: EPIPE, not the end */
	signal(SIGPIPE, SIG_IGN);
	memset(&sv, 0, sizeof(sv));
	sv.ctx = &ctx;
	sv.config = config;
	sv.mode = 0660;
	if (sock)
		sv.sock_path = hs_xstrdup(sock);
	ctx.loop = uv_default_loop();
	ctx.out = &sv.log_out;
	out_init(ctx.out, stderr, stderr, false);
	ctx.set.trace_timeout_ns = HS_NS_PER_SEC;
	ctx.set.policy = HS_POLICY_DEFAULT;
	ctx.set.db_path = hs_xstrdup(db ? db : hs_db_default());
	ctx.set.analyzer = name ? hs_xstrdup(name) : NULL;
	ctx.set.no_pager = true;
	hs_runner_init(&ctx);

	/* the whole file first: a bad line changes nothing */
	if (user)
		sv.user = hs_xstrdup(user);
	if (conf_read(&ctx, config, sock != NULL, user != NULL, &lines, &nlines) < 0) {
		ctx.exit_status = 1;
		goto out;
	}
	if (!sv.sock_path)
		sv.sock_path = hs_xstrdup(hs_serve_socket());
	if (sv.user) {
		if (hs_privs_plan(sv.user, &sv.privs, perr, sizeof(perr)) < 0) {
			fprintf(stderr, "hopscope serve: -Z: %s\n", perr);
			ctx.exit_status = 2;
			goto out;
		}
		if (sv.privs.note[0])
			slog("warning", "%s", sv.privs.note);
	}
	if (check) {
		printf("configuration '%s' is good: consoles would attach at '%s'%s%s%s\n", config,
		       sv.sock_path, sv.tcp ? " and over TCP at " : "", sv.tcp ? sv.tcp_name : "",
		       sv.tcp ? " (TLS)" : "");
		goto out;
	}
	ctx.lab_state = sv.lab_dir;
	sv.lab_dir = NULL;
	sv.db_existed = access(ctx.set.db_path, F_OK) == 0;
	if (hs_engine_init(&ctx, perr, sizeof(perr)) < 0) {
		if (perr[0])
			out_err(ctx.out, "%s", perr);
		ctx.exit_status = 1;
		goto out;
	}
	hs_sub_events(&ctx.subs, on_event, &ctx);
	uv_timer_init(ctx.loop, &sv.flush);
	sv.flush_init = true;
	uv_timer_init(ctx.loop, &sv.feed_timer);
	sv.feed_init = true;
	sv.recent = hs_xcalloc(FEED_BACKLOG, sizeof(*sv.recent));
	hs_runner_add_lines(&ctx, config, lines, nlines);
	hs_runner_add_input(&ctx, "consoles", true);
	hs_runner_set_front(&ctx, &front);
	if (hs_console_start(&ctx, true) < 0) {
		ctx.exit_status = 1;
		goto fini;
	}
	hs_retention_start(&ctx);
	/* the results of the configuration's verbs, and what a console would
	 * print above its prompt (an alert, a capture's summary), are not
	 * the log's: it tells them in lines of its own (on_event); errors and
	 * warnings go to standard error */
	sv.quiet = fopen("/dev/null", "w");
	if (sv.quiet)
		ctx.out->fp = sv.quiet;
	slog("info", "starting: hopscope %s, pid %d, configuration '%s', history '%s'", VERSION,
	     (int)getpid(), config, ctx.set.db_path);
	hs_runner_start(&ctx);
	if (!ctx.quit)
		uv_run(ctx.loop, UV_RUN_DEFAULT);

	/* a line still running was cancelled by the signal; consoles are told */
	if (sv.current) {
		swap_out(sv.current);
		sv.current = NULL;
	}
	for (struct client *cl = sv.clients; cl; cl = cl->next) {
		send_frame(cl, HS_FR_BYE, "the daemon is stopping", 22);
		client_drop(cl, "info", "detached: the daemon is stopping");
	}
	/* the goodbyes written out: a turn of the loop each, a few at most */
	for (int i = 0; i < 50 && sv.clients; i++)
		uv_run(ctx.loop, UV_RUN_NOWAIT);
	if (sv.listening) {
		uv_close((uv_handle_t *)&sv.listener, NULL);
		unlink(sv.sock_path);
		/* the directory it made goes too, empty (after a drop of root,
		 * by the process kept for it, once this one ended) */
		if (sv.sock_dir && !sv.privs.drop)
			rmdir(sv.sock_dir);
	}
	if (sv.tcp_listening)
		uv_close((uv_handle_t *)&sv.tcp_listener, NULL);
	ctx.out->fp = stderr;
	if (sv.quiet)
		fclose(sv.quiet);
fini:
	hs_console_close(&ctx);
	hs_retention_stop(&ctx);
	hs_unsub_events(&ctx.subs, on_event, &ctx);
	hs_engine_fini(&ctx);
	hs_broker_stop();
	uv_walk(ctx.loop, close_handle, NULL);
	uv_run(ctx.loop, UV_RUN_NOWAIT);
	uv_run(ctx.loop, UV_RUN_DEFAULT);
	uv_loop_close(ctx.loop);
	if (ctx.topo)
		hs_topo_free(ctx.topo);
	slog("info", "stopped: exit status %d", ctx.exit_status);
out:
	hs_runner_free(&ctx);
	for (int i = 0; i < nlines; i++)
		free(lines[i]);
	free(lines);
	while (sv.rules) {
		struct rule *r = sv.rules;
		sv.rules = r->next;
		free(r);
	}
	if (sv.tcp)
		hs_tls_conf_free(&sv.tls);
	free(sv.sock_path);
	free(sv.sock_dir);
	free(sv.lab_dir);
	free(sv.user);
	free(sv.recent);
	free(ctx.set.db_path);
	free(ctx.set.analyzer);
	free(ctx.lab_state);
	return ctx.exit_status;
}
