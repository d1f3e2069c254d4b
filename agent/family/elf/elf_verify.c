/*
 * elf_verify.c - proves each variant is what its knobs claim before it is
 * timed, from the files and from the loader (docs/elf-pipeline.md):
 *
 *   files   every library and the program read with libelf (elf_read.c):
 *           flags, DT_RELR, hash sections, relocations by type, exported
 *           symbols, and for trace order the layout of .text;
 *   loader  the program run once, as timed, under LD_DEBUG=statistics
 *           (counts only: its cycle figures are wrong on VMs, DESIGN.md
 *           "Known traps"), and the floor the same way: the symbol
 *           lookups the program costs beyond the floor ("number of
 *           relocations" plus "relocations from cache") must be what
 *           the files predict for the knobs' binding: the libraries' and
 *           the program's symbol relocations, plus every PLT slot when
 *           binding is immediate; and the RELATIVE relocations beyond the
 *           floor's must be the ones left in .rela.dyn (RELR's are not
 *           counted by the loader);
 *   probe   `main probe FILE`: every library loaded, at what address.
 *
 * A contradiction makes the variant invalid with the first reason found.
 */
#ifdef __linux__

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf_family.h"
#include "loadlab/err.h"

/* The loader's startup counts (LD_DEBUG=statistics, glibc rtld.c). */
struct loader_counts {
	long long relocations, from_cache, relative;
};

/* The value of "LABEL: N" in the first statistics block of TEXT (the
 * lines are "PID:<spaces>LABEL: N"; "final LABEL" lines come later). */
static long long statistic(const char *text, const char *label)
{
	size_t n = strlen(label);

	for (const char *line = text; line && *line;
	     line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		const char *p = strchr(line, ':'), *end = strchr(line, '\n');
		if (!p || (end && p > end))
			continue;
		for (p++; *p == ' ' || *p == '\t'; p++)
			;
		if (strncmp(p, label, n) == 0 && p[n] == ':')
			return strtoll(p + n + 1, NULL, 10);
	}
	return -1;
}

/* Runs EXE (in DIR) once under LD_DEBUG=statistics. */
static int loader_run(const char *dir, const char *exe, struct loader_counts *ret)
{
	char path[PLAT_MAX_PATH + 1], log[PLAT_MAX_PATH + 1];
	const char *argv[] = {path, NULL}, *env[] = {"LD_DEBUG=statistics", NULL};
	struct plat_spawn_options o = {.argv = argv, .env_add = env, .cwd = dir};
	char *text = NULL;
	size_t len;
	int code = 0, rc;

	if ((rc = family_path(path, dir, exe)) < 0 ||
	    (rc = family_path(log, dir, "loader-statistics.txt")) < 0)
		return rc;
	o.stderr_path = log;
	if ((rc = plat_run(&o, ELF_RUN_TIMEOUT_MS, &code, NULL)) < 0)
		return rc;
	if (code != 0)
		return err_set(LL_EIO, "%s exited with %d under LD_DEBUG=statistics.", path, code);
	if ((rc = family_read_file(log, ELF_MAX_REPORT, &text, &len)) < 0)
		return rc;
	ret->relocations = statistic(text, "number of relocations");
	ret->from_cache = statistic(text, "number of relocations from cache");
	ret->relative = statistic(text, "number of relative relocations");
	free(text);
	if (ret->relocations < 0 || ret->from_cache < 0 || ret->relative < 0)
		return err_set(LL_EFORMAT, "The loader printed no statistics for %s (LD_DEBUG ignored?).",
			       path);
	return 0;
}

/* What the files predict the loader looks up at startup: symbol
 * relocations, and PLT slots when bound immediately. */
static long long lookups(const struct elf_object_facts *f, bool immediate)
{
	return (long long)(f->symbolic_64 + f->glob_dat + (immediate ? f->jump_slot : 0));
}

