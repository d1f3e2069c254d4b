/*
 * program_verify.c - proves each variant is what its knobs claim before
 * it is timed: runs the program once under the debug probe
 * (agent/programs/debug_probe.c: the load-DLL debug events give each
 * module's actual base, its file the preferred one) and reads the files
 * with the PE toolkit, then compares:
 *
 *	every variant   each module named like one of the program's DLLs
 *	                was loaded from the program's folder, not from
 *	                elsewhere (under Wine: not Wine's builtin of that
 *	                name; program_module_judge()); the program ran (exit
 *	                0 for until "exit"); each of its PE files' ImageBase
 *	                as the probe read it equals the toolkit's
 *	as-built        the relocations that happened are recorded
 *	rebase, bind    none of the program's DLLs was relocated
 *	aslr off        no PE file of the program keeps the ASLR flag
 *	bind            every bound import descriptor names a module whose
 *	                file, where the loader finds it on this machine, has
 *	                the bound timestamp (under Wine the loader ignores
 *	                bindings: recorded, as the pe family does)
 *
 * The result lists every module with its path, its preferred and actual
 * base.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadlab/err.h"
#include "loadlab/json.h"
#include "loadlab/pe.h"
#include "program_int.h"

/* Where the program of VAR runs, as program_module_judge() reads paths:
 * its folder and the system folders as the program sees them, in
 * FOLDERS (the runner's system folders, then the variant's). */
static int module_where(const struct program_context *ctx, const struct program_variant *var,
			char folders[][PLAT_MAX_PATH + 1], const char *dirs[],
			struct program_module_where *ret)
{
	size_t n = ctx->runner.system_dir_count;
	int rc;

	for (size_t i = 0; i < n; i++) {
		if ((rc = runner_program_path(&ctx->runner, ctx->runner.system_dirs[i], folders[i])) < 0)
			return rc;
		dirs[i] = folders[i];
	}
	if ((rc = runner_program_path(&ctx->runner, var->dir, folders[n])) < 0)
		return rc;
	*ret = (struct program_module_where){.program_dir = folders[n],
					     .system_dirs = dirs,
					     .system_dir_count = n,
					     .wine = ctx->runner.wine};
	return 0;
}

