/*
 * churn.c - the process-churn test (churn.h): the Linux analog through
 * plat_churn.h, the Windows churn as two programs that ship inside the
 * agent (churn_parent.exe and churn_child.exe, programs/programs.h),
 * written into the work folder and run by the runner (runner/runner.h),
 * under Wine on Linux.
 */
#include "churn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadlab/buf.h"
#include "loadlab/err.h"
#include "loadlab/json.h"
#include "loadlab/log.h"
#include "loadlab/plat.h"
#include "measure/plat_churn.h"
#include "programs/programs.h"
#include "runner/runner.h"

/* Memory a churn process is assumed to cost, for the wave cap: the Linux
 * analog's child (this agent with its shared libraries, mostly shared
 * pages), and a Windows child (under Wine a whole Wine process). */
#define LINUX_CHILD_BYTES (4ll << 20)
#define WINDOWS_CHILD_BYTES (16ll << 20)
/* Largest figures file read back from churn_parent.exe. */
#define PARENT_REPORT_LIMIT (1u << 20)
/* How often the Windows probe calls into the window manager. */
#define PROBE_INTERVAL_MS 10

static const char *const dll_sets[] = {"none", "user32", "user32+gdi32", "generated", NULL};

static const char wine_note[] =
	"Under Wine the probe's blocked times reflect Wine's wineserver and window-station "
	"implementation, not Windows' win32k lock; creation and destruction are Wine's too.";

/* Everything one or more runs share: the children's program and, for the
 * Windows churn, the programs written out and the Wine prefix. */
struct churn_env {
	bool windows;        /* the Windows churn (the agent's Windows programs) */
	bool through_wine64; /* ... run on Linux by wine64 */
	char work[PLAT_MAX_PATH + 1];
	char self[PLAT_MAX_PATH + 1]; /* Linux analog: this agent */
	int wave_cap;
	char wave_cap_reason[160];
	/* Windows churn */
	char parent_exe[PLAT_MAX_PATH + 1];
	char child_exe[PLAT_MAX_PATH + 1];
	const struct agent_program *parent, *child; /* what was written there */
	/* where they run: natively, or a Wine session */
	struct runner runner;
};

/* ---- helpers ---- */

static int join_path(char *out, const char *a, const char *b)
{
	int n = snprintf(out, PLAT_MAX_PATH + 1, "%s/%s", a, b);
	if (n < 0 || n > (int)PLAT_MAX_PATH)
		return err_set(LL_ETOOBIG, "The path %s/%s is too long.", a, b);
	return 0;
}

/* The file at PATH (at most LIMIT bytes), NUL-terminated; the caller frees it. */
static int read_text(const char *path, size_t limit, char **ret_text, size_t *ret_len)
{
	FILE *f = fopen(path, "rb");
	char *text;
	size_t len;

	if (!f)
		return err_set(LL_EIO, "Cannot open %s.", path);
	if (!(text = malloc(limit + 1))) {
		fclose(f);
		return err_set(LL_ENOMEM, "Out of memory.");
	}
	len = fread(text, 1, limit + 1, f);
	fclose(f);
	if (len > limit) {
		free(text);
		return err_set(LL_ETOOBIG, "%s is larger than %zu bytes.", path, limit);
	}
	text[len] = '\0';
	*ret_text = text;
	*ret_len = len;
	return 0;
}

/* The first line of the file at PATH, for an error message. */
static void first_line(const char *path, char *out, size_t size)
{
	FILE *f = fopen(path, "rb");

	out[0] = '\0';
	if (!f)
		return;
	if (!fgets(out, (int)size, f))
		out[0] = '\0';
	fclose(f);
	out[strcspn(out, "\r\n")] = '\0';
}

static size_t count_libs(const char *const *libs)
{
	size_t n = 0;
	while (libs && libs[n])
		n++;
	return n;
}

static bool windows_programs(const struct churn_options *o)
{
	return plat_runs_windows_programs() || o->wine;
}

