/*
 * program_util.c - what every stage of the `program` family uses
 * (program_int.h): the build in use, a variant's invalid mark and its
 * notes.
 */
#include "program_int.h"

#include <stdarg.h>
#include <string.h>

#include "loadlab/err.h"

void program_use_build(struct program_context *ctx, size_t b)
{
	const struct program_build *build = &ctx->builds[b];

	ctx->files = build->files;
	ctx->file_count = build->file_count;
	ctx->exe = build->exe;
	memcpy(ctx->files_dir, build->files_dir, sizeof(ctx->files_dir));
}

void program_invalid(struct program_variant *var, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	family_invalid_va(&var->valid, var->invalid_reason, sizeof(var->invalid_reason), fmt, ap);
	va_end(ap);
}

int program_note(struct program_variant *var, const char *text)
{
	cJSON *s;

	if (!var->notes && !(var->notes = cJSON_CreateArray()))
		return LL_ENOMEM;
	if (!(s = cJSON_CreateString(text)) || !cJSON_AddItemToArray(var->notes, s)) {
		cJSON_Delete(s);
		return LL_ENOMEM;
	}
	return 0;
}
