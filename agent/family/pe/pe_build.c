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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadlab/err.h"
#include "loadlab/job_spec.h"
#include "loadlab/json.h"
#include "loadlab/pe.h"
#include "pe_family.h"

/* Runs BUILD's objects or links (family_build_run()) with the toolchain's tools. */
static int run_build(const struct pe_context *ctx, struct family_build *build, bool links, bool trace_order)
{
	return family_build_run(ctx->base.task, build, links, ctx->toolchain.host, PE_TOOL_TIMEOUT_MS,
				trace_order);
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

static int compile(const struct pe_context *ctx, struct family_commands *list, const char *source,
		   const char *object, bool trace, bool instrument)
{
	struct family_command *c = family_command_new(list);
	char src[PLAT_MAX_PATH + 1], obj[PLAT_MAX_PATH + 1];
	int rc;

	if (!c)
		return LL_ENOMEM;
	if ((rc = tool_dir(ctx, ctx->base.src, src)) < 0 || (rc = tool_dir(ctx, ctx->base.obj, obj)) < 0)
		return rc;
	if ((rc = family_command_arg(c, "%s", ctx->toolchain.gcc)) < 0 ||
	    (rc = family_command_arg(c, "-O1")) < 0 || (rc = family_command_arg(c, "-c")) < 0 ||
	    (rc = family_command_arg(c, "%s/%s", src, source)) < 0 ||
	    (rc = family_command_arg(c, "-o")) < 0 || (rc = family_command_arg(c, "%s/%s", obj, object)) < 0)
		return rc;
	if (trace && (rc = family_command_arg(c, "-DLL_TRACE")) < 0)
		return rc;
	if (instrument && (rc = family_command_arg(c, "-finstrument-functions")) < 0)
		return rc;
	return family_command_log(c, ctx->base.obj, object);
}

/* The linker flag that turns high-entropy VA off, where there is one: a
 * PE32 (32-bit x86) image has no such flag and its linker no option. */
static const char *no_high_entropy(const struct pe_context *ctx)
{
	return ctx->toolchain.x86 ? "" : ",--disable-high-entropy-va";
}

/* generator.file_alignment, when given, for link command C: with the
 * section alignment (4096), Wine maps the sections instead of reading them. */
static int file_alignment(const struct pe_context *ctx, struct family_command *c)
{
	if (!ctx->knobs.file_alignment)
		return 0;
	return family_command_arg(c, "-Wl,--file-alignment=%d", ctx->knobs.file_alignment);
}

/* DLL I of a set in DIR from OBJECT with DEF. */
static int link_dll(const struct pe_context *ctx, struct family_commands *list, const char *dir,
		    bool toolchain_flags, int i, const char *object, const char *def)
{
	struct family_command *c = family_command_new(list);
	char out[PLAT_MAX_PATH + 1], src[PLAT_MAX_PATH + 1], obj[PLAT_MAX_PATH + 1];
	int rc;

	if (!c)
		return LL_ENOMEM;
	if ((rc = tool_dir(ctx, dir, out)) < 0 || (rc = tool_dir(ctx, ctx->base.src, src)) < 0 ||
	    (rc = tool_dir(ctx, ctx->base.obj, obj)) < 0)
		return rc;
	if ((rc = family_command_arg(c, "%s", ctx->toolchain.gcc)) < 0 ||
	    (rc = family_command_arg(c, "-shared")) < 0)
		return rc;
	/* Without the CRT: entry DllMain itself (__stdcall DllMain is
	 * _DllMain@12 to a 32-bit x86 linker). With it: the driver's default
	 * libraries and entry, DllMainCRTStartup, which calls our DllMain. */
	if (!ctx->knobs.crt &&
	    ((rc = family_command_arg(c, "-nostdlib")) < 0 || (rc = family_command_arg(c, "-e")) < 0 ||
	     (rc = family_command_arg(c, "%s", ctx->toolchain.x86 ? "_DllMain@12" : "DllMain")) < 0))
		return rc;
	/* The CRT's static objects carry DWARF: .debug_* sections in the DLL. */
	if (ctx->knobs.strip_debug && (rc = family_command_arg(c, "-Wl,--strip-debug")) < 0)
		return rc;
	if ((rc = file_alignment(ctx, c)) < 0 || (rc = family_command_arg(c, "-o")) < 0 ||
	    (rc = family_command_arg(c, "%s/lt%d.dll", out, i)) < 0 ||
	    (rc = family_command_arg(c, "%s/%s", obj, object)) < 0 ||
	    (rc = family_command_arg(c, "%s/%s", src, def)) < 0 ||
	    (rc = family_command_arg(c, "-Wl,--out-implib,%s/liblt%d.a", out, i)) < 0)
		return rc;
	/* DLL 0 of a self-test job calls kernel32 (pe_generate.c). */
	if (i == 0 && !ctx->knobs.crt && job_spec_has_delay(ctx->base.task->job) &&
	    (rc = family_command_arg(c, "-lkernel32")) < 0)
		return rc;
	if (!toolchain_flags &&
	    (rc = family_command_arg(c,
				     "-Wl,--image-base=0x%llx,--disable-dynamicbase%s,"
				     "--disable-auto-image-base,--enable-reloc-section",
				     (unsigned long long)PE_SAME_BASE, no_high_entropy(ctx))) < 0)
		return rc;
	if ((size_t)snprintf(c->log, sizeof(c->log), "%s/lt%d.log", dir, i) >= sizeof(c->log))
		return err_set(LL_ETOOBIG, "A log path is too long.");
	return 0;
}

static int link_exe(const struct pe_context *ctx, struct family_commands *list, const char *dir,
		    bool toolchain_flags, const char *object, const char *exe, bool with_dlls)
{
	struct family_command *c = family_command_new(list);
	char out[PLAT_MAX_PATH + 1], obj[PLAT_MAX_PATH + 1];
	int rc;

	if (!c)
		return LL_ENOMEM;
	if ((rc = tool_dir(ctx, dir, out)) < 0 || (rc = tool_dir(ctx, ctx->base.obj, obj)) < 0)
		return rc;
	if ((rc = family_command_arg(c, "%s", ctx->toolchain.gcc)) < 0 ||
	    (rc = family_command_arg(c, "-o")) < 0 || (rc = family_command_arg(c, "%s/%s", out, exe)) < 0 ||
	    (rc = family_command_arg(c, "%s/%s", obj, object)) < 0 || (rc = file_alignment(ctx, c)) < 0)
		return rc;
	for (int i = 0; with_dlls && i < ctx->base.dlls; i++)
		if ((rc = family_command_arg(c, "%s/liblt%d.a", out, i)) < 0)
			return rc;
	if (!toolchain_flags &&
	    (rc = family_command_arg(c, "-Wl,--disable-dynamicbase%s", no_high_entropy(ctx))) < 0)
		return rc;
	return family_command_log(c, dir, exe);
}

int pe_build(struct pe_context *ctx, bool trace_order, bool trace_build)
{
	struct family_build build = {0};
	char name[64], object[64];
	int rc = 0, i;

	/* Objects. */
	for (i = 0; i < ctx->base.dlls && rc == 0; i++) {
		if (trace_order) {
			snprintf(name, sizeof(name), "lt%d_order.c", i);
			snprintf(object, sizeof(object), "lt%d_order.o", i);
			rc = compile(ctx, &build.objects, name, object, false, false);
			continue;
		}
		snprintf(name, sizeof(name), "lt%d.c", i);
		snprintf(object, sizeof(object), "lt%d.o", i);
		rc = compile(ctx, &build.objects, name, object, false, false);
		if (rc == 0 && trace_build) {
			snprintf(object, sizeof(object), "lt%d_trace.o", i);
			rc = compile(ctx, &build.objects, name, object, true, true);
		}
	}
	if (rc == 0 && !trace_order)
		rc = compile(ctx, &build.objects, "main.c", "main.o", false, false);
	if (rc == 0 && !trace_order)
		rc = compile(ctx, &build.objects, "empty.c", "empty.o", false, false);
	if (rc == 0 && trace_build)
		rc = compile(ctx, &build.objects, "main.c", "main_trace.o", true, false);
	if (rc < 0 || (rc = run_build(ctx, &build, false, trace_order)) < 0)
		goto out;

	/* DLLs of every set, then the programs against their import libraries. */
	for (size_t s = 0; s < ctx->set_count && rc == 0; s++) {
		const struct pe_link_set *set = &ctx->sets[s];
		if (set->trace_order != trace_order)
			continue;
		if ((rc = plat_mkdirs(set->dir)) < 0)
			goto out;
		for (i = 0; i < ctx->base.dlls && rc == 0; i++) {
			char def[64];
			snprintf(object, sizeof(object), trace_order ? "lt%d_order.o" : "lt%d.o", i);
			snprintf(def, sizeof(def), set->ordinal ? "lt%d_ordinal.def" : "lt%d.def", i);
			rc = link_dll(ctx, &build.libraries, set->dir, set->toolchain_flags, i, object, def);
		}
		if (rc == 0)
			rc = link_exe(ctx, &build.programs, set->dir, set->toolchain_flags, "main.o",
				      "main.exe", true);
	}
	if (rc == 0 && trace_build) {
		char dir[PLAT_MAX_PATH + 1];
		if ((rc = family_path(dir, ctx->base.work, "trace")) < 0 || (rc = plat_mkdirs(dir)) < 0)
			goto out;
		for (i = 0; i < ctx->base.dlls && rc == 0; i++) {
			char def[64];
			snprintf(object, sizeof(object), "lt%d_trace.o", i);
			snprintf(def, sizeof(def), "lt%d_trace.def", i);
			rc = link_dll(ctx, &build.libraries, dir, false, i, object, def);
		}
		if (rc == 0)
			rc = link_exe(ctx, &build.programs, dir, false, "main_trace.o", "main.exe", true);
	}
	if (rc == 0 && !trace_order) {
		char dir[PLAT_MAX_PATH + 1];
		if ((rc = family_path(dir, ctx->base.work, "empty")) < 0 || (rc = plat_mkdirs(dir)) < 0)
			goto out;
		rc = link_exe(ctx, &build.programs, dir, false, "empty.o", "empty.exe", false);
	}
	if (rc == 0)
		rc = run_build(ctx, &build, true, trace_order);
out:
	family_build_release(&build);
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
	list = calloc((size_t)ctx->base.exports + 1, sizeof(*list));
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
			if (x->rva == (uint32_t)rva && index >= 0 && index < ctx->base.exports &&
			    n < (size_t)ctx->base.exports) {
				list[n++] = index;
				break;
			}
		}
	}
	ctx->base.trace[i] = list;
	ctx->base.trace_count[i] = n;
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

	if ((rc = family_path(dir, ctx->base.work, "trace")) < 0 ||
	    (rc = family_path(exe, dir, "main.exe")) < 0 ||
	    (rc = family_path(out_path, dir, "trace.json")) < 0)
		return rc;
	if ((rc = runner_run(&ctx->runner, exe, args, dir, NULL, PE_RUN_TIMEOUT_MS, &code, NULL)) < 0)
		return rc;
	if (code != 0)
		return err_set(LL_EIO, "The trace build exited with %d.", code);
	if ((rc = family_read_file(out_path, PE_MAX_REPORT, &text, &len)) < 0 ||
	    (rc = json_parse_object(text, len, 8, &root)) < 0)
		goto out;
	ctx->base.trace = calloc((size_t)ctx->base.dlls, sizeof(*ctx->base.trace));
	ctx->base.trace_count = calloc((size_t)ctx->base.dlls, sizeof(*ctx->base.trace_count));
	if (!ctx->base.trace || !ctx->base.trace_count) {
		rc = LL_ENOMEM;
		goto out;
	}
	const cJSON *modules = cJSON_GetObjectItemCaseSensitive(root, "modules");
	if (!cJSON_IsArray(modules) || cJSON_GetArraySize(modules) != ctx->base.dlls) {
		rc = err_set(LL_EFORMAT, "The trace report lists the wrong modules.");
		goto out;
	}
	for (int i = 0; i < ctx->base.dlls; i++) {
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

const struct family_names pe_names = {"lt", ".dll", "main.exe", "empty.exe"};
