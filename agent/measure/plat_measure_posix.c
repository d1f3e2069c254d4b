/*
 * plat_measure_posix.c - plat_measure.h on Linux.
 */
#ifndef _WIN32

#include "measure/plat_measure.h"
#include "loadlab/plat_spawn_posix.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "loadlab/err.h"

extern char **environ;

/* The agent's real-time priority while measuring, and its children's: one
 * below, so that the agent's watchdog preempts a child that spins. */
#define AGENT_FIFO_PRIORITY 2
#define CHILD_FIFO_PRIORITY 1
/* Stack of the clone child between clone and execve: a few calls deep. */
#define CHILD_STACK_BYTES (64 * 1024)

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void describe_scheduling(char *out, size_t size)
{
	int policy = sched_getscheduler(0);
	struct sched_param param = {0};

	errno = 0;
	int nice_value = getpriority(PRIO_PROCESS, 0);
	if ((policy & ~SCHED_RESET_ON_FORK) == SCHED_FIFO && sched_getparam(0, &param) == 0)
		snprintf(out, size, "SCHED_FIFO %d", param.sched_priority);
	else if ((policy & ~SCHED_RESET_ON_FORK) == SCHED_RR && sched_getparam(0, &param) == 0)
		snprintf(out, size, "SCHED_RR %d", param.sched_priority);
	else if (errno == 0)
		snprintf(out, size, "nice %d", nice_value);
	else
		snprintf(out, size, "unknown");
}

int plat_measure_begin(struct plat_measure_conditions *ret)
{
	struct plat_measure_conditions c;
	struct sched_param param = {0};
	struct timespec res;
	cpu_set_t set, one;

	memset(&c, 0, sizeof(c));
	c.cpu = -1;
	c.saved_policy = sched_getscheduler(0);
	if (c.saved_policy < 0)
		c.saved_policy = SCHED_OTHER;
	if (sched_getparam(0, &param) == 0)
		c.saved_priority = param.sched_priority;
	errno = 0;
	c.saved_nice = getpriority(PRIO_PROCESS, 0);
	if (errno != 0)
		c.saved_nice = 0;
	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof(set), &set) == 0) {
		_Static_assert(sizeof(set) <= sizeof(c.saved_affinity), "cpu_set_t fits");
		memcpy(c.saved_affinity, &set, sizeof(set));
		c.saved_affinity_valid = true;
		c.cpus_available = CPU_COUNT(&set);
	}
	/* Pin and go real-time only with a CPU to spare (plat_measure.h). */
	if (c.cpus_available >= 2) {
		for (int cpu = CPU_SETSIZE - 1; cpu >= 0; cpu--) {
			if (!CPU_ISSET(cpu, &set))
				continue;
			CPU_ZERO(&one);
			CPU_SET(cpu, &one);
			if (sched_setaffinity(0, sizeof(one), &one) == 0)
				c.cpu = cpu;
			break;
		}
	}
	param.sched_priority = AGENT_FIFO_PRIORITY;
	if (c.cpu >= 0 && sched_setscheduler(0, SCHED_FIFO, &param) == 0) {
		c.realtime = true;
		snprintf(c.priority, sizeof(c.priority), "SCHED_FIFO %d (agent %d)", CHILD_FIFO_PRIORITY,
			 AGENT_FIFO_PRIORITY);
	} else {
		int best = c.saved_nice;
		for (int n = -20; n < c.saved_nice; n++)
			if (setpriority(PRIO_PROCESS, 0, n) == 0) {
				best = n;
				break;
			}
		snprintf(c.priority, sizeof(c.priority), "nice %d", best);
	}
	describe_scheduling(c.priority_read_back, sizeof(c.priority_read_back));
	snprintf(c.clock, sizeof(c.clock), "CLOCK_MONOTONIC");
	if (clock_getres(CLOCK_MONOTONIC, &res) == 0)
		c.timer_resolution_ns = (double)res.tv_sec * 1e9 + (double)res.tv_nsec;
	snprintf(c.spawn, sizeof(c.spawn), "clone(CLONE_VM|CLONE_VFORK|CLONE_PIDFD)+execve");
	snprintf(c.counters, sizeof(c.counters),
		 "linux rusage (wait4) + /proc/PID/io of the measured process");
	c.counters_reliable = true;
	c.active = true;
	*ret = c;
	return 0;
}

