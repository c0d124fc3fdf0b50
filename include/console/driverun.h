/* driverun.h - a verb that waits for the fabric's driver (driver.h)
 *
 * A verb calls hs_driver_run() and returns what it returns (HS_CMD_PENDING,
 * or HS_CMD_FAIL with the error printed). When the driver has exited and
 * closed its output, done() gets the result and returns the verb's status,
 * which finishes it. Ctrl-C stops the wait: done() is not called, the
 * interrupted message is printed as a warning and the driver finishes on
 * its own.
 */
#ifndef HS_DRIVERUN_H
#define HS_DRIVERUN_H

#include "driver.h"

struct hs_ctx;

/* returns HS_CMD_OK or HS_CMD_FAIL (with the error printed) */
typedef int (*hs_driver_done)(struct hs_ctx *ctx, const struct hs_driver_result *r, void *arg);

/* Run argv (argv[0] the driver, NULL-ended); arg (arglen bytes) is copied
 * and handed to done(). what names the driver in errors ("mirror driver"). */
int hs_driver_run(struct hs_ctx *ctx, char **argv, size_t out_max, hs_driver_done done,
		  const void *arg, size_t arglen, const char *what, const char *interrupted);

/* the error of a driver that failed: 0 when it exited 0, else -1 with one
 * line printed (its stderr, or how it ended) */
int hs_driver_failed(struct hs_ctx *ctx, const struct hs_driver_result *r, const char *what);

#endif
