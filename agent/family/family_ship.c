/*
 * family_ship.c - a shared build's files, from the builder's folders to
 * blobs and back into the measuring agent's (family_ship.h).
 */
#include "family/family_ship.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blobs/blob_cache.h"
#include "family/family_util.h"
#include "loadlab/buf.h"
#include "loadlab/err.h"

int family_ship_variant_dir(const struct family_context *ctx, size_t v, char *dir)
{
	char sub[32];
	int rc;

	snprintf(sub, sizeof(sub), "v/%02zu", v);
	if ((rc = family_path(dir, ctx->work, sub)) < 0)
		return rc;
	return plat_mkdirs(dir);
}

/* Uploads every file of FILES (in FOLDER) through TASK's put_blob. */
static int upload(const struct pipeline_task *task, const char *folder, const cJSON *files)
{
	const cJSON *f;
	int rc;

	cJSON_ArrayForEach(f, files) {
		char path[PLAT_MAX_PATH + 1];
		const char *name = cJSON_GetObjectItemCaseSensitive(f, "name")->valuestring;
		const char *sha = cJSON_GetObjectItemCaseSensitive(f, "sha256")->valuestring;
		if ((rc = family_path(path, folder, name)) < 0 ||
		    (rc = task->put_blob(task->put_blob_context, sha, path)) < 0)
			return rc;
	}
	return 0;
}

/* Adds one log file NAME of folder CONTEXT's to its buffer. */
struct log_walk {
	const char *folder;
	struct buf *out;
};

static int add_log(void *context, const char *name)
{
	struct log_walk *w = context;
	char path[PLAT_MAX_PATH + 1], *text = NULL;
	size_t len = strlen(name), n = 0;

	if (len < 4 || strcmp(name + len - 4, ".log") != 0 || w->out->len >= FAMILY_SHIP_MAX_LOG ||
	    family_path(path, w->folder, name) < 0 ||
	    family_read_file(path, FAMILY_SHIP_MAX_LOG, &text, &n) < 0) {
		err_clear();
		return 0;
	}
	if (n > FAMILY_SHIP_MAX_LOG - w->out->len)
		n = FAMILY_SHIP_MAX_LOG - w->out->len;
	if (n > 0 && buf_printf(w->out, "== %s ==\n%.*s\n", name, (int)n, text) < 0) {
		free(text);
		return LL_ENOMEM;
	}
	free(text);
	return 0;
}

/* RESULT's "trace" (when CTX has one): library i's functions in
 * first-call order on the builder, which the measuring agent's
 * verification of trace order reads. */
static int add_trace(cJSON *result, const struct family_context *ctx)
{
	cJSON *trace;

	if (!ctx->trace)
		return 0;
	if (!(trace = cJSON_AddArrayToObject(result, "trace")))
		return LL_ENOMEM;
	for (int i = 0; i < ctx->dlls; i++) {
		cJSON *order = cJSON_CreateIntArray(ctx->trace[i], (int)ctx->trace_count[i]);
		if (!order || !cJSON_AddItemToArray(trace, order))
			return LL_ENOMEM;
	}
	return 0;
}

/* CTX's trace from the build's RESULT "trace" (none: none). */
static int read_trace(struct family_context *ctx, const cJSON *result)
{
	const cJSON *trace = cJSON_GetObjectItemCaseSensitive(result, "trace"), *order, *f;
	int i = 0;

	if (!trace)
		return 0;
	if (!cJSON_IsArray(trace) || cJSON_GetArraySize(trace) != ctx->dlls)
		return err_set(LL_EFORMAT, "The build's trace does not list %d libraries.", ctx->dlls);
	if (!(ctx->trace = calloc((size_t)ctx->dlls, sizeof(*ctx->trace))) ||
	    !(ctx->trace_count = calloc((size_t)ctx->dlls, sizeof(*ctx->trace_count))))
		return LL_ENOMEM;
	cJSON_ArrayForEach(order, trace) {
		size_t n = 0, count = (size_t)cJSON_GetArraySize(order);
		if (!cJSON_IsArray(order) || count > (size_t)ctx->exports)
			return err_set(LL_EFORMAT,
				       "The build's trace of library %d is not a list of functions.", i);
		if (count && !(ctx->trace[i] = calloc(count, sizeof(int))))
			return LL_ENOMEM;
		cJSON_ArrayForEach(f, order) {
			if (!cJSON_IsNumber(f) || f->valuedouble < 0 || f->valuedouble >= ctx->exports)
				return err_set(LL_EFORMAT,
					       "The build's trace names no function of library %d.", i);
			ctx->trace[i][n++] = (int)f->valuedouble;
		}
		ctx->trace_count[i++] = n;
	}
	return 0;
}

