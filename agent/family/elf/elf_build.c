/*
 * elf_build.c - compiles and links the elf family's program with the
 * task's toolchain (gcc and GNU ld, or clang and lld: runner.h),
 * task->jobs commands at a time, and runs the trace build (the link
 * set's libraries and main, bound lazily) under LD_DEBUG=bindings.
 *
 * Objects: obj/link/lt<i>.o (-fPIC), obj/hidden/lt<i>.o (-fvisibility=hidden),
 * main.o, empty.o; for trace order with GNU ld obj/order/lt<i>.o
 * (from lt<i>_order.c, after the trace), with lld obj/sections/lt<i>.o
 * (-ffunction-sections, with the others) linked with
 * --symbol-ordering-file=obj/order-lt<i>.txt.
 * Each variant links its libraries and program into its own folder with
 * the toolchain's -fuse-ld= and its knobs' flags (elf_family.h,
 * docs/elf-pipeline.md):
 *   libraries  -shared -nostdlib -Wl,-soname,liblt<i>.so
 *              -z now | -z lazy, [-z pack-relative-relocs (GNU ld) |
 *              --pack-dyn-relocs=relr (lld 14)], [-Bsymbolic],
 *              --hash-style=gnu | sysv
 *   program    the same but -Bsymbolic (which means nothing there) and,
 *              with lld, RELR (runner.h, relr_program), and -rpath
 *              $ORIGIN so the loader finds the libraries beside it.
 * Binding, hash style and RELR are given both ways (-z lazy, gnu) so that
 * a distribution's defaults do not decide them.
 */
#ifdef __linux__

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf_family.h"
#include "loadlab/buf.h"
#include "loadlab/err.h"

/* Runs BUILD's objects or links (family_build_run()) with gcc. */
static int run_build(const struct elf_context *ctx, struct family_build *build, bool links, bool trace_order)
{
	return family_build_run(ctx->base.task, build, links, false, ELF_TOOL_TIMEOUT_MS, trace_order);
}

/* CC -O1 -c SRC/SOURCE -o OBJ/OBJECT plus FLAGS (NULL-terminated). */
static int compile(const struct elf_context *ctx, struct family_commands *list, const char *source,
		   const char *object, const char *const *flags)
{
	struct family_command *c = family_command_new(list);
	int rc;

	if (!c)
		return LL_ENOMEM;
	if ((rc = family_command_arg(c, "%s", ctx->cc)) < 0 || (rc = family_command_arg(c, "-O1")) < 0 ||
	    (rc = family_command_arg(c, "-c")) < 0 ||
	    (rc = family_command_arg(c, "%s/%s", ctx->base.src, source)) < 0 ||
	    (rc = family_command_arg(c, "-o")) < 0 ||
	    (rc = family_command_arg(c, "%s/%s", ctx->base.obj, object)) < 0)
		return rc;
	for (; flags && *flags; flags++)
		if ((rc = family_command_arg(c, "%s", *flags)) < 0)
			return rc;
	return family_command_log(c, ctx->base.obj, object);
}

/* The toolchain's linker and the linker flags of KNOBS; SYMBOLIC only
 * for a library, RELR for a program only where the toolchain can
 * (runner.h, relr_program). */
static int knob_flags(const struct elf_context *ctx, struct family_command *c,
		      const struct job_spec_elf_knobs *knobs, bool library)
{
	int rc;

	if ((rc = family_command_arg(c, "%s", ctx->toolchain->use_ld)) < 0 ||
	    (rc = family_command_arg(c, "-Wl,-z,%s", knobs->bind_now ? "now" : "lazy")) < 0 ||
	    (rc = family_command_arg(c, "-Wl,--hash-style=%s", knobs->sysv_hash ? "sysv" : "gnu")) < 0)
		return rc;
	if (knobs->relr && (library || ctx->toolchain->relr_program) &&
	    (rc = family_command_arg(c, "-Wl,%s", ctx->toolchain->relr)) < 0)
		return rc;
	if (library && knobs->symbolic && (rc = family_command_arg(c, "-Wl,-Bsymbolic")) < 0)
		return rc;
	return 0;
}

