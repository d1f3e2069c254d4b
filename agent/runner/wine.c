/*
 * pe_runner.c - runs generated Windows programs: natively on Windows, and
 * on Linux under Wine with a private WINEPREFIX (below the task's work
 * folder), WINEDEBUG=-all and one persistent wineserver ("-f -p": in the
 * foreground, so the PID we hold is the server's) started here and
 * stopped by that PID. A program's output is read from a file: under
 * Wine a pipe would tie the program's exit to whoever drains it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadlab/err.h"
#include "loadlab/log.h"
#include "family/pe/pe_family.h"

/* Where Debian's wine 8 keeps the Wine programs and the builtin PE DLLs. */
static const char *const wine_dirs[] = {"/usr/lib/wine", "/usr/lib64/wine", "/opt/wine-stable/bin"};
static const char builtin_dll_dir[] = "/usr/lib/x86_64-linux-gnu/wine/x86_64-windows";

static int find_in(const char *name, char *out)
{
	for (size_t i = 0; i < sizeof(wine_dirs) / sizeof(wine_dirs[0]); i++) {
		char path[PLAT_MAX_PATH + 1];
		if (pe_path(path, wine_dirs[i], name) == 0 && plat_file_exists(path)) {
			memcpy(out, path, strlen(path) + 1);
			return 0;
		}
	}
	return plat_find_program(name, out, PLAT_MAX_PATH);
}

int pe_runner_start(struct pe_runner *runner, const char *work)
{
	char prefix[PLAT_MAX_PATH + 1], system32[PLAT_MAX_PATH + 1];
	const char *boot[] = {NULL, "wineboot", "-i", NULL};
	const char *server_argv[] = {NULL, "-f", "-p", NULL};
	struct plat_spawn_options o = {0};
	struct pe_runner r;
	int rc, code = 0;

	memset(&r, 0, sizeof(r));
	if (plat_runs_windows_programs()) {
		/* A Windows agent under Wine: the programs run under the same
		 * Wine (its prefix and wineserver, not ours), whose loader finds
		 * system DLLs first in its builtin folder, as below. */
		char kernel32[PLAT_MAX_PATH + 1];
		r.wine = plat_under_wine();
		if (r.wine) {
			snprintf(r.system_dirs[0], sizeof(r.system_dirs[0]), "Z:%s", builtin_dll_dir);
			for (char *p = r.system_dirs[0]; *p; p++)
				if (*p == '/')
					*p = '\\';
			if (pe_path(kernel32, r.system_dirs[0], "kernel32.dll") == 0 &&
			    plat_file_exists(kernel32))
				r.system_dir_count = 1;
		}
		if (plat_system_dll_dir(r.system_dirs[r.system_dir_count],
					sizeof(r.system_dirs[0])) == 0)
			r.system_dir_count++;
		*runner = r;
		return 0;
	}
	r.wine = true;
	r.through_wine64 = true;
	if (find_in("wine64", r.wine64) < 0 || find_in("wineserver", r.wineserver) < 0)
		return err_set(LL_ENOTFOUND, "Wine (wine64 and wineserver) is not installed.");
	if ((rc = pe_path(prefix, work, "wineprefix")) < 0 || (rc = plat_mkdirs(prefix)) < 0)
		return rc;
	snprintf(r.prefix_env, sizeof(r.prefix_env), "WINEPREFIX=%s", prefix);
	r.env[0] = r.prefix_env;
	r.env[1] = "WINEDEBUG=-all";
	/* No Mono or Gecko installer dialogs while the prefix boots. */
	r.env[2] = "WINEDLLOVERRIDES=mscoree,mshtml=";
	r.env[3] = NULL;
	server_argv[0] = r.wineserver;
	o.argv = server_argv;
	o.env_add = r.env;
	if ((rc = plat_spawn(&o, &r.server)) < 0)
		return rc;
	boot[0] = r.wine64;
	o.argv = boot;
	/* wineboot fails now and then on a busy machine (its client can race
	 * the server we just started): try up to three times. */
	for (int attempt = 1; attempt <= 3; attempt++) {
		if (attempt > 1)
			plat_sleep_ms(500 * attempt);
		rc = plat_run(&o, 300000, &code, NULL);
		if (rc == 0 && code == 0)
			break;
		if (rc == 0)
			rc = err_set(LL_EIO, "wineboot exited with %d (attempt %d of 3).", code, attempt);
		log_event(LOG_WARN, "wineboot_failed", "prefix", prefix, "message", err_message(rc), NULL);
	}
	if (rc < 0) {
		plat_kill(r.server);
		plat_process_free(r.server);
		return rc;
	}
	/* The loader finds system DLLs in its builtin folder (real PE files)
	 * and the prefix's system32 (placeholders that name the builtins). */
	memcpy(r.system_dirs[0], builtin_dll_dir, sizeof(builtin_dll_dir));
	r.system_dir_count = 1;
	if (pe_path(system32, prefix, "drive_c/windows/system32") == 0) {
		memcpy(r.system_dirs[1], system32, strlen(system32) + 1);
		r.system_dir_count = 2;
	}
	*runner = r;
	runner->env[0] = runner->prefix_env; /* point into the copy */
	log_event(LOG_DEBUG, "wine_started", "prefix", prefix, NULL);
	return 0;
}

int pe_runner_run(struct pe_runner *runner, const char *exe, const char *const *args,
		  const char *cwd, const char *output_path, int *ret_exit_code, long long *ret_wall_us)
{
	const char *argv[16];
	size_t n = 0;
	struct plat_spawn_options o = {0};

	if (runner->through_wine64)
		argv[n++] = runner->wine64;
	argv[n++] = exe;
	for (size_t i = 0; args && args[i]; i++) {
		if (n + 2 > sizeof(argv) / sizeof(argv[0]))
			return err_set(LL_ETOOBIG, "Too many arguments for a generated program.");
		argv[n++] = args[i];
	}
	argv[n] = NULL;
	o.argv = argv;
	o.env_add = runner->through_wine64 ? runner->env : NULL;
	o.cwd = cwd;
	o.stdout_path = output_path;
	o.stderr_path = output_path;
	return plat_run(&o, PE_RUN_TIMEOUT_MS, ret_exit_code, ret_wall_us);
}

void pe_runner_stop(struct pe_runner *runner)
{
	if (!runner->server)
		return;
	/* `wineserver -k` in our prefix has our server end every process of
	 * this prefix (wineboot leaves services.exe, winedevice.exe and
	 * plugplay.exe running, which outlive a server that is merely
	 * signalled); then our server, by its PID: SIGTERM, SIGKILL after 5 s. */
	const char *argv[] = {runner->wineserver, "-k", NULL};
	struct plat_spawn_options o = {.argv = argv, .env_add = runner->env};
	plat_run(&o, 10000, NULL, NULL);
	if (plat_wait(runner->server, 5000, NULL, NULL) < 0)
		plat_terminate(runner->server, 5000);
	plat_process_free(runner->server);
	runner->server = NULL;
}
