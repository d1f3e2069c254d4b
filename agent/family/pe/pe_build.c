/*
 * pe_build.c - compiles and links the generated program with mingw-w64,
 * task->jobs commands at a time, and runs the instrumented trace build.
 *
 * Link flags per set (DESIGN.md, "Known traps"): binutils 2.40 turns on
 * dynamic base and high-entropy VA by default and the gcc driver gives DLLs
 * automatic image bases, so a fixed-base set passes
 * --image-base=0x10000000 --disable-dynamicbase --disable-high-entropy-va
 * --disable-auto-image-base; a `toolchain` set passes none of them.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadlab/err.h"
#include "loadlab/json.h"
#include "loadlab/pe.h"
#include "pe_family.h"

/* One command: argv strings owned. */
struct command {
	char **argv;
	size_t argc, cap;
	char log[PLAT_MAX_PATH + 1];
};

struct command_list {
	struct command *items;
	size_t count, cap;
};

static void command_list_release(struct command_list *list)
{
	for (size_t i = 0; i < list->count; i++) {
		for (size_t k = 0; k < list->items[i].argc; k++)
			free(list->items[i].argv[k]);
		free(list->items[i].argv);
	}
	free(list->items);
	memset(list, 0, sizeof(*list));
}

static struct command *command_new(struct command_list *list)
{
	if (list->count == list->cap) {
		size_t cap = list->cap ? list->cap * 2 : 32;
		struct command *items = realloc(list->items, cap * sizeof(*items));
		if (!items)
			return NULL;
		list->items = items;
		list->cap = cap;
	}
	memset(&list->items[list->count], 0, sizeof(list->items[0]));
	return &list->items[list->count++];
}

static int command_arg(struct command *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int command_arg(struct command *c, const char *fmt, ...)
{
	char text[PLAT_MAX_PATH + 256];
	va_list ap;
	int n;

	if (c->argc + 2 > c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 16;
		char **argv;
		if (cap > PLAT_MAX_ARGS)
			return err_set(LL_ETOOBIG, "A command would have more than %u arguments.", PLAT_MAX_ARGS);
		argv = realloc(c->argv, cap * sizeof(*argv));
		if (!argv)
			return LL_ENOMEM;
		c->argv = argv;
		c->cap = cap;
	}
	va_start(ap, fmt);
	n = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(text))
		return err_set(LL_ETOOBIG, "A command argument is too long.");
	c->argv[c->argc] = strdup(text);
	if (!c->argv[c->argc])
		return LL_ENOMEM;
	c->argv[++c->argc] = NULL;
	return 0;
}

/* The first lines of a failed command's output, for the error message. */
static void failure_message(const struct command *c, int code)
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

/* Runs LIST, JOBS at a time, in order of start; stops at the first failure
 * or cancellation. PHASE and the percent range [FROM, TO] go to progress. */
static int run_commands(const struct pe_context *ctx, struct command_list *list, int from, int to)
{
	size_t jobs = ctx->task->jobs > 0 ? (size_t)ctx->task->jobs : 1, next = 0, done = 0;
	struct plat_process **running;
	size_t *which;
	size_t head = 0, count = 0;
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
			struct command *c = &list->items[next];
			struct plat_spawn_options o = {.argv = (const char *const *)c->argv,
						       .stdout_path = c->log, .stderr_path = c->log};
			size_t slot = (head + count) % jobs;
			if ((rc = ctx->toolchain.host ? plat_spawn_host(&o, &running[slot])
						      : plat_spawn(&o, &running[slot])) < 0)
				break;
			which[slot] = next++;
			count++;
		}
		if (count == 0)
			break;
		int code = 0;
		int wrc = plat_wait(running[head], PE_TOOL_TIMEOUT_MS, &code, NULL);
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
		if (rc == 0 && list->count > 0)
			rc = family_progress(ctx->task, "build", from + (int)((to - from) * done / list->count));
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

/* DIR as the compiler sees it: a host path when it is the host's. OUT has
 * PLAT_MAX_PATH + 1 bytes. */
static int tool_dir(const struct pe_context *ctx, const char *dir, char *out)
{
	if (ctx->toolchain.host)
		return plat_host_path(dir, out, PLAT_MAX_PATH + 1);
	if (strlen(dir) > PLAT_MAX_PATH)
		return err_set(LL_ETOOBIG, "A folder path is too long.");
	memcpy(out, dir, strlen(dir) + 1);
	return 0;
}

