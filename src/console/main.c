/* main.c - hopscope: options, then the console on one libuv loop */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <locale.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "console.h"
#include "interrupt.h"
#include "mirror.h"
#include "driver.h"
#include "engine.h"
#include "privsep.h"
#include "retention.h"
#include "runner.h"
#include "serve.h"
#include "workers.h"

#define LAB_STATE_DEFAULT "/run/hopscope-lab"
#define LAB_MIRROR_IFACE "hs-mirror"

static void usage(FILE *fp)
{
	fprintf(fp,
		"usage: hopscope [-r FILE [--again] | -i IFACE | --lab [--state DIR]] [--workers N]\n"
		"                [--topo FILE] [--db PATH] [-Z USER] [-f RUNBOOK] [-c 'CMD; CMD']\n"
		"                [--json] [--keep-going] [VERB [ARG...]]\n"
		"       hopscope --attach [SOCKET|HOST:PORT] [--tls-ca FILE] [--tls-cert FILE\n"
		"                --tls-key FILE] [--secret FILE] [-f RUNBOOK] [-c 'CMD; CMD']\n"
		"                [--json] [--keep-going] [VERB [ARG...]]\n"
		"       hopscope serve [--config FILE] [--socket PATH] [--db PATH] [--name NAME]\n"
		"                      [-Z USER] [--check]\n"
		"       hopscope -h | --help | --version\n"
		"\n"
		"  -r, --read FILE       read mirrored packets from a capture file\n"
		"      --again           store FILE's traces even if the history has them\n"
		"      --workers N       read FILE or IFACE with N threads (default: one per core)\n"
		"  -i, --interface IFACE capture mirrored packets live on IFACE\n"
		"      --lab             capture from the lab fabric (hopscope-lab up)\n"
		"      --state DIR       the lab's state directory (default " LAB_STATE_DEFAULT ")\n"
		"      --topo FILE       load the fabric topology\n"
		"      --db PATH         history database (default $HOPSCOPE_DB, else ./hopscope.db)\n"
		"  -Z, --user USER       started as root, run as USER once the capture and\n"
		"                        history are open, keeping CAP_NET_RAW (default\n"
		"                        the user who ran sudo, else nobody; -Z root\n"
		"                        keeps root)\n"
		"      --attach [SOCKET] run the commands in the daemon at SOCKET (a path\n"
		"                        with a '/'; default $HOPSCOPE_SOCKET, else\n"
		"                        " HS_SERVE_SOCKET "), or over TCP with TLS at\n"
		"                        HOST:PORT\n"
		"      --tls-ca FILE     over TCP: the CA that signed the daemon's certificate\n"
		"                        (default the system's)\n"
		"      --tls-cert FILE, --tls-key FILE\n"
		"                        over TCP: the console's certificate and key\n"
		"      --secret FILE     over TCP: the daemon's shared secret (the file's first line;\n"
		"                        no other user may read it: chmod 600 FILE)\n"
		"  -f, --runbook FILE    run the commands of FILE, then exit\n"
		"  -c, --command CMDS    run commands separated by ';', then exit\n"
		"      --json            every verb prints one JSON document (hopscope-json(7))\n"
		"      --keep-going      a runbook carries on after a failed command\n"
		"  -h, --help            this help\n"
		"      --version         print the version\n"
		"\n"
		"A VERB with its arguments runs that one command and exits. Without -f, -c\n"
		"or a VERB the console reads commands from the terminal; 'help' lists them.\n"
		"Where a daemon answers at that socket and none of -r, -i, --lab, --db,\n"
		"--topo, -Z is given, the console attaches to it.\n");
}

