/*
 * pipeline.h - how the agent runs one task: the seam between the fleet
 * side (agent/fleet/: lease, heartbeat, report; and cmd/cmd_run.c) and
 * the experiment side: the driver (pipeline.c) and the families it calls
 * through family.h (agent/family/pe/ for family "pe").
 *
 * The fleet side leases a task, makes an empty work folder for it, and
 * calls pipeline_run() with the lease's "job" object (the normalized spec
 * of docs/rest-bodies.md, "POST /api/v1/lease") and its "cell". The same
 * call serves `loadlab-agent run JOB.json`, where the job file is first
 * normalized with job_spec_normalize() and the cell is {}.
 *
 * The experiment side checks the job's bounds again (job_spec_normalize()
 * on the job object), finds the job's family (LL_EUNSUPPORTED, naming the
 * families there are, when this agent has none of that name), generates, builds, transforms, verifies and times
 * every variant, calling progress() at each phase; it runs no command
 * taken from the job, only programs it generated and toolchains it found.
 */
#ifndef LOADLAB_AGENT_PIPELINE_H
#define LOADLAB_AGENT_PIPELINE_H

#include <cjson/cJSON.h>
#include <stdbool.h>

struct blob_cache_room;

struct pipeline_task {
	const cJSON *job;     /* borrowed: {"id","name","family","generator","variants","measure"} */
	const cJSON *cell;    /* borrowed: {KEY: VALUE}, may be empty */
	const cJSON *facts;   /* borrowed: this agent's facts (facts.h) */
	const char *work_dir; /* an empty folder owned by this task */
	int jobs;             /* parallel compiles allowed (>= 1) */

	/* Called at each phase ("generate", "build", "transform", "verify",
	 * "warm", "cold", "churn", "report") with 0..100. Returns true when
	 * the task was cancelled (or the agent is stopping): the pipeline
	 * then stops as soon as it can and returns LL_ESTATE. May be NULL. */
	bool (*progress)(void *context, const char *phase, int percent);
	void *progress_context;

	/* The program family's files (family/program/): the job names each
	 * by its SHA-256 and the family gets it through the agent's blob
	 * cache (blobs/blob_cache.h), which calls FETCH_BLOB for a blob it
	 * lacks. FETCH_BLOB puts the blob SHA256_HEX (64 lowercase hex
	 * digits) at DEST_PATH, a file it may create or replace, at most
	 * LIMIT bytes of it (LL_ETOOBIG past them), or returns a negative
	 * LL_E* code with a message; the cache checks the hash. The fleet
	 * side GETs /api/v1/blobs/HEX. NULL: this caller has no blobs (a
	 * program job then fails unless the cache holds them all). */
	int (*fetch_blob)(void *context, const char *sha256_hex, const char *dest_path, long long limit);
	void *fetch_blob_context;
	const char *blob_cache_dir; /* the cache's folder; NULL: one in the work folder */
	long long blob_cache_bytes; /* its size cap; 0: BLOB_CACHE_DEFAULT_BYTES */
	/* The free space the cache keeps on its disk (blob_cache_set_room();
	 * the fleet: --min-free-bytes), borrowed; NULL: none. A family opens
	 * the cache with it and pins the blobs JOB and BUILD name; a task
	 * whose files do not fit fails with LL_ENOSPACE. */
	const struct blob_cache_room *blob_room;

	/* A shared build (docs/builds.md, family/family_ship.h). BUILD_ONLY:
	 * this task is a build (its lease's "kind" "build", CELL its
	 * "target"): the pe and elf families generate, build and apply the
	 * transforms that do not depend on the machine, upload every file
	 * through PUT_BLOB (SHA256_HEX, the file at PATH; the fleet side PUTs
	 * /api/v1/blobs/HEX) and describe the build instead of verifying and
	 * timing. BUILD (borrowed, NULL: none): a measuring task's lease
	 * "build" ({"task_id", "builder", "result"}): the family fetches the
	 * build's files instead of building them and applies only what
	 * depends on this machine (pe: bind). */
	bool build_only;
	const cJSON *build;
	int (*put_blob)(void *context, const char *sha256_hex, const char *path);
	void *put_blob_context;
};

/* Runs TASK and returns the result body to post (schemas/result.json,
 * without "attempt": the fleet side adds it):
 *   {"facts": {...}, "family": "pe", "cell": {...},
 *    "variants": [{"name", "knobs": {...}, "valid": bool, "invalid_reason",
 *                  "verify": {...}, "files": [{"name","sha256","size"}],
 *                  "warm": {"runs", "samples_us": [...], "min_us", "median_us", ...}}],
 *    "floor": {...the empty program timed the same way...},
 *    "toolchain": {...}, "runner": "native"|"wine", "phases_ms": {...}}
 * A variant whose verification contradicts its knobs has "valid": false
 * and a reason, and is not timed. Returns 0, or a negative LL_E* code with
 * a message (err_message()) when the task as a whole failed (no toolchain,
 * build error, cancelled: LL_ESTATE). The caller deletes *RET_RESULT. */
int pipeline_run(const struct pipeline_task *task, cJSON **ret_result);

#endif
