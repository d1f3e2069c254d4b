/* /api/v1/series: the jobs that share a series, as points per variant and
 * cell (report_series()), their change points (report_change_points()),
 * and a series' alert settings. */
#include "route_util.h"
#include "routes.h"

#include "reports/report.h"
#include "schedules/webhook_target.h"

#include "loadlab/clock.h"
#include "loadlab/err.h"
#include "loadlab/job_spec.h"
#include "loadlab/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SERIES_PREFIX "/api/v1/series/"
#define CHANGE_POINTS_SUFFIX "/change-points"

/* The {name} of the path (the daemon sees it percent-decoded, so both
 * "ci%2Fmain" and "ci/main" name the series ci/main); NULL after filling
 * REPLY when it is not a valid series name. */
static const char *series_name(struct http_request *req, struct http_reply *reply)
{
	const char *name = req->path + strlen(SERIES_PREFIX);

	if (!job_spec_series_valid(name)) {
		reply_error(reply, 400, "invalid_argument", "A series name is 1 to %d printable characters.",
			    JOB_SPEC_MAX_SERIES);
		return NULL;
	}
	return name;
}

/* Hides from a caller who does not own it a series' webhook URL and the
 * reasons of its alerts' deliveries (OUT: a series or settings body). */
static void redact(const struct http_request *req, cJSON *out, const char *owner)
{
	cJSON *alert;

	if (route_is_owner(req, owner))
		return;
	if (cJSON_IsString(cJSON_GetObjectItemCaseSensitive(out, "webhook_url")))
		cJSON_ReplaceItemInObjectCaseSensitive(out, "webhook_url", cJSON_CreateNull());
	cJSON_ArrayForEach(alert, cJSON_GetObjectItemCaseSensitive(out, "alerts"))
		route_alert_redact(alert);
}

int route_series_owner_check(struct http_request *req, const char *name, const char *action)
{
	struct store_series_settings settings;
	int rc = store_series_settings_get(req->server->store, name, &settings);

	if (rc < 0 || !settings.owner[0] || route_is_owner(req, settings.owner))
		return rc;
	return err_set(LL_EFORBIDDEN, "Series '%.128s' belongs to %s: only its owner or an admin may %s it.",
		       name, settings.owner, action);
}

int route_series_list(struct http_request *req, struct http_reply *reply)
{
	cJSON *list = NULL, *series;
	int rc = store_series_list(req->server->store, &list);

	if (rc == 0)
		cJSON_ArrayForEach(series, cJSON_GetObjectItemCaseSensitive(list, "series")) {
			const char *owner =
				cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(series, "owner"));
			redact(req, series, owner ? owner : "");
		}
	return route_reply(reply, rc, 200, list);
}

/* "since": milliseconds since the epoch, or an RFC 3339 UTC time
 * ("2024-05-01" or "2024-05-01T12:00:00Z"). */
static int parse_since(const char *text, long long *ret_ms)
{
	int y, mo, d, h = 0, mi = 0, s = 0, n = 0;
	char *end;
	long long ms = strtoll(text, &end, 10);

	if (*text && !*end && strlen(text) > 10) {
		*ret_ms = ms;
		return 0;
	}
	if (sscanf(text, "%4d-%2d-%2d%n", &y, &mo, &d, &n) != 3)
		return LL_EINVAL;
	if (text[n] && (sscanf(text + n, "T%2d:%2d:%2dZ", &h, &mi, &s) != 3))
		return LL_EINVAL;
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60)
		return LL_EINVAL;
	{
		/* days from civil (H. Hinnant) */
		long long yy = y - (mo <= 2), era = (yy >= 0 ? yy : yy - 399) / 400, yoe = yy - era * 400;
		long long doy = (153 * (mo > 2 ? mo - 3 : mo + 9) + 2) / 5 + d - 1;
		long long days = era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
		*ret_ms = ((days * 24 + h) * 60 + mi) * 60000LL + s * 1000LL;
	}
	return 0;
}

/* GET /api/v1/series/{name}/change-points[?variant=&cell=]: NAME is the
 * path between the prefix and the suffix (NAME_LEN bytes). */
static int series_change_points(struct http_request *req, struct http_reply *reply, size_t name_len)
{
	char name[JOB_SPEC_MAX_SERIES + 1];
	cJSON *out = NULL;
	int rc;

	if (name_len == 0 || name_len > JOB_SPEC_MAX_SERIES)
		return reply_error(reply, 400, "invalid_argument",
				   "A series name is 1 to %d printable characters.", JOB_SPEC_MAX_SERIES);
	memcpy(name, req->path + strlen(SERIES_PREFIX), name_len);
	name[name_len] = '\0';
	if (!job_spec_series_valid(name))
		return reply_error(reply, 400, "invalid_argument",
				   "A series name is 1 to %d printable characters.", JOB_SPEC_MAX_SERIES);
	rc = report_change_points(req->server->store, name, http_query(req, "variant"),
				  http_query(req, "cell"), &out);
	return route_reply(reply, rc, 200, out);
}

