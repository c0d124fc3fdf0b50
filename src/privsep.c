/* privsep.c - drop root keeping CAP_NET_RAW; the fabric driver's broker
 *
 * The drop is libcap-ng's capng_change_id: supplementary groups from the
 * user's entry, then gid, then uid, with the bounding set cleared and only
 * CAP_NET_RAW left permitted and effective. Afterwards setuid(0) must fail.
 *
 * Broker protocol on a SOCK_STREAM socketpair, host byte order (both ends
 * are this binary):
 *   request  u32 seq, u32 len, len bytes: argv strings, each NUL-ended
 *   reply    u32 seq, i32 exit status, i32 signal, u32 outlen, u32 errlen,
 *            outlen bytes of stdout, errlen bytes of stderr
 * The broker runs each request on a thread of its own, so that the drivers
 * of a fabric mixing switch kinds read a snapshot at one instant together;
 * the replies come as the drivers finish, whole, in any order.
 */
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <cap-ng.h>

#include "hs.h"
#include "mirror.h"
#include "driver.h"
#include "privsep.h"

#define REQ_MAX		8192		/* request bytes */
#define OUT_MAX		(1u << 20)	/* driver stdout kept (a snapshot: ~9000 ports) */
#define ERR_MAX		2048		/* driver stderr kept */
#define DRIVER_TIMEOUT_MS 60000		/* a hung driver is killed */
#define REPLY_HDR	20

/* the user this console became, "" while it has not dropped root */
static char ran_as[64];

const char *hs_privs_user(void)
{
	return ran_as[0] ? ran_as : NULL;
}

const char *hs_privs_why(int e)
{
	static char why[160];

	if ((e != EACCES && e != EPERM) || !ran_as[0])
		return "";
	snprintf(why, sizeof(why), " (hopscope runs as '%s' once it has dropped root; "
		 "-Z USER runs it as another)", ran_as);
	return why;
}

/* the user who ran sudo, when sudo started this: files written then belong
 * to that user, and that user's own directories are writable */
static const struct passwd *sudo_user(void)
{
	const char *v = getenv("SUDO_UID");
	uint64_t uid;

	if (!v || hs_parse_dec(v, UINT32_MAX - 1, &uid) < 0 || uid == 0)
		return NULL;
	return getpwuid((uid_t)uid);
}

int hs_privs_plan(const char *user, struct hs_privs *p, char *err, size_t errlen)
{
	const struct passwd *pw = NULL;

	bool root = getuid() == 0 || geteuid() == 0;
	bool given = user && *user;

	memset(p, 0, sizeof(*p));
	if (!root && !given)
		return 0;		/* nothing to drop */
	if (!given) {
		user = getenv("HOPSCOPE_USER");
		if ((!user || !*user) && root && (pw = sudo_user()) != NULL)
			user = pw->pw_name;
		else if (!user || !*user)
			user = "nobody";
	}
	if (!pw)
		pw = getpwnam(user);
	if (!pw) {
		snprintf(err, errlen, "no user '%s' to run as (-Z USER; -Z root keeps root)",
			 user);
		return -1;
	}
	if (!root) {
		if (pw->pw_uid != getuid())
			snprintf(p->note, sizeof(p->note), "not started as root, so -Z '%s' "
				 "changes nothing", user);
		return 0;
	}
	if (pw->pw_uid == 0)
		return 0;		/* -Z root */
	p->drop = true;
	p->uid = pw->pw_uid;
	p->gid = pw->pw_gid;
	snprintf(p->user, sizeof(p->user), "%s", pw->pw_name);
	return 0;
}

