/* family_build.c - the helpers of family_build.h. */
#include "family/family_build.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "family/family_util.h"
#include "loadlab/array.h"
#include "loadlab/err.h"
#include "loadlab/json.h"

int family_context_init(struct family_context *ctx, const struct family_run *run)
{
	const cJSON *gen = cJSON_GetObjectItemCaseSensitive(run->job, "generator");
	const char *main_mode;
	long long value;
	int rc;

	ctx->task = run->task;
	/* The driver checked the work folder's length. */
	snprintf(ctx->work, sizeof(ctx->work), "%s", run->work);
	if ((rc = json_get_int(gen, "dlls", 1, JOB_SPEC_MAX_DLLS, true, 0, &value)) < 0)
		return rc;
	ctx->dlls = (int)value;
	if ((rc = json_get_int(gen, "exports", 1, JOB_SPEC_MAX_EXPORTS, true, 0, &value)) < 0)
		return rc;
	ctx->exports = (int)value;
	if ((rc = json_get_int(gen, "globals_per_function", 0, JOB_SPEC_MAX_GLOBALS, false, 0, &value)) < 0)
		return rc;
	ctx->globals = (int)value;
	if ((rc = json_get_string(gen, "main", 16, false, "reference", &main_mode)) < 0)
		return rc;
	ctx->main_call = strcmp(main_mode, "call") == 0;
	return 0;
}

int family_context_folders(struct family_context *ctx)
{
	int rc;

	if ((rc = family_path(ctx->src, ctx->work, "src")) < 0 ||
	    (rc = family_path(ctx->obj, ctx->work, "obj")) < 0 || (rc = plat_mkdirs(ctx->src)) < 0 ||
	    (rc = plat_mkdirs(ctx->obj)) < 0)
		return rc;
	return 0;
}

void family_context_release(struct family_context *ctx)
{
	for (int i = 0; ctx->trace && i < ctx->dlls; i++)
		free(ctx->trace[i]);
	free(ctx->trace);
	free(ctx->trace_count);
	cJSON_Delete(ctx->floor_files);
	for (size_t i = 0; i < ctx->measured_count; i++) {
		for (size_t f = 0; ctx->measured[i].files && ctx->measured[i].files[f]; f++)
			free(ctx->measured[i].files[f]);
		free(ctx->measured[i].files);
	}
}

void family_variants_free(void *variants, size_t count, size_t size)
{
	for (size_t v = 0; variants && v < count; v++) {
		struct family_variant *var = (void *)((char *)variants + v * size);
		cJSON_Delete(var->verify);
		cJSON_Delete(var->files);
	}
	free(variants);
}

int family_state_new(const struct family_run *run, size_t size, family_read_job *read_job,
		     void (*release)(void *state), void **ret_state)
{
	struct family_context *ctx = calloc(1, size);
	int rc;

	if (!ctx)
		return LL_ENOMEM;
	if ((rc = family_context_init(ctx, run)) < 0 || (rc = read_job(ctx, run->job)) < 0) {
		release(ctx);
		return rc;
	}
	*ret_state = ctx;
	return 0;
}

void family_variant_invalid(struct family_variant *variant, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	family_invalid_va(&variant->valid, variant->invalid_reason, sizeof(variant->invalid_reason), fmt, ap);
	va_end(ap);
}

void family_commands_release(struct family_commands *list)
{
	for (size_t i = 0; i < list->count; i++) {
		for (size_t k = 0; k < list->items[i].argc; k++)
			free(list->items[i].argv[k]);
		free(list->items[i].argv);
	}
	free(list->items);
	memset(list, 0, sizeof(*list));
}

struct family_command *family_command_new(struct family_commands *list)
{
	struct family_command *items = array_grow(list->items, list->count, &list->cap, sizeof(*items), 32);

	if (!items)
		return NULL;
	list->items = items;
	memset(&list->items[list->count], 0, sizeof(list->items[0]));
	return &list->items[list->count++];
}

int family_command_arg(struct family_command *c, const char *fmt, ...)
{
	char text[PLAT_MAX_PATH + 256];
	va_list ap;
	int n;

	if (c->argc + 2 > c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 16;
		char **argv;
		if (cap > PLAT_MAX_ARGS)
			return err_set(LL_ETOOBIG, "A command would have more than %u arguments.",
				       PLAT_MAX_ARGS);
		if (!(argv = realloc(c->argv, cap * sizeof(*argv))))
			return LL_ENOMEM;
		c->argv = argv;
		c->cap = cap;
	}
	va_start(ap, fmt);
	n = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(text))
		return err_set(LL_ETOOBIG, "A command argument is too long.");
	if (!(c->argv[c->argc] = strdup(text)))
		return LL_ENOMEM;
	c->argv[++c->argc] = NULL;
	return 0;
}

int family_command_log(struct family_command *c, const char *dir, const char *name)
{
	if ((size_t)snprintf(c->log, sizeof(c->log), "%s/%s.log", dir, name) >= sizeof(c->log))
		return err_set(LL_ETOOBIG, "A log path is too long.");
	return 0;
}

