/* job_spec: normalization, bounds, matrix expansion and matching (the
 * program family's section: test_job_spec_program.c). */
#include "check.h"
#include "common/job_spec_text.h"
#include "loadlab/err.h"
#include "loadlab/job_spec.h"
#include "loadlab/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What MATCHES (job_spec_cell_matches or job_spec_selector_matches) says
 * of the cell or selector in TEXT against FACTS and LABELS. */
static bool matches_text(bool (*matches)(const cJSON *, const cJSON *, const cJSON *), const char *text,
			 const cJSON *facts, const cJSON *labels)
{
	cJSON *cell = parse(text);
	bool m = matches(cell, facts, labels);

	cJSON_Delete(cell);
	return m;
}

static void test_presets_and_defaults(void)
{
	cJSON *n = NULL, *v;
	const char *job = "{\"name\":\"p\",\"family\":\"pe\",\"generator\":{\"dlls\":10,\"exports\":100},"
			  "\"variants\":[\"default\",\"bind\",\"ordinal+rebase\",\"no-rebase\","
			  "{\"name\":\"mine\",\"bases\":\"unique\",\"order\":\"trace\"}]}";

	CHECK_EQ_INT(normalize_text(job, &n), 0);
	v = cJSON_GetObjectItem(n, "variants");
	CHECK_EQ_INT(cJSON_GetArraySize(v), 5);
	CHECK_EQ_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(v, 0), "bases")->valuestring, "same");
	CHECK(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetArrayItem(v, 1), "bind")));
	CHECK_EQ_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(v, 1), "bases")->valuestring, "unique");
	CHECK_EQ_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(v, 2), "imports")->valuestring, "ordinal");
	CHECK_EQ_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(v, 3), "bases")->valuestring, "toolchain");
	CHECK_EQ_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(v, 4), "order")->valuestring, "trace");
	CHECK_EQ_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(v, 4), "imports")->valuestring, "name");
	/* Defaults: warm 30 after 3, globals 0, main "reference", one empty cell. */
	CHECK_EQ_INT(
		cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(n, "measure"), "warm"), "runs")
			->valueint,
		30);
	CHECK_EQ_INT(
		cJSON_GetObjectItem(cJSON_GetObjectItem(n, "generator"), "globals_per_function")->valueint,
		0);
	CHECK_EQ_STR(cJSON_GetObjectItem(cJSON_GetObjectItem(n, "generator"), "main")->valuestring,
		     "reference");
	{
		cJSON *cells = NULL;
		CHECK_EQ_INT(job_spec_expand_cells(n, &cells), 0);
		CHECK_EQ_INT(cJSON_GetArraySize(cells), 1);
		CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetArrayItem(cells, 0)), 0);
		cJSON_Delete(cells);
	}
	/* Normalizing a normalized job changes nothing (the agent checks again). */
	{
		cJSON *again = NULL;
		CHECK_EQ_INT(job_spec_normalize(n, &again), 0);
		CHECK(cJSON_Compare(n, again, true));
		cJSON_Delete(again);
	}
	cJSON_Delete(n);
}

