/* GET /api/v1/jobs/{id}/report and GET /api/v1/compare (report.h);
 * GET /api/v1/compare?job=ID: an A/B job's builds (report_ab()). Each is
 * computed on a report worker, once per job state (reports/report_cache.h):
 * the HTTP threads never compute one. */
#include "routes.h"

#include "reports/report.h"
#include "reports/report_cache.h"

#include "loadlab/err.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Most bytes of a report or comparison as JSON, and as Markdown or CSV;
 * larger ones fail with LL_ETOOBIG (a comparison of two 1,000-task x
 * 8-variant jobs is about 6.5 MB of JSON). */
#define REPORT_MAX_JSON (256u << 20)
#define REPORT_MAX_RENDERED (64u << 20)

/* "json" (default), "csv" or "md"; NULL after filling REPLY for others. */
static const char *format_of(struct http_request *req, struct http_reply *reply)
{
	const char *format = http_query(req, "format");

	if (!format)
		return "json";
	if (strcmp(format, "json") && strcmp(format, "csv") && strcmp(format, "md")) {
		reply_error(reply, 400, "invalid_argument", "format must be json, csv or md.");
		return NULL;
	}
	return format;
}

static int job_id_of(struct http_request *req, struct http_reply *reply, const char *name, long long *ret)
{
	const char *text = http_query(req, name);
	char *end;
	long long id;

	if (!text)
		return reply_error(reply, 400, "invalid_argument", "Query argument '%s' is required.", name),
		       -1;
	id = strtoll(text, &end, 10);
	if (*end || end == text || id < 1)
		return reply_error(reply, 400, "invalid_argument", "'%s' must be a job id.", name), -1;
	*ret = id;
	return 0;
}

/* What a report worker computes (reports/report_cache.h). */
enum report_kind { KIND_JOB, KIND_AB, KIND_COMPARE };

struct report_args {
	enum report_kind kind;
	long long job_id, candidate_id; /* KIND_COMPARE: baseline and candidate */
	double max_regression;
	enum report_metric metric;
	bool modules, across_jobs, require_power;
	char format[8]; /* json, csv or md */
};

/* REPORT (deleted) as FORMAT into *RET: JSON as is, md/csv rendered. */
static int render(cJSON *report, const char *format,
		  int (*render_as)(const cJSON *, const char *, struct buf *), struct report_text *ret)
{
	struct buf out;
	bool json = strcmp(format, "json") == 0;
	int rc;

	/* JSON printed straight from the tree: cJSON_PrintUnformatted()'s
	 * text without an allocation per number (report_json_append()). */
	buf_init(&out, json ? REPORT_MAX_JSON : REPORT_MAX_RENDERED);
	rc = json ? report_json_append(report, &out) : render_as(report, format, &out);
	cJSON_Delete(report);
	if (rc == 0 && !out.data && !(out.data = calloc(1, 1)))
		rc = LL_ENOMEM;
	if (rc < 0) {
		buf_release(&out);
		return rc;
	}
	*ret = (struct report_text){out.data, out.len,
				    json                        ? "application/json"
				    : strcmp(format, "md") == 0 ? "text/markdown; charset=utf-8"
								: "text/csv; charset=utf-8"};
	return 0;
}

/* A report_compute_fn: the answer ARGS asks for. */
static int compute(struct store *store, const void *arg, struct report_text *ret)
{
	const struct report_args *a = arg;
	cJSON *report = NULL;
	int rc;

	switch (a->kind) {
	case KIND_JOB:
		if ((rc = report_job(store, a->job_id, a->modules, &report)) < 0)
			return rc;
		return render(report, a->format, report_render, ret);
	case KIND_AB:
		if ((rc = report_ab_metric(store, a->job_id, a->max_regression, a->metric, a->require_power,
					   &report)) < 0)
			return rc;
		return render(report, "json", report_render, ret);
	case KIND_COMPARE:
	default:
		if (strcmp(a->format, "json") == 0) {
			/* the rows printed as they are made, never a cJSON tree */
			struct buf out;
			buf_init(&out, REPORT_MAX_JSON);
			rc = report_compare_json(store, a->job_id, a->candidate_id, a->max_regression,
						 a->metric, a->across_jobs, a->require_power, &out);
			if (rc == 0 && !out.data && !(out.data = calloc(1, 1)))
				rc = LL_ENOMEM;
			if (rc < 0) {
				buf_release(&out);
				return rc;
			}
			*ret = (struct report_text){out.data, out.len, "application/json"};
			return 0;
		}
		if ((rc = report_compare_metric(store, a->job_id, a->candidate_id, a->max_regression,
						a->metric, a->across_jobs, a->require_power, &report)) < 0)
			return rc;
		return render(report, a->format, report_render_compare, ret);
	}
}

