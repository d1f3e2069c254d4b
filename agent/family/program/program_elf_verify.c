/*
 * program_elf_verify.c - what the dynamic loader did with an ELF
 * program's variant (program_elf_verify()), and the major faults each of
 * its objects costs a cold start (the attribution runs).
 *
 * The probe run is the variant's own start (program_elf_start_init())
 * with LD_AUDIT=elf_audit.so (agent/programs/elf_audit.c: every object
 * la_objopen saw, its load bias and the file it came from, and whether
 * the loader saw LD_BIND_NOW), LD_DEBUG=statistics into files of its own
 * (glibc's ld.so: "number of relocations" and "... from cache" at start,
 * the symbol lookups and how many the cache answered, "number of
 * relative relocations", and "final number of relocations" at exit: the
 * difference is what lazy binding resolved after the start). Then the
 * claims (docs/program-elf.md, "What verification refuses").
 */
#ifdef __linux__

#include "program_elf.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadlab/err.h"
#include "loadlab/json.h"
#include "loadlab/stats.h"
#include "measure/plat_measure.h"

/* Largest audit or statistics report read back. */
#define VERIFY_MAX_REPORT (4u * 1024u * 1024u)

/* What LD_DEBUG=statistics said (-1: not said). */
struct loader_statistics {
	long long relocations, from_cache, relative, final_relocations, final_from_cache;
};

/* The number after LABEL in TEXT (its first occurrence), or -1. */
static long long number_after(const char *text, const char *label)
{
	const char *at = strstr(text, label);

	return at ? strtoll(at + strlen(label), NULL, 10) : -1;
}

static void statistics_parse(const char *text, struct loader_statistics *s)
{
	/* "final number of relocations from cache:" contains the shorter
	 * labels: each is looked for from where it can only be itself. */
	const char *final = strstr(text, "final number of relocations:");

	s->relocations = number_after(text, " number of relocations:");
	s->from_cache = number_after(text, " number of relocations from cache:");
	s->relative = number_after(text, "number of relative relocations:");
	s->final_relocations = final ? number_after(final, "final number of relocations:") : -1;
	s->final_from_cache = final ? number_after(final, "final number of relocations from cache:") : -1;
}

struct ld_files {
	const char *dir;
	long long pid;
	char chosen[PLAT_MAX_PATH + 1];
	long long lowest;
	bool exact; /* CHOSEN is the program's own pid's */
	int count;
};

/* Picks the statistics file "ld.PID" of the program: its own pid's when
 * known, else the lowest pid (the first process). */
static int visit_ld(void *context, const char *name)
{
	struct ld_files *l = context;
	long long pid;
	char *end;

	if (strncmp(name, "ld.", 3) != 0 || (pid = strtoll(name + 3, &end, 10)) <= 0 || *end)
		return 0;
	l->count++;
	if (l->exact || (pid != l->pid && l->lowest >= 0 && pid > l->lowest))
		return 0;
	l->exact = pid == l->pid;
	l->lowest = pid;
	return family_path(l->chosen, l->dir, name);
}

/* One object of the probe's report. */
struct audit_object {
	long long pid;
	char address[32];
	long lmid;
	const char *path;
};

/* Where PATH came from, as a module entry in MODULES; VAR made invalid
 * when it is a file the program ships, loaded from elsewhere. */
