/*
 * test_measure_common.c - the pieces the warm and cold timers share
 * (agent/measure/measure_common.c) and the family helpers that put their
 * figures in a result (agent/family/family_util.c).
 */
#include "check.h"
#include "check_json.h"

#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include <unistd.h>

#include "family/family_util.h"
#include "loadlab/err.h"
#include "loadlab/plat.h"
#include "loadlab/stats.h"
#include "measure/measure.h"
#include "measure/plat_measure.h"
#include "measure/plat_noise.h"

static void test_random_and_shuffle(void)
{
	uint64_t state = 0, a = 7, b = 7, c = 8;
	size_t x[10], y[10], z[10];
	int seen[10] = {0};

	/* splitmix64's published first output for seed 0. */
	CHECK(stats_random_next(&state) == 0xe220a8397b1dcdafULL);
	CHECK(state == 0x9e3779b97f4a7c15ULL);
	measure_shuffle(x, 10, &a);
	measure_shuffle(y, 10, &b);
	measure_shuffle(z, 10, &c);
	CHECK(memcmp(x, y, sizeof(x)) == 0); /* same seed, same order */
	CHECK(memcmp(x, z, sizeof(x)) != 0); /* another seed, another order */
	CHECK(a == b && a != 7);             /* the state advances */
	for (size_t i = 0; i < 10; i++)
		if (x[i] < 10)
			seen[x[i]]++;
	for (size_t i = 0; i < 10; i++)
		CHECK_EQ_INT(seen[i], 1); /* a permutation */
}

static void test_summary(void)
{
	const double x[] = {1, 2, 3, 4, 100};
	cJSON *s = NULL;
	const cJSON *ci, *outliers;

	CHECK_EQ_INT(measure_summary_json(x, 5, 1, &s), 0);
	CHECK(number(s, "n") == 5);
	CHECK(number(s, "min_us") == 1);
	CHECK(number(s, "median_us") == 3);
	CHECK(number(s, "mean_us") == 22);
	CHECK(number(s, "mad_us") == 1);                                   /* |x - 3|: 0 1 1 2 97 */
	CHECK(number(s, "p90_us") > 61.59 && number(s, "p90_us") < 61.61); /* type 7: 4 + 0.6 * 96 */
	ci = member(s, "ci_min_us");
	CHECK(cJSON_GetArraySize(ci) == 2 && cJSON_GetArrayItem(ci, 0)->valuedouble == 1 &&
	      cJSON_GetArrayItem(ci, 0)->valuedouble <= cJSON_GetArrayItem(ci, 1)->valuedouble);
	ci = member(s, "ci_median_us");
	CHECK(cJSON_GetArraySize(ci) == 2 &&
	      cJSON_GetArrayItem(ci, 0)->valuedouble <= cJSON_GetArrayItem(ci, 1)->valuedouble);
	outliers = member(s, "outliers"); /* 100: modified z 65 */
	CHECK(cJSON_GetArraySize(outliers) == 1 && cJSON_GetArrayItem(outliers, 0)->valuedouble == 4);
	cJSON_Delete(s);
	s = NULL;
	CHECK_EQ_INT(measure_summary_json(x, 0, 1, &s), LL_EINVAL);
	CHECK(s == NULL);
}

static const char *const argv_true[] = {"/bin/true", NULL};