int route_series_get(struct http_request *req, struct http_reply *reply)
{
	const char *name, *metric = http_query(req, "metric"), *since;
	size_t path_len = strlen(req->path), prefix = strlen(SERIES_PREFIX),
	       suffix = strlen(CHANGE_POINTS_SUFFIX);
	struct store_series_settings settings;
	long long since_ms = -(1LL << 62);
	cJSON *out;
	int rc;

	if (path_len >= prefix + suffix && strcmp(req->path + path_len - suffix, CHANGE_POINTS_SUFFIX) == 0)
		return series_change_points(req, reply, path_len - prefix - suffix);
	if (!(name = series_name(req, reply)))
		return 0;
	if (!metric)
		metric = "median";
	if (strcmp(metric, "median") != 0 && strcmp(metric, "min") != 0)
		return reply_error(reply, 400, "invalid_argument", "metric must be median or min.");
	if ((since = http_query(req, "since")) && parse_since(since, &since_ms) < 0)
		return reply_error(
			reply, 400, "invalid_argument",
			"since must be milliseconds since 1970 or a UTC time like 2024-05-01T12:00:00Z.");
	rc = report_series(req->server->store, name, http_query(req, "variant"), http_query(req, "cell"),
			   metric, since_ms, &out);
	if (rc == 0 && (rc = store_series_settings_get(req->server->store, name, &settings)) < 0)
		cJSON_Delete(out);
	if (rc == 0) {
		if (settings.owner[0])
			cJSON_AddStringToObject(out, "owner", settings.owner);
		else
			cJSON_AddNullToObject(out, "owner");
		redact(req, out, settings.owner);
	}
	return route_reply(reply, rc, 200, out);
}

/* Reads "retain_days" (0..ROUTE_RETAIN_DAYS_MAX) and "retain_points"
 * (0..ROUTE_RETAIN_POINTS_MAX), integers, 0 keeping every raw sample
 * (docs/operations.md), into SETTINGS when BODY has them. */
static int route_series_retention(const cJSON *body, struct store_series_settings *settings)
{
	const struct {
		const char *key;
		double max;
		long long *value;
	} fields[] = {{"retain_days", ROUTE_RETAIN_DAYS_MAX, &settings->retain_days},
		      {"retain_points", ROUTE_RETAIN_POINTS_MAX, &settings->retain_points}};

	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		const cJSON *item = cJSON_GetObjectItemCaseSensitive(body, fields[i].key);
		if (!item)
			continue;
		if (!cJSON_IsNumber(item) || item->valuedouble < 0 || item->valuedouble > fields[i].max ||
		    item->valuedouble != (double)(long long)item->valuedouble)
			return err_set(LL_ERANGE, "%s must be a whole number from 0 (keep all) to %.0f.",
				       fields[i].key, fields[i].max);
		*fields[i].value = (long long)item->valuedouble;
	}
	return 0;
}

/* PUT /api/v1/series/{name}: {"threshold_pct": 0.5..1000, "webhook_url":
 * "http(s)://..." | null}; absent fields keep their value. Only the
 * series' owner or an admin; the first to set a series nobody owns owns it;
 * an admin may name another owner ("owner": "user:NAME" | "team:TEAM").
 * The URL is checked by webhook_target_check(). */
int route_series_put(struct http_request *req, struct http_reply *reply)
{
	static const char *const keys[] = {"threshold_pct", "webhook_url",   "owner",
					   "retain_days",   "retain_points", NULL};
	const char *name = series_name(req, reply);
	struct store_series_settings settings;
	const cJSON *item;
	cJSON *body, *out = NULL;
	int rc;

	if (!name)
		return 0;
	if (http_body_object(req, reply, false, &body) < 0)
		return 0;
	if ((rc = json_check_keys(body, keys, "series settings")) < 0 ||
	    (rc = store_series_settings_get(req->server->store, name, &settings)) < 0 ||
	    (rc = route_owner_check(req, settings.owner, "This series")) < 0)
		goto done;
	if (!settings.owner[0])
		route_caller(req, settings.owner, sizeof(settings.owner));
	if ((rc = route_owner_named(req, body, settings.owner)) < 0)
		goto done;
	if ((item = cJSON_GetObjectItemCaseSensitive(body, "threshold_pct"))) {
		if (!cJSON_IsNumber(item) || item->valuedouble < 0.5 || item->valuedouble > 1000) {
			rc = err_set(LL_ERANGE, "threshold_pct must be a number from 0.5 to 1000.");
			goto done;
		}
		settings.threshold_pct = item->valuedouble;
	}
	if ((item = cJSON_GetObjectItemCaseSensitive(body, "webhook_url"))) {
		if (cJSON_IsNull(item)) {
			settings.webhook_url[0] = '\0';
		} else if (!cJSON_IsString(item)) {
			rc = err_set(LL_EINVAL, "webhook_url must be an http:// or https:// URL, or null.");
			goto done;
		} else if ((rc = webhook_target_check(item->valuestring, req->server->config.webhook_allow)) <
			   0) {
			goto done;
		} else {
			snprintf(settings.webhook_url, sizeof(settings.webhook_url), "%s", item->valuestring);
		}
	}
	if ((rc = route_series_retention(body, &settings)) < 0)
		goto done;
	rc = store_series_settings_put(req->server->store, name, &settings, clock_now_ms(), &out);
done:
	cJSON_Delete(body);
	return route_reply(reply, rc, 200, out);
}
