/* store_int.h - what the history's own files share (store.c, history.c):
 * the SQLite handle behind a store. Nothing outside them sees SQLite.
 */
#ifndef HS_STORE_INT_H
#define HS_STORE_INT_H

#include <sqlite3.h>
#include "store.h"

sqlite3 *hs_store_db(struct hs_store *st);
/* a read-only statement of the user's: refuses writes, ATTACH, PRAGMA
 * changes and load_extension (authorizer). NULL with err set. */
sqlite3_stmt *hs_store_prepare_ro(struct hs_store *st, const char *sql, char *err,
				  size_t errlen);

#endif
