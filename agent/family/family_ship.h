/*
 * family_ship.h - a shared build (docs/builds.md) for the families that
 * generate and build a program of libraries (pe/, elf/): the builder's
 * side (its variants' files uploaded as blobs and listed in the build's
 * result) and the measuring agent's (the same files fetched through the
 * blob cache into the variants' folders, and the result told what it ran
 * and what it changed locally).
 *
 * A build task's result (what the builder posts):
 *   {"kind": "build", "target": {...}, "variants": [{"name", "files":
 *    [{"name","sha256","size"}]}], "floor": {"name", "files"},
 *    "toolchain": {...}, "log": "...", "phases_ms": {...}, "facts", "cell"}
 * A measuring task of a shared build gets it in its lease's "build"
 * ({"task_id", "builder", "result"}, pipeline_task.build); its result adds
 * "build_task": {"id", "builder"}, takes the build's "toolchain", and has
 * per variant "shipped": {"identical": bool, "local_files": [{"name",
 * "built_sha256", "sha256", "by"}]} (the files a local transform wrote).
 */
#ifndef LOADLAB_AGENT_FAMILY_SHIP_H
#define LOADLAB_AGENT_FAMILY_SHIP_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "family/family_build.h"

/* Most bytes of the compile and link logs a build's result carries. */
#define FAMILY_SHIP_MAX_LOG (64 * 1024)

/* The folder of variant V below CTX's work folder ("v/NN") into DIR
 * (PLAT_MAX_PATH bytes), made. */
int family_ship_variant_dir(const struct family_context *ctx, size_t v, char *dir);

/* The builder: adds to RESULT "variants" (each of the COUNT VARIANTS, SIZE
 * bytes each and starting with their struct family_variant, with the files
 * of its folder), "floor" (the empty program of work/empty, named EMPTY)
 * "trace" (CTX's startup trace, when taken) and "log" (the non-empty
 * logs of CTX's obj folder), uploading every
 * file through CTX->task->put_blob (LL_EUNSUPPORTED when there is none). */
int family_ship_build(cJSON *result, const struct family_context *ctx, const struct family_names *names,
		      const void *variants, size_t count, size_t size);

/* The measuring agent: every file of the build (CTX->task->build) into the
 * folder of its variant (family_ship_variant_dir(), set as the variant's
 * dir) and the floor into work/empty, through the blob cache, each hashed
 * again (a mismatch: LL_EFORMAT, "hash mismatch"); a variant or file that
 * the build lacks: LL_EFORMAT. The build's startup trace (its "trace")
 * becomes CTX's, for the verification of trace order. */
int family_ship_fetch(struct family_context *ctx, const struct family_names *names, void *variants,
		      size_t count, size_t size);

/* The measuring agent: adds to RESULT (described) "build_task", the
 * build's "toolchain" in place of the result's, and per variant
 * "shipped", naming BY (the local transform, e.g. "bind") for a file
 * whose digest differs from the build's. */
int family_ship_note(cJSON *result, const cJSON *build, const char *by);

#endif