void plat_measure_companion(struct plat_measure_conditions *c, long long pid)
{
	cpu_set_t set, one;
	int nice_before;

	c->companion_pid = pid > 0 ? pid : 0;
	c->companion_pinned = false;
	c->companion_nice = c->companion_saved_nice = 0;
	c->companion_saved_valid = false;
	if (!c->active || c->cpu < 0 || pid <= 0)
		return;
	CPU_ZERO(&set);
	if (sched_getaffinity((pid_t)pid, sizeof(set), &set) < 0)
		return;
	memcpy(c->companion_saved_affinity, &set, sizeof(set));
	c->companion_saved_valid = true;
	CPU_ZERO(&one);
	CPU_SET(c->cpu, &one);
	c->companion_pinned = sched_setaffinity((pid_t)pid, sizeof(one), &one) == 0;
	if (!c->companion_pinned)
		return;
	/* Its nice as low as we may (its class stays normal: plat_measure.h). */
	errno = 0;
	nice_before = getpriority(PRIO_PROCESS, (id_t)pid);
	if (errno != 0)
		return;
	c->companion_saved_nice = c->companion_nice = nice_before;
	for (int n = -20; n < nice_before; n++)
		if (setpriority(PRIO_PROCESS, (id_t)pid, n) == 0) {
			c->companion_nice = n;
			break;
		}
}

void plat_measure_end(struct plat_measure_conditions *c)
{
	struct sched_param param = {.sched_priority = c->saved_priority};

	if (!c->active)
		return;
	if (c->companion_pinned && c->companion_saved_valid) {
		cpu_set_t set;
		memcpy(&set, c->companion_saved_affinity, sizeof(set));
		sched_setaffinity((pid_t)c->companion_pid, sizeof(set), &set);
		c->companion_saved_valid = false;
	}
	if (c->companion_nice != c->companion_saved_nice) /* companion_nice stays the record */
		setpriority(PRIO_PROCESS, (id_t)c->companion_pid, c->companion_saved_nice);
	sched_setscheduler(0, c->saved_policy & ~SCHED_RESET_ON_FORK, &param);
	setpriority(PRIO_PROCESS, 0, c->saved_nice);
	if (c->saved_affinity_valid) {
		cpu_set_t set;
		memcpy(&set, c->saved_affinity, sizeof(set));
		sched_setaffinity(0, sizeof(set), &set);
	}
	c->active = false;
}

void plat_measure_counters_source(const char *argv0, char *out, size_t size)
{
	const char *base = strrchr(argv0, '/');

	base = base ? base + 1 : argv0;
	if (strncmp(base, "wine", 4) == 0)
		snprintf(out, size,
			 "linux rusage (wait4) + /proc/PID/io of the %s process (the Windows "
			 "program runs in it)",
			 base);
	else
		snprintf(out, size, "linux rusage (wait4) + /proc/PID/io of the measured process");
}

/* ---- Run counters: rusage, and perf_event_open where there is a PMU ---- */

/* Why perf_event_open cannot count here ("" until a run tried; then
 * either still "" or the first failure's words, never retried). */
static char perf_why_not[160];
static bool perf_tried;

void plat_measure_run_counter_why_not(enum plat_measure_run_counter c, char *out, size_t size)
{
	if ((c == PLAT_COUNTER_INSTRUCTIONS || c == PLAT_COUNTER_CYCLES) && perf_why_not[0])
		snprintf(out, size, "%s", perf_why_not);
	else
		snprintf(out, size, "%s", "");
}

void plat_measure_run_counters_source(char *out, size_t size)
{
	snprintf(out, size,
		 "linux wait4 rusage of the measured process (CPU time, faults, context switches); "
		 "instructions and cycles: perf_event_open, user mode, the process and its children "
		 "from execve");
}

/* The two hardware counters of one run: -1 where not open. */
struct perf_pair {
	int instructions, cycles;
};

static int perf_open(unsigned long long config)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_HARDWARE;
	a.size = sizeof(a);
	a.config = config;
	a.disabled = 1;       /* the agent's own thread never counts... */
	a.enable_on_exec = 1; /* ...its child does, from its execve */
	a.inherit = 1;        /* (inherited counts are summed into ours at the child's exit) */
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static void perf_close(struct perf_pair *p)
{
	if (p->instructions >= 0)
		close(p->instructions);
	if (p->cycles >= 0)
		close(p->cycles);
	p->instructions = p->cycles = -1;
}

/* Opens both counters before a run; the first failure is recorded in
 * perf_why_not and no later run tries again. */
