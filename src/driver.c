/* driver.c - run the fabric's driver as a child process for a verb */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "console.h"
#include "driver.h"
#include "privsep.h"
#include "topo.h"

#ifndef HS_LIBEXECDIR
#define HS_LIBEXECDIR "/usr/local/libexec/hopscope"
#endif

struct driver_job {
	struct hs_ctx *ctx;		/* NULL once the console stopped waiting */
	hs_driver_done done;
	void *arg;
	const char *what, *interrupted;
	char driver[PATH_MAX];
	uv_process_t proc;
	uv_pipe_t out, err;
	int waiting;			/* exit, stdout EOF, stderr EOF */
	int open;			/* handles not closed yet */
	int64_t exit_status;
	int term_signal;
	char rd[65536];
	char *obuf;
	size_t olen, ocap, omax;
	bool cut;
	char ebuf[2048];
	size_t elen;
};

/* the job the console waits for (one verb is pending at a time) */
static struct driver_job *current_job;

/* the driver the topology's switches name: sonic when any switch has it */
static const char *driver_name(const struct hs_topo *topo)
{
	for (int i = 0; topo && i < topo->nsw; i++)
		if (strcmp(topo->sw[i].driver, "sonic") == 0)
			return "hs-driver-sonic";
	return "hs-driver-lab";
}