static void test_bounds(void)
{
	static const char *const bad[] = {
		"{\"name\":\"p\",\"family\":\"pe\",\"generator\":{\"dlls\":257,\"exports\":1},\"variants\":["
		"\"default\"]}",
		"{\"name\":\"p\",\"family\":\"pe\",\"generator\":{\"dlls\":100,\"exports\":1001},"
		"\"variants\":[\"default\"]}",
		"{\"name\":\"p\",\"family\":\"pe\",\"generator\":{\"dlls\":1,\"exports\":1},\"variants\":["
		"\"now\"]}",
		"{\"name\":\"p\",\"family\":\"elf\",\"generator\":{\"dlls\":1,\"exports\":1},\"variants\":["
		"\"bind\"]}",
		"{\"name\":\"p\",\"family\":\"elf\",\"generator\":{\"dlls\":1,\"exports\":1},\"variants\":[{"
		"\"name\":\"x\"}]}",
		"{\"name\":\"p\",\"family\":\"pe\",\"generator\":{\"dlls\":1,\"exports\":1},\"variants\":["
		"\"default\"],\"measure\":{\"warm\":{\"runs\":1001}}}",
		"{\"name\":\"p\",\"family\":\"pe\",\"generator\":{\"dlls\":1,\"exports\":1},\"variants\":["
		"\"default\"],\"matrix\":{\"cells\":{\"os\":[\"a\",\"a\"]}}}",
		"{\"name\":\"p\\u0001\",\"family\":\"pe\",\"generator\":{\"dlls\":1,\"exports\":1},"
		"\"variants\":[\"default\"]}",
		"[]",
	};
	cJSON *n = (cJSON *)1;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = normalize_text(bad[i], &n);
		CHECK(rc == LL_EINVAL || rc == LL_ERANGE);
		CHECK(n == (cJSON *)1); /* untouched on failure */
	}
}

/* A pe job of one default variant with MEASURE as its "measure" (or a
 * variants list VARIANTS for FAMILY), normalized: the return code. */
static int measure_job(const char *family, const char *variants, const char *measure, cJSON **ret)
{
	char text[1024];

	snprintf(text, sizeof(text),
		 "{\"name\":\"m\",\"family\":\"%s\",\"generator\":{\"dlls\":1,\"exports\":1},"
		 "\"variants\":%s%s%s}",
		 family, variants, measure ? ",\"measure\":" : "", measure ? measure : "");
	return normalize_text(text, ret);
}

/* measure_job(FAMILY, VARIANTS, MEASURE) is refused (LL_EINVAL or
 * LL_ERANGE; what was accepted is named on stderr), its output untouched. */
static void check_refused(const char *family, const char *variants, const char *measure)
{
	cJSON *n = (cJSON *)1;
	int rc = measure_job(family, variants, measure, &n);

	if (!(rc == LL_EINVAL || rc == LL_ERANGE))
		fprintf(stderr, "accepted: %s %s\n", variants, measure ? measure : "");
	CHECK(rc == LL_EINVAL || rc == LL_ERANGE);
	CHECK(n == (cJSON *)1);
}

static const cJSON *warm_of(const cJSON *n)
{
	return cJSON_GetObjectItem(cJSON_GetObjectItem(n, "measure"), "warm");
}

/* measure.warm/cold.rounds, runs "auto" with max_runs and precision, and
 * the delay_us knob: their defaults and every bound. */
