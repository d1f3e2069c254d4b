/*
 * loadlab calibrate [--agent NAME|ID] [--family elf|pe] [--delay-us X]
 * [--runs N] [--rounds R] [--wait]: the known-effect self-test of one
 * agent, or of every agent, run by the fleet. Submits ordinary jobs (POST
 * /api/v1/jobs) of three variants, delay-0, delay-X and delay-2X, of one
 * small generated program whose first library's entry point waits 0, X
 * and 2X µs, marked "calibration": {"delay_us": X} and pinned to the
 * agents by an each_agent matrix on their names (docs/rest-bodies.md).
 * The daemon records each agent's recovered cost as its last_calibration
 * (GET /api/v1/agents), which --wait prints once the jobs end.
 */
#include "args.h"
#include "client.h"
#include "commands.h"
#include "job_poll.h"
#include "table.h"

#include "loadlab/err.h"
#include "loadlab/job_spec.h"
#include "loadlab/json.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The program: small enough to build in seconds (as loadlab-agent
 * calibrate's). */
#define CALIBRATE_DLLS 2
#define CALIBRATE_EXPORTS 16
#define CALIBRATE_DEFAULT_DELAY_US 1000
#define CALIBRATE_DEFAULT_RUNS 100
#define CALIBRATE_DEFAULT_ROUNDS 4
/* Once the jobs ended, how long the calibrations may take to appear. */
#define CALIBRATE_RECORD_POLLS 20
#define CALIBRATE_RECORD_POLL_MS 250
/* Jobs one call submits at most: each pins up to 16 agents (the matrix's
 * values per key), per family. */
#define CALIBRATE_MAX_JOBS 64

static const char usage_text[] =
	"usage: loadlab calibrate [--agent NAME|ID] [--family elf|pe] [--delay-us X]\n"
	"                         [--runs N] [--rounds R] [--wait]\n\n"
	"The known-effect self-test, run by the fleet: submits to the agent (by\n"
	"name or id; every non-quarantined agent without --agent) a job of three\n"
	"variants whose first library's entry point waits 0, X and 2X\n"
	"microseconds (X: --delay-us, 1..50000, default 1000). The daemon records\n"
	"what each agent recovered (the median of the per-pass differences of X\n"
	"and 0 when they pair, else median(X) - median(0), against X, with its\n"
	"95 % interval, and the noise) as its last calibration: `loadlab agents`, GET\n"
	"/api/v1/agents, the dashboard's fleet page. With 3 or more earlier\n"
	"calibrations of the agent (same X, family and runner) the interval also\n"
	"holds what varies between them (\"across N earlier calibrations\"), else it\n"
	"is one job's (\"within-job only\").\n"
	"  --family  elf or pe; default from the agent's facts: elf on Linux,\n"
	"            pe elsewhere (Windows, or Wine when asked with --family pe)\n"
	"  --runs    warm runs per variant, 3..1000 (default 100), in --rounds\n"
	"            1..20 (default 4)\n"
	"  --wait    follow the jobs to their end and print each calibration.\n"
	"Exit 0 when submitted (with --wait: when every job is done and its\n"
	"calibration recorded), 1 when a job failed or was cancelled, 2 for an\n"
	"error (an unknown agent, a bad value: nothing is submitted then).\n";

struct calibrate_options {
	const char *agent, *family;
	long long delay_us, runs, rounds;
	bool wait;
};

static int calibrate_option(void *context, int option, const char *value)
{
	struct calibrate_options *o = context;

	switch (option) {
	case 'a':
		o->agent = value;
		return 0;
	case 'f':
		if (strcmp(value, "elf") != 0 && strcmp(value, "pe") != 0)
			return err_set(LL_EINVAL, "--family is elf or pe, not '%s'.", value);
		o->family = value;
		return 0;
	case 'd':
		return args_integer(value, 1, JOB_SPEC_MAX_CALIBRATION_DELAY_US, "--delay-us", &o->delay_us);
	case 'r':
		return args_integer(value, 3, JOB_SPEC_MAX_WARM_RUNS, "--runs", &o->runs);
	case 'R':
		return args_integer(value, 1, JOB_SPEC_MAX_ROUNDS, "--rounds", &o->rounds);
	case 'w':
		o->wait = true;
		return 0;
	}
	return 0;
}