/* The module list: every module the probe saw, preferred and actual. */
static int check_modules(const struct program_context *ctx, struct program_variant *var, const cJSON *probe,
			 cJSON *verify)
{
	const cJSON *modules = cJSON_GetObjectItemCaseSensitive(probe, "modules"), *m;
	cJSON *out = cJSON_AddArrayToObject(verify, "modules"), *relocated_list;
	int dlls = 0, dlls_loaded = 0, relocated = 0, system_relocated = 0, elsewhere = 0, rc;
	char folders[sizeof(ctx->runner.system_dirs) / sizeof(ctx->runner.system_dirs[0]) + 1]
		    [PLAT_MAX_PATH + 1];
	const char *dirs[sizeof(folders) / sizeof(folders[0])];
	struct program_module_where where;

	if (!out || !(relocated_list = cJSON_AddArrayToObject(verify, "relocated")))
		return LL_ENOMEM;
	if ((rc = module_where(ctx, var, folders, dirs, &where)) < 0)
		return rc;
	if (!cJSON_IsArray(modules))
		return err_set(LL_EFORMAT, "The probe report has no modules.");
	for (size_t i = 0; i < ctx->file_count; i++)
		dlls += ctx->files[i].dll;
	cJSON_ArrayForEach(m, modules) {
		const char *path = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "path"));
		const char *kind = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "kind"));
		uint64_t preferred = family_hex_value(m, "preferred");
		uint64_t actual = family_hex_value(m, "actual");
		const char *file_path =
			cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "file_path"));
		const char *name = path ? path + strlen(path) : "";
		struct program_module_origin origin = {.file = -1, .manifest_file = -1};
		cJSON *o = cJSON_CreateObject();
		long file;

		if (path)
			program_module_judge(ctx->files, ctx->file_count, &where, path, &origin);
		file = origin.file;

		while (path && name > path && name[-1] != '\\' && name[-1] != '/')
			name--;
		if (!o || !cJSON_AddItemToArray(out, o))
			return cJSON_Delete(o), LL_ENOMEM;
		if (!cJSON_AddStringToObject(o, "name", *name ? name : "?") ||
		    !cJSON_AddStringToObject(o, "path", path ? path : "") ||
		    !cJSON_AddStringToObject(o, "kind", kind ? kind : "?") ||
		    (rc = family_add_hex(o, "preferred", preferred)) < 0 ||
		    (rc = family_add_hex(o, "actual", actual)) < 0 ||
		    !cJSON_AddBoolToObject(o, "relocated", preferred != actual) ||
		    !cJSON_AddBoolToObject(o, "program_file", file >= 0) ||
		    !cJSON_AddBoolToObject(o, "from_program_folder", origin.from_program_folder) ||
		    (file_path && *file_path && !cJSON_AddStringToObject(o, "file_path", file_path)))
			return LL_ENOMEM;
		if (origin.manifest_file >= 0) {
			/* The loader took another file for one of the program's
			 * DLLs: what would be timed is not the program's code. */
			if (!cJSON_AddStringToObject(o, "instead_of", ctx->files[origin.manifest_file].path))
				return LL_ENOMEM;
			program_invalid(var, "%s", origin.reason);
			elsewhere++;
		}
		if (file < 0) {
			system_relocated += preferred != actual;
			continue;
		}
		const struct program_file *f = &ctx->files[file];
		struct pe_image *image = NULL;
		char fpath[PLAT_MAX_PATH + 1];
		if (!cJSON_AddStringToObject(o, "file", f->path))
			return LL_ENOMEM;
		if ((rc = program_file_path(var->dir, f->path, false, fpath)) < 0 ||
		    (rc = pe_image_open(fpath, &image)) < 0)
			return rc;
		if (image->image_base != preferred)
			program_invalid(var,
					"%s: the probe read base 0x%llx from its file, the toolkit 0x%llx.",
					f->path, (unsigned long long)preferred,
					(unsigned long long)image->image_base);
		pe_image_free(image);
		if (f->dll)
			dlls_loaded++;
		if (preferred != actual) {
			cJSON *s = cJSON_CreateString(f->path);
			if (!s || !cJSON_AddItemToArray(relocated_list, s))
				return cJSON_Delete(s), LL_ENOMEM;
			relocated += f->dll;
		}
	}
	if (!cJSON_AddNumberToObject(verify, "dll_count", dlls) ||
	    !cJSON_AddNumberToObject(verify, "dlls_loaded", dlls_loaded) ||
	    !cJSON_AddNumberToObject(verify, "dlls_relocated", relocated) ||
	    !cJSON_AddNumberToObject(verify, "system_modules_relocated", system_relocated) ||
	    !cJSON_AddNumberToObject(verify, "dlls_loaded_elsewhere", elsewhere))
		return LL_ENOMEM;
	if (var->unique_bases && relocated != 0)
		program_invalid(var,
				"Bases 'unique': %d of the program's DLLs were relocated, expected none.",
				relocated);
	return 0;
}

/* Opens the image of the program's file I in the variant folder DIR. */
static int file_image_open(const struct program_context *ctx, const char *dir, size_t i,
			   struct pe_image **ret)
{
	char path[PLAT_MAX_PATH + 1];
	int rc = program_file_path(dir, ctx->files[i].path, false, path);

	return rc < 0 ? rc : pe_image_open(path, ret);
}

/* ASLR off: no PE file of the program keeps the flag. */
static int check_aslr(const struct program_context *ctx, struct program_variant *var, cJSON *verify)
{
	int with_flag = 0, rc;

	for (size_t i = 0; i < ctx->file_count; i++) {
		struct pe_image *image = NULL;
		if (!ctx->files[i].pe)
			continue;
		if ((rc = file_image_open(ctx, var->dir, i, &image)) < 0)
			return rc;
		with_flag += (image->dll_characteristics & PE_DLLCHAR_DYNAMIC_BASE) != 0;
		pe_image_free(image);
	}
	if (!cJSON_AddNumberToObject(verify, "files_with_aslr", with_flag))
		return LL_ENOMEM;
	if (var->aslr_off && with_flag)
		program_invalid(var, "ASLR 'off': %d of the program's files still have the ASLR flag.",
				with_flag);
	return 0;
}