int hs_privs_drop(const struct hs_privs *p, char *err, size_t errlen)
{
	int rc;

	if (!p->drop)
		return 0;
	capng_clear(CAPNG_SELECT_BOTH);
	if (capng_update(CAPNG_ADD, CAPNG_EFFECTIVE | CAPNG_PERMITTED, CAP_NET_RAW) < 0) {
		snprintf(err, errlen, "cannot keep CAP_NET_RAW");
		return -1;
	}
	rc = capng_change_id((int)p->uid, (int)p->gid, CAPNG_INIT_SUPP_GRP | CAPNG_CLEAR_BOUNDING);
	if (rc < 0) {
		snprintf(err, errlen, "cannot become user '%s': %s (libcap-ng step %d)", p->user,
			 errno ? strerror(errno) : "failed", -rc);
		return -1;
	}
	/* nothing started from here on gains privileges (set-uid files, file caps) */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		snprintf(err, errlen, "cannot set no_new_privs: %s", strerror(errno));
		return -1;
	}
	if (setuid(0) == 0 || seteuid(0) == 0 || getuid() == 0 || geteuid() == 0 ||
	    setgid(0) == 0 || getegid() == 0) {
		snprintf(err, errlen, "dropping root to '%s' did not hold", p->user);
		return -1;
	}
	snprintf(ran_as, sizeof(ran_as), "%s", p->user);
	return 0;
}

/* the reason f was not given away, or NULL: f is opened without following
 * a link and changed through that descriptor, and only when it is a regular
 * file with one name that this process owns (what SQLite made here), never a
 * link or a second name someone else planted; a missing f needs nothing.
 * The descriptor is an O_PATH one: SQLite holds the history open, with
 * POSIX locks on it and its -shm that the close of any other descriptor
 * of those files would drop (another process would then take the -shm as
 * unused and truncate it under this one's map); closing an O_PATH
 * descriptor drops none. */
