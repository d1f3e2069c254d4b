/*
 * plat_fs_win32.c - plat.h's files and folders on Windows, XP-safe (ANSI
 * calls of XP's kernel32; '/' and '\\' both taken as separators).
 */
#ifdef _WIN32

#include "loadlab/plat.h"

#include <windows.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadlab/err.h"

const char plat_path_separator = '\\';

static bool is_separator(char c)
{
	return c == '/' || c == '\\';
}

static bool is_missing(DWORD e)
{
	return e == ERROR_FILE_NOT_FOUND || e == ERROR_PATH_NOT_FOUND;
}

static bool is_folder(const char *path)
{
	DWORD a = GetFileAttributesA(path);
	return a != INVALID_FILE_ATTRIBUTES && (a & FILE_ATTRIBUTE_DIRECTORY);
}

int plat_mkdirs(const char *path)
{
	char copy[PLAT_MAX_PATH + 1];
	size_t len = strlen(path), start = 0;

	if (len == 0 || len > PLAT_MAX_PATH)
		return err_set(LL_EINVAL, "The folder name '%s' is empty or too long.", path);
	memcpy(copy, path, len + 1);
	/* Skip "C:\" and "\\server\share\": they exist or cannot be made. */
	if (len >= 2 && copy[1] == ':') {
		start = 2;
	} else if (len >= 2 && is_separator(copy[0]) && is_separator(copy[1])) {
		int parts = 0;
		for (start = 2; start < len && parts < 2; start++)
			if (is_separator(copy[start]))
				parts++;
	}
	for (size_t i = start + 1; i <= len; i++) {
		if (!is_separator(copy[i]) && copy[i] != '\0')
			continue;
		char saved = copy[i];
		copy[i] = '\0';
		if (!CreateDirectoryA(copy, NULL)) {
			DWORD e = GetLastError();
			if (e != ERROR_ALREADY_EXISTS && !is_folder(copy))
				return err_set(LL_EIO, "Cannot create folder %s (error %lu).", copy,
					       (unsigned long)e);
		}
		copy[i] = saved;
	}
	if (!is_folder(path))
		return err_set(LL_EIO, "%s exists and is not a folder.", path);
	return 0;
}

int plat_mkdirs_private(const char *path)
{
	return plat_mkdirs(path); /* the parent's ACL is inherited */
}

static int remove_tree(const char *path, int depth)
{
	char pattern[PLAT_MAX_PATH + 1];
	WIN32_FIND_DATAA entry;
	HANDLE find;
	int rc = 0;
	DWORD a = GetFileAttributesA(path);

	if (a == INVALID_FILE_ATTRIBUTES)
		return is_missing(GetLastError()) ? 0
						  : err_set(LL_EIO, "Cannot remove %s (error %lu).", path,
							    (unsigned long)GetLastError());
	if (depth > 64)
		return err_set(LL_ETOOBIG, "Folder tree deeper than 64 levels.");
	if (a & FILE_ATTRIBUTE_READONLY)
		SetFileAttributesA(path, a & ~(DWORD)FILE_ATTRIBUTE_READONLY);
	/* A reparse point (junction, link) is removed itself, never entered. */
	if (!(a & FILE_ATTRIBUTE_DIRECTORY) || (a & FILE_ATTRIBUTE_REPARSE_POINT)) {
		BOOL ok = (a & FILE_ATTRIBUTE_DIRECTORY) ? RemoveDirectoryA(path) : DeleteFileA(path);
		if (!ok && !is_missing(GetLastError()))
			return err_set(LL_EIO, "Cannot remove %s (error %lu).", path,
				       (unsigned long)GetLastError());
		return 0;
	}
	if ((size_t)snprintf(pattern, sizeof(pattern), "%s\\*", path) >= sizeof(pattern))
		return err_set(LL_ETOOBIG, "Path %s is too long.", path);
	find = FindFirstFileA(pattern, &entry);
	if (find != INVALID_HANDLE_VALUE) {
		do {
			char child[PLAT_MAX_PATH + 1];
			if (strcmp(entry.cFileName, ".") == 0 || strcmp(entry.cFileName, "..") == 0)
				continue;
			if ((size_t)snprintf(child, sizeof(child), "%s\\%s", path, entry.cFileName) >=
			    sizeof(child))
				rc = err_set(LL_ETOOBIG, "Path below %s is too long.", path);
			else
				rc = remove_tree(child, depth + 1);
		} while (rc == 0 && FindNextFileA(find, &entry));
		FindClose(find);
	}
	if (rc == 0 && !RemoveDirectoryA(path) && !is_missing(GetLastError()))
		rc = err_set(LL_EIO, "Cannot remove folder %s (error %lu).", path,
			     (unsigned long)GetLastError());
	return rc;
}

int plat_remove_tree(const char *path)
{
	if (strlen(path) == 0 || strlen(path) > PLAT_MAX_PATH)
		return err_set(LL_EINVAL, "Bad path to remove.");
	return remove_tree(path, 0);
}

int plat_remove_file(const char *path)
{
	if (!DeleteFileA(path) && !is_missing(GetLastError()))
		return err_set(LL_EIO, "Cannot remove %s (error %lu).", path, (unsigned long)GetLastError());
	return 0;
}

