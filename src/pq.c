/* pq.c - libpq, loaded when a PostgreSQL history is first named (pq.h) */
#define HS_PQ_LOADER
#include "dl.h"
#include "pq.h"

struct hs_pq hs_pq;

static bool take(void *lib)
{
	struct hs_pq pq;

#define HS_PQ_SYM(f) HS_DL_SYM(lib, pq, f);
	HS_PQ_FUNCS(HS_PQ_SYM)
#undef HS_PQ_SYM
	hs_pq = pq;
	return true;
}

static struct hs_dl libpq = HS_DL_INIT(HS_PQ_LIBRARY, "HOPSCOPE_TEST_LIBPQ",
				       "the PostgreSQL client library", take);

int hs_pq_load(char *err, size_t errlen)
{
	return hs_dl_load(&libpq, err, errlen);
}
