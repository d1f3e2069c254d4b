/*
 * submit_program.h - `loadlab submit --program-dir DIR`: a program job's
 * folder turned into blobs and a manifest (API.md, "CLI").
 */
#ifndef LOADLAB_CLI_SUBMIT_PROGRAM_H
#define LOADLAB_CLI_SUBMIT_PROGRAM_H

#include "loadlab/rest_client.h"

#include <cjson/cJSON.h>

/* Files a folder may hold, and folder depth (symlinks inside it are
 * followed, so a loop ends here). */
#define SUBMIT_PROGRAM_MAX_DEPTH 32

/* When the job JOB (parsed from JOB_PATH) names a program folder — DIR
 * (--program-dir; NULL: none) or JOB's "program.dir", relative to
 * JOB_PATH's folder — walks it: regular files only (a symlink is followed
 * when it stays inside the folder, refused when it leaves it), each
 * hashed. Asks the server (HEAD /api/v1/blobs/HASH) which it lacks and
 * uploads only those (PUT, streamed from the file; a progress line on a
 * terminal), then prints "program: N files, U uploaded (B bytes)" and
 * rewrites JOB: "family" "program", "program.files" the manifest,
 * "program.dir" removed, "program.exe" the only .exe when the job names
 * none. *RET_BODY is the job's new JSON text (free()), or NULL when JOB
 * names no folder and is to be sent as it was. LL_EINVAL for a bad folder
 * or path (the path and the rule named), LL_EIO, or the server's error. */
int submit_program_prepare(struct rest_client *c, cJSON *job, const char *job_path, const char *dir,
			   char **ret_body);

/* An A/B job of COUNT builds (2..JOB_SPEC_MAX_PROGRAM_BUILDS), one per
 * folder of DIRS (--program-dir given COUNT times), each walked and
 * uploaded as submit_program_prepare() does: JOB's "program.builds"
 * becomes [{"label", "files", "exe"}], the labels those the job's own
 * "program.builds" give, else "base", "candidate", "candidate-2",
 * "candidate-3"; each exe the build's own, else the job's "program.exe",
 * else the folder's only .exe. *RET_BODY is the new JSON text (free()). */
int submit_program_prepare_builds(struct rest_client *c, cJSON *job, const char *const *dirs, int count,
				  char **ret_body);

/* For a job that names its files itself (JOB's "program.files", no
 * folder): asks the server (HEAD /api/v1/blobs/HASH) which it lacks, and
 * when any is, fails with LL_EINVAL naming them by path, with the hint to
 * give their folder with --program-dir. 0 for a job without
 * program.files, or when every blob is there. */
int submit_program_check_files(struct rest_client *c, const cJSON *job, const char *job_path);

#endif
