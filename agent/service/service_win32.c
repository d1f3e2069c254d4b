/*
 * service_win32.c - service.h on Windows: the Service Control Manager's
 * contract (Win32 "Service Programs"; XP-class and later: nothing here is
 * newer than Windows 2000).
 *
 * The process's main thread sits in StartServiceCtrlDispatcher(), which
 * runs the control handler; it must never be blocked. ServiceMain runs on
 * the dispatcher's second thread: it starts the fleet member on a third
 * thread and waits for it, reporting STOP_PENDING with a new checkpoint
 * every second once a stop was asked for, so the Service Control Manager
 * sees progress however long the task in hand takes to finish or be given
 * back. ServiceMain reports STOPPED only after the member returned, and
 * returns right after: the process may be ended from then on.
 */
#ifdef _WIN32
#include "service/service.h"

#include "fleet/fleet.h"
#include "loadlab/plat_spawn_win32.h"
#include "update/update.h"

#include "loadlab/err.h"
#include "loadlab/log.h"
#include "loadlab/plat.h"

#include <windows.h>
#include <io.h>
#include <stdio.h>
#include <string.h>

/* What a stopping service tells the Service Control Manager to allow
 * between two checkpoints (a new one comes every second). */
#define STOP_WAIT_HINT_MS 30000
/* How long uninstall waits for a running service to stop. */
#define UNINSTALL_STOP_WAIT_MS 60000

/* The run's state, shared by the dispatcher's threads. */
static const char *run_name;
static service_work_fn *run_work; /* the fleet member */
static int run_argc;
static char **run_argv;
static int run_exit_code;
static SERVICE_STATUS_HANDLE status_handle;
static SERVICE_STATUS status;
static CRITICAL_SECTION status_lock;

/* Reports STATE; a pending state gets the next checkpoint. EXIT_CODE, for
 * STOPPED, is the agent's own exit code (a service-specific error when
 * not 0). */
static void report_status(DWORD state, int exit_code, DWORD wait_hint)
{
	EnterCriticalSection(&status_lock);
	status.dwServiceType = SERVICE_WIN32_OWN_PROCESS;
	status.dwCurrentState = state;
	status.dwControlsAccepted =
		state == SERVICE_RUNNING ? SERVICE_ACCEPT_STOP | SERVICE_ACCEPT_SHUTDOWN : 0;
	status.dwWin32ExitCode = exit_code ? ERROR_SERVICE_SPECIFIC_ERROR : NO_ERROR;
	status.dwServiceSpecificExitCode = (DWORD)exit_code;
	status.dwCheckPoint =
		state == SERVICE_START_PENDING || state == SERVICE_STOP_PENDING ? status.dwCheckPoint + 1 : 0;
	status.dwWaitHint = wait_hint;
	SetServiceStatus(status_handle, &status);
	LeaveCriticalSection(&status_lock);
}

/* On the dispatcher's (the main) thread: sets the stop flag and returns
 * at once; ServiceMain's loop does the rest. */
static DWORD WINAPI on_control(DWORD control, DWORD type, LPVOID data, LPVOID context)
{
	(void)type, (void)data, (void)context;
	switch (control) {
	case SERVICE_CONTROL_STOP:
	case SERVICE_CONTROL_SHUTDOWN:
		log_event(LOG_INFO, "service_stop_requested", "control",
			  control == SERVICE_CONTROL_STOP ? "stop" : "shutdown", NULL);
		plat_request_stop();
		report_status(SERVICE_STOP_PENDING, 0, STOP_WAIT_HINT_MS);
		return NO_ERROR;
	case SERVICE_CONTROL_INTERROGATE:
		return NO_ERROR;
	default:
		return ERROR_CALL_NOT_IMPLEMENTED;
	}
}

static DWORD WINAPI member_thread(LPVOID arg)
{
	(void)arg;
	run_exit_code = run_work(run_argc, run_argv, false);
	return 0;
}

/* The value of option NAME ("--data-dir") in ARGV, either form, or NULL. */
static const char *option_of(int argc, char **argv, const char *name)
{
	const char *value = NULL;
	size_t len = strlen(name);

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], name) == 0 && i + 1 < argc)
			value = argv[++i];
		else if (strncmp(argv[i], name, len) == 0 && argv[i][len] == '=')
			value = argv[i] + len + 1;
	}
	return value;
}

/* Standard error (the log's stream, and the agent's last fatal line)
 * appended to DATA_DIR\agent.log: a service has no console. */
