/* pq.h - libpq, loaded only when a PostgreSQL history is named
 *
 * hopscope is not linked with libpq: the library and the score of others
 * it needs (Kerberos, LDAP, GnuTLS, ...) would be loaded and relocated at
 * every start, for the few runs that name a postgresql:// history. The
 * first such run loads it (hs_pq_load) and takes the functions the store
 * uses from it; store_pg.c includes this header after libpq-fe.h, and
 * each of its PQ* calls goes through hs_pq. A function it starts to use is
 * added to HS_PQ_FUNCS and to the list of names below.
 */
#ifndef HS_PQ_H
#define HS_PQ_H

#include <stddef.h>
#include <libpq-fe.h>

#define HS_PQ_LIBRARY "libpq.so.5"

#define HS_PQ_FUNCS(X) \
	X(PQcancel) X(PQclear) X(PQcmdTuples) X(PQconnectdbParams) X(PQconsumeInput) \
	X(PQerrorMessage) X(PQexec) X(PQexecParams) X(PQfinish) X(PQfname) \
	X(PQfreeCancel) X(PQfreemem) X(PQftype) X(PQgetCancel) X(PQgetResult) \
	X(PQgetisnull) X(PQgetlength) X(PQgetvalue) X(PQisBusy) X(PQnfields) \
	X(PQntuples) X(PQputCopyData) X(PQputCopyEnd) X(PQreset) \
	X(PQresultErrorField) X(PQresultStatus) X(PQsendQueryParams) \
	X(PQsetNoticeProcessor) X(PQsetSingleRowMode) X(PQsocket) X(PQstatus) \
	X(PQunescapeBytea)

struct hs_pq {
#define HS_PQ_MEMBER(f) __typeof__(f) *f;
	HS_PQ_FUNCS(HS_PQ_MEMBER)
#undef HS_PQ_MEMBER
};

/* filled by hs_pq_load; read only after it returned 0 */
extern struct hs_pq hs_pq;

/* Load libpq (once; every thread may ask): 0, or -1 with err set to one
 * line naming the library and what failed (it is not installed, or lacks
 * a function). HOPSCOPE_TEST_LIBPQ names another file, for the tests. */
int hs_pq_load(char *err, size_t errlen);

#ifndef HS_PQ_LOADER
#define PQcancel hs_pq.PQcancel
#define PQclear hs_pq.PQclear
#define PQcmdTuples hs_pq.PQcmdTuples
#define PQconnectdbParams hs_pq.PQconnectdbParams
#define PQconsumeInput hs_pq.PQconsumeInput
#define PQerrorMessage hs_pq.PQerrorMessage
#define PQexec hs_pq.PQexec
#define PQexecParams hs_pq.PQexecParams
#define PQfinish hs_pq.PQfinish
#define PQfname hs_pq.PQfname
#define PQfreeCancel hs_pq.PQfreeCancel
#define PQfreemem hs_pq.PQfreemem
#define PQftype hs_pq.PQftype
#define PQgetCancel hs_pq.PQgetCancel
#define PQgetResult hs_pq.PQgetResult
#define PQgetisnull hs_pq.PQgetisnull
#define PQgetlength hs_pq.PQgetlength
#define PQgetvalue hs_pq.PQgetvalue
#define PQisBusy hs_pq.PQisBusy
#define PQnfields hs_pq.PQnfields
#define PQntuples hs_pq.PQntuples
#define PQputCopyData hs_pq.PQputCopyData
#define PQputCopyEnd hs_pq.PQputCopyEnd
#define PQreset hs_pq.PQreset
#define PQresultErrorField hs_pq.PQresultErrorField
#define PQresultStatus hs_pq.PQresultStatus
#define PQsendQueryParams hs_pq.PQsendQueryParams
#define PQsetNoticeProcessor hs_pq.PQsetNoticeProcessor
#define PQsetSingleRowMode hs_pq.PQsetSingleRowMode
#define PQsocket hs_pq.PQsocket
#define PQstatus hs_pq.PQstatus
#define PQunescapeBytea hs_pq.PQunescapeBytea
#endif

#endif