static void perf_begin(struct perf_pair *p)
{
	p->instructions = p->cycles = -1;
	if (perf_tried && perf_why_not[0])
		return;
	perf_tried = true;
	if ((p->instructions = perf_open(PERF_COUNT_HW_INSTRUCTIONS)) >= 0 &&
	    (p->cycles = perf_open(PERF_COUNT_HW_CPU_CYCLES)) >= 0)
		return;
	int e = errno;
	perf_close(p);
	snprintf(perf_why_not, sizeof(perf_why_not), "%s (perf_event_open: %s)",
		 e == ENOENT || e == EOPNOTSUPP || e == ENODEV
			 ? "no PMU on this machine (a VM without one): hardware counters are not supported"
		 : e == EACCES || e == EPERM ? "not permitted (kernel.perf_event_paranoid, or no CAP_PERFMON)"
					     : "the hardware counters cannot be opened",
		 strerror(e));
}

/* The counts after the child was reaped; -1 where not counted. */
static void perf_end(struct perf_pair *p, struct plat_measure_counters *k)
{
	unsigned long long v;

	if (p->instructions >= 0 && read(p->instructions, &v, sizeof(v)) == (ssize_t)sizeof(v))
		k->instructions = (long long)v;
	if (p->cycles >= 0 && read(p->cycles, &v, sizeof(v)) == (ssize_t)sizeof(v))
		k->cycles = (long long)v;
	perf_close(p);
}

static long long timeval_ns(const struct timeval *t)
{
	return (long long)t->tv_sec * 1000000000LL + (long long)t->tv_usec * 1000LL;
}

/* ---- Spawning ---- */

/* What the clone child needs; it shares the parent's memory until execve,
 * so ERROR reaches the parent. */
struct child_args {
	const char *path;
	char *const *argv;
	char *const *envp;
	int fds[3];
	const char *cwd;
	sigset_t mask;
	bool realtime;
	volatile int error;
};

/* Runs in the child on its own stack, sharing the parent's memory, until
 * execve: system calls only, no sanitizer bookkeeping. Signals stay
 * blocked (the parent blocked them all) until the mask is restored just
 * before execve. */
__attribute__((no_sanitize("address", "undefined"))) static int child_main(void *arg)
{
	struct child_args *a = arg;
	struct sched_param param = {.sched_priority = CHILD_FIFO_PRIORITY};

	for (int i = 0; i < 3; i++) {
		if (a->fds[i] == i) {
			if (fcntl(i, F_SETFD, 0) < 0)
				goto fail;
		} else if (dup2(a->fds[i], i) < 0) {
			goto fail;
		}
	}
	if (a->cwd && chdir(a->cwd) < 0)
		goto fail;
	if (a->realtime && sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &param) < 0)
		goto fail;
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &a->mask, NULL, (size_t)(_NSIG / 8));
	execve(a->path, a->argv, a->envp);
fail:
	a->error = errno ? errno : EINVAL;
	_exit(127);
}