static void test_check(void)
{
	struct measure_program p[2] = {{"a", {.argv = argv_true}, NULL}, {"b", {.argv = argv_true}, NULL}};
	struct measure_options o = {.runs = 3, .warmup = 1, .seed = 1, .timeout_ms = 1000};

	CHECK_EQ_INT(measure_check(p, 2, &o), 0);
	CHECK_EQ_INT(measure_check(p, 0, &o), LL_EINVAL);
	p[1].name = "a";
	CHECK_EQ_INT(measure_check(p, 2, &o), LL_EINVAL); /* two named a */
	CHECK(strstr(err_message(LL_EINVAL), "a") != NULL);
	p[1].name = "b";
	o.runs = 0;
	CHECK_EQ_INT(measure_check(p, 2, &o), LL_EINVAL);
	o.runs = 3;
	o.timeout_ms = 0;
	CHECK_EQ_INT(measure_check(p, 2, &o), LL_EINVAL);
	o.timeout_ms = 1000;
	o.reruns = MEASURE_MAX_RERUNS + 1;
	CHECK_EQ_INT(measure_check(p, 2, &o), LL_EINVAL);
	o.reruns = 0;
	o.max_retakes = MEASURE_NOISE_MAX_RETAKES + 1;
	CHECK_EQ_INT(measure_check(p, 2, &o), LL_EINVAL);
	o.max_retakes = MEASURE_NO_RETAKES - 1;
	CHECK_EQ_INT(measure_check(p, 2, &o), LL_EINVAL);
	o.max_retakes = MEASURE_NO_RETAKES;
	CHECK_EQ_INT(measure_check(p, 2, &o), 0);
}

/* A run that counts, remembers the order and fails on request. */
struct fake {
	int calls[3], timed[3];
	int total;
	int fail_at;           /* 1-based call number that fails; 0 never */
	int cancel_at_percent; /* progress >= this cancels; > 100 never */
	int last_percent, progress_calls;
	long last_slot[3];
};

static int fake_run(void *ctx, size_t program, long slot, double *ret_us)
{
	struct fake *f = ctx;
	f->calls[program]++;
	if (slot >= 0) {
		f->timed[program]++;
		f->last_slot[program] = slot;
	}
	*ret_us = 100.0 + (double)slot / 100.0;
	if (++f->total == f->fail_at)
		return err_set(LL_EIO, "fake run %d failed", f->total);
	return 0;
}

static bool fake_progress(void *ctx, int percent)
{
	struct fake *f = ctx;
	CHECK(percent >= f->last_percent); /* never goes back */
	f->last_percent = percent;
	f->progress_calls++;
	return percent >= f->cancel_at_percent;
}

