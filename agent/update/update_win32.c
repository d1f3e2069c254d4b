/* update_win32.c - update.h's OS backend on Windows (XP-era calls only). A
 * running program's file cannot be written or removed there, but it can
 * be renamed: EXE is moved aside before the new file takes its name. */
#ifdef _WIN32
#include "update/update.h"

#include "loadlab/err.h"

#include <windows.h>
#include <stdio.h>
#include <string.h>

static int move_error(const char *from, const char *to)
{
	return err_set(LL_EIO, "Cannot move %s to %s (error %lu).", from, to, (unsigned long)GetLastError());
}

/* Puts FROM (a copy) at EXE, EXE running or not: EXE moved to EXE.old
 * first (an older one removed; it may be running, then it stays). */
static int replace(const char *exe, const char *from)
{
	char old[MAX_PATH + 16], tmp[MAX_PATH + 16];

	snprintf(old, sizeof(old), "%s.old", exe);
	snprintf(tmp, sizeof(tmp), "%s.tmp", exe);
	if (!CopyFileA(from, tmp, FALSE))
		return move_error(from, tmp);
	DeleteFileA(old);
	if (GetFileAttributesA(exe) != INVALID_FILE_ATTRIBUTES &&
	    !MoveFileExA(exe, old, MOVEFILE_REPLACE_EXISTING)) {
		int rc = move_error(exe, old);
		DeleteFileA(tmp);
		return rc;
	}
	if (!MoveFileExA(tmp, exe, MOVEFILE_REPLACE_EXISTING)) {
		int rc = move_error(tmp, exe);
		MoveFileExA(old, exe, MOVEFILE_REPLACE_EXISTING);
		DeleteFileA(tmp);
		return rc;
	}
	return 0;
}

int update_plat_install(const char *exe, const char *new_file, const char *previous)
{
	char tmp[MAX_PATH + 16];

	/* The running EXE's bytes can be read: PREVIOUS is a copy. */
	snprintf(tmp, sizeof(tmp), "%s.tmp", previous);
	if (!CopyFileA(exe, tmp, FALSE))
		return move_error(exe, tmp);
	if (!MoveFileExA(tmp, previous, MOVEFILE_REPLACE_EXISTING)) {
		int rc = move_error(tmp, previous);
		DeleteFileA(tmp);
		return rc;
	}
	return replace(exe, new_file);
}

int update_plat_restore(const char *exe, const char *previous)
{
	return replace(exe, previous);
}

#endif
