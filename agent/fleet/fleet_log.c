/* The fleet's log lines and answers described (fleet_log.h). */
#include "fleet_log.h"

#include <stdio.h>

void fleet_describe_answer(const struct rest_answer *a, const char *what, const char *problem, char *out,
			   size_t size)
{
	char start[120];

	rest_one_line(a->text.data ? a->text.data : "", start, sizeof(start));
	if (!*problem)
		problem = "was not expected";
	if (a->status >= 200 && a->status <= 299)
		snprintf(out, size, "The server's answer to %s (HTTP %ld) %s: %s", what, a->status, problem,
			 a->text.len ? start : "(empty body)");
	else
		snprintf(out, size, "The server answered HTTP %ld to %s: %s", a->status, what,
			 *a->message ? a->message : "(no message)");
}

void fleet_log_number(enum log_level level, const char *event, const char *key, long long value,
		      const char *key2, const char *value2)
{
	char text[32];

	snprintf(text, sizeof(text), "%lld", value);
	log_event(level, event, key, text, key2, value2, NULL);
}

void fleet_log_task(enum log_level level, const char *event, long long task_id, long long attempt,
		    const char *key, const char *value)
{
	char task[32], try[32];

	snprintf(task, sizeof(task), "%lld", task_id);
	snprintf(try, sizeof(try), "%lld", attempt);
	log_event(level, event, "task", task, "attempt", try, key, value, NULL);
}