static void test_rounds(void)
{
	struct measure_program p[3] = {{"x", {.argv = argv_true}, NULL},
				       {"y", {.argv = argv_true}, NULL},
				       {"z", {.argv = argv_true}, NULL}};
	struct fake f;
	struct measure_options o = {.runs = 4,
				    .warmup = 2,
				    .rounds = 3,
				    .seed = 5,
				    .timeout_ms = 1000,
				    .progress = fake_progress,
				    .progress_ctx = &f};
	struct plat_measure_conditions c;
	struct measure_sampled s;
	cJSON *order = cJSON_CreateArray(), *round, *obj;

	memset(&f, 0, sizeof(f));
	f.cancel_at_percent = 101;
	/* 2 warm-up passes, then 4 timed ones in rounds of 2, 1 and 1, each
	 * later round after one untimed pass. */
	CHECK_EQ_INT(measure_sample(p, 3, &o, true, &c, order, fake_run, &f, &s), 0);
	for (int i = 0; i < 3; i++) {
		CHECK_EQ_INT(f.calls[i] - s.retaken[i], 8);
		CHECK_EQ_INT(f.timed[i] - s.retaken[i], 4);
		CHECK(f.last_slot[i] == 3);
		CHECK(s.flagged[i] >= s.retaken[i] && s.retaken[i] <= MEASURE_NOISE_MAX_RETAKES);
	}
	CHECK(s.taken == 4 && s.rounds == 3);
	CHECK(s.round_sizes[0] == 2 && s.round_sizes[1] == 1 && s.round_sizes[2] == 1);
	CHECK(s.samples_us[1 * s.capacity + 2] == 100.02);
	CHECK_EQ_INT(cJSON_GetArraySize(order), 4);
	CHECK_EQ_INT(f.progress_calls, 7); /* each pass, then 100 */
	CHECK_EQ_INT(f.last_percent, 100);
	cJSON_ArrayForEach(round, order) {
		int seen = 0; /* a bit per name x, y, z */
		const cJSON *name;
		CHECK_EQ_INT(cJSON_GetArraySize(round), 3);
		cJSON_ArrayForEach(name, round)
			if (cJSON_IsString(name) && strlen(name->valuestring) == 1 &&
			    strchr("xyz", name->valuestring[0]))
				seen |= 1 << (name->valuestring[0] - 'x');
		CHECK_EQ_INT(seen, 7); /* each pass lists every program once */
	}
	/* The program's figures: runs, round sizes summing to them, noise. */
	obj = cJSON_CreateObject();
	CHECK_EQ_INT(measure_sampled_json(&s, 0, &o, obj), 0);
	CHECK(number(obj, "runs") == 4 && cJSON_GetArraySize(member(obj, "round_sizes")) == 3);
	CHECK(cJSON_IsObject(member(obj, "noise")) &&
	      number(member(obj, "noise"), "retaken") == s.retaken[0]);
	CHECK(!member(obj, "auto"));
	cJSON_Delete(obj);
	measure_sampled_release(&s);
	cJSON_Delete(order);

	/* Adaptive: identical samples reach any precision after one sweep of
	 * MEASURE_AUTO_STEP runs split over the rounds (4 + 3 + 3). */
	o.auto_runs = true;
	o.precision = 0.02;
	o.runs = 50;
	o.warmup = 0;
	order = cJSON_CreateArray();
	memset(&f, 0, sizeof(f));
	f.cancel_at_percent = 101;
	CHECK_EQ_INT(measure_sample(p, 3, &o, true, &c, order, fake_run, &f, &s), 0);
	CHECK(s.taken == 10 && s.rounds == 3 && s.round_sizes[0] == 4 && s.round_sizes[2] == 3);
	CHECK(s.samples_us[0] == 100.0 && s.samples_us[9] == 100.09);
	/* 100.00..100.09: the median's interval is under 0.1 % wide. */
	CHECK(s.reached);
	measure_sampled_release(&s);
	cJSON_Delete(order);
	o.auto_runs = false;
	o.runs = 4;
	o.rounds = 1;

	/* A failing run stops the passes and is what they return. */
	order = cJSON_CreateArray();
	memset(&f, 0, sizeof(f));
	f.cancel_at_percent = 101;
	f.fail_at = 4;
	CHECK_EQ_INT(measure_sample(p, 3, &o, false, &c, order, fake_run, &f, &s), LL_EIO);
	measure_sampled_release(&s);
	CHECK(f.total >= 4);
	CHECK(strstr(err_message(LL_EIO), "fake run 4") != NULL);
	cJSON_Delete(order);

	/* Progress saying "cancelled" stops them: LL_ESTATE. */
	order = cJSON_CreateArray();
	memset(&f, 0, sizeof(f));
	f.cancel_at_percent = 40;
	CHECK_EQ_INT(measure_sample(p, 3, &o, false, &c, order, fake_run, &f, &s), LL_ESTATE);
	CHECK_EQ_INT(f.timed[0] - s.retaken[0], 2); /* passes at 0 % and 25 % ran; 50 % cancelled */
	measure_sampled_release(&s);
	cJSON_Delete(order);
}