static int usage_error(const char *fmt, const char *arg)
{
	fputs("hopscope: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs(" (try 'hopscope --help')\n", stderr);
	return 2;
}

enum { OPT_TOPO = 256, OPT_DB, OPT_JSON, OPT_KEEP, OPT_VERSION, OPT_LAB, OPT_STATE, OPT_AGAIN,
       OPT_WORKERS, OPT_ATTACH, OPT_TLS_CA, OPT_TLS_CERT, OPT_TLS_KEY, OPT_SECRET };

static const struct option longopts[] = {
	{ "read", required_argument, NULL, 'r' },
	{ "interface", required_argument, NULL, 'i' },
	{ "runbook", required_argument, NULL, 'f' },
	{ "command", required_argument, NULL, 'c' },
	{ "topo", required_argument, NULL, OPT_TOPO },
	{ "db", required_argument, NULL, OPT_DB },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "keep-going", no_argument, NULL, OPT_KEEP },
	{ "again", no_argument, NULL, OPT_AGAIN },
	{ "workers", required_argument, NULL, OPT_WORKERS },
	{ "lab", no_argument, NULL, OPT_LAB },
	{ "attach", no_argument, NULL, OPT_ATTACH },
	{ "tls-ca", required_argument, NULL, OPT_TLS_CA },
	{ "tls-cert", required_argument, NULL, OPT_TLS_CERT },
	{ "tls-key", required_argument, NULL, OPT_TLS_KEY },
	{ "secret", required_argument, NULL, OPT_SECRET },
	{ "state", required_argument, NULL, OPT_STATE },
	{ "user", required_argument, NULL, 'Z' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

/* -f and -c run in the order given */
struct batch_item {
	bool is_file;
	const char *arg;
};

struct opts {
	const char *read, *iface, *topo, *db, *state, *user;
	bool json, keep_going, lab, again;
	const char *attach;		/* --attach: the daemon's socket, or HOST:PORT */
	struct hs_attach_tls tls;	/* over TCP */
	unsigned workers;		/* 0: not given */
	struct batch_item *batch;
	int nbatch;
	char **words;		/* hopscope VERB ARG... */
	int nwords;
};

static void file_read(struct hs_ctx *ctx, int status)
{
	if (status < 0 && ctx->exit_status == 0)
		ctx->exit_status = 1;
	hs_runner_start(ctx);
}

/* what the privileges could not do, before any console is up */
static void privs_warn(void *arg, const char *msg)
{
	(void)arg;
	fprintf(stderr, "hopscope: warning: %s\n", msg);
}

static void close_handle(uv_handle_t *h, void *arg)
{
	(void)arg;
	if (!uv_is_closing(h))
		uv_close(h, NULL);
}

/* --lab: the fabric's topology and its mirror interface must be there */
static int lab_check(struct hs_ctx *ctx, const char *dir, char **topo)
{
	size_t n = strlen(dir) + sizeof("/topo");

	*topo = hs_xcalloc(1, n);
	snprintf(*topo, n, "%s/topo", dir);
	if (access(*topo, R_OK) < 0 || if_nametoindex(LAB_MIRROR_IFACE) == 0) {
		out_err(ctx->out, "the lab is not up: run 'hopscope-lab up' first "
			"(no '%s' or no interface '%s')", *topo, LAB_MIRROR_IFACE);
		return -1;
	}
	ctx->lab_state = hs_xstrdup(dir);
	return 0;
}

static int parse(int argc, char **argv, struct opts *o)
{
	int c;

	opterr = 0;
	o->batch = hs_xcalloc((size_t)argc, sizeof(*o->batch));
	/* '+': options end at the first word, which begins a command */
	while ((c = getopt_long(argc, argv, "+:r:i:f:c:Z:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'r': o->read = optarg; break;
		case 'i': o->iface = optarg; break;
		case 'f':
		case 'c':
			o->batch[o->nbatch].is_file = c == 'f';
			o->batch[o->nbatch++].arg = optarg;
			break;
		case OPT_TOPO: o->topo = optarg; break;
		case OPT_DB: o->db = optarg; break;
		case OPT_JSON: o->json = true; break;
		case OPT_KEEP: o->keep_going = true; break;
		case OPT_AGAIN: o->again = true; break;
		case OPT_WORKERS: {
			char err[128];
			if (hs_workers_parse(optarg, &o->workers, err, sizeof(err)) < 0)
				return usage_error("--workers: %s", err);
			break;
		}
		case OPT_LAB: o->lab = true; break;
		case OPT_ATTACH:
			/* its socket, when the next word is a path; or HOST:PORT */
			o->attach = hs_serve_socket();
			if (optind < argc && argv[optind][0] != '-' &&
			    (strchr(argv[optind], '/') || hs_attach_is_tcp(argv[optind])))
				o->attach = argv[optind++];
			break;
		case OPT_TLS_CA: o->tls.ca = optarg; break;
		case OPT_TLS_CERT: o->tls.cert = optarg; break;
		case OPT_TLS_KEY: o->tls.key = optarg; break;
		case OPT_SECRET: o->tls.secret = optarg; break;
		case OPT_STATE: o->state = optarg; break;
		case 'Z': o->user = optarg; break;
		case 'h':
			usage(stdout);
			return 0;
		case OPT_VERSION:
			printf("hopscope %s\n", VERSION);
			return 0;
		case ':':
			return usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	o->words = argv + optind;
	o->nwords = argc - optind;
	if (o->read && o->iface)
		return usage_error("%s", "-r and -i cannot be used together");
	if (o->lab && (o->read || o->iface))
		return usage_error("%s", "--lab cannot be used with -r or -i");
	if (o->state && !o->lab)
		return usage_error("%s", "--state goes with --lab");
	if (o->again && !o->read)
		return usage_error("%s", "--again goes with -r");
	if (o->db && !*o->db)
		return usage_error("%s", "--db needs a path");
	if (o->user && !*o->user)
		return usage_error("%s", "-Z needs a user");
	if (o->attach && (o->read || o->iface || o->lab || o->db || o->topo || o->user ||
			  o->workers))
		return usage_error("%s", "--attach runs commands in the daemon: -r, -i, --lab, "
				   "--db, --topo, -Z and --workers are its configuration's");
	if ((o->tls.ca || o->tls.cert || o->tls.key || o->tls.secret) &&
	    !(o->attach && hs_attach_is_tcp(o->attach)))
		return usage_error("%s", "--tls-ca, --tls-cert, --tls-key and --secret go with "
				   "--attach HOST:PORT");
	if (!o->tls.cert != !o->tls.key)
		return usage_error("%s", "--tls-cert and --tls-key go together");
	return -1;
}

/* standard input, output or error closed at start: the next files opened
 * would take their numbers (and libuv refuses to close its own there).
 * /dev/null stands in, as for a daemon: no input, output discarded. */
static void std_fds(void)
{
	int fd;

	while ((fd = open("/dev/null", O_RDWR)) >= 0 && fd <= STDERR_FILENO)
		;
	if (fd > STDERR_FILENO)
		close(fd);
}

/* the console attached to a daemon: its lines run there */
static int attach_run(struct opts *o, struct hs_ctx *ctx, bool automatic)
{
	bool batch = o->nbatch > 0 || o->nwords > 0;

	if (hs_attach_open(ctx, o->attach, &o->tls) < 0) {
		ctx->exit_status = 1;
		goto out;
	}
	if (automatic)
		fprintf(stderr, "attached to the daemon at '%s' (hopscope serve); -r, -i, --lab "
			"or --db open a console of its own\n", o->attach);
	for (int i = 0; i < o->nbatch; i++) {
		if (!o->batch[i].is_file) {
			hs_runner_add_cmds(ctx, o->batch[i].arg);
		} else if (hs_runner_add_file(ctx, o->batch[i].arg) < 0) {
			ctx->exit_status = 1;
			goto out;
		}
	}
	if (o->nwords > 0)
		hs_runner_add_words(ctx, o->nwords, o->words);
	if (hs_console_start(ctx, batch) < 0) {
		ctx->exit_status = 1;
		goto out;
	}
	hs_runner_start(ctx);
	if (!ctx->quit)
		uv_run(ctx->loop, UV_RUN_DEFAULT);
out:
	hs_console_close(ctx);
	hs_attach_close(ctx);
	hs_runner_free(ctx);
	uv_walk(ctx->loop, close_handle, NULL);
	uv_run(ctx->loop, UV_RUN_NOWAIT);
	uv_run(ctx->loop, UV_RUN_DEFAULT);
	uv_loop_close(ctx->loop);
	free(ctx->set.db_path);
	free(ctx->set.analyzer);
	free(o->batch);
	if (out_check(ctx->out) < 0 && ctx->exit_status == 0)
		ctx->exit_status = 1;
	int sig = hs_interrupt_take();
	if (sig != 0 && ctx->exit_status == 0)
		ctx->exit_status = 128 + sig;
	return ctx->exit_status;
}

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	struct hs_ctx ctx = { 0 };
	struct hs_out out;
	char *lab_topo = NULL;
	const char *topo;
	bool batch, is_file = false;
	const char *source = NULL;
	struct hs_privs privs;
	struct stat dbst = { 0 };
	bool db_existed;
	char perr[512];
	int rc;

	std_fds();
	setlocale(LC_CTYPE, "");
	if (argc > 1 && strcmp(argv[1], "serve") == 0) {
		setvbuf(stdout, NULL, _IOLBF, 0);
		return hs_serve_main(argc - 1, argv + 1);
	}
	rc = parse(argc, argv, &o);
	if (rc >= 0) {
		free(o.batch);
		return rc;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (hs_privs_plan(o.user, &privs, perr, sizeof(perr)) < 0) {
		fprintf(stderr, "hopscope: %s\n", perr);
		free(o.batch);
		return 2;
	}
	if (privs.note[0])
		fprintf(stderr, "hopscope: warning: %s\n", privs.note);

	ctx.loop = uv_default_loop();
	ctx.out = &out;
	out_init(ctx.out, stdout, stderr, o.json);
	ctx.set.json = o.json;
	ctx.set.trace_timeout_ns = HS_NS_PER_SEC;
	ctx.set.policy = HS_POLICY_DEFAULT;
	ctx.set.db_path = hs_xstrdup(o.db ? o.db : hs_db_default());
	ctx.keep_going = o.keep_going;
	ctx.read_again = o.again;
	ctx.set.workers = o.workers;
	batch = o.nbatch > 0 || o.nwords > 0;
	ctx.interactive = !batch && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	hs_runner_init(&ctx);
	/* a daemon answers at the default socket: a console with nothing of
	 * its own to open is one of its consoles */
	if (!o.attach && !o.read && !o.iface && !o.lab && !o.db && !o.topo && !o.user &&
	    !o.workers && hs_attach_socket_there(hs_serve_socket())) {
		o.attach = hs_serve_socket();
		return attach_run(&o, &ctx, true);
	}
	if (o.attach)
		return attach_run(&o, &ctx, false);

	topo = o.topo;
	if (o.lab) {
		if (lab_check(&ctx, o.state ? o.state : LAB_STATE_DEFAULT, &lab_topo) < 0) {
			ctx.exit_status = 1;
			goto out;
		}
		if (!topo)
			topo = lab_topo;
		source = LAB_MIRROR_IFACE;
	} else if (o.read) {
		source = o.read;
		is_file = true;
	} else if (o.iface) {
		source = o.iface;
	}
	if (topo) {
		char err[512];
		ctx.topo = hs_topo_load(topo, err, sizeof(err));
		if (!ctx.topo) {
			out_err(ctx.out, "%s", err);
			ctx.exit_status = 1;
			goto out;
		}
	}
	if (privs.drop) {
		/* the fabric's drivers need root: a broker keeps it, forked now */
		static struct hs_driver_set ds;
		const char *drivers[HS_DRIVER_MAX + 1] = { NULL };

		hs_driver_set(ctx.topo, &ds);
		for (int i = 0; i < ds.n; i++)
			drivers[i] = ds.path[i];
		if (hs_broker_start(ctx.loop, drivers, ctx.lab_state, perr, sizeof(perr)) < 0) {
			out_err(ctx.out, "%s", perr);
			ctx.exit_status = 1;
			goto out;
		}
	}
	db_existed = stat(ctx.set.db_path, &dbst) == 0;
	if (hs_engine_init(&ctx, perr, sizeof(perr)) < 0) {
		if (perr[0])
			out_err(ctx.out, "%s", perr);
		ctx.exit_status = 1;
		goto out;
	}
	for (int i = 0; i < o.nbatch; i++) {
		if (!o.batch[i].is_file) {
			hs_runner_add_cmds(&ctx, o.batch[i].arg);
		} else if (hs_runner_add_file(&ctx, o.batch[i].arg) < 0) {
			ctx.exit_status = 1;
			goto out;
		}
	}
	if (o.nwords > 0)
		hs_runner_add_words(&ctx, o.nwords, o.words);
	if (hs_console_start(&ctx, batch) < 0) {
		ctx.exit_status = 1;
		goto out;
	}
	hs_retention_start(&ctx);
	if (source) {
		if (hs_capture_start(&ctx, source, is_file, 0, 0, 0) < 0) {
			ctx.exit_status = 1;
			goto out;
		}
		/* a first-time user at the prompt learns where to look */
		if (ctx.interactive && !is_file)
			printf("capturing live on '%s'%s; 'watch' shows traces as they come, "
			       "'traces' lists them, 'help' lists every verb\n", source,
			       o.lab ? " (the lab's mirror network)" : "");
	}
	if (privs.drop) {
		/* open what the user may not open: the history, the line history;
		 * then drop root. A history is made here (and given to the user)
		 * only for what may write it: a capture, a verb that stores, a
		 * runbook or the prompt; a read makes none (an empty file is
		 * none, as hs_ctx_store_read has it). The capture above
		 * opened it already or said why not; this open is quiet, and the
		 * verb that needs the history says why it has none. */
		bool open = source ? ctx.store != NULL
				   : ((db_existed && (dbst.st_size > 0 || !S_ISREG(dbst.st_mode))) ||
				      hs_runner_may_store(&ctx)) &&
					     hs_ctx_store_early(&ctx);

		if (open && !db_existed && !hs_store_is_pg(ctx.set.db_path))
			hs_privs_give(&privs, ctx.set.db_path, privs_warn, NULL);
		hs_console_keep_history();
		if (hs_privs_drop(&privs, perr, sizeof(perr)) < 0) {
			out_err(ctx.out, "%s", perr);
			ctx.exit_status = 1;
			goto out;
		}
	}
	/* a runbook sees the whole file; the prompt opens at once */
	if (source && is_file && !ctx.interactive && hs_capture_running(&ctx))
		hs_capture_on_done(&ctx, file_read);
	else
		hs_runner_start(&ctx);
	if (!ctx.quit)
		uv_run(ctx.loop, UV_RUN_DEFAULT);

out:
	hs_console_close(&ctx);
	hs_retention_stop(&ctx);
	hs_engine_fini(&ctx);		/* stops capture, commits history */
	hs_runner_free(&ctx);
	hs_broker_stop();
	uv_walk(ctx.loop, close_handle, NULL);
	/* the first run only clears a uv_stop() made before the loop ran */
	uv_run(ctx.loop, UV_RUN_NOWAIT);
	uv_run(ctx.loop, UV_RUN_DEFAULT);
	if (uv_loop_close(ctx.loop) != 0)
		fprintf(stderr, "hopscope: warning: event loop handles left open\n");
	if (ctx.topo)
		hs_topo_free(ctx.topo);
	free(ctx.set.db_path);
	free(ctx.set.analyzer);
	free(ctx.lab_state);
	free(lab_topo);
	free(o.batch);
	/* results written outside a verb (events, a capture's end) */
	if (out_check(ctx.out) < 0 && ctx.exit_status == 0)
		ctx.exit_status = 1;
	/* a capture's history that could not be written fails a run, not the prompt */
	if (ctx.history_failed && !ctx.interactive && ctx.exit_status == 0)
		ctx.exit_status = 1;
	/* a signal that came too late for the loop still tells the caller */
	rc = hs_interrupt_take();
	if (rc != 0 && ctx.exit_status == 0)
		ctx.exit_status = 128 + rc;
	return ctx.exit_status;
}