static int open_log(void)
{
	const char *dir = option_of(run_argc, run_argv, "--data-dir");
	const char *format_name = option_of(run_argc, run_argv, "--log-format");
	enum log_format format;
	char path[PLAT_MAX_PATH + 32];
	FILE *log;
	int rc;

	if (!dir || !*dir)
		dir = plat_getenv("LOADLAB_AGENT_DATA_DIR");
	if (!dir || !*dir)
		return err_set(LL_EINVAL, "The service has no --data-dir.");
	if (strlen(dir) > PLAT_MAX_PATH)
		return err_set(LL_ETOOBIG, "The data folder's path is too long.");
	if ((rc = plat_mkdirs_private(dir)) < 0)
		return rc;
	snprintf(path, sizeof(path), "%s\\%s", dir, SERVICE_LOG_FILE);
	if (!(log = fopen(path, "ab")))
		return err_set(LL_EIO, "Cannot open the log file %s.", path);
	/* The log's events go to LOG. A service starts with no standard
	 * handles and the C runtime's stderr is then unusable (writes fail,
	 * freopen() fails under Wine): descriptor 2 is made the log file's
	 * and stderr reopened on it, for the agent's last fatal line; when
	 * that fails only that line is lost. */
	setvbuf(log, NULL, _IONBF, 0);
	log_set_stream(log);
	/* The service's own lines in the format the agent's will have. */
	if (format_name && log_format_parse(format_name, &format) == 0)
		log_set_format(format);
	if (_dup2(_fileno(log), 2) == 0 && freopen(path, "ab", stderr)) {
		setvbuf(stderr, NULL, _IONBF, 0);
		SetStdHandle(STD_ERROR_HANDLE, (HANDLE)_get_osfhandle(_fileno(stderr)));
	}
	return 0;
}

/* Starts "EXE.previous service update-watch --service-name NAME
 * --data-dir DIR --update-confirm-seconds S", detached: it outlives this
 * process, waits for the service to stop, starts it again and rolls a new
 * copy back that does not reach the server (service_update_watch()). */
static int start_update_watch(void)
{
	static char line[PLAT_MAX_COMMAND_LINE + 1];
	const char *dir = option_of(run_argc, run_argv, "--data-dir");
	const char *confirm = option_of(run_argc, run_argv, "--update-confirm-seconds");
	const char *format = option_of(run_argc, run_argv, "--log-format");
	char exe[MAX_PATH + 1], previous[MAX_PATH + 32], seconds[24];
	STARTUPINFOA si;
	PROCESS_INFORMATION pi;
	size_t len = 0, n;
	DWORD got = GetModuleFileNameA(NULL, exe, sizeof(exe));

	if (got == 0 || got >= sizeof(exe) || !dir || (n = strlen(exe)) < 5)
		return err_set(LL_EIO, "Cannot find this program's own path.");
	snprintf(previous, sizeof(previous), "%.*s.previous.exe", (int)(n - 4), exe);
	snprintf(seconds, sizeof(seconds), "%s", confirm ? confirm : "120");
	line[0] = '\0';
	if (plat_win32_append_arg(line, &len, previous) < 0 ||
	    plat_win32_append_arg(line, &len, "service") < 0 ||
	    plat_win32_append_arg(line, &len, "update-watch") < 0 ||
	    plat_win32_append_arg(line, &len, "--service-name") < 0 ||
	    plat_win32_append_arg(line, &len, run_name) < 0 ||
	    plat_win32_append_arg(line, &len, "--data-dir") < 0 ||
	    plat_win32_append_arg(line, &len, dir) < 0 ||
	    plat_win32_append_arg(line, &len, "--update-confirm-seconds") < 0 ||
	    plat_win32_append_arg(line, &len, seconds) < 0 ||
	    (format && (plat_win32_append_arg(line, &len, "--log-format") < 0 ||
			plat_win32_append_arg(line, &len, format) < 0)))
		return err_set(LL_ETOOBIG, "The watcher's command line is too long.");
	memset(&si, 0, sizeof(si));
	si.cb = sizeof(si);
	if (!CreateProcessA(previous, line, NULL, NULL, FALSE, DETACHED_PROCESS | CREATE_NEW_PROCESS_GROUP,
			    NULL, NULL, &si, &pi)) {
		char reason[MAX_PATH + 64];
		snprintf(reason, sizeof(reason), "cannot start %s (error %lu)", previous,
			 (unsigned long)GetLastError());
		log_event(LOG_ERROR, "service_restart_failed", "reason", reason, NULL);
		return LL_EIO;
	}
	CloseHandle(pi.hThread);
	CloseHandle(pi.hProcess);
	return 0;
}

