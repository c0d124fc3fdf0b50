/* driver.h - the fabric's driver, run as a child process
 *
 * The driver is an executable (the lab's is share/lab/hs-driver-lab) run as
 * a child process: uv_spawn, an argv array, no shell; or, once the console
 * has dropped root, by the privileged broker (privsep.h), which checks the
 * argv again. When the driver has exited and closed its output, the
 * callback gets the result. Nothing is printed: a verb waits for it through
 * the console (driverun.h).
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
	const char *err;		/* stderr's first line, without the "NAME: " prefix */
};

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

/* the fabric's driver: $HOPSCOPE_DRIVER, else the one topo's switches name
 * (hs-driver-sonic when any switch says "driver sonic", hs-driver-lab
 * otherwise; share/drivers/README), the tree's when the console runs from
 * its build tree (*tree set), else the installed one */
void hs_driver_path(const struct hs_topo *topo, char *buf, size_t len, bool *tree);
/* " (set HOPSCOPE_DRIVER ...)" after an error ERR that running it gave, or "" */
const char *hs_driver_hint(int err);

#endif