static int check_set(const struct churn_options *o, const char *set)
{
	size_t libs = count_libs(o->generated_libs);
	bool known = false;

	for (size_t i = 0; dll_sets[i]; i++)
		if (set && strcmp(set, dll_sets[i]) == 0)
			known = true;
	if (!known)
		return err_set(LL_EINVAL, "Unknown DLL set '%s' (none, user32, user32+gdi32 or generated).",
			       set ? set : "(null)");
	if (strcmp(set, "generated") == 0 && libs == 0)
		return err_set(LL_EINVAL, "The DLL set 'generated' needs the libraries to load.");
	if (strncmp(set, "user32", 6) == 0 && !windows_programs(o))
		return err_set(LL_EUNSUPPORTED,
			       "The DLL set '%s' needs Windows programs: run on Windows or under Wine.", set);
	return 0;
}

/* Everything but the set. */
static int check_common(const struct churn_options *o)
{
	size_t libs = count_libs(o->generated_libs);

	if (o->processes < 1 || o->processes > CHURN_MAX_PROCESSES)
		return err_set(LL_ERANGE, "The process count must be 1..%d, not %d.", CHURN_MAX_PROCESSES,
			       o->processes);
	if (libs > CHURN_MAX_LIBS)
		return err_set(LL_ETOOBIG, "At most %d generated libraries, not %zu.", CHURN_MAX_LIBS, libs);
	for (size_t i = 0; i < libs; i++)
		if (!*o->generated_libs[i] || strlen(o->generated_libs[i]) > PLAT_MAX_PATH / 2 ||
		    strchr(o->generated_libs[i], '"'))
			return err_set(LL_EINVAL, "Unusable library path '%s'.", o->generated_libs[i]);
	if (o->timeout_ms < 0)
		return err_set(LL_ERANGE, "The timeout must not be negative.");
	if (!o->work_dir || !*o->work_dir)
		return err_set(LL_EINVAL, "Churn needs a work folder.");
	return 0;
}

int churn_options_check(const struct churn_options *o)
{
	int rc = check_common(o);
	return rc < 0 ? rc : check_set(o, o->dll_set);
}

static bool cancelled(const struct churn_options *o, int percent)
{
	return o->progress && o->progress(o->progress_ctx, percent < 0 ? 0 : percent > 100 ? 100 : percent);
}

/* ---- the Windows programs ---- */

/* churn_child.exe and churn_parent.exe, as this agent carries them, into
 * the work folder (each checked against its recorded SHA-256). */
static int write_windows_programs(struct churn_env *env)
{
	int rc;

	if ((rc = join_path(env->child_exe, env->work, "churn_child.exe")) < 0 ||
	    (rc = agent_program_install("churn_child.exe", env->child_exe, &env->child)) < 0 ||
	    (rc = join_path(env->parent_exe, env->work, "churn_parent.exe")) < 0 ||
	    (rc = agent_program_install("churn_parent.exe", env->parent_exe, &env->parent)) < 0)
		return rc;
	return 0;
}

/* ---- the environment ---- */

static void env_release(struct churn_env *env)
{
	runner_stop(&env->runner);
}

static int env_setup(const struct churn_options *o, struct churn_env *env)
{
	int rc;

	memset(env, 0, sizeof(*env));
	env->windows = windows_programs(o);
	env->through_wine64 = env->windows && !plat_runs_windows_programs();
	if ((rc = plat_mkdirs(o->work_dir)) < 0 ||
	    (rc = plat_churn_absolute_path(o->work_dir, env->work, sizeof(env->work))) < 0)
		return rc;
	env->wave_cap = plat_churn_wave_cap(env->windows ? WINDOWS_CHILD_BYTES : LINUX_CHILD_BYTES,
					    env->wave_cap_reason, sizeof(env->wave_cap_reason));
	if (!env->windows)
		return plat_churn_self_path(env->self, sizeof(env->self));
	/* The runner first: the programs' paths are in its form. */
	if ((rc = runner_start(&env->runner, env->work, true)) < 0)
		return rc;
	return write_windows_programs(env);
}

