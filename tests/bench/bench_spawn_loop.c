/*
 * bench_spawn_loop - the floor under any load timer: a minimal
 * spawn-and-wait loop, nothing else, timing PROGRAM N times with
 * CLOCK_MONOTONIC from just before the spawn to just after the reap, and
 * printing the fastest and the median run. tests/bench/bench_timer.sh
 * compares `loadlab-agent time` and hyperfine with it.
 *
 *   bench_spawn_loop [--method vfork|clone|posix_spawn] [--realtime] N PROGRAM
 *
 * --method: vfork + execve (default; DESIGN.md's reference), clone with
 * CLONE_VM | CLONE_VFORK + execve (what the agent does), or glibc's
 * posix_spawn (which resets every signal's action in the child).
 * --realtime: the agent's conditions: pinned to the last CPU and
 * SCHED_FIFO 1 (needs root and two CPUs).
 * Output: one line, "METHOD runs N min_us X median_us Y".
 */
#include <errno.h>
#include <sched.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int compare(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return x < y ? -1 : x > y;
}

static char *child_argv[2];

__attribute__((no_sanitize("address", "undefined"))) static int clone_child(void *arg)
{
	(void)arg;
	execve(child_argv[0], child_argv, environ);
	_exit(127);
}

static pid_t start(const char *method, char *stack, size_t stack_size)
{
	pid_t pid = -1;

	if (strcmp(method, "posix_spawn") == 0) {
		if (posix_spawn(&pid, child_argv[0], NULL, NULL, child_argv, environ) != 0)
			return -1;
	} else if (strcmp(method, "clone") == 0) {
		pid = clone(clone_child, stack + stack_size, CLONE_VM | CLONE_VFORK | SIGCHLD, NULL);
	} else {
		pid = vfork();
		if (pid == 0) {
			execve(child_argv[0], child_argv, environ);
			_exit(127);
		}
	}
	return pid;
}

int main(int argc, char **argv)
{
	const char *method = "vfork";
	int i = 1, realtime = 0, n, status;
	static char stack[65536];
	long long *t;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "--method") == 0 && i + 1 < argc)
			method = argv[++i];
		else if (strcmp(argv[i], "--realtime") == 0)
			realtime = 1;
		else
			break;
	}
	if (argc - i != 2 || (n = atoi(argv[i])) < 1 ||
	    (strcmp(method, "vfork") && strcmp(method, "clone") && strcmp(method, "posix_spawn"))) {
		fprintf(stderr, "usage: bench_spawn_loop [--method vfork|clone|posix_spawn] [--realtime] N "
				"PROGRAM\n");
		return 2;
	}
	child_argv[0] = argv[i + 1];
	if (realtime) {
		cpu_set_t set, one;
		struct sched_param param = {.sched_priority = 1};
		CPU_ZERO(&set);
		sched_getaffinity(0, sizeof(set), &set);
		for (int cpu = CPU_SETSIZE - 1; cpu >= 0; cpu--)
			if (CPU_ISSET(cpu, &set)) {
				CPU_ZERO(&one);
				CPU_SET(cpu, &one);
				sched_setaffinity(0, sizeof(one), &one);
				break;
			}
		if (CPU_COUNT(&set) < 2 || sched_setscheduler(0, SCHED_FIFO, &param) < 0) {
			fprintf(stderr, "bench_spawn_loop: --realtime needs root and two CPUs\n");
			return 2;
		}
	}
	if (!(t = malloc((size_t)n * sizeof(*t))))
		return 2;
	for (int r = 0; r < n; r++) {
		long long t0 = now_ns();
		pid_t pid = start(method, stack, sizeof(stack));
		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0) {
			fprintf(stderr, "bench_spawn_loop: %s failed: %s\n", child_argv[0], strerror(errno));
			return 1;
		}
		t[r] = now_ns() - t0;
	}
	qsort(t, (size_t)n, sizeof(*t), compare);
	printf("%s runs %d min_us %.3f median_us %.3f\n", method, n, t[0] / 1000.0,
	       (n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2.0) / 1000.0);
	free(t);
	return 0;
}
