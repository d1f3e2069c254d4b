/* os.h on Linux and other POSIX systems. */
#ifndef _WIN32

#include "os.h"

#include "loadlab/err.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

const char os_path_separator = '/';

/* Lock-free, so the signal handler may store to it. */
static atomic_int stop_flag;

static void on_stop_signal(int signo)
{
	(void)signo;
	atomic_store(&stop_flag, 1);
}

int os_install_stop_handler(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTERM, &sa, NULL) < 0 || sigaction(SIGINT, &sa, NULL) < 0)
		return err_set(LL_EIO, "Cannot install the stop handler: %s.", strerror(errno));
	/* A server that closes a connection must not kill the agent. */
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	return 0;
}

bool os_stop_requested(void)
{
	return atomic_load(&stop_flag) != 0;
}

void os_request_stop(void)
{
	atomic_store(&stop_flag, 1);
}

bool os_sleep_ms(long long ms)
{
	while (ms > 0) {
		long long slice = ms < 100 ? ms : 100;
		struct timespec ts = {(time_t)(slice / 1000), (long)(slice % 1000) * 1000000L};

		if (os_stop_requested())
			return false;
		nanosleep(&ts, NULL);
		ms -= slice;
	}
	return !os_stop_requested();
}

void os_nap_ms(long long ms)
{
	struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int os_make_dirs(const char *path)
{
	char tmp[PATH_MAX];
	size_t len = strlen(path);

	if (len == 0 || len >= sizeof(tmp))
		return err_set(LL_EINVAL, "The folder name '%s' is empty or too long.", path);
	memcpy(tmp, path, len + 1);
	for (size_t i = 1; i <= len; i++) {
		if (tmp[i] != '/' && tmp[i] != '\0')
			continue;
		tmp[i] = '\0';
		if (mkdir(tmp, 0700) < 0 && errno != EEXIST)
			return err_set(LL_EIO, "Cannot create folder %s: %s.", tmp, strerror(errno));
		tmp[i] = path[i];
	}
	return 0;
}

static int remove_at(int parent, const char *name, const char *shown)
{
	struct stat st;
	DIR *dir;
	struct dirent *entry;
	int fd, rc = 0;

	if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : err_set(LL_EIO, "Cannot remove %s: %s.", shown, strerror(errno));
	if (!S_ISDIR(st.st_mode)) {
		if (unlinkat(parent, name, 0) < 0 && errno != ENOENT)
			return err_set(LL_EIO, "Cannot remove %s: %s.", shown, strerror(errno));
		return 0;
	}
	fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || !(dir = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return err_set(LL_EIO, "Cannot open folder %s: %s.", shown, strerror(errno));
	}
	while (rc == 0 && (entry = readdir(dir)))
		if (strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0)
			rc = remove_at(dirfd(dir), entry->d_name, shown);
	closedir(dir);
	if (rc == 0 && unlinkat(parent, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		rc = err_set(LL_EIO, "Cannot remove folder %s: %s.", shown, strerror(errno));
	return rc;
}

int os_remove_tree(const char *path)
{
	return remove_at(AT_FDCWD, path, path);
}

int os_remove_file(const char *path)
{
	if (unlink(path) < 0 && errno != ENOENT)
		return err_set(LL_EIO, "Cannot remove %s: %s.", path, strerror(errno));
	return 0;
}

bool os_file_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

bool os_is_executable(const char *path)
{
	return os_file_exists(path) && access(path, X_OK) == 0;
}

int os_write_file_atomic(const char *path, const void *data, size_t len, bool private_mode)
{
	char *tmp = NULL;
	const char *p = data;
	int fd, rc = 0;

	if (asprintf(&tmp, "%s.tmp%ld", path, (long)getpid()) < 0)
		return err_set(LL_ENOMEM, "Out of memory.");
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, private_mode ? 0600 : 0644);
	if (fd < 0) {
		rc = err_set(LL_EIO, "Cannot create %s: %s.", tmp, strerror(errno));
		goto out;
	}
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = err_set(LL_EIO, "Cannot write %s: %s.", tmp, strerror(errno));
			break;
		}
		p += n;
		len -= (size_t)n;
	}
	if (rc == 0 && fsync(fd) < 0)
		rc = err_set(LL_EIO, "Cannot flush %s: %s.", tmp, strerror(errno));
	if (close(fd) < 0 && rc == 0)
		rc = err_set(LL_EIO, "Cannot write %s: %s.", tmp, strerror(errno));
	if (rc == 0 && rename(tmp, path) < 0)
		rc = err_set(LL_EIO, "Cannot rename %s to %s: %s.", tmp, path, strerror(errno));
	if (rc < 0)
		unlink(tmp);
out:
	free(tmp);
	return rc;
}

int os_list_dir(const char *path, int (*visit)(void *context, const char *name), void *context)
{
	DIR *dir = opendir(path);
	struct dirent *entry;
	int rc = 0;

	if (!dir)
		return errno == ENOENT ? 0 : err_set(LL_EIO, "Cannot read folder %s: %s.", path, strerror(errno));
	while (rc == 0 && (entry = readdir(dir)))
		if (strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0)
			rc = visit(context, entry->d_name);
	closedir(dir);
	return rc;
}

int os_make_temp_dir(const char *prefix, char **ret_path)
{
	const char *base = getenv("TMPDIR");
	char *path = NULL;

	if (!base || !*base)
		base = "/tmp";
	if (asprintf(&path, "%s/%s-XXXXXX", base, prefix) < 0)
		return err_set(LL_ENOMEM, "Out of memory.");
	if (!mkdtemp(path)) {
		int rc = err_set(LL_EIO, "Cannot create a folder in %s: %s.", base, strerror(errno));
		free(path);
		return rc;
	}
	*ret_path = path;
	return 0;
}

void os_host_name(char *out, size_t size)
{
	if (gethostname(out, size) < 0 || !*out)
		snprintf(out, size, "agent");
	out[size - 1] = '\0';
}

unsigned os_random_seed(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (unsigned)tv.tv_sec ^ (unsigned)tv.tv_usec * 2654435761u ^ (unsigned)getpid() << 16;
}

const char *os_getenv(const char *name)
{
	return getenv(name);
}

struct os_thread {
	pthread_t id;
	void (*fn)(void *arg);
	void *arg;
};

static void *thread_main(void *p)
{
	struct os_thread *t = p;

	t->fn(t->arg);
	return NULL;
}

int os_thread_start(void (*fn)(void *arg), void *arg, struct os_thread **ret_thread)
{
	struct os_thread *t = calloc(1, sizeof(*t));
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

void os_thread_join(struct os_thread *thread)
{
	if (!thread)
		return;
	pthread_join(thread->id, NULL);
	free(thread);
}

#endif