static int counts_json(cJSON *o, const char *key, const struct elf_object_facts *f, size_t objects)
{
	cJSON *c = cJSON_AddObjectToObject(o, key), *r;

	if (!c || !cJSON_AddNumberToObject(c, "objects", (double)objects) ||
	    !cJSON_AddBoolToObject(c, "bind_now", f->bind_now) ||
	    !cJSON_AddBoolToObject(c, "symbolic", f->symbolic) ||
	    !cJSON_AddBoolToObject(c, "relr", f->relr) ||
	    !cJSON_AddBoolToObject(c, "gnu_hash", f->gnu_hash) ||
	    !cJSON_AddBoolToObject(c, "sysv_hash", f->sysv_hash) ||
	    !cJSON_AddNumberToObject(c, "exported_symbols", (double)f->dynsym_defined) ||
	    !cJSON_AddNumberToObject(c, "exported_functions", (double)f->dynsym_functions) ||
	    !(r = cJSON_AddObjectToObject(c, "relocations")) ||
	    !cJSON_AddNumberToObject(r, "R_X86_64_RELATIVE", (double)f->relative) ||
	    !cJSON_AddNumberToObject(r, "R_X86_64_64", (double)f->symbolic_64) ||
	    !cJSON_AddNumberToObject(r, "R_X86_64_GLOB_DAT", (double)f->glob_dat) ||
	    !cJSON_AddNumberToObject(r, "R_X86_64_JUMP_SLOT", (double)f->jump_slot) ||
	    !cJSON_AddNumberToObject(r, "other", (double)f->other) ||
	    !cJSON_AddNumberToObject(r, "relr_words", (double)f->relr_words))
		return LL_ENOMEM;
	return 0;
}

/* Every library's file against the knobs; their sums into *SUM (flags
 * of the first library). */
static int check_libraries(const struct elf_context *ctx, struct elf_variant *var,
			   struct elf_object_facts *sum)
{
	char reason[400];

	memset(sum, 0, sizeof(*sum));
	for (int i = 0; i < ctx->base.dlls; i++) {
		char name[64], path[PLAT_MAX_PATH + 1];
		struct elf_object_facts f;
		int rc;
		snprintf(name, sizeof(name), "liblt%d.so", i);
		if ((rc = family_path(path, var->base.dir, name)) < 0 || (rc = elf_read_object(path, &f)) < 0)
			return rc;
		if (!elf_check_object(&f, &var->knobs, false, ctx->base.exports, ctx->base.globals, reason,
				      sizeof(reason)))
			family_variant_invalid(&var->base, "%s: %s", name, reason);
		if (var->knobs.trace_order) {
			bool ok = true;
			size_t called = 0;
			for (int j = 0; j < ctx->base.exports; j++)
				called += family_in_startup(i, j);
			if (!ctx->base.trace || ctx->base.trace_count[i] != called)
				family_variant_invalid(
					&var->base,
					"%s: the startup trace holds %zu functions; the scenario "
					"calls %zu.",
					name, ctx->base.trace ? ctx->base.trace_count[i] : 0, called);
			if ((rc = elf_check_order(path, i, ctx->base.trace ? ctx->base.trace[i] : NULL,
						  ctx->base.trace ? ctx->base.trace_count[i] : 0, &ok, reason,
						  sizeof(reason))) < 0)
				return rc;
			if (!ok)
				family_variant_invalid(&var->base, "%s: trace order: %s", name, reason);
		}
		if (i == 0) {
			*sum = f;
			continue;
		}
		sum->relative += f.relative;
		sum->relr_words += f.relr_words;
		sum->symbolic_64 += f.symbolic_64;
		sum->glob_dat += f.glob_dat;
		sum->jump_slot += f.jump_slot;
		sum->other += f.other;
		sum->dynsym_defined += f.dynsym_defined;
		sum->dynsym_functions += f.dynsym_functions;
	}
	return 0;
}

