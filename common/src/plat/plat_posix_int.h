/*
 * plat_posix_int.h - the pieces of the POSIX backend (plat_posix.c) that
 * its other POSIX files (plat_measure_posix.c) share. POSIX builds only.
 */
#ifndef LOADLAB_PLAT_POSIX_INT_H
#define LOADLAB_PLAT_POSIX_INT_H

#include <stddef.h>

/* The number of entries of a NULL-terminated LIST (0 for NULL). */
size_t plat_posix_count(const char *const *list);

/* environ with ADD ("KEY=VALUE", NULL-terminated, may be NULL) applied:
 * an entry replaces the parent's of the same key. The array is malloc'd
 * (the caller frees it), its strings borrowed. LL_ETOOBIG beyond
 * PLAT_MAX_ARGS additions. */
int plat_posix_environment(const char *const *add, char ***ret_env);

#endif