static void test_rounds_auto_delay(void)
{
	static const char *const bad_measure[] = {
		"{\"warm\":{\"rounds\":0}}",
		"{\"warm\":{\"rounds\":21,\"runs\":30}}",
		"{\"warm\":{\"rounds\":5,\"runs\":4}}", /* more rounds than runs */
		"{\"warm\":{\"rounds\":1.5}}",
		"{\"cold\":{\"rounds\":11,\"runs\":10}}",
		"{\"cold\":{\"rounds\":0}}",
		"{\"warm\":{\"runs\":\"many\"}}",
		"{\"warm\":{\"runs\":\"auto\",\"max_runs\":0}}",
		"{\"warm\":{\"runs\":\"auto\",\"max_runs\":1001}}",
		"{\"warm\":{\"runs\":\"auto\",\"max_runs\":2,\"rounds\":3}}",
		"{\"warm\":{\"runs\":\"auto\",\"precision\":0}}",
		"{\"warm\":{\"runs\":\"auto\",\"precision\":0.0009}}",
		"{\"warm\":{\"runs\":\"auto\",\"precision\":0.51}}",
		"{\"warm\":{\"runs\":\"auto\",\"precision\":\"0.1\"}}",
		"{\"warm\":{\"runs\":30,\"max_runs\":100}}", /* max_runs only with auto */
		"{\"warm\":{\"runs\":30,\"precision\":0.1}}",
		"{\"cold\":{\"runs\":\"auto\"}}",
		"{\"warm\":{\"round_gap_ms\":99}}",
		"{\"warm\":{\"round_gap_ms\":10001}}",
		"{\"warm\":{\"round_gap_ms\":\"500\"}}",
		"{\"cold\":{\"round_gap_ms\":0}}",
		"{\"cold\":{\"round_gap_ms\":1e9}}",
		"{\"warm\":{},\"noise\":{\"max_retakes\":-1}}",
		"{\"warm\":{},\"noise\":{\"max_retakes\":11}}",
		"{\"warm\":{},\"noise\":{\"max_retakes\":\"0\"}}",
		"{\"warm\":{},\"noise\":{}}", /* max_retakes is what it is for */
		"{\"warm\":{},\"noise\":{\"max_retakes\":0,\"threshold\":5}}",
		"{\"noise\":{\"max_retakes\":0}}", /* noise alone asks for no measurement */
	};
	static const char *const bad_variants[][2] = {
		{"pe", "[{\"name\":\"x\",\"delay_us\":-1}]"},
		{"pe", "[{\"name\":\"x\",\"delay_us\":100001}]"},
		{"pe", "[{\"name\":\"x\",\"delay_us\":\"5\"}]"},
		{"pe", "[{\"name\":\"x\",\"order\":\"trace\",\"delay_us\":5}]"},
		{"elf", "[{\"name\":\"x\",\"delay_us\":5}]"}, /* no preset named x */
		{"elf", "[{\"name\":\"x\",\"preset\":\"bind\"}]"},
		{"elf", "[{\"name\":\"x\",\"preset\":\"default\",\"delay_us\":100001}]"},
		{"elf", "[{\"name\":\"x\",\"preset\":\"default\",\"bases\":\"same\"}]"},
	};
	cJSON *n = (cJSON *)1;

	for (size_t i = 0; i < sizeof(bad_measure) / sizeof(bad_measure[0]); i++)
		check_refused("pe", "[\"default\"]", bad_measure[i]);
	for (size_t i = 0; i < sizeof(bad_variants) / sizeof(bad_variants[0]); i++)
		check_refused(bad_variants[i][0], bad_variants[i][1], NULL);

	/* Defaults: one round; no max_runs or precision without auto. */
	CHECK_EQ_INT(measure_job("pe", "[\"default\"]", "{\"warm\":{},\"cold\":{}}", &n), 0);
	CHECK_EQ_INT(cJSON_GetObjectItem(warm_of(n), "rounds")->valueint, 1);
	CHECK(!cJSON_GetObjectItem(warm_of(n), "max_runs") && !cJSON_GetObjectItem(warm_of(n), "precision"));
	CHECK_EQ_INT(
		cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(n, "measure"), "cold"), "rounds")
			->valueint,
		1);
	CHECK(!job_spec_has_delay(n));
	CHECK(!cJSON_GetObjectItem(warm_of(n), "round_gap_ms")); /* the agent's default unless given */
	CHECK(!cJSON_GetObjectItem(cJSON_GetObjectItem(n, "measure"), "noise")); /* the agent's default */
	cJSON_Delete(n);
	/* noise.max_retakes: kept when given, both edges. */
	for (int retakes = 0; retakes <= JOB_SPEC_MAX_NOISE_RETAKES; retakes += JOB_SPEC_MAX_NOISE_RETAKES) {
		char text[80];
		snprintf(text, sizeof(text), "{\"warm\":{},\"noise\":{\"max_retakes\":%d}}", retakes);
		CHECK_EQ_INT(measure_job("pe", "[\"default\"]", text, &n), 0);
		CHECK_EQ_INT(
			cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(n, "measure"), "noise"),
					    "max_retakes")
				->valueint,
			retakes);
		cJSON_Delete(n);
	}
	/* round_gap_ms: kept when given, both edges. */
	CHECK_EQ_INT(measure_job("pe", "[\"default\"]",
				 "{\"warm\":{\"round_gap_ms\":100},\"cold\":{\"round_gap_ms\":10000}}", &n),
		     0);
	CHECK_EQ_INT(cJSON_GetObjectItem(warm_of(n), "round_gap_ms")->valueint, JOB_SPEC_MIN_ROUND_GAP_MS);
	CHECK_EQ_INT(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(n, "measure"), "cold"),
					 "round_gap_ms")
			     ->valueint,
		     JOB_SPEC_MAX_ROUND_GAP_MS);
	cJSON_Delete(n);
	/* The edges are allowed: 20 rounds of 20 runs, auto's defaults. */
	CHECK_EQ_INT(measure_job("pe", "[\"default\"]", "{\"warm\":{\"runs\":20,\"rounds\":20}}", &n), 0);
	cJSON_Delete(n);
	CHECK_EQ_INT(measure_job("pe", "[\"default\"]", "{\"warm\":{\"runs\":\"auto\",\"rounds\":20}}", &n),
		     0);
	CHECK_EQ_STR(cJSON_GetObjectItem(warm_of(n), "runs")->valuestring, "auto");
	CHECK_EQ_INT(cJSON_GetObjectItem(warm_of(n), "max_runs")->valueint, JOB_SPEC_DEFAULT_AUTO_RUNS);
	CHECK(cJSON_GetObjectItem(warm_of(n), "precision")->valuedouble == JOB_SPEC_DEFAULT_PRECISION);
	{
		cJSON *again = NULL; /* a normalized auto job normalizes to itself */
		CHECK_EQ_INT(job_spec_normalize(n, &again), 0);
		CHECK(cJSON_Compare(n, again, true));
		cJSON_Delete(again);
	}
	cJSON_Delete(n);
	CHECK_EQ_INT(measure_job("pe", "[\"default\"]",
				 "{\"warm\":{\"runs\":\"auto\",\"max_runs\":1000,\"precision\":0.5}}", &n),
		     0);
	cJSON_Delete(n);

	/* delay_us: kept only when not 0; an elf variant then names its preset. */
	CHECK_EQ_INT(measure_job("elf",
				 "[\"default\",{\"name\":\"d0\",\"preset\":\"default\"},"
				 "{\"name\":\"d100000\",\"preset\":\"now\",\"delay_us\":100000}]",
				 NULL, &n),
		     0);
	{
		const cJSON *v = cJSON_GetObjectItem(n, "variants");
		cJSON *again = NULL;
		CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetArrayItem(v, 0)), 1);
		CHECK_EQ_STR(cJSON_GetObjectItem(cJSON_GetArrayItem(v, 1), "preset")->valuestring, "default");
		CHECK(!cJSON_GetObjectItem(cJSON_GetArrayItem(v, 1), "delay_us"));
		CHECK_EQ_INT(cJSON_GetObjectItem(cJSON_GetArrayItem(v, 2), "delay_us")->valueint, 100000);
		CHECK(job_spec_has_delay(n));
		CHECK_EQ_INT(job_spec_normalize(n, &again), 0);
		CHECK(cJSON_Compare(n, again, true));
		cJSON_Delete(again);
	}
	cJSON_Delete(n);
	CHECK_EQ_INT(measure_job("pe", "[{\"name\":\"a\",\"delay_us\":0},{\"name\":\"b\",\"delay_us\":7}]",
				 NULL, &n),
		     0);
	CHECK(!cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(n, "variants"), 0), "delay_us"));
	CHECK_EQ_INT(
		cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(n, "variants"), 1), "delay_us")
			->valueint,
		7);
	CHECK(job_spec_has_delay(n));
	cJSON_Delete(n);
}