static void release_ticket(void *ticket)
{
	report_ticket_release(ticket);
}

/* The handler's second call, once the worker woke the request: the
 * answer it waited for. */
static int reply_waited(struct http_request *req, struct http_reply *reply)
{
	struct report_ticket *ticket = req->route_state;
	struct report_text text = {0};
	int rc;

	req->route_state = NULL;
	req->route_state_release = NULL;
	if ((rc = report_ticket_answer(ticket, &text)) < 0)
		return reply_from_err(reply, rc);
	return reply_text(reply, 200, text.content_type, text.text);
}

/* The answer ARGS asks for, of PREFIX at REVISION (report_cache.h): from
 * the cache, or computed on a report worker while the connection waits
 * (HTTP_SUSPEND_WRITE; reply_waited() then answers); KEEP as
 * report_cache_get(). Without a cache (a server made without one),
 * computed here. */
static int reply_report(struct http_request *req, struct http_reply *reply, const char *prefix,
			const char *revision, bool keep, const struct report_args *args)
{
	struct report_cache *cache = req->server->report_cache;
	struct report_text text = {0};
	struct report_ticket *ticket = NULL;
	int rc;

	if (!cache)
		rc = compute(req->server->store, args, &text); /* 0: answered, as REPORT_CACHE_HIT */
	else
		rc = report_cache_get(cache, prefix, revision, keep, compute, args, sizeof(*args),
				      http_write_committed, req, &text, &ticket);
	if (rc == REPORT_CACHE_PENDING) {
		req->route_state = ticket;
		req->route_state_release = release_ticket;
		return HTTP_SUSPEND_WRITE;
	}
	if (rc == REPORT_CACHE_BUSY) {
		reply_error(reply, 503, "busy",
			    "%d report computations are queued or running, the most at once "
			    "(docs/operations.md, \"Reports: cache and limits\"); try again in %d s.",
			    REPORT_CACHE_MAX_QUEUED, REPORT_CACHE_RETRY_AFTER_SECONDS);
		reply->retry_after = REPORT_CACHE_RETRY_AFTER_SECONDS;
		return 0;
	}
	if (rc < 0)
		return reply_from_err(reply, rc);
	return reply_text(reply, 200, text.content_type, text.text);
}

int route_reports_job(struct http_request *req, struct http_reply *reply)
{
	const char *format, *modules = http_query(req, "modules");
	struct report_args args = {.kind = KIND_JOB, .job_id = req->path_id};
	char prefix[REPORT_CACHE_MAX_KEY / 2], revision[32];
	int rc;

	if (req->route_state)
		return reply_waited(req, reply);
	if (!(format = format_of(req, reply)))
		return 0;
	args.modules = modules && (strcmp(modules, "1") == 0 || strcmp(modules, "true") == 0);
	snprintf(args.format, sizeof(args.format), "%s", format);
	if ((rc = report_cache_job_revision(req->server->store, args.job_id, revision, sizeof(revision))) < 0)
		return reply_from_err(reply, rc);
	snprintf(prefix, sizeof(prefix), "report job=%lld modules=%d format=%s", args.job_id, args.modules,
		 args.format);
	return reply_report(req, reply, prefix, revision, true, &args);
}

