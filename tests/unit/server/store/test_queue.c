/* The queue's policy (queue.h): pure functions, no database. */
#include "check.h"
#include "store/queue.h"

#include <limits.h>

static void test_task_state_names(void)
{
	for (int i = 0; i < QUEUE_TASK_STATE_COUNT; i++)
		CHECK_EQ_INT(queue_task_state_parse(queue_task_state_name((enum queue_task_state)i)), i);
	CHECK_EQ_STR(queue_task_state_name(QUEUE_TASK_DEAD), "dead");
	CHECK_EQ_INT(queue_task_state_parse("running"), -1);
	CHECK_EQ_INT(queue_task_state_parse(""), -1);
	CHECK_EQ_INT(queue_task_state_parse("Queued"), -1);
}

static void test_job_state(void)
{
	/* Task counts by state (queued, leased, done, dead, cancelled), the
	 * highest attempt, the job's stored state and the state it should be. */
	static const struct {
		struct queue_task_counts counts;
		const char *stored, *expected;
	} cases[] = {
		/* A job without tasks, and one whose tasks never ran, is queued. */
		{{{0, 0, 0, 0, 0}, 0}, "queued", "queued"},
		{{{3, 0, 0, 0, 0}, 0}, "queued", "queued"},
		/* One lease makes it running. */
		{{{2, 1, 0, 0, 0}, 1}, "queued", "running"},
		/* Back in the queue after a failure: still running (attempts > 0). */
		{{{3, 0, 0, 0, 0}, 1}, "running", "running"},
		/* One done, others queued: running. */
		{{{2, 0, 1, 0, 0}, 1}, "running", "running"},
		/* All done. */
		{{{0, 0, 4, 0, 0}, 2}, "running", "done"},
		/* All finished, one dead: failed; all dead: failed. */
		{{{0, 0, 3, 1, 0}, 3}, "running", "failed"},
		{{{0, 0, 0, 2, 0}, 3}, "running", "failed"},
		/* One dead while another still runs: running, not failed yet. */
		{{{0, 1, 0, 1, 0}, 3}, "running", "running"},
		/* Cancelled stays cancelled, whatever the tasks say. */
		{{{0, 0, 5, 0, 0}, 1}, "cancelled", "cancelled"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK_EQ_STR(queue_job_state(cases[i].stored, &cases[i].counts), cases[i].expected);

	CHECK(queue_job_finished("done"));
	CHECK(queue_job_finished("failed"));
	CHECK(queue_job_finished("cancelled"));
	CHECK(!queue_job_finished("running"));
	CHECK(!queue_job_finished("queued"));
}

static void test_retry_delay(void)
{
	static const struct {
		long long attempt, first_ms, cap_ms, expected;
	} cases[] = {
		/* 500 ms doubling, capped at 1500 ms. */
		{0, 500, 1500, 500},
		{1, 500, 1500, 500},
		{2, 500, 1500, 1000},
		{3, 500, 1500, 1500},
		{4, 500, 1500, 1500},
		/* The daemon's defaults: 10 s doubling, capped at an hour. */
		{5, 10000, 3600000, 160000},
		{100, 10000, 3600000, 3600000},
		/* A huge attempt number neither overflows nor loops for long. */
		{LLONG_MAX, 1, LLONG_MAX / 2, LLONG_MAX / 2},
		/* No backoff stays no backoff; a first delay above the cap is capped. */
		{7, 0, 1500, 0},
		{1, 5000, 1500, 1500},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK_EQ_INT(queue_retry_delay(cases[i].attempt, cases[i].first_ms, cases[i].cap_ms),
			     cases[i].expected);
}

static void test_lease_expiry(void)
{
	CHECK(!queue_lease_expired(1000, 999));
	CHECK(!queue_lease_expired(1000, 1000)); /* still good at its last ms */
	CHECK(queue_lease_expired(1000, 1001));
	CHECK(!queue_lease_expired(LLONG_MAX, 0));
	CHECK(!queue_lease_expired(LLONG_MAX, LLONG_MAX));
}

static void test_after_attempt(void)
{
	CHECK_EQ_INT(queue_after_attempt(1, 3, true), QUEUE_TASK_QUEUED);
	CHECK_EQ_INT(queue_after_attempt(2, 3, true), QUEUE_TASK_QUEUED);
	CHECK_EQ_INT(queue_after_attempt(3, 3, true), QUEUE_TASK_DEAD);
	CHECK_EQ_INT(queue_after_attempt(4, 3, true), QUEUE_TASK_DEAD);
	/* Not retryable: dead at once. */
	CHECK_EQ_INT(queue_after_attempt(1, 3, false), QUEUE_TASK_DEAD);
	/* One attempt allowed: the first failure is final. */
	CHECK_EQ_INT(queue_after_attempt(1, 1, true), QUEUE_TASK_DEAD);
}

static void test_agent_state(void)
{
	CHECK_EQ_STR(queue_agent_state(false, true, 1000, 2000, 1000), "online");
	CHECK_EQ_STR(queue_agent_state(false, true, 1000, 2001, 1000), "offline");
	CHECK_EQ_STR(queue_agent_state(false, false, 0, 0, 1000), "offline");
	CHECK_EQ_STR(queue_agent_state(true, true, 1000, 1000, 1000), "quarantined");
	CHECK_EQ_STR(queue_agent_state(true, false, 0, 5000, 1000), "quarantined");
}

static cJSON *parse(const char *text)
{
	return cJSON_Parse(text);
}

static void test_matching(void)
{
	cJSON *facts = parse("{\"os\":\"win10\",\"arch\":[\"x64\",\"x86\"],\"cores\":8}");
	cJSON *labels = parse("{\"rack\":\"b\",\"os\":\"win10-ltsc\"}");
	cJSON *no_labels = parse("{}");
	struct queue_agent agents[] = {
		{.id = 7, .facts = facts, .labels = labels, .quarantined = false},
		{.id = 8, .facts = facts, .labels = no_labels, .quarantined = false},
		{.id = 9, .facts = facts, .labels = labels, .quarantined = true},
	};
	enum { AGENT, PLAIN, QUARANTINED };
	static const struct {
		const char *cell;
		long long pinned_agent;
		int agent;
		bool expected;
	} cases[] = {
		{"{}", 0, AGENT, true},
		{"{\"arch\":\"x86\"}", 0, AGENT, true}, /* one element of an array fact */
		{"{\"cores\":\"8\"}", 0, AGENT, true},  /* a number fact */
		{"{\"rack\":\"b\"}", 0, AGENT, true},   /* a label */
		{"{\"rack\":\"c\"}", 0, AGENT, false},
		{"{\"gpu\":\"yes\"}", 0, AGENT, false},
		{"{\"rack\":\"b\"}", 0, PLAIN, false},
		/* Pinned tasks go to their agent only, whatever the cell says. */
		{"{\"rack\":\"c\"}", 7, AGENT, true},
		{"{}", 8, AGENT, false},
		/* A quarantined agent gets nothing, not even its pinned tasks. */
		{"{}", 0, QUARANTINED, false},
		{"{}", 9, QUARANTINED, false},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *cell = parse(cases[i].cell);

		CHECK(cell != NULL);
		CHECK_EQ_INT(queue_task_matches(cell, cases[i].pinned_agent, &agents[cases[i].agent]),
			     cases[i].expected);
		cJSON_Delete(cell);
	}

	cJSON *selector = parse("{\"arch\":[\"arm64\",\"x64\"]}");
	cJSON *selector_none = parse("{\"arch\":[\"arm64\"]}");

	CHECK(queue_agent_selected(selector, &agents[AGENT]));
	CHECK(!queue_agent_selected(selector_none, &agents[AGENT]));
	CHECK(!queue_agent_selected(selector, &agents[QUARANTINED]));

	cJSON_Delete(facts);
	cJSON_Delete(labels);
	cJSON_Delete(no_labels);
	cJSON_Delete(selector);
	cJSON_Delete(selector_none);
}

/* Why a queued task waits: every reason of queue_task_waiting(), and none
 * once an agent that can take the task is there. */
static void test_waiting(void)
{
	cJSON *linux_facts = parse("{\"os\":\"linux\",\"arch\":\"x64\"}");
	cJSON *xp_facts = parse("{\"os\":\"winxp\",\"arch\":\"x86\"}");
	cJSON *no_labels = parse("{}");
	cJSON *on_xp = parse("{\"os\":\"winxp\"}");
	cJSON *xp_x64 = parse("{\"os\":\"winxp\",\"arch\":\"x64\"}");
	cJSON *anywhere = parse("{}");
	/* 2026-01-01T00:00:00.000Z */
	long long seen = 1767225600000LL;
	struct queue_agent linux_agent = {1, linux_facts, no_labels, false, "lab-linux", true, seen, false};
	struct queue_agent xp_online = {2, xp_facts, no_labels, false, "xp1", true, seen, false};
	struct queue_agent xp_quarantined = {3, xp_facts, no_labels, true, "xp2", true, seen, false};
	struct queue_agent xp_offline = {4, xp_facts, no_labels, false, "xp3", false, seen, false};
	struct queue_agent xp_offline_later = {5,    xp_facts, no_labels,    false,
					       NULL, false,    seen + 60000, false};
	struct queue_agent xp_never = {6, xp_facts, no_labels, false, "xp5", false, 0, false};
	char reason[QUEUE_WAITING_REASON_SIZE];

	/* No agent at all, or only one without the fact. */
	CHECK(!queue_task_waiting(on_xp, 0, NULL, 0, reason));
	CHECK_EQ_STR(reason, "no agent has os=winxp");
	CHECK(!queue_task_waiting(on_xp, 0, &linux_agent, 1, reason));
	CHECK_EQ_STR(reason, "no agent has os=winxp");
	/* Each value is somewhere, but never on the same agent. */
	{
		struct queue_agent two[] = {linux_agent, xp_online};
		CHECK(!queue_task_waiting(xp_x64, 0, two, 2, reason));
		CHECK_EQ_STR(reason, "no agent has os=winxp, arch=x64 together");
		/* An online, matching agent: nothing to say. */
		snprintf(reason, sizeof(reason), "stale");
		CHECK(queue_task_waiting(on_xp, 0, two, 2, reason));
		CHECK_EQ_STR(reason, "");
	}
	/* A cell without constraints runs on any online agent; with none
	 * enrolled the reason says so (not "no agent has  together"). */
	CHECK(!queue_task_waiting(anywhere, 0, NULL, 0, reason));
	CHECK_EQ_STR(reason, "no agent is enrolled");
	CHECK(queue_task_waiting(anywhere, 0, &linux_agent, 1, reason));
	CHECK(!queue_task_waiting(anywhere, 0, &xp_quarantined, 1, reason));
	/* Quarantined. */
	{
		struct queue_agent two[] = {linux_agent, xp_quarantined};
		CHECK(!queue_task_waiting(on_xp, 0, two, 2, reason));
		CHECK_EQ_STR(reason, "the only matching agent (xp2) is quarantined");
	}
	{
		struct queue_agent two[] = {xp_quarantined, xp_quarantined};
		CHECK(!queue_task_waiting(on_xp, 0, two, 2, reason));
		CHECK_EQ_STR(reason, "all 2 matching agents are quarantined");
	}
	/* Offline: the latest time any of them was seen. */
	CHECK(!queue_task_waiting(on_xp, 0, &xp_offline, 1, reason));
	CHECK_EQ_STR(reason, "the only matching agent (xp3) is offline since 2026-01-01T00:00:00.000Z");
	CHECK(!queue_task_waiting(on_xp, 0, &xp_never, 1, reason));
	CHECK_EQ_STR(reason, "the only matching agent (xp5) is offline, never seen");
	{
		struct queue_agent three[] = {xp_offline, xp_offline_later, linux_agent};
		CHECK(!queue_task_waiting(on_xp, 0, three, 3, reason));
		CHECK_EQ_STR(reason, "matching agents are offline since 2026-01-01T00:01:00.000Z");
	}
	{
		struct queue_agent mixed[] = {xp_offline, xp_quarantined};
		CHECK(!queue_task_waiting(on_xp, 0, mixed, 2, reason));
		CHECK_EQ_STR(reason, "matching agents are offline since 2026-01-01T00:00:00.000Z"
				     " or quarantined");
		/* Enrolling an online agent with the facts ends the wait. */
		struct queue_agent more[] = {xp_offline, xp_quarantined, xp_online};
		CHECK(queue_task_waiting(on_xp, 0, more, 3, reason));
	}
	/* Pinned tasks (each_agent) name their agent, whatever the cell. */
	{
		struct queue_agent all[] = {linux_agent, xp_quarantined, xp_offline_later};
		CHECK(queue_task_waiting(on_xp, 1, all, 3, reason));
		CHECK_EQ_STR(reason, "");
		CHECK(!queue_task_waiting(anywhere, 3, all, 3, reason));
		CHECK_EQ_STR(reason, "agent xp2 is quarantined");
		CHECK(!queue_task_waiting(anywhere, 5, all, 3, reason));
		CHECK_EQ_STR(reason, "agent 5 is offline since 2026-01-01T00:01:00.000Z");
		CHECK(!queue_task_waiting(anywhere, 42, all, 3, reason));
		CHECK_EQ_STR(reason, "agent 42 is not enrolled");
	}

	cJSON_Delete(linux_facts);
	cJSON_Delete(xp_facts);
	cJSON_Delete(no_labels);
	cJSON_Delete(on_xp);
	cJSON_Delete(xp_x64);
	cJSON_Delete(anywhere);
}

static void test_lease_timing(void)
{
	CHECK_EQ_INT(queue_lease_seconds(1000), 1);
	CHECK_EQ_INT(queue_lease_seconds(1001), 2);
	CHECK_EQ_INT(queue_lease_seconds(60000), 60);
	CHECK_EQ_INT(queue_heartbeat_seconds(60000), 20);
	CHECK_EQ_INT(queue_heartbeat_seconds(6000), 2);
	CHECK_EQ_INT(queue_heartbeat_seconds(5999), 1);
	CHECK_EQ_INT(queue_heartbeat_seconds(1000), 1);
}

int main(void)
{
	test_task_state_names();
	test_job_state();
	test_retry_delay();
	test_lease_expiry();
	test_after_attempt();
	test_agent_state();
	test_matching();
	test_waiting();
	test_lease_timing();
	return check_finish();
}
