/*
 * plat_fs_posix.c - plat.h's files and folders on POSIX.
 */
#ifndef _WIN32

#include "loadlab/plat.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <unistd.h>

#include "loadlab/err.h"

const char plat_path_separator = '/';

/* mkdir -p with MODE for the folders it creates. */
static int make_dirs(const char *path, mode_t mode)
{
	char copy[PLAT_MAX_PATH + 1];
	size_t len = strlen(path), i;
	struct stat st;

	if (len == 0 || len > PLAT_MAX_PATH)
		return err_set(LL_EINVAL, "The folder name '%s' is empty or too long.", path);
	memcpy(copy, path, len + 1);
	for (i = 1; i <= len; i++) {
		if (copy[i] != '/' && copy[i] != '\0')
			continue;
		char saved = copy[i];
		copy[i] = '\0';
		if (mkdir(copy, mode) < 0 && errno != EEXIST)
			return err_set(LL_EIO, "Cannot create folder %s: %s.", copy, strerror(errno));
		copy[i] = saved;
	}
	if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
		return err_set(LL_EIO, "%s exists and is not a folder.", path);
	return 0;
}

int plat_mkdirs(const char *path)
{
	return make_dirs(path, 0755);
}

int plat_mkdirs_private(const char *path)
{
	return make_dirs(path, 0700);
}

/* Removes NAME in folder DIRFD; SHOWN is the top path, for messages. */
static int remove_at(int dirfd, const char *name, const char *shown, int depth)
{
	struct stat st;
	DIR *dir;
	struct dirent *entry;
	int fd, rc = 0;

	if (depth > 64)
		return err_set(LL_ETOOBIG, "Folder tree %s deeper than 64 levels.", shown);
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : err_set(LL_EIO, "Cannot remove %s: %s.", shown, strerror(errno));
	if (!S_ISDIR(st.st_mode)) {
		if (unlinkat(dirfd, name, 0) < 0 && errno != ENOENT)
			return err_set(LL_EIO, "Cannot remove %s: %s.", shown, strerror(errno));
		return 0;
	}
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || !(dir = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return err_set(LL_EIO, "Cannot open folder %s: %s.", shown, strerror(errno));
	}
	while (rc == 0 && (entry = readdir(dir)) != NULL)
		if (strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0)
			rc = remove_at(fd, entry->d_name, shown, depth + 1);
	closedir(dir);
	if (rc == 0 && unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		rc = err_set(LL_EIO, "Cannot remove folder %s: %s.", shown, strerror(errno));
	return rc;
}

int plat_remove_tree(const char *path)
{
	if (strlen(path) == 0 || strlen(path) > PLAT_MAX_PATH)
		return err_set(LL_EINVAL, "Bad path to remove.");
	return remove_at(AT_FDCWD, path, path, 0);
}

int plat_remove_file(const char *path)
{
	if (unlink(path) < 0 && errno != ENOENT)
		return err_set(LL_EIO, "Cannot remove %s: %s.", path, strerror(errno));
	return 0;
}

/* Writes all LEN bytes of DATA to FD; NAME for the message. */
static int write_all(int fd, const void *data, size_t len, const char *name)
{
	const char *p = data;

	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return err_set(LL_EIO, "Cannot write %s: %s.", name, strerror(errno));
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int plat_copy_file(const char *src, const char *dst)
{
	char block[65536];
	int in = -1, out = -1, rc = 0;
	ssize_t n;

	in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return err_set(LL_EIO, "Cannot open %s: %s.", src, strerror(errno));
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	if (out < 0) {
		rc = err_set(LL_EIO, "Cannot create %s: %s.", dst, strerror(errno));
		goto out;
	}
	while ((n = read(in, block, sizeof(block))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = err_set(LL_EIO, "Cannot read %s: %s.", src, strerror(errno));
			goto out;
		}
		if ((rc = write_all(out, block, (size_t)n, dst)) < 0)
			goto out;
	}
out:
	if (in >= 0)
		close(in);
	if (out >= 0 && close(out) < 0 && rc == 0)
		rc = err_set(LL_EIO, "Cannot write %s: %s.", dst, strerror(errno));
	return rc;
}

int plat_link_file(const char *src, const char *dst, bool *ret_linked)
{
	bool linked = false;
	int rc = 0;

	if (unlink(dst) < 0 && errno != ENOENT)
		return err_set(LL_EIO, "Cannot replace %s: %s.", dst, strerror(errno));
	if (link(src, dst) == 0)
		linked = true;
	else if (errno == EXDEV || errno == EPERM || errno == EMLINK || errno == ENOTSUP ||
		 errno == EOPNOTSUPP)
		rc = plat_copy_file(src, dst);
	else
		rc = err_set(LL_EIO, "Cannot link %s to %s: %s.", dst, src, strerror(errno));
	if (rc == 0 && ret_linked)
		*ret_linked = linked;
	return rc;
}

int plat_free_bytes(const char *path, long long *ret_bytes)
{
	struct statvfs st;

	if (statvfs(path, &st) < 0)
		return err_set(LL_EIO, "Cannot read the free space of %s: %s.", path, strerror(errno));
	*ret_bytes = (long long)st.f_bavail * (long long)st.f_frsize;
	return 0;
}

bool plat_file_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

bool plat_is_executable(const char *path)
{
	return plat_file_exists(path) && access(path, X_OK) == 0;
}

int plat_make_executable(const char *path)
{
	if (chmod(path, 0755) != 0)
		return err_set(LL_EIO, "Cannot make %s executable: %s.", path, strerror(errno));
	return 0;
}

int plat_write_file_atomic(const char *path, const void *data, size_t len, bool private_mode)
{
	char *tmp = NULL;
	int fd, rc = 0;

	if (asprintf(&tmp, "%s.tmp%ld", path, (long)getpid()) < 0)
		return err_set(LL_ENOMEM, "Out of memory.");
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, private_mode ? 0600 : 0644);
	if (fd < 0) {
		rc = err_set(LL_EIO, "Cannot create %s: %s.", tmp, strerror(errno));
		goto out;
	}
	rc = write_all(fd, data, len, tmp);
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

int plat_list_dir(const char *path, int (*visit)(void *context, const char *name), void *context)
{
	DIR *dir = opendir(path);
	struct dirent *entry;
	int rc = 0;

	if (!dir)
		return errno == ENOENT ? 0
				       : err_set(LL_EIO, "Cannot read folder %s: %s.", path, strerror(errno));
	while (rc == 0 && (entry = readdir(dir)))
		if (strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0)
			rc = visit(context, entry->d_name);
	closedir(dir);
	return rc;
}

int plat_make_temp_dir(const char *prefix, char **ret_path)
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

#endif /* !_WIN32 */
