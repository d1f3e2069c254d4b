/*
 * plat_spawn_posix.h - building blocks of the POSIX backend's spawn
 * (src/plat/plat_posix.c) for code that starts processes its own way, such
 * as the agent's load timer (agent/measure/plat_measure_posix.c, which
 * clones and execs with less overhead than plat_spawn()). POSIX builds
 * only; callers are themselves POSIX-only backends.
 */
#ifndef LOADLAB_PLAT_SPAWN_POSIX_H
#define LOADLAB_PLAT_SPAWN_POSIX_H

#include <stddef.h>

/* The number of entries of a NULL-terminated LIST (0 for NULL). */
size_t plat_posix_count(const char *const *list);

/* environ with ADD ("KEY=VALUE", NULL-terminated, may be NULL) applied:
 * an entry replaces the parent's of the same key. The array is malloc'd
 * (the caller frees it), its strings borrowed. LL_ETOOBIG beyond
 * PLAT_MAX_ARGS additions. */
int plat_posix_environment(const char *const *add, char ***ret_env);

#endif