static void test_method_and_result(void)
{
	struct plat_measure_conditions c;
	struct measure_options o = {
		.runs = 2, .warmup = 1, .seed = 18446744073709551615ULL, .timeout_ms = 1000};
	cJSON *result = cJSON_CreateObject(), *method = NULL, *warm = cJSON_CreateObject(),
	      *o_json = cJSON_CreateObject();
	cJSON *programs, *prog, *summary;
	struct family_measured measured = {warm, NULL};

	plat_measure_begin(&c);
	plat_measure_end(&c);
	CHECK_EQ_INT(measure_add_method(result, &c, &o, "warm", &method), 0);
	CHECK(method && member(result, "method") == method);
	CHECK(cJSON_IsString(member(method, "kind")) &&
	      strcmp(member(method, "kind")->valuestring, "warm") == 0);
	/* A uint64 seed does not fit a JSON number: text. */
	CHECK(cJSON_IsString(member(method, "seed")) &&
	      strcmp(member(method, "seed")->valuestring, "18446744073709551615") == 0);
	CHECK(number(method, "runs") == 2 && number(method, "warmup") == 1 &&
	      number(method, "confidence") == 0.95);

	/* family_add_measured: the program's figures with runs, warmup, min and median at hand. */
	cJSON_AddItemToObject(warm, "method", cJSON_Duplicate(method, true));
	cJSON_AddItemToObject(warm, "order", cJSON_CreateArray());
	cJSON_AddItemToObject(warm, "reruns", cJSON_CreateArray());
	programs = cJSON_AddObjectToObject(warm, "programs");
	prog = cJSON_AddObjectToObject(programs, "default");
	summary = cJSON_AddObjectToObject(prog, "summary");
	cJSON_AddNumberToObject(summary, "min_us", 10);
	cJSON_AddNumberToObject(summary, "median_us", 12);
	CHECK_EQ_INT(family_add_measured(o_json, "warm", warm, "default"), 0);
	CHECK(number(member(o_json, "warm"), "runs") == 2 && number(member(o_json, "warm"), "warmup") == 1);
	CHECK(number(member(o_json, "warm"), "min_us") == 10 &&
	      number(member(o_json, "warm"), "median_us") == 12);
	CHECK_EQ_INT(family_add_measured(o_json, "cold", NULL, "default"), 0);
	CHECK(member(o_json, "cold") == NULL);
	CHECK_EQ_INT(family_add_measured(o_json, "other", warm, "nosuch"), 0);
	CHECK(member(o_json, "other") == NULL);
	CHECK_EQ_INT(family_add_measurement(o_json, &measured), 0);
	CHECK(member(member(o_json, "measurement"), "warm") &&
	      member(member(o_json, "measurement"), "warm_order") &&
	      member(member(o_json, "measurement"), "warm_reruns") &&
	      !member(member(o_json, "measurement"), "cold"));
	cJSON_Delete(result);
	cJSON_Delete(warm);
	cJSON_Delete(o_json);
}

/* measure_run_rerunning's PREPARE: counts its calls, fails when asked. */
struct prepare_count {
	int calls;
	int fail;
};

static int count_prepare(void *ctx)
{
	struct prepare_count *c = ctx;

	c->calls++;
	return c->fail ? err_set(LL_EIO, "prepare failed") : 0;
}

/* The run both timers share: a program that fails its first start (a
 * marker file) is taken again, PREPARE before each start, and listed. */
static void test_run_rerunning(void)
{
	char dir[] = "/tmp/loadlab-rerun-XXXXXX", script[256], marker[64];
	const char *argv[] = {"/bin/sh", "-c", script, NULL};
	struct measure_program p = {"fails-once", {.argv = argv}, NULL};
	struct measure_options o = {.runs = 1, .timeout_ms = 10000, .reruns = 2};
	struct plat_measure_counters k = {.exit_code = -7};
	struct prepare_count count = {0};
	cJSON *reruns = cJSON_CreateArray(), *entry;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(marker, sizeof(marker), "%s/m", dir);
	snprintf(script, sizeof(script), "test -e %s || { touch %s; exit 3; }", marker, marker);
	CHECK_EQ_INT(measure_run_rerunning(&p, &o, 1, "cold", true, count_prepare, &count, reruns, &k), 0);
	CHECK_EQ_INT(count.calls, 2);
	CHECK_EQ_INT(k.exit_code, 0);
	CHECK(k.wall_ns > 0 && k.read_chars >= 0);
	CHECK_EQ_INT(cJSON_GetArraySize(reruns), 1);
	entry = cJSON_GetArrayItem(reruns, 0);
	CHECK(cJSON_IsString(member(entry, "program")) &&
	      strcmp(member(entry, "program")->valuestring, "fails-once") == 0);
	CHECK(cJSON_IsString(member(entry, "phase")) &&
	      strcmp(member(entry, "phase")->valuestring, "cold") == 0);
	CHECK(number(entry, "run") == 2 && number(entry, "exit_code") == 3);

	/* Without reruns the first failure is the result; *RET untouched. */
	CHECK_EQ_INT(remove(marker), 0);
	o.reruns = 0;
	count.calls = 0;
	k.exit_code = -7;
	CHECK_EQ_INT(measure_run_rerunning(&p, &o, 0, "timed", false, NULL, NULL, reruns, &k), LL_EIO);
	CHECK(strstr(err_message(LL_EIO), "fails-once exited with 3 in timed run 1") != NULL);
	CHECK_EQ_INT(k.exit_code, -7);
	CHECK_EQ_INT(cJSON_GetArraySize(reruns), 1);

	/* A failing PREPARE is returned as it is, and nothing runs. */
	count.fail = 1;
	o.reruns = 2;
	CHECK_EQ_INT(measure_run_rerunning(&p, &o, 0, "cold", true, count_prepare, &count, reruns, &k),
		     LL_EIO);
	CHECK(strstr(err_message(LL_EIO), "prepare failed") != NULL);
	CHECK_EQ_INT(count.calls, 1);
	CHECK_EQ_INT(cJSON_GetArraySize(reruns), 1);
	CHECK_EQ_INT(remove(marker), 0); /* the second case's run made it */
	CHECK_EQ_INT(remove(dir), 0);
	cJSON_Delete(reruns);
}