void hs_driver_path(const struct hs_topo *topo, char *buf, size_t len, bool *tree)
{
	const char *env = getenv("HOPSCOPE_DRIVER");
	const char *name = driver_name(topo);
	char abs[PATH_MAX];

	*tree = false;
#if defined(HS_BUILDDIR) && defined(HS_SRCDIR)
	{
		char exe[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		size_t bl = strlen(HS_BUILDDIR);

		if (n > 0) {
			exe[n] = '\0';
			*tree = strncmp(exe, HS_BUILDDIR, bl) == 0 && exe[bl] == '/';
		}
	}
#endif
	/* the SONiC driver reads the console's topology (the switches' redis
	 * addresses); set before the broker forks, so what it runs sees it too */
	if (strcmp(name, "hs-driver-sonic") == 0 && topo && topo->path &&
	    realpath(topo->path, abs))
		setenv("HOPSCOPE_TOPO", abs, 0);
	/* the environment first, then the tree's driver, then the installed one */
	if (env && *env)
		snprintf(buf, len, "%s", env);
	else
		snprintf(buf, len, "%s/%s", HS_LIBEXECDIR, name);
#if defined(HS_BUILDDIR) && defined(HS_SRCDIR)
	if (*tree && !(env && *env) && strcmp(name, "hs-driver-lab") == 0)
		snprintf(buf, len, "%s/share/lab/%s", HS_SRCDIR, name);
	else if (*tree && !(env && *env))
		snprintf(buf, len, "%s/%s", HS_BUILDDIR, name);
	/* the tree's driver runs the tree's snapshot reader; set before the
	 * broker forks, so what it runs sees it too */
	if (*tree)
		setenv("HOPSCOPE_SNAP", HS_BUILDDIR "/hs-snap", 0);
#endif
}

/* where a driver could not be run: say how to name another */
const char *hs_driver_hint(int err)
{
	if (err != ENOENT && err != EACCES)
		return "";
	return getenv("HOPSCOPE_DRIVER") && *getenv("HOPSCOPE_DRIVER") ?
	       " (named by HOPSCOPE_DRIVER)" : " (set HOPSCOPE_DRIVER to the fabric's driver)";
}

int hs_driver_failed(struct hs_ctx *ctx, const struct hs_driver_result *r, const char *what)
{
	if (r->term_signal)
		return out_err(&ctx->out, "%s '%s' killed by signal %d", what, r->driver,
			       r->term_signal);
	if (r->exit_status == 0)
		return 0;
	if (*r->err)
		return out_err(&ctx->out, "%s", r->err);
	return out_err(&ctx->out, "%s '%s' failed with status %" PRId64, what, r->driver,
		       r->exit_status);
}

static void job_closed(uv_handle_t *h)
{
	struct driver_job *job = h->data;

	if (--job->open == 0) {
		free(job->obuf);
		free(job->arg);
		free(job);
	}
}

static void job_report(struct driver_job *job)
{
	struct hs_ctx *ctx = job->ctx;
	struct hs_driver_result r = {
		.driver = job->driver,
		.exit_status = job->exit_status,
		.term_signal = job->term_signal,
		.outlen = job->olen,
		.out_cut = job->cut,
	};
	const char *base = strrchr(job->driver, '/');
	char *msg = job->ebuf;
	size_t bl;
	int st;

	if (!job->obuf)
		job->obuf = hs_xcalloc(1, 1);
	job->obuf[job->olen] = '\0';
	job->ebuf[job->elen] = '\0';
	/* "hs-driver-lab: cannot ..." -> "cannot ..." */
	base = base ? base + 1 : job->driver;
	bl = strlen(base);
	if (strncmp(msg, base, bl) == 0 && msg[bl] == ':' && msg[bl + 1] == ' ')
		msg += bl + 2;
	msg[strcspn(msg, "\n")] = '\0';
	for (size_t n = strlen(msg); n && msg[n - 1] == ' '; n--)
		msg[n - 1] = '\0';
	r.out = job->obuf;
	r.err = msg;
	st = job->done(ctx, &r, job->arg);
	ctx->cancel = NULL;
	current_job = NULL;
	hs_cmd_finish(ctx, st < 0 ? HS_CMD_FAIL : HS_CMD_OK);
}

static void job_step(struct driver_job *job)
{
	if (--job->waiting > 0)
		return;
	if (job->ctx)
		job_report(job);
	uv_close((uv_handle_t *)&job->proc, job_closed);
	uv_close((uv_handle_t *)&job->out, job_closed);
	uv_close((uv_handle_t *)&job->err, job_closed);
}

static void on_exit_cb(uv_process_t *p, int64_t exit_status, int term_signal)
{
	struct driver_job *job = p->data;

	job->exit_status = exit_status;
	job->term_signal = term_signal;
	job_step(job);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
	struct driver_job *job = h->data;

	(void)suggested;
	*buf = uv_buf_init(job->rd, sizeof(job->rd));
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
	struct driver_job *job = s->data;
	size_t n;

	if (nread < 0) {
		uv_read_stop(s);
		job_step(job);
		return;
	}
	n = (size_t)nread;
	if (s == (uv_stream_t *)&job->err) {
		if (n > sizeof(job->ebuf) - 1 - job->elen)
			n = sizeof(job->ebuf) - 1 - job->elen;	/* the first lines say why */
		memcpy(job->ebuf + job->elen, buf->base, n);
		job->elen += n;
		return;
	}
	if (n > job->omax - job->olen) {
		n = job->omax - job->olen;	/* keep the start, drop the rest */
		job->cut = true;
	}
	if (job->olen + n + 1 > job->ocap) {
		size_t cap = job->ocap ? job->ocap : 4096;

		while (cap < job->olen + n + 1)
			cap *= 2;
		job->obuf = realloc(job->obuf, cap);
		if (!job->obuf)
			abort();
		job->ocap = cap;
	}
	memcpy(job->obuf + job->olen, buf->base, n);
	job->olen += n;
}

/* the broker ran the driver for us (res NULL: the console is closing) */
static void job_brokered(void *arg, const struct hs_broker_result *res)
{
	struct driver_job *job = arg;

	if (res && job->ctx) {
		size_t n = res->outlen;
		if (n > job->omax) {
			n = job->omax;
			job->cut = true;
		}
		job->obuf = hs_xcalloc(1, n + 1);
		memcpy(job->obuf, res->out, n);
		job->olen = n;
		job->elen = res->errlen < sizeof(job->ebuf) - 1 ? res->errlen : sizeof(job->ebuf) - 1;
		memcpy(job->ebuf, res->err, job->elen);
		job->exit_status = res->exit_status;
		job->term_signal = res->term_signal;
		job_report(job);
	} else if (job->ctx && current_job == job) {
		job->ctx->cancel = NULL;
		current_job = NULL;
	}
	free(job->obuf);
	free(job->arg);
	free(job);
}

/* Ctrl-C: stop waiting; the driver finishes (or undoes) its work alone */
static void job_cancel(struct hs_ctx *ctx)
{
	ctx->cancel = NULL;
	if (current_job) {
		out_warn(&ctx->out, "%s", current_job->interrupted);
		current_job->ctx = NULL;
	}
	current_job = NULL;
	hs_cmd_finish(ctx, HS_CMD_FAIL);
}

int hs_driver_run(struct hs_ctx *ctx, char **argv, size_t out_max, hs_driver_done done,
		  const void *arg, size_t arglen, const char *what, const char *interrupted)
{
	struct driver_job *job = hs_xcalloc(1, sizeof(*job));
	uv_process_options_t opt = { 0 };
	uv_stdio_container_t stdio[3];
	int rc;

	job->ctx = ctx;
	job->done = done;
	job->what = what;
	job->interrupted = interrupted;
	job->omax = out_max;
	job->arg = hs_xcalloc(1, arglen ? arglen : 1);
	if (arglen)
		memcpy(job->arg, arg, arglen);
	snprintf(job->driver, sizeof(job->driver), "%s", argv[0]);

	if (hs_broker_active()) {
		rc = hs_broker_run(argv, job_brokered, job);
		if (rc < 0) {
			free(job->arg);
			free(job);
			return out_err(&ctx->out, "cannot run %s '%s': %s%s", what, argv[0],
				       uv_strerror(rc), hs_driver_hint(-rc));
		}
		current_job = job;
		ctx->cancel = job_cancel;
		return HS_CMD_PENDING;
	}
	uv_pipe_init(ctx->loop, &job->out, 0);
	uv_pipe_init(ctx->loop, &job->err, 0);
	job->proc.data = job->out.data = job->err.data = job;
	stdio[0].flags = UV_IGNORE;
	stdio[1].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
	stdio[1].data.stream = (uv_stream_t *)&job->out;
	stdio[2].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
	stdio[2].data.stream = (uv_stream_t *)&job->err;
	opt.file = job->driver;
	opt.args = argv;
	opt.stdio = stdio;
	opt.stdio_count = 3;
	opt.exit_cb = on_exit_cb;

	job->open = 3;
	rc = uv_spawn(ctx->loop, &job->proc, &opt);
	if (rc < 0) {
		job->ctx = NULL;
		uv_close((uv_handle_t *)&job->proc, job_closed);
		uv_close((uv_handle_t *)&job->out, job_closed);
		uv_close((uv_handle_t *)&job->err, job_closed);
		return out_err(&ctx->out, "cannot run %s '%s': %s%s", what, argv[0], uv_strerror(rc),
			       hs_driver_hint(-rc));
	}
	job->waiting = 3;
	uv_read_start((uv_stream_t *)&job->out, on_alloc, on_read);
	uv_read_start((uv_stream_t *)&job->err, on_alloc, on_read);
	current_job = job;
	ctx->cancel = job_cancel;
	return HS_CMD_PENDING;
}
