/*
 * service_update_win32.c - service.h's service_update_watch(): the
 * previous copy of the agent restarts the service after an update and
 * rolls the new copy back when it does not reach the server (update.h).
 * Started detached by the service (service_win32.c) as it stops; logs to
 * DATA_DIR\agent.log beside the service.
 */
#ifdef _WIN32
#include "service/service.h"

#include "update/update.h"
#include "measure/plat_churn.h"

#include "loadlab/err.h"
#include "loadlab/log.h"
#include "loadlab/plat.h"

#include <windows.h>
#include <stdio.h>
#include <string.h>

/* How long the watcher waits for the service to stop, and to start. */
#define WATCH_STATE_WAIT_MS 60000

static DWORD state_of(SC_HANDLE service)
{
	SERVICE_STATUS now;

	return QueryServiceStatus(service, &now) ? now.dwCurrentState : SERVICE_STOPPED;
}

static bool wait_state(SC_HANDLE service, DWORD state)
{
	for (DWORD waited = 0; waited < WATCH_STATE_WAIT_MS; waited += 250) {
		if (state_of(service) == state)
			return true;
		Sleep(250);
	}
	return state_of(service) == state;
}

static bool service_alive(void *context)
{
	return state_of(context) != SERVICE_STOPPED;
}

/* Starts SERVICE, a few tries: Wine's services.exe may still be closing
 * the last run. */
static int start(SC_HANDLE service, const char *name)
{
	DWORD error = 0;

	for (int i = 0; i < 10; i++) {
		if (StartServiceA(service, 0, NULL) ||
		    (error = GetLastError()) == ERROR_SERVICE_ALREADY_RUNNING) {
			log_event(LOG_INFO, "service_restarted", "service", name, NULL);
			return 0;
		}
		/* Only a lock held a moment is worth another try: a program
		 * that did not start as a service (1053) will not. */
		if (error != ERROR_SERVICE_DATABASE_LOCKED && error != ERROR_SERVICE_MARKED_FOR_DELETE)
			break;
		Sleep(1000);
	}
	return err_set(LL_EIO, "Cannot start the service %s (error %lu).", name, (unsigned long)error);
}

/* DATA_DIR\agent.log as the log's stream. */
static void open_log(const char *data_dir)
{
	char path[PLAT_MAX_PATH + 32];
	FILE *log;

	snprintf(path, sizeof(path), "%s\\%s", data_dir, SERVICE_LOG_FILE);
	if ((log = fopen(path, "ab"))) {
		setvbuf(log, NULL, _IONBF, 0);
		log_set_stream(log);
	}
}

int service_update_watch(const char *name, const char *data_dir, long long confirm_s)
{
	char self[PLAT_MAX_PATH + 1], exe[PLAT_MAX_PATH + 1], to[65], reason[200];
	const char *suffix = ".previous.exe";
	SC_HANDLE scm, service;
	size_t n;
	int rc;

	open_log(data_dir);
	/* This program is EXE.previous.exe: the service runs EXE.exe. */
	if ((rc = plat_churn_self_path(self, sizeof(self))) < 0)
		return rc;
	n = strlen(self);
	if (n <= strlen(suffix) || _stricmp(self + n - strlen(suffix), suffix) != 0)
		return err_set(LL_EINVAL, "update-watch is run as the agent's previous copy (NAME%s).",
			       suffix);
	snprintf(exe, sizeof(exe), "%.*s.exe", (int)(n - strlen(suffix)), self);
	if (!(scm = OpenSCManagerA(NULL, NULL, SC_MANAGER_CONNECT)))
		return err_set(LL_EIO, "Cannot open the Service Control Manager (error %lu).",
			       (unsigned long)GetLastError());
	service = OpenServiceA(scm, name, SERVICE_START | SERVICE_STOP | SERVICE_QUERY_STATUS);
	if (!service) {
		CloseServiceHandle(scm);
		return err_set(LL_ENOTFOUND, "There is no service %s.", name);
	}
	log_event(LOG_INFO, "service_update_watch", "service", name, NULL);
	wait_state(service, SERVICE_STOPPED);
	if ((rc = start(service, name)) == 0 && update_watch(data_dir, confirm_s * 1000, service_alive,
							     service, to, reason, sizeof(reason)) == 1) {
		SERVICE_STATUS now;
		if (state_of(service) != SERVICE_STOPPED) {
			ControlService(service, SERVICE_CONTROL_STOP, &now);
			wait_state(service, SERVICE_STOPPED);
		}
		if ((rc = update_put_back(data_dir, exe, to, reason)) == 0)
			rc = start(service, name);
	} else if (rc < 0) {
		/* Not even started (a file Windows cannot run): put back at once. */
		char why[300];
		snprintf(why, sizeof(why), "%s", err_message(rc));
		if (update_watch(data_dir, 0, service_alive, service, to, reason, sizeof(reason)) == 1 &&
		    update_put_back(data_dir, exe, to, why) == 0)
			rc = start(service, name);
	}
	if (rc < 0)
		log_event(LOG_ERROR, "service_update_watch_failed", "reason", err_message(rc), NULL);
	CloseServiceHandle(service);
	CloseServiceHandle(scm);
	return rc;
}
#endif