static const char *give_one(const struct hs_privs *p, const char *f)
{
	struct stat sb;
	const char *why = NULL;
	int fd = open(f, O_PATH | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return errno == ENOENT ? NULL : strerror(errno);
	if (fstat(fd, &sb) < 0)
		why = strerror(errno);
	else if (S_ISLNK(sb.st_mode))
		why = "it is a symbolic link";
	else if (!S_ISREG(sb.st_mode) || sb.st_nlink != 1 || sb.st_uid != geteuid())
		why = "not a file of its own that hopscope made";
	else if (fchownat(fd, "", p->uid, p->gid, AT_EMPTY_PATH) < 0)
		why = strerror(errno);
	close(fd);
	return why;
}

void hs_privs_give(const struct hs_privs *p, const char *path,
		   void (*warn)(void *arg, const char *msg), void *arg)
{
	static const char *const sfx[] = { "", "-wal", "-shm" };
	char f[4096], msg[4096 + 256];

	if (!p->drop || !path)
		return;
	for (size_t i = 0; i < HS_ARRAY_SIZE(sfx); i++) {
		snprintf(f, sizeof(f), "%s%s", path, sfx[i]);
		const char *why = give_one(p, f);
		if (why && warn) {
			snprintf(msg, sizeof(msg), "cannot give '%s' to '%s': %s", f, p->user, why);
			warn(arg, msg);
		}
	}
}

/* ---- the broker process --------------------------------------------------- */

static int read_full(int fd, void *buf, size_t n)
{
	char *b = buf;

	while (n > 0) {
		ssize_t r = read(fd, b, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		b += r;
		n -= (size_t)r;
	}
	return 0;
}

static int write_full(int fd, const void *buf, size_t n)
{
	const char *b = buf;

	while (n > 0) {
		ssize_t w = write(fd, b, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct run_result {
	int32_t status, sig;
	char out[OUT_MAX];
	uint32_t outlen;
	char err[ERR_MAX];
	uint32_t errlen;
};

/* the driver's words for 'snapshot take':
 * DRIVER [--state STATE] snapshot [--at-ns T] */
static int snapshot_argv_check(int argc, char *const *argv, const char *driver,
			       const char *state)
{
	char canon[24];
	uint64_t at;
	int i = 1;

	if (!driver || strcmp(argv[0], driver) != 0)
		return -1;
	if (state) {
		if (argc < 3 || strcmp(argv[1], "--state") != 0 || strcmp(argv[2], state) != 0)
			return -1;
		i = 3;
	}
	if (argc == i + 1)
		return strcmp(argv[i], "snapshot") == 0 ? 0 : -1;
	if (argc != i + 3 || strcmp(argv[i], "snapshot") != 0 || strcmp(argv[i + 1], "--at-ns") != 0 ||
	    hs_parse_dec(argv[i + 2], UINT64_MAX, &at) < 0)
		return -1;
	snprintf(canon, sizeof(canon), "%" PRIu64, at);
	return strcmp(canon, argv[i + 2]) == 0 ? 0 : -1;
}

int hs_driver_argv_check(int argc, char *const *argv, const char *driver, const char *state)
{
	if (argc < 2)
		return -1;
	if (snapshot_argv_check(argc, argv, driver, state) == 0)
		return 0;
	return hs_mirror_argv_check(argc, argv, driver, state);
}

static void result_msg(struct run_result *r, int32_t status, const char *msg)
{
	r->status = status;
	r->errlen = (uint32_t)snprintf(r->err, sizeof(r->err), "%s\n", msg);
	if (r->errlen >= sizeof(r->err))
		r->errlen = sizeof(r->err) - 1;
}

/* run the driver: no shell, stdin /dev/null, stdout and stderr kept */
static void run_driver(const char *driver, char **argv, struct run_result *r)
{
	int po[2], pe[2], st = 0, rc;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t sa;
	sigset_t none, dfl;
	struct pollfd pf[2];
	int64_t deadline = mono_ms() + DRIVER_TIMEOUT_MS;
	bool killed = false;
	pid_t pid;

	if (pipe2(po, O_CLOEXEC) < 0) {
		result_msg(r, 126, "cannot run the fabric's driver: no pipe");
		return;
	}
	if (pipe2(pe, O_CLOEXEC) < 0) {
		close(po[0]);
		close(po[1]);
		result_msg(r, 126, "cannot run the fabric's driver: no pipe");
		return;
	}
	/* posix_spawn, not fork: fork would run libuv's atfork handler, which
	 * closes and reopens descriptors the broker has long since reused */
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, po[1], 1);
	posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
	posix_spawnattr_init(&sa);
	sigemptyset(&none);
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGINT);
	sigaddset(&dfl, SIGPIPE);
	sigaddset(&dfl, SIGTERM);
	posix_spawnattr_setsigdefault(&sa, &dfl);
	posix_spawnattr_setsigmask(&sa, &none);
	posix_spawnattr_setflags(&sa, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
	rc = posix_spawn(&pid, driver, &fa, &sa, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&sa);
	close(po[1]);
	close(pe[1]);
	if (rc != 0) {
		char msg[512];

		close(po[0]);
		close(pe[0]);
		snprintf(msg, sizeof(msg), "cannot run the fabric's driver '%s': %s%s", driver,
			 strerror(rc), hs_driver_hint(rc));
		result_msg(r, 127, msg);
		return;
	}
	pf[0].fd = po[0];
	pf[1].fd = pe[0];
	pf[0].events = pf[1].events = POLLIN;
	while (pf[0].fd >= 0 || pf[1].fd >= 0) {
		int64_t left = deadline - mono_ms();
		int n;

		if (left <= 0 && !killed) {
			kill(pid, SIGKILL);
			killed = true;
		}
		n = poll(pf, 2, left > 0 ? (int)left : 1000);
		if (n < 0 && errno != EINTR)
			break;
		for (int i = 0; i < 2 && n > 0; i++) {
			char buf[4096], *dst = i ? r->err : r->out;
			uint32_t *len = i ? &r->errlen : &r->outlen;
			size_t cap = (i ? sizeof(r->err) : sizeof(r->out)) - 1;
			ssize_t got;

			if (pf[i].fd < 0 || !pf[i].revents)
				continue;
			got = read(pf[i].fd, buf, sizeof(buf));
			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0) {
				close(pf[i].fd);
				pf[i].fd = -1;
				continue;
			}
			if ((size_t)got > cap - *len)
				got = (ssize_t)(cap - *len);	/* keep the start */
			memcpy(dst + *len, buf, (size_t)got);
			*len += (uint32_t)got;
		}
	}
	for (int i = 0; i < 2; i++)
		if (pf[i].fd >= 0)
			close(pf[i].fd);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (WIFSIGNALED(st))
		r->sig = WTERMSIG(st);
	else
		r->status = WEXITSTATUS(st);
}

/* one request, run on a thread of its own */
struct broker_req {
	int fd;
	uint32_t seq;
	const char *driver;		/* NULL: refused */
	char *argv[HS_MIRROR_ARGV_MAX + 1];
	char req[REQ_MAX + 1];
	struct run_result r;
};

static pthread_mutex_t reply_mu = PTHREAD_MUTEX_INITIALIZER;

static void *broker_job(void *arg)
{
	struct broker_req *q = arg;
	uint32_t rep[5];
	bool ok;

	if (!q->driver)
		result_msg(&q->r, 126, "refused: the privileged helper runs only the fabric's "
			   "drivers, for a valid mirror rule or a snapshot");
	else
		run_driver(q->driver, q->argv, &q->r);
	rep[0] = q->seq;
	rep[1] = (uint32_t)q->r.status;
	rep[2] = (uint32_t)q->r.sig;
	rep[3] = q->r.outlen;
	rep[4] = q->r.errlen;
	pthread_mutex_lock(&reply_mu);	/* one reply at a time, whole */
	ok = write_full(q->fd, rep, sizeof(rep)) == 0 &&
	     write_full(q->fd, q->r.out, q->r.outlen) == 0 &&
	     write_full(q->fd, q->r.err, q->r.errlen) == 0;
	pthread_mutex_unlock(&reply_mu);
	if (!ok)
		_exit(0);
	free(q);
	return NULL;
}

static void broker_main(int fd, const char *const *drivers, const char *state)
{
	for (;;) {
		struct broker_req *q = calloc(1, sizeof(*q));
		uint32_t hdr[2];
		int argc = 0;
		size_t off = 0;
		pthread_attr_t at;
		pthread_t t;

		if (!q)
			_exit(1);
		if (read_full(fd, hdr, sizeof(hdr)) < 0 || hdr[1] == 0 || hdr[1] > REQ_MAX ||
		    read_full(fd, q->req, hdr[1]) < 0)
			_exit(0);	/* the console closed (or spoke nonsense) */
		q->fd = fd;
		q->seq = hdr[0];
		q->req[hdr[1]] = '\0';
		if (q->req[hdr[1] - 1] != '\0') {
			argc = -1;
		} else {
			while (off < hdr[1] && argc < HS_MIRROR_ARGV_MAX) {
				q->argv[argc++] = q->req + off;
				off += strlen(q->req + off) + 1;
			}
			if (off < hdr[1])
				argc = -1;
		}
		if (argc > 0)
			q->argv[argc] = NULL;
		for (int i = 0; argc > 0 && drivers[i]; i++)
			if (hs_driver_argv_check(argc, q->argv, drivers[i], state) == 0)
				q->driver = drivers[i];
		pthread_attr_init(&at);
		pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&t, &at, broker_job, q) != 0)
			broker_job(q);	/* no thread: run it here */
		pthread_attr_destroy(&at);
	}
}

/* ---- the console's end ---------------------------------------------------- */

struct pending {
	struct pending *next;
	uint32_t seq;
	hs_broker_cb cb;
	void *arg;
};

struct wreq {
	uv_write_t w;
	uint32_t hdr[2];
	char body[];
};

static struct {
	bool active;
	uv_pipe_t pipe;
	pid_t pid;
	uint32_t seq;
	struct pending *head;
	char *buf;		/* reply bytes read so far */
	size_t len, cap;
} bk;

static void pending_fail(const char *msg)
{
	struct hs_broker_result res = { .exit_status = 126, .err = msg,
					.errlen = msg ? strlen(msg) : 0 };

	while (bk.head) {
		struct pending *p = bk.head;

		bk.head = p->next;
		p->cb(p->arg, msg ? &res : NULL);
		free(p);
	}
}

static void pipe_closed(uv_handle_t *h)
{
	(void)h;
	free(bk.buf);
	bk.buf = NULL;
	bk.len = bk.cap = 0;
}

static void broker_gone(const char *msg)
{
	if (!bk.active)
		return;
	bk.active = false;
	uv_read_stop((uv_stream_t *)&bk.pipe);
	if (!uv_is_closing((uv_handle_t *)&bk.pipe))
		uv_close((uv_handle_t *)&bk.pipe, pipe_closed);
	pending_fail(msg);
	if (bk.pid > 0)
		waitpid(bk.pid, NULL, WNOHANG);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
	(void)h;
	(void)suggested;
	if (bk.cap - bk.len < 16384) {
		bk.cap = bk.cap ? bk.cap * 2 : 65536;
		bk.buf = realloc(bk.buf, bk.cap);
		if (!bk.buf)
			abort();
	}
	*buf = uv_buf_init(bk.buf + bk.len, (unsigned)(bk.cap - bk.len));
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
	(void)s;
	(void)buf;
	if (nread < 0) {
		broker_gone("cannot run the fabric's driver: the privileged helper has exited");
		return;
	}
	bk.len += (size_t)nread;
	while (bk.len >= REPLY_HDR) {
		uint32_t rep[5];
		size_t need;
		struct pending **pp, *p;

		memcpy(rep, bk.buf, sizeof(rep));
		if (rep[3] > OUT_MAX || rep[4] > ERR_MAX) {
			broker_gone("cannot run the fabric's driver: bad answer from the privileged helper");
			return;
		}
		need = REPLY_HDR + rep[3] + rep[4];
		if (bk.len < need)
			return;
		for (pp = &bk.head; *pp && (*pp)->seq != rep[0]; pp = &(*pp)->next)
			;
		p = *pp;
		if (p) {
			struct hs_broker_result res = {
				.exit_status = (int32_t)rep[1],
				.term_signal = (int32_t)rep[2],
				.out = bk.buf + REPLY_HDR, .outlen = rep[3],
				.err = bk.buf + REPLY_HDR + rep[3], .errlen = rep[4],
			};
			*pp = p->next;
			p->cb(p->arg, &res);
			free(p);
		}
		memmove(bk.buf, bk.buf + need, bk.len - need);
		bk.len -= need;
	}
	if (!bk.head && bk.active)
		uv_unref((uv_handle_t *)&bk.pipe);
}

int hs_privs_rmdir_at_end(const char *dir, char *err, size_t errlen)
{
	struct stat was = { 0 };
	int fd[2];
	pid_t pid;

	if (lstat(dir, &was) < 0) {
		snprintf(err, errlen, "cannot watch the directory '%s': %s", dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(was.st_mode)) {
		snprintf(err, errlen, "cannot watch the directory '%s': not a directory", dir);
		return -1;
	}
	if (pipe2(fd, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "cannot watch the directory '%s': %s", dir, strerror(errno));
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "cannot watch the directory '%s': %s", dir, strerror(errno));
		close(fd[0]);
		close(fd[1]);
		return -1;
	}
	if (pid == 0) {
		char b;
		struct stat now;

		prctl(PR_SET_NAME, "hopscope-rmdir");
		close(fd[1]);
		if (dup2(fd[0], 3) < 0)
			_exit(1);
		close_range(0, 2, 0);
		close_range(4, ~0U, 0);	/* the daemon's loop, files and sockets */
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);	/* the daemon's to take: this ends with it */
		/* nothing is ever written: the read ends when the last holder of
		 * the other end, the daemon, does */
		while (read(3, &b, 1) < 0 && errno == EINTR)
			;
		if (lstat(dir, &now) == 0 && S_ISDIR(now.st_mode) && now.st_dev == was.st_dev &&
		    now.st_ino == was.st_ino)
			rmdir(dir);	/* not when something was left in it */
		_exit(0);
	}
	close(fd[0]);	/* fd[1] stays open, unused, until this process ends */
	return 0;
}