static int compile(const struct pe_context *ctx, struct command_list *list, const char *source,
		   const char *object, bool trace, bool instrument)
{
	struct command *c = command_new(list);
	char src[PLAT_MAX_PATH + 1], obj[PLAT_MAX_PATH + 1];
	int rc;

	if (!c)
		return LL_ENOMEM;
	if ((rc = tool_dir(ctx, ctx->src, src)) < 0 || (rc = tool_dir(ctx, ctx->obj, obj)) < 0)
		return rc;
	if ((rc = command_arg(c, "%s", ctx->toolchain.gcc)) < 0 || (rc = command_arg(c, "-O1")) < 0 ||
	    (rc = command_arg(c, "-c")) < 0 || (rc = command_arg(c, "%s/%s", src, source)) < 0 ||
	    (rc = command_arg(c, "-o")) < 0 || (rc = command_arg(c, "%s/%s", obj, object)) < 0)
		return rc;
	if (trace && (rc = command_arg(c, "-DLL_TRACE")) < 0)
		return rc;
	if (instrument && (rc = command_arg(c, "-finstrument-functions")) < 0)
		return rc;
	if ((size_t)snprintf(c->log, sizeof(c->log), "%s/%s.log", ctx->obj, object) >= sizeof(c->log))
		return err_set(LL_ETOOBIG, "A log path is too long.");
	return 0;
}

/* The linker flag that turns high-entropy VA off, where there is one: a
 * PE32 (32-bit x86) image has no such flag and its linker no option. */
static const char *no_high_entropy(const struct pe_context *ctx)
{
	return ctx->toolchain.x86 ? "" : ",--disable-high-entropy-va";
}

/* DLL I of a set in DIR from OBJECT with DEF. */
static int link_dll(const struct pe_context *ctx, struct command_list *list, const char *dir,
		    bool toolchain_flags, int i, const char *object, const char *def)
{
	struct command *c = command_new(list);
	char out[PLAT_MAX_PATH + 1], src[PLAT_MAX_PATH + 1], obj[PLAT_MAX_PATH + 1];
	int rc;

	if (!c)
		return LL_ENOMEM;
	if ((rc = tool_dir(ctx, dir, out)) < 0 || (rc = tool_dir(ctx, ctx->src, src)) < 0 ||
	    (rc = tool_dir(ctx, ctx->obj, obj)) < 0)
		return rc;
	if ((rc = command_arg(c, "%s", ctx->toolchain.gcc)) < 0 || (rc = command_arg(c, "-shared")) < 0 ||
	    (rc = command_arg(c, "-nostdlib")) < 0 || (rc = command_arg(c, "-e")) < 0 ||
	    /* __stdcall DllMain is _DllMain@12 to a 32-bit x86 linker. */
	    (rc = command_arg(c, "%s", ctx->toolchain.x86 ? "_DllMain@12" : "DllMain")) < 0 ||
	    (rc = command_arg(c, "-o")) < 0 ||
	    (rc = command_arg(c, "%s/lt%d.dll", out, i)) < 0 ||
	    (rc = command_arg(c, "%s/%s", obj, object)) < 0 ||
	    (rc = command_arg(c, "%s/%s", src, def)) < 0 ||
	    (rc = command_arg(c, "-Wl,--out-implib,%s/liblt%d.a", out, i)) < 0)
		return rc;
	if (!toolchain_flags &&
	    (rc = command_arg(c, "-Wl,--image-base=0x%llx,--disable-dynamicbase%s,"
				 "--disable-auto-image-base,--enable-reloc-section",
			      (unsigned long long)PE_SAME_BASE, no_high_entropy(ctx))) < 0)
		return rc;
	if ((size_t)snprintf(c->log, sizeof(c->log), "%s/lt%d.log", dir, i) >= sizeof(c->log))
		return err_set(LL_ETOOBIG, "A log path is too long.");
	return 0;
}

