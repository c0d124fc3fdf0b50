/* engine.c - the pipeline and the analyses that always run on it */
#include <stdio.h>

#include "capture.h"
#include "control.h"
#include "ctx.h"
#include "engine.h"
#include "planck.h"

int hs_engine_init(struct hs_ctx *ctx, char *err, size_t errlen)
{
	err[0] = '\0';
	if (hs_pipeline_init(ctx) < 0)
		return -1;
	if (hs_control_subscribe(ctx) < 0 || hs_planck_subscribe(ctx) < 0) {
		hs_engine_fini(ctx);
		snprintf(err, errlen, "cannot set up the packet pipeline: too many subscribers");
		return -1;
	}
	return 0;
}

void hs_engine_fini(struct hs_ctx *ctx)
{
	hs_pipeline_fini(ctx);
	hs_planck_unsubscribe(ctx);
	hs_control_unsubscribe(ctx);
}
