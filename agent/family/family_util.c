/* family_util.c - the helpers of family_util.h. */
#include "family/family_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blobs/blob_cache.h"
#include "loadlab/clock.h"
#include "loadlab/err.h"
#include "loadlab/plat.h"

int family_path(char *out, const char *a, const char *b)
{
	int n = snprintf(out, PLAT_MAX_PATH + 1, "%s/%s", a, b);
	if (n < 0 || n > (int)PLAT_MAX_PATH)
		return err_set(LL_ETOOBIG, "Path %s/%s is too long.", a, b);
	return 0;
}

void family_strings_free(char **list)
{
	for (size_t i = 0; list && list[i]; i++)
		free(list[i]);
	free(list);
}

int family_blob_cache_open(const struct pipeline_task *task, const char *work, const cJSON *pinned,
			   struct blob_cache *cache)
{
	char dir[PLAT_MAX_PATH + 1];
	int rc;

	if (task->blob_cache_dir && task->blob_cache_dir[0])
		snprintf(dir, sizeof(dir), "%s", task->blob_cache_dir);
	else if ((rc = family_path(dir, work, "blobs")) < 0)
		return rc;
	if ((rc = blob_cache_open(cache, dir, task->blob_cache_bytes)) < 0)
		return rc;
	blob_cache_set_room(cache, task->blob_room);
	blob_cache_pin_named(cache, pinned);
	return 0;
}

int family_progress(const struct pipeline_task *t, const char *phase, int percent)
{
	if (t->progress && t->progress(t->progress_context, phase, percent))
		return err_set(LL_ESTATE, "The task was cancelled during %s.", phase);
	return 0;
}

int family_phase_done(struct family_run *run, const char *phase)
{
	long long now = clock_monotonic_us();
	if (!cJSON_AddNumberToObject(run->phases, phase, (double)((now - run->phase_start) / 1000)))
		return LL_ENOMEM;
	run->phase_start = now;
	return 0;
}

int family_read_file(const char *path, size_t limit, char **ret_text, size_t *ret_len)
{
	return plat_read_file(path, limit, ret_text, ret_len);
}

int family_write_file(const char *path, const char *text, size_t len)
{
	return plat_write_file(path, text, len);
}

int family_add_measured(cJSON *o, const char *key, const cJSON *measured, const char *name)
{
	const cJSON *method = cJSON_GetObjectItemCaseSensitive(measured, "method");
	const cJSON *program = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(measured, "programs"), name);
	cJSON *copy;

	if (!program)
		return 0;
	copy = cJSON_Duplicate(program, true);
	if (!copy || !cJSON_AddItemToObject(o, key, copy)) {
		cJSON_Delete(copy);
		return LL_ENOMEM;
	}
	if (!cJSON_GetObjectItemCaseSensitive(copy, "runs"))
		cJSON_AddItemToObject(
			copy, "runs",
			cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(method, "runs"), true));
	if (strcmp(key, "warm") == 0 && !cJSON_GetObjectItemCaseSensitive(copy, "warmup"))
		cJSON_AddItemToObject(
			copy, "warmup",
			cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(method, "warmup"), true));
	/* The column's figure and the median, at hand beside the samples. */
	for (const char *const *k = (const char *const[]){"min_us", "median_us", NULL}; *k; k++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(copy, "summary"), *k);
		if (v && !cJSON_GetObjectItemCaseSensitive(copy, *k))
			cJSON_AddItemToObject(copy, *k, cJSON_Duplicate(v, true));
	}
	return 0;
}

/* Adds to M, as KEY, a copy of FROM's member NAME. */
static bool add_copy(cJSON *m, const char *key, const cJSON *from, const char *name)
{
	cJSON *item = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(from, name), true);
	if (!item || !cJSON_AddItemToObject(m, key, item)) {
		cJSON_Delete(item);
		return false;
	}
	return true;
}

