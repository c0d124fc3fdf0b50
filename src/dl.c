/* dl.c - a library loaded the first time it is needed (dl.h) */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "dl.h"

static void load(struct hs_dl *dl)
{
	const char *name = dl->test_env ? getenv(dl->test_env) : NULL;
	void *lib = dlopen(name && *name ? name : dl->file, RTLD_NOW | RTLD_LOCAL);

	dl->state = -1;
	if (!lib) {
		snprintf(dl->err, sizeof(dl->err), "%s", dlerror());
		return;
	}
	if (!dl->take(lib)) {
		snprintf(dl->err, sizeof(dl->err), "%s", dlerror());
		dlclose(lib);
		return;
	}
	dl->state = 1;
}

int hs_dl_load(struct hs_dl *dl, char *err, size_t errlen)
{
	int state;

	pthread_mutex_lock(&dl->lock);
	if (!dl->state)
		load(dl);
	state = dl->state;
	pthread_mutex_unlock(&dl->lock);
	if (state > 0)
		return 0;
	snprintf(err, errlen, "cannot load %s: %s", dl->what, dl->err);
	return -1;
}