/* ---- one run ---- */

static const char *const *set_libraries(const struct churn_options *o, const char *set)
{
	static const char *const none[] = {NULL};
	static const char *const user32[] = {"user32.dll", NULL};
	static const char *const user32_gdi32[] = {"user32.dll", "gdi32.dll", NULL};

	if (strcmp(set, "user32") == 0)
		return user32;
	if (strcmp(set, "user32+gdi32") == 0)
		return user32_gdi32;
	if (strcmp(set, "generated") == 0)
		return o->generated_libs;
	return none;
}

static long long phase_timeout(const struct churn_options *o)
{
	return o->timeout_ms > 0 ? o->timeout_ms : CHURN_DEFAULT_TIMEOUT_MS;
}

/* The libraries of SET as the children get them: absolute paths for
 * generated ones (Z:\ form under wine64), names for system DLLs. Each
 * entry of OUT is a malloc'd string; OUT ends with NULL. */
static int child_libraries(const struct churn_env *env, const struct churn_options *o, const char *set,
			   char **out)
{
	const char *const *libs = set_libraries(o, set);
	bool generated = strcmp(set, "generated") == 0;
	size_t i;
	int rc = 0;

	for (i = 0; libs[i]; i++) {
		char full[PLAT_MAX_PATH + 1], path[PLAT_MAX_PATH + 1];
		if (generated) {
			if ((rc = plat_churn_absolute_path(libs[i], full, sizeof(full))) < 0 ||
			    (rc = runner_program_path(&env->runner, full, path)) < 0)
				break;
		} else {
			snprintf(path, sizeof(path), "%s", libs[i]);
		}
		if (!(out[i] = strdup(path))) {
			rc = err_set(LL_ENOMEM, "Out of memory.");
			break;
		}
	}
	out[i] = NULL;
	return rc;
}

static void free_libraries(char **libs)
{
	for (size_t i = 0; libs[i]; i++)
		free(libs[i]);
}

static cJSON *library_array(char *const *libs)
{
	cJSON *a = cJSON_CreateArray();
	for (size_t i = 0; a && libs[i]; i++)
		cJSON_AddItemToArray(a, cJSON_CreateString(libs[i]));
	return a;
}

static int run_linux(const struct churn_env *env, const struct churn_options *o, const char *set, char **libs,
		     int percent_from, int percent_to, cJSON *result)
{
	const char *argv[CHURN_MAX_LIBS + 4];
	long long create_us = 0, destroy_us = 0, timeout = phase_timeout(o);
	int done = 0, waves = 0, n = 0, rc;
	cJSON *method, *probe;

	argv[n++] = env->self;
	argv[n++] = "churn";
	argv[n++] = "--child";
	for (size_t i = 0; libs[i]; i++)
		argv[n++] = libs[i];
	argv[n] = NULL;
	while (done < o->processes) {
		struct plat_churn_wave w;
		int count = o->processes - done < env->wave_cap ? o->processes - done : env->wave_cap;
		if (cancelled(o, percent_from + (percent_to - percent_from) * done / o->processes))
			return err_set(LL_ESTATE, "The churn test was cancelled.");
		if ((rc = plat_churn_wave_run(argv, count, timeout, &w)) < 0)
			return rc;
		create_us += w.create_us;
		destroy_us += w.destroy_us;
		done += count;
		waves++;
	}
	cJSON_AddNumberToObject(result, "create_us", (double)create_us);
	cJSON_AddNumberToObject(result, "destroy_us", (double)destroy_us);
	cJSON_AddNumberToObject(result, "waves", waves);
	cJSON_AddNumberToObject(result, "wave_size",
				env->wave_cap < o->processes ? env->wave_cap : o->processes);
	cJSON_AddStringToObject(result, "blocked", "not measured on this platform");
	probe = cJSON_AddObjectToObject(result, "probe");
	cJSON_AddBoolToObject(probe, "measured", false);
	cJSON_AddStringToObject(probe, "reason", "Linux has no window-manager lock that process exit takes.");
	method = cJSON_AddObjectToObject(result, "method");
	cJSON_AddStringToObject(method, "platform", "linux");
	cJSON_AddStringToObject(method, "runner", "native");
	cJSON_AddStringToObject(method, "child",
				"this agent re-executed as `loadlab-agent churn --child`: its own "
				"shared libraries load in every set, the set's are dlopen()ed (RTLD_NOW)");
	cJSON_AddStringToObject(method, "spawn", "posix_spawn");
	cJSON_AddStringToObject(method, "timer", "CLOCK_MONOTONIC");
	cJSON_AddStringToObject(method, "create",
				"from just before the first spawn until every child wrote its ready byte "
				"to a shared pipe");
	cJSON_AddStringToObject(method, "destroy",
				"from just before the parent closed the go pipe (its end of file wakes "
				"every child, which exits 0) until every child was reaped");
	cJSON_AddItemToObject(method, "libraries", library_array(libs));
	return 0;
}

