/*
 * test_loader_stats.c - the parsers of what the agent records beside
 * time (issue 40): glibc's LD_DEBUG=statistics output as recorded on this
 * machine kind (agent/measure/loader_stats.c), and a recorded set of run
 * counters through the result's "run_counters" (measure_counters.c), then
 * one real run that says what this machine cannot count.
 */
#include "check.h"
#include "check_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadlab/err.h"
#include "measure/loader_stats.h"
#include "measure/measure.h"
#include "measure/plat_measure.h"

/* Recorded: LD_DEBUG=statistics LD_DEBUG_OUTPUT=... /bin/ls (glibc 2.36,
 * Debian 12), with a line of another LD_DEBUG category and a child
 * process's lines (pid 30007) mixed in, as a program that starts another
 * would leave them in one output stream. */
static const char recorded[] = "     30005:\t\n"
			       "     30005:\truntime linker statistics:\n"
			       "     30005:\t  total startup time in dynamic loader: 3145216 cycles\n"
			       "     30005:\t            time needed for relocation: 124706 cycles (3.9%)\n"
			       "     30007:\t                 number of relocations: 99999\n"
			       "     30005:\t                 number of relocations: 333\n"
			       "     30005:\t      number of relocations from cache: 7\n"
			       "     30005:\t        number of relative relocations: 267\n"
			       "     30005:\t           time needed to load objects: 132066 cycles (4.1%)\n"
			       "     30005:\tfile=libc.so.6 [0];  needed by /bin/ls [0]\n"
			       "     30005:\t\n"
			       "     30005:\truntime linker statistics:\n"
			       "     30005:\t           final number of relocations: 359\n"
			       "     30005:\tfinal number of relocations from cache: 7\n";

static void test_parse_recorded(void)
{
	struct loader_stats s;
	cJSON *j = NULL;

	CHECK_EQ_INT(loader_stats_parse(recorded, &s), 0);
	CHECK(s.pid == 30005);
	CHECK(s.relocations == 333); /* not the other process's 99999 */
	CHECK(s.relocations_from_cache == 7);
	CHECK(s.relative_relocations == 267);
	CHECK(s.startup_time == 3145216);
	CHECK(s.relocation_time == 124706);
	CHECK(s.load_time == 132066);
	CHECK(s.final_relocations == 359);
	CHECK(s.final_relocations_from_cache == 7);
	CHECK_EQ_STR(s.time_unit, "cycles");
	CHECK_EQ_INT(loader_stats_json(&s, &j), 0);
	CHECK(number(j, "relocations") == 333 && number(j, "relative_relocations") == 267);
	CHECK(number(j, "startup_time") == 3145216 && number(j, "final_relocations") == 359);
	CHECK_EQ_STR(cJSON_GetStringValue(member(j, "time_unit")), "cycles");
	cJSON_Delete(j);
}

static void test_parse_partial_and_bad(void)
{
	struct loader_stats s;
	cJSON *j = NULL;

	/* A program killed before it exited: no final block, and the JSON
	 * has no final count rather than a zero. */
	CHECK_EQ_INT(loader_stats_parse("  12:\t                 number of relocations: 5\n"
					"  12:\t        number of relative relocations: 0\n",
					&s),
		     0);
	CHECK(s.relocations == 5 && s.relative_relocations == 0 && s.final_relocations == -1);
	CHECK(s.startup_time == -1 && s.time_unit[0] == '\0');
	CHECK_EQ_INT(loader_stats_json(&s, &j), 0);
	CHECK(number(j, "relative_relocations") == 0); /* counted: a real zero */
	CHECK(!member(j, "final_relocations") && !member(j, "startup_time") && !member(j, "time_unit"));
	cJSON_Delete(j);
	/* Nothing of the loader's: a static program, or another loader. */
	CHECK_EQ_INT(loader_stats_parse("", &s), LL_ENOTFOUND);
	CHECK_EQ_INT(loader_stats_parse("hello\n  12:\tfile=libc.so.6 [0]\n", &s), LL_ENOTFOUND);
	/* A statistics line without its number. */
	CHECK_EQ_INT(loader_stats_parse("  12:\t                 number of relocations: many\n", &s),
		     LL_EFORMAT);
	/* No "PID:\t" prefix: not LD_DEBUG output. */
	CHECK_EQ_INT(loader_stats_parse("number of relocations: 5\n", &s), LL_ENOTFOUND);
}