static int judge_object(const struct program_elf_context *ctx, struct program_elf_variant *var,
			const char *real_dir, const struct audit_object *o, cJSON *modules, int *ret_own)
{
	const struct program_context *base = &ctx->base;
	char real[PATH_MAX];
	size_t dir_len = strlen(real_dir);
	const char *name = strrchr(o->path, '/') ? strrchr(o->path, '/') + 1 : o->path;
	cJSON *m = json_array_add_object(modules);
	bool own = false;

	if (!m || !cJSON_AddStringToObject(m, "path", o->path) ||
	    !cJSON_AddStringToObject(m, "address", o->address) ||
	    !cJSON_AddNumberToObject(m, "namespace", (double)o->lmid))
		return LL_ENOMEM;
	if (strchr(o->path, '/') && realpath(o->path, real) && strncmp(real, real_dir, dir_len) == 0 &&
	    real[dir_len] == '/') {
		for (size_t i = 0; i < base->file_count; i++)
			if (strcmp(base->files[i].path, real + dir_len + 1) == 0 &&
			    !cJSON_AddStringToObject(m, "file", base->files[i].path))
				return LL_ENOMEM;
		own = true;
		(*ret_own)++;
	}
	if (!cJSON_AddBoolToObject(m, "from_program_folder", own))
		return LL_ENOMEM;
	for (size_t i = 0; !own && i < base->file_count; i++) {
		const char *path = base->files[i].path,
			   *file = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
		if (!ctx->elf_files[i].shared ||
		    (strcmp(file, name) != 0 && strcmp(ctx->elf_files[i].soname, name) != 0))
			continue;
		if (!cJSON_AddStringToObject(m, "instead_of", path))
			return LL_ENOMEM;
		program_invalid(&var->base,
				"%s was loaded from %s, not from the program's folder: the program ships %s "
				"(the loader found the system's copy first; see the exe's RUNPATH/RPATH).",
				name, o->path, path);
		break;
	}
	return 0;
}

/* The probe's report TEXT: the program's objects (those of the first
 * pid) judged into VERIFY's "modules"; its LD_BIND_NOW into *RET_ENV
 * (a pointer into TEXT, or NULL). */
static int read_audit(const struct program_elf_context *ctx, struct program_elf_variant *var, char *text,
		      cJSON *verify, const char **ret_env)
{
	cJSON *modules = cJSON_AddArrayToObject(verify, "modules");
	char real_dir[PATH_MAX];
	long long first = -1;
	int own = 0, rc;

	*ret_env = NULL;
	if (!modules)
		return LL_ENOMEM;
	if (!realpath(var->base.dir, real_dir))
		return err_set(LL_EIO, "Cannot resolve the folder %s.", var->base.dir);
	for (char *line = text, *next; line && *line; line = next) {
		char *field[6] = {0};
		size_t n = 0;
		if ((next = strchr(line, '\n')))
			*next++ = '\0';
		for (char *p = line; p && n < 6; n++) {
			field[n] = p;
			if ((p = strchr(p, '\t')))
				*p++ = '\0';
		}
		long long pid = field[1] ? strtoll(field[1], NULL, 10) : -1;
		if (first < 0)
			first = pid;
		if (pid != first)
			continue; /* a process the program started */
		if (strcmp(field[0], "env") == 0 && n == 3) {
			*ret_env = field[2];
		} else if (strcmp(field[0], "object") == 0 && n == 5) {
			struct audit_object o = {
				.pid = pid, .lmid = strtol(field[3], NULL, 10), .path = field[4]};
			snprintf(o.address, sizeof(o.address), "%s", field[2]);
			if ((rc = judge_object(ctx, var, real_dir, &o, modules, &own)) < 0)
				return rc;
		}
	}
	if (!cJSON_AddNumberToObject(verify, "objects_from_program_folder", own))
		return LL_ENOMEM;
	if (first < 0)
		program_invalid(&var->base,
				"The audit library reported no object: the loader did not run it.");
	return 0;
}

/* The loader's statistics of VAR's probe run into VERIFY's "loader" and
 * the binding claims. */