int family_ship_build(cJSON *result, const struct family_context *ctx, const struct family_names *names,
		      const void *variants, size_t count, size_t size)
{
	const struct pipeline_task *task = ctx->task;
	cJSON *list = cJSON_AddArrayToObject(result, "variants"), *floor, *files = NULL;
	char empty_dir[PLAT_MAX_PATH + 1];
	struct buf log;
	struct log_walk walk = {ctx->obj, &log};
	int rc;

	if (!task->put_blob)
		return err_set(LL_EUNSUPPORTED, "This caller cannot upload a build's files.");
	if (!list)
		return LL_ENOMEM;
	for (size_t v = 0; v < count; v++) {
		const struct family_variant *var = (const void *)((const char *)variants + v * size);
		cJSON *item = cJSON_CreateObject();
		if (!item || !cJSON_AddItemToArray(list, item) ||
		    !cJSON_AddStringToObject(item, "name", var->name))
			return LL_ENOMEM;
		if ((rc = family_files_json(ctx, names, var->dir, false, &files)) < 0)
			return rc;
		cJSON_AddItemToObject(item, "files", files);
		if ((rc = upload(task, var->dir, files)) < 0 ||
		    (rc = family_progress(task, "upload", (int)(100 * (v + 1) / (count + 1)))) < 0)
			return rc;
	}
	if (!(floor = cJSON_AddObjectToObject(result, "floor")) ||
	    !cJSON_AddStringToObject(floor, "name", names->empty))
		return LL_ENOMEM;
	if ((rc = family_path(empty_dir, ctx->work, "empty")) < 0 ||
	    (rc = family_files_json(ctx, names, empty_dir, true, &files)) < 0)
		return rc;
	cJSON_AddItemToObject(floor, "files", files);
	if ((rc = upload(task, empty_dir, files)) < 0)
		return rc;
	if ((rc = add_trace(result, ctx)) < 0)
		return rc;
	buf_init(&log, FAMILY_SHIP_MAX_LOG + 4096);
	rc = plat_list_dir(ctx->obj, add_log, &walk);
	if (rc == 0 && !cJSON_AddStringToObject(result, "log", log.len ? buf_str(&log) : ""))
		rc = LL_ENOMEM;
	buf_release(&log);
	return rc;
}

/* The entry named NAME of the array LIST; NULL when none. */
static const cJSON *find_named(const cJSON *list, const char *name)
{
	const cJSON *item;

	cJSON_ArrayForEach(item, list) {
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(item, "name");
		if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0)
			return item;
	}
	return NULL;
}

/* The file NAME of the build's FILES through CACHE into FOLDER. */
static int fetch_file(const struct pipeline_task *task, struct blob_cache *cache, const cJSON *files,
		      const char *name, const char *folder)
{
	const cJSON *sha = cJSON_GetObjectItemCaseSensitive(find_named(files, name), "sha256");
	char path[PLAT_MAX_PATH + 1];
	int rc;

	if (!cJSON_IsString(sha))
		return err_set(LL_EFORMAT, "The build has no file %s.", name);
	if (!task->fetch_blob)
		return err_set(LL_EUNSUPPORTED, "This caller cannot fetch a build's files.");
	if ((rc = family_path(path, folder, name)) < 0)
		return rc;
	rc = blob_cache_get(cache, sha->valuestring, task->fetch_blob, task->fetch_blob_context, path, NULL);
	if (rc == LL_EFORMAT)
		return err_set(LL_EFORMAT,
			       "hash mismatch: the build's file %s (blob %s) does not have its digest.", name,
			       sha->valuestring);
	return rc;
}

/* Every file of a program (CTX->dlls libraries and the main program, or
 * the empty program when EMPTY) from FILES into FOLDER. */
static int fetch_program(const struct family_context *ctx, const struct family_names *names,
			 struct blob_cache *cache, const cJSON *files, bool empty, const char *folder)
{
	char name[64], path[PLAT_MAX_PATH + 1];
	int rc;

	for (int i = empty ? ctx->dlls : 0; i <= ctx->dlls; i++) {
		if (i < ctx->dlls)
			snprintf(name, sizeof(name), "%s%d%s", names->library_prefix, i,
				 names->library_suffix);
		else
			snprintf(name, sizeof(name), "%s", empty ? names->empty : names->main);
		if ((rc = fetch_file(ctx->task, cache, files, name, folder)) < 0)
			return rc;
	}
	/* The program itself runs (an ELF program needs its mode). */
	if ((rc = family_path(path, folder, empty ? names->empty : names->main)) < 0)
		return rc;
	return plat_make_executable(path);
}

