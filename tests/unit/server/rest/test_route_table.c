/* The route table (rest/route_table.c, matched by http/http_route.c): method and path matching, the {id}
 * parameter, and the 404/405 distinction http.c makes from route_table_match(). */
#include "check.h"
#include "rest/routes.h"

#include <string.h>

/* The index of the route METHOD PATTERN in the table, or -1. */
static int route_index(const char *method, const char *pattern)
{
	for (int i = 0; i < rest_route_table.count; i++)
		if (!strcmp(rest_route_table.routes[i].method, method) &&
		    !strcmp(rest_route_table.routes[i].pattern, pattern))
			return i;
	return -1;
}

static void test_table(void)
{
	CHECK(rest_route_table.count >= 20);
	for (int i = 0; i < rest_route_table.count; i++) {
		const struct route *r = &rest_route_table.routes[i];
		CHECK(r->handler != NULL);
		CHECK(r->pattern[0] == '/');
		/* No two routes share a method and a pattern. */
		CHECK_EQ_INT(route_index(r->method, r->pattern), i);
		/* Routes that take a body have a limit, or stream it (blob
		 * uploads: their own limits); GET and DELETE read none. */
		if (route_table_stream(&rest_route_table, r))
			CHECK(!strcmp(r->method, "PUT") && r->max_body == 0);
		else if (!strcmp(r->method, "POST") || !strcmp(r->method, "PATCH") ||
			 !strcmp(r->method, "PUT"))
			CHECK(r->max_body > 0);
		else
			CHECK_EQ_INT(r->max_body, 0);
	}
	CHECK_EQ_INT(rest_route_table.routes[route_index("POST", "/api/v1/tasks/{id}/result")].max_body,
		     ROUTE_MAX_RESULT_BODY);
	CHECK_EQ_INT(rest_route_table.routes[route_index("GET", "/healthz")].auth, AUTH_ANYONE);
	{
		/* "{name}" takes the rest of the path, '/' included, never nothing */
		long long id = 7;
		bool wrong = false;
		int i = route_table_match(&rest_route_table, "GET", "/api/v1/series/ci/main", &id, &wrong);
		CHECK(i >= 0 && strcmp(rest_route_table.routes[i].pattern, "/api/v1/series/{name}") == 0);
		CHECK_EQ_INT(route_table_match(&rest_route_table, "GET", "/api/v1/series/", &id, &wrong), -1);
		i = route_table_match(&rest_route_table, "GET", "/api/v1/series", &id, &wrong);
		CHECK(i >= 0 && strcmp(rest_route_table.routes[i].pattern, "/api/v1/series") == 0);
		CHECK_EQ_INT(route_table_match(&rest_route_table, "DELETE", "/api/v1/series/x", &id, &wrong),
			     -1);
		CHECK(wrong);
	}
	CHECK_EQ_INT(rest_route_table.routes[route_index("GET", "/metrics")].auth, AUTH_METRICS);
	CHECK_EQ_INT(rest_route_table.routes[route_index("DELETE", "/api/v1/tokens/{id}")].auth, AUTH_ADMIN);
	CHECK_EQ_INT(rest_route_table.routes[route_index("POST", "/api/v1/lease")].auth, AUTH_AGENT);
	CHECK_EQ_INT(rest_route_table.routes[route_index("POST", "/api/v1/agents/enroll")].auth, AUTH_ENROLL);
	CHECK(rest_route_table.routes[route_index("GET", "/api/v1/jobs")].handler == route_jobs_list);
	CHECK(rest_route_table.routes[route_index("POST", "/api/v1/jobs")].handler == route_jobs_create);
}

static void test_match(void)
{
	long long id = -1;
	bool wrong = true;
	int i;

	i = route_table_match(&rest_route_table, "GET", "/api/v1/jobs", &id, &wrong);
	CHECK_EQ_INT(i, route_index("GET", "/api/v1/jobs"));
	CHECK_EQ_INT(id, 0);
	/* Same path, other method: another route. */
	CHECK_EQ_INT(route_table_match(&rest_route_table, "POST", "/api/v1/jobs", &id, &wrong),
		     route_index("POST", "/api/v1/jobs"));

	/* Path parameters. */
	i = route_table_match(&rest_route_table, "GET", "/api/v1/jobs/42", &id, &wrong);
	CHECK_EQ_INT(i, route_index("GET", "/api/v1/jobs/{id}"));
	CHECK_EQ_INT(id, 42);
	i = route_table_match(&rest_route_table, "POST", "/api/v1/jobs/7/cancel", &id, &wrong);
	CHECK_EQ_INT(i, route_index("POST", "/api/v1/jobs/{id}/cancel"));
	CHECK_EQ_INT(id, 7);
	i = route_table_match(&rest_route_table, "GET", "/api/v1/jobs/123456789012345/report", &id, &wrong);
	CHECK_EQ_INT(i, route_index("GET", "/api/v1/jobs/{id}/report"));
	CHECK_EQ_INT(id, 123456789012345LL);
	CHECK_EQ_INT(route_table_match(&rest_route_table, "DELETE", "/api/v1/tokens/9", &id, &wrong),
		     route_index("DELETE", "/api/v1/tokens/{id}"));
	CHECK_EQ_INT(id, 9);

	/* Bad ids match nothing (404): zero, a leading zero, 16 digits, signs,
	 * letters, nothing at all. */
	static const char *const bad[] = {
		"/api/v1/jobs/0",  "/api/v1/jobs/012", "/api/v1/jobs/1234567890123456",
		"/api/v1/jobs/-1", "/api/v1/jobs/+1",  "/api/v1/jobs/1a",
		"/api/v1/jobs/",   "/api/v1/jobs/1/",  "/api/v1/jobs/1/cancel/x",
	};
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		wrong = true;
		CHECK_EQ_INT(route_table_match(&rest_route_table, "GET", bad[k], &id, &wrong), -1);
		CHECK(!wrong);
	}

	/* Unknown paths: 404, not 405. */
	static const char *const unknown[] = {"/api/v1/job", "/api/v1/jobsx", "/API/v1/jobs", "",
					      "/healthz/",   "/api/v2/jobs"};
	for (size_t k = 0; k < sizeof(unknown) / sizeof(unknown[0]); k++) {
		wrong = true;
		CHECK_EQ_INT(route_table_match(&rest_route_table, "GET", unknown[k], &id, &wrong), -1);
		CHECK(!wrong);
	}

	/* A known path with a method it does not take: 405. */
	wrong = false;
	CHECK_EQ_INT(route_table_match(&rest_route_table, "DELETE", "/api/v1/jobs", &id, &wrong), -1);
	CHECK(wrong);
	wrong = false;
	CHECK_EQ_INT(route_table_match(&rest_route_table, "GET", "/api/v1/jobs/5/cancel", &id, &wrong), -1);
	CHECK(wrong);
	wrong = false;
	CHECK_EQ_INT(route_table_match(&rest_route_table, "POST", "/healthz", &id, &wrong), -1);
	CHECK(wrong);
	wrong = false;
	CHECK_EQ_INT(route_table_match(&rest_route_table, "get", "/healthz", &id, &wrong),
		     -1); /* methods are case-sensitive */
	CHECK(wrong);
}

int main(void)
{
	test_table();
	test_match();
	return check_finish();
}
