/* GET /api/v1/jobs/{id}/report and GET /api/v1/compare (report.h);
 * GET /api/v1/compare?job=ID: an A/B job's builds (report_ab()). */
#include "routes.h"

#include "reports/report.h"

#include "loadlab/err.h"

#include <math.h>
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

/* Sends REPORT as FORMAT: JSON as is, md/csv rendered. */
static int reply_rendered(struct http_reply *reply, cJSON *report, const char *format,
			  int (*render)(const cJSON *, const char *, struct buf *))
{
	struct buf out;
	bool json = strcmp(format, "json") == 0;
	int rc;

	/* JSON printed straight from the tree: cJSON_PrintUnformatted()'s
	 * text without an allocation per number (report_json_append()). */
	buf_init(&out, json ? REPORT_MAX_JSON : REPORT_MAX_RENDERED);
	rc = json ? report_json_append(report, &out) : render(report, format, &out);
	cJSON_Delete(report);
	if (rc < 0) {
		buf_release(&out);
		return reply_from_err(reply, rc);
	}
	return reply_text(reply, 200,
			  json                        ? "application/json"
			  : strcmp(format, "md") == 0 ? "text/markdown; charset=utf-8"
						      : "text/csv; charset=utf-8",
			  out.data ? out.data : strdup(""));
}

int route_reports_job(struct http_request *req, struct http_reply *reply)
{
	const char *format = format_of(req, reply), *modules = http_query(req, "modules");
	cJSON *report;
	int rc;

	if (!format)
		return 0;
	rc = report_job(req->server->store, req->path_id,
			modules && (strcmp(modules, "1") == 0 || strcmp(modules, "true") == 0), &report);
	if (rc < 0)
		return reply_from_err(reply, rc);
	return reply_rendered(reply, report, format, report_render);
}

int route_reports_compare(struct http_request *req, struct http_reply *reply)
{
	const char *format = format_of(req, reply), *text;
	enum report_metric metric =
		REPORT_METRIC_AUTO; /* report.h: floor-ratio where both sides have a floor */
	long long base, cand;
	double max_regression = 0;
	bool across_jobs;
	cJSON *comparison;
	int rc;

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
		return reply_error(reply, 400, "invalid_argument",
				   "metric must be auto, median, min, over-floor or floor-ratio.");
	if ((text = http_query(req, "intervals")) && strcmp(text, "within-job") != 0 &&
	    strcmp(text, "across-jobs") != 0)
		return reply_error(reply, 400, "invalid_argument",
				   "intervals must be across-jobs or within-job.");
	across_jobs = !text || strcmp(text, "across-jobs") == 0;
	if (http_query(req, "job")) {
		/* an A/B job: its builds against its base, paired by pass */
		if (job_id_of(req, reply, "job", &base) < 0)
			return 0;
		if (strcmp(format, "json") != 0)
			return reply_error(reply, 400, "invalid_argument",
					   "An A/B job's comparison (job=ID) is given as JSON only.");
		if ((rc = report_ab(req->server->store, base, max_regression, &comparison)) < 0)
			return reply_from_err(reply, rc);
		return reply_json(reply, 200, comparison);
	}
	if (strcmp(format, "json") == 0) {
		/* the rows printed as they are made, never a cJSON tree */
		struct buf out;
		buf_init(&out, REPORT_MAX_JSON);
		rc = report_compare_json(req->server->store, base, cand, max_regression, metric, across_jobs,
					 &out);
		if (rc < 0) {
			buf_release(&out);
			return reply_from_err(reply, rc);
		}
		return reply_text(reply, 200, "application/json", out.data ? out.data : strdup(""));
	}
	rc = report_compare_metric(req->server->store, base, cand, max_regression, metric, across_jobs,
				   &comparison);
	if (rc < 0)
		return reply_from_err(reply, rc);
	return reply_rendered(reply, comparison, format, report_render_compare);
}
