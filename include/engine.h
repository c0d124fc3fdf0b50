/* engine.h - the engine assembled: the packet pipeline, and the analyses
 * that always run on it subscribed to it (the control log, rates and
 * alerts). A front end (the console) starts it, subscribes to its events
 * and asks it; nothing in it knows the front end.
 */
#ifndef HS_ENGINE_H
#define HS_ENGINE_H

#include <stddef.h>

struct hs_ctx;

/* 0, or -1 with the error printed or, when err is not "", in err */
int hs_engine_init(struct hs_ctx *ctx, char *err, size_t errlen);
/* stops the capture (its last traces reach the analyses), commits the
 * history, frees the analyses */
void hs_engine_fini(struct hs_ctx *ctx);

#endif
