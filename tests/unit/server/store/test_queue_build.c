/* The build tasks' policy (queue_build.h): pure functions, no database. */
#include "check.h"
#include "store/queue_build.h"

#include "loadlab/err.h"

#include <stdlib.h>

static cJSON *parse(const char *text)
{
	cJSON *o = cJSON_Parse(text);

	CHECK(o != NULL);
	return o;
}

static void test_shared(void)
{
	static const struct {
		const char *spec;
		bool each_agent_default, shared;
	} cases[] = {
		{"{\"family\":\"pe\"}", false, true},
		{"{\"family\":\"pe\"}", true, false},
		{"{\"family\":\"elf\",\"build\":\"shared\"}", true, true},
		{"{\"family\":\"pe\",\"build\":\"each-agent\"}", false, false},
		{"{\"family\":\"program\"}", false, false},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *spec = parse(cases[i].spec);
		CHECK_EQ_INT(queue_build_shared(spec, cases[i].each_agent_default), cases[i].shared);
		cJSON_Delete(spec);
	}
}

static void test_target(void)
{
	/* Family, cell, facts of the pinned agent, and the target's text (NULL: refused). */
	static const struct {
		const char *family, *cell, *facts, *target;
	} cases[] = {
		{"pe", "{\"os\":\"winxp\"}", NULL,
		 "{\"family\":\"pe\",\"architecture\":\"x86_64\",\"toolchain\":\"x86_64-w64-mingw32-gcc\"}"},
		{"pe", "{\"arch\":\"x86\"}", NULL,
		 "{\"family\":\"pe\",\"architecture\":\"i686\",\"toolchain\":\"i686-w64-mingw32-gcc\"}"},
		{"pe", "{\"agent\":\"xp1\"}", "{\"arch\":\"i686\"}",
		 "{\"family\":\"pe\",\"architecture\":\"i686\",\"toolchain\":\"i686-w64-mingw32-gcc\"}"},
		{"pe", "{\"arch\":\"aarch64\"}", NULL, NULL},
		{"elf", "{}", NULL,
		 "{\"family\":\"elf\",\"architecture\":\"x86_64\",\"toolchain\":\"gcc+ld\"}"},
		{"elf", "{\"toolchain\":\"clang+lld\",\"arch\":\"aarch64\"}", NULL,
		 "{\"family\":\"elf\",\"architecture\":\"aarch64\",\"toolchain\":\"clang+lld\"}"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cJSON *cell = parse(cases[i].cell), *facts = cases[i].facts ? parse(cases[i].facts) : NULL;
		cJSON *target = NULL;
		int rc = queue_build_target(cases[i].family, cell, facts, &target);
		if (!cases[i].target) {
			CHECK_EQ_INT(rc, LL_EINVAL);
		} else {
			char *text = cJSON_PrintUnformatted(target);
			CHECK_EQ_INT(rc, 0);
			CHECK_EQ_STR(text, cases[i].target);
			free(text);
		}
		cJSON_Delete(target);
		cJSON_Delete(cell);
		cJSON_Delete(facts);
	}
}

static void test_matching_and_waiting(void)
{
	cJSON *pe =
		parse("{\"family\":\"pe\",\"architecture\":\"i686\",\"toolchain\":\"i686-w64-mingw32-gcc\"}");
	cJSON *elf = parse("{\"family\":\"elf\",\"architecture\":\"x86_64\",\"toolchain\":\"gcc+ld\"}");
	cJSON *builder = parse("{\"arch\":\"x86_64\",\"toolchains\":[\"x86_64-w64-mingw32-gcc\","
			       "\"i686-w64-mingw32-gcc\"],\"toolchain\":[\"gcc+ld\"]}");
	cJSON *lab = parse("{\"arch\":\"x86_64\",\"toolchains\":[],\"toolchain\":[]}");
	cJSON *labels = parse("{}");
	struct queue_agent agents[3] = {
		{.id = 1, .facts = lab, .labels = labels, .name = "xp1", .online = true},
		{.id = 2, .facts = builder, .labels = labels, .name = "linux1", .online = true},
		{.id = 3, .facts = builder, .labels = labels, .name = "linux2", .online = true},
	};
	char reason[QUEUE_WAITING_REASON_SIZE];

	/* Facts that list every toolchain are not enough: an admin marks
	 * builders (issue 37, the rogue builder). */
	CHECK(!queue_build_matches(pe, &agents[1]));
	CHECK(!queue_build_matches(elf, &agents[1]));
	CHECK(!queue_build_waiting(pe, agents, 2, reason));
	CHECK_EQ_STR(reason, "agent linux1 can build pe for i686 but is not marked as a builder"
			     " (an admin marks it: loadlab agents --builder 2)");
	CHECK(!queue_build_waiting(elf, agents, 3, reason));
	CHECK_EQ_STR(reason, "2 agents can build elf for x86_64 but none is marked as a builder"
			     " (an admin marks one: loadlab agents --builder NAME)");
	agents[0].builder = true; /* a builder without the toolchain builds nothing */
	CHECK(!queue_build_matches(pe, &agents[0]));
	agents[1].builder = true;
	CHECK(!queue_build_matches(pe, &agents[0]));
	CHECK(queue_build_matches(pe, &agents[1]));
	CHECK(queue_build_matches(elf, &agents[1]));
	CHECK(!queue_build_waiting(pe, agents, 1, reason));
	CHECK_EQ_STR(reason, "no agent can build pe for i686: needs i686-w64-mingw32-gcc");
	CHECK(queue_build_waiting(pe, agents, 2, reason));
	CHECK_EQ_STR(reason, "");
	agents[1].quarantined = true;
	CHECK(!queue_build_matches(pe, &agents[1]));
	CHECK(!queue_build_waiting(elf, agents, 2, reason));
	CHECK_EQ_STR(reason, "the agents that can build elf for x86_64 are offline or quarantined");
	/* An unmarked agent beside a marked one that is offline: the marked one is named. */
	CHECK(!queue_build_waiting(elf, agents, 3, reason));
	CHECK_EQ_STR(reason, "the agents that can build elf for x86_64 are offline or quarantined");
	agents[1].quarantined = false;
	agents[1].online = false;
	CHECK(queue_build_matches(elf, &agents[1])); /* leasing needs no online flag */
	CHECK(!queue_build_waiting(elf, agents, 3, reason));
	/* A build is wanted while an enrolled agent, online or not but not
	 * quarantined, can run one of the cells waiting for it. */
	{
		cJSON *xp = parse("{\"arch\":\"x86_64\"}");
		const cJSON *cells[2] = {xp, xp};
		long long pinned[2] = {0, 0};
		agents[1].online = false;
		CHECK(queue_build_wanted(cells, pinned, 1, agents, 3));
		CHECK(!queue_build_wanted(cells, pinned, 0, agents, 3)); /* nothing waits for it */
		CHECK(!queue_build_wanted(cells, pinned, 1, agents, 0)); /* nobody enrolled */
		pinned[0] = 9;                                           /* pinned to an agent gone */
		CHECK(!queue_build_wanted(cells, pinned, 1, agents, 3));
		CHECK(queue_build_wanted(cells, pinned, 2, agents, 3)); /* the second cell is not */
		agents[0].quarantined = agents[1].quarantined = agents[2].quarantined = true;
		CHECK(!queue_build_wanted(cells, pinned, 2, agents, 3));
		cJSON_Delete(xp);
	}
	cJSON_Delete(pe);
	cJSON_Delete(elf);
	cJSON_Delete(builder);
	cJSON_Delete(lab);
	cJSON_Delete(labels);
}

int main(void)
{
	test_shared();
	test_target();
	test_matching_and_waiting();
	return check_finish();
}