/* Library I into DIR from OBJ/SET/lt<i>.o. */
static int link_library(const struct elf_context *ctx, struct family_commands *list, const char *dir,
			const char *set, int i, const struct job_spec_elf_knobs *knobs)
{
	struct family_command *c = family_command_new(list);
	char name[64];
	int rc;

	if (!c)
		return LL_ENOMEM;
	snprintf(name, sizeof(name), "liblt%d.so", i);
	if ((rc = family_command_arg(c, "%s", ctx->cc)) < 0 || (rc = family_command_arg(c, "-shared")) < 0 ||
	    (rc = family_command_arg(c, "-nostdlib")) < 0 || (rc = family_command_arg(c, "-o")) < 0 ||
	    (rc = family_command_arg(c, "%s/%s", dir, name)) < 0 ||
	    (rc = family_command_arg(c, "%s/%s/lt%d.o", ctx->base.obj, set, i)) < 0 ||
	    (rc = family_command_arg(c, "-Wl,-soname,%s", name)) < 0 ||
	    (rc = knob_flags(ctx, c, knobs, true)) < 0)
		return rc;
	if (knobs->trace_order && ctx->toolchain->order_file &&
	    (rc = family_command_arg(c, "-Wl,--symbol-ordering-file=%s/order-lt%d.txt", ctx->base.obj, i)) <
		    0)
		return rc;
	return family_command_log(c, dir, name);
}

/* Program EXE into DIR from OBJ/OBJECT, against DIR's libraries when
 * WITH_LIBRARIES. */
static int link_program(const struct elf_context *ctx, struct family_commands *list, const char *dir,
			const char *object, const char *exe, bool with_libraries,
			const struct job_spec_elf_knobs *knobs)
{
	struct family_command *c = family_command_new(list);
	int rc;

	if (!c)
		return LL_ENOMEM;
	if ((rc = family_command_arg(c, "%s", ctx->cc)) < 0 || (rc = family_command_arg(c, "-o")) < 0 ||
	    (rc = family_command_arg(c, "%s/%s", dir, exe)) < 0 ||
	    (rc = family_command_arg(c, "%s/%s", ctx->base.obj, object)) < 0 ||
	    (rc = knob_flags(ctx, c, knobs, false)) < 0)
		return rc;
	if (with_libraries) {
		if ((rc = family_command_arg(c, "-L%s", dir)) < 0 ||
		    (rc = family_command_arg(c, "-Wl,-rpath,$ORIGIN")) < 0)
			return rc;
		for (int i = 0; i < ctx->base.dlls; i++)
			if ((rc = family_command_arg(c, "-llt%d", i)) < 0)
				return rc;
	}
	return family_command_log(c, dir, exe);
}

/* The object set a variant's libraries come from. */
static const char *object_set(const struct elf_context *ctx, const struct job_spec_elf_knobs *knobs)
{
	if (knobs->trace_order)
		return ctx->toolchain->order_file ? "sections" : "order";
	return knobs->hidden ? "hidden" : "link";
}

static int compile_set(const struct elf_context *ctx, struct family_commands *list, const char *set,
		       const char *suffix, const char *const *flags)
{
	char dir[PLAT_MAX_PATH + 1], source[64], object[64];
	int rc;

	if ((rc = family_path(dir, ctx->base.obj, set)) < 0 || (rc = plat_mkdirs(dir)) < 0)
		return rc;
	for (int i = 0; i < ctx->base.dlls; i++) {
		snprintf(source, sizeof(source), "lt%d%s.c", i, suffix);
		snprintf(object, sizeof(object), "%s/lt%d.o", set, i);
		if ((rc = compile(ctx, list, source, object, flags)) < 0)
			return rc;
	}
	return 0;
}

