/* A bisection's request checked and its document made (bisect_create(),
 * bisect.h): the series' revisions from good to bad, each one's build, the
 * agent of the cell. */
#include "bisect.h"

#include "reports/report.h"
#include "server.h"
#include "store/blob_files.h"

#include "loadlab/clock.h"
#include "loadlab/err.h"
#include "loadlab/job_spec.h"
#include "loadlab/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cJSON *get(const cJSON *o, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(o, key);
}

/* The revisions of JOBS (a series' jobs in submission order) as
 * [{"revision", "job_id"}] from GOOD to BAD inclusive, in order of each
 * revision's first job, each with its latest job. */
static int revision_range(const cJSON *jobs, const char *good, const char *bad, cJSON **ret)
{
	cJSON *all = cJSON_CreateArray(), *range = NULL, *r;
	const cJSON *job;
	int g = -1, b = -1, n = 0, rc = 0;

	if (!all)
		return LL_ENOMEM;
	cJSON_ArrayForEach(job, jobs) {
		const char *rev = cJSON_GetStringValue(get(job, "revision"));
		cJSON *found = NULL;
		if (!rev)
			continue;
		cJSON_ArrayForEach(r, all)
			if (strcmp(cJSON_GetStringValue(get(r, "revision")), rev) == 0)
				found = r;
		if (!found) {
			found = json_array_add_object(all);
			cJSON_AddStringToObject(found, "revision", rev);
			cJSON_AddNumberToObject(found, "job_id", 0);
		}
		cJSON_SetNumberValue(cJSON_GetObjectItemCaseSensitive(found, "job_id"),
				     cJSON_GetNumberValue(get(job, "id")));
	}
	cJSON_ArrayForEach(r, all) {
		const char *rev = cJSON_GetStringValue(get(r, "revision"));
		if (strcmp(rev, good) == 0)
			g = n;
		if (strcmp(rev, bad) == 0)
			b = n;
		n++;
	}
	if (g < 0 || b < 0)
		rc = err_set(LL_ENOTFOUND, "The series has no job of revision '%.128s'.", g < 0 ? good : bad);
	else if (g >= b)
		rc = err_set(LL_EINVAL,
			     "The good revision '%.128s' must come before the bad one '%.128s' in "
			     "the series.",
			     good, bad);
	else if (b - g + 1 > BISECT_MAX_REVISIONS)
		rc = err_set(LL_EINVAL, "A bisection spans at most %d revisions, not %d.",
			     BISECT_MAX_REVISIONS, b - g + 1);
	else if (!(range = cJSON_CreateArray()))
		rc = LL_ENOMEM;
	for (int i = g; rc == 0 && i <= b; i++)
		cJSON_AddItemToArray(range, cJSON_Duplicate(cJSON_GetArrayItem(all, i), true));
	cJSON_Delete(all);
	if (rc == 0)
		*ret = range;
	return rc;
}

/* Checks REVISION's job (JOB) holds a one-build program whose blobs are
 * all stored. */
static int check_build(struct server *server, const cJSON *job, const char *revision, const char *variant)
{
	const cJSON *program = get(get(job, "spec"), "program"), *file, *v;
	cJSON *hexes = cJSON_CreateArray(), *missing = NULL;
	bool has_variant = false;
	char hex[65];
	int rc;

	if (!hexes)
		return LL_ENOMEM;
	if (!get(program, "files") || get(program, "builds")) {
		cJSON_Delete(hexes);
		return err_set(LL_EINVAL,
			       "Revision '%.128s' is not a program job of one build: only those can "
			       "be bisected.",
			       revision);
	}
	cJSON_ArrayForEach(v, get(get(job, "spec"), "variants"))
		has_variant |= strcmp(cJSON_GetStringValue(get(v, "name")) ?: "", variant) == 0;
	cJSON_ArrayForEach(file, get(program, "files"))
		if (cJSON_IsString(file) && job_spec_blob_ref_valid(file->valuestring, hex))
			cJSON_AddItemToArray(hexes, cJSON_CreateString(hex));
	rc = blobs_missing(server->blobs, hexes, &missing, NULL);
	if (rc == 0 && cJSON_GetArraySize(missing) > 0)
		rc = err_set(LL_ESTATE,
			     "Revision '%.128s' has %d files no longer stored (sha256 %.64s...): "
			     "its build cannot be run again.",
			     revision, cJSON_GetArraySize(missing),
			     cJSON_GetStringValue(cJSON_GetArrayItem(missing, 0)));
	else if (rc == 0 && !has_variant)
		rc = err_set(LL_EINVAL, "Revision '%.128s' was not measured with variant '%.128s'.", revision,
			     variant);
	cJSON_Delete(hexes);
	cJSON_Delete(missing);
	return rc;
}

/* 0 when an agent named NAME is enrolled (whatever its state: one offline
 * now may come back); else LL_EINVAL naming it. */
static int agent_enrolled(struct server *server, const char *name)
{
	cJSON *list = NULL;
	const cJSON *agent;
	bool found = false;
	int rc;

	if ((rc = store_agent_list(server->store, clock_now_ms(), &list)) < 0)
		return rc;
	cJSON_ArrayForEach(agent, get(list, "agents"))
		found |= strcmp(cJSON_GetStringValue(get(agent, "name")) ?: "", name) == 0;
	cJSON_Delete(list);
	if (!found)
		return err_set(LL_EINVAL,
			       "No agent named '%s' is enrolled: \"agent\" names one of GET /api/v1/agents.",
			       name);
	return 0;
}