/* Copies a number member KEY of FROM to TO; LL_EFORMAT when missing. */
static int copy_number(const cJSON *from, const char *key, cJSON *to, const char *to_key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(from, key);
	if (!cJSON_IsNumber(v) || v->valuedouble < 0)
		return err_set(LL_EFORMAT, "churn_parent.exe reported no '%s'.", key);
	cJSON_AddNumberToObject(to, to_key, v->valuedouble);
	return 0;
}

static int run_windows(const struct churn_env *env, const struct churn_options *o, const char *set,
		       char **libs, int percent_from, cJSON *result)
{
	char out[PLAT_MAX_PATH + 1], out_arg[PLAT_MAX_PATH + 1], child_arg[PLAT_MAX_PATH + 1];
	char log[PLAT_MAX_PATH + 1], name[64], processes[16], wave[16], timeout[24], interval[16];
	char line[400], *text = NULL;
	const char *argv[CHURN_MAX_LIBS + 12];
	struct plat_spawn_options so = {0};
	long long phase_ms = phase_timeout(o);
	int wave_size = env->wave_cap < o->processes ? env->wave_cap : o->processes;
	int waves = (o->processes + wave_size - 1) / wave_size, n = 0, code = -1, rc;
	size_t len = 0;
	cJSON *report = NULL, *method, *probe, *programs;
	const cJSON *destroy, *error;

	snprintf(name, sizeof(name), "churn_%s.json", set);
	if ((rc = join_path(out, env->work, name)) < 0)
		return rc;
	snprintf(name, sizeof(name), "churn_%s.log", set);
	if ((rc = join_path(log, env->work, name)) < 0 ||
	    (rc = runner_program_path(&env->runner, out, out_arg)) < 0 ||
	    (rc = runner_program_path(&env->runner, env->child_exe, child_arg)) < 0)
		return rc;
	remove(out);
	snprintf(processes, sizeof(processes), "%d", o->processes);
	snprintf(wave, sizeof(wave), "%d", wave_size);
	snprintf(timeout, sizeof(timeout), "%lld", phase_ms);
	snprintf(interval, sizeof(interval), "%d", PROBE_INTERVAL_MS);
	if (env->through_wine64)
		argv[n++] = env->runner.wine64;
	argv[n++] = env->parent_exe;
	argv[n++] = out_arg;
	argv[n++] = child_arg;
	argv[n++] = processes;
	argv[n++] = wave;
	argv[n++] = timeout;
	argv[n++] = interval;
	for (size_t i = 0; libs[i]; i++)
		argv[n++] = libs[i];
	argv[n] = NULL;
	so.argv = argv;
	so.env_add = env->through_wine64 ? env->runner.env : NULL;
	so.cwd = env->work;
	so.stdout_path = log;
	so.stderr_path = log;
	if (cancelled(o, percent_from))
		return err_set(LL_ESTATE, "The churn test was cancelled.");
	/* Two phases per wave, plus the parent's own start and its cleanup. */
	rc = plat_run(&so, (long long)waves * 2 * phase_ms + 60000, &code, NULL);
	if (rc < 0)
		return rc;
	if (read_text(out, PARENT_REPORT_LIMIT, &text, &len) < 0 ||
	    json_parse_object(text, len, 8, &report) < 0) {
		first_line(log, line, sizeof(line));
		rc = err_set(LL_EIO, "churn_parent.exe exited with %d and no figures%s%s", code,
			     *line ? ": " : ".", line);
		goto out;
	}
	error = cJSON_GetObjectItemCaseSensitive(report, "error");
	if (code != 0 || cJSON_IsString(error)) {
		rc = err_set(LL_EIO, "churn_parent.exe failed (exit %d): %s.", code,
			     cJSON_IsString(error) ? error->valuestring : "no reason given");
		goto out;
	}
	probe = cJSON_GetObjectItemCaseSensitive(report, "probe");
	destroy = cJSON_GetObjectItemCaseSensitive(probe, "destroy");
	if ((rc = copy_number(report, "create_us", result, "create_us")) < 0 ||
	    (rc = copy_number(report, "destroy_us", result, "destroy_us")) < 0 ||
	    (rc = copy_number(report, "waves", result, "waves")) < 0 ||
	    (rc = copy_number(report, "wave_size", result, "wave_size")) < 0 ||
	    (rc = copy_number(report, "start_retries", result, "start_retries")) < 0 ||
	    (rc = copy_number(report, "start_error", result, "start_error")) < 0 ||
	    (rc = copy_number(destroy, "blocked_total_ms", result, "blocked_total_ms")) < 0 ||
	    (rc = copy_number(destroy, "blocked_max_ms", result, "blocked_max_ms")) < 0)
		goto out;
	cJSON_DetachItemViaPointer(report, probe);
	cJSON_AddStringToObject(probe, "call",
				cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(probe, "window"))
					? "PeekMessage(PM_REMOVE) on the probe thread's own hidden window"
					: "PeekMessage(PM_REMOVE) on the probe thread's queue (no window "
					  "could be created)");
	cJSON_AddStringToObject(probe, "blocked",
				"time spent in the call, timed with QueryPerformanceCounter; the "
				"result's blocked_* figures are the destroy phase's");
	cJSON_AddItemToObject(result, "probe", probe);
	method = cJSON_AddObjectToObject(result, "method");
	cJSON_AddStringToObject(method, "platform",
				env->through_wine64 || plat_under_wine() ? "wine" : "windows");
	cJSON_AddStringToObject(method, "runner",
				env->through_wine64 || plat_under_wine() ? "wine" : "native");
	cJSON_AddStringToObject(method, "child",
				"churn_child.exe (shipped inside the agent, built with it by mingw-w64; "
				"imports kernel32 and the C runtime only): LoadLibrary of each library of "
				"the set");
	programs = cJSON_AddArrayToObject(method, "programs");
	cJSON_AddItemToArray(programs, agent_program_json(env->parent));
	cJSON_AddItemToArray(programs, agent_program_json(env->child));
	cJSON_AddStringToObject(method, "spawn", "CreateProcess");
	cJSON_AddStringToObject(method, "timer", "QueryPerformanceCounter");
	cJSON_AddItemToObject(
		method, "timer_frequency_hz",
		cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(report, "timer_frequency_hz"), true));
	cJSON_AddStringToObject(method, "create",
				"from just before the first CreateProcess until every child released "
				"the shared ready semaphore");
	cJSON_AddStringToObject(method, "destroy",
				"from just before SetEvent on the shared manual-reset event until every "
				"child process was signalled (WaitForMultipleObjects, 64 at a time)");
	cJSON_AddItemToObject(method, "libraries", library_array(libs));
	if (env->through_wine64 || plat_under_wine())
		cJSON_AddStringToObject(method, "note", wine_note);
	rc = 0;