static void WINAPI service_main(DWORD argc, LPSTR *argv)
{
	HANDLE thread;
	int rc;

	(void)argc, (void)argv; /* StartService's arguments: the command line counts */
	status_handle = RegisterServiceCtrlHandlerExA(run_name, on_control, NULL);
	if (!status_handle)
		return;
	report_status(SERVICE_START_PENDING, 0, 10000);
	if ((rc = open_log()) < 0) {
		report_status(SERVICE_STOPPED, FLEET_EXIT_ERROR, 0);
		return;
	}
	log_event(LOG_INFO, "service_started", "service", run_name, NULL);
	thread = CreateThread(NULL, 0, member_thread, NULL, 0, NULL);
	if (!thread) {
		log_event(LOG_ERROR, "service_failed", "reason", "cannot start a thread", NULL);
		report_status(SERVICE_STOPPED, FLEET_EXIT_ERROR, 0);
		return;
	}
	report_status(SERVICE_RUNNING, 0, 0);
	while (WaitForSingleObject(thread, 1000) == WAIT_TIMEOUT)
		if (plat_stop_requested())
			report_status(SERVICE_STOP_PENDING, 0, STOP_WAIT_HINT_MS);
	CloseHandle(thread);
	if (run_exit_code == FLEET_EXIT_RESTART) {
		/* Updated or rolled back: the previous copy watches the restart. */
		if (start_update_watch() == 0) {
			log_event(LOG_INFO, "service_restarting", "service", run_name, NULL);
			run_exit_code = 0;
		}
	}
	{
		char code[16];
		snprintf(code, sizeof(code), "%d", run_exit_code);
		log_event(LOG_INFO, "service_stopped", "service", run_name, "exit_code", code, NULL);
	}
	report_status(SERVICE_STOPPED, run_exit_code, 0);
}

int service_run(const char *name, service_work_fn *work, int argc, char **argv)
{
	SERVICE_TABLE_ENTRYA table[] = {{(char *)name, service_main}, {NULL, NULL}};
	DWORD error;

	run_name = name;
	run_work = work;
	run_argc = argc;
	run_argv = argv;
	run_exit_code = FLEET_EXIT_ERROR;
	InitializeCriticalSection(&status_lock);
	if (StartServiceCtrlDispatcherA(table))
		return run_exit_code;
	error = GetLastError();
	if (error == ERROR_FAILED_SERVICE_CONTROLLER_CONNECT)
		return err_set(LL_ESTATE,
			       "'service run' is what the Service Control Manager starts: "
			       "register the agent with 'loadlab-agent service install', then "
			       "'sc start %s'.",
			       name);
	return err_set(LL_EIO, "Cannot connect to the Service Control Manager (error %lu).",
		       (unsigned long)error);
}

static int scm_error(const char *what, const char *name)
{
	DWORD error = GetLastError();
	int code = error == ERROR_ACCESS_DENIED                                             ? LL_EFORBIDDEN
		   : error == ERROR_SERVICE_EXISTS || error == ERROR_DUPLICATE_SERVICE_NAME ? LL_ECONFLICT
		   : error == ERROR_SERVICE_DOES_NOT_EXIST                                  ? LL_ENOTFOUND
											    : LL_EIO;

	if (code == LL_EFORBIDDEN)
		return err_set(code,
			       "Cannot %s the service %s: access denied (run it as an "
			       "administrator).",
			       what, name);
	if (code == LL_ECONFLICT)
		return err_set(code,
			       "Cannot %s the service %s: it exists already (uninstall it "
			       "first).",
			       what, name);
	if (code == LL_ENOTFOUND)
		return err_set(code, "Cannot %s the service %s: there is no such service.", what, name);
	return err_set(code, "Cannot %s the service %s (error %lu).", what, name, (unsigned long)error);
}

/* Appends ARGV[*I] to LINE; --data-dir and --enroll-token-file (either
 * form) with their value made absolute (*I then skips a separate value). */
static int append_option(char *line, size_t *len, int argc, char **argv, int *i)
{
	static const char *const path_options[] = {"--data-dir", "--enroll-token-file", NULL};
	char full[MAX_PATH];
	int rc;

	for (int k = 0; path_options[k]; k++) {
		size_t n = strlen(path_options[k]);
		const char *value = NULL;
		DWORD got;

		if (strcmp(argv[*i], path_options[k]) == 0 && *i + 1 < argc)
			value = argv[++*i];
		else if (strncmp(argv[*i], path_options[k], n) == 0 && argv[*i][n] == '=')
			value = argv[*i] + n + 1;
		if (!value)
			continue;
		got = GetFullPathNameA(value, sizeof(full), full, NULL);
		if (got == 0 || got >= sizeof(full))
			return err_set(LL_EINVAL, "Cannot make %s an absolute path.", value);
		if ((rc = plat_win32_append_arg(line, len, path_options[k])) < 0)
			return rc;
		return plat_win32_append_arg(line, len, full);
	}
	return plat_win32_append_arg(line, len, argv[*i]);
}