static void test_recorded_counters(void)
{
	/* Recorded on the development VM (wait4's rusage of /bin/true's runs;
	 * no PMU, so no instructions or cycles), and a run where a counter
	 * came back unknown. */
	struct plat_measure_counters k[3];
	struct measure_counters c;
	cJSON *program = cJSON_CreateObject(), *method = cJSON_CreateObject(), *rc;

	for (int i = 0; i < 3; i++) {
		k[i] = plat_measure_counters_unknown();
		k[i].cpu_user_ns = 0;
		k[i].cpu_system_ns = 4249000 + 100000 * i;
		k[i].soft_faults = 48 + i;
		k[i].hard_faults = 0;
		k[i].page_faults = 48 + i;
		k[i].voluntary_switches = 1;
		k[i].involuntary_switches = i < 2 ? 1 : -1;
	}
	CHECK_EQ_INT(measure_counters_init(&c, 1, 3), 0);
	for (size_t i = 0; i < 3; i++)
		measure_counters_put(&c, 0, i, &k[i]);
	measure_counters_put(&c, 0, 7, &k[0]); /* out of range: ignored */
	CHECK_EQ_INT(measure_counters_json(&c, 0, 3, program), 0);
	rc = (cJSON *)member(program, "run_counters");
	CHECK(json_array_has_string(member(rc, "counters"), "cpu_user_us") &&
	      json_array_has_string(member(rc, "counters"), "minor_faults"));
	CHECK(!json_array_has_string(member(rc, "counters"), "instructions") &&
	      !json_array_has_string(member(rc, "counters"), "involuntary_switches"));
	/* Never a zero for what was not counted: no series, a reason. */
	CHECK(!member(rc, "instructions") && !member(rc, "cycles") && !member(rc, "involuntary_switches"));
	CHECK(cJSON_IsString(member(member(rc, "not_counted"), "instructions")));
	CHECK(cJSON_IsString(member(member(rc, "not_counted"), "involuntary_switches")));
	CHECK(cJSON_GetArraySize(member(rc, "cpu_system_us")) == 3);
	CHECK(cJSON_GetArrayItem(member(rc, "cpu_system_us"), 1)->valuedouble == 4349);
	CHECK(cJSON_GetArrayItem(member(rc, "minor_faults"), 2)->valuedouble == 50);
	CHECK(cJSON_GetArrayItem(member(rc, "cpu_user_us"), 0)->valuedouble == 0); /* counted: a real 0 */
	/* The method's lists are over every program and carry the source. */
	CHECK_EQ_INT(measure_counters_method_json(&c, 3, method), 0);
	CHECK(cJSON_IsString(member(member(method, "run_counters"), "source")));
	CHECK(json_array_has_string(member(member(method, "run_counters"), "counters"), "page_faults"));
	CHECK(!member(member(method, "run_counters"), "cpu_user_us")); /* no series in the method */
	measure_counters_release(&c);
	cJSON_Delete(program);
	cJSON_Delete(method);
}

/* One real run: rusage is counted; without a PMU (this VM) the reason for
 * instructions says so. */
static void test_this_machine(void)
{
	const char *argv[] = {"/bin/true", NULL};
	struct plat_spawn_options o = {.argv = argv};
	struct plat_measure_counters k;
	char why[256];
	FILE *f = fopen("/sys/bus/event_source/devices/cpu/type", "r");
	bool pmu = f != NULL;

	if (f)
		fclose(f);
	CHECK_EQ_INT(plat_measure_run(&o, 10000, false, &k), 0);
	CHECK(k.cpu_user_ns >= 0 && k.cpu_system_ns >= 0 && k.cpu_user_ns + k.cpu_system_ns > 0);
	CHECK(k.soft_faults > 0 && k.voluntary_switches >= 0 && k.involuntary_switches >= 0);
	plat_measure_run_counter_why_not(PLAT_COUNTER_INSTRUCTIONS, why, sizeof(why));
	if (!pmu) {
		CHECK(k.instructions == -1 && k.cycles == -1);
		CHECK(strstr(why, "no PMU") != NULL);
		printf("this machine: instructions not counted: %s\n", why);
	} else {
		printf("this machine: instructions %lld, cycles %lld (%s)\n", k.instructions, k.cycles, why);
		CHECK(k.instructions > 0 || why[0]);
	}
	plat_measure_run_counter_why_not(PLAT_COUNTER_MINOR_FAULTS, why, sizeof(why));
	CHECK_EQ_STR(why, "");
}

/* loader_stats_take() on this machine's /bin/true, and on a program that
 * fails. */
static void test_take(void)
{
	const char *ok_argv[] = {"/bin/true", NULL}, *bad_argv[] = {"/bin/false", NULL};
	struct measure_program ok = {"true", {.argv = ok_argv}, NULL},
			       bad = {"false", {.argv = bad_argv}, NULL};
	char dir[] = "/tmp/loadlab-ldstats-XXXXXX";
	cJSON *j = NULL;

	CHECK(mkdtemp(dir) != NULL);
	CHECK_EQ_INT(loader_stats_take(&ok, dir, 10000, &j), 0);
	CHECK(number(j, "relocations") > 0 && number(j, "final_relocations") >= number(j, "relocations"));
	CHECK(!member(j, "not_counted"));
	cJSON_Delete(j);
	j = NULL;
	CHECK_EQ_INT(loader_stats_take(&bad, dir, 10000, &j), 0);
	CHECK(strstr(cJSON_GetStringValue(member(j, "not_counted")), "exited with 1") != NULL);
	CHECK(!member(j, "relocations"));
	cJSON_Delete(j);
	plat_remove_tree(dir);
}

int main(void)
{
	test_parse_recorded();
	test_parse_partial_and_bad();
	test_recorded_counters();
	test_this_machine();
	test_take();
	return check_finish();
}
