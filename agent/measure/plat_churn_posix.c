/*
 * plat_churn_posix.c - plat_churn.h on Linux (and other POSIX systems
 * where noted): the Linux analog of the churn test.
 */
#ifndef _WIN32

#include "measure/plat_churn.h"

#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "loadlab/clock.h"
#include "loadlab/err.h"

extern char **environ;

/* Processes (threads, as RLIMIT_NPROC counts them) left to the user's
 * other work when the cap comes from RLIMIT_NPROC. */
#define NPROC_MARGIN 64

/* Threads of processes owned by this real user id, from /proc (Linux). */
static long long user_threads(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	uid_t uid = getuid();
	long long threads = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char path[64], line[256];
		struct stat st;
		FILE *f;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%.20s", e->d_name);
		if (stat(path, &st) < 0 || st.st_uid != uid)
			continue;
		snprintf(path, sizeof(path), "/proc/%.20s/status", e->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		while (fgets(line, sizeof(line), f))
			if (strncmp(line, "Threads:", 8) == 0) {
				threads += atoll(line + 8);
				break;
			}
		fclose(f);
	}
	closedir(d);
	return threads;
}

/* MemAvailable in bytes, or -1 when unknown. */
static long long available_memory(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	long long kib = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "MemAvailable:", 13) == 0) {
			kib = atoll(line + 13);
			break;
		}
	fclose(f);
	return kib < 0 ? -1 : kib * 1024;
}

