/*
 * service.h - loadlab-agent as a Windows service (docs/agent.md,
 * "Windows service"): registered with the Service Control Manager, started
 * by it, stopped by it. The fleet member runs unchanged inside; the
 * Service Control Manager's stop and shutdown requests set the agent's
 * stop flag (plat_request_stop()), so the task in progress is finished or
 * given back exactly as after Ctrl-C.
 *
 * Windows only: on other systems every function returns LL_EUNSUPPORTED
 * with a message naming the systemd unit (packaging/systemd/).
 */
#ifndef LOADLAB_AGENT_SERVICE_H
#define LOADLAB_AGENT_SERVICE_H

#include <stdbool.h>

/* The service's name when none is given. */
#define SERVICE_DEFAULT_NAME "loadlab-agent"
/* The log file the service writes in its data folder. */
#define SERVICE_LOG_FILE "agent.log"

/* Registers this executable as the service NAME, started automatically at
 * boot, with the command line "EXE service run --service-name NAME ARGS..."
 * (ARGS: the fleet member's options, ARGC of them; --data-dir and
 * --enroll-token-file made absolute, as a service starts in the system
 * folder). LL_ECONFLICT when NAME exists, LL_EFORBIDDEN without the
 * rights, LL_EIO for another refusal. */
int service_install(const char *name, int argc, char **argv);

/* Stops the service NAME if it runs (waiting up to a minute for it) and
 * removes it. LL_ENOTFOUND when there is none. */
int service_uninstall(const char *name);

/* The work a service does: the fleet member (cmd/cmd_member.c's
 * cmd_member_start), given by the caller so that this folder depends on
 * no command. Returns the process exit code. */
typedef int service_work_fn(int argc, char **argv, bool console_stop);

/* What the Service Control Manager starts: connects to it, runs WORK with
 * ARGV (ARGV[0] a program name, the options after it; console_stop false)
 * until a stop, with its log appended to DATA_DIR\agent.log, and reports
 * its status throughout. Returns the process exit code; LL_ESTATE (after
 * one line on stderr) when the process was not started by the Service
 * Control Manager. */
int service_run(const char *name, service_work_fn *work, int argc, char **argv);

/* "service update-watch": run as the agent's previous copy after an
 * update (update/update.h): waits for the service NAME to stop, starts
 * it, and when the new copy does not reach the server within CONFIRM_S
 * (and a margin; data in DATA_DIR\update), stops it, puts the previous
 * copy back and starts it again. Logs to DATA_DIR\agent.log. */
int service_update_watch(const char *name, const char *data_dir, long long confirm_s);

#endif