/* The trace build in work/trace: the link set's libraries and main,
 * bound lazily, so that the loader binds each import at its first call. */
static int link_trace(const struct elf_context *ctx, struct family_build *build)
{
	static const struct job_spec_elf_knobs plain = {.name = "default"};
	char dir[PLAT_MAX_PATH + 1];
	int rc;

	if ((rc = family_path(dir, ctx->base.work, "trace")) < 0 || (rc = plat_mkdirs(dir)) < 0)
		return rc;
	for (int i = 0; i < ctx->base.dlls; i++)
		if ((rc = link_library(ctx, &build->libraries, dir, "link", i, &plain)) < 0)
			return rc;
	return link_program(ctx, &build->programs, dir, "main.o", "main", true, &plain);
}

int elf_build_objects(struct elf_context *ctx)
{
	static const char *const pic[] = {"-fPIC", NULL};
	static const char *const hidden[] = {"-fPIC", "-fvisibility=hidden", NULL};
	static const char *const sections[] = {"-fPIC", "-ffunction-sections", NULL};
	struct family_build build = {0};
	bool trace = ctx->base.need_trace;
	int rc;

	if ((rc = compile_set(ctx, &build.objects, "link", "", pic)) < 0 ||
	    (ctx->need_hidden && (rc = compile_set(ctx, &build.objects, "hidden", "", hidden)) < 0) ||
	    (trace && ctx->toolchain->order_file &&
	     (rc = compile_set(ctx, &build.objects, "sections", "", sections)) < 0) ||
	    (rc = compile(ctx, &build.objects, "main.c", "main.o", NULL)) < 0 ||
	    (rc = compile(ctx, &build.objects, "empty.c", "empty.o", NULL)) < 0 ||
	    (trace && (rc = link_trace(ctx, &build)) < 0) || (rc = run_build(ctx, &build, false, false)) < 0)
		goto out;
	rc = run_build(ctx, &build, true, false);
out:
	family_build_release(&build);
	return rc;
}

int elf_build_order_objects(struct elf_context *ctx)
{
	static const char *const pic[] = {"-fPIC", NULL};
	struct family_build build = {0};
	int rc;

	if ((rc = compile_set(ctx, &build.objects, "order", "_order", pic)) == 0)
		rc = run_build(ctx, &build, false, true);
	family_build_release(&build);
	return rc;
}

int elf_build_link(struct elf_context *ctx)
{
	static const struct job_spec_elf_knobs plain = {.name = "default"};
	struct family_build build = {0};
	char dir[PLAT_MAX_PATH + 1];
	int rc = 0;

	/* Every variant's libraries, then its program against them. */
	for (size_t v = 0; v < ctx->variant_count; v++) {
		const struct elf_variant *var = &ctx->variants[v];
		if ((rc = plat_mkdirs(var->base.dir)) < 0)
			goto out;
		for (int i = 0; i < ctx->base.dlls; i++)
			if ((rc = link_library(ctx, &build.libraries, var->base.dir,
					       object_set(ctx, &var->knobs), i, &var->knobs)) < 0)
				goto out;
		if ((rc = link_program(ctx, &build.programs, var->base.dir, "main.o", "main", true,
				       &var->knobs)) < 0)
			goto out;
	}
	if ((rc = family_path(dir, ctx->base.work, "empty")) < 0 || (rc = plat_mkdirs(dir)) < 0 ||
	    (rc = link_program(ctx, &build.programs, dir, "empty.o", "empty", false, &plain)) < 0)
		goto out;
	rc = run_build(ctx, &build, true, false);
out:
	family_build_release(&build);
	return rc;
}