/* OBJ's string member KEY, or "". */
static const char *text_of(const cJSON *obj, const char *key)
{
	const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(obj, key));
	return s ? s : "";
}

/* The family an agent calibrates with: FORCED, else elf on Linux, pe elsewhere. */
static const char *agent_family(const cJSON *agent, const char *forced)
{
	if (forced)
		return forced;
	return strcmp(text_of(cJSON_GetObjectItemCaseSensitive(agent, "facts"), "os"), "linux") == 0 ? "elf"
												     : "pe";
}

/* The calibration job of FAMILY for the agents named in NAMES (an array,
 * taken over). */
static cJSON *calibration_job(const char *family, cJSON *names, const struct calibrate_options *o)
{
	cJSON *job = cJSON_CreateObject(), *each, *gen, *variants, *warm, *cal;
	char name[64];

	each = cJSON_AddObjectToObject(cJSON_AddObjectToObject(job, "matrix"), "each_agent");
	if (!each || !cJSON_AddItemToObject(each, "agent", names)) {
		cJSON_Delete(names);
		cJSON_Delete(job);
		return NULL;
	}
	snprintf(name, sizeof(name), "calibrate %s %lld us", family, o->delay_us);
	if (!cJSON_AddStringToObject(job, "name", name) || !cJSON_AddStringToObject(job, "family", family) ||
	    !(gen = cJSON_AddObjectToObject(job, "generator")) ||
	    !cJSON_AddNumberToObject(gen, "dlls", CALIBRATE_DLLS) ||
	    !cJSON_AddNumberToObject(gen, "exports", CALIBRATE_EXPORTS) ||
	    !(variants = cJSON_AddArrayToObject(job, "variants")) ||
	    !(warm = cJSON_AddObjectToObject(cJSON_AddObjectToObject(job, "measure"), "warm")) ||
	    !cJSON_AddNumberToObject(warm, "runs", (double)o->runs) ||
	    !cJSON_AddNumberToObject(warm, "rounds", (double)o->rounds) ||
	    !(cal = cJSON_AddObjectToObject(job, "calibration")) ||
	    !cJSON_AddNumberToObject(cal, "delay_us", (double)o->delay_us)) {
		cJSON_Delete(job);
		return NULL;
	}
	for (int k = 0; k < 3; k++) {
		cJSON *v = cJSON_CreateObject();
		char variant[32];
		snprintf(variant, sizeof(variant), "delay-%lld", o->delay_us * k);
		if (!v || !cJSON_AddItemToArray(variants, v) ||
		    !cJSON_AddStringToObject(v, "name", variant) ||
		    (strcmp(family, "elf") == 0 && !cJSON_AddStringToObject(v, "preset", "default")) ||
		    !cJSON_AddNumberToObject(v, "delay_us", (double)(o->delay_us * k))) {
			cJSON_Delete(job);
			return NULL;
		}
	}
	return job;
}

/* The agents to calibrate, from the fleet LIST: the one named or numbered
 * WANTED, or (WANTED NULL) every agent not quarantined, copied into *RET
 * (an array). LL_ENOTFOUND when there is none; LL_EINVAL when WANTED's
 * name is shared (pinning goes by name). */
