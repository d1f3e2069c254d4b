/*
 * wine.c - the runner (runner.h): Windows programs natively on Windows,
 * under a private Wine session on Linux.
 */
#include "runner/runner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadlab/err.h"
#include "loadlab/log.h"

/* Where Debian's wine 8 keeps the Wine programs and the builtin PE DLLs. */
static const char *const wine_dirs[] = {"/usr/lib/wine", "/usr/lib64/wine", "/opt/wine-stable/bin"};
static const char builtin_dll_dir[] = "/usr/lib/x86_64-linux-gnu/wine/x86_64-windows";

static int join(char *out, const char *a, const char *b)
{
	int n = snprintf(out, PLAT_MAX_PATH + 1, "%s/%s", a, b);
	if (n < 0 || n > (int)PLAT_MAX_PATH)
		return err_set(LL_ETOOBIG, "The path %s/%s is too long.", a, b);
	return 0;
}

static int find_in(const char *name, char *out)
{
	for (size_t i = 0; i < sizeof(wine_dirs) / sizeof(wine_dirs[0]); i++) {
		char path[PLAT_MAX_PATH + 1];
		if (join(path, wine_dirs[i], name) == 0 && plat_file_exists(path) &&
		    strlen(path) < PLAT_MAX_PATH) {
			memcpy(out, path, strlen(path) + 1);
			return 0;
		}
	}
	return plat_find_program(name, out, PLAT_MAX_PATH);
}

/* A Windows agent: programs start natively (under Wine, the same Wine:
 * its prefix and wineserver, not ours, whose loader finds system DLLs
 * first in its builtin folder). */
static void start_native(struct runner *r)
{
	char kernel32[PLAT_MAX_PATH + 1];

	r->wine = plat_under_wine();
	if (r->wine) {
		snprintf(r->system_dirs[0], sizeof(r->system_dirs[0]), "Z:%s", builtin_dll_dir);
		for (char *p = r->system_dirs[0]; *p; p++)
			if (*p == '/')
				*p = '\\';
		if (join(kernel32, r->system_dirs[0], "kernel32.dll") == 0 && plat_file_exists(kernel32))
			r->system_dir_count = 1;
	}
	if (plat_system_dll_dir(r->system_dirs[r->system_dir_count], sizeof(r->system_dirs[0])) == 0)
		r->system_dir_count++;
}

static int server_start(struct runner *r)
{
	const char *argv[] = {r->wineserver, "-f", "-p", NULL};
	struct plat_spawn_options o = {.argv = argv, .env_add = r->env};

	return plat_spawn(&o, &r->server);
}

/* wine64 ARGV[1..] in the prefix; LL_EIO naming WHAT when it exits non-zero. */
static int wine_run(const struct runner *r, const char **argv, long long timeout_ms, const char *what)
{
	struct plat_spawn_options o = {.argv = argv, .env_add = r->env};
	int rc, code = -1;

	argv[0] = r->wine64;
	if ((rc = plat_run(&o, timeout_ms, &code, NULL)) == 0 && code != 0)
		rc = err_set(LL_EIO, "%s exited with %d.", what, code);
	return rc;
}

static int boot(struct runner *r, const char *prefix)
{
	const char *argv[] = {NULL, "wineboot", "-i", NULL};
	int rc = 0;

	/* wineboot fails now and then on a busy machine (its client can race
	 * the server just started): try again, a little later each time. */
	for (r->boot_attempts = 1; r->boot_attempts <= RUNNER_WINEBOOT_ATTEMPTS; r->boot_attempts++) {
		if (r->boot_attempts > 1)
			plat_sleep_ms(500 * r->boot_attempts);
		if ((rc = wine_run(r, argv, 300000, "wineboot")) == 0)
			return 0;
		log_event(LOG_WARN, "wineboot_failed", "prefix", prefix, "message", err_message(rc), NULL);
	}
	r->boot_attempts = RUNNER_WINEBOOT_ATTEMPTS;
	return rc;
}

/* Copies the booted prefix TEMPLATE_PREFIX into PREFIX (runner.h,
 * RUNNER_WINE_TEMPLATE_ENV), before the session's server starts: the
 * server reads the registry files when it starts. */