/* PREPARE that makes PATH, a link to /bin/true, before its second call:
 * the first start finds no program. */
struct appear_later {
	const char *path;
	int calls;
};

static int appear_later(void *ctx)
{
	struct appear_later *a = ctx;

	if (++a->calls == 2 && symlink("/bin/true", a->path) != 0)
		return err_set(LL_EIO, "symlink failed");
	return 0;
}

/* A start that failed (the program is not there yet) is taken again and
 * listed with its message; one that keeps failing is returned after
 * o->reruns retakes. */
static void test_start_failure_rerun(void)
{
	char dir[] = "/tmp/loadlab-start-XXXXXX", path[64];
	const char *argv[] = {path, NULL};
	struct measure_program p = {"appears", {.argv = argv}, NULL};
	struct measure_options o = {.runs = 1, .timeout_ms = 10000, .reruns = 2};
	struct plat_measure_counters k = {.exit_code = -7};
	struct appear_later later = {path, 0};
	cJSON *reruns = cJSON_CreateArray(), *entry;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/prog", dir);
	CHECK_EQ_INT(measure_run_rerunning(&p, &o, 0, "timed", false, appear_later, &later, reruns, &k), 0);
	CHECK_EQ_INT(later.calls, 2);
	CHECK_EQ_INT(k.exit_code, 0);
	CHECK_EQ_INT(cJSON_GetArraySize(reruns), 1);
	entry = cJSON_GetArrayItem(reruns, 0);
	CHECK(cJSON_IsString(member(entry, "start_error")) &&
	      strstr(member(entry, "start_error")->valuestring, "Cannot start") != NULL);
	CHECK(!member(entry, "exit_code") && number(entry, "run") == 1);

	/* Never there: the start's own error after the two retakes. */
	CHECK_EQ_INT(remove(path), 0);
	later.calls = 5; /* past the call that makes it */
	CHECK_EQ_INT(measure_run_rerunning(&p, &o, 0, "timed", false, appear_later, &later, reruns, &k),
		     LL_EIO);
	CHECK(strstr(err_message(LL_EIO), "Cannot start") != NULL);
	CHECK_EQ_INT(later.calls, 8);
	CHECK_EQ_INT(cJSON_GetArraySize(reruns), 3);
	CHECK_EQ_INT(remove(dir), 0);
	cJSON_Delete(reruns);
}

/* The process the measured programs wait on (Wine's wineserver; here a
 * `sleep`): on the agent's CPU while measuring, its own CPUs given back
 * after, and named in the method. */