/* warm.precision_pct and max_seconds (issue 40): runs until a paired
 * precision; bad input refused with a message naming the field. */
static void test_precision_pct(void)
{
	static const char *const bad[] = {
		"{\"warm\":{\"precision_pct\":0}}",
		"{\"warm\":{\"precision_pct\":0.09}}",
		"{\"warm\":{\"precision_pct\":50.5}}",
		"{\"warm\":{\"precision_pct\":\"1\"}}",
		"{\"warm\":{\"precision_pct\":1,\"max_seconds\":0}}",
		"{\"warm\":{\"precision_pct\":1,\"max_seconds\":3601}}",
		"{\"warm\":{\"precision_pct\":1,\"max_seconds\":2.5}}",
		"{\"warm\":{\"precision_pct\":1,\"runs\":30}}",        /* a count and a precision */
		"{\"warm\":{\"precision_pct\":1,\"precision\":0.02}}", /* two stopping rules */
		"{\"warm\":{\"max_seconds\":300}}",                    /* without precision_pct */
		"{\"warm\":{\"runs\":\"auto\",\"max_seconds\":300}}",
		"{\"cold\":{\"precision_pct\":1}}",
	};
	cJSON *n = (cJSON *)1;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		check_refused("elf", "[\"default\"]", bad[i]);
	CHECK_EQ_INT(measure_job("elf", "[\"default\"]", "{\"warm\":{\"runs\":30,\"max_seconds\":300}}", &n),
		     LL_EINVAL);
	CHECK(strstr(err_message(LL_EINVAL), "max_seconds") != NULL);
	/* The form: runs "auto", max_runs by default, 300 s by default. */
	CHECK_EQ_INT(measure_job("elf", "[\"default\"]", "{\"warm\":{\"precision_pct\":1}}", &n), 0);
	CHECK_EQ_STR(cJSON_GetObjectItem(warm_of(n), "runs")->valuestring, "auto");
	CHECK(cJSON_GetObjectItem(warm_of(n), "precision_pct")->valuedouble == 1);
	CHECK(cJSON_GetObjectItem(warm_of(n), "max_seconds")->valuedouble == JOB_SPEC_DEFAULT_MAX_SECONDS);
	CHECK(cJSON_GetObjectItem(warm_of(n), "max_runs")->valuedouble == JOB_SPEC_DEFAULT_AUTO_RUNS);
	CHECK(!cJSON_GetObjectItem(warm_of(n), "precision")); /* one rule */
	/* Normalizing again (the agent does) changes nothing. */
	{
		cJSON *again = NULL;
		CHECK_EQ_INT(job_spec_normalize(n, &again), 0);
		CHECK(cJSON_Compare(n, again, true));
		cJSON_Delete(again);
	}
	cJSON_Delete(n);
	CHECK_EQ_INT(measure_job("elf", "[\"default\"]",
				 "{\"warm\":{\"runs\":\"auto\",\"precision_pct\":0.5,\"max_seconds\":60,"
				 "\"max_runs\":400}}",
				 &n),
		     0);
	CHECK(cJSON_GetObjectItem(warm_of(n), "max_seconds")->valuedouble == 60);
	CHECK(cJSON_GetObjectItem(warm_of(n), "max_runs")->valuedouble == 400);
	cJSON_Delete(n);
}

