/*
 * program_elf_measure.c - how an ELF program's variant is started
 * (program_elf_start_init()) and what the driver times
 * (program_elf_timing()): every valid variant's exe with the job's
 * arguments, in the variant's folder, and the floor (elf_empty). The
 * launcher (agent/programs/elf_launcher.c, a static program) comes first
 * for pagein (it reads the program's files, then becomes the program) and
 * for until "idle" (it ends the program once its mappings stop changing);
 * otherwise the exe is started itself. The files a cold run evicts are
 * the manifest's files in the variant's folder.
 */
#ifdef __linux__

#include "program_elf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadlab/err.h"

/* The loader variables the agent's own environment may carry, which no
 * run inherits (docs/program-elf.md, "The environment"). */
static const char *const loader_variables[] = {"LD_LIBRARY_PATH", "LD_PRELOAD",      "LD_AUDIT",
					       "LD_DEBUG",        "LD_DEBUG_OUTPUT", "LD_BIND_NOW"};

/* A copy of TEXT kept in START; NULL when out of memory. */
static const char *keep(struct program_elf_start *start, const char *text)
{
	if (start->string_count == start->string_cap) {
		size_t cap = start->string_cap ? start->string_cap * 2 : 16;
		char **grown = realloc(start->strings, cap * sizeof(*grown));
		if (!grown)
			return NULL;
		start->strings = grown;
		start->string_cap = cap;
	}
	return (start->strings[start->string_count] = strdup(text)) ? start->strings[start->string_count++]
								    : NULL;
}

/* True when one of ENV (NULL-terminated, may be NULL) sets NAME. */
static bool sets(const char *const *env, const char *name)
{
	size_t len = strlen(name);

	for (size_t i = 0; env && env[i]; i++)
		if (strncmp(env[i], name, len) == 0 && env[i][len] == '=')
			return true;
	return false;
}

static int add_env(struct program_elf_start *start, size_t *count, const char *entry)
{
	if (*count >= PROGRAM_ELF_MAX_ENV)
		return err_set(LL_ETOOBIG, "Too many variables for one run of the program.");
	return (start->env[(*count)++] = keep(start, entry)) ? 0 : LL_ENOMEM;
}

static int start_env(const struct program_elf_context *ctx, const struct program_elf_variant *var,
		     const char *const *extra_env, struct program_elf_start *start)
{
	bool bind_now = var && var->bind_now && !ctx->drop_bind_now;
	char entry[64];
	size_t count = 0;
	int rc;

	for (size_t i = 0; i < sizeof(loader_variables) / sizeof(loader_variables[0]); i++) {
		const char *name = loader_variables[i];
		if (!getenv(name) || sets(extra_env, name) || (bind_now && strcmp(name, "LD_BIND_NOW") == 0))
			continue;
		snprintf(entry, sizeof(entry), "%s=", name);
		if ((rc = add_env(start, &count, entry)) < 0)
			return rc;
	}
	if (bind_now && (rc = add_env(start, &count, "LD_BIND_NOW=1")) < 0)
		return rc;
	for (size_t i = 0; extra_env && extra_env[i]; i++)
		if ((rc = add_env(start, &count, extra_env[i])) < 0)
			return rc;
	start->env[count] = NULL;
	return 0;
}

int program_elf_start_init(const struct program_elf_context *ctx, const struct program_elf_variant *var,
			   const char *const *extra_env, struct program_elf_start *ret)
{
	const struct program_context *base = &ctx->base;
	size_t argc = 0, pagein = var && var->pagein ? base->file_count : 0;
	char path[PLAT_MAX_PATH + 1], idle[32];
	int rc;

	memset(ret, 0, sizeof(*ret));
	if (!(ret->argv = calloc(base->arg_count + 2 * pagein + 8, sizeof(*ret->argv))))
		return LL_ENOMEM;
	ret->argv[argc++] = ctx->launcher;
	for (size_t i = 0; i < pagein; i++) {
		if ((rc = program_file_path(var->base.dir, base->files[i].path, false, path)) < 0)
			return rc;
		ret->argv[argc++] = "--pagein";
		if (!(ret->argv[argc++] = keep(ret, path)))
			return LL_ENOMEM;
	}
	if (ctx->idle) {
		snprintf(idle, sizeof(idle), "%d", PROGRAM_ELF_IDLE_MS);
		ret->argv[argc++] = "--idle-ms";
		if (!(ret->argv[argc++] = keep(ret, idle)))
			return LL_ENOMEM;
	}
	ret->argv[argc++] = "--";
	if (var && (rc = program_file_path(var->base.dir, base->files[base->exe].path, false, path)) < 0)
		return rc;
	if (!(ret->argv[argc++] = keep(ret, var ? path : ctx->empty)))
		return LL_ENOMEM;
	for (size_t i = 0; var && i < base->arg_count; i++)
		ret->argv[argc++] = base->args[i];
	ret->argv[argc] = NULL;
	return start_env(ctx, var, extra_env, ret);
}