static int open_output(const char *path)
{
	return open(path ? path : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

/* rchar, syscr and read_bytes of /proc/PID/io (the process not reaped). */
static void read_proc_io(pid_t pid, struct plat_measure_counters *k)
{
	char path[64], line[128];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/io", (long)pid);
	if (!(f = fopen(path, "re")))
		return;
	while (fgets(line, sizeof(line), f)) {
		long long v;
		if (sscanf(line, "rchar: %lld", &v) == 1)
			k->read_chars = v;
		else if (sscanf(line, "syscr: %lld", &v) == 1)
			k->read_ops = v;
		else if (sscanf(line, "read_bytes: %lld", &v) == 1)
			k->read_bytes = v;
	}
	fclose(f);
}

static int exit_code_of(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 255;
}

static pid_t reap(pid_t pid, int *status, struct rusage *ru)
{
	pid_t r;

	do
		r = wait4(pid, status, 0, ru);
	while (r < 0 && errno == EINTR);
	return r;
}

/* Waits for PID's exit without reaping it, up to DEADLINE_NS (monotonic):
 * 1 exited, 0 timed out, < 0 error. With a pidfd, poll wakes at the exit;
 * without one (kernels before 5.3), a 100 us polling loop. */
static int wait_exit(pid_t pid, int pidfd, long long deadline_ns)
{
	for (;;) {
		long long left = deadline_ns - now_ns();
		if (pidfd >= 0) {
			struct pollfd pfd = {.fd = pidfd, .events = POLLIN};
			int ms = left <= 0 ? 0 : (int)((left + 999999) / 1000000);
			int r = poll(&pfd, 1, ms);
			if (r > 0)
				return 1;
			if (r < 0 && errno != EINTR)
				return err_set(LL_EIO, "poll on process %ld failed: %s.", (long)pid,
					       strerror(errno));
			if (r == 0 && now_ns() >= deadline_ns)
				return 0;
		} else {
			siginfo_t info;
			memset(&info, 0, sizeof(info));
			if (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT) < 0 &&
			    errno != EINTR)
				return err_set(LL_EIO, "waitid(%ld) failed: %s.", (long)pid, strerror(errno));
			if (info.si_pid == pid)
				return 1;
			if (left <= 0)
				return 0;
			struct timespec ts = {0, 100000};
			nanosleep(&ts, NULL);
		}
	}
}

int plat_measure_run(const struct plat_spawn_options *options, long long timeout_ms, bool with_counters,
		     struct plat_measure_counters *ret)
{
	struct plat_measure_counters k = plat_measure_counters_unknown();
	struct perf_pair perf = {-1, -1};
	struct child_args a;
	struct rusage ru;
	sigset_t all, old;
	char **env = NULL;
	char *stack = NULL;
	int pidfd = -1, status = 0, rc, policy, flags = CLONE_VM | CLONE_VFORK | CLONE_PIDFD | SIGCHLD;
	long long start, end, deadline;
	pid_t pid;
	size_t argc = plat_posix_count(options->argv);

	memset(&a, 0, sizeof(a));
	a.fds[0] = a.fds[1] = a.fds[2] = -1;
	if (argc == 0)
		return err_set(LL_EINVAL, "No program to start.");
	if (argc > PLAT_MAX_ARGS)
		return err_set(LL_ETOOBIG, "More than %u arguments.", PLAT_MAX_ARGS);
	if (timeout_ms <= 0)
		return err_set(LL_EINVAL, "A measured run needs a timeout.");
	if ((rc = plat_posix_environment(options->env_add, &env)) < 0)
		return rc;
	if (!(stack = malloc(CHILD_STACK_BYTES))) {
		rc = err_set(LL_ENOMEM, "Out of memory.");
		goto out;
	}
	a.path = options->argv[0];
	a.argv = (char *const *)options->argv;
	a.envp = env;
	a.cwd = options->cwd;
	policy = sched_getscheduler(0) & ~SCHED_RESET_ON_FORK;
	a.realtime = policy == SCHED_FIFO || policy == SCHED_RR;
	a.fds[0] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	a.fds[1] = open_output(options->stdout_path);
	if (options->stderr_path && options->stdout_path &&
	    strcmp(options->stderr_path, options->stdout_path) == 0)
		a.fds[2] = fcntl(a.fds[1], F_DUPFD_CLOEXEC, 3);
	else
		a.fds[2] = open_output(options->stderr_path);
	if (a.fds[0] < 0 || a.fds[1] < 0 || a.fds[2] < 0) {
		rc = err_set(LL_EIO, "Cannot open the output files of %s: %s.", a.path, strerror(errno));
		goto out;
	}
	perf_begin(&perf);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	a.mask = old;
	start = now_ns();
	pid = clone(child_main, stack + CHILD_STACK_BYTES, flags, &a, &pidfd);
	if (pid < 0 && errno == EINVAL) {
		/* No CLONE_PIDFD (Linux before 5.2): wait_exit() polls. */
		pidfd = -1;
		start = now_ns();
		pid = clone(child_main, stack + CHILD_STACK_BYTES, flags & ~CLONE_PIDFD, &a, NULL);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (pid < 0) {
		rc = err_set(LL_EIO, "Cannot start %s: clone failed: %s.", a.path, strerror(errno));
		goto out;
	}
	if (a.error) {
		reap(pid, &status, &ru);
		rc = err_set(LL_EIO, "Cannot start %s: %s.", a.path, strerror(a.error));
		goto out;
	}
	deadline = start + timeout_ms * 1000000LL;
	rc = wait_exit(pid, pidfd, deadline);
	if (rc <= 0) {
		kill(pid, SIGKILL);
		reap(pid, &status, &ru);
		if (rc == 0)
			rc = err_set(LL_ERANGE, "%s was still running after %lld ms and was killed.", a.path,
				     timeout_ms);
		goto out;
	}
	if (with_counters) {
		/* The exit is seen (waitid succeeded in wait_exit or poll said
		 * so); /proc/PID/io stays readable until the reap below. */
		siginfo_t info;
		memset(&info, 0, sizeof(info));
		while (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT) < 0 && errno == EINTR)
			;
		end = now_ns();
		read_proc_io(pid, &k);
		if (reap(pid, &status, &ru) != pid) {
			rc = err_set(LL_EIO, "wait4(%ld) failed: %s.", (long)pid, strerror(errno));
			goto out;
		}
	} else {
		if (reap(pid, &status, &ru) != pid) {
			rc = err_set(LL_EIO, "wait4(%ld) failed: %s.", (long)pid, strerror(errno));
			goto out;
		}
		end = now_ns();
	}
	k.wall_ns = end - start;
	k.exit_code = exit_code_of(status);
	k.pid = pid;
	k.hard_faults = ru.ru_majflt;
	k.soft_faults = ru.ru_minflt;
	k.page_faults = ru.ru_majflt + ru.ru_minflt;
	k.cpu_user_ns = timeval_ns(&ru.ru_utime);
	k.cpu_system_ns = timeval_ns(&ru.ru_stime);
	k.voluntary_switches = ru.ru_nvcsw;
	k.involuntary_switches = ru.ru_nivcsw;
	perf_end(&perf, &k);
	*ret = k;
	rc = 0;
out:
	perf_close(&perf);
	if (pidfd >= 0)
		close(pidfd);
	for (int i = 0; i < 3; i++)
		if (a.fds[i] >= 0)
			close(a.fds[i]);
	free(stack);
	free(env);
	return rc;
}

long long plat_measure_children_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_CHILDREN, &ru) < 0)
		return 0;
	return ((long long)ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000LL +
	       ((long long)ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000LL;
}

/* ---- The page cache ---- */

int plat_measure_residency(const char *path, long long *ret_resident, long long *ret_pages)
{
	long page = sysconf(_SC_PAGESIZE);
	struct stat st;
	unsigned char *vec = NULL;
	void *map = MAP_FAILED;
	long long pages, resident = 0;
	int fd, rc = 0;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return err_set(LL_EIO, "Cannot open %s: %s.", path, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		rc = err_set(LL_EIO, "%s is not a regular file.", path);
		goto out;
	}
	pages = ((long long)st.st_size + page - 1) / page;
	if (pages > 0) {
		/* Mapping does not fault pages in: mincore then reports the page
		 * cache (for a file the caller owns or may write, Linux 5.2+). */
		map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
		if (map == MAP_FAILED || !(vec = malloc((size_t)pages))) {
			rc = err_set(LL_EIO, "Cannot map %s: %s.", path, strerror(errno));
			goto out;
		}
		if (mincore(map, (size_t)st.st_size, vec) < 0) {
			rc = err_set(LL_EIO, "mincore on %s failed: %s.", path, strerror(errno));
			goto out;
		}
		for (long long i = 0; i < pages; i++)
			resident += vec[i] & 1;
	}
	*ret_resident = resident;
	*ret_pages = pages;
out:
	if (map != MAP_FAILED)
		munmap(map, (size_t)st.st_size);
	free(vec);
	close(fd);
	return rc;
}

int plat_measure_evict(const char *const *files, struct plat_measure_eviction *ret)
{
	struct plat_measure_eviction e;
	long long total = 0;
	int rc;

	memset(&e, 0, sizeof(e));
	snprintf(e.method, sizeof(e.method), "fdatasync+posix_fadvise(DONTNEED), checked by mincore");
	for (size_t i = 0; files && files[i]; i++) {
		int fd = open(files[i], O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return err_set(LL_EIO, "Cannot open %s to evict it: %s.", files[i], strerror(errno));
		/* Dirty pages cannot be dropped: write them first. */
		fdatasync(fd);
		rc = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		close(fd);
		if (rc != 0)
			return err_set(LL_EIO, "posix_fadvise on %s failed: %s.", files[i], strerror(rc));
	}
	for (size_t i = 0; files && files[i]; i++) {
		long long resident, pages;
		if ((rc = plat_measure_residency(files[i], &resident, &pages)) < 0)
			return rc;
		total += resident;
	}
	e.done = true;
	e.verified = true;
	e.resident_pages = total;
	if (total > 0)
		snprintf(e.note, sizeof(e.note),
			 "%lld pages stayed resident (mapped by a running process, or a file system "
			 "that keeps its pages, such as tmpfs).",
			 total);
	*ret = e;
	return 0;
}

#endif