static void test_cells_and_matching(void)
{
	cJSON *n = NULL, *cells = NULL;
	cJSON *facts = parse("{\"os\":\"win10\",\"disk\":\"ssd\",\"cores\":4,\"wine\":true,"
			     "\"toolchains\":[\"gcc\",\"clang\"]}");
	cJSON *labels = parse("{\"disk\":\"hdd\"}");
	cJSON *cell;

	CHECK_EQ_INT(normalize_text(
			     "{\"name\":\"m\",\"family\":\"pe\",\"generator\":{\"dlls\":1,\"exports\":1},"
			     "\"variants\":[\"default\"],\"matrix\":{\"cells\":{\"os\":[\"winxp\",\"win10\"],"
			     "\"disk\":[\"hdd\",\"ssd\"],\"fs\":[\"ntfs\"]}}}",
			     &n),
		     0);
	CHECK_EQ_INT(job_spec_expand_cells(n, &cells), 0);
	CHECK_EQ_INT(cJSON_GetArraySize(cells), 4);
	cell = cJSON_GetArrayItem(cells, 3);
	CHECK_EQ_STR(cJSON_GetObjectItem(cell, "os")->valuestring, "win10");
	CHECK_EQ_STR(cJSON_GetObjectItem(cell, "disk")->valuestring, "ssd");
	CHECK_EQ_STR(cJSON_GetObjectItem(cell, "fs")->valuestring, "ntfs");
	cJSON_Delete(cells);
	cJSON_Delete(n);

	/* A label or a fact may match; numbers, booleans and lists of facts too. */
	CHECK(matches_text(job_spec_cell_matches, "{\"os\":\"win10\",\"disk\":\"hdd\"}", facts, labels));
	CHECK(matches_text(job_spec_cell_matches,
			   "{\"cores\":\"4\",\"wine\":\"true\",\"toolchains\":\"clang\"}", facts, labels));
	CHECK(!matches_text(job_spec_cell_matches, "{\"os\":\"winxp\"}", facts, labels));
	CHECK(!matches_text(job_spec_cell_matches, "{\"fs\":\"ntfs\"}", facts, labels));
	CHECK(matches_text(job_spec_selector_matches, "{\"os\":[\"winxp\",\"win10\"],\"cores\":[\"4\"]}",
			   facts, labels));
	CHECK(!matches_text(job_spec_selector_matches, "{\"os\":[\"winxp\"]}", facts, labels));
	cJSON_Delete(facts);
	cJSON_Delete(labels);

	CHECK(job_spec_key_valid("disk_kind2"));
	CHECK(!job_spec_key_valid("Disk"));
	CHECK(!job_spec_key_valid("2disk"));
	CHECK(!job_spec_key_valid(""));
	CHECK(!job_spec_key_valid("abcdefghijklmnopqrstuvwxyz0123456"));
}