int plat_churn_wave_cap(long long per_process_bytes, char *why, size_t size)
{
	long long cap = PLAT_CHURN_MAX_WAVE, memory = available_memory();
	struct rlimit rl;

	snprintf(why, size, "at most %d at once", PLAT_CHURN_MAX_WAVE);
	if (getrlimit(RLIMIT_NPROC, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
		long long in_use = user_threads();
		long long left = (long long)rl.rlim_cur - in_use - NPROC_MARGIN;
		if (left < cap) {
			cap = left;
			snprintf(why, size, "RLIMIT_NPROC %lld with %lld in use, margin %d",
				 (long long)rl.rlim_cur, in_use, NPROC_MARGIN);
		}
	}
	if (memory > 0 && per_process_bytes > 0 && memory / per_process_bytes < cap) {
		cap = memory / per_process_bytes;
		snprintf(why, size, "MemAvailable %lld MiB at %lld MiB per process", memory >> 20,
			 per_process_bytes >> 20);
	}
	return cap < 1 ? 1 : (int)cap;
}

int plat_churn_self_path(char *out, size_t size)
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

int plat_churn_absolute_path(const char *path, char *out, size_t size)
{
	char *full = realpath(path, NULL);
	int rc = 0;

	if (!full)
		return err_set(LL_EIO, "Cannot resolve %s: %s.", path, strerror(errno));
	if (strlen(full) >= size)
		rc = err_set(LL_ETOOBIG, "The path %s is too long.", full);
	else
		memcpy(out, full, strlen(full) + 1);
	free(full);
	return rc;
}

/* A descriptor at or above 10, close-on-exec, so that the children's dup2
 * to 3 and 4 never lands on a source still needed. */
static int high_fd(int fd)
{
	int high = fcntl(fd, F_DUPFD_CLOEXEC, 10);
	close(fd);
	return high;
}

static int make_pipe(int fds[2])
{
	int raw[2];

	if (pipe(raw) < 0)
		return err_set(LL_EIO, "pipe: %s.", strerror(errno));
	fds[0] = high_fd(raw[0]);
	fds[1] = high_fd(raw[1]);
	if (fds[0] < 0 || fds[1] < 0) {
		if (fds[0] >= 0)
			close(fds[0]);
		if (fds[1] >= 0)
			close(fds[1]);
		return err_set(LL_EIO, "fcntl(F_DUPFD_CLOEXEC): %s.", strerror(errno));
	}
	return 0;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Kills every child not yet reaped, by PID, and reaps it. */
static void kill_all(pid_t *pids, int count)
{
	for (int i = 0; i < count; i++)
		if (pids[i] > 0)
			kill(pids[i], SIGKILL);
	for (int i = 0; i < count; i++)
		if (pids[i] > 0) {
			while (waitpid(pids[i], NULL, 0) < 0 && errno == EINTR)
				;
			pids[i] = 0;
		}
}

/* A child that exited before the go signal, if any: its index, its status
 * in *STATUS, and its PID marked reaped. -1 when none. */
static int early_exit(pid_t *pids, int count, int *status)
{
	for (int i = 0; i < count; i++)
		if (pids[i] > 0 && waitpid(pids[i], status, WNOHANG) == pids[i]) {
			pids[i] = 0;
			return i;
		}
	return -1;
}

static long long remaining_ms(long long deadline_us)
{
	long long left = deadline_us - clock_monotonic_us();
	return left <= 0 ? 0 : (left + 999) / 1000;
}

/* Reads COUNT 'R' bytes from READY before DEADLINE_US. */
static int wait_ready(int ready, pid_t *pids, int count, long long deadline_us)
{
	int ready_count = 0, status = 0;
	char bytes[256];

	while (ready_count < count) {
		struct pollfd p = {.fd = ready, .events = POLLIN};
		long long left = remaining_ms(deadline_us);
		int n = poll(&p, 1, left > 100 ? 100 : (int)left);
		if (n < 0 && errno != EINTR)
			return err_set(LL_EIO, "poll: %s.", strerror(errno));
		if (n == 0) {
			int which = early_exit(pids, count, &status);
			if (which >= 0)
				return err_set(LL_EIO,
					       "Churn child %d exited (status %d) before it was ready.",
					       which, status);
			if (left == 0)
				return err_set(LL_ERANGE, "Only %d of %d churn children were ready in time.",
					       ready_count, count);
			continue;
		}
		if (n < 0)
			continue;
		ssize_t got = read(ready, bytes, sizeof(bytes));
		if (got < 0 && errno != EINTR && errno != EAGAIN)
			return err_set(LL_EIO, "read: %s.", strerror(errno));
		if (got == 0)
			return err_set(LL_EIO, "Every churn child exited before %d were ready.", count);
		for (ssize_t i = 0; i < got; i++) {
			if (bytes[i] != 'R')
				return err_set(LL_EIO, "A churn child could not load its libraries.");
			ready_count++;
		}
	}
	return 0;
}

/* Waits for end of file on READY (every child closed its end: exited),
 * then reaps every child, all before DEADLINE_US. */
static int wait_exited(int ready, pid_t *pids, int count, long long deadline_us)
{
	char bytes[256];

	for (;;) {
		struct pollfd p = {.fd = ready, .events = POLLIN};
		long long left = remaining_ms(deadline_us);
		int n = poll(&p, 1, (int)(left > INT_MAX ? INT_MAX : left));
		if (n < 0 && errno != EINTR)
			return err_set(LL_EIO, "poll: %s.", strerror(errno));
		if (n == 0)
			return err_set(LL_ERANGE, "The churn children did not exit in time.");
		if (n < 0)
			continue;
		ssize_t got = read(ready, bytes, sizeof(bytes));
		if (got == 0)
			break;
		if (got < 0 && errno != EINTR && errno != EAGAIN)
			return err_set(LL_EIO, "read: %s.", strerror(errno));
	}
	/* Every child has left do_exit's file teardown; each becomes a zombie
	 * a moment later, so the blocking reap below is short. */
	for (int i = 0; i < count; i++) {
		int status = 0;
		pid_t got;
		while ((got = waitpid(pids[i], &status, 0)) < 0 && errno == EINTR)
			;
		pids[i] = 0;
		if (got < 0)
			return err_set(LL_EIO, "waitpid: %s.", strerror(errno));
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			return err_set(LL_EIO, "Churn child %d ended with status %d.", i, status);
	}
	return 0;
}

int plat_churn_wave_run(const char *const *child_argv, int count, long long timeout_ms,
			struct plat_churn_wave *ret_wave)
{
	int ready[2] = {-1, -1}, go[2] = {-1, -1}, started = 0, rc;
	pid_t *pids = NULL;
	posix_spawn_file_actions_t actions;
	bool actions_made = false;
	struct plat_churn_wave w = {0};
	long long t0, t1, t2, t3;

	if (count < 1 || count > PLAT_CHURN_MAX_WAVE)
		return err_set(LL_ERANGE, "A churn wave has 1..%d processes, not %d.", PLAT_CHURN_MAX_WAVE,
			       count);
	if (!(pids = calloc((size_t)count, sizeof(*pids))))
		return err_set(LL_ENOMEM, "Out of memory.");
	if ((rc = make_pipe(ready)) < 0)
		goto out;
	if ((rc = make_pipe(go)) < 0)
		goto out;
	if (posix_spawn_file_actions_init(&actions) != 0) {
		rc = err_set(LL_ENOMEM, "posix_spawn_file_actions_init failed.");
		goto out;
	}
	actions_made = true;
	if (posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0) ||
	    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0) ||
	    posix_spawn_file_actions_adddup2(&actions, ready[1], PLAT_CHURN_READY_FD) ||
	    posix_spawn_file_actions_adddup2(&actions, go[0], PLAT_CHURN_GO_FD)) {
		rc = err_set(LL_ENOMEM, "posix_spawn_file_actions failed.");
		goto out;
	}

	t0 = clock_monotonic_us();
	for (; started < count; started++) {
		pid_t pid;
		int e = posix_spawn(&pid, child_argv[0], &actions, NULL, (char *const *)child_argv, environ);
		if (e != 0) {
			rc = err_set(LL_EIO, "Cannot start churn child %d of %d (%s): %s.", started + 1,
				     count, child_argv[0], strerror(e));
			goto out;
		}
		pids[started] = pid;
	}
	w.first_pid = pids[0];
	/* Only the children hold the ready pipe's write end now. */
	close_fd(&ready[1]);
	if ((rc = wait_ready(ready[0], pids, count, t0 + timeout_ms * 1000)) < 0)
		goto out;
	t1 = clock_monotonic_us();

	t2 = clock_monotonic_us();
	close_fd(&go[1]);
	if ((rc = wait_exited(ready[0], pids, count, t2 + timeout_ms * 1000)) < 0)
		goto out;
	t3 = clock_monotonic_us();

	w.create_us = t1 - t0;
	w.destroy_us = t3 - t2;
	*ret_wave = w;
	rc = 0;
out:
	if (rc < 0)
		kill_all(pids, started);
	if (actions_made)
		posix_spawn_file_actions_destroy(&actions);
	close_fd(&ready[0]);
	close_fd(&ready[1]);
	close_fd(&go[0]);
	close_fd(&go[1]);
	free(pids);
	return rc;
}

int plat_churn_child(const char *const *libs, int count)
{
	char byte = 'R', buf[64];
	ssize_t n;

	for (int i = 0; i < count; i++)
		if (!dlopen(libs[i], RTLD_NOW | RTLD_GLOBAL)) {
			fprintf(stderr, "loadlab-agent churn child: %s\n", dlerror());
			byte = 'F';
			break;
		}
	while (write(PLAT_CHURN_READY_FD, &byte, 1) < 0 && errno == EINTR)
		;
	if (byte == 'F')
		return 3;
	/* The go pipe's end of file is the signal; a stray byte is ignored. */
	while ((n = read(PLAT_CHURN_GO_FD, buf, sizeof(buf))) != 0)
		if (n < 0 && errno != EINTR)
			break;
	return 0;
}

#endif
