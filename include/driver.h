/* driver.h - the fabric's drivers, run as child processes
 *
 * A driver is an executable (the lab's is share/lab/hs-driver-lab, SONiC's
 * hs-driver-sonic) run as a child process: uv_spawn, an argv array, no
 * shell; or, once the console has dropped root, by the privileged broker
 * (privsep.h), which checks the argv again. A fabric mixing switch kinds
 * has one driver per kind, each given the switches it serves. When a
 * driver has exited and closed its output, the callback gets the result.
 * Nothing is printed: a verb waits for its drivers through the console
 * (driverun.h).
 */
#ifndef HS_DRIVER_H
#define HS_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

struct hs_topo;

struct hs_driver_result {
	const char *driver;		/* its path */
	int64_t exit_status;
	int term_signal;
	char *out;			/* stdout, NUL-ended; the callback may modify it */
	size_t outlen;
	bool out_cut;			/* stdout was longer than out_max: the rest is lost */
	bool out_nul;			/* stdout held a NUL byte: it is no text */
	const char *err;		/* stderr's first line, without the "NAME: " prefix */
};

#define HS_DRIVER_MAX	4	/* drivers of one fabric (one per switch kind) */

struct hs_driver_job;
/* r is NULL when the broker closed before it answered (the console ends) */
typedef void (*hs_driver_cb)(void *arg, const struct hs_driver_result *r);

/* Run argv (argv[0] the driver, NULL-ended) on loop, keeping the first
 * out_max bytes of its stdout; cb gets the result once. NULL with *err a
 * libuv error code (negative) when it cannot be run. */
struct hs_driver_job *hs_driver_spawn(uv_loop_t *loop, char **argv, size_t out_max,
				      hs_driver_cb cb, void *arg, int *err);
/* stop waiting for job: cb is not called; the driver finishes (or undoes)
 * its work alone */
void hs_driver_abandon(struct hs_driver_job *job);

/* The fabric's drivers: $HOPSCOPE_DRIVER alone (kind NULL: every switch),
 * else one per kind the topology's switches name ("driver lab|sonic"; lab
 * when none), lab first: hs-driver-KIND, the tree's when the console runs
 * from its build tree (tree set), else the installed one. */
struct hs_driver_set {
	int n;
	bool tree;
	const char *kind[HS_DRIVER_MAX];
	char path[HS_DRIVER_MAX][4096];
};
void hs_driver_set(const struct hs_topo *topo, struct hs_driver_set *set);
/* whether the driver of kind serves switch sw (kind NULL: every one; a
 * switch the topology does not name: the lab's) */
bool hs_driver_serves(const struct hs_topo *topo, const char *kind, const char *sw);
/* the part of list ("all" or "SW,SW") kind's driver serves, in out ("all",
 * or the switches); 0 when none */
int hs_driver_switches(const struct hs_topo *topo, const char *kind, const char *list,
		       char *out, size_t len);
/* the switches of topo the driver of kind serves, "SW,SW" in out */
void hs_driver_served(const struct hs_topo *topo, const char *kind, char *out, size_t len);

#endif