/* The first lines of a failed command's output, for the error message. */
static void failure_message(const struct family_command *c, int code)
{
	char *text = NULL;
	size_t len = 0;

	if (family_read_file(c->log, 1u << 20, &text, &len) < 0)
		text = NULL;
	if (text && len > 1500)
		text[1500] = '\0';
	err_set(LL_EIO, "%s exited with %d: %s", c->argv[0], code, text ? text : "(no output)");
	free(text);
}

int family_commands_run(const struct pipeline_task *task, struct family_commands *list, bool host,
			int timeout_ms, int from, int to)
{
	size_t jobs = task->jobs > 0 ? (size_t)task->jobs : 1, next = 0, done = 0;
	size_t head = 0, count = 0, *which;
	struct plat_process **running;
	int rc = 0;

	if (jobs > 64)
		jobs = 64;
	running = calloc(jobs, sizeof(*running));
	which = calloc(jobs, sizeof(*which));
	if (!running || !which) {
		rc = LL_ENOMEM;
		goto out;
	}
	while (done < list->count) {
		while (rc == 0 && count < jobs && next < list->count) {
			struct family_command *c = &list->items[next];
			struct plat_spawn_options o = {.argv = (const char *const *)c->argv,
						       .stdout_path = c->log,
						       .stderr_path = c->log};
			size_t slot = (head + count) % jobs;
			if ((rc = host ? plat_spawn_host(&o, &running[slot])
				       : plat_spawn(&o, &running[slot])) < 0)
				break;
			which[slot] = next++;
			count++;
		}
		if (count == 0)
			break;
		int code = 0, wrc = plat_wait(running[head], timeout_ms, &code, NULL);
		if (rc == 0 && wrc < 0)
			rc = wrc;
		else if (rc == 0 && code != 0) {
			failure_message(&list->items[which[head]], code);
			rc = LL_EIO;
		}
		plat_process_free(running[head]);
		running[head] = NULL;
		head = (head + 1) % jobs;
		count--;
		done++;
		if (rc == 0)
			rc = family_progress(task, "build", from + (int)((to - from) * done / list->count));
		if (rc < 0 && count == 0)
			break;
	}
out:
	for (size_t i = 0; running && i < jobs; i++)
		plat_process_free(running[i]);
	free(running);
	free(which);
	return rc;
}

int family_build_run(const struct pipeline_task *task, struct family_build *build, bool links, bool host,
		     int timeout_ms, bool trace_order)
{
	static const int percent[2][4] = {{0, 40, 80, 90}, {50, 70, 90, 100}};
	struct family_commands *steps[3] = {&build->objects, &build->libraries, &build->programs};
	const int *at = percent[trace_order];
	int rc;

	for (int s = links ? 1 : 0; s < (links ? 3 : 1); s++)
		if ((rc = family_commands_run(task, steps[s], host, timeout_ms, at[s], at[s + 1])) < 0)
			return rc;
	return 0;
}

void family_build_release(struct family_build *build)
{
	family_commands_release(&build->objects);
	family_commands_release(&build->libraries);
	family_commands_release(&build->programs);
}

/* Library I's name (I < CTX->dlls), else the program's, into NAME (SIZE). */
static void file_name(const struct family_context *ctx, const struct family_names *names, int i, bool empty,
		      char *name, size_t size)
{
	if (i < ctx->dlls)
		snprintf(name, size, "%s%d%s", names->library_prefix, i, names->library_suffix);
	else
		snprintf(name, size, "%s", empty ? names->empty : names->main);
}

int family_files_json(const struct family_context *ctx, const struct family_names *names, const char *folder,
		      bool empty, cJSON **ret_files)
{
	cJSON *files = cJSON_CreateArray();
	int rc = 0;

	if (!files)
		return LL_ENOMEM;
	for (int i = empty ? ctx->dlls : 0; i <= ctx->dlls; i++) {
		char name[64], path[PLAT_MAX_PATH + 1];

		file_name(ctx, names, i, empty, name, sizeof(name));
		if ((rc = family_path(path, folder, name)) < 0 ||
		    (rc = family_add_file(files, name, path)) < 0)
			goto out;
	}
	*ret_files = files;
	files = NULL;
out:
	cJSON_Delete(files);
	return rc;
}

/* Fills PROGRAM and P for the program in DIR (the main program and its
 * libraries, or the empty program when EMPTY). */