static void test_companion(void)
{
	const char *argv[] = {"/bin/sleep", "30", NULL};
	struct plat_spawn_options so = {.argv = argv};
	struct plat_measure_conditions c;
	struct measure_options o = {.runs = 1, .seed = 1, .timeout_ms = 1000};
	struct plat_process *p = NULL;
	cpu_set_t before, during, after;
	cJSON *method = NULL;
	int nice_before;
	pid_t pid;

	CHECK_EQ_INT(plat_spawn(&so, &p), 0);
	pid = (pid_t)plat_process_id(p);
	CHECK_EQ_INT(sched_getaffinity(pid, sizeof(before), &before), 0);
	errno = 0;
	nice_before = getpriority(PRIO_PROCESS, (id_t)pid);
	CHECK_EQ_INT(errno, 0);
	plat_measure_begin(&c);
	plat_measure_companion(&c, pid);
	CHECK(c.companion_pid == pid);
	if (c.cpu >= 0) {
		CHECK(c.companion_pinned);
		CHECK_EQ_INT(sched_getaffinity(pid, sizeof(during), &during), 0);
		CHECK(CPU_COUNT(&during) == 1 && CPU_ISSET(c.cpu, &during));
		/* Its nice as low as permitted: -20 as root. */
		CHECK_EQ_INT(getpriority(PRIO_PROCESS, (id_t)pid), c.companion_nice);
		CHECK(c.companion_nice <= nice_before);
		if (geteuid() == 0)
			CHECK_EQ_INT(c.companion_nice, -20);
	} else {
		/* One CPU allowed: the agent does not pin, nor its companion. */
		printf("test_companion: agent not pinned (one CPU), companion left alone\n");
		CHECK(!c.companion_pinned);
	}
	plat_measure_end(&c);
	CHECK_EQ_INT(sched_getaffinity(pid, sizeof(after), &after), 0);
	CHECK(CPU_EQUAL(&before, &after));
	CHECK_EQ_INT(getpriority(PRIO_PROCESS, (id_t)pid), nice_before);
	CHECK_EQ_INT(measure_method_json(&c, &o, "warm", &method), 0);
	CHECK(number(member(method, "companion"), "pid") == pid);
	CHECK(cJSON_IsBool(member(member(method, "companion"), "pinned")) &&
	      cJSON_IsTrue(member(member(method, "companion"), "pinned")) == (c.cpu >= 0));
	CHECK(number(member(method, "companion"), "nice") == c.companion_nice);
	cJSON_Delete(method);
	CHECK_EQ_INT(plat_kill(p), 0);
	plat_process_free(p);

	/* None: null, and a PID that is gone changes nothing. */
	plat_measure_begin(&c);
	plat_measure_companion(&c, 0);
	CHECK(c.companion_pid == 0 && !c.companion_pinned);
	plat_measure_end(&c);
	CHECK_EQ_INT(measure_method_json(&c, &o, "warm", &method), 0);
	CHECK(cJSON_IsNull(member(method, "companion")));
	cJSON_Delete(method);
	plat_measure_begin(&c);
	plat_measure_companion(&c, pid); /* reaped above */
	CHECK(!c.companion_pinned);
	plat_measure_end(&c);
}

/* Reads N's figures into *A, lets PID spin until it has used SPIN_S more
 * seconds of CPU (however busy the machine is; up to 60 s), and reads them
 * into *B: the CPU PID used meanwhile. */
static double while_it_spins(struct plat_noise *n, long long pid, double spin_s, struct plat_noise_reading *a,
			     struct plat_noise_reading *b)
{
	struct timespec tick = {0, 20 * 1000 * 1000};
	double start, now;

	CHECK_EQ_INT(plat_noise_read(n, a), 0);
	start = plat_process_cpu_s(pid);
	now = start;
	for (int i = 0; i < 3000 && now - start < spin_s; i++) {
		nanosleep(&tick, NULL);
		now = plat_process_cpu_s(pid);
	}
	CHECK_EQ_INT(plat_noise_read(n, b), 0);
	return plat_process_cpu_s(pid) - start;
}

/* A companion's CPU time counts as ours in the noise figures: a child
 * that spins, not yet reaped, is another's until it is named. Judged
 * against the CPU the child itself used (plat_process_cpu_s()), so that a busy
 * machine, which gives it a smaller share of the time, changes nothing. */
