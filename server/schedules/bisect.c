/* The bisection runner: each running bisection's next A/B job made, its
 * finished one judged (bisect.h). Called by the scheduler's tick. */
#include "bisect.h"

#include "reports/report.h"
#include "server.h"

#include "loadlab/clock.h"
#include "loadlab/err.h"
#include "loadlab/job_spec.h"
#include "loadlab/json.h"
#include "loadlab/log.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const cJSON *get(const cJSON *o, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(o, key);
}

/* O's KEY, 0 when it is not a number. */
static long long number(const cJSON *o, const char *key)
{
	double v = cJSON_GetNumberValue(get(o, key));

	return isfinite(v) ? (long long)v : 0;
}

static void set_number(cJSON *o, const char *key, double value)
{
	cJSON_DeleteItemFromObjectCaseSensitive(o, key);
	cJSON_AddNumberToObject(o, key, value);
}

int bisect_judge(double ratio, double low, double high, double line, long long runs)
{
	if (low > line)
		return 1;
	if (high < line)
		return -1;
	if (runs >= BISECT_MAX_RUNS)
		return ratio > line ? 1 : -1;
	return 0;
}

/* Build INDEX of the bisection's revisions as an A/B build LABEL; its
 * job's program and measure sections into RET_PROGRAM and RET_MEASURE
 * (copies) when given and still NULL. */
static cJSON *build_of(struct server *server, const cJSON *doc, long long index, const char *label,
		       cJSON **ret_program, cJSON **ret_measure)
{
	const cJSON *rev = cJSON_GetArrayItem(get(doc, "revisions"), (int)index);
	cJSON *job = NULL, *b = NULL;
	const cJSON *program;

	if (store_job_get(server->store, number(rev, "job_id"), &job) < 0)
		return NULL;
	program = get(get(job, "spec"), "program");
	if ((b = cJSON_CreateObject())) {
		cJSON_AddStringToObject(b, "label", label);
		cJSON_AddItemToObject(b, "files", cJSON_Duplicate(get(program, "files"), true));
		cJSON_AddItemToObject(b, "exe", cJSON_Duplicate(get(program, "exe"), true));
	}
	if (ret_program && !*ret_program)
		*ret_program = cJSON_Duplicate(program, true);
	if (ret_measure && !*ret_measure)
		*ret_measure = cJSON_Duplicate(get(get(job, "spec"), "measure"), true);
	cJSON_Delete(job);
	return b;
}

/* The step's "measure" in SPEC: RUNS warm runs, and from the good
 * revision's job's own measure section (GOOD, normalized; NULL: none) what
 * says how to measure rather than how much: the noise retakes and the warm
 * warmup, rounds and round gap, so that a step measures the way the
 * series' jobs do (the runs are the bisection's: 30 to 240, more than
 * JOB_SPEC_MAX_ROUNDS). */
static void step_measure(cJSON *spec, const cJSON *good, long long runs)
{
	static const char *const kept[] = {"rounds", "round_gap_ms", NULL};
	cJSON *measure = cJSON_AddObjectToObject(spec, "measure"), *warm;
	const cJSON *good_warm = get(good, "warm"), *warmup = get(good_warm, "warmup");

	if (get(good, "noise"))
		cJSON_AddItemToObject(measure, "noise", cJSON_Duplicate(get(good, "noise"), true));
	warm = cJSON_AddObjectToObject(measure, "warm");
	cJSON_AddNumberToObject(warm, "runs", (double)runs);
	cJSON_AddNumberToObject(warm, "warmup", cJSON_IsNumber(warmup) ? warmup->valuedouble : 3);
	for (int i = 0; kept[i]; i++)
		if (cJSON_IsNumber(get(good_warm, kept[i])))
			cJSON_AddNumberToObject(warm, kept[i], get(good_warm, kept[i])->valuedouble);
}

/* The spec of bisection ID's step: revision BASE against CAND, RUNS runs,
 * pinned to the bisection's agent, measured as BASE's job was
 * (step_measure()). */