static int check_loader(const struct program_elf_context *ctx, struct program_elf_variant *var,
			const char *env, const struct loader_statistics *s, cJSON *verify)
{
	cJSON *l = cJSON_AddObjectToObject(verify, "loader");
	long long lazy =
		s->final_relocations >= 0 && s->relocations >= 0 ? s->final_relocations - s->relocations : -1;
	bool bind_now_seen = env && strcmp(env, "LD_BIND_NOW=1") == 0;

	if (!l || !cJSON_AddStringToObject(l, "environment", env ? env : "(not reported)") ||
	    !cJSON_AddNumberToObject(l, "relocations_at_start", (double)s->relocations) ||
	    !cJSON_AddNumberToObject(l, "lookups_from_cache_at_start", (double)s->from_cache) ||
	    !cJSON_AddNumberToObject(l, "relative_relocations", (double)s->relative) ||
	    !cJSON_AddNumberToObject(l, "relocations_final", (double)s->final_relocations) ||
	    !cJSON_AddNumberToObject(l, "lookups_from_cache_final", (double)s->final_from_cache) ||
	    !cJSON_AddNumberToObject(l, "lazy_after_start", (double)lazy))
		return LL_ENOMEM;
	if (s->relocations < 0)
		program_invalid(&var->base,
				"LD_DEBUG=statistics reported nothing: the loader's counts are unknown.");
	if (var->bind_now && !bind_now_seen)
		program_invalid(&var->base, "bind-now: the loader saw %s, not LD_BIND_NOW=1.",
				env ? env : "no environment report");
	if (var->bind_now && lazy > 0)
		program_invalid(&var->base,
				"bind-now: %lld relocations were left lazy and resolved after the start "
				"(LD_DEBUG=statistics: %lld at start, %lld final).",
				lazy, s->relocations, s->final_relocations);
	if (!var->bind_now && env && strcmp(env, "LD_BIND_NOW unset") != 0)
		program_invalid(&var->base, "%s: the loader saw %s, which this variant does not set.",
				var->base.name, env);
	return 0;
}

/* Runs START for VAR once with counters (output into DIR). */
static int run_once(const struct program_elf_context *ctx, const struct program_elf_variant *var,
		    const struct program_elf_start *start, const char *dir, struct plat_measure_counters *ret)
{
	char out[PLAT_MAX_PATH + 1], err[PLAT_MAX_PATH + 1];
	struct plat_spawn_options o = {.argv = start->argv, .env_add = start->env, .cwd = var->base.dir};
	int rc;

	if ((rc = family_path(out, dir, "stdout.txt")) < 0 || (rc = family_path(err, dir, "stderr.txt")) < 0)
		return rc;
	o.stdout_path = out;
	o.stderr_path = err;
	return plat_measure_run(&o, ctx->base.timeout_s * 1000 + (ctx->idle ? PROGRAM_ELF_IDLE_MS : 0), true,
				ret);
}

/* The probe run of variant V and its claims. */
static int probe_variant(struct program_elf_context *ctx, struct program_elf_variant *var, size_t v,
			 cJSON *verify)
{
	char dir[PLAT_MAX_PATH + 1], sub[32], audit[PLAT_MAX_PATH + 1], ld[PLAT_MAX_PATH + 1];
	char env_audit[PLAT_MAX_PATH + 16], env_out[PLAT_MAX_PATH + 32], env_ld[PLAT_MAX_PATH + 32];
	const char *extra[] = {env_audit, env_out, "LD_DEBUG=statistics", env_ld, NULL}, *env = NULL;
	struct program_elf_start start;
	struct plat_measure_counters k;
	struct loader_statistics s = {-1, -1, -1, -1, -1};
	struct ld_files files = {.lowest = -1};
	char *text = NULL, *stats = NULL;
	size_t len;
	int rc;

	snprintf(sub, sizeof(sub), "%02zu", v);
	if ((rc = family_path(dir, ctx->probe_dir, sub)) < 0 || (rc = plat_mkdirs(dir)) < 0 ||
	    (rc = family_path(audit, dir, "audit.txt")) < 0 || (rc = family_path(ld, dir, "ld")) < 0)
		return rc;
	snprintf(env_audit, sizeof(env_audit), "LD_AUDIT=%s", ctx->audit_so);
	snprintf(env_out, sizeof(env_out), "LOADLAB_AUDIT_OUT=%s", audit);
	snprintf(env_ld, sizeof(env_ld), "LD_DEBUG_OUTPUT=%s", ld);
	if ((rc = program_elf_start_init(ctx, var, extra, &start)) < 0)
		goto out;
	if ((rc = run_once(ctx, var, &start, dir, &k)) < 0) {
		program_invalid(&var->base, "The probe run failed: %s", err_message(rc));
		rc = 0;
		goto out;
	}
	if (!cJSON_AddNumberToObject(verify, "exit_code", k.exit_code) ||
	    !cJSON_AddNumberToObject(verify, "read_chars", (double)k.read_chars)) {
		rc = LL_ENOMEM;
		goto out;
	}
	if (k.exit_code != 0)
		program_invalid(&var->base, "The program exited with code %d (its output: %s/stderr.txt).",
				k.exit_code, dir);
	if ((rc = family_read_file(audit, VERIFY_MAX_REPORT, &text, &len)) < 0) {
		program_invalid(&var->base, "The audit library wrote no report: %s", err_message(rc));
		rc = 0;
	} else if ((rc = read_audit(ctx, var, text, verify, &env)) < 0) {
		goto out;
	}
	files.dir = dir;
	files.pid = k.pid;
	if ((rc = plat_list_dir(dir, visit_ld, &files)) < 0)
		goto out;
	if (files.chosen[0] && family_read_file(files.chosen, VERIFY_MAX_REPORT, &stats, &len) == 0)
		statistics_parse(stats, &s);
	err_clear();
	rc = check_loader(ctx, var, env, &s, verify);
out:
	free(text);
	free(stats);
	program_elf_start_release(&start);
	return rc;
}