/* The cell key CELL (NULL: the job's only cell) of JOB and the name of the
 * agent that ran it into DOC's "cell" and "agent" (AGENT when given). */
static int cell_agent(struct server *server, const cJSON *job, const char *cell, const char *agent,
		      cJSON *doc)
{
	const cJSON *task, *found = NULL;
	cJSON *a = NULL;
	char key[512];
	int count = 0, rc;

	cJSON_ArrayForEach(task, get(job, "tasks")) {
		report_cell_key(get(task, "cell"), key, sizeof(key));
		count++;
		if (!cell || strcmp(cell, key) == 0)
			found = task;
	}
	if (!cell && count != 1)
		return err_set(LL_EINVAL, "The bad revision's job has %d cells: name one with \"cell\".",
			       count);
	if (!found)
		return err_set(LL_ENOTFOUND, "The bad revision's job has no cell '%.200s'.", cell);
	report_cell_key(get(found, "cell"), key, sizeof(key));
	cJSON_AddStringToObject(doc, "cell", key);
	cJSON_AddItemToObject(doc, "cell_facts", cJSON_Duplicate(get(found, "cell"), true));
	if (agent)
		return cJSON_AddStringToObject(doc, "agent", agent) ? 0 : LL_ENOMEM;
	if (!cJSON_IsNumber(get(found, "agent_id")))
		return err_set(LL_ESTATE,
			       "No agent ran cell '%s' of the bad revision: name one with \"agent\".", key);
	if ((rc = store_agent_get(server->store, (long long)cJSON_GetNumberValue(get(found, "agent_id")),
				  clock_now_ms(), &a)) < 0)
		return rc;
	rc = cJSON_AddStringToObject(doc, "agent", cJSON_GetStringValue(get(a, "name")) ?: "") ? 0
											       : LL_ENOMEM;
	cJSON_Delete(a);
	return rc;
}

int bisect_create(struct server *server, const char *series, const cJSON *request, const char *by,
		  cJSON **ret_bisection)
{
	static const char *const keys[] = {"good", "bad", "variant", "cell", "agent", NULL};
	const char *good, *bad, *variant, *cell, *agent;
	cJSON *jobs = NULL, *range = NULL, *doc = NULL, *job = NULL;
	const cJSON *r;
	long long id;
	int rc;

	if ((rc = json_check_keys(request, keys, "bisect request")) < 0 ||
	    (rc = json_get_string(request, "good", JOB_SPEC_MAX_REVISION, true, NULL, &good)) < 0 ||
	    (rc = json_get_string(request, "bad", JOB_SPEC_MAX_REVISION, true, NULL, &bad)) < 0 ||
	    (rc = json_get_string(request, "variant", JOB_SPEC_MAX_NAME, false, "as-built", &variant)) < 0 ||
	    (rc = json_get_string(request, "cell", 500, false, NULL, &cell)) < 0 ||
	    (rc = json_get_string(request, "agent", JOB_SPEC_MAX_AGENT_NAME, false, NULL, &agent)) < 0 ||
	    (agent && (rc = job_spec_agent_name_check(agent, "agent")) < 0) ||
	    (agent && (rc = agent_enrolled(server, agent)) < 0))
		return rc;
	if ((rc = store_series_jobs(server->store, series, 0, &jobs)) < 0)
		return rc;
	if (cJSON_GetArraySize(jobs) == 0) {
		rc = err_set(LL_ENOTFOUND, "No job is in series '%.128s'.", series);
		goto out;
	}
	if ((rc = revision_range(jobs, good, bad, &range)) < 0)
		goto out;
	cJSON_ArrayForEach(r, range) {
		cJSON_Delete(job);
		job = NULL;
		if ((rc = store_job_get(server->store, (long long)cJSON_GetNumberValue(get(r, "job_id")),
					&job)) < 0 ||
		    (rc = check_build(server, job, cJSON_GetStringValue(get(r, "revision")), variant)) < 0)
			goto out;
	}
	rc = LL_ENOMEM;
	if (!(doc = cJSON_CreateObject()) || !cJSON_AddStringToObject(doc, "good", good) ||
	    !cJSON_AddStringToObject(doc, "bad", bad) || !cJSON_AddStringToObject(doc, "variant", variant))
		goto out;
	/* JOB is the bad revision's */
	if ((rc = cell_agent(server, job, cell, agent, doc)) < 0)
		goto out;
	cJSON_AddItemToObject(doc, "revisions", range);
	range = NULL;
	cJSON_AddNumberToObject(doc, "lo", 0);
	cJSON_AddNumberToObject(doc, "hi", cJSON_GetArraySize(get(doc, "revisions")) - 1);
	cJSON_AddNumberToObject(doc, "runs", BISECT_MIN_RUNS);
	cJSON_AddNumberToObject(doc, "step_count", 0);
	cJSON_AddArrayToObject(doc, "steps");
	rc = store_bisection_create(server->store, series, doc, by, BISECT_MAX_RUNNING_PER_CREATOR,
				    clock_now_ms(), &id);
	if (rc == LL_ECONFLICT)
		rc = err_set(LL_ECONFLICT,
			     "%s has %d bisections running already, the most one token may "
			     "(BISECT_MAX_RUNNING_PER_CREATOR, docs/bisect.md): wait for one to end, or "
			     "cancel one.",
			     by, BISECT_MAX_RUNNING_PER_CREATOR);
	if (rc == 0)
		rc = store_bisection_get(server->store, id, ret_bisection);
out:
	cJSON_Delete(jobs);
	cJSON_Delete(range);
	cJSON_Delete(doc);
	cJSON_Delete(job);
	return rc;
}