static int program_init(const struct family_context *ctx, const struct family_names *names, const char *dir,
			bool empty, struct family_program *program, struct measure_program *p)
{
	size_t n = 0, count = empty ? 1 : (size_t)ctx->dlls + 1;
	int rc;

	if (strlen(dir) > PLAT_MAX_PATH)
		return err_set(LL_ETOOBIG, "The path %s is too long.", dir);
	memcpy(program->dir, dir, strlen(dir) + 1);
	if ((rc = family_path(program->exe, dir, empty ? names->empty : names->main)) < 0)
		return rc;
	if (!(program->files = calloc(count + 1, sizeof(*program->files))) ||
	    !(program->files[0] = strdup(program->exe)))
		return LL_ENOMEM;
	for (int i = 0; !empty && i < ctx->dlls; i++) {
		char name[64], path[PLAT_MAX_PATH + 1];
		file_name(ctx, names, i, false, name, sizeof(name));
		if ((rc = family_path(path, dir, name)) < 0)
			return rc;
		if (!(program->files[++n] = strdup(path)))
			return LL_ENOMEM;
	}
	program->argv[0] = program->exe;
	program->argv[1] = NULL;
	p->spawn.argv = program->argv;
	p->spawn.cwd = program->dir; /* DIR may not outlive this call */
	p->files = (const char *const *)program->files;
	return 0;
}

int family_timing(struct family_context *ctx, const struct family_names *names, const void *variants,
		  size_t count, size_t size, const char *floor_name, struct family_timing *ret)
{
	char empty_dir[PLAT_MAX_PATH + 1];
	size_t n = 0;
	int rc;

	memset(ret, 0, sizeof(*ret));
	if ((rc = family_path(empty_dir, ctx->work, "empty")) < 0 ||
	    (rc = family_files_json(ctx, names, empty_dir, true, &ctx->floor_files)) < 0)
		return rc;
	for (size_t v = 0; v < count; v++) {
		const struct family_variant *var = (const void *)((const char *)variants + v * size);
		if (!var->valid)
			continue;
		if ((rc = family_timing_slot(ret, n, var->name)) < 0)
			return rc;
		ctx->measured_count = n + 1;
		if ((rc = program_init(ctx, names, var->dir, false, &ctx->measured[n], &ret->programs[n])) <
		    0)
			return rc;
		n++;
	}
	ret->programs[n].name = floor_name;
	ctx->measured_count = n + 1;
	if ((rc = program_init(ctx, names, empty_dir, true, &ctx->measured[n], &ret->programs[n])) < 0)
		return rc;
	ret->count = n + 1;
	return 0;
}

/* Adds to the array VARIANTS an object for VAR (family_describe()),
 * KNOBS handed over: deleted on failure. */
static int describe_variant(cJSON *variants, struct family_variant *var, cJSON *knobs,
			    const struct family_measured *measured)
{
	cJSON *o = cJSON_CreateObject();

	if (!o || !cJSON_AddItemToArray(variants, o)) {
		cJSON_Delete(o);
		cJSON_Delete(knobs);
		return LL_ENOMEM;
	}
	if (!cJSON_AddStringToObject(o, "name", var->name) || !knobs ||
	    !cJSON_AddItemToObject(o, "knobs", knobs)) {
		cJSON_Delete(knobs);
		return LL_ENOMEM;
	}
	if (!cJSON_AddBoolToObject(o, "valid", var->valid))
		return LL_ENOMEM;
	if (!var->valid && !cJSON_AddStringToObject(o, "invalid_reason", var->invalid_reason))
		return LL_ENOMEM;
	if (var->verify) {
		if (!cJSON_AddItemToObject(o, "verify", var->verify))
			return LL_ENOMEM;
		var->verify = NULL;
	}
	if (var->files) {
		if (!cJSON_AddItemToObject(o, "files", var->files))
			return LL_ENOMEM;
		var->files = NULL;
	}
	if (var->valid && (family_add_measured(o, "warm", measured->warm, var->name) < 0 ||
			   family_add_measured(o, "cold", measured->cold, var->name) < 0))
		return LL_ENOMEM;
	return 0;
}

int family_describe(cJSON *result, struct family_context *ctx, void *variants, size_t count, size_t size,
		    family_knobs_json *knobs, const char *empty, const char *floor_name,
		    const struct family_measured *measured)
{
	cJSON *list, *floor;
	int rc;

	if (!(list = cJSON_AddArrayToObject(result, "variants")))
		return LL_ENOMEM;
	for (size_t v = 0; v < count; v++) {
		struct family_variant *var = (void *)((char *)variants + v * size);
		if ((rc = describe_variant(list, var, knobs(var), measured)) < 0)
			return rc;
	}

	if (!(floor = cJSON_AddObjectToObject(result, "floor")) ||
	    !cJSON_AddStringToObject(floor, "name", empty))
		return LL_ENOMEM;
	if (ctx->floor_files) {
		if (!cJSON_AddItemToObject(floor, "files", ctx->floor_files))
			return LL_ENOMEM;
		ctx->floor_files = NULL;
	}
	if (family_add_measured(floor, "warm", measured->warm, floor_name) < 0 ||
	    family_add_measured(floor, "cold", measured->cold, floor_name) < 0 ||
	    family_add_measurement(result, measured) < 0)
		return LL_ENOMEM;
	return 0;
}