static void test_series_and_revision(void)
{
	const char *head = "{\"name\":\"s\",\"family\":\"elf\",\"generator\":{\"dlls\":1,\"exports\":1},"
			   "\"variants\":[\"default\"]";
	char text[512];
	cJSON *n = NULL;

	snprintf(text, sizeof(text), "%s,\"series\":\"ci/main\",\"revision\":\"v1.2 (abc)\"}", head);
	CHECK_EQ_INT(normalize_text(text, &n), 0);
	CHECK_EQ_STR(cJSON_GetObjectItemCaseSensitive(n, "series")->valuestring, "ci/main");
	CHECK_EQ_STR(cJSON_GetObjectItemCaseSensitive(n, "revision")->valuestring, "v1.2 (abc)");
	cJSON_Delete(n);
	n = NULL;
	/* absent: absent from the normalized spec too */
	snprintf(text, sizeof(text), "%s}", head);
	CHECK_EQ_INT(normalize_text(text, &n), 0);
	CHECK(!cJSON_GetObjectItemCaseSensitive(n, "series"));
	CHECK(!cJSON_GetObjectItemCaseSensitive(n, "revision"));
	cJSON_Delete(n);
	n = NULL;
	snprintf(text, sizeof(text), "%s,\"series\":\"a b\"}", head);
	CHECK_EQ_INT(normalize_text(text, &n), LL_EINVAL);
	snprintf(text, sizeof(text), "%s,\"series\":\"\"}", head);
	CHECK(normalize_text(text, &n) < 0);
	snprintf(text, sizeof(text), "%s,\"series\":7}", head);
	CHECK(normalize_text(text, &n) < 0);
	snprintf(text, sizeof(text), "%s,\"revision\":\"a\\u0001\"}", head);
	CHECK_EQ_INT(normalize_text(text, &n), LL_EINVAL);
	CHECK(job_spec_series_valid("nightly-xp-matrix"));
	CHECK(!job_spec_series_valid("caf\xc3\xa9"));
	{
		char long_name[130];
		memset(long_name, 'x', 129);
		long_name[129] = 0;
		CHECK(!job_spec_series_valid(long_name));
		long_name[128] = 0;
		CHECK(job_spec_series_valid(long_name));
	}
	/* agents' names (enrollment, a bisection's "agent") */
	CHECK_EQ_INT(job_spec_agent_name_check("lab-1", "agent"), 0);
	CHECK_EQ_INT(job_spec_agent_name_check("win xp (old)", "agent"), 0);
	CHECK_EQ_INT(job_spec_agent_name_check("", "agent"), LL_EINVAL);
	CHECK_EQ_INT(job_spec_agent_name_check("lab\n1", "agent"), LL_EINVAL);
	CHECK_EQ_INT(job_spec_agent_name_check("lab\x1b[31m", "agent"), LL_EINVAL);
	CHECK_EQ_INT(job_spec_agent_name_check("lab\x7f", "agent"), LL_EINVAL);
	{
		char name[JOB_SPEC_MAX_AGENT_NAME + 2];
		memset(name, 'a', sizeof(name) - 1);
		name[sizeof(name) - 1] = 0;
		CHECK_EQ_INT(job_spec_agent_name_check(name, "agent"), LL_EINVAL);
		name[JOB_SPEC_MAX_AGENT_NAME] = 0;
		CHECK_EQ_INT(job_spec_agent_name_check(name, "agent"), 0);
	}
}