static void test_companion_noise(void)
{
	const char *argv[] = {"/bin/sh", "-c", "while :; do :; done", NULL};
	struct plat_spawn_options so = {.argv = argv};
	struct plat_noise n;
	struct plat_noise_reading a, b;
	struct plat_process *p = NULL;
	double spun;

	CHECK_EQ_INT(plat_noise_open(&n), 0);
	CHECK_EQ_INT(plat_spawn(&so, &p), 0);
	/* Unnamed: its 0.3 s of CPU are not ours (at most a tick of ours). */
	spun = while_it_spins(&n, plat_process_id(p), 0.3, &a, &b);
	CHECK(spun >= 0.3);
	CHECK(b.ours_cpu_s - a.ours_cpu_s < 0.1);
	plat_noise_add_companion(&n, plat_process_id(p));
	CHECK(n.companion_pid == plat_process_id(p) && strstr(n.source, "companion") != NULL);
	/* Named: its CPU is ours, to the tick (10 ms each, read apart). */
	spun = while_it_spins(&n, plat_process_id(p), 0.3, &a, &b);
	CHECK(spun >= 0.3);
	CHECK(b.ours_cpu_s - a.ours_cpu_s > spun - 0.05);
	CHECK_EQ_INT(plat_kill(p), 0);
	plat_process_free(p);
}

/* A run of 30 ms that does nothing (the noise window needs time to pass). */
static int idle_run(void *ctx, size_t program, long slot, double *ret_us)
{
	struct timespec pause = {0, 30 * 1000 * 1000};
	struct fake *f = ctx;

	f->calls[program]++;
	f->timed[program] += slot >= 0;
	nanosleep(&pause, NULL);
	*ret_us = 30000;
	return 0;
}

/* With another process spinning, every run is noisy: a job's max_retakes
 * caps the retakes (each retaken run is flagged first, so retaken is
 * min(flagged, cap)), none at all with MEASURE_NO_RETAKES, and the method
 * says the cap used. */
static void test_noise_retakes(void)
{
	const char *argv[] = {"/bin/sh", "-c", "while :; do :; done", NULL};
	const int caps[] = {MEASURE_NO_RETAKES, 2};
	struct plat_spawn_options so = {.argv = argv};
	struct measure_program p[2] = {{"x", {.argv = argv_true}, NULL}, {"y", {.argv = argv_true}, NULL}};
	struct plat_process *spinner = NULL;

	CHECK_EQ_INT(plat_spawn(&so, &spinner), 0);
	for (size_t k = 0; k < sizeof(caps) / sizeof(caps[0]); k++) {
		struct measure_options o = {.runs = 4, .seed = 3, .timeout_ms = 1000, .max_retakes = caps[k]};
		int cap = caps[k] == MEASURE_NO_RETAKES ? 0 : caps[k], flagged = 0;
		struct plat_measure_conditions c;
		struct measure_sampled s;
		struct fake f;
		cJSON *order = cJSON_CreateArray(), *result = cJSON_CreateObject();

		memset(&f, 0, sizeof(f));
		CHECK_EQ_INT(measure_sample(p, 2, &o, false, &c, order, idle_run, &f, &s), 0);
		CHECK_EQ_INT(s.max_retakes, cap);
		for (int i = 0; i < 2; i++) {
			CHECK_EQ_INT(s.retaken[i], s.flagged[i] < cap ? s.flagged[i] : cap);
			CHECK_EQ_INT(f.timed[i], 4 + s.retaken[i]);
			flagged += s.flagged[i];
		}
		if (s.noise_ok)
			CHECK(flagged > 0); /* the spinner was seen: the cap was what decided */
		else
			fprintf(stderr, "noise cannot be read here (%s): the cap is untested\n",
				s.noise_source);
		CHECK_EQ_INT(measure_noise_method_json(&s, result), 0);
		if (s.noise_ok)
			CHECK(number(member(result, "noise"), "max_retakes") == cap);
		measure_sampled_release(&s);
		cJSON_Delete(order);
		cJSON_Delete(result);
	}
	CHECK_EQ_INT(plat_kill(spinner), 0);
	plat_process_free(spinner);
}

int main(void)
{
	test_random_and_shuffle();
	test_summary();
	test_check();
	test_rounds();
	test_method_and_result();
	test_run_rerunning();
	test_start_failure_rerun();
	test_companion();
	test_companion_noise();
	test_noise_retakes();
	return check_finish();
}
