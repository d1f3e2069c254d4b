/*
 * elf_build.c - compiles and links the elf family's program with gcc and
 * GNU ld, task->jobs commands at a time, and runs the instrumented trace
 * build.
 *
 * Objects: obj/link/lt<i>.o (-fPIC), obj/hidden/lt<i>.o (-fvisibility=hidden),
 * obj/order/lt<i>.o (from lt<i>_order.c), obj/trace/lt<i>.o
 * (-finstrument-functions), main.o, main_trace.o (-DLL_TRACE), empty.o.
 * Each variant links its libraries and program into its own folder with
 * its knobs' flags (elf_family.h, docs/elf-pipeline.md):
 *   libraries  -shared -nostdlib -Wl,-soname,liblt<i>.so
 *              -z now | -z lazy, [-z pack-relative-relocs], [-Bsymbolic],
 *              --hash-style=gnu | sysv
 *   program    the same but -Bsymbolic (which means nothing there), and
 *              -rpath $ORIGIN so the loader finds the libraries beside it.
 * Binding, hash style and RELR are given both ways (-z lazy, gnu) so that
 * a distribution's defaults do not decide them.
 */
#ifdef __linux__

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf_family.h"
#include "loadlab/err.h"

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

static int command_log(struct command *c, const char *dir, const char *name)
{
	if ((size_t)snprintf(c->log, sizeof(c->log), "%s/%s.log", dir, name) >= sizeof(c->log))
		return err_set(LL_ETOOBIG, "A log path is too long.");
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

/* Runs LIST, task->jobs at a time, in order of start; stops at the first
 * failure or cancellation. The percent range [FROM, TO] goes to progress. */
static int run_commands(const struct elf_context *ctx, struct command_list *list, int from, int to)
{
	size_t jobs = ctx->task->jobs > 0 ? (size_t)ctx->task->jobs : 1, next = 0, done = 0;
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
			struct command *c = &list->items[next];
			struct plat_spawn_options o = {.argv = (const char *const *)c->argv,
						       .stdout_path = c->log, .stderr_path = c->log};
			size_t slot = (head + count) % jobs;
			if ((rc = plat_spawn(&o, &running[slot])) < 0)
				break;
			which[slot] = next++;
			count++;
		}
		if (count == 0)
			break;
		int code = 0, wrc = plat_wait(running[head], ELF_TOOL_TIMEOUT_MS, &code, NULL);
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

/* gcc -O1 -c SRC/SOURCE -o OBJ/OBJECT plus FLAGS (NULL-terminated). */
static int compile(const struct elf_context *ctx, struct command_list *list, const char *source,
		   const char *object, const char *const *flags)
{
	struct command *c = command_new(list);
	int rc;

	if (!c)
		return LL_ENOMEM;
	if ((rc = command_arg(c, "%s", ctx->gcc)) < 0 || (rc = command_arg(c, "-O1")) < 0 ||
	    (rc = command_arg(c, "-c")) < 0 || (rc = command_arg(c, "%s/%s", ctx->src, source)) < 0 ||
	    (rc = command_arg(c, "-o")) < 0 || (rc = command_arg(c, "%s/%s", ctx->obj, object)) < 0)
		return rc;
	for (; flags && *flags; flags++)
		if ((rc = command_arg(c, "%s", *flags)) < 0)
			return rc;
	return command_log(c, ctx->obj, object);
}

/* The linker flags of KNOBS; SYMBOLIC only for a library. */
static int knob_flags(struct command *c, const struct job_spec_elf_knobs *knobs, bool library)
{
	int rc;

	if ((rc = command_arg(c, "-Wl,-z,%s", knobs->bind_now ? "now" : "lazy")) < 0 ||
	    (rc = command_arg(c, "-Wl,--hash-style=%s", knobs->sysv_hash ? "sysv" : "gnu")) < 0)
		return rc;
	if (knobs->relr && (rc = command_arg(c, "-Wl,-z,pack-relative-relocs")) < 0)
		return rc;
	if (library && knobs->symbolic && (rc = command_arg(c, "-Wl,-Bsymbolic")) < 0)
		return rc;
	return 0;
}

/* Library I into DIR from OBJ/SET/lt<i>.o. */
static int link_library(const struct elf_context *ctx, struct command_list *list, const char *dir,
			const char *set, int i, const struct job_spec_elf_knobs *knobs)
{
	struct command *c = command_new(list);
	char name[64];
	int rc;

	if (!c)
		return LL_ENOMEM;
	snprintf(name, sizeof(name), "liblt%d.so", i);
	if ((rc = command_arg(c, "%s", ctx->gcc)) < 0 || (rc = command_arg(c, "-shared")) < 0 ||
	    (rc = command_arg(c, "-nostdlib")) < 0 || (rc = command_arg(c, "-o")) < 0 ||
	    (rc = command_arg(c, "%s/%s", dir, name)) < 0 ||
	    (rc = command_arg(c, "%s/%s/lt%d.o", ctx->obj, set, i)) < 0 ||
	    (rc = command_arg(c, "-Wl,-soname,%s", name)) < 0 || (rc = knob_flags(c, knobs, true)) < 0)
		return rc;
	return command_log(c, dir, name);
}

/* Program EXE into DIR from OBJ/OBJECT, against DIR's libraries when
 * WITH_LIBRARIES (-rdynamic for the trace build: it exports the recorder). */
static int link_program(const struct elf_context *ctx, struct command_list *list, const char *dir,
			const char *object, const char *exe, bool with_libraries, bool rdynamic,
			const struct job_spec_elf_knobs *knobs)
{
	struct command *c = command_new(list);
	int rc;

	if (!c)
		return LL_ENOMEM;
	if ((rc = command_arg(c, "%s", ctx->gcc)) < 0 || (rc = command_arg(c, "-o")) < 0 ||
	    (rc = command_arg(c, "%s/%s", dir, exe)) < 0 || (rc = command_arg(c, "%s/%s", ctx->obj, object)) < 0 ||
	    (rc = knob_flags(c, knobs, false)) < 0)
		return rc;
	if (with_libraries) {
		if ((rc = command_arg(c, "-L%s", dir)) < 0 || (rc = command_arg(c, "-Wl,-rpath,$ORIGIN")) < 0)
			return rc;
		for (int i = 0; i < ctx->dlls; i++)
			if ((rc = command_arg(c, "-llt%d", i)) < 0)
				return rc;
	}
	if (rdynamic && (rc = command_arg(c, "-rdynamic")) < 0)
		return rc;
	return command_log(c, dir, exe);
}

/* The object set a variant's libraries come from. */
static const char *object_set(const struct job_spec_elf_knobs *knobs)
{
	return knobs->trace_order ? "order" : knobs->hidden ? "hidden" : "link";
}

static int compile_set(const struct elf_context *ctx, struct command_list *list, const char *set,
		       const char *suffix, const char *const *flags)
{
	char dir[PLAT_MAX_PATH + 1], source[64], object[64];
	int rc;

	if ((rc = family_path(dir, ctx->obj, set)) < 0 || (rc = plat_mkdirs(dir)) < 0)
		return rc;
	for (int i = 0; i < ctx->dlls; i++) {
		snprintf(source, sizeof(source), "lt%d%s.c", i, suffix);
		snprintf(object, sizeof(object), "%s/lt%d.o", set, i);
		if ((rc = compile(ctx, list, source, object, flags)) < 0)
			return rc;
	}
	return 0;
}

int elf_build(struct elf_context *ctx, bool trace_order)
{
	static const char *const pic[] = {"-fPIC", NULL};
	static const char *const hidden[] = {"-fPIC", "-fvisibility=hidden", NULL};
	static const char *const instrument[] = {"-fPIC", "-finstrument-functions", NULL};
	static const char *const trace_main[] = {"-DLL_TRACE", NULL};
	static const struct job_spec_elf_knobs plain = {.name = "default"};
	struct command_list objects = {0}, libraries = {0}, programs = {0};
	char dir[PLAT_MAX_PATH + 1];
	int rc = 0;

	if (trace_order) {
		rc = compile_set(ctx, &objects, "order", "_order", pic);
	} else {
		if ((rc = compile_set(ctx, &objects, "link", "", pic)) < 0 ||
		    (ctx->need_hidden && (rc = compile_set(ctx, &objects, "hidden", "", hidden)) < 0) ||
		    (ctx->need_trace && (rc = compile_set(ctx, &objects, "trace", "", instrument)) < 0) ||
		    (rc = compile(ctx, &objects, "main.c", "main.o", NULL)) < 0 ||
		    (rc = compile(ctx, &objects, "empty.c", "empty.o", NULL)) < 0 ||
		    (ctx->need_trace && (rc = compile(ctx, &objects, "main.c", "main_trace.o", trace_main)) < 0))
			goto out;
	}
	if (rc < 0 || (rc = run_commands(ctx, &objects, trace_order ? 50 : 0, trace_order ? 70 : 40)) < 0)
		goto out;

	/* Every variant's libraries, then its program against them. */
	for (size_t v = 0; v < ctx->variant_count; v++) {
		const struct elf_variant *var = &ctx->variants[v];
		if (var->knobs.trace_order != trace_order)
			continue;
		if ((rc = plat_mkdirs(var->dir)) < 0)
			goto out;
		for (int i = 0; i < ctx->dlls; i++)
			if ((rc = link_library(ctx, &libraries, var->dir, object_set(&var->knobs), i, &var->knobs)) < 0)
				goto out;
		if ((rc = link_program(ctx, &programs, var->dir, "main.o", "main", true, false, &var->knobs)) < 0)
			goto out;
	}
	if (!trace_order) {
		if ((rc = family_path(dir, ctx->work, "empty")) < 0 || (rc = plat_mkdirs(dir)) < 0 ||
		    (rc = link_program(ctx, &programs, dir, "empty.o", "empty", false, false, &plain)) < 0)
			goto out;
		if (ctx->need_trace) {
			if ((rc = family_path(dir, ctx->work, "trace")) < 0 || (rc = plat_mkdirs(dir)) < 0)
				goto out;
			for (int i = 0; i < ctx->dlls; i++)
				if ((rc = link_library(ctx, &libraries, dir, "trace", i, &plain)) < 0)
					goto out;
			if ((rc = link_program(ctx, &programs, dir, "main_trace.o", "main", true, true, &plain)) < 0)
				goto out;
		}
	}
	if ((rc = run_commands(ctx, &libraries, trace_order ? 70 : 40, trace_order ? 90 : 80)) < 0 ||
	    (rc = run_commands(ctx, &programs, trace_order ? 90 : 80, trace_order ? 100 : 90)) < 0)
		goto out;
out:
	command_list_release(&objects);
	command_list_release(&libraries);
	command_list_release(&programs);
	return rc;
}

/* Adds function J to library I's trace unless it is there already. */
static void trace_add(struct elf_context *ctx, int i, int j, bool *seen)
{
	size_t at = (size_t)i * (size_t)ctx->exports + (size_t)j;

	if (seen[at])
		return;
	seen[at] = true;
	ctx->trace[i][ctx->trace_count[i]++] = j;
}

int elf_build_trace_run(struct elf_context *ctx)
{
	char dir[PLAT_MAX_PATH + 1], exe[PLAT_MAX_PATH + 1], report[PLAT_MAX_PATH + 1];
	const char *argv[] = {exe, "trace", report, NULL};
	struct plat_spawn_options o = {.argv = argv, .cwd = dir};
	bool *seen = NULL;
	char *text = NULL, *line, *save = NULL;
	size_t len;
	int code = 0, rc;

	if ((rc = family_path(dir, ctx->work, "trace")) < 0 || (rc = family_path(exe, dir, "main")) < 0 ||
	    (rc = family_path(report, dir, "trace.txt")) < 0)
		return rc;
	if ((rc = plat_run(&o, ELF_RUN_TIMEOUT_MS, &code, NULL)) < 0)
		return rc;
	if (code != 0)
		return err_set(LL_EIO, "The trace build exited with %d.", code);
	if ((rc = family_read_file(report, ELF_MAX_REPORT, &text, &len)) < 0)
		return rc;
	ctx->trace = calloc((size_t)ctx->dlls, sizeof(*ctx->trace));
	ctx->trace_count = calloc((size_t)ctx->dlls, sizeof(*ctx->trace_count));
	seen = calloc((size_t)ctx->dlls * (size_t)ctx->exports, sizeof(*seen));
	if (!ctx->trace || !ctx->trace_count || !seen) {
		rc = LL_ENOMEM;
		goto out;
	}
	for (int i = 0; i < ctx->dlls; i++)
		if (!(ctx->trace[i] = calloc((size_t)ctx->exports, sizeof(*ctx->trace[i])))) {
			rc = LL_ENOMEM;
			goto out;
		}
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		int i, j, n = 0;
		if (sscanf(line, "%d %d%n", &i, &j, &n) != 2 || line[n] != '\0' || i < 0 || i >= ctx->dlls ||
		    j < 0 || j >= ctx->exports) {
			rc = err_set(LL_EFORMAT, "The trace report has a bad line: %.80s", line);
			goto out;
		}
		trace_add(ctx, i, j, seen);
	}
out:
	free(seen);
	free(text);
	return rc;
}

#endif /* __linux__ */