static int copy_template(const char *template_prefix, const char *prefix)
{
	char cp[PLAT_MAX_PATH + 1], from[PLAT_MAX_PATH + 1];
	const char *argv[] = {cp, "-a", from, prefix, NULL};
	struct plat_spawn_options o = {.argv = argv};
	int rc, code = -1;

	/* Debian's cp first, then PATH's: an agent may run with a PATH
	 * that names no system folder (test_no_compiler's is empty). */
	if (plat_file_exists("/usr/bin/cp"))
		memcpy(cp, "/usr/bin/cp", sizeof("/usr/bin/cp"));
	else if ((rc = plat_find_program("cp", cp, sizeof(cp))) < 0)
		return rc;
	if ((rc = join(from, template_prefix, ".")) < 0)
		return rc;
	if ((rc = plat_run(&o, 300000, &code, NULL)) == 0 && code != 0)
		rc = err_set(LL_EIO, "Copying the Wine prefix %s to %s failed (cp exited with %d).",
			     template_prefix, prefix, code);
	return rc;
}

/* Wine's null display driver: with no X display (a lab machine's agent,
 * a test) Wine has no driver and CreateWindow fails; the null driver
 * keeps every window and message operation in wineserver. The desktop
 * process wineboot started keeps no driver for the session: a new
 * session (server) reads the key. A server killed before it saves its
 * registry loses the key, which runner_stop() avoids; but on a loaded
 * machine every window of a session once failed, as they do without the
 * key, and how it was lost is not known. So the new session reads the
 * key back, and it is written again, up to RUNNER_DISPLAY_ATTEMPTS times. */
static int null_display(struct runner *r, const char *prefix)
{
	const char *add[] = {NULL,   "reg", "add", "HKCU\\Software\\Wine\\Drivers", "/v", "Graphics", "/d",
			     "null", "/f",  NULL};
	const char *query[] = {NULL, "reg", "query", "HKCU\\Software\\Wine\\Drivers", "/v", "Graphics", NULL};
	int rc;

	for (r->display_attempts = 1; r->display_attempts <= RUNNER_DISPLAY_ATTEMPTS; r->display_attempts++) {
		if ((rc = wine_run(r, add, 120000, "wine64 reg add (the null display driver)")) < 0)
			return rc;
		runner_stop(r);
		if ((rc = server_start(r)) < 0)
			return rc;
		if (wine_run(r, query, 120000, "wine64 reg query (the null display driver)") == 0)
			return 0;
		log_event(LOG_WARN, "wine_display_driver_lost", "prefix", prefix, NULL);
	}
	r->display_attempts = RUNNER_DISPLAY_ATTEMPTS;
	return err_set(LL_EIO,
		       "Wine's null display driver was written %d times to %s and was not there when its "
		       "session restarted.",
		       RUNNER_DISPLAY_ATTEMPTS, prefix);
}

int runner_start(struct runner *r, const char *work, bool with_null_display)
{
	char prefix[PLAT_MAX_PATH + 1], system32[PLAT_MAX_PATH + 1];
	const char *template_prefix;
	int rc;

	memset(r, 0, sizeof(*r));
	if (plat_runs_windows_programs()) {
		start_native(r);
		return 0;
	}
	r->wine = true;
	r->through_wine64 = true;
	if (find_in("wine64", r->wine64) < 0 || find_in("wineserver", r->wineserver) < 0)
		return err_set(LL_ENOTFOUND, "Wine (wine64 and wineserver) is not installed.");
	if ((rc = join(prefix, work, "wineprefix")) < 0 || (rc = plat_mkdirs(prefix)) < 0)
		return rc;
	snprintf(r->prefix_env, sizeof(r->prefix_env), "WINEPREFIX=%s", prefix);
	r->env[0] = r->prefix_env;
	r->env[1] = "WINEDEBUG=-all";
	snprintf(r->dll_overrides, sizeof(r->dll_overrides), "WINEDLLOVERRIDES=%s",
		 RUNNER_BASE_DLL_OVERRIDES);
	r->env[2] = r->dll_overrides;
	r->env[3] = NULL;
	template_prefix = getenv(RUNNER_WINE_TEMPLATE_ENV);
	if (template_prefix && !*template_prefix)
		template_prefix = NULL;
	if ((template_prefix && (rc = copy_template(template_prefix, prefix)) < 0) ||
	    (rc = server_start(r)) < 0)
		return rc;
	if ((!template_prefix && (rc = boot(r, prefix)) < 0) ||
	    (with_null_display && (rc = null_display(r, prefix)) < 0)) {
		runner_stop(r);
		return rc;
	}
	/* The loader finds system DLLs in its builtin folder (real PE files)
	 * and the prefix's system32 (placeholders that name the builtins). */
	memcpy(r->system_dirs[0], builtin_dll_dir, sizeof(builtin_dll_dir));
	r->system_dir_count = 1;
	if (join(system32, prefix, "drive_c/windows/system32") == 0 && strlen(system32) < PLAT_MAX_PATH) {
		memcpy(r->system_dirs[1], system32, strlen(system32) + 1);
		r->system_dir_count = 2;
	}
	log_event(LOG_DEBUG, "wine_started", "prefix", prefix, "template_prefix",
		  template_prefix ? template_prefix : "", NULL);
	return 0;
}

