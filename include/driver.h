/* driver.h - running the fabric's driver for a verb
 *
 * The driver is an executable (the lab's is share/lab/hs-driver-lab) run as
 * a child process: uv_spawn, an argv array, no shell. A verb calls
 * hs_driver_run() and returns what it returns (HS_CMD_PENDING, or HS_CMD_FAIL
 * with the error printed). When the driver has exited and closed its output,
 * done() gets the result and returns the verb's status, which finishes it.
 * Ctrl-C stops the wait: done() is not called, the interrupted message is
 * printed as a warning and the driver finishes on its own.
 */
#ifndef HS_DRIVER_H
#define HS_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hs_ctx;
struct hs_topo;

struct hs_driver_result {
	const char *driver;		/* its path */
	int64_t exit_status;
	int term_signal;
	char *out;			/* stdout, NUL-ended; done() may modify it */
	size_t outlen;
	bool out_cut;			/* stdout was longer than out_max: the rest is lost */
	const char *err;		/* stderr's first line, without the "NAME: " prefix */
};

/* returns HS_CMD_OK or HS_CMD_FAIL (with the error printed) */
typedef int (*hs_driver_done)(struct hs_ctx *ctx, const struct hs_driver_result *r, void *arg);

/* Run argv (argv[0] the driver, NULL-ended); arg (arglen bytes) is copied
 * and handed to done(). what names the driver in errors ("mirror driver"). */
int hs_driver_run(struct hs_ctx *ctx, char **argv, size_t out_max, hs_driver_done done,
		  const void *arg, size_t arglen, const char *what, const char *interrupted);

/* the error of a driver that failed: 0 when it exited 0, else -1 with one
 * line printed (its stderr, or how it ended) */
int hs_driver_failed(struct hs_ctx *ctx, const struct hs_driver_result *r, const char *what);

/* the fabric's driver: $HOPSCOPE_DRIVER, else the one topo's switches name
 * (hs-driver-sonic when any switch says "driver sonic", hs-driver-lab
 * otherwise; share/drivers/README), the tree's when the console runs from
 * its build tree (*tree set), else the installed one */
void hs_driver_path(const struct hs_topo *topo, char *buf, size_t len, bool *tree);
/* " (set HOPSCOPE_DRIVER ...)" after an error ERR that running it gave, or "" */
const char *hs_driver_hint(int err);

#endif