static int link_exe(const struct pe_context *ctx, struct command_list *list, const char *dir,
		    bool toolchain_flags, const char *object, const char *exe, bool with_dlls)
{
	struct command *c = command_new(list);
	char out[PLAT_MAX_PATH + 1], obj[PLAT_MAX_PATH + 1];
	int rc;

	if (!c)
		return LL_ENOMEM;
	if ((rc = tool_dir(ctx, dir, out)) < 0 || (rc = tool_dir(ctx, ctx->obj, obj)) < 0)
		return rc;
	if ((rc = command_arg(c, "%s", ctx->toolchain.gcc)) < 0 || (rc = command_arg(c, "-o")) < 0 ||
	    (rc = command_arg(c, "%s/%s", out, exe)) < 0 ||
	    (rc = command_arg(c, "%s/%s", obj, object)) < 0)
		return rc;
	for (int i = 0; with_dlls && i < ctx->dlls; i++)
		if ((rc = command_arg(c, "%s/liblt%d.a", out, i)) < 0)
			return rc;
	if (!toolchain_flags && (rc = command_arg(c, "-Wl,--disable-dynamicbase%s", no_high_entropy(ctx))) < 0)
		return rc;
	if ((size_t)snprintf(c->log, sizeof(c->log), "%s/%s.log", dir, exe) >= sizeof(c->log))
		return err_set(LL_ETOOBIG, "A log path is too long.");
	return 0;
}

int pe_build(struct pe_context *ctx, bool trace_order, bool trace_build)
{
	struct command_list objects = {0}, dlls = {0}, exes = {0};
	char name[64], object[64];
	int rc = 0, i;

	/* Objects. */
	for (i = 0; i < ctx->dlls && rc == 0; i++) {
		if (trace_order) {
			snprintf(name, sizeof(name), "lt%d_order.c", i);
			snprintf(object, sizeof(object), "lt%d_order.o", i);
			rc = compile(ctx, &objects, name, object, false, false);
			continue;
		}
		snprintf(name, sizeof(name), "lt%d.c", i);
		snprintf(object, sizeof(object), "lt%d.o", i);
		rc = compile(ctx, &objects, name, object, false, false);
		if (rc == 0 && trace_build) {
			snprintf(object, sizeof(object), "lt%d_trace.o", i);
			rc = compile(ctx, &objects, name, object, true, true);
		}
	}
	if (rc == 0 && !trace_order)
		rc = compile(ctx, &objects, "main.c", "main.o", false, false);
	if (rc == 0 && !trace_order)
		rc = compile(ctx, &objects, "empty.c", "empty.o", false, false);
	if (rc == 0 && trace_build)
		rc = compile(ctx, &objects, "main.c", "main_trace.o", true, false);
	if (rc < 0 || (rc = run_commands(ctx, &objects, trace_order ? 50 : 0, trace_order ? 70 : 40)) < 0)
		goto out;

	/* DLLs of every set, then the programs against their import libraries. */
	for (size_t s = 0; s < ctx->set_count && rc == 0; s++) {
		const struct pe_link_set *set = &ctx->sets[s];
		if (set->trace_order != trace_order)
			continue;
		if ((rc = plat_mkdirs(set->dir)) < 0)
			goto out;
		for (i = 0; i < ctx->dlls && rc == 0; i++) {
			char def[64];
			snprintf(object, sizeof(object), trace_order ? "lt%d_order.o" : "lt%d.o", i);
			snprintf(def, sizeof(def), set->ordinal ? "lt%d_ordinal.def" : "lt%d.def", i);
			rc = link_dll(ctx, &dlls, set->dir, set->toolchain_flags, i, object, def);
		}
		if (rc == 0)
			rc = link_exe(ctx, &exes, set->dir, set->toolchain_flags, "main.o", "main.exe", true);
	}
	if (rc == 0 && trace_build) {
		char dir[PLAT_MAX_PATH + 1];
		if ((rc = family_path(dir, ctx->work, "trace")) < 0 || (rc = plat_mkdirs(dir)) < 0)
			goto out;
		for (i = 0; i < ctx->dlls && rc == 0; i++) {
			char def[64];
			snprintf(object, sizeof(object), "lt%d_trace.o", i);
			snprintf(def, sizeof(def), "lt%d_trace.def", i);
			rc = link_dll(ctx, &dlls, dir, false, i, object, def);
		}
		if (rc == 0)
			rc = link_exe(ctx, &exes, dir, false, "main_trace.o", "main.exe", true);
	}
	if (rc == 0 && !trace_order) {
		char dir[PLAT_MAX_PATH + 1];
		if ((rc = family_path(dir, ctx->work, "empty")) < 0 || (rc = plat_mkdirs(dir)) < 0)
			goto out;
		rc = link_exe(ctx, &exes, dir, false, "empty.o", "empty.exe", false);
	}
	if (rc < 0 || (rc = run_commands(ctx, &dlls, trace_order ? 70 : 40, trace_order ? 90 : 80)) < 0 ||
	    (rc = run_commands(ctx, &exes, trace_order ? 90 : 80, trace_order ? 100 : 90)) < 0)
		goto out;
out:
	command_list_release(&objects);
	command_list_release(&dlls);
	command_list_release(&exes);
	return rc;
}

