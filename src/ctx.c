/* ctx.c - the context's history: opened on first use, kept while a
 * capture writes it, held from the writer thread of a live capture (ctx.h)
 *
 * The capture and the verbs reach the history through these, and so does
 * the fabric view; the capture tells them what they need of it through the
 * context (ctx->capturing, ctx->store_writer), so none of them depends on
 * another to have it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctx.h"
#include "writer.h"

void hs_ctx_hold_store(struct hs_ctx *ctx)
{
	if (ctx->store_writer)
		hs_writer_hold(ctx->store_writer);
}

static void store_notice(void *arg, const char *msg)
{
	struct hs_ctx *ctx = arg;

	hs_say_warn(ctx, "%s", msg);
}

/* the history open now is the one at path (a running capture keeps its own
 * until it stops, whatever 'set db' says) */
static bool store_current(struct hs_ctx *ctx, const char *path)
{
	if (ctx->store && strcmp(hs_store_path(ctx->store), path) != 0 && !ctx->capturing) {
		hs_store_close(ctx->store);
		ctx->store = NULL;
	}
	return ctx->store != NULL;
}

static const char *db_path(const struct hs_ctx *ctx)
{
	return ctx->set.db_path ? ctx->set.db_path : "hopscope.db";
}

static struct hs_store *ctx_store(struct hs_ctx *ctx, bool say)
{
	char err[512];
	const char *path = db_path(ctx);

	hs_ctx_hold_store(ctx);

	/* 'set db' may have pointed us elsewhere since it was opened */
	if (store_current(ctx, path))
		return ctx->store;
	ctx->store = hs_store_open_notice(path, err, sizeof(err), store_notice, ctx);
	if (ctx->store) {
		hs_store_set_analyzer(ctx->store, hs_ctx_analyzer(ctx));
		return ctx->store;
	}
	if (!say) {
		free(ctx->store_err);
		free(ctx->store_err_path);
		ctx->store_err = hs_xstrdup(err);
		ctx->store_err_path = hs_xstrdup(path);
	} else if (ctx->store_err && strcmp(ctx->store_err_path, path) == 0) {
		/* why root could not open it is the reason, not the user's EACCES */
		hs_say_err(ctx, "%s", ctx->store_err);
	} else {
		hs_say_err(ctx, "%s", err);
	}
	return NULL;
}

const char *hs_ctx_analyzer(struct hs_ctx *ctx)
{
	char host[256];

	if (!ctx->set.analyzer && gethostname(host, sizeof(host)) == 0) {
		host[sizeof(host) - 1] = '\0';
		host[strcspn(host, ".")] = '\0';	/* its first label */
		if (hs_analyzer_name_ok(host))
			ctx->set.analyzer = hs_xstrdup(host);
	}
	return ctx->set.analyzer;
}

struct hs_store *hs_ctx_store(struct hs_ctx *ctx)
{
	return ctx_store(ctx, true);
}

struct hs_store *hs_ctx_store_early(struct hs_ctx *ctx)
{
	return ctx_store(ctx, false);
}

bool hs_ctx_has_history(struct hs_ctx *ctx)
{
	const char *path = db_path(ctx);
	struct stat sb;

	hs_ctx_hold_store(ctx);
	/* none there, or an empty file (SQLite would write a new history into it) */
	return store_current(ctx, path) || hs_store_is_pg(path) ||
	       !(stat(path, &sb) < 0 ? errno == ENOENT : S_ISREG(sb.st_mode) && sb.st_size == 0);
}

int hs_ctx_store_read(struct hs_ctx *ctx, bool list, struct hs_store **st)
{
	const char *path = db_path(ctx);

	*st = NULL;
	if (!hs_ctx_has_history(ctx)) {
		if (!list)
			return hs_say_err(ctx, "no history at '%s' (a capture makes one; --db "
					  "names another)", path);
		hs_say_info(ctx, "no history at '%s' (a capture makes one; --db names "
			    "another)", path);
		return 0;
	}
	*st = hs_ctx_store(ctx);
	return *st ? 1 : -1;
}

