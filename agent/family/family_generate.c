/* family_generate.c - the source helpers of family_build.h. */
#include "family/family_build.h"

#include <stdio.h>
#include <stdlib.h>

#include "family/family_util.h"
#include "loadlab/buf.h"
#include "loadlab/err.h"

/* Largest generated source. */
#define SOURCE_LIMIT (256u * 1024u * 1024u)

bool family_in_startup(int i, int j)
{
	return (7 * j + 3 * i) % 4 == 0;
}

int family_write_source(const struct family_context *ctx, const char *name, struct buf *b)
{
	char path[PLAT_MAX_PATH + 1];
	int rc;

	if ((rc = family_path(path, ctx->src, name)) < 0)
		return rc;
	return family_write_file(path, buf_str(b), b->len);
}

int family_globals_source(struct buf *b, int i, int j, int globals)
{
	int rc = 0;

	for (int k = 0; k < globals; k++)
		rc |= buf_printf(b, "static int lt%d_g%d_%d;\n", i, j, k);
	if (globals > 0) {
		rc |= buf_printf(b, "int *lt%d_p%d[%d] = {", i, j, globals);
		for (int k = 0; k < globals; k++)
			rc |= buf_printf(b, "%s&lt%d_g%d_%d", k ? ", " : "", i, j, k);
		rc |= buf_printf(b, "};\n");
	}
	return rc < 0 ? LL_ETOOBIG : 0;
}

int family_functions_source(const struct family_context *ctx, struct buf *b, int i, const int *rank,
			    const char *sorted, const char *linked, const char *export)
{
	int rc = 0;

	for (int j = 0; j < ctx->exports && rc == 0; j++) {
		rc |= family_globals_source(b, i, j, ctx->globals);
		if (rank && rank[j] >= 0)
			rc |= buf_printf(b, "__attribute__((section(\"%s%06d\")))\n", sorted, rank[j]);
		else if (linked)
			rc |= buf_printf(b, "__attribute__((section(\"%s%06d\")))\n", linked, j);
		rc |= buf_printf(b, "%svoid lt%d_f%d(void)\n{\n", export, i, j);
		for (int k = 0; k < ctx->globals; k++)
			rc |= buf_printf(b, "\t*lt%d_p%d[%d] = %d;\n", i, j, k, j * 64 + k + 1);
		rc |= buf_printf(b, "}\n\n");
	}
	return rc < 0 ? LL_ETOOBIG : 0;
}

int family_calls_source(const struct family_context *ctx, struct buf *b)
{
	int rc = buf_printf(b, "static void ll_startup(void)\n{\n");

	for (int i = 0; i < ctx->dlls && rc == 0; i++)
		for (int j = ctx->exports - 1; j >= 0; j--)
			if (family_in_startup(i, j))
				rc |= buf_printf(b, "\tlt%d_f%d();\n", i, j);
	rc |= buf_printf(b, "}\n\nstatic void ll_rest(void)\n{\n");
	for (int i = 0; i < ctx->dlls && rc == 0; i++)
		for (int j = 0; j < ctx->exports; j++)
			if (!family_in_startup(i, j))
				rc |= buf_printf(b, "\tlt%d_f%d();\n", i, j);
	rc |= buf_printf(b, "}\n\n");
	return rc < 0 ? LL_ETOOBIG : 0;
}

int family_generate(const struct family_context *ctx, family_library_source *library,
		    family_main_source *main, const char *empty, const void *family)
{
	struct buf b;
	char name[64];
	int rc = 0;

	buf_init(&b, SOURCE_LIMIT);
	for (int i = 0; i < ctx->dlls; i++) {
		if (i % 8 == 0 && (rc = family_progress(ctx->task, "generate", 100 * i / ctx->dlls)) < 0)
			goto out;
		buf_reset(&b);
		snprintf(name, sizeof(name), "lt%d.c", i);
		if ((rc = library(family, i, NULL, &b)) < 0 || (rc = family_write_source(ctx, name, &b)) < 0)
			goto out;
	}
	buf_reset(&b);
	if ((rc = main(family, &b)) < 0 || (rc = family_write_source(ctx, "main.c", &b)) < 0)
		goto out;
	buf_reset(&b);
	if ((rc = buf_append_str(&b, empty)) < 0 || (rc = family_write_source(ctx, "empty.c", &b)) < 0)
		goto out;
	rc = family_progress(ctx->task, "generate", 100);
out:
	buf_release(&b);
	return rc;
}

int family_generate_order(const struct family_context *ctx, family_library_source *library,
			  const void *family)
{
	struct buf b;
	char name[64];
	int *rank, rc = 0;

	if (!(rank = malloc(sizeof(*rank) * (size_t)ctx->exports)))
		return LL_ENOMEM;
	buf_init(&b, SOURCE_LIMIT);
	for (int i = 0; i < ctx->dlls; i++) {
		for (int j = 0; j < ctx->exports; j++)
			rank[j] = -1;
		for (size_t r = 0; ctx->trace && r < ctx->trace_count[i]; r++)
			rank[ctx->trace[i][r]] = (int)r;
		buf_reset(&b);
		snprintf(name, sizeof(name), "lt%d_order.c", i);
		if ((rc = library(family, i, rank, &b)) < 0 || (rc = family_write_source(ctx, name, &b)) < 0)
			goto out;
	}
out:
	buf_release(&b);
	free(rank);
	return rc;
}
