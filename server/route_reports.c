/* GET /api/v1/jobs/{id}/report and GET /api/v1/compare: routed and
 * checked now; the tables arrive with the reports issue (#6), until then
 * 501 not_implemented. */
#include "routes.h"

#include "loadlab/err.h"

#include <stdlib.h>
#include <string.h>

static int check_format(struct http_request *req, struct http_reply *reply)
{
	const char *format = http_query(req, "format");

	if (format && strcmp(format, "json") && strcmp(format, "csv") && strcmp(format, "md"))
		return reply_error(reply, 400, "invalid_argument", "format must be json, csv or md."), -1;
	return 0;
}

static int job_exists(struct http_request *req, struct http_reply *reply, const char *text,
		      const char *name)
{
	char *end;
	long long id;
	cJSON *job;
	int rc;

	if (!text)
		return reply_error(reply, 400, "invalid_argument", "Query argument '%s' is required.", name), -1;
	id = strtoll(text, &end, 10);
	if (*end || end == text || id < 1)
		return reply_error(reply, 400, "invalid_argument", "'%s' must be a job id.", name), -1;
	rc = store_job_get(req->server->store, id, &job);
	if (rc < 0)
		return reply_from_err(reply, rc), -1;
	cJSON_Delete(job);
	return 0;
}

int route_reports_job(struct http_request *req, struct http_reply *reply)
{
	cJSON *job;
	int rc;

	if (check_format(req, reply) < 0)
		return 0;
	rc = store_job_get(req->server->store, req->path_id, &job);
	if (rc < 0)
		return reply_from_err(reply, rc);
	cJSON_Delete(job);
	return reply_error(reply, 501, "not_implemented",
			   "Job reports are not available in this version of loadlabd.");
}

int route_reports_compare(struct http_request *req, struct http_reply *reply)
{
	if (check_format(req, reply) < 0 ||
	    job_exists(req, reply, http_query(req, "baseline"), "baseline") < 0 ||
	    job_exists(req, reply, http_query(req, "candidate"), "candidate") < 0)
		return 0;
	return reply_error(reply, 501, "not_implemented",
			   "Comparisons are not available in this version of loadlabd.");
}