/* A job of FAMILY whose generator is {"dlls":D,"exports":E,GEN}, normalized. */
static int generator_job(const char *family, int dlls, int exports, const char *gen, cJSON **ret)
{
	char text[1024];

	snprintf(text, sizeof(text),
		 "{\"name\":\"g\",\"family\":\"%s\",\"generator\":{\"dlls\":%d,\"exports\":%d%s%s},"
		 "\"variants\":[\"%s\"]}",
		 family, dlls, exports, *gen ? "," : "", gen, "reorder");
	return normalize_text(text, ret);
}

/* The pe build knobs (issue 12): kept only when given, bounded, pe only. */
static void test_pe_build_knobs(void)
{
	static const char *const bad[] = {
		"\"function_bytes\":-1",   "\"function_bytes\":65537",
		"\"startup_share\":0",     "\"startup_share\":1.5",
		"\"startup_share\":\"x\"", "\"file_alignment\":4097",
		"\"file_alignment\":256",  "\"file_alignment\":8192",
		"\"file_alignment\":3072", "\"crt\":1",
		"\"strip_debug\":\"yes\"", "\"main\":\"sometimes\"",
	};
	cJSON *n = NULL, *g;

	CHECK_EQ_INT(generator_job("pe", 4, 100, "", &n), 0);
	g = cJSON_GetObjectItem(n, "generator");
	CHECK(!cJSON_GetObjectItem(g, "function_bytes") && !cJSON_GetObjectItem(g, "startup_share") &&
	      !cJSON_GetObjectItem(g, "file_alignment") && !cJSON_GetObjectItem(g, "crt") &&
	      !cJSON_GetObjectItem(g, "strip_debug"));
	cJSON_Delete(n);
	n = NULL;
	CHECK_EQ_INT(generator_job("pe", 4, 100,
				   "\"main\":\"startup\",\"function_bytes\":4096,\"startup_share\":0.05,"
				   "\"file_alignment\":4096,\"crt\":true,\"strip_debug\":true",
				   &n),
		     0);
	g = cJSON_GetObjectItem(n, "generator");
	CHECK_EQ_STR(cJSON_GetObjectItem(g, "main")->valuestring, "startup");
	CHECK_EQ_INT(cJSON_GetObjectItem(g, "function_bytes")->valueint, 4096);
	CHECK(cJSON_GetObjectItem(g, "startup_share")->valuedouble == 0.05);
	CHECK_EQ_INT(cJSON_GetObjectItem(g, "file_alignment")->valueint, 4096);
	CHECK(cJSON_IsTrue(cJSON_GetObjectItem(g, "crt")));
	CHECK(cJSON_IsTrue(cJSON_GetObjectItem(g, "strip_debug")));
	{
		cJSON *again = NULL;
		CHECK_EQ_INT(job_spec_normalize(n, &again), 0);
		CHECK(cJSON_Compare(n, again, true));
		cJSON_Delete(again);
	}
	cJSON_Delete(n);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc;
		n = (cJSON *)1;
		rc = generator_job("pe", 4, 100, bad[i], &n);
		CHECK(rc == LL_EINVAL || rc == LL_ERANGE);
		CHECK(n == (cJSON *)1);
	}
	/* The code size bound: 256 DLLs x 400 x 4096 bytes is 400 MiB. */
	n = (cJSON *)1;
	CHECK_EQ_INT(generator_job("pe", 256, 390, "\"function_bytes\":4096", &n), LL_ERANGE);
	CHECK(n == (cJSON *)1);
	n = NULL;
	CHECK_EQ_INT(generator_job("pe", 64, 1024, "\"function_bytes\":4096", &n), 0);
	cJSON_Delete(n);
	/* pe only: an elf job refuses each. */
	static const char *const pe_only[] = {"\"function_bytes\":16",   "\"startup_share\":0.5",
					      "\"file_alignment\":4096", "\"crt\":false",
					      "\"strip_debug\":true",    "\"main\":\"startup\""};
	for (size_t i = 0; i < sizeof(pe_only) / sizeof(pe_only[0]); i++) {
		n = (cJSON *)1;
		CHECK_EQ_INT(generator_job("elf", 1, 1, pe_only[i], &n), LL_EINVAL);
		CHECK(n == (cJSON *)1);
	}
}

