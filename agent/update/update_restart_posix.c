/* update_restart_posix.c - update_restart() where there are fork() and
 * execv(): the watcher is the previous copy's code, forked before the new
 * copy is executed in this process (update.h). */
#ifndef _WIN32
#include "update/update.h"

#include "loadlab/err.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool parent_alive(void *context)
{
	return getppid() == *(pid_t *)context;
}

/* The forked watcher: never returns. */
static void watch(const char *exe, char **argv, const char *data_dir, long long confirm_ms, pid_t agent)
{
	char to[65], reason[200];
	sigset_t signals;

	/* A stop of the unit signals every process of it: the watcher ends
	 * its rollback first (a copy of a file, well within systemd's stop
	 * timeout). */
	sigemptyset(&signals);
	sigaddset(&signals, SIGTERM);
	sigaddset(&signals, SIGINT);
	sigaddset(&signals, SIGHUP);
	sigprocmask(SIG_BLOCK, &signals, NULL);
	if (update_watch(data_dir, confirm_ms, parent_alive, &agent, to, reason, sizeof(reason)) != 1)
		_exit(0);
	if (getppid() == agent) {
		kill(agent, SIGTERM);
		for (int i = 0; i < 100 && getppid() == agent; i++)
			usleep(100000);
		if (getppid() == agent)
			kill(agent, SIGKILL);
		for (int i = 0; i < 50 && getppid() == agent; i++)
			usleep(100000);
	}
	if (update_put_back(data_dir, exe, to, reason) < 0 || getenv("INVOCATION_ID"))
		_exit(0);
	sigprocmask(SIG_UNBLOCK, &signals, NULL);
	execv(exe, argv);
	_exit(127);
}

int update_restart(const char *exe, int argc, char **argv, const char *data_dir, long long confirm_ms)
{
	pid_t agent = getpid(), watcher;

	(void)argc;
	argv[0] = (char *)exe;
	fflush(NULL);
	if ((watcher = fork()) == 0)
		watch(exe, argv, data_dir, confirm_ms, agent);
	if (watcher < 0)
		return err_set(LL_EIO, "Cannot start the update's watcher: %s.", strerror(errno));
	execv(exe, argv);
	return err_set(LL_EIO, "Cannot restart as %s: %s.", exe, strerror(errno));
}
#endif
