/*
 * program_tools.c - the program family's build stage: nothing of the
 * user's is built (its files are as given); the helper programs that ship
 * inside the agent (programs/programs.h: the debug probe, the input-idle
 * launcher and the floor) are written out, each checked against the
 * SHA-256 recorded when the agent was built. No compiler is needed.
 */
#include "program_int.h"

#include "programs/programs.h"

/* The embedded program NAME written to FOLDER/FILE (its path into OUT),
 * and noted among ctx->helpers. */
static int write_helper(struct program_context *ctx, const char *name, const char *folder, const char *file,
			char *out)
{
	int rc;

	if ((rc = family_path(out, folder, file)) < 0 ||
	    (rc = agent_program_install(name, out, &ctx->helpers[ctx->helper_count])) < 0)
		return rc;
	ctx->helper_count++;
	return 0;
}

int program_build_tools(struct program_context *ctx)
{
	char empty[PLAT_MAX_PATH + 1];
	int rc;

	if ((rc = family_path(ctx->tools_dir, ctx->work, "tools")) < 0 ||
	    (rc = plat_mkdirs(ctx->tools_dir)) < 0 ||
	    (rc = family_path(ctx->floor_dir, ctx->work, "floor")) < 0 ||
	    (rc = plat_mkdirs(ctx->floor_dir)) < 0)
		return rc;
	rc = write_helper(ctx, "debug_probe.exe", ctx->tools_dir, "debug_probe.exe", ctx->probe_exe);
	if (rc == 0 && ctx->input_idle)
		rc = write_helper(ctx, "idle_launcher.exe", ctx->tools_dir, "idle_launcher.exe",
				  ctx->launcher_exe);
	if (rc == 0)
		rc = write_helper(ctx, "empty_program.exe", ctx->floor_dir, "empty.exe", empty);
	if (rc < 0)
		return rc;
	return family_progress(ctx->task, "build", 100);
}