out:
	cJSON_Delete(report);
	free(text);
	return rc;
}

static int run_set(const struct churn_env *env, const struct churn_options *o, const char *set,
		   int percent_from, int percent_to, cJSON **ret)
{
	char *libs[CHURN_MAX_LIBS + 1];
	cJSON *result = cJSON_CreateObject(), *method;
	int rc;

	libs[0] = NULL;
	if (!result)
		return err_set(LL_ENOMEM, "Out of memory.");
	cJSON_AddStringToObject(result, "dll_set", set);
	cJSON_AddNumberToObject(result, "processes", o->processes);
	if ((rc = child_libraries(env, o, set, libs)) < 0)
		goto out;
	rc = env->windows ? run_windows(env, o, set, libs, percent_from, result)
			  : run_linux(env, o, set, libs, percent_from, percent_to, result);
	if (rc < 0)
		goto out;
	method = cJSON_GetObjectItemCaseSensitive(result, "method");
	cJSON_AddNumberToObject(method, "wave_cap", env->wave_cap);
	cJSON_AddStringToObject(method, "wave_cap_reason", env->wave_cap_reason);
	cJSON_AddNumberToObject(method, "timeout_ms_per_phase", (double)phase_timeout(o));
	if (env->windows && env->through_wine64) {
		cJSON_AddNumberToObject(method, "wineboot_attempts", env->runner.boot_attempts);
		cJSON_AddStringToObject(method, "wine_display_driver", "null");
		cJSON_AddNumberToObject(method, "wine_display_attempts", env->runner.display_attempts);
	}
	log_event(LOG_DEBUG, "churn_done", "dll_set", set, NULL);
	*ret = result;
	result = NULL;
out:
	free_libraries(libs);
	cJSON_Delete(result);
	return rc;
}