/* Maps each traced RVA of DLL I to a function index through the trace
 * DLL's export table (names are exported there). */
static int trace_dll(struct pe_context *ctx, int i, const cJSON *rvas, const char *dir)
{
	char path[PLAT_MAX_PATH + 1], file[64];
	struct pe_image *image = NULL;
	struct pe_exports exports = {0};
	int *list = NULL, rc;
	size_t n = 0;
	const cJSON *item;

	snprintf(file, sizeof(file), "lt%d.dll", i);
	if ((rc = family_path(path, dir, file)) < 0 || (rc = pe_image_open(path, &image)) < 0 ||
	    (rc = pe_exports_read(image, &exports)) < 0)
		goto out;
	list = calloc((size_t)ctx->exports + 1, sizeof(*list));
	if (!list) {
		rc = LL_ENOMEM;
		goto out;
	}
	cJSON_ArrayForEach(item, rvas) {
		long long rva;
		if ((rc = json_number_to_int(item, 0, UINT32_MAX, "trace rva", &rva)) < 0)
			goto out;
		for (size_t e = 0; e < exports.count; e++) {
			const struct pe_export *x = &exports.entries[e];
			int index = (int)x->ordinal - 1;
			if (x->rva == (uint32_t)rva && index >= 0 && index < ctx->exports &&
			    n < (size_t)ctx->exports) {
				list[n++] = index;
				break;
			}
		}
	}
	ctx->trace[i] = list;
	ctx->trace_count[i] = n;
	list = NULL;
out:
	free(list);
	pe_exports_release(&exports);
	pe_image_free(image);
	return rc;
}

int pe_build_trace_run(struct pe_context *ctx)
{
	char dir[PLAT_MAX_PATH + 1], exe[PLAT_MAX_PATH + 1], out_path[PLAT_MAX_PATH + 1];
	const char *args[] = {"trace", "trace.json", NULL};
	cJSON *root = NULL;
	char *text = NULL;
	size_t len;
	int code = 0, rc;

	if ((rc = family_path(dir, ctx->work, "trace")) < 0 || (rc = family_path(exe, dir, "main.exe")) < 0 ||
	    (rc = family_path(out_path, dir, "trace.json")) < 0)
		return rc;
	if ((rc = runner_run(&ctx->runner, exe, args, dir, NULL, PE_RUN_TIMEOUT_MS, &code, NULL)) < 0)
		return rc;
	if (code != 0)
		return err_set(LL_EIO, "The trace build exited with %d.", code);
	if ((rc = family_read_file(out_path, PE_MAX_REPORT, &text, &len)) < 0 ||
	    (rc = json_parse_object(text, len, 8, &root)) < 0)
		goto out;
	ctx->trace = calloc((size_t)ctx->dlls, sizeof(*ctx->trace));
	ctx->trace_count = calloc((size_t)ctx->dlls, sizeof(*ctx->trace_count));
	if (!ctx->trace || !ctx->trace_count) {
		rc = LL_ENOMEM;
		goto out;
	}
	const cJSON *modules = cJSON_GetObjectItemCaseSensitive(root, "modules");
	if (!cJSON_IsArray(modules) || cJSON_GetArraySize(modules) != ctx->dlls) {
		rc = err_set(LL_EFORMAT, "The trace report lists the wrong modules.");
		goto out;
	}
	for (int i = 0; i < ctx->dlls; i++) {
		const cJSON *rvas = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(modules, i), "rvas");
		if (!cJSON_IsArray(rvas)) {
			rc = err_set(LL_EFORMAT, "The trace report of lt%d.dll has no rvas.", i);
			goto out;
		}
		if ((rc = trace_dll(ctx, i, rvas, dir)) < 0)
			goto out;
	}
out:
	cJSON_Delete(root);
	free(text);
	return rc;
}
