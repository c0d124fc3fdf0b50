/* pq.c - libpq, loaded when a PostgreSQL history is first named (pq.h) */
#define HS_PQ_LOADER
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "pq.h"

struct hs_pq hs_pq;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded = -1;
static char load_err[256];

static void load(void)
{
	const char *name = getenv("HOPSCOPE_TEST_LIBPQ");
	void *lib = dlopen(name && *name ? name : HS_PQ_LIBRARY, RTLD_NOW | RTLD_LOCAL);
	struct hs_pq pq;
	void *fn;

	if (!lib) {
		snprintf(load_err, sizeof(load_err), "%s", dlerror());
		return;
	}
	/* dlsym's object pointer taken as a function pointer, as POSIX has it */
#define HS_PQ_SYM(f) \
	if (!(fn = dlsym(lib, #f))) { \
		snprintf(load_err, sizeof(load_err), "%s", dlerror()); \
		dlclose(lib); \
		return; \
	} \
	pq.f = (__typeof__(pq.f))fn;
	HS_PQ_FUNCS(HS_PQ_SYM)
#undef HS_PQ_SYM
	hs_pq = pq;
	loaded = 0;
}

int hs_pq_load(char *err, size_t errlen)
{
	pthread_once(&once, load);
	if (loaded == 0)
		return 0;
	snprintf(err, errlen, "cannot load the PostgreSQL client library: %s", load_err);
	return -1;
}