/* pagein: the launcher read every file of the program (read_chars, the
 * bytes through read(2), at least their sizes). */
static int check_pagein(const struct program_elf_context *ctx, struct program_elf_variant *var, cJSON *verify)
{
	long long total = 0, read_chars = (long long)cJSON_GetNumberValue(
				     cJSON_GetObjectItemCaseSensitive(verify, "read_chars"));
	char path[PLAT_MAX_PATH + 1];
	long long size;
	int rc;

	for (size_t i = 0; i < ctx->base.file_count; i++) {
		char sha[65];
		if ((rc = program_file_path(var->base.dir, ctx->base.files[i].path, false, path)) < 0 ||
		    (rc = plat_file_sha256(path, sha, &size)) < 0)
			return rc;
		total += size;
	}
	if (!cJSON_AddNumberToObject(verify, "pagein_file_bytes", (double)total))
		return LL_ENOMEM;
	if (read_chars >= 0 && read_chars < total)
		program_invalid(&var->base, "pagein: the run read %lld bytes, the program's files hold %lld.",
				read_chars, total);
	return 0;
}

/* Major faults of VAR's start with only the file I (or, I == count,
 * every file) evicted, PROGRAM_ELF_FAULT_RUNS times, into FAULTS; 1 when
 * the eviction did not work (or left pages resident). */
static int attribute_file(const struct program_elf_context *ctx, struct program_elf_variant *var, size_t i,
			  const struct program_elf_start *start, const char *dir, cJSON *faults)
{
	const struct program_context *base = &ctx->base;
	char path[PLAT_MAX_PATH + 1];
	const char *one[] = {path, NULL}, **evict = one;
	cJSON *runs =
		cJSON_AddArrayToObject(faults, i < base->file_count ? base->files[i].path : "(all files)");
	int rc;

	if (!runs)
		return LL_ENOMEM;
	if (i == base->file_count)
		evict = (const char **)start->files;
	else if ((rc = program_file_path(var->base.dir, base->files[i].path, false, path)) < 0)
		return rc;
	for (int r = 0; r < PROGRAM_ELF_FAULT_RUNS; r++) {
		struct plat_measure_eviction e;
		struct plat_measure_counters k;
		if ((rc = plat_measure_evict(evict, &e)) < 0)
			return rc;
		if (!e.done || (e.verified && e.resident_pages > 0))
			return 1; /* no eviction, no attribution */
		if ((rc = run_once(ctx, var, start, dir, &k)) < 0)
			return rc;
		if (!cJSON_AddItemToArray(runs, cJSON_CreateNumber((double)k.hard_faults)))
			return LL_ENOMEM;
	}
	return 0;
}

/* The attribution runs of a valid VAR: each ELF file it loaded from its
 * folder, then all files at once. */