int runner_run(const struct runner *r, const char *exe, const char *const *args, const char *cwd,
	       const char *output_path, long long timeout_ms, int *ret_exit_code, long long *ret_wall_us)
{
	const char *argv[16];
	size_t n = 0;
	struct plat_spawn_options o = {0};

	if (r->through_wine64)
		argv[n++] = r->wine64;
	argv[n++] = exe;
	for (size_t i = 0; args && args[i]; i++) {
		if (n + 2 > sizeof(argv) / sizeof(argv[0]))
			return err_set(LL_ETOOBIG, "Too many arguments for a generated program.");
		argv[n++] = args[i];
	}
	argv[n] = NULL;
	o.argv = argv;
	o.env_add = r->env;
	o.cwd = cwd;
	o.stdout_path = output_path;
	o.stderr_path = output_path;
	return plat_run(&o, timeout_ms, ret_exit_code, ret_wall_us);
}

int runner_dll_overrides_set(struct runner *r, const char *entries, const char **ret_value)
{
	static const char key[] = "WINEDLLOVERRIDES=";
	char value[RUNNER_MAX_DLL_OVERRIDES];
	int n;

	if (!r->through_wine64) {
		/* Natively there is no such variable; a Windows agent under
		 * Wine cannot pass it on (runner.h). */
		*ret_value = NULL;
		return 0;
	}
	n = snprintf(value, sizeof(value), "%s%s%s%s", key, RUNNER_BASE_DLL_OVERRIDES, *entries ? ";" : "",
		     entries);
	if (n < 0 || (size_t)n >= sizeof(value))
		return err_set(LL_ETOOBIG, "The DLL overrides would take %d characters, more than %u.", n,
			       RUNNER_MAX_DLL_OVERRIDES - 1);
	memcpy(r->dll_overrides, value, (size_t)n + 1);
	*ret_value = r->dll_overrides + sizeof(key) - 1;
	return 0;
}

long long runner_server_pid(const struct runner *r)
{
	return r->server ? plat_process_id(r->server) : 0;
}

void runner_stop(struct runner *r)
{
	runner_dll_registry_restore(r);
	if (!r->server)
		return;
	/* `wineserver -k` in our prefix has our server end every process of
	 * this prefix (wineboot leaves services.exe, winedevice.exe and
	 * plugplay.exe running, which outlive a server that is merely
	 * signalled); the server saves its registry 2 s later and exits. The
	 * -k client SIGKILLs a server that still runs 10.5 s on, which loses
	 * the registry (Wine's kill_lock_owner()), so the client is ended
	 * first, after RUNNER_KILL_CLIENT_MS. Then our server, by its PID:
	 * SIGTERM (on which it saves its registry and exits), SIGKILL only
	 * RUNNER_SERVER_TERM_GRACE_MS later. */
	const char *argv[] = {r->wineserver, "-k", NULL};
	struct plat_spawn_options o = {.argv = argv, .env_add = r->env};
	plat_run(&o, RUNNER_KILL_CLIENT_MS, NULL, NULL);
	if (plat_wait(r->server, 5000, NULL, NULL) < 0)
		plat_terminate(r->server, RUNNER_SERVER_TERM_GRACE_MS);
	plat_process_free(r->server);
	r->server = NULL;
}

int runner_program_path(const struct runner *r, const char *path, char *out)
{
	if (strlen(path) + 3 > PLAT_MAX_PATH)
		return err_set(LL_ETOOBIG, "The path %s is too long.", path);
	if (!r->through_wine64) {
		memcpy(out, path, strlen(path) + 1);
		return 0;
	}
	snprintf(out, PLAT_MAX_PATH + 1, "Z:%s", path);
	for (char *p = out; *p; p++)
		if (*p == '/')
			*p = '\\';
	return 0;
}