int family_ship_fetch(struct family_context *ctx, const struct family_names *names, void *variants,
		      size_t count, size_t size)
{
	const struct pipeline_task *task = ctx->task;
	const cJSON *result = cJSON_GetObjectItemCaseSensitive(task->build, "result");
	const cJSON *built = cJSON_GetObjectItemCaseSensitive(result, "variants");
	char empty_dir[PLAT_MAX_PATH + 1];
	struct blob_cache cache;
	int rc;

	if ((rc = read_trace(ctx, result)) < 0 ||
	    (rc = family_blob_cache_open(task, ctx->work, task->build, &cache)) < 0)
		return rc;
	for (size_t v = 0; v < count && rc == 0; v++) {
		struct family_variant *var = (void *)((char *)variants + v * size);
		const cJSON *item = find_named(built, var->name);
		if (!item)
			rc = err_set(LL_EFORMAT, "The build has no variant %s.", var->name);
		else if ((rc = family_ship_variant_dir(ctx, v, var->dir)) == 0)
			rc = fetch_program(ctx, names, &cache,
					   cJSON_GetObjectItemCaseSensitive(item, "files"), false, var->dir);
		if (rc == 0)
			rc = family_progress(task, "fetch", (int)(100 * (v + 1) / (count + 1)));
	}
	if (rc == 0 && (rc = family_path(empty_dir, ctx->work, "empty")) == 0 &&
	    (rc = plat_mkdirs(empty_dir)) == 0)
		rc = fetch_program(ctx, names, &cache,
				   cJSON_GetObjectItemCaseSensitive(
					   cJSON_GetObjectItemCaseSensitive(result, "floor"), "files"),
				   true, empty_dir);
	blob_cache_close(&cache);
	return rc;
}

/* VARIANT's "shipped": its files against the build's BUILT ones. */
static int note_variant(cJSON *variant, const cJSON *built, const char *by)
{
	cJSON *shipped = cJSON_AddObjectToObject(variant, "shipped"), *local;
	const cJSON *f;
	bool identical = true;

	if (!shipped || !(local = cJSON_AddArrayToObject(shipped, "local_files")))
		return LL_ENOMEM;
	cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(variant, "files")) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(f, "name");
		const cJSON *sha = cJSON_GetObjectItemCaseSensitive(f, "sha256");
		const cJSON *was = cJSON_GetObjectItemCaseSensitive(
			find_named(cJSON_GetObjectItemCaseSensitive(built, "files"),
				   cJSON_IsString(name) ? name->valuestring : ""),
			"sha256");
		cJSON *entry;
		if (!cJSON_IsString(name) || !cJSON_IsString(sha) ||
		    (cJSON_IsString(was) && strcmp(was->valuestring, sha->valuestring) == 0))
			continue;
		identical = false;
		if (!(entry = cJSON_CreateObject()) || !cJSON_AddItemToArray(local, entry) ||
		    !cJSON_AddStringToObject(entry, "name", name->valuestring) ||
		    !(cJSON_IsString(was) ? cJSON_AddStringToObject(entry, "built_sha256", was->valuestring)
					  : cJSON_AddNullToObject(entry, "built_sha256")) ||
		    !cJSON_AddStringToObject(entry, "sha256", sha->valuestring) ||
		    !cJSON_AddStringToObject(entry, "by", by))
			return LL_ENOMEM;
	}
	return cJSON_AddBoolToObject(shipped, "identical", identical) ? 0 : LL_ENOMEM;
}

int family_ship_note(cJSON *result, const cJSON *build, const char *by)
{
	const cJSON *built = cJSON_GetObjectItemCaseSensitive(build, "result");
	const cJSON *toolchain = cJSON_GetObjectItemCaseSensitive(built, "toolchain");
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(build, "task_id");
	const cJSON *builder = cJSON_GetObjectItemCaseSensitive(build, "builder");
	cJSON *task = cJSON_AddObjectToObject(result, "build_task"), *v;
	int rc;

	if (!task || !cJSON_AddNumberToObject(task, "id", cJSON_IsNumber(id) ? id->valuedouble : 0) ||
	    !cJSON_AddStringToObject(task, "builder", cJSON_IsString(builder) ? builder->valuestring : ""))
		return LL_ENOMEM;
	if (cJSON_IsObject(toolchain)) {
		cJSON *copy = cJSON_Duplicate(toolchain, true);
		cJSON_DeleteItemFromObjectCaseSensitive(result, "toolchain");
		if (!copy || !cJSON_AddItemToObject(result, "toolchain", copy))
			return LL_ENOMEM;
	}
	cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(result, "variants")) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(v, "name");
		const cJSON *item = find_named(cJSON_GetObjectItemCaseSensitive(built, "variants"),
					       cJSON_IsString(name) ? name->valuestring : "");
		if ((rc = note_variant(v, item, by)) < 0)
			return rc;
	}
	return 0;
}
