/* driverun.h - a verb that waits for the fabric's drivers (driver.h)
 *
 * A verb calls hs_driver_run_all() and returns what it returns
 * (HS_CMD_PENDING, or HS_CMD_FAIL with the error printed). When every
 * driver has exited and closed its output, done() gets the results and
 * returns the verb's status, which finishes it, or starts the verb's next
 * step. Ctrl-C stops the wait: done() is not called, the interrupted
 * message is printed as a warning and the drivers finish on their own.
 */
#ifndef HS_DRIVERUN_H
#define HS_DRIVERUN_H

#include "driver.h"

struct hs_ctx;

/* Called once every driver of the run has finished, with their results in
 * the order given (done() may modify their out); returns HS_CMD_OK,
 * HS_CMD_FAIL (with the error printed) or HS_CMD_PENDING when it has
 * started the next run of the same verb. */
typedef int (*hs_driver_done_all)(struct hs_ctx *ctx, struct hs_driver_result *r, int n,
				  void *arg);

/* Run n drivers at once (argvs[i][0] the driver, each NULL-ended); arg
 * (arglen bytes) is copied and handed to done(). what names them in errors
 * ("mirror driver"). */
int hs_driver_run_all(struct hs_ctx *ctx, int n, char **const *argvs, size_t out_max,
		      hs_driver_done_all done, const void *arg, size_t arglen, const char *what,
		      const char *interrupted);

/* the error of a driver that failed: 0 when it exited 0, else -1 with one
 * line printed (its stderr, or how it ended) */
int hs_driver_failed(struct hs_ctx *ctx, const struct hs_driver_result *r, const char *what);

/* a driver's answer that cannot be read (why; or r->out_cut, r->out_nul): -1 with one
 * line printed naming the driver and the switches it serves (kind's) */
int hs_driver_bad_answer(struct hs_ctx *ctx, const struct hs_driver_result *r, const char *kind,
			 const char *what, const char *why);

#endif
