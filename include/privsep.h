/* privsep.h - dropping root after the privileged opens, and a small broker
 *
 * Started as root, hopscope opens what needs root first (the capture given
 * with -i or --lab, the history, the line-history file), then becomes an
 * unprivileged user (-Z USER, default nobody) keeping only CAP_NET_RAW, so a
 * later 'capture start IFACE', 'probe' or 'traceroute' still works.
 *
 * What needs more than CAP_NET_RAW (the fabric's driver: ip netns exec,
 * iptables, the snapshot readers) goes through a broker forked before the
 * drop. It keeps root, is joined to the console by a socketpair, and does
 * one thing: run the driver fixed when it started, with an argv it checks
 * again (exactly what 'mirror' builds from a valid rule, or 'snapshot
 * take''s fixed words), no shell, and send back the exit status, stdout and
 * stderr.
 */
#ifndef HS_PRIVSEP_H
#define HS_PRIVSEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

struct hs_privs {
	bool drop;		/* root now, and a user to become */
	uid_t uid;
	gid_t gid;
	char user[64];
	char note[192];		/* a warning for whoever started it, "" none */
};

/* Decide what to become. user is -Z (NULL: $HOPSCOPE_USER, else the user
 * who ran sudo when $SUDO_UID names one, else "nobody");
 * "root" or a user with uid 0 keeps root. Not root: nothing to drop (and
 * p->note says so when another user was asked for). Returns 0, or -1 with
 * the reason in err (unknown user). */
int hs_privs_plan(const char *user, struct hs_privs *p, char *err, size_t errlen);

/* the user hopscope became, or NULL while it has not dropped root */
const char *hs_privs_user(void);
/* for an error errno e about a file: " (hopscope runs as 'nobody' once it
 * has dropped root; -Z USER runs it as another)" when e is a refusal of
 * permission after the drop, else "" */
const char *hs_privs_why(int e);

/* Become p's user (its groups, gid, uid) keeping CAP_NET_RAW only, and check
 * that root cannot be regained. Returns 0, or -1 with the reason in err. */
int hs_privs_drop(const struct hs_privs *p, char *err, size_t errlen);

/* Give a file hopscope just created as root (and its SQLite -wal and -shm)
 * to p's user, so it can be reopened after the drop: each through a
 * descriptor opened with O_NOFOLLOW, and only a regular file with one name
 * that root owns; anything else (a planted link) is left alone, and
 * warn(arg, msg) says so (one line each; warn may be NULL). */
void hs_privs_give(const struct hs_privs *p, const char *path,
		   void (*warn)(void *arg, const char *msg), void *arg);

/* A directory root made for the one who drops it (a daemon's socket's,
 * given to p's user), in a directory that user cannot write to: removed
 * once that process ends, however it ends, by a process forked now that
 * keeps root for that alone (it waits for its parent's end, then removes
 * the directory if it is the same one and empty). 0, or -1 with err. */
int hs_privs_rmdir_at_end(const char *dir, char *err, size_t errlen);

/* ---- the broker -------------------------------------------------------- */

/* the driver's result; out and err are not NUL-terminated */
struct hs_broker_result {
	int64_t exit_status;
	int term_signal;
	const char *out;
	size_t outlen;
	const char *err;
	size_t errlen;
};

/* res is NULL when the console shuts down with the request unanswered */
typedef void (*hs_broker_cb)(void *arg, const struct hs_broker_result *res);

/* Fork the broker (as root, before the drop) for the drivers at the paths
 * of drivers (NULL-ended: the fabric's, one per switch kind); state is the
 * lab state directory the console passes (NULL: none). Returns 0 or -1 with
 * err. */
int hs_broker_start(uv_loop_t *loop, const char *const *drivers, const char *state,
		    char *err, size_t errlen);
bool hs_broker_active(void);
/* ask the broker to run argv (argv[0] the driver); cb is called once */
int hs_broker_run(char *const *argv, hs_broker_cb cb, void *arg);
/* close the broker; unanswered requests get cb(arg, NULL) */
void hs_broker_stop(void);

/* " (set HOPSCOPE_DRIVER ...)" after an error ERR that running a driver gave, or "" */
const char *hs_driver_hint(int err);

/* what the broker runs: a mirror argv (hs_mirror_argv_check), or exactly
 * DRIVER [--state STATE] snapshot [--at-ns T]. 0 or -1. */
int hs_driver_argv_check(int argc, char *const *argv, const char *driver, const char *state);

#endif
