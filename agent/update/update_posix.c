/* update_posix.c - update.h's OS backend where there is /proc/self/exe
 * and execv(). */
#ifndef _WIN32
#include "update/update.h"

#include "loadlab/err.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

#endif
