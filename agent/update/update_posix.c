/* update_posix.c - update.h's OS backend where there is /proc/self/exe
 * and execv(). */
#ifndef _WIN32
#include "update/update.h"

#include "loadlab/err.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int update_plat_self_path(char *out, size_t size)
{
	char path[PATH_MAX + 1];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);

	if (n <= 0)
		return err_set(LL_EIO, "Cannot read /proc/self/exe: %s.", strerror(errno));
	if ((size_t)n >= size)
		return err_set(LL_ETOOBIG, "This program's path is too long.");
	memcpy(out, path, (size_t)n);
	out[n] = '\0';
	return 0;
}

/* Copies FROM to TO through TO.tmp and a rename: TO is never half
 * written, and the running program TO stays whole until the rename. */
static int copy_into_place(const char *from, const char *to)
{
	char tmp[PLAT_MAX_PATH + 16];
	int rc;

	snprintf(tmp, sizeof(tmp), "%s.tmp", to);
	if ((rc = plat_copy_file(from, tmp)) < 0)
		return rc;
	if (chmod(tmp, 0755) < 0 || rename(tmp, to) < 0) {
		rc = err_set(LL_EIO, "Cannot put %s in place: %s.", to, strerror(errno));
		unlink(tmp);
		return rc;
	}
	return 0;
}

int update_plat_install(const char *exe, const char *new_file, const char *previous)
{
	int rc = copy_into_place(exe, previous);

	return rc < 0 ? rc : copy_into_place(new_file, exe);
}

int update_plat_restore(const char *exe, const char *previous)
{
	return copy_into_place(previous, exe);
}

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

int update_plat_restart(const char *exe, int argc, char **argv, const char *data_dir, long long confirm_ms)
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