int plat_copy_file(const char *src, const char *dst)
{
	if (!CopyFileA(src, dst, FALSE))
		return err_set(LL_EIO, "Cannot copy %s to %s (error %lu).", src, dst,
			       (unsigned long)GetLastError());
	return 0;
}

int plat_link_file(const char *src, const char *dst, bool *ret_linked)
{
	int rc = 0;
	bool linked;

	if (!DeleteFileA(dst) && !is_missing(GetLastError()))
		return err_set(LL_EIO, "Cannot replace %s (error %lu).", dst, (unsigned long)GetLastError());
	/* FAT, another volume or too many links: a copy instead. */
	linked = CreateHardLinkA(dst, src, NULL) != 0;
	if (!linked)
		rc = plat_copy_file(src, dst);
	if (rc == 0 && ret_linked)
		*ret_linked = linked;
	return rc;
}

int plat_free_bytes(const char *path, long long *ret_bytes)
{
	ULARGE_INTEGER available;

	if (!GetDiskFreeSpaceExA(path, &available, NULL, NULL))
		return err_set(LL_EIO, "Cannot read the free space of %s (error %lu).", path,
			       (unsigned long)GetLastError());
	*ret_bytes = (long long)available.QuadPart;
	return 0;
}

bool plat_file_exists(const char *path)
{
	DWORD a = GetFileAttributesA(path);
	return a != INVALID_FILE_ATTRIBUTES && !(a & FILE_ATTRIBUTE_DIRECTORY);
}

bool plat_is_executable(const char *path)
{
	return plat_file_exists(path);
}

int plat_make_executable(const char *path)
{
	(void)path;
	return 0;
}

int plat_write_file_atomic(const char *path, const void *data, size_t len, bool private_mode)
{
	char tmp[PLAT_MAX_PATH + 32];
	const char *p = data;
	HANDLE file;
	int rc = 0;

	(void)private_mode; /* the data folder's ACL decides who may read */
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp%lu", path, (unsigned long)GetCurrentProcessId()) >=
	    sizeof(tmp))
		return err_set(LL_EINVAL, "The path %s is too long.", path);
	file = CreateFileA(tmp, GENERIC_WRITE, 0, NULL, CREATE_ALWAYS, FILE_ATTRIBUTE_NORMAL, NULL);
	if (file == INVALID_HANDLE_VALUE)
		return err_set(LL_EIO, "Cannot create %s (error %lu).", tmp, (unsigned long)GetLastError());
	while (len > 0 && rc == 0) {
		DWORD chunk = len > (1u << 30) ? (1u << 30) : (DWORD)len, written = 0;
		if (!WriteFile(file, p, chunk, &written, NULL) || written == 0)
			rc = err_set(LL_EIO, "Cannot write %s (error %lu).", tmp,
				     (unsigned long)GetLastError());
		p += written;
		len -= written;
	}
	if (rc == 0 && !FlushFileBuffers(file))
		rc = err_set(LL_EIO, "Cannot flush %s (error %lu).", tmp, (unsigned long)GetLastError());
	CloseHandle(file);
	if (rc == 0 && !MoveFileExA(tmp, path, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH))
		rc = err_set(LL_EIO, "Cannot rename %s to %s (error %lu).", tmp, path,
			     (unsigned long)GetLastError());
	if (rc < 0)
		DeleteFileA(tmp);
	return rc;
}

int plat_list_dir(const char *path, int (*visit)(void *context, const char *name), void *context)
{
	WIN32_FIND_DATAA entry;
	char pattern[PLAT_MAX_PATH + 1];
	HANDLE find;
	int rc = 0;

	if ((size_t)snprintf(pattern, sizeof(pattern), "%s\\*", path) >= sizeof(pattern))
		return err_set(LL_EINVAL, "The path %s is too long.", path);
	find = FindFirstFileA(pattern, &entry);
	if (find == INVALID_HANDLE_VALUE)
		return is_missing(GetLastError()) || GetLastError() == ERROR_NO_MORE_FILES
			       ? 0
			       : err_set(LL_EIO, "Cannot read folder %s (error %lu).", path,
					 (unsigned long)GetLastError());
	do {
		if (strcmp(entry.cFileName, ".") != 0 && strcmp(entry.cFileName, "..") != 0)
			rc = visit(context, entry.cFileName);
	} while (rc == 0 && FindNextFileA(find, &entry));
	FindClose(find);
	return rc;
}

int plat_make_temp_dir(const char *prefix, char **ret_path)
{
	char base[MAX_PATH], path[MAX_PATH + 64];
	DWORD n = GetTempPathA(sizeof(base), base);

	if (n == 0 || n >= sizeof(base))
		return err_set(LL_EIO, "The system has no temporary folder.");
	for (unsigned i = 0; i < 1000; i++) {
		snprintf(path, sizeof(path), "%s%s-%lu-%lu", base, prefix,
			 (unsigned long)GetCurrentProcessId(), (unsigned long)(GetTickCount() + i));
		if (CreateDirectoryA(path, NULL)) {
			*ret_path = strdup(path);
			return *ret_path ? 0 : err_set(LL_ENOMEM, "Out of memory.");
		}
		if (GetLastError() != ERROR_ALREADY_EXISTS)
			break;
	}
	return err_set(LL_EIO, "Cannot create a folder in %s (error %lu).", base,
		       (unsigned long)GetLastError());
}

#endif /* _WIN32 */