static int attribute_faults(struct program_elf_context *ctx, struct program_elf_variant *var, size_t v)
{
	const struct program_context *base = &ctx->base;
	struct program_elf_start start;
	char dir[PLAT_MAX_PATH + 1], sub[40];
	int rc;

	snprintf(sub, sizeof(sub), "%02zu-faults", v);
	if ((rc = family_path(dir, ctx->probe_dir, sub)) < 0 || (rc = plat_mkdirs(dir)) < 0)
		return rc;
	if (!(var->faults = cJSON_CreateObject()))
		return LL_ENOMEM;
	if ((rc = program_elf_start_init(ctx, var, NULL, &start)) < 0)
		goto out;
	if (!(start.files = calloc(base->file_count + 1, sizeof(*start.files)))) {
		rc = LL_ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < base->file_count; i++) {
		char path[PLAT_MAX_PATH + 1];
		if ((rc = program_file_path(var->base.dir, base->files[i].path, false, path)) < 0)
			goto out;
		if (!(start.files[i] = strdup(path))) {
			rc = LL_ENOMEM;
			goto out;
		}
	}
	for (size_t i = 0; i <= base->file_count && var->faults; i++) {
		if (i < base->file_count && !ctx->elf_files[i].elf)
			continue;
		if ((rc = attribute_file(ctx, var, i, &start, dir, var->faults)) < 0)
			goto out;
		if (rc == 1) {
			cJSON_Delete(var->faults);
			var->faults = NULL;
			rc = program_note(&var->base,
					  "Major faults per object unknown: the eviction of the "
					  "program's files did not work here (see the cold figures' "
					  "method and note).");
			goto out;
		}
	}
out:
	program_elf_start_release(&start);
	return rc;
}

int program_elf_verify(struct program_elf_context *ctx)
{
	int rc;

	for (size_t v = 0; v < ctx->variant_count; v++) {
		struct program_elf_variant *var = &ctx->variants[v];
		program_elf_use_build(ctx, var->base.build);
		var->base.valid = true;
		if (!(var->base.verify = cJSON_CreateObject()))
			return LL_ENOMEM;
		if ((rc = probe_variant(ctx, var, v, var->base.verify)) < 0 ||
		    (var->pagein && (rc = check_pagein(ctx, var, var->base.verify)) < 0) ||
		    (rc = program_files_json(&ctx->base, var->base.dir, &var->base.files)) < 0)
			return rc;
		if (var->base.valid && (rc = attribute_faults(ctx, var, v)) < 0)
			return rc;
		if ((rc = family_progress(ctx->base.task, "verify",
					  (int)(100 * (v + 1) / ctx->variant_count))) < 0)
			return rc;
	}
	program_elf_use_build(ctx, 0);
	return 0;
}

/* The median of the numbers of RUNS (an array), or -1. */
static double median_of(const cJSON *runs)
{
	double x[PROGRAM_ELF_FAULT_RUNS], median;
	size_t n = 0;
	const cJSON *r;

	cJSON_ArrayForEach(r, runs)
		if (n < PROGRAM_ELF_FAULT_RUNS && cJSON_IsNumber(r))
			x[n++] = r->valuedouble;
	return n > 0 && stats_median(x, n, &median) == 0 ? median : -1;
}

int program_elf_faults_merge(const struct program_elf_context *ctx, const struct program_elf_variant *var,
			     cJSON *o)
{
	cJSON *modules = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(o, "cold"),
							  "modules"),
	      *m;
	size_t dir_len = strlen(var->base.dir);

	if (!var->faults)
		return 0;
	cJSON_ArrayForEach(m, modules) {
		const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "name"));
		const cJSON *runs;
		/* The cold timer names a module by its path in the variant's folder. */
		if (!name || strncmp(name, var->base.dir, dir_len) != 0 || name[dir_len] != '/' ||
		    !(runs = cJSON_GetObjectItemCaseSensitive(var->faults, name + dir_len + 1)))
			continue;
		if (!cJSON_AddStringToObject(m, "file", name + dir_len + 1) ||
		    !cJSON_AddNumberToObject(m, "major_faults", median_of(runs)) ||
		    !cJSON_AddItemToObject(m, "major_faults_runs", cJSON_Duplicate(runs, true)))
			return LL_ENOMEM;
	}
	(void)ctx;
	return 0;
}

#endif /* __linux__ */