static cJSON *step_spec(struct server *server, long long id, const cJSON *doc, long long base, long long cand,
			long long runs, int step)
{
	cJSON *spec = cJSON_CreateObject(), *program = NULL, *measure = NULL, *builds, *sel,
	      *normalized = NULL;
	char name[64];
	int rc;

	if (!spec)
		return NULL;
	snprintf(name, sizeof(name), "bisect-%lld-step-%d", id, step);
	cJSON_AddStringToObject(spec, "name", name);
	cJSON_AddStringToObject(spec, "family", "program");
	builds = cJSON_CreateArray();
	cJSON_AddItemToArray(builds, build_of(server, doc, base, "base", &program, &measure));
	cJSON_AddItemToArray(builds, build_of(server, doc, cand, "candidate", NULL, NULL));
	if (program) {
		/* the args, until and timeout of the good revision's job */
		cJSON_DeleteItemFromObjectCaseSensitive(program, "files");
		cJSON_DeleteItemFromObjectCaseSensitive(program, "exe");
		cJSON_AddItemToObject(program, "builds", builds);
		cJSON_AddItemToObject(spec, "program", program);
	} else {
		cJSON_Delete(builds);
	}
	cJSON_AddItemToArray(cJSON_AddArrayToObject(spec, "variants"),
			     cJSON_CreateString(cJSON_GetStringValue(get(doc, "variant"))));
	step_measure(spec, measure, runs);
	cJSON_Delete(measure);
	sel = cJSON_AddObjectToObject(cJSON_AddObjectToObject(spec, "matrix"), "each_agent");
	cJSON_AddItemToArray(cJSON_AddArrayToObject(sel, "agent"),
			     cJSON_CreateString(cJSON_GetStringValue(get(doc, "agent"))));
	rc = job_spec_normalize(spec, &normalized);
	cJSON_Delete(spec);
	return rc < 0 ? NULL : normalized;
}

/* Ends bisection ID in STATE with DOC's "result" RESULT (taken). */
static void finish(struct server *server, long long id, cJSON *doc, const char *state, cJSON *result)
{
	char text[24];

	cJSON_DeleteItemFromObjectCaseSensitive(doc, "result");
	cJSON_AddItemToObject(doc, "result", result);
	store_bisection_update(server->store, id, "running", state, doc, clock_now_ms());
	snprintf(text, sizeof(text), "%lld", id);
	log_event(LOG_INFO, "bisection_finished", "bisection_id", text, "state", state, NULL);
}

static cJSON *reason(const char *text)
{
	cJSON *r = cJSON_CreateObject();

	cJSON_AddStringToObject(r, "reason", text);
	return r;
}

/* Makes DOC's next step's job: revision 0 against CAND. */
static int start_step(struct server *server, long long id, cJSON *doc, const char *kind, long long cand)
{
	cJSON *steps = (cJSON *)get(doc, "steps"), *spec, *created = NULL, *step;
	long long runs = number(doc, "runs"), job_id;
	int n = (int)number(doc, "step_count") + 1, rc;
	char text[32];

	if (!(spec = step_spec(server, id, doc, 0, cand, runs, n)))
		return err_set(LL_EINVAL, "The step's job could not be made (a revision's job is gone).");
	rc = store_job_create(server->store, spec, "bisection", clock_now_ms(), &created);
	cJSON_Delete(spec);
	if (rc < 0)
		return rc;
	job_id = number(created, "id");
	cJSON_Delete(created);
	step = json_array_add_object(steps);
	cJSON_AddNumberToObject(step, "step", n);
	cJSON_AddStringToObject(step, "kind", kind);
	cJSON_AddStringToObject(
		step, "base",
		cJSON_GetStringValue(get(cJSON_GetArrayItem(get(doc, "revisions"), 0), "revision")));
	cJSON_AddStringToObject(
		step, "candidate",
		cJSON_GetStringValue(get(cJSON_GetArrayItem(get(doc, "revisions"), (int)cand), "revision")));
	cJSON_AddNumberToObject(step, "candidate_index", (double)cand);
	cJSON_AddNumberToObject(step, "runs", (double)runs);
	cJSON_AddNumberToObject(step, "job_id", (double)job_id);
	if ((rc = store_bisection_update(server->store, id, "running", "running", doc, clock_now_ms())) < 0) {
		cJSON *cancelled = NULL;
		store_job_cancel(server->store, job_id, clock_now_ms(), &cancelled);
		cJSON_Delete(cancelled);
		return rc;
	}
	http_waiters_wake_all(server);
	snprintf(text, sizeof(text), "%lld", job_id);
	log_event(LOG_INFO, "bisection_step", "kind", kind, "job_id", text, NULL);
	return 0;
}

