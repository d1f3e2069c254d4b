/*
 * loadlab-agent run JOB.json [--out RESULT.json]: one job on this machine,
 * with no server. The job file is checked against every bound
 * (job_spec_normalize), run through pipeline_run() in a temporary work
 * folder (removed afterwards unless --keep), and the result is printed or
 * written to --out. Exit 0 when the job ran, 1 when the pipeline failed,
 * 2 for bad arguments or a job out of bounds.
 */
#include "cmd/commands.h"
#include "fleet/facts.h"
#include "loadlab/plat.h"
#include "family/pipeline.h"

#include "loadlab/err.h"
#include "loadlab/job_spec.h"
#include "loadlab/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JOB_FILE_LIMIT ((size_t)1 << 20)

static const char usage_text[] = "usage: loadlab-agent run JOB.json [--out RESULT.json] [--keep]\n"
				 "\n"
				 "Runs a job (the body of POST /api/v1/jobs) here, without a server, and\n"
				 "prints the result (or writes it to --out). The job's bounds are checked\n"
				 "first. --keep leaves the work folder in place and names it on stderr.\n"
				 "Exit 0 when the job ran, 1 when it failed, 2 for bad arguments or a job\n"
				 "out of bounds.\n";

/* The JSON object in the file PATH (at most JOB_FILE_LIMIT bytes). */
static int read_job(const char *path, cJSON **ret_job)
{
	char *text;
	size_t len;
	int rc;

	if ((rc = plat_read_file(path, JOB_FILE_LIMIT, &text, &len)) < 0)
		return rc;
	if (json_parse_object(text, len, 0, ret_job) < 0)
		rc = err_set(LL_EFORMAT, "%s is not a JSON object: %s", path, err_message(LL_EFORMAT));
	free(text);
	return rc;
}

/* Progress on stderr, one line per phase; stops on Ctrl-C / SIGTERM. */
static bool print_progress(void *context, const char *phase, int percent)
{
	char *last = context;

	if (phase && strncmp(last, phase, 31) != 0) {
		fprintf(stderr, "loadlab-agent run: %s\n", phase);
		snprintf(last, 32, "%s", phase);
	}
	(void)percent;
	return plat_stop_requested();
}

int cmd_write_json(const char *path, const cJSON *doc)
{
	char *text = cJSON_Print(doc);
	FILE *f;
	bool ok;

	if (!text)
		return err_set(LL_ENOMEM, "Out of memory.");
	if (!path) {
		ok = puts(text) >= 0 && fflush(stdout) == 0;
		free(text);
		return ok ? 0 : err_set(LL_EIO, "Cannot write to standard output.");
	}
	f = fopen(path, "wb");
	ok = f && fputs(text, f) >= 0 && fputc('\n', f) != EOF;
	if (f && fclose(f) != 0)
		ok = false;
	free(text);
	return ok ? 0 : err_set(LL_EIO, "Cannot write %s.", path);
}

int cmd_run_here(const char *who, const cJSON *job, const cJSON *cell, int jobs, bool keep,
		 bool (*progress)(void *context, const char *phase, int percent), void *progress_context,
		 cJSON **ret_result)
{
	cJSON *facts = NULL, *empty_cell = NULL;
	struct pipeline_task task;
	char *work_dir = NULL, prefix[64];
	int rc;

	snprintf(prefix, sizeof(prefix), "loadlab-%s", who);
	plat_install_stop_handler();
	if ((rc = plat_make_temp_dir(prefix, &work_dir)) < 0 || (rc = facts_detect(work_dir, &facts)) < 0)
		goto out;
	if (!cell && !(cell = empty_cell = cJSON_CreateObject())) {
		rc = err_set(LL_ENOMEM, "Out of memory.");
		goto out;
	}
	if (jobs < 1) {
		const cJSON *cores = cJSON_GetObjectItemCaseSensitive(facts, "cores");
		jobs = cJSON_IsNumber(cores) && cores->valuedouble >= 1 ? (int)cores->valuedouble : 1;
	}
	memset(&task, 0, sizeof(task));
	task.job = job;
	task.cell = cell;
	task.facts = facts;
	task.work_dir = work_dir;
	task.jobs = jobs;
	task.progress = progress;
	task.progress_context = progress_context;
	err_clear();
	rc = pipeline_run(&task, ret_result);
out:
	if (work_dir) {
		if (keep)
			fprintf(stderr, "loadlab-agent %s: work folder kept: %s\n", who, work_dir);
		else
			plat_remove_tree(work_dir);
	}
	free(work_dir);
	cJSON_Delete(empty_cell);
	cJSON_Delete(facts);
	return rc;
}

int cmd_run(int argc, char **argv)
{
	const char *job_path = NULL, *out_path = NULL;
	bool keep = false;
	cJSON *submitted = NULL, *job = NULL, *result = NULL;
	char last_phase[32] = "";
	int rc, exit_code;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			fputs(usage_text, stdout);
			return 0;
		} else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc) {
			out_path = argv[++i];
		} else if (strcmp(argv[i], "--keep") == 0) {
			keep = true;
		} else if (argv[i][0] == '-' || job_path) {
			fprintf(stderr,
				"loadlab-agent run: unexpected argument '%s' (see loadlab-agent run "
				"--help)\n",
				argv[i]);
			return 2;
		} else {
			job_path = argv[i];
		}
	}
	if (!job_path) {
		fprintf(stderr, "loadlab-agent run: missing JOB.json (see loadlab-agent run --help)\n");
		return 2;
	}
	if ((rc = read_job(job_path, &submitted)) < 0)
		return err_exit("loadlab-agent run", rc);
	rc = job_spec_normalize(submitted, &job);
	cJSON_Delete(submitted);
	if (rc < 0) {
		fprintf(stderr, "loadlab-agent run: %s: %s\n", job_path, err_message(rc));
		return 2;
	}
	if ((rc = cmd_run_here("run", job, NULL, 0, keep, print_progress, last_phase, &result)) < 0) {
		fprintf(stderr, "loadlab-agent run: the job failed: %s\n", err_message(rc));
		exit_code = 1;
	} else if ((rc = cmd_write_json(out_path, result)) < 0) {
		exit_code = err_exit("loadlab-agent run", rc);
	} else {
		exit_code = 0;
	}
	cJSON_Delete(result);
	cJSON_Delete(job);
	return exit_code;
}