/* A misspelt variant or family is refused with the nearest name and the
 * list of known ones (names.c). */
static void test_unknown_names_suggest(void)
{
	cJSON *n = NULL;

	CHECK_EQ_INT(measure_job("pe", "[\"rebse\"]", NULL, &n), LL_EINVAL);
	CHECK(strstr(err_message(LL_EINVAL),
		     "Unknown pe variant 'rebse' (did you mean 'rebase'? known: default, "
		     "rebase, bind,") != NULL);
	CHECK_EQ_INT(measure_job("elf", "[\"symbolc\"]", NULL, &n), LL_EINVAL);
	CHECK(strstr(err_message(LL_EINVAL), "did you mean 'symbolic'?") != NULL);
	CHECK_EQ_INT(measure_job("elf", "[\"xyzzy\"]", NULL, &n), LL_EINVAL);
	CHECK(strstr(err_message(LL_EINVAL), "did you mean") == NULL);
	CHECK(strstr(err_message(LL_EINVAL), "known: default, now, relr,") != NULL);
	CHECK_EQ_INT(measure_job("ef", "[\"default\"]", NULL, &n), LL_EINVAL);
	CHECK(strstr(err_message(LL_EINVAL),
		     "Unknown family 'ef' (did you mean 'elf'? known: pe, elf, program).") != NULL);
	CHECK(n == NULL);
}

int main(void)
{
	test_unknown_names_suggest();
	test_series_and_revision();
	test_presets_and_defaults();
	test_bounds();
	test_rounds_auto_delay();
	test_precision_pct();
	test_cells_and_matching();
	test_pe_build_knobs();
	return check_finish();
}