/* The A/B row of job JOB_ID for VARIANT into STEP; its status, or NULL. */
static const char *read_row(struct server *server, long long job_id, const char *variant, cJSON *step,
			    double *ratio, double *low, double *high)
{
	cJSON *ab = NULL;
	const cJSON *row, *found = NULL;
	static const char *const copied[] = {"ratio",   "ci_low", "ci_high",        "change_pct",
					     "p_value", "pairs",  "base_median_us", "candidate_median_us",
					     "status",  "reason"};
	const char *status = NULL;

	if (report_ab(server->store, job_id, 0, &ab) < 0)
		return NULL;
	cJSON_ArrayForEach(row, get(ab, "rows"))
		if (strcmp(cJSON_GetStringValue(get(row, "variant")) ?: "", variant) == 0)
			found = row;
	for (size_t i = 0; found && i < sizeof(copied) / sizeof(copied[0]); i++)
		if (get(found, copied[i]))
			cJSON_AddItemToObject(step, copied[i], cJSON_Duplicate(get(found, copied[i]), true));
	if (found) {
		static const char *const known[] = {"slower", "faster", "no_significant_change",
						    "not_comparable"};
		const char *s = cJSON_GetStringValue(get(found, "status"));
		*ratio = cJSON_GetNumberValue(get(found, "ratio"));
		*low = cJSON_GetNumberValue(get(found, "ci_low"));
		*high = cJSON_GetNumberValue(get(found, "ci_high"));
		for (size_t i = 0; s && i < 4; i++)
			if (strcmp(s, known[i]) == 0)
				status = known[i];
	}
	cJSON_Delete(ab);
	return status;
}

static cJSON *effect_of(const cJSON *step)
{
	cJSON *e = cJSON_CreateObject();
	static const char *const keys[] = {"ratio", "ci_low", "ci_high", "change_pct", "job_id", "step"};

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (get(step, keys[i]))
			cJSON_AddItemToObject(e, keys[i], cJSON_Duplicate(get(step, keys[i]), true));
	return e;
}

/* The culprit: the first bad revision, with the effect that showed it. */
static void finish_culprit(struct server *server, long long id, cJSON *doc)
{
	const cJSON *revs = get(doc, "revisions");
	long long lo = number(doc, "lo"), hi = number(doc, "hi");
	cJSON *result = cJSON_CreateObject();

	cJSON_AddStringToObject(result, "culprit",
				cJSON_GetStringValue(get(cJSON_GetArrayItem(revs, (int)hi), "revision")));
	cJSON_AddNumberToObject(result, "culprit_index", (double)hi);
	cJSON_AddStringToObject(result, "last_good",
				cJSON_GetStringValue(get(cJSON_GetArrayItem(revs, (int)lo), "revision")));
	cJSON_AddItemToObject(result, "effect", cJSON_Duplicate(get(doc, "hi_effect"), true));
	cJSON_AddNumberToObject(result, "steps", (double)number(doc, "step_count"));
	finish(server, id, doc, "done", result);
}

/* The step just measured (STEP, of job state done): its verdict, and what
 * the bisection does next. */
