/*
 * plat_posix.c - plat.h on Linux (and other POSIX systems where noted).
 */
#ifndef _WIN32

#include "loadlab/plat.h"
#include "loadlab/plat_thread.h"
#include "loadlab/plat_spawn_posix.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "loadlab/clock.h"
#include "loadlab/err.h"

extern char **environ;

struct plat_process {
	pid_t pid;
	int pidfd; /* -1 when pidfd_open is unavailable */
	bool reaped;
	int exit_code;
	long long start_us;
	long long end_us;
};

size_t plat_posix_count(const char *const *list)
{
	size_t n = 0;
	while (list && list[n])
		n++;
	return n;
}

static size_t key_length(const char *entry)
{
	const char *eq = strchr(entry, '=');
	return eq ? (size_t)(eq - entry) : strlen(entry);
}

int plat_posix_environment(const char *const *add, char ***ret_env)
{
	size_t parent = plat_posix_count((const char *const *)environ), extra = plat_posix_count(add);
	size_t n = 0, i, j;
	char **env;

	if (extra > PLAT_MAX_ARGS)
		return err_set(LL_ETOOBIG, "More than %u environment additions.", PLAT_MAX_ARGS);
	env = calloc(parent + extra + 1, sizeof(*env));
	if (!env)
		return LL_ENOMEM;
	for (i = 0; i < parent; i++) {
		bool replaced = false;
		for (j = 0; j < extra; j++)
			if (key_length(environ[i]) == key_length(add[j]) &&
			    strncmp(environ[i], add[j], key_length(add[j])) == 0)
				replaced = true;
		if (!replaced)
			env[n++] = environ[i];
	}
	for (j = 0; j < extra; j++)
		env[n++] = (char *)add[j];
	env[n] = NULL;
	*ret_env = env;
	return 0;
}

