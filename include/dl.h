/* dl.h - a library loaded the first time it is needed
 *
 * Libraries that only a few runs need (libpq for a PostgreSQL history,
 * libssl for consoles over TCP) are not linked: each, and the libraries
 * it needs, would be loaded and relocated at every start. Such a library
 * has a loader: its file, and a function that takes the functions used
 * from it (pq.c, console/ssl.c). hs_dl_load opens it once, for whichever
 * thread asks first, and says the same thing to every later caller.
 */
#ifndef HS_DL_H
#define HS_DL_H

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

struct hs_dl {
	const char *file;	/* the library, as dlopen takes it */
	const char *test_env;	/* a variable naming another file, for the tests */
	const char *what;	/* what it is, for the error: "the TLS library" */
	/* take what is used from the opened library: false when a function
	 * is missing (dlerror says which) */
	bool (*take)(void *lib);
	pthread_mutex_t lock;
	int state;		/* 0 not tried yet, 1 loaded, -1 failed */
	char err[256];		/* when it failed: what dlopen or dlsym said */
};

#define HS_DL_INIT(file, test_env, what, take) \
	{ (file), (test_env), (what), (take), PTHREAD_MUTEX_INITIALIZER, 0, "" }

/* in a take(): the function f of lib into fns.f, or return false; dlsym's
 * object pointer taken as a function pointer, as POSIX has it */
#define HS_DL_SYM(lib, fns, f) \
	do { \
		void *fn_ = dlsym((lib), #f); \
		if (!fn_) \
			return false; \
		(fns).f = (__typeof__((fns).f))fn_; \
	} while (0)

/* 0, or -1 with err "cannot load WHAT: what failed" (one line) */
int hs_dl_load(struct hs_dl *dl, char *err, size_t errlen);

#endif
