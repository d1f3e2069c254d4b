/*
 * elf_launcher.c - starts an ELF program of the program family
 * (agent/family/program/program_elf_measure.c) the way a variant asks.
 * Compiled with the host's cc when loadlab-agent is built on Linux and
 * shipped inside it.
 *
 *	elf_launcher [--pagein FILE]... [--idle-ms N] -- PROGRAM [ARGS...]
 *
 * --pagein FILE  reads FILE once, from start to end in 64 KiB reads, before
 *                PROGRAM starts: the office suite's `pagein` helper, which
 *                its soffice wrapper ran before soffice.bin. The reads are
 *                part of the launcher's life, so of the timed start.
 * --idle-ms N    runs PROGRAM as a child and ends it (SIGKILL) once its
 *                /proc/PID/maps has not changed for N ms (no new mapping:
 *                it loads nothing more), then exits 0; a PROGRAM that exits
 *                first passes its own exit code on (128 + N for a signal).
 *                The child dies with the launcher (PR_SET_PDEATHSIG).
 * Without --idle-ms the launcher becomes PROGRAM (execv): the process, its
 * counters and its exit code are the program's.
 *
 * Exit codes of its own: 2 bad arguments, 3 a --pagein file cannot be
 * read, 4 PROGRAM cannot be started.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define POLL_MS 20
#define MAX_MAPS (4u * 1024u * 1024u)

static int page_in(const char *path)
{
	static char chunk[64 * 1024];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while ((n = read(fd, chunk, sizeof(chunk))) > 0)
		;
	close(fd);
	return n < 0 ? -1 : 0;
}

/* FNV-1a of /proc/PID/maps; 0 when it cannot be read (the child is gone). */
static uint64_t maps_digest(pid_t pid)
{
	static char text[MAX_MAPS];
	char path[64];
	uint64_t h = 1469598103934665603ull;
	ssize_t n, total = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	while (total < (ssize_t)sizeof(text) && (n = read(fd, text + total, sizeof(text) - total)) > 0)
		total += n;
	close(fd);
	for (ssize_t i = 0; i < total; i++)
		h = (h ^ (unsigned char)text[i]) * 1099511628211ull;
	return h;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int exit_code_of(int status)
{
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int run_until_idle(char **argv, long long idle_ms)
{
	struct timespec pause = {0, POLL_MS * 1000000L};
	long long changed;
	uint64_t last = 0, d;
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return 4;
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execv(argv[0], argv);
		_exit(4);
	}
	changed = now_ms();
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			return exit_code_of(status);
		if (w < 0 && errno != EINTR)
			return 4;
		if ((d = maps_digest(pid)) != last) {
			last = d;
			changed = now_ms();
		} else if (now_ms() - changed >= idle_ms) {
			kill(pid, SIGKILL);
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
			return 0;
		}
		nanosleep(&pause, NULL);
	}
}

int main(int argc, char **argv)
{
	long long idle_ms = 0;
	int i = 1;

	for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "--pagein") == 0 && i + 1 < argc) {
			if (page_in(argv[++i]) < 0) {
				fprintf(stderr, "elf_launcher: cannot read %s\n", argv[i]);
				return 3;
			}
		} else if (strcmp(argv[i], "--idle-ms") == 0 && i + 1 < argc) {
			char *end;
			idle_ms = strtoll(argv[++i], &end, 10);
			if (*end || idle_ms < 1 || idle_ms > 3600000)
				return 2;
		} else {
			fprintf(stderr, "usage: elf_launcher [--pagein FILE]... [--idle-ms N] -- PROGRAM "
					"[ARGS...]\n");
			return 2;
		}
	}
	if (i + 1 >= argc)
		return 2;
	if (idle_ms > 0)
		return run_until_idle(argv + i + 1, idle_ms);
	execv(argv[i + 1], argv + i + 1);
	fprintf(stderr, "elf_launcher: cannot start %s: %s\n", argv[i + 1], strerror(errno));
	return 4;
}
