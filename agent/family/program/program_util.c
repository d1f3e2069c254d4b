/*
 * program_util.c - what every stage of the `program` family uses
 * (program_int.h): the job's variants once per build, the build in use,
 * a variant's invalid mark and its notes.
 */
#include "program_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadlab/err.h"
#include "loadlab/json.h"

int program_read_variants(const struct program_context *ctx, const cJSON *job, size_t size,
			  int (*knobs)(const cJSON *item, struct program_variant *var), void **ret_variants,
			  size_t *ret_count)
{
	const cJSON *variants = cJSON_GetObjectItemCaseSensitive(job, "variants"), *item;
	size_t v = 0, per_build = (size_t)cJSON_GetArraySize(variants);
	unsigned char *array;
	int rc;

	if (per_build == 0)
		return err_set(LL_EINVAL, "The job has no variants.");
	if (!(array = calloc(per_build * ctx->build_count, size)))
		return LL_ENOMEM;
	*ret_variants = array;
	*ret_count = per_build * ctx->build_count;
	for (size_t b = 0; b < ctx->build_count; b++)
		cJSON_ArrayForEach(item, variants) {
			struct program_variant *var = (struct program_variant *)(array + size * v++);
			const char *name;
			if ((rc = json_get_string(item, "name", JOB_SPEC_MAX_NAME, true, NULL, &name)) < 0 ||
			    (rc = knobs(item, var)) < 0)
				return rc;
			var->build = b;
			snprintf(var->preset, sizeof(var->preset), "%s", name);
			if (ctx->build_count > 1)
				snprintf(var->name, sizeof(var->name), "%s:%s", ctx->builds[b].label, name);
			else
				snprintf(var->name, sizeof(var->name), "%s", name);
		}
	return 0;
}

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

int program_helpers_json(const struct program_context *ctx, const char *used_for, const char *source,
			 cJSON *result)
{
	cJSON *h = cJSON_AddObjectToObject(result, "helpers"), *programs;

	if (!h || !cJSON_AddStringToObject(h, "used_for", used_for) ||
	    !cJSON_AddStringToObject(h, "source", source) ||
	    !(programs = cJSON_AddArrayToObject(h, "programs")))
		return LL_ENOMEM;
	for (size_t i = 0; i < ctx->helper_count; i++) {
		cJSON *p = agent_program_json(ctx->helpers[i]);
		if (!p || !cJSON_AddItemToArray(programs, p)) {
			cJSON_Delete(p);
			return LL_ENOMEM;
		}
	}
	return 0;
}