static int choose_agents(const cJSON *list, const char *wanted, cJSON **ret)
{
	const cJSON *agents = cJSON_GetObjectItemCaseSensitive(list, "agents"), *a, *chosen = NULL;
	cJSON *out = cJSON_CreateArray();
	int same_name = 0;

	if (!out)
		return LL_ENOMEM;
	cJSON_ArrayForEach(a, agents) {
		char id[32];
		snprintf(id, sizeof(id), "%.0f",
			 cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(a, "id")));
		if (wanted) {
			/* An id first, then a name. */
			if (strcmp(wanted, id) == 0 || (!chosen && strcmp(wanted, text_of(a, "name")) == 0))
				chosen = a;
		} else if (strcmp(text_of(a, "state"), "quarantined") != 0) {
			cJSON_AddItemToArray(out, cJSON_Duplicate(a, true));
		}
	}
	if (chosen) {
		cJSON_ArrayForEach(a, agents)
			if (strcmp(text_of(a, "name"), text_of(chosen, "name")) == 0)
				same_name++;
		if (same_name > 1) {
			cJSON_Delete(out);
			return err_set(LL_EINVAL,
				       "%d agents are named '%s': a calibration is pinned by name, so it "
				       "would run on each of them.",
				       same_name, text_of(chosen, "name"));
		}
		cJSON_AddItemToArray(out, cJSON_Duplicate(chosen, true));
	}
	if (cJSON_GetArraySize(out) == 0) {
		cJSON_Delete(out);
		return wanted ? err_set(LL_ENOTFOUND,
					"No agent is named or numbered '%s' (see loadlab agents).", wanted)
			      : err_set(LL_ENOTFOUND, "No agent is enrolled and not quarantined.");
	}
	*ret = out;
	return 0;
}

/* The job a last_calibration C came from; -1 when none. */
static long long calibration_job_id(const cJSON *c)
{
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(c, "job_id");
	return cJSON_IsNumber(id) ? (long long)id->valuedouble : -1;
}

/* Prints AGENT's last_calibration when it came from job JOB_ID; false when not. */
static bool print_calibration(const cJSON *agent, long long job_id)
{
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(agent, "last_calibration");
	const cJSON *ci = cJSON_GetObjectItemCaseSensitive(c, "interval_us");
	const char *scope = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "interval_scope"));
	const cJSON *between = cJSON_GetObjectItemCaseSensitive(c, "between_jobs");
	const cJSON *sd = cJSON_GetObjectItemCaseSensitive(between, "sd_us");
	const cJSON *noise = cJSON_GetObjectItemCaseSensitive(c, "noise");
	const cJSON *max_cpu = cJSON_GetObjectItemCaseSensitive(noise, "max_other_cpu_pct");
	const cJSON *paired = cJSON_GetObjectItemCaseSensitive(c, "paired");
	char interval[160] = "", cpu[32] = "unknown";

	if (!cJSON_IsObject(c) || calibration_job_id(c) != job_id)
		return false;
	if (cJSON_GetArraySize(ci) != 2) /* recorded before interval_us existed */
		ci = cJSON_GetObjectItemCaseSensitive(c, "ci_us");
	if (cJSON_GetArraySize(ci) == 2 && scope && strcmp(scope, "within-and-between-jobs") == 0 &&
	    cJSON_IsNumber(sd))
		snprintf(interval, sizeof(interval),
			 "  [%.1f, %.1f] across %d earlier calibrations (sd %.1f us)",
			 cJSON_GetArrayItem(ci, 0)->valuedouble, cJSON_GetArrayItem(ci, 1)->valuedouble,
			 (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(between, "jobs")),
			 sd->valuedouble);
	else if (cJSON_GetArraySize(ci) == 2)
		snprintf(interval, sizeof(interval), "  [%.1f, %.1f]%s",
			 cJSON_GetArrayItem(ci, 0)->valuedouble, cJSON_GetArrayItem(ci, 1)->valuedouble,
			 scope ? " within-job only" : "");
	if (cJSON_IsNumber(max_cpu))
		snprintf(cpu, sizeof(cpu), "%.1f %%", max_cpu->valuedouble);
	printf("  ");
	table_print_text(stdout, text_of(agent, "name"));
	printf(": injected %.0f us, recovered %.1f us%s (%.1f %%; from 2X: %.1f us)%s, other CPU max %s, "
	       "flagged %.0f, retaken %.0f\n",
	       cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(c, "injected_us")),
	       cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(c, "recovered_us")), interval,
	       100.0 * cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(c, "ratio")),
	       cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(c, "recovered_2x_us")),
	       cJSON_IsTrue(paired)    ? ", paired by pass"
	       : cJSON_IsFalse(paired) ? ", unpaired"
				       : "",
	       cpu, cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(noise, "flagged")),
	       cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(noise, "retaken")));
	return true;
}

/* The agent of the fleet LIST that has WANTED's id, or NULL. */
static const cJSON *listed_agent(const cJSON *list, const cJSON *wanted)
{
	const cJSON *a;

	cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(list, "agents"))
		if (cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(a, "id")) ==
		    cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(wanted, "id")))
			return a;
	return NULL;
}