static int open_output(const char *path)
{
	return open(path ? path : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

int plat_spawn(const struct plat_spawn_options *options, struct plat_process **ret_process)
{
	posix_spawn_file_actions_t actions;
	bool actions_ready = false;
	struct plat_process *p = NULL;
	char **env = NULL;
	int out_fd = -1, err_fd = -1, in_fd = -1, rc, e;
	size_t argc = plat_posix_count(options->argv);

	if (argc == 0)
		return err_set(LL_EINVAL, "No program to start.");
	if (argc > PLAT_MAX_ARGS)
		return err_set(LL_ETOOBIG, "More than %u arguments.", PLAT_MAX_ARGS);
	if ((rc = plat_posix_environment(options->env_add, &env)) < 0)
		return rc;
	p = calloc(1, sizeof(*p));
	if (!p) {
		rc = LL_ENOMEM;
		goto out;
	}
	p->pidfd = -1;
	in_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	out_fd = open_output(options->stdout_path);
	if (options->stderr_path && options->stdout_path &&
	    strcmp(options->stderr_path, options->stdout_path) == 0)
		err_fd = dup(out_fd);
	else
		err_fd = open_output(options->stderr_path);
	if (in_fd < 0 || out_fd < 0 || err_fd < 0) {
		rc = err_set(LL_EIO, "Cannot open the output files of %s: %s.", options->argv[0],
			     strerror(errno));
		goto out;
	}
	if (posix_spawn_file_actions_init(&actions) != 0) {
		rc = LL_ENOMEM;
		goto out;
	}
	actions_ready = true;
	/* dup2 clears FD_CLOEXEC on the copies; the originals close at exec. */
	if (posix_spawn_file_actions_adddup2(&actions, in_fd, 0) != 0 ||
	    posix_spawn_file_actions_adddup2(&actions, out_fd, 1) != 0 ||
	    posix_spawn_file_actions_adddup2(&actions, err_fd, 2) != 0 ||
	    (options->cwd && posix_spawn_file_actions_addchdir_np(&actions, options->cwd) != 0)) {
		rc = LL_ENOMEM;
		goto out;
	}
	p->start_us = clock_monotonic_us();
	e = posix_spawn(&p->pid, options->argv[0], &actions, NULL, (char *const *)options->argv, env);
	if (e != 0) {
		rc = err_set(LL_EIO, "Cannot start %s: %s.", options->argv[0], strerror(e));
		goto out;
	}
#ifdef SYS_pidfd_open
	p->pidfd = (int)syscall(SYS_pidfd_open, p->pid, 0);
#endif
	*ret_process = p;
	p = NULL;
	rc = 0;
out:
	if (actions_ready)
		posix_spawn_file_actions_destroy(&actions);
	if (in_fd >= 0)
		close(in_fd);
	if (out_fd >= 0)
		close(out_fd);
	if (err_fd >= 0)
		close(err_fd);
	free(env);
	free(p);
	return rc;
}

static void record_status(struct plat_process *p, int status)
{
	p->end_us = clock_monotonic_us();
	p->reaped = true;
	if (WIFEXITED(status))
		p->exit_code = WEXITSTATUS(status);
	else if (WIFSIGNALED(status))
		p->exit_code = 128 + WTERMSIG(status);
	else
		p->exit_code = 255;
}

/* One waitpid attempt; 1 when reaped, 0 when still running. */
static int try_reap(struct plat_process *p, bool block)
{
	int status;
	pid_t r;

	do
		r = waitpid(p->pid, &status, block ? 0 : WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return err_set(LL_EIO, "waitpid(%ld) failed: %s.", (long)p->pid, strerror(errno));
	if (r == 0)
		return 0;
	record_status(p, status);
	return 1;
}

int plat_wait(struct plat_process *process, long long timeout_ms, int *ret_exit_code, long long *ret_wall_us)
{
	long long deadline = timeout_ms < 0 ? -1 : clock_monotonic_us() + timeout_ms * 1000;
	int rc;

	while (!process->reaped) {
		if (timeout_ms < 0) {
			if ((rc = try_reap(process, true)) < 0)
				return rc;
			continue;
		}
		if ((rc = try_reap(process, false)) < 0)
			return rc;
		if (rc == 1)
			break;
		long long left = deadline - clock_monotonic_us();
		if (left <= 0)
			return err_set(LL_ERANGE, "Process %ld still running after %lld ms.",
				       (long)process->pid, timeout_ms);
		if (process->pidfd >= 0) {
			/* The pidfd becomes readable at exit: no polling delay
			 * enters the measured wall time. */
			struct pollfd pfd = {.fd = process->pidfd, .events = POLLIN};
			int ms = left / 1000 > INT_MAX ? INT_MAX : (int)(left / 1000) + 1;
			if (poll(&pfd, 1, ms) < 0 && errno != EINTR)
				return err_set(LL_EIO, "poll on a process failed: %s.", strerror(errno));
		} else {
			struct timespec ts = {0, 200000};
			nanosleep(&ts, NULL);
		}
	}
	if (ret_exit_code)
		*ret_exit_code = process->exit_code;
	if (ret_wall_us)
		*ret_wall_us = process->end_us - process->start_us;
	return 0;
}

int plat_kill(struct plat_process *process)
{
	if (process->reaped)
		return 0;
	if (kill(process->pid, SIGKILL) < 0 && errno != ESRCH)
		return err_set(LL_EIO, "Cannot kill process %ld: %s.", (long)process->pid, strerror(errno));
	return try_reap(process, true) < 0 ? LL_EIO : 0;
}

int plat_terminate(struct plat_process *process, long long grace_ms)
{
	if (process->reaped)
		return 0;
	if (kill(process->pid, SIGTERM) < 0 && errno != ESRCH)
		return err_set(LL_EIO, "Cannot signal process %ld: %s.", (long)process->pid, strerror(errno));
	if (plat_wait(process, grace_ms, NULL, NULL) == 0)
		return 0;
	return plat_kill(process);
}

void plat_process_free(struct plat_process *process)
{
	if (!process)
		return;
	if (!process->reaped)
		plat_kill(process);
	if (process->pidfd >= 0)
		close(process->pidfd);
	free(process);
}

long long plat_process_id(const struct plat_process *process)
{
	return (long long)process->pid;
}

int plat_find_program(const char *name, char *out, size_t size)
{
	const char *path = getenv("PATH"), *p;

	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	if (strchr(name, '/'))
		return err_set(LL_EINVAL, "Program name %s has a folder in it.", name);
	for (p = path; *p;) {
		const char *end = strchr(p, ':');
		size_t dir_len = end ? (size_t)(end - p) : strlen(p);
		char candidate[PLAT_MAX_PATH + 1];
		int n = snprintf(candidate, sizeof(candidate), "%.*s/%s", (int)dir_len, p, name);

		if (dir_len > 0 && n > 0 && (size_t)n < sizeof(candidate) && access(candidate, X_OK) == 0 &&
		    plat_file_exists(candidate)) {
			if ((size_t)n >= size)
				return err_set(LL_ETOOBIG, "Path of %s is too long.", name);
			memcpy(out, candidate, (size_t)n + 1);
			return 0;
		}
		p += dir_len;
		if (*p == ':')
			p++;
	}
	return err_set(LL_ENOTFOUND, "%s is not in PATH.", name);
}

int plat_system_dll_dir(char *out, size_t size)
{
	return err_set(LL_EUNSUPPORTED, "This system has no Windows DLL folder of its own.");
}

const char *plat_raise_priority(void)
{
	/* An unprivileged process may not lower its nice value; say what
	 * it has rather than pretend. */
	errno = 0;
	int nice_value = getpriority(PRIO_PROCESS, 0);
	if (errno == 0 && nice_value == 0)
		return "normal";
	return errno == 0 && nice_value < 0 ? "raised" : "lowered";
}

bool plat_runs_windows_programs(void)
{
	return false;
}

void plat_sleep_ms(long long ms)
{
	struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Lock-free (checked below), so the signal handler may store to it and
 * any thread read it. */
static atomic_int stop_flag;
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "the stop flag must be lock-free");

static void on_stop_signal(int signo)
{
	(void)signo;
	atomic_store(&stop_flag, 1);
}

int plat_install_stop_handler(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTERM, &sa, NULL) < 0 || sigaction(SIGINT, &sa, NULL) < 0)
		return err_set(LL_EIO, "Cannot install the stop handler: %s.", strerror(errno));
	/* A server that closes a connection must not kill the process. */
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	return 0;
}

bool plat_stop_requested(void)
{
	return atomic_load(&stop_flag) != 0;
}

void plat_request_stop(void)
{
	atomic_store(&stop_flag, 1);
}

void plat_host_name(char *out, size_t size)
{
	if (gethostname(out, size) < 0 || !*out)
		snprintf(out, size, "agent");
	out[size - 1] = '\0';
}

unsigned plat_random_seed(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (unsigned)tv.tv_sec ^ (unsigned)tv.tv_usec * 2654435761u ^ (unsigned)getpid() << 16;
}

struct plat_thread {
	pthread_t id;
	void (*fn)(void *arg);
	void *arg;
};

static void *thread_main(void *p)
{
	struct plat_thread *t = p;

	t->fn(t->arg);
	return NULL;
}

int plat_thread_start(void (*fn)(void *arg), void *arg, struct plat_thread **ret_thread)
{
	struct plat_thread *t = calloc(1, sizeof(*t));
	int e;

	if (!t)
		return err_set(LL_ENOMEM, "Out of memory.");
	t->fn = fn;
	t->arg = arg;
	e = pthread_create(&t->id, NULL, thread_main, t);
	if (e != 0) {
		free(t);
		return err_set(LL_EIO, "Cannot start a thread: %s.", strerror(e));
	}
	*ret_thread = t;
	return 0;
}

void plat_thread_join(struct plat_thread *thread)
{
	if (!thread)
		return;
	pthread_join(thread->id, NULL);
	free(thread);
}

/* Host programs are ordinary programs here (plat.h, "Host programs"). */
bool plat_under_wine(void)
{
	return false;
}

int plat_host_path(const char *path, char *out, size_t size)
{
	size_t n = strlen(path);

	if (n >= size)
		return err_set(LL_ETOOBIG, "Path %s is too long.", path);
	memcpy(out, path, n + 1);
	return 0;
}

int plat_find_host_program(const char *name, char *out, size_t size)
{
	return plat_find_program(name, out, size);
}

int plat_spawn_host(const struct plat_spawn_options *options, struct plat_process **ret_process)
{
	return plat_spawn(options, ret_process);
}

#endif /* !_WIN32 */