/* `main probe FILE`: every library loaded; their addresses into VERIFY. */
static int probe(const struct elf_context *ctx, struct elf_variant *var, cJSON *verify)
{
	char path[PLAT_MAX_PATH + 1], report[PLAT_MAX_PATH + 1];
	const char *argv[] = {path, "probe", report, NULL};
	struct plat_spawn_options o = {.argv = argv, .cwd = var->base.dir};
	cJSON *p = cJSON_AddObjectToObject(verify, "probe"), *modules;
	char *text = NULL, *line, *save = NULL;
	int code = 0, loaded = 0, rc;
	size_t len;

	if (!p || !(modules = cJSON_AddArrayToObject(p, "libraries")))
		return LL_ENOMEM;
	if ((rc = family_path(path, var->base.dir, "main")) < 0 ||
	    (rc = family_path(report, var->base.dir, "probe.txt")) < 0 ||
	    (rc = plat_run(&o, ELF_RUN_TIMEOUT_MS, &code, NULL)) < 0)
		return rc;
	if (code != 0) {
		family_variant_invalid(&var->base, "The probe exited with %d.", code);
		return 0;
	}
	if ((rc = family_read_file(report, ELF_MAX_REPORT, &text, &len)) < 0)
		return rc;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *name = strchr(line, ' '), *base;
		int i, n = 0;
		cJSON *m;
		if (!name)
			continue;
		base = strrchr(++name, '/') ? strrchr(name, '/') + 1 : name;
		if (sscanf(base, "liblt%d.so%n", &i, &n) != 1 || base[n] != '\0' || i < 0 ||
		    i >= ctx->base.dlls)
			continue;
		line[name - 1 - line] = '\0';
		if (!(m = cJSON_CreateObject()) || !cJSON_AddItemToArray(modules, m)) {
			cJSON_Delete(m);
			rc = LL_ENOMEM;
			goto out;
		}
		if (!cJSON_AddStringToObject(m, "name", base) ||
		    !cJSON_AddStringToObject(m, "load_address", line)) {
			rc = LL_ENOMEM;
			goto out;
		}
		loaded++;
	}
	if (!cJSON_AddNumberToObject(p, "libraries_loaded", loaded)) {
		rc = LL_ENOMEM;
		goto out;
	}
	if (loaded != ctx->base.dlls)
		family_variant_invalid(&var->base, "The probe saw %d of %d libraries loaded.", loaded,
				       ctx->base.dlls);
out:
	free(text);
	return rc;
}

/* The loader's figures against the files'. */
static int check_loader(struct elf_variant *var, const struct loader_counts *floor,
			const struct elf_object_facts *floor_file, const struct elf_object_facts *libs,
			const struct elf_object_facts *program, cJSON *verify)
{
	struct loader_counts c;
	cJSON *o = cJSON_AddObjectToObject(verify, "loader");
	long long seen, lazy, now, relative;
	const char *binding;
	int rc;

	if (!o)
		return LL_ENOMEM;
	if ((rc = loader_run(var->base.dir, "main", &c)) < 0)
		return rc;
	seen = c.relocations + c.from_cache - floor->relocations - floor->from_cache;
	lazy = lookups(libs, false) + lookups(program, false) - lookups(floor_file, false);
	now = lookups(libs, true) + lookups(program, true) - lookups(floor_file, false);
	relative = (long long)(libs->relative + program->relative) - (long long)floor_file->relative;
	binding = seen == now && seen != lazy   ? "immediate"
		  : seen == lazy && seen != now ? "lazy"
		  : seen == lazy                ? "either"
						: "neither";
	if (!cJSON_AddNumberToObject(o, "relocations", (double)c.relocations) ||
	    !cJSON_AddNumberToObject(o, "relocations_from_cache", (double)c.from_cache) ||
	    !cJSON_AddNumberToObject(o, "relative_relocations", (double)c.relative) ||
	    !cJSON_AddNumberToObject(o, "symbol_lookups_beyond_floor", (double)seen) ||
	    !cJSON_AddNumberToObject(o, "expected_lazy", (double)lazy) ||
	    !cJSON_AddNumberToObject(o, "expected_immediate", (double)now) ||
	    !cJSON_AddNumberToObject(o, "relative_beyond_floor", (double)(c.relative - floor->relative)) ||
	    !cJSON_AddNumberToObject(o, "expected_relative", (double)relative) ||
	    !cJSON_AddStringToObject(o, "binding", binding))
		return LL_ENOMEM;
	if (var->knobs.bind_now ? seen != now : seen != lazy)
		family_variant_invalid(
			&var->base,
			"The loader made %lld symbol lookups beyond the floor; %s binding predicts %lld "
			"(%s: %lld).",
			seen, var->knobs.bind_now ? "immediate" : "lazy", var->knobs.bind_now ? now : lazy,
			var->knobs.bind_now ? "lazy" : "immediate", var->knobs.bind_now ? lazy : now);
	else if (c.relative - floor->relative != relative)
		family_variant_invalid(&var->base,
				       "The loader applied %lld RELATIVE relocations beyond the floor; "
				       ".rela.dyn holds %lld.",
				       c.relative - floor->relative, relative);
	return 0;
}