int service_install(const char *name, int argc, char **argv)
{
	static char line[PLAT_MAX_COMMAND_LINE + 1];
	char exe[MAX_PATH], display[128],
		description[] =
			"Leases load-time experiments from loadlabd, runs them and posts the results.";
	SERVICE_DESCRIPTIONA info = {description};
	SC_HANDLE scm, service;
	size_t len = 0;
	DWORD got = GetModuleFileNameA(NULL, exe, sizeof(exe));
	int rc;

	if (got == 0 || got >= sizeof(exe))
		return err_set(LL_EIO, "Cannot find this program's own path.");
	line[0] = '\0';
	if ((rc = plat_win32_append_arg(line, &len, exe)) < 0 ||
	    (rc = plat_win32_append_arg(line, &len, "service")) < 0 ||
	    (rc = plat_win32_append_arg(line, &len, "run")) < 0 ||
	    (rc = plat_win32_append_arg(line, &len, "--service-name")) < 0 ||
	    (rc = plat_win32_append_arg(line, &len, name)) < 0)
		return rc;
	for (int i = 0; i < argc; i++)
		if ((rc = append_option(line, &len, argc, argv, &i)) < 0)
			return rc;
	snprintf(display, sizeof(display), "loadlab agent (%s)", name);
	scm = OpenSCManagerA(NULL, NULL, SC_MANAGER_CONNECT | SC_MANAGER_CREATE_SERVICE);
	if (!scm)
		return scm_error("install", name);
	/* Asked first: Wine's CreateService() replaces an existing service. */
	if ((service = OpenServiceA(scm, name, SERVICE_QUERY_STATUS))) {
		CloseServiceHandle(service);
		CloseServiceHandle(scm);
		SetLastError(ERROR_SERVICE_EXISTS);
		return scm_error("install", name);
	}
	/* LocalSystem (no account given): docs/agent.md says how to choose another. */
	service = CreateServiceA(scm, name, display, SERVICE_CHANGE_CONFIG | SERVICE_QUERY_STATUS,
				 SERVICE_WIN32_OWN_PROCESS, SERVICE_AUTO_START, SERVICE_ERROR_NORMAL, line,
				 NULL, NULL, NULL, NULL, NULL);
	if (!service) {
		rc = scm_error("install", name);
		CloseServiceHandle(scm);
		return rc;
	}
	ChangeServiceConfig2A(service, SERVICE_CONFIG_DESCRIPTION, &info); /* cosmetic */
	CloseServiceHandle(service);
	CloseServiceHandle(scm);
	return 0;
}

int service_uninstall(const char *name)
{
	SC_HANDLE scm, service;
	SERVICE_STATUS now;
	int rc = 0;

	scm = OpenSCManagerA(NULL, NULL, SC_MANAGER_CONNECT);
	if (!scm)
		return scm_error("uninstall", name);
	service = OpenServiceA(scm, name, SERVICE_STOP | SERVICE_QUERY_STATUS | DELETE);
	if (!service) {
		rc = scm_error("uninstall", name);
		CloseServiceHandle(scm);
		return rc;
	}
	if (QueryServiceStatus(service, &now) && now.dwCurrentState != SERVICE_STOPPED) {
		DWORD waited = 0;
		if (now.dwCurrentState != SERVICE_STOP_PENDING)
			ControlService(service, SERVICE_CONTROL_STOP, &now);
		while (waited < UNINSTALL_STOP_WAIT_MS && QueryServiceStatus(service, &now) &&
		       now.dwCurrentState != SERVICE_STOPPED) {
			Sleep(250);
			waited += 250;
		}
		if (now.dwCurrentState != SERVICE_STOPPED)
			rc = err_set(LL_ESTATE,
				     "The service %s did not stop within %d s; it is marked "
				     "for deletion once it does.",
				     name, UNINSTALL_STOP_WAIT_MS / 1000);
	}
	if (!DeleteService(service) && GetLastError() != ERROR_SERVICE_MARKED_FOR_DELETE && rc == 0)
		rc = scm_error("uninstall", name);
	CloseServiceHandle(service);
	CloseServiceHandle(scm);
	return rc;
}
#endif