int route_reports_compare(struct http_request *req, struct http_reply *reply)
{
	const char *format = format_of(req, reply), *text;
	enum report_metric metric = REPORT_JUDGE_DEFAULT_METRIC; /* the one judge's (report.h) */
	long long base = 0, cand = 0;
	double max_regression = 0;
	bool across_jobs;
	struct report_args args = {0};
	char prefix[REPORT_CACHE_MAX_KEY / 2], revision[48];
	int rc;

	if (req->route_state)
		return reply_waited(req, reply);
	if (!format)
		return 0;
	if (http_query(req, "job") && (http_query(req, "baseline") || http_query(req, "candidate")))
		return reply_error(reply, 400, "invalid_argument",
				   "Give either job (an A/B job's builds) or baseline and candidate.");
	if (!http_query(req, "job") &&
	    (job_id_of(req, reply, "baseline", &base) < 0 || job_id_of(req, reply, "candidate", &cand) < 0))
		return 0;
	if ((text = http_query(req, "max_regression"))) {
		char *end;
		max_regression = strtod(text, &end);
		if (*end == '%')
			end++;
		if (*end || end == text || !isfinite(max_regression) || max_regression < 0 ||
		    max_regression > 1000)
			return reply_error(reply, 400, "invalid_argument",
					   "max_regression must be a percentage from 0 to 1000.");
	}
	if ((text = http_query(req, "metric")) && report_metric_parse(text, &metric) < 0)
		return reply_error(
			reply, 400, "invalid_argument",
			"metric must be auto, median, min, over-floor, floor-ratio, cpu, faults or "
			"instructions.");
	if ((text = http_query(req, "require_power")) && strcmp(text, "0") != 0 && strcmp(text, "1") != 0)
		return reply_error(reply, 400, "invalid_argument", "require_power must be 0 or 1.");
	args.require_power = text && strcmp(text, "1") == 0;
	if ((text = http_query(req, "intervals")) && strcmp(text, "within-job") != 0 &&
	    strcmp(text, "across-jobs") != 0)
		return reply_error(reply, 400, "invalid_argument",
				   "intervals must be across-jobs or within-job.");
	across_jobs = !text || strcmp(text, "across-jobs") == 0;
	args.max_regression = max_regression;
	args.metric = metric;
	args.across_jobs = across_jobs;
	snprintf(args.format, sizeof(args.format), "%s", format);
	if (http_query(req, "job")) {
		/* an A/B job: its builds against its base, paired by pass */
		if (job_id_of(req, reply, "job", &args.job_id) < 0)
			return 0;
		if (strcmp(format, "json") != 0)
			return reply_error(reply, 400, "invalid_argument",
					   "An A/B job's comparison (job=ID) is given as JSON only.");
		if (metric != REPORT_METRIC_AUTO &&
		    (metric < REPORT_METRIC_CPU || metric > REPORT_METRIC_INSTRUCTIONS))
			return reply_error(reply, 400, "invalid_argument", REPORT_AB_METRICS_WORDS);
		if ((rc = report_cache_job_revision(req->server->store, args.job_id, revision,
						    sizeof(revision))) < 0)
			return reply_from_err(reply, rc);
		args.kind = KIND_AB;
		snprintf(prefix, sizeof(prefix), "ab job=%lld max_regression=%.17g metric=%d power=%d",
			 args.job_id, max_regression, (int)metric, args.require_power);
		return reply_report(req, reply, prefix, revision, true, &args);
	}
	/* Two jobs compared also read earlier jobs of the same cells
	 * (report_between.h): never kept, but computed once for identical
	 * requests at once. */
	args.kind = KIND_COMPARE;
	args.job_id = base;
	args.candidate_id = cand;
	if ((rc = report_cache_job_revision(req->server->store, base, revision, sizeof(revision))) < 0 ||
	    (rc = report_cache_job_revision(req->server->store, cand, revision + 16, sizeof(revision) - 16)) <
		    0)
		return reply_from_err(reply, rc);
	snprintf(prefix, sizeof(prefix),
		 "compare %lld %lld max_regression=%.17g metric=%d across=%d power=%d format=%s", base, cand,
		 max_regression, (int)metric, across_jobs, args.require_power, format);
	return reply_report(req, reply, prefix, revision, false, &args);
}