int elf_build_order_files(const struct elf_context *ctx)
{
	for (int i = 0; i < ctx->base.dlls; i++) {
		char name[64], path[PLAT_MAX_PATH + 1];
		struct buf b;
		int rc = 0;
		buf_init(&b, ELF_MAX_REPORT);
		snprintf(name, sizeof(name), "order-lt%d.txt", i);
		for (size_t r = 0; r < ctx->base.trace_count[i] && rc == 0; r++)
			rc = buf_printf(&b, "lt%d_f%d\n", i, ctx->base.trace[i][r]);
		if (rc < 0 || (rc = family_path(path, ctx->base.obj, name)) < 0 ||
		    (rc = family_write_file(path, buf_str(&b), b.len)) < 0) {
			buf_release(&b);
			return rc;
		}
		buf_release(&b);
	}
	return 0;
}

/* Adds function J to library I's trace unless it is there already. */
static void trace_add(struct elf_context *ctx, int i, int j, bool *seen)
{
	size_t at = (size_t)i * (size_t)ctx->base.exports + (size_t)j;

	if (seen[at])
		return;
	seen[at] = true;
	ctx->base.trace[i][ctx->base.trace_count[i]++] = j;
}

int elf_build_trace_run(struct elf_context *ctx)
{
	char dir[PLAT_MAX_PATH + 1], exe[PLAT_MAX_PATH + 1], report[PLAT_MAX_PATH + 1];
	const char *argv[] = {exe, "startup", NULL}, *env[] = {"LD_DEBUG=bindings", "LD_BIND_NOW=", NULL};
	struct plat_spawn_options o = {.argv = argv, .env_add = env, .cwd = dir};
	bool *seen = NULL;
	char *text = NULL, *line, *save = NULL, *mark;
	size_t len;
	int code = 0, rc;

	if ((rc = family_path(dir, ctx->base.work, "trace")) < 0 ||
	    (rc = family_path(exe, dir, "main")) < 0 || (rc = family_path(report, dir, "bindings.txt")) < 0)
		return rc;
	o.stderr_path = report;
	if ((rc = plat_run(&o, ELF_RUN_TIMEOUT_MS, &code, NULL)) < 0)
		return rc;
	if (code != 0)
		return err_set(LL_EIO, "The trace build exited with %d.", code);
	if ((rc = family_read_file(report, ELF_MAX_REPORT, &text, &len)) < 0)
		return rc;
	if (!(mark = strstr(text, ELF_STARTUP_MARK "\n"))) {
		rc = err_set(LL_EFORMAT, "The trace build wrote no startup mark to %s.", report);
		goto out;
	}
	ctx->base.trace = calloc((size_t)ctx->base.dlls, sizeof(*ctx->base.trace));
	ctx->base.trace_count = calloc((size_t)ctx->base.dlls, sizeof(*ctx->base.trace_count));
	seen = calloc((size_t)ctx->base.dlls * (size_t)ctx->base.exports, sizeof(*seen));
	if (!ctx->base.trace || !ctx->base.trace_count || !seen) {
		rc = LL_ENOMEM;
		goto out;
	}
	for (int i = 0; i < ctx->base.dlls; i++)
		if (!(ctx->base.trace[i] = calloc((size_t)ctx->base.exports, sizeof(*ctx->base.trace[i])))) {
			rc = LL_ENOMEM;
			goto out;
		}
	/* "PID: binding file ./main [0] to ./liblt3.so [0]: normal symbol `lt3_f7'" */
	for (line = strtok_r(mark, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *symbol = strstr(line, ": normal symbol `");
		int i, j, n = 0;
		if (!strstr(line, "binding file") || !symbol)
			continue;
		symbol += strlen(": normal symbol `");
		if (sscanf(symbol, "lt%d_f%d%n", &i, &j, &n) != 2 || symbol[n] != '\'')
			continue;
		if (i < 0 || i >= ctx->base.dlls || j < 0 || j >= ctx->base.exports) {
			rc = err_set(LL_EFORMAT, "The loader bound a function the program has not: %.80s",
				     line);
			goto out;
		}
		trace_add(ctx, i, j, seen);
	}
out:
	free(seen);
	free(text);
	return rc;
}

const struct family_names elf_names = {"liblt", ".so", "main", "empty"};

#endif /* __linux__ */