int hs_broker_start(uv_loop_t *loop, const char *const *drivers, const char *state,
		    char *err, size_t errlen)
{
	int sv[2], rc;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		snprintf(err, errlen, "cannot start the privileged helper: %s", strerror(errno));
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "cannot start the privileged helper: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		prctl(PR_SET_NAME, "hopscope-priv");
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
		}
		if (dup2(sv[1], 3) < 0)
			_exit(1);
		close_range(4, ~0U, 0);	/* the console's loop, files and sockets */
		signal(SIGINT, SIG_IGN);	/* Ctrl-C is the console's */
		signal(SIGPIPE, SIG_IGN);
		signal(SIGCHLD, SIG_DFL);
		if (getppid() == 1)
			_exit(0);
		broker_main(3, drivers, state);
		_exit(0);
	}
	close(sv[1]);
	rc = uv_pipe_init(loop, &bk.pipe, 0);
	if (rc == 0)
		rc = uv_pipe_open(&bk.pipe, sv[0]);
	if (rc == 0)
		rc = uv_read_start((uv_stream_t *)&bk.pipe, on_alloc, on_read);
	if (rc < 0) {
		snprintf(err, errlen, "cannot start the privileged helper: %s", uv_strerror(rc));
		close(sv[0]);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -1;
	}
	uv_unref((uv_handle_t *)&bk.pipe);	/* idle, it keeps nothing running */
	bk.active = true;
	bk.pid = pid;
	return 0;
}