void program_elf_start_release(struct program_elf_start *start)
{
	for (size_t i = 0; i < start->string_count; i++)
		free(start->strings[i]);
	free(start->strings);
	family_strings_free(start->files);
	free(start->argv);
	memset(start, 0, sizeof(*start));
}

/* START's files: the manifest's in DIR, or PATH alone (the floor). */
static int start_files(const struct program_elf_context *ctx, const char *dir, const char *path,
		       struct program_elf_start *start)
{
	size_t n = dir ? ctx->base.file_count : 1;
	char file[PLAT_MAX_PATH + 1];
	int rc;

	if (!(start->files = calloc(n + 1, sizeof(*start->files))))
		return LL_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (dir && (rc = program_file_path(dir, ctx->base.files[i].path, false, file)) < 0)
			return rc;
		if (!(start->files[i] = strdup(dir ? file : path)))
			return LL_ENOMEM;
	}
	return 0;
}

/* Slot N of RET: START run in DIR. */
static void give_slot(struct program_elf_start *start, const char *dir, struct measure_program *p)
{
	p->spawn.argv = start->argv;
	p->spawn.env_add = start->env;
	p->spawn.cwd = dir;
	p->files = (const char *const *)start->files;
}

int program_elf_timing(struct program_elf_context *ctx, struct family_timing *ret)
{
	size_t count = 0;
	int rc;

	memset(ret, 0, sizeof(*ret));
	for (size_t v = 0; v < ctx->variant_count; v++) {
		struct program_elf_variant *var = &ctx->variants[v];
		if (!var->base.valid)
			continue;
		program_elf_use_build(ctx, var->base.build); /* its exe, files and folder */
		if ((rc = family_timing_slot(ret, count, var->base.name)) < 0)
			return rc;
		ctx->timed_count = count + 1;
		if ((rc = program_elf_start_init(ctx, var, NULL, &ctx->timed[count])) < 0 ||
		    (rc = start_files(ctx, var->base.dir, NULL, &ctx->timed[count])) < 0)
			return rc;
		give_slot(&ctx->timed[count], var->base.dir, &ret->programs[count]);
		count++;
	}
	program_elf_use_build(ctx, 0);
	ret->programs[count].name = PROGRAM_FLOOR_NAME;
	ctx->timed_count = count + 1;
	if ((rc = program_elf_start_init(ctx, NULL, NULL, &ctx->timed[count])) < 0 ||
	    (rc = start_files(ctx, NULL, ctx->empty, &ctx->timed[count])) < 0)
		return rc;
	give_slot(&ctx->timed[count], ctx->base.floor_dir, &ret->programs[count]);
	ret->count = count + 1;
	ret->loader_statistics = true;
	if (!ctx->base.floor_files) {
		if (!(ctx->base.floor_files = cJSON_CreateArray()))
			return LL_ENOMEM;
		if ((rc = family_add_file(ctx->base.floor_files, "elf_empty", ctx->empty)) < 0)
			return rc;
	}
	/* The job's timeout_s bounds each timed run; waiting for idle adds
	 * the quiet time itself. */
	ret->timeout_ms = ctx->base.timeout_s * 1000 + (ctx->idle ? PROGRAM_ELF_IDLE_MS : 0);
	return 0;
}

#endif /* __linux__ */