static void judge_step(struct server *server, long long id, cJSON *doc, cJSON *step)
{
	const char *kind = cJSON_GetStringValue(get(step, "kind")) ?: "";
	const char *variant = cJSON_GetStringValue(get(doc, "variant")) ?: "";
	long long runs = number(step, "runs"), cand = number(step, "candidate_index");
	double ratio = NAN, low = NAN, high = NAN;
	const char *status = read_row(server, number(step, "job_id"), variant, step, &ratio, &low, &high);
	int verdict;

	if (!status || strcmp(status, "not_comparable") == 0) {
		cJSON_AddStringToObject(step, "verdict", "failed");
		finish(server, id, doc, "failed",
		       reason("A step's A/B job could not be judged (a build's variant invalid, or no "
			      "warm samples): see its job."));
		return;
	}
	if (strcmp(kind, "reproduce") == 0) {
		if (strcmp(status, "slower") == 0) {
			verdict = 1;
			cJSON_AddItemToObject(doc, "effect", effect_of(step));
		} else if (high < BISECT_NO_EFFECT_RATIO || runs >= BISECT_MAX_RUNS) {
			cJSON_AddStringToObject(step, "verdict", "good");
			finish(server, id, doc, "not_reproduced",
			       reason("Good and bad do not differ on this machine: the bad revision was not "
				      "slower, paired by pass."));
			return;
		} else {
			verdict = 0;
		}
	} else {
		double effect = cJSON_GetNumberValue(get(get(doc, "effect"), "ratio"));
		double line = 1 + (effect - 1) / 2;
		cJSON_AddNumberToObject(step, "line", line);
		verdict = bisect_judge(ratio, low, high, line, runs);
	}
	cJSON_AddStringToObject(step, "verdict", verdict > 0 ? "bad" : verdict < 0 ? "good" : "unsure");
	if (verdict == 0) {
		set_number(doc, "runs", (double)(runs * 2 > BISECT_MAX_RUNS ? BISECT_MAX_RUNS : runs * 2));
	} else {
		set_number(doc, "runs", BISECT_MIN_RUNS);
		set_number(doc, "step_count", (double)number(doc, "step_count") + 1);
		if (verdict > 0) {
			set_number(doc, "hi", (double)cand);
			cJSON_DeleteItemFromObjectCaseSensitive(doc, "hi_effect");
			cJSON_AddItemToObject(doc, "hi_effect", effect_of(step));
		} else {
			set_number(doc, "lo", (double)cand);
		}
	}
	cJSON_AddBoolToObject(step, "judged", true);
	store_bisection_update(server->store, id, "running", "running", doc, clock_now_ms());
}

/* One bisection: wait for its step's job, judge it, or start the next. */
static void advance(struct server *server, long long id)
{
	cJSON *b = NULL, *job = NULL, *step;
	const char *state;
	int rc = 0;

	if (store_bisection_get(server->store, id, &b) < 0)
		return;
	step = cJSON_GetArrayItem(get(b, "steps"), cJSON_GetArraySize(get(b, "steps")) - 1);
	if (step && !cJSON_IsTrue(get(step, "judged"))) {
		if (store_job_get(server->store, number(step, "job_id"), &job) < 0)
			goto out;
		state = cJSON_GetStringValue(get(job, "state")) ?: "";
		if (strcmp(state, "done") == 0) {
			judge_step(server, id, b, step);
		} else if (strcmp(state, "failed") == 0 || strcmp(state, "cancelled") == 0) {
			cJSON_AddStringToObject(step, "verdict", "failed");
			finish(server, id, b, "failed", reason("A step's A/B job failed or was cancelled."));
		}
		goto out;
	}
	if (!get(b, "effect"))
		rc = start_step(server, id, b, "reproduce", cJSON_GetArraySize(get(b, "revisions")) - 1);
	else if (number(b, "hi") - number(b, "lo") <= 1)
		finish_culprit(server, id, b);
	else
		rc = start_step(server, id, b, "bisect", (number(b, "lo") + number(b, "hi")) / 2);
	if (rc < 0 && rc != LL_ECONFLICT) {
		char message[300];
		snprintf(message, sizeof(message), "A step's job could not be made: %s", err_message(rc));
		finish(server, id, b, "failed", reason(message));
	}
out:
	err_clear();
	cJSON_Delete(job);
	cJSON_Delete(b);
}

void bisect_tick(struct server *server)
{
	long long ids[BISECT_BATCH];
	int n = 0;

	if (store_bisections_running(server->store, ids, BISECT_BATCH, &n) < 0)
		return;
	for (int i = 0; i < n; i++)
		advance(server, ids[i]);
}

int bisect_cancel(struct server *server, long long id, cJSON **ret)
{
	cJSON *b = NULL, *cancelled = NULL;
	const cJSON *step;
	int rc;

	if ((rc = store_bisection_update(server->store, id, "running", "cancelled", NULL, clock_now_ms())) <
	    0)
		return rc;
	if ((rc = store_bisection_get(server->store, id, &b)) < 0)
		return rc;
	step = cJSON_GetArrayItem(get(b, "steps"), cJSON_GetArraySize(get(b, "steps")) - 1);
	if (step && !cJSON_IsTrue(get(step, "judged")))
		store_job_cancel(server->store, number(step, "job_id"), clock_now_ms(), &cancelled);
	err_clear();
	cJSON_Delete(cancelled);
	*ret = b;
	return 0;
}
