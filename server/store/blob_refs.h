/*
 * blob_refs.h - which uploaded blobs a stored job still needs, read from
 * the job's own documents (store.h, store_blob_references()): the blob
 * sweeper spares every digest these functions add. Pure functions on the
 * JSON; each store backend reads the rows (jobs' specs, schedules' jobs,
 * build results) and hands each document here, so that what counts as a
 * reference is written once for every backend.
 *
 *	a job's spec, a schedule's job   every "sha256:HEX" of "files" in the
 *	                                 program section: the one program, or
 *	                                 each build of an A/B job ("program":
 *	                                 {"builds": [...]}, normalized or not)
 *	a build task's result            every "sha256" of its variants'
 *	                                 "files" and of its "floor"'s
 *	                                 (docs/builds.md)
 *
 * Digests are added as 64 lowercase hex digits; a malformed one is
 * skipped; duplicates are allowed.
 */
#ifndef LOADLAB_SERVER_STORE_BLOB_REFS_H
#define LOADLAB_SERVER_STORE_BLOB_REFS_H

#include <cjson/cJSON.h>

/* Adds to the array HASHES the blobs the job spec SPEC (a job's spec or a
 * schedule's job to submit; NULL or another family: none) references. */
void blob_refs_add_spec(cJSON *hashes, const cJSON *spec);

/* Adds to the array HASHES the files of the build task result RESULT
 * (NULL: none). */
void blob_refs_add_build_result(cJSON *hashes, const cJSON *result);

#endif
