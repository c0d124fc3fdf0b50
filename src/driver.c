/* driver.c - run the fabric's drivers as child processes (driver.h) */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "driver.h"
#include "hs.h"
#include "privsep.h"
#include "topo.h"

#ifndef HS_LIBEXECDIR
#define HS_LIBEXECDIR "/usr/local/libexec/hopscope"
#endif

struct hs_driver_job {
	hs_driver_cb cb;		/* NULL once its owner stopped waiting */
	void *arg;
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

/* the switch kinds the topology's switches name, lab first */
static int fabric_kinds(const struct hs_topo *topo, const char **kinds)
{
	static const char *const known[] = { "lab", "sonic" };
	int n = 0;

	for (size_t k = 0; k < HS_ARRAY_SIZE(known); k++) {
		bool used = !topo && k == 0;

		for (int i = 0; topo && i < topo->nsw && !used; i++)
			used = strcmp(topo->sw[i].driver, known[k]) == 0;
		if (used)
			kinds[n++] = known[k];
	}
	if (n == 0)
		kinds[n++] = known[0];
	return n;
}

void hs_driver_set(const struct hs_topo *topo, struct hs_driver_set *set)
{
	const char *env = getenv("HOPSCOPE_DRIVER");
	bool tree = false;
	char abs[PATH_MAX];

	memset(set, 0, sizeof(*set));
#if defined(HS_BUILDDIR) && defined(HS_SRCDIR)
	{
		char exe[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		size_t bl = strlen(HS_BUILDDIR);

		if (n > 0) {
			exe[n] = '\0';
			tree = strncmp(exe, HS_BUILDDIR, bl) == 0 && exe[bl] == '/';
		}
	}
	/* the tree's driver runs the tree's snapshot reader; set before the
	 * broker forks, so what it runs sees it too */
	if (tree)
		setenv("HOPSCOPE_SNAP", HS_BUILDDIR "/hs-snap", 0);
#endif
	set->tree = tree;
	/* the environment names one driver for every switch */
	if (env && *env) {
		set->n = 1;
		set->kind[0] = NULL;
		snprintf(set->path[0], sizeof(set->path[0]), "%s", env);
		return;
	}
	set->n = fabric_kinds(topo, set->kind);
	for (int i = 0; i < set->n; i++) {
		bool lab = strcmp(set->kind[i], "lab") == 0;

		/* the SONiC driver reads the console's topology (the switches'
		 * redis addresses); set before the broker forks */
		if (!lab && topo && topo->path && realpath(topo->path, abs))
			setenv("HOPSCOPE_TOPO", abs, 0);
		/* the tree's driver, else the installed one */
		snprintf(set->path[i], sizeof(set->path[i]), "%s/hs-driver-%s", HS_LIBEXECDIR,
			 set->kind[i]);
#if defined(HS_BUILDDIR) && defined(HS_SRCDIR)
		if (tree && lab)
			snprintf(set->path[i], sizeof(set->path[i]), "%s/share/lab/hs-driver-lab",
				 HS_SRCDIR);
		else if (tree)
			snprintf(set->path[i], sizeof(set->path[i]), "%s/hs-driver-%s", HS_BUILDDIR,
				 set->kind[i]);
#endif
	}
}

bool hs_driver_serves(const struct hs_topo *topo, const char *kind, const char *sw)
{
	int i = topo ? hs_topo_switch_by_name(topo, sw) : -1;

	if (!kind)
		return true;
	return i < 0 ? strcmp(kind, "lab") == 0 : strcmp(topo->sw[i].driver, kind) == 0;
}

int hs_driver_switches(const struct hs_topo *topo, const char *kind, const char *list,
		       char *out, size_t len)
{
	size_t off = 0;

	out[0] = '\0';
	if (strcmp(list, "all") == 0) {
		snprintf(out, len, "all");
		return 1;
	}
	for (const char *p = list; *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] == ',')) {
		char name[HS_NAME_MAX];

		snprintf(name, sizeof(name), "%.*s", (int)strcspn(p, ","), p);
		if (!hs_driver_serves(topo, kind, name))
			continue;
		off += (size_t)snprintf(out + off, off < len ? len - off : 0, "%s%s",
					off ? "," : "", name);
	}
	return off > 0 && off < len;
}

void hs_driver_served(const struct hs_topo *topo, const char *kind, char *out, size_t len)
{
	size_t off = 0;

	out[0] = '\0';
	for (int i = 0; topo && i < topo->nsw && off < len; i++)
		if (hs_driver_serves(topo, kind, topo->sw[i].name))
			off += (size_t)snprintf(out + off, len - off, "%s%s", off ? "," : "",
						topo->sw[i].name);
	if (!out[0])
		snprintf(out, len, "none known");
}

static void job_closed(uv_handle_t *h)
{
	struct hs_driver_job *job = h->data;

	if (--job->open == 0) {
		free(job->obuf);
		free(job);
	}
}

static void job_report(struct hs_driver_job *job)
{
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
	r.out_nul = memchr(job->obuf, '\0', job->olen) != NULL;
	r.err = msg;
	hs_driver_cb cb = job->cb;
	job->cb = NULL;
	cb(job->arg, &r);
}

static void job_step(struct hs_driver_job *job)
{
	if (--job->waiting > 0)
		return;
	if (job->cb)
		job_report(job);
	uv_close((uv_handle_t *)&job->proc, job_closed);
	uv_close((uv_handle_t *)&job->out, job_closed);
	uv_close((uv_handle_t *)&job->err, job_closed);
}

static void on_exit_cb(uv_process_t *p, int64_t exit_status, int term_signal)
{
	struct hs_driver_job *job = p->data;

	job->exit_status = exit_status;
	job->term_signal = term_signal;
	job_step(job);
}

static void on_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
	struct hs_driver_job *job = h->data;

	(void)suggested;
	*buf = uv_buf_init(job->rd, sizeof(job->rd));
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
	struct hs_driver_job *job = s->data;
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
	struct hs_driver_job *job = arg;

	if (res && job->cb) {
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
	} else if (job->cb) {
		job->cb(job->arg, NULL);
	}
	free(job->obuf);
	free(job);
}

void hs_driver_abandon(struct hs_driver_job *job)
{
	if (job)
		job->cb = NULL;
}

struct hs_driver_job *hs_driver_spawn(uv_loop_t *loop, char **argv, size_t out_max,
				      hs_driver_cb cb, void *arg, int *err)
{
	struct hs_driver_job *job = hs_xcalloc(1, sizeof(*job));
	uv_process_options_t opt = { 0 };
	uv_stdio_container_t stdio[3];
	int rc;

	job->cb = cb;
	job->arg = arg;
	job->omax = out_max;
	snprintf(job->driver, sizeof(job->driver), "%s", argv[0]);

	if (hs_broker_active()) {
		rc = hs_broker_run(argv, job_brokered, job);
		if (rc < 0) {
			free(job);
			*err = rc;
			return NULL;
		}
		return job;
	}
	uv_pipe_init(loop, &job->out, 0);
	uv_pipe_init(loop, &job->err, 0);
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
	rc = uv_spawn(loop, &job->proc, &opt);
	if (rc < 0) {
		job->cb = NULL;
		uv_close((uv_handle_t *)&job->proc, job_closed);
		uv_close((uv_handle_t *)&job->out, job_closed);
		uv_close((uv_handle_t *)&job->err, job_closed);
		*err = rc;
		return NULL;
	}
	job->waiting = 3;
	uv_read_start((uv_stream_t *)&job->out, on_alloc, on_read);
	uv_read_start((uv_stream_t *)&job->err, on_alloc, on_read);
	return job;
}
