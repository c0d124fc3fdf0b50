/* sql.c - sql QUERY...: a read-only query on the history
 *
 * The store runs it (hs_store_query_ro), refusing writes, ATTACH, PRAGMA
 * changes and extensions. Rows stream out:
 * text is a header line and one line per row, columns joined by " | ";
 * JSON is one document, {"columns":[...],"rows":[...]}, each row keyed by
 * column name.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "console.h"

static void print_blob(struct hs_out *o, const char *key, const unsigned char *b, size_t n)
{
	char *hex = hs_xcalloc(2 * n + 4, 1);	/* x' hex ' NUL */

	strcpy(hex, "x'");
	for (size_t i = 0; i < n; i++)
		sprintf(hex + 2 + 2 * i, "%02x", b[i]);
	strcat(hex, "'");
	out_str(o, key, "%s", hex);
	free(hex);
}

static void print_cell(struct hs_out *o, const char *key, const struct hs_value *v)
{
	switch (v->type) {
	case HS_VAL_INT:
		out_int(o, key, "%" PRId64, v->i);
		break;
	case HS_VAL_REAL:
		out_double(o, key, "%g", v->d);
		break;
	case HS_VAL_NULL:
		out_null(o, key);
		out_text(o, "NULL");
		break;
	case HS_VAL_BLOB:
		print_blob(o, key, (const unsigned char *)v->s, v->len);
		break;
	default:
		out_str(o, key, "%s", v->s);
	}
}

struct sql_out {
	struct hs_out *o;
	const char *const *names;
	bool opened;		/* the list of rows */
};

/* the header line: before the rows, even when none come; in JSON the
 * array "columns" */
static void print_cols(void *arg, const char *const *names, int ncol)
{
	struct sql_out *q = arg;

	q->names = names;
	out_obj_open(q->o, NULL);
	out_arr_open(q->o, "columns");
	for (int i = 0; i < ncol; i++)
		out_str(q->o, NULL, i ? " | %s" : "%s", names[i]);
	out_arr_close(q->o);
	if (ncol > 0)
		out_nl(q->o);
	out_arr_open(q->o, "rows");
	q->opened = true;
}

static void print_row(void *arg, const struct hs_value *v, int ncol)
{
	struct sql_out *q = arg;

	out_obj_open(q->o, NULL);
	for (int i = 0; i < ncol; i++) {
		if (i)
			out_text(q->o, " | ");
		print_cell(q->o, q->names[i], &v[i]);
	}
	out_obj_close(q->o);
	out_nl(q->o);
}

int cmd_sql(struct hs_ctx *ctx, int argc, char **argv)
{
	struct hs_out *o = ctx->out;
	char err[512];
	size_t len = 1;

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
	struct sql_out so = { .o = o };
	struct hs_rows rows = { print_cols, print_row, &so };
	int rc = hs_store_query_ro(st, q, &rows, err, sizeof(err));
	free(q);
	if (so.opened)
		out_list_close(o);
	if (rc < 0)
		return out_err(o, "sql: %s", err);
	return HS_CMD_OK;
}
