/* sql.c - sql QUERY...: a read-only query on the history
 *
 * The statement is prepared by hs_store_prepare_ro(), whose authorizer
 * refuses writes, ATTACH, PRAGMA changes and extensions. Rows stream out:
 * text is a header line and one line per row, columns joined by " | ";
 * JSON is one document, {"rows":[...]}, each row keyed by column name.
 */
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "console.h"
#include "interrupt.h"

static void print_blob(struct hs_out *o, const char *key, const unsigned char *b, int n)
{
	char *hex = hs_xcalloc(2 * (size_t)n + 4, 1);	/* x' hex ' NUL */

	strcpy(hex, "x'");
	for (int i = 0; i < n; i++)
		sprintf(hex + 2 + 2 * i, "%02x", b[i]);
	strcat(hex, "'");
	out_str(o, key, "%s", hex);
	free(hex);
}

static void print_cell(struct hs_out *o, sqlite3_stmt *s, int i)
{
	const char *key = sqlite3_column_name(s, i);

	switch (sqlite3_column_type(s, i)) {
	case SQLITE_INTEGER:
		out_int(o, key, "%" PRId64, sqlite3_column_int64(s, i));
		break;
	case SQLITE_FLOAT:
		out_double(o, key, "%g", sqlite3_column_double(s, i));
		break;
	case SQLITE_NULL:
		if (o->json)
			out_null(o, key);
		else
			out_text(o, "NULL");
		break;
	case SQLITE_BLOB:
		print_blob(o, key, sqlite3_column_blob(s, i), sqlite3_column_bytes(s, i));
		break;
	default:
		out_str(o, key, "%s", (const char *)sqlite3_column_text(s, i));
	}
}

int cmd_sql(struct hs_ctx *ctx, int argc, char **argv)
{
	struct hs_out *o = &ctx->out;
	char err[512];
	size_t len = 1;
	int rc;

	if (argc < 2)
		return out_err(o, "sql needs a query");
	for (int i = 1; i < argc; i++)
		len += strlen(argv[i]) + 1;
	char *q = hs_xcalloc(1, len), *p = q;
	for (int i = 1; i < argc; i++)
		p += sprintf(p, "%s%s", i > 1 ? " " : "", argv[i]);

	struct hs_store *st;
	if (hs_ctx_store_read(ctx, false, &st) < 0) {
		free(q);
		return HS_CMD_FAIL;
	}
	if (hs_store_pending(st))
		hs_store_commit(st);
	sqlite3_stmt *s = hs_store_prepare_ro(st, q, err, sizeof(err));
	free(q);
	if (!s)
		return out_err(o, "%s", err);

	sqlite3 *db = hs_store_db(st);
	/* a signal stops the query (a recursive one may have no end) */
	sqlite3_progress_handler(db, 1000, hs_interrupt_sqlite, NULL);
	int ncol = sqlite3_column_count(s);
	if (!o->json && ncol > 0) {
		for (int i = 0; i < ncol; i++)
			out_text(o, "%s%s", i ? " | " : "", sqlite3_column_name(s, i));
		out_text(o, "\n");
	}
	out_list_open(o, "rows");
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		out_obj_open(o, NULL);
		for (int i = 0; i < ncol; i++) {
			if (i && !o->json)
				out_text(o, " | ");
			print_cell(o, s, i);
		}
		out_obj_close(o);
		out_nl(o);
	}
	out_list_close(o);
	if (rc != SQLITE_DONE)
		out_err(o, "sql: %s", sqlite3_errmsg(db));
	sqlite3_finalize(s);
	sqlite3_progress_handler(db, 0, NULL, NULL);
	return rc == SQLITE_DONE ? HS_CMD_OK : HS_CMD_FAIL;
}
