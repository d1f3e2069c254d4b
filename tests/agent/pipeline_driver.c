/*
 * pipeline_driver.c - runs pipeline_run() on a job file without the fleet
 * side, for tests/agent/test_pe_pipeline.py.
 *
 *	pipeline_driver JOB.json WORK_DIR OUT.json [JOBS]
 *	pipeline_driver --msvc JOB.json
 *
 * With LOADLAB_TEST_CANCEL_AT=PHASE the progress callback reports the
 * task cancelled when PHASE starts (pipeline_run() must then return
 * LL_ESTATE: exit 1).
 *
 * The second form prints {VARIANT: [argv, ...]}: the MSVC commands
 * pe_msvc_commands() gives for each variant of the job (src "S", out "O").
 *
 * The job is normalized as `loadlab-agent run` does, the cell is {} and the
 * facts {"runner": "..."}; progress lines go to stderr. Exit 0 with the
 * result written to OUT.json, 1 with one line on stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadlab/err.h"
#include "loadlab/job_spec.h"
#include "loadlab/json.h"
#include "loadlab/plat.h"
#include "family/pe/pe_family.h"

static bool progress(void *context, const char *phase, int percent)
{
	static char last_phase[32];
	static int last_percent = -1;
	const char *cancel_at = getenv("LOADLAB_TEST_CANCEL_AT");
	(void)context;
	if (cancel_at && strcmp(cancel_at, phase) == 0) {
		fprintf(stderr, "progress %s %d: cancelling\n", phase, percent);
		return true;
	}
	if (percent / 25 != last_percent / 25 || strcmp(phase, last_phase) != 0) {
		fprintf(stderr, "progress %s %d\n", phase, percent);
		snprintf(last_phase, sizeof(last_phase), "%s", phase);
		last_percent = percent;
	}
	return false;
}

/* The job file PATH, normalized as `loadlab-agent run` does. */
static int load_job(const char *path, cJSON **ret_normalized)
{
	cJSON *job = NULL;
	char *text = NULL;
	size_t len;
	int rc;

	if ((rc = plat_read_file(path, 1u << 20, &text, &len)) == 0 &&
	    (rc = json_parse_object(text, len, 0, &job)) == 0)
		rc = job_spec_normalize(job, ret_normalized);
	cJSON_Delete(job);
	free(text);
	return rc;
}

/* DOC, formatted, written to PATH, or printed on stdout when PATH is
 * NULL. */
static int write_json(const cJSON *doc, const char *path)
{
	char *text = cJSON_Print(doc);
	int rc = 0;

	if (!text)
		return LL_ENOMEM;
	if (path)
		rc = plat_write_file(path, text, strlen(text));
	else
		puts(text);
	free(text);
	return rc;
}

/* The exit code for RC, after one line on stderr when it is an error. */
static int exit_code(int rc)
{
	if (rc < 0)
		fprintf(stderr, "pipeline_driver: %s\n", err_message(rc));
	return rc < 0 ? 1 : 0;
}

static int msvc(const char *job_path)
{
	cJSON *normalized = NULL, *all = NULL;
	const cJSON *item;
	int rc;

	if ((rc = load_job(job_path, &normalized)) < 0)
		goto out;
	if (!(all = cJSON_CreateObject())) {
		rc = LL_ENOMEM;
		goto out;
	}
	int dlls = (int)cJSON_GetObjectItemCaseSensitive(
			   cJSON_GetObjectItemCaseSensitive(normalized, "generator"), "dlls")
			   ->valuedouble;
	cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(normalized, "variants")) {
		struct pe_variant v;
		cJSON *commands;
		memset(&v, 0, sizeof(v));
		snprintf(v.base.name, sizeof(v.base.name), "%s",
			 cJSON_GetObjectItemCaseSensitive(item, "name")->valuestring);
		snprintf(v.bases, sizeof(v.bases), "%s",
			 cJSON_GetObjectItemCaseSensitive(item, "bases")->valuestring);
		v.bind = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(item, "bind"));
		v.ordinal = strcmp(cJSON_GetObjectItemCaseSensitive(item, "imports")->valuestring,
				   "ordinal") == 0;
		v.trace_order =
			strcmp(cJSON_GetObjectItemCaseSensitive(item, "order")->valuestring, "trace") == 0;
		if ((rc = pe_msvc_commands(dlls, &v, "S", "O", &commands)) < 0)
			goto out;
		cJSON_AddItemToObject(all, v.base.name, commands);
	}
	rc = write_json(all, NULL);
out:
	cJSON_Delete(all);
	cJSON_Delete(normalized);
	return exit_code(rc);
}

int main(int argc, char **argv)
{
	cJSON *normalized = NULL, *facts = NULL, *cell = NULL, *result = NULL;
	int rc;

	if (argc == 3 && strcmp(argv[1], "--msvc") == 0)
		return msvc(argv[2]);
	if (argc < 4) {
		fprintf(stderr,
			"usage: pipeline_driver JOB.json WORK_DIR OUT.json [JOBS] | --msvc JOB.json\n");
		return 2;
	}
	if ((rc = load_job(argv[1], &normalized)) < 0)
		goto out;
	facts = cJSON_CreateObject();
	cell = cJSON_CreateObject();
	if (!facts || !cell ||
	    !cJSON_AddStringToObject(facts, "runner", plat_runs_windows_programs() ? "native" : "wine")) {
		rc = LL_ENOMEM;
		goto out;
	}
	struct pipeline_task task = {.job = normalized,
				     .cell = cell,
				     .facts = facts,
				     .work_dir = argv[2],
				     .jobs = argc > 4 ? atoi(argv[4]) : 2,
				     .progress = progress};
	if (task.jobs < 1)
		task.jobs = 1;
	if ((rc = pipeline_run(&task, &result)) < 0)
		goto out;
	rc = write_json(result, argv[3]);
out:
	cJSON_Delete(result);
	cJSON_Delete(cell);
	cJSON_Delete(facts);
	cJSON_Delete(normalized);
	return exit_code(rc);
}