static int verify_variant(struct elf_context *ctx, struct elf_variant *var, const struct loader_counts *floor,
			  const struct elf_object_facts *floor_file)
{
	struct elf_object_facts libs, program;
	struct job_spec_elf_knobs program_knobs = var->knobs;
	char path[PLAT_MAX_PATH + 1], reason[400];
	cJSON *verify;
	int rc;

	/* With lld 14 the program is linked without RELR (runner.h). */
	program_knobs.relr = var->knobs.relr && ctx->toolchain->relr_program;
	var->base.valid = true;
	if (!(var->base.verify = verify = cJSON_CreateObject()))
		return LL_ENOMEM;
	if (!cJSON_AddStringToObject(verify, "toolchain", var->toolchain) ||
	    !cJSON_AddStringToObject(verify, "order", var->knobs.trace_order ? "trace" : "link"))
		return LL_ENOMEM;
	if ((rc = check_libraries(ctx, var, &libs)) < 0 ||
	    (rc = family_path(path, var->base.dir, "main")) < 0 || (rc = elf_read_object(path, &program)) < 0)
		return rc;
	if (!elf_check_object(&program, &program_knobs, true, ctx->base.exports, ctx->base.globals, reason,
			      sizeof(reason)))
		family_variant_invalid(&var->base, "main: %s", reason);
	if (var->knobs.trace_order && ctx->base.trace) {
		size_t traced = 0;
		for (int i = 0; i < ctx->base.dlls; i++)
			traced += ctx->base.trace_count[i];
		if (!cJSON_AddNumberToObject(verify, "traced_functions", (double)traced))
			return LL_ENOMEM;
	}
	if ((rc = counts_json(verify, "libraries", &libs, (size_t)ctx->base.dlls)) < 0 ||
	    (rc = counts_json(verify, "program", &program, 1)) < 0 ||
	    (rc = check_loader(var, floor, floor_file, &libs, &program, verify)) < 0 ||
	    (rc = probe(ctx, var, verify)) < 0)
		return rc;
	return family_files_json(&ctx->base, &elf_names, var->base.dir, false, &var->base.files);
}

int elf_verify(struct elf_context *ctx)
{
	char dir[PLAT_MAX_PATH + 1], path[PLAT_MAX_PATH + 1];
	struct elf_object_facts floor_file;
	struct loader_counts floor;
	int rc;

	if ((rc = family_path(dir, ctx->base.work, "empty")) < 0 ||
	    (rc = family_path(path, dir, "empty")) < 0 || (rc = elf_read_object(path, &floor_file)) < 0 ||
	    (rc = loader_run(dir, "empty", &floor)) < 0)
		return rc;
	for (size_t v = 0; v < ctx->variant_count; v++) {
		if ((rc = family_progress(ctx->base.task, "verify", (int)(100 * v / ctx->variant_count))) <
			    0 ||
		    (rc = verify_variant(ctx, &ctx->variants[v], &floor, &floor_file)) < 0)
			return rc;
	}
	return family_progress(ctx->base.task, "verify", 100);
}

#endif /* __linux__ */