/* How many of AGENTS have, in LIST, a last calibration from their job. */
static size_t recorded_count(const cJSON *list, const cJSON *agents, const long long *agent_job)
{
	const cJSON *wanted;
	size_t k = 0, n = 0;

	cJSON_ArrayForEach(wanted, agents) {
		const cJSON *c =
			cJSON_GetObjectItemCaseSensitive(listed_agent(list, wanted), "last_calibration");
		if ((long long)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(c, "job_id")) ==
		    agent_job[k])
			n++;
		k++;
	}
	return n;
}

/* Follows the jobs IDS[0..N) until each ends, then prints the calibration
 * each of AGENTS (names) got. Returns the exit code. */
static int calibrate_wait(struct rest_client *c, const long long *ids, const long long *agent_job,
			  const cJSON *agents, size_t n)
{
	int code = 0;

	for (size_t i = 0; i < n; i++) {
		for (;;) {
			cJSON *job = NULL;
			const char *state = NULL;
			int rc = job_poll(c, ids[i], &job, &state);
			if (rc < 0)
				return client_fail("calibrate", rc);
			if (job_poll_finished(state)) {
				printf("job %lld: %s\n", ids[i], state);
				if (strcmp(state, "done") != 0)
					code = 1;
				cJSON_Delete(job);
				break;
			}
			cJSON_Delete(job);
			job_poll_sleep(0);
		}
	}
	/* The daemon records a calibration just after it stores the result
	 * that ends the job: give it a moment. */
	cJSON *list = NULL;
	for (int poll = 0; poll < CALIBRATE_RECORD_POLLS; poll++) {
		cJSON_Delete(list);
		list = NULL;
		int rc = client_get_object(c, "GET", "/api/v1/agents", NULL, &list);
		if (rc < 0)
			return client_fail("calibrate", rc);
		if (recorded_count(list, agents, agent_job) == (size_t)cJSON_GetArraySize(agents))
			break;
		job_poll_sleep(CALIBRATE_RECORD_POLL_MS);
	}
	const cJSON *wanted;
	size_t k = 0;
	cJSON_ArrayForEach(wanted, agents) {
		const cJSON *a = listed_agent(list, wanted);
		if (!a || !print_calibration(a, agent_job[k])) {
			printf("  ");
			table_print_text(stdout, text_of(wanted, "name"));
			printf(": no calibration recorded by job %lld\n", agent_job[k]);
			code = 1;
		}
		k++;
	}
	cJSON_Delete(list);
	return code;
}

/* Submits the calibration job of FAMILY for the agents NAMES (taken
 * over); its id goes to IDS[*N], and *N is counted up. */
static int submit_one(struct rest_client *c, const char *family, cJSON *names,
		      const struct calibrate_options *o, long long *ids, size_t *n)
{
	cJSON *job = calibration_job(family, names, o), *created = NULL;
	char *text = job ? cJSON_PrintUnformatted(job) : NULL;
	long long id = 0;
	int rc;

	if (!text)
		rc = LL_ENOMEM;
	else if (*n == CALIBRATE_MAX_JOBS)
		rc = err_set(LL_ERANGE, "More than %d calibration jobs at once.", CALIBRATE_MAX_JOBS);
	else if ((rc = client_get_object(c, "POST", "/api/v1/jobs", text, &created)) == 0 &&
		 (rc = json_get_int(created, "id", 1, 1LL << 53, true, 0, &id)) == 0)
		ids[(*n)++] = id;
	cJSON_Delete(job);
	cJSON_Delete(created);
	free(text);
	return rc;
}

/* Submits the calibration jobs of AGENTS: one per family and 16 agents
 * (the matrix's values per key). IDS gets the jobs' ids (*RET_N of them),
 * AGENT_JOB[k] the job of the k-th agent (0: none). On failure, the jobs
 * already submitted are said on stderr. */