/* where a driver could not be run: say how to name another */
const char *hs_driver_hint(int err)
{
	if (err != ENOENT && err != EACCES)
		return "";
	return getenv("HOPSCOPE_DRIVER") && *getenv("HOPSCOPE_DRIVER") ?
	       " (named by HOPSCOPE_DRIVER)" : " (set HOPSCOPE_DRIVER to the fabric's driver)";
}

bool hs_broker_active(void)
{
	return bk.active;
}

static void on_written(uv_write_t *w, int status)
{
	(void)status;		/* a dead broker shows as EOF on the read side */
	free(w->data);
}

int hs_broker_run(char *const *argv, hs_broker_cb cb, void *arg)
{
	size_t len = 0, off = 0;
	struct wreq *w;
	struct pending *p;
	uv_buf_t bufs[2];
	int rc;

	if (!bk.active)
		return UV_ENOTCONN;
	for (int i = 0; argv[i]; i++)
		len += strlen(argv[i]) + 1;
	if (len == 0 || len > REQ_MAX)
		return UV_E2BIG;
	w = hs_xcalloc(1, sizeof(*w) + len);
	for (int i = 0; argv[i]; i++) {
		size_t n = strlen(argv[i]) + 1;

		memcpy(w->body + off, argv[i], n);
		off += n;
	}
	w->hdr[0] = ++bk.seq;
	w->hdr[1] = (uint32_t)len;
	w->w.data = w;
	bufs[0] = uv_buf_init((char *)w->hdr, sizeof(w->hdr));
	bufs[1] = uv_buf_init(w->body, (unsigned)len);
	rc = uv_write(&w->w, (uv_stream_t *)&bk.pipe, bufs, 2, on_written);
	if (rc < 0) {
		free(w);
		return rc;
	}
	p = hs_xcalloc(1, sizeof(*p));
	p->seq = bk.seq;
	p->cb = cb;
	p->arg = arg;
	p->next = bk.head;
	bk.head = p;
	uv_ref((uv_handle_t *)&bk.pipe);
	return 0;
}

void hs_broker_stop(void)
{
	broker_gone(NULL);
}