/* Binding: each PE file's bound import directory against this machine. */
static int check_binding(const struct program_context *ctx, struct program_variant *var, cJSON *verify)
{
	char exe_dir[PLAT_MAX_PATH + 1];
	cJSON *o = cJSON_AddObjectToObject(verify, "binding"), *mods;
	size_t descriptors = 0, stale = 0, files_bound = 0;
	bool exe_bound = false;
	int rc;

	if (!o || !(mods = cJSON_AddArrayToObject(o, "modules")))
		return LL_ENOMEM;
	if ((rc = program_file_path(var->dir, ctx->files[ctx->exe].path, false, exe_dir)) < 0)
		return rc;
	*strrchr(exe_dir, '/') = '\0';
	for (size_t i = 0; i < ctx->file_count; i++) {
		struct pe_bound_imports bound = {0};
		struct pe_image *image = NULL;
		if (!ctx->files[i].pe)
			continue;
		if ((rc = file_image_open(ctx, var->dir, i, &image)) < 0)
			return rc;
		/* The names point into the image: it is freed after the loop. */
		if ((rc = pe_bound_imports_read(image, &bound)) < 0) {
			pe_image_free(image);
			return rc;
		}
		files_bound += bound.count > 0;
		exe_bound |= i == ctx->exe && bound.count > 0;
		for (size_t b = 0; b < bound.count && rc == 0; b++) {
			uint32_t have = 0;
			bool found =
				family_loader_timestamp(&ctx->runner, exe_dir, bound.modules[b].name, &have);
			bool match = found && have == bound.modules[b].timestamp;
			cJSON *m = json_array_add_object(mods);
			if (!m) {
				rc = LL_ENOMEM;
				break;
			}
			if (!cJSON_AddStringToObject(m, "file", ctx->files[i].path) ||
			    !cJSON_AddStringToObject(m, "name", bound.modules[b].name) ||
			    !cJSON_AddNumberToObject(m, "timestamp", bound.modules[b].timestamp) ||
			    !cJSON_AddBoolToObject(m, "file_found", found) ||
			    !cJSON_AddNumberToObject(m, "file_timestamp", have) ||
			    !cJSON_AddBoolToObject(m, "timestamp_matches", match))
				rc = LL_ENOMEM;
			descriptors++;
			stale += !match;
		}
		pe_bound_imports_release(&bound);
		pe_image_free(image);
		if (rc < 0)
			return rc;
	}
	if (!cJSON_AddBoolToObject(o, "present", descriptors > 0) ||
	    !cJSON_AddNumberToObject(o, "files_bound", (double)files_bound) ||
	    !cJSON_AddNumberToObject(o, "descriptors", (double)descriptors) ||
	    !cJSON_AddNumberToObject(o, "stale", (double)stale) ||
	    !cJSON_AddBoolToObject(o, "valid", exe_bound && stale == 0))
		return LL_ENOMEM;
	if (ctx->runner.wine) {
		if (!cJSON_AddBoolToObject(o, "loader_used_binding", false) ||
		    !cJSON_AddStringToObject(o, "note",
					     "Wine ignores bound imports and resolves every import."))
			return LL_ENOMEM;
	} else if (!cJSON_AddBoolToObject(o, "loader_used_binding", var->valid && exe_bound && stale == 0)) {
		return LL_ENOMEM;
	}
	if (var->bind) {
		if (!exe_bound)
			program_invalid(var, "Bind: the program's exe has no bound import directory.");
		else if (stale)
			program_invalid(
				var,
				"Bind: %zu of %zu bound descriptors' timestamps differ from the files "
				"the loader would use.",
				stale, descriptors);
	} else if (descriptors > 0 && var->unique_bases) {
		program_invalid(var, "Not bound, yet the program has bound import directories.");
	}
	return 0;
}

int program_files_json(const struct program_context *ctx, const char *folder, cJSON **ret_files)
{
	cJSON *files = cJSON_CreateArray();
	int rc = 0;

	if (!files)
		return LL_ENOMEM;
	for (size_t i = 0; i < ctx->file_count; i++) {
		char path[PLAT_MAX_PATH + 1];

		if ((rc = program_file_path(folder, ctx->files[i].path, false, path)) < 0 ||
		    (rc = family_add_file(files, ctx->files[i].path, path)) < 0)
			goto out;
	}
	*ret_files = files;
	files = NULL;
out:
	cJSON_Delete(files);
	return rc;
}

/* Runs the program of VAR under the debug probe; the report into *RET
 * (NULL, with VAR invalid, when the run failed). */