int churn_run_sets(const struct churn_options *o, const char *const *sets, cJSON **ret_array)
{
	struct churn_env *env = NULL;
	cJSON *array = NULL;
	size_t count = count_libs(sets);
	int rc;

	if ((rc = check_common(o)) < 0)
		return rc;
	if (count == 0)
		return err_set(LL_EINVAL, "No DLL set to run.");
	for (size_t i = 0; i < count; i++)
		if ((rc = check_set(o, sets[i])) < 0)
			return rc;
	if (!(env = malloc(sizeof(*env))) || !(array = cJSON_CreateArray())) {
		free(env);
		return err_set(LL_ENOMEM, "Out of memory.");
	}
	if (cancelled(o, 0)) {
		rc = err_set(LL_ESTATE, "The churn test was cancelled.");
		memset(env, 0, sizeof(*env));
		goto out;
	}
	if ((rc = env_setup(o, env)) < 0)
		goto out;
	for (size_t i = 0; i < count; i++) {
		cJSON *one = NULL;
		int from = (int)(100 * i / count), to = (int)(100 * (i + 1) / count);
		if ((rc = run_set(env, o, sets[i], from, to, &one)) < 0)
			goto out;
		cJSON_AddItemToArray(array, one);
	}
	cancelled(o, 100);
	*ret_array = array;
	array = NULL;
	rc = 0;
out:
	env_release(env);
	free(env);
	cJSON_Delete(array);
	return rc;
}

int churn_run(const struct churn_options *o, cJSON **ret)
{
	const char *sets[] = {o->dll_set, NULL};
	cJSON *array = NULL;
	int rc;

	if (!o->dll_set)
		return err_set(LL_EINVAL, "No DLL set to run.");
	if ((rc = churn_run_sets(o, sets, &array)) < 0)
		return rc;
	*ret = cJSON_DetachItemFromArray(array, 0);
	cJSON_Delete(array);
	return 0;
}

int churn_child_main(int argc, char **argv)
{
	if (argc > CHURN_MAX_LIBS)
		return 2;
	return plat_churn_child((const char *const *)argv, argc);
}
