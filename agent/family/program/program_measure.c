/*
 * program_measure.c - what the driver times for the program family
 * (program_timing()): every valid variant's exe with the job's arguments,
 * in the variant's folder, and the floor (the empty program), started as
 * the runner starts them. For until "exit" the run is the program's own
 * life (a non-zero exit fails the measurement with its code; verification
 * already refused a program that exits non-zero). For until "input-idle"
 * the idle launcher (agent/programs/idle_launcher.c) starts the program,
 * waits until it is ready for input, ends it and exits 0: the run is that
 * span (plus the launcher's own start, which the floor, started the same
 * way, also carries). The files to evict before a cold run are the
 * manifest's files in the variant's folder. Each timed run is killed
 * (failing the measurement) after the job's timeout_s.
 */
#include "program_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadlab/err.h"

/* Keeps TEXT (copied) among M's strings; NULL when out of memory. */
static const char *keep(struct program_measured *m, size_t *count, const char *text)
{
	return (m->strings[*count] = strdup(text)) ? m->strings[(*count)++] : NULL;
}

/* M and P for EXE (a path of this process) run in DIR with ARGS, through
 * the launcher for input-idle; FILES (manifest paths in DIR) or, when
 * NULL, EXE alone for eviction. */
static int measured_init(const struct program_context *ctx, const char *dir, const char *exe, bool with_files,
			 struct program_measured *m, struct measure_program *p)
{
	size_t argc = 0, strings = 0, nfiles = with_files ? ctx->file_count : 1;
	char arg[PLAT_MAX_PATH + 1], timeout[32];
	int rc;

	if (!(m->argv = calloc(ctx->arg_count + 6, sizeof(*m->argv))) ||
	    !(m->strings = calloc(4, sizeof(*m->strings))) ||
	    !(m->files = calloc(nfiles + 1, sizeof(*m->files))))
		return LL_ENOMEM;
	if (ctx->runner.through_wine64)
		m->argv[argc++] = ctx->runner.wine64;
	if (ctx->input_idle) {
		snprintf(timeout, sizeof(timeout), "%lld", ctx->timeout_s * 1000);
		if ((rc = runner_program_path(&ctx->runner, exe, arg)) < 0)
			return rc;
		if (!(m->argv[argc++] = keep(m, &strings, ctx->launcher_exe)) ||
		    !(m->argv[argc++] = keep(m, &strings, timeout)) ||
		    !(m->argv[argc++] = keep(m, &strings, arg)))
			return LL_ENOMEM;
	} else if (!(m->argv[argc++] = keep(m, &strings, exe))) {
		return LL_ENOMEM;
	}
	for (size_t i = 0; with_files && i < ctx->arg_count; i++)
		m->argv[argc++] = ctx->args[i];
	m->argv[argc] = NULL;
	for (size_t i = 0; i < nfiles; i++) {
		char path[PLAT_MAX_PATH + 1];
		if (with_files)
			rc = program_file_path(dir, ctx->files[i].path, false, path);
		else
			rc = snprintf(path, sizeof(path), "%s", exe) < (int)sizeof(path) ? 0 : LL_ETOOBIG;
		if (rc < 0)
			return rc;
		if (!(m->files[i] = strdup(path)))
			return LL_ENOMEM;
	}
	p->spawn.argv = m->argv;
	p->spawn.env_add = ctx->runner.env; /* WINEDLLOVERRIDES: the program's own DLLs */
	p->spawn.cwd = dir;
	p->files = (const char *const *)m->files;
	return 0;
}

int program_timing(struct program_context *ctx, struct family_timing *ret)
{
	char empty[PLAT_MAX_PATH + 1];
	size_t count = 0;
	int rc;

	memset(ret, 0, sizeof(*ret));
	if ((rc = family_path(empty, ctx->floor_dir, "empty.exe")) < 0)
		return rc;
	for (size_t v = 0; v < ctx->variant_count; v++) {
		struct program_variant *var = &ctx->variants[v];
		char exe[PLAT_MAX_PATH + 1];
		if (!var->valid)
			continue;
		program_use_build(ctx, var->build);
		if ((rc = family_timing_slot(ret, count, var->name)) < 0)
			return rc;
		ctx->measured_count = count + 1;
		if ((rc = program_file_path(var->dir, ctx->files[ctx->exe].path, false, exe)) < 0 ||
		    (rc = measured_init(ctx, var->dir, exe, true, &ctx->measured[count],
					&ret->programs[count])) < 0)
			return rc;
		count++;
	}
	ret->programs[count].name = PROGRAM_FLOOR_NAME;
	ctx->measured_count = count + 1;
	if ((rc = measured_init(ctx, ctx->floor_dir, empty, false, &ctx->measured[count],
				&ret->programs[count])) < 0)
		return rc;
	ret->count = count + 1;
	if (!ctx->floor_files) {
		if (!(ctx->floor_files = cJSON_CreateArray()))
			return LL_ENOMEM;
		if ((rc = family_add_file(ctx->floor_files, "empty.exe", empty)) < 0)
			return rc;
	}
	ret->churn_libs = NULL;
	ret->churn_wine = ctx->runner.through_wine64;
	ret->companion_pid = runner_server_pid(&ctx->runner);
	/* The job's timeout_s bounds each timed run; through the launcher
	 * (input-idle) its own start and the ending of the program too. */
	ret->timeout_ms = ctx->timeout_s * 1000 + (ctx->input_idle ? PROGRAM_LAUNCHER_SLACK_MS : 0);
	return 0;
}