static int probe_run(struct program_context *ctx, struct program_variant *var, size_t v, cJSON *verify,
		     cJSON **ret)
{
	char report[PLAT_MAX_PATH + 1], report_arg[PLAT_MAX_PATH + 1], exe[PLAT_MAX_PATH + 1],
		exe_arg[PLAT_MAX_PATH + 1], log_path[PLAT_MAX_PATH + 1], quiet[32], sub[32], *text = NULL;
	const char **args = calloc(ctx->arg_count + 4, sizeof(*args));
	long long quiet_ms = ctx->input_idle ? PROGRAM_PROBE_QUIET_MS : ctx->timeout_s * 1000;
	int rc, code = 0;
	size_t len = 0;

	if (!args)
		return LL_ENOMEM;
	snprintf(sub, sizeof(sub), "verify/%02zu.json", v);
	snprintf(quiet, sizeof(quiet), "%lld", quiet_ms);
	if ((rc = family_path(report, ctx->work, sub)) < 0 ||
	    (rc = family_path(log_path, ctx->work, "verify")) < 0 || (rc = plat_mkdirs(log_path)) < 0 ||
	    (rc = family_path(log_path, log_path, "probe.log")) < 0 ||
	    (rc = program_file_path(var->dir, ctx->files[ctx->exe].path, false, exe)) < 0 ||
	    (rc = runner_program_path(&ctx->runner, report, report_arg)) < 0 ||
	    (rc = runner_program_path(&ctx->runner, exe, exe_arg)) < 0)
		goto out;
	args[0] = report_arg;
	args[1] = quiet;
	args[2] = exe_arg;
	for (size_t i = 0; i < ctx->arg_count; i++)
		args[3 + i] = ctx->args[i];
	remove(report);
	if ((rc = runner_run(&ctx->runner, ctx->probe_exe, args, var->dir, log_path, quiet_ms + 60000, &code,
			     NULL)) < 0)
		goto out;
	if (!cJSON_AddNumberToObject(verify, "probe_exit_code", code)) {
		rc = LL_ENOMEM;
		goto out;
	}
	if (code != 0 || family_read_file(report, PROGRAM_MAX_REPORT, &text, &len) < 0 ||
	    json_parse_object(text, len, 8, ret) < 0) {
		err_clear();
		program_invalid(var, "The debug probe failed (exit code %d%s).", code,
				code == 3 ? ": the program could not be started" : "");
	}
out:
	free(text);
	free(args);
	return rc;
}

/* The program's own ending under the probe: exit 0 for until "exit". */
static int check_run(const struct program_context *ctx, struct program_variant *var, const cJSON *probe,
		     cJSON *verify)
{
	const char *ended = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(probe, "ended"));
	const cJSON *code = cJSON_GetObjectItemCaseSensitive(probe, "exit_code");
	double exit_code = cJSON_IsNumber(code) ? code->valuedouble : -1;

	if (!cJSON_AddStringToObject(verify, "ended", ended ? ended : "?") ||
	    !cJSON_AddNumberToObject(verify, "exit_code", exit_code) ||
	    !cJSON_AddBoolToObject(verify, "first_breakpoint",
				   cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(probe, "first_breakpoint"))))
		return LL_ENOMEM;
	if (ctx->input_idle)
		return 0;
	if (!ended || strcmp(ended, "exit") != 0)
		program_invalid(var, "The program did not exit within %lld s under the debug probe.",
				ctx->timeout_s);
	else if (exit_code != 0)
		program_invalid(var, "The program exited with code %.0f under the debug probe.", exit_code);
	return 0;
}

static int verify_variant(struct program_context *ctx, struct program_variant *var, size_t v)
{
	cJSON *verify = cJSON_CreateObject(), *probe = NULL;
	int rc;

	if (!verify)
		return LL_ENOMEM;
	if (!var->valid) {
		/* The transform could not apply: nothing to run. */
		rc = 0;
		goto done;
	}
	if ((rc = program_files_json(ctx, var->dir, &var->files)) < 0 ||
	    (rc = probe_run(ctx, var, v, verify, &probe)) < 0)
		goto out;
	if (!probe)
		goto done;
	/* The modules first: a DLL from elsewhere is the reason that counts
	 * when it also made the program fail. */
	if ((rc = check_modules(ctx, var, probe, verify)) < 0 ||
	    (rc = check_run(ctx, var, probe, verify)) < 0 || (rc = check_aslr(ctx, var, verify)) < 0 ||
	    (rc = check_binding(ctx, var, verify)) < 0) {
		if (rc != LL_EFORMAT)
			goto out;
		program_invalid(var, "The probe report is malformed: %s", err_message(rc));
		rc = 0;
	}
	if ((rc = program_loader_variant(ctx, var, probe)) < 0)
		goto out;
done:
	var->verify = verify;
	verify = NULL;
out:
	cJSON_Delete(verify);
	cJSON_Delete(probe);
	return rc;
}

int program_verify(struct program_context *ctx)
{
	int rc;

	for (size_t v = 0; v < ctx->variant_count; v++) {
		program_use_build(ctx, ctx->variants[v].build);
		if ((rc = family_progress(ctx->task, "verify", (int)(100 * v / ctx->variant_count))) < 0 ||
		    (rc = verify_variant(ctx, &ctx->variants[v], v)) < 0)
			return rc;
	}
	return family_progress(ctx->task, "verify", 100);
}