int family_add_measurement(cJSON *result, const struct family_measured *measured)
{
	cJSON *m = cJSON_AddObjectToObject(result, "measurement");

	if (!m)
		return LL_ENOMEM;
	if (measured->warm && (!add_copy(m, "warm", measured->warm, "method") ||
			       !add_copy(m, "warm_order", measured->warm, "order") ||
			       !add_copy(m, "warm_reruns", measured->warm, "reruns")))
		return LL_ENOMEM;
	if (measured->cold && (!add_copy(m, "cold", measured->cold, "method") ||
			       !add_copy(m, "cold_reruns", measured->cold, "reruns")))
		return LL_ENOMEM;
	return 0;
}

uint64_t family_hex_value(const cJSON *obj, const char *key)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (!cJSON_IsString(item) || strncmp(item->valuestring, "0x", 2) != 0)
		return 0;
	return strtoull(item->valuestring + 2, NULL, 16);
}

int family_add_hex(cJSON *obj, const char *key, uint64_t value)
{
	char text[24];

	snprintf(text, sizeof(text), "0x%llx", (unsigned long long)value);
	return cJSON_AddStringToObject(obj, key, text) ? 0 : LL_ENOMEM;
}

int family_add_file(cJSON *files, const char *name, const char *path)
{
	char hex[65];
	long long size = 0;
	cJSON *f;
	int rc;

	if ((rc = plat_file_sha256(path, hex, &size)) < 0)
		return rc;
	f = cJSON_CreateObject();
	if (!f || !cJSON_AddItemToArray(files, f)) {
		cJSON_Delete(f);
		return LL_ENOMEM;
	}
	/* F belongs to FILES from here on. */
	if (!cJSON_AddStringToObject(f, "name", name) || !cJSON_AddStringToObject(f, "sha256", hex) ||
	    !cJSON_AddNumberToObject(f, "size", (double)size))
		return LL_ENOMEM;
	return 0;
}

void family_invalid_va(bool *valid, char *reason, size_t size, const char *fmt, va_list ap)
{
	if (!*valid)
		return; /* keep the first reason */
	*valid = false;
	vsnprintf(reason, size, fmt, ap);
}

void family_bind_options(const struct runner *runner, const char *image_dir, const char *search[2],
			 struct pe_bind_options *options)
{
	memset(options, 0, sizeof(*options));
	for (size_t i = 0; i < runner->system_dir_count; i++)
		search[i] = runner->system_dirs[i];
	options->image_dir = image_dir;
	options->search_dirs = search;
	options->search_dir_count = runner->system_dir_count;
}

int family_timing_slot(struct family_timing *ret, size_t n, const char *name)
{
	if (n + 1 >= MEASURE_MAX_PROGRAMS)
		return err_set(LL_ETOOBIG, "At most %d variants can be timed together.",
			       MEASURE_MAX_PROGRAMS - 1);
	ret->programs[n].name = name;
	return 0;
}

cJSON *family_add_toolchain(cJSON *result, const char *kind, const char *target, const char *compiler)
{
	cJSON *t = cJSON_AddObjectToObject(result, "toolchain");

	if (!t || !cJSON_AddStringToObject(t, "kind", kind) ||
	    !cJSON_AddStringToObject(t, "target", target) ||
	    !cJSON_AddStringToObject(t, "compiler", compiler))
		return NULL;
	return t;
}

bool family_loader_timestamp(const struct runner *runner, const char *exe_dir, const char *name,
			     uint32_t *ret)
{
	const char *dirs[3] = {exe_dir, runner->system_dirs[0], runner->system_dirs[1]};
	size_t count = 1 + runner->system_dir_count;

	for (size_t d = 0; d < count; d++) {
		char path[PLAT_MAX_PATH + 1], lower[256];
		struct pe_image *image = NULL;
		size_t n = strlen(name);

		if (n >= sizeof(lower) || strchr(name, '/') || strchr(name, '\\'))
			break;
		for (size_t k = 0; k <= n; k++)
			lower[k] = (char)((name[k] >= 'A' && name[k] <= 'Z') ? name[k] + 32 : name[k]);
		if ((family_path(path, dirs[d], name) < 0 || !plat_file_exists(path)) &&
		    (family_path(path, dirs[d], lower) < 0 || !plat_file_exists(path)))
			continue;
		if (pe_image_open(path, &image) < 0)
			continue;
		*ret = image->timestamp;
		pe_image_free(image);
		return true;
	}
	err_clear();
	return false;
}