static int submit_jobs(struct rest_client *c, const cJSON *agents, const struct calibrate_options *o,
		       long long *ids, long long *agent_job, size_t *ret_n)
{
	static const char *const families[] = {"elf", "pe"};
	size_t n = 0;
	int rc = 0;

	for (int f = 0; f < 2 && rc == 0; f++) {
		const cJSON *a;
		size_t k = 0;
		cJSON *names = NULL;
		cJSON_ArrayForEach(a, agents) {
			if (rc == 0 && strcmp(agent_family(a, o->family), families[f]) == 0) {
				if (!names && !(names = cJSON_CreateArray())) {
					rc = LL_ENOMEM;
					break;
				}
				cJSON_AddItemToArray(names, cJSON_CreateString(text_of(a, "name")));
				agent_job[k] = -(long long)n - 1; /* the job about to be made */
				if (cJSON_GetArraySize(names) == JOB_SPEC_MAX_MATRIX_VALUES) {
					rc = submit_one(c, families[f], names, o, ids, &n);
					names = NULL;
				}
			}
			k++;
		}
		if (names && rc == 0)
			rc = submit_one(c, families[f], names, o, ids, &n);
		else
			cJSON_Delete(names);
	}
	/* Placeholders to ids; an agent whose job failed gets none. */
	for (size_t k = 0; k < (size_t)cJSON_GetArraySize(agents); k++)
		if (agent_job[k] < 0)
			agent_job[k] = (size_t)(-agent_job[k] - 1) < n ? ids[-agent_job[k] - 1] : 0;
	*ret_n = n;
	if (rc < 0 && n > 0)
		fprintf(stderr, "loadlab calibrate: %zu job%s submitted before the error\n", n,
			n == 1 ? "" : "s");
	return rc;
}

int cmd_calibrate(int argc, char **argv)
{
	static const struct option options[] = {
		{"agent", required_argument, NULL, 'a'},
		{"family", required_argument, NULL, 'f'},
		{"delay-us", required_argument, NULL, 'd'},
		{"runs", required_argument, NULL, 'r'},
		{"rounds", required_argument, NULL, 'R'},
		{"wait", no_argument, NULL, 'w'},
		{NULL, 0, NULL, 0},
	};
	struct calibrate_options o = {
		NULL, NULL, CALIBRATE_DEFAULT_DELAY_US, CALIBRATE_DEFAULT_RUNS, CALIBRATE_DEFAULT_ROUNDS,
		false};
	struct rest_client c = {0};
	cJSON *list = NULL, *agents = NULL;
	long long ids[CALIBRATE_MAX_JOBS], *agent_job = NULL;
	size_t n = 0;
	int rc = args_parse(argc, argv, "calibrate", usage_text, options, calibrate_option, &o), code = 2;

	if (rc >= 0)
		return rc;
	if (optind != argc)
		return args_usage_error("calibrate", "takes no operands, got '%s'", argv[optind]);
	if (o.rounds > o.runs)
		return args_usage_error("calibrate", "--rounds %lld is more than --runs %lld", o.rounds,
					o.runs);
	if ((rc = client_open(&c)) < 0 ||
	    (rc = client_get_object(&c, "GET", "/api/v1/agents", NULL, &list)) < 0 ||
	    (rc = choose_agents(list, o.agent, &agents)) < 0)
		goto fail;
	if (!(agent_job = calloc((size_t)cJSON_GetArraySize(agents), sizeof(*agent_job)))) {
		rc = LL_ENOMEM;
		goto fail;
	}
	rc = submit_jobs(&c, agents, &o, ids, agent_job, &n);
	for (size_t i = 0; i < n; i++) {
		const cJSON *a;
		size_t k = 0;
		printf("job %lld: calibration of", ids[i]);
		cJSON_ArrayForEach(a, agents) {
			if (agent_job[k++] == ids[i]) {
				fputc(' ', stdout);
				table_print_text(stdout, text_of(a, "name"));
			}
		}
		printf(" (%lld us)\n", o.delay_us);
	}
	fflush(stdout);
	if (rc < 0)
		goto fail;
	code = o.wait ? calibrate_wait(&c, ids, agent_job, agents, n) : 0;
	goto out;
fail:
	code = client_fail("calibrate", rc);
out:
	free(agent_job);
	cJSON_Delete(agents);
	cJSON_Delete(list);
	rest_client_close(&c);
	return code;
}
