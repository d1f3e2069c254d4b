#include "loadlab/job_spec.h"

#include "loadlab/err.h"
#include "loadlab/json.h"
#include "loadlab/names.h"

#include <stdio.h>
#include <string.h>

struct pe_preset {
	const char *name;
	const char *bases;
	bool bind;
	const char *imports;
	const char *order;
};

/* DESIGN.md, "Experiments": the names users type. */
static const struct pe_preset pe_presets[] = {
	{"default", "same", false, "name", "link"},
	{"rebase", "unique", false, "name", "link"},
	{"bind", "unique", true, "name", "link"},
	{"ordinal", "same", false, "ordinal", "link"},
	{"ordinal+rebase", "unique", false, "ordinal", "link"},
	{"ordinal+bind", "unique", true, "ordinal", "link"},
	{"reorder", "unique", false, "name", "trace"},
	{"no-rebase", "toolchain", false, "name", "link"},
};

/* DESIGN.md, "Experiments": the elf names users type and what each builds
 * (job_spec.h, struct job_spec_elf_knobs). */
static const struct job_spec_elf_knobs elf_presets[] = {
	{"default", false, false, false, false, false, false},
	{"now", true, false, false, false, false, false},
	{"relr", false, true, false, false, false, false},
	{"hidden", false, false, true, false, false, false},
	{"symbolic", false, false, false, true, false, false},
	{"symbolic+relr", false, true, false, true, false, false},
	{"reorder", false, false, false, false, true, false},
	{"sysv-hash", false, false, false, false, false, true},
};

int job_spec_elf_preset(const char *name, struct job_spec_elf_knobs *ret)
{
	for (size_t i = 0; i < sizeof(elf_presets) / sizeof(elf_presets[0]); i++)
		if (strcmp(elf_presets[i].name, name) == 0) {
			*ret = elf_presets[i];
			return 0;
		}
	return names_unknown("elf variant", name, &elf_presets[0].name,
			     sizeof(elf_presets) / sizeof(elf_presets[0]), sizeof(elf_presets[0]));
}

static const char *const churn_dll_sets[] = {
	"none", "user32", "user32+gdi32", "generated", NULL,
};

static bool in_list(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(s, *list) == 0)
			return true;
	return false;
}

bool job_spec_has_delay(const cJSON *normalized)
{
	const cJSON *v;

	cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(normalized, "variants")) {
		const cJSON *d = cJSON_GetObjectItemCaseSensitive(v, "delay_us");
		if (cJSON_IsNumber(d) && d->valuedouble > 0)
			return true;
	}
	return false;
}

static int add_knobs(cJSON *variants, const char *name, const char *bases, bool bind, const char *imports,
		     const char *order)
{
	cJSON *v = cJSON_CreateObject();

	if (!v || !cJSON_AddStringToObject(v, "name", name) || !cJSON_AddStringToObject(v, "bases", bases) ||
	    !cJSON_AddBoolToObject(v, "bind", bind) || !cJSON_AddStringToObject(v, "imports", imports) ||
	    !cJSON_AddStringToObject(v, "order", order)) {
		cJSON_Delete(v);
		return LL_ENOMEM;
	}
	cJSON_AddItemToArray(variants, v);
	return 0;
}

static int choice(const cJSON *obj, const char *key, const char *const *allowed, const char *dflt,
		  const char **ret)
{
	const char *s;
	int rc = json_get_string(obj, key, 64, false, dflt, &s);

	if (rc < 0)
		return rc;
	if (!in_list(s, allowed))
		return err_set(LL_EINVAL, "Field '%s' has an unknown value '%s'.", key, s);
	*ret = s;
	return 0;
}

/* A variant's delay_us (0..JOB_SPEC_MAX_DELAY_US, default 0), added to
 * the normalized variant V only when not 0. */
static int add_delay(const cJSON *item, cJSON *v)
{
	long long delay;
	int rc = json_get_int(item, "delay_us", 0, JOB_SPEC_MAX_DELAY_US, false, 0, &delay);

	if (rc < 0)
		return rc;
	if (delay > 0 && !cJSON_AddNumberToObject(v, "delay_us", (double)delay))
		return LL_ENOMEM;
	return 0;
}

/* An elf variant given as an object: {"name": PRESET} (normalized
 * already), or {"name", "preset", "delay_us"} (a name of its own). */
static int normalize_elf_object(const cJSON *item, cJSON *out)
{
	static const char *const keys[] = {"name", "preset", "delay_us", NULL};
	struct job_spec_elf_knobs knobs;
	const char *name, *preset;
	cJSON *v;
	int rc;

	if ((rc = json_check_keys(item, keys, "variant")) < 0 ||
	    (rc = json_get_string(item, "name", 64, true, NULL, &name)) < 0 ||
	    (rc = json_get_string(item, "preset", 64, false, name, &preset)) < 0 ||
	    (rc = job_spec_elf_preset(preset, &knobs)) < 0)
		return rc;
	if (!job_spec_text_valid(name) || !*name)
		return err_set(LL_EINVAL, "Variant name '%s' is empty or has control characters.", name);
	if (!(v = cJSON_CreateObject()) || !cJSON_AddItemToArray(out, v) ||
	    !cJSON_AddStringToObject(v, "name", name))
		return LL_ENOMEM;
	if (cJSON_GetObjectItemCaseSensitive(item, "preset") ||
	    cJSON_GetObjectItemCaseSensitive(item, "delay_us")) {
		if (!cJSON_AddStringToObject(v, "preset", preset))
			return LL_ENOMEM;
		return add_delay(item, v);
	}
	return 0;
}

static int normalize_pe_knobs(const cJSON *item, cJSON *out)
{
	static const char *const keys[] = {"name", "bases", "bind", "imports", "order", "delay_us", NULL};
	static const char *const bases_values[] = {"same", "unique", "toolchain", NULL};
	static const char *const import_values[] = {"name", "ordinal", NULL};
	static const char *const order_values[] = {"link", "trace", NULL};
	const char *name = NULL, *bases = NULL, *imports = NULL, *order = NULL;
	bool bind;
	int rc;

	if ((rc = json_check_keys(item, keys, "variant")) < 0 ||
	    (rc = json_get_string(item, "name", 64, true, NULL, &name)) < 0 ||
	    (rc = choice(item, "bases", bases_values, "same", &bases)) < 0 ||
	    (rc = json_get_bool(item, "bind", false, false, &bind)) < 0 ||
	    (rc = choice(item, "imports", import_values, "name", &imports)) < 0 ||
	    (rc = choice(item, "order", order_values, "link", &order)) < 0)
		return rc;
	if (!job_spec_text_valid(name))
		return err_set(LL_EINVAL, "Variant name '%s' has control characters.", name);
	if (bind && strcmp(bases, "same") == 0)
		return err_set(LL_EINVAL,
			       "Variant '%s' binds with bases 'same': bound imports are only "
			       "valid when each DLL has its own base.",
			       name);
	/* DLL 0 of a self-test imports kernel32, whose import stubs are
	 * linked into .text ahead of the traced functions' grouped sections. */
	if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(item, "delay_us")) &&
	    cJSON_GetObjectItemCaseSensitive(item, "delay_us")->valuedouble > 0 &&
	    strcmp(order, "trace") == 0)
		return err_set(LL_EINVAL,
			       "Variant '%s': delay_us cannot go with order 'trace' (the waiting DllMain's "
			       "kernel32 stubs would come before the traced functions).",
			       name);
	if ((rc = add_knobs(out, name, bases, bind, imports, order)) < 0)
		return rc;
	return add_delay(item, cJSON_GetArrayItem(out, cJSON_GetArraySize(out) - 1));
}

static int normalize_variants(const cJSON *variants, const char *family, bool elf_program, cJSON *out)
{
	const cJSON *item;
	int count, rc;

	if (!cJSON_IsArray(variants))
		return err_set(LL_EINVAL, "Field 'variants' is required and must be an array.");
	count = cJSON_GetArraySize(variants);
	if (count < 1 || count > JOB_SPEC_MAX_VARIANTS)
		return err_set(LL_ERANGE, "Field 'variants' must have 1 to %d entries.",
			       JOB_SPEC_MAX_VARIANTS);
	cJSON_ArrayForEach(item, variants) {
		if (strcmp(family, "program") == 0) {
			if ((rc = elf_program ? job_spec_program_elf_variant(item, out)
					      : job_spec_program_variant(item, out)) < 0)
				return rc;
			continue;
		}
		const cJSON *value = item;
		if (cJSON_IsObject(item) && strcmp(family, "elf") == 0) {
			if ((rc = normalize_elf_object(item, out)) < 0)
				return rc;
			continue;
		}
		if (cJSON_IsString(value)) {
			const char *name = value->valuestring;
			size_t i;
			if (strcmp(family, "elf") == 0) {
				struct job_spec_elf_knobs knobs;
				cJSON *v;
				if ((rc = job_spec_elf_preset(name, &knobs)) < 0)
					return rc;
				v = cJSON_CreateObject();
				if (!v || !cJSON_AddStringToObject(v, "name", name)) {
					cJSON_Delete(v);
					return LL_ENOMEM;
				}
				cJSON_AddItemToArray(out, v);
				continue;
			}
			for (i = 0; i < sizeof(pe_presets) / sizeof(pe_presets[0]); i++)
				if (strcmp(pe_presets[i].name, name) == 0)
					break;
			if (i == sizeof(pe_presets) / sizeof(pe_presets[0]))
				return names_unknown("pe variant", name, &pe_presets[0].name,
						     sizeof(pe_presets) / sizeof(pe_presets[0]),
						     sizeof(pe_presets[0]));
			rc = add_knobs(out, name, pe_presets[i].bases, pe_presets[i].bind,
				       pe_presets[i].imports, pe_presets[i].order);
		} else if (cJSON_IsObject(item) && strcmp(family, "pe") == 0) {
			rc = normalize_pe_knobs(item, out);
		} else {
			return err_set(LL_EINVAL, "Each variant must be a preset name%s.",
				       strcmp(family, "pe") == 0 ? " or an object of knobs" : "");
		}
		if (rc < 0)
			return rc;
	}
	/* Names identify variants in results and reports: no duplicates. */
	for (const cJSON *a = out->child; a; a = a->next)
		for (const cJSON *b = a->next; b; b = b->next)
			if (strcmp(cJSON_GetObjectItemCaseSensitive(a, "name")->valuestring,
				   cJSON_GetObjectItemCaseSensitive(b, "name")->valuestring) == 0)
				return err_set(LL_EINVAL, "Variant '%s' is listed twice.",
					       cJSON_GetObjectItemCaseSensitive(a, "name")->valuestring);
	return 0;
}

/* The pe-only build knobs of GEN (job_spec.h), each added to OUT only
 * when given, so that a job without them normalizes as before. */
static int normalize_pe_build(const cJSON *gen, long long functions, cJSON *out)
{
	const cJSON *share = cJSON_GetObjectItemCaseSensitive(gen, "startup_share");
	long long bytes, align;
	bool crt, strip;
	int rc;

	if ((rc = json_get_bool(gen, "strip_debug", false, false, &strip)) < 0 ||
	    (rc = json_get_int(gen, "function_bytes", 0, JOB_SPEC_MAX_FUNCTION_BYTES, false, 0, &bytes)) <
		    0 ||
	    (rc = json_get_int(gen, "file_alignment", 512, 4096, false, 512, &align)) < 0 ||
	    (rc = json_get_bool(gen, "crt", false, false, &crt)) < 0)
		return rc;
	if (align & (align - 1))
		return err_set(LL_EINVAL, "Field 'file_alignment' must be 512, 1024, 2048 or 4096.");
	if (bytes * functions > JOB_SPEC_MAX_CODE_BYTES)
		return err_set(LL_ERANGE, "dlls * exports * function_bytes is %lld; the limit is %lld.",
			       bytes * functions, (long long)JOB_SPEC_MAX_CODE_BYTES);
	if (share && (!cJSON_IsNumber(share) || !(share->valuedouble >= JOB_SPEC_MIN_STARTUP_SHARE) ||
		      !(share->valuedouble <= 1)))
		return err_set(LL_ERANGE, "Field 'startup_share' must be a number %g..1.",
			       JOB_SPEC_MIN_STARTUP_SHARE);
	if ((cJSON_GetObjectItemCaseSensitive(gen, "function_bytes") &&
	     !cJSON_AddNumberToObject(out, "function_bytes", (double)bytes)) ||
	    (share && !cJSON_AddNumberToObject(out, "startup_share", share->valuedouble)) ||
	    (cJSON_GetObjectItemCaseSensitive(gen, "file_alignment") &&
	     !cJSON_AddNumberToObject(out, "file_alignment", (double)align)) ||
	    (cJSON_GetObjectItemCaseSensitive(gen, "crt") && !cJSON_AddBoolToObject(out, "crt", crt)) ||
	    (cJSON_GetObjectItemCaseSensitive(gen, "strip_debug") &&
	     !cJSON_AddBoolToObject(out, "strip_debug", strip)))
		return LL_ENOMEM;
	return 0;
}

static int normalize_generator(const cJSON *gen, cJSON *out)
{
	static const char *const keys[] = {"dlls",
					   "exports",
					   "globals_per_function",
					   "main",
					   "function_bytes",
					   "startup_share",
					   "file_alignment",
					   "crt",
					   "strip_debug",
					   NULL};
	static const char *const main_values[] = {"reference", "call", "startup", NULL};
	long long dlls, exports, globals;
	const char *main_mode = NULL;
	int rc;

	if (!cJSON_IsObject(gen))
		return err_set(LL_EINVAL, "Field 'generator' is required and must be an object.");
	if ((rc = json_check_keys(gen, keys, "generator")) < 0 ||
	    (rc = json_get_int(gen, "dlls", 1, JOB_SPEC_MAX_DLLS, true, 0, &dlls)) < 0 ||
	    (rc = json_get_int(gen, "exports", 1, JOB_SPEC_MAX_EXPORTS, true, 0, &exports)) < 0 ||
	    (rc = json_get_int(gen, "globals_per_function", 0, JOB_SPEC_MAX_GLOBALS, false, 0, &globals)) <
		    0 ||
	    (rc = choice(gen, "main", main_values, "reference", &main_mode)) < 0)
		return rc;
	if (dlls * exports > JOB_SPEC_MAX_TOTAL_EXPORTS)
		return err_set(LL_ERANGE, "dlls * exports is %lld; the limit is %d.", dlls * exports,
			       JOB_SPEC_MAX_TOTAL_EXPORTS);
	if (!cJSON_AddNumberToObject(out, "dlls", (double)dlls) ||
	    !cJSON_AddNumberToObject(out, "exports", (double)exports) ||
	    !cJSON_AddNumberToObject(out, "globals_per_function", (double)globals) ||
	    !cJSON_AddStringToObject(out, "main", main_mode))
		return LL_ENOMEM;
	return normalize_pe_build(gen, dlls * exports, out);
}

/* measure.warm.runs: a number 1..JOB_SPEC_MAX_WARM_RUNS (default 30) or
 * "auto" (JOB_SPEC_RUNS_AUTO). */
static int normalize_warm_runs(const cJSON *warm, long long *ret)
{
	const cJSON *runs = cJSON_GetObjectItemCaseSensitive(warm, "runs");

	/* precision_pct: runs until the paired intervals are narrow enough. */
	if (cJSON_GetObjectItemCaseSensitive(warm, "precision_pct")) {
		if (runs && !(cJSON_IsString(runs) && strcmp(runs->valuestring, "auto") == 0))
			return err_set(LL_EINVAL, "Field 'measure.warm.precision_pct' asks for runs until "
						  "a precision: give no number of 'runs' beside it.");
		if (cJSON_GetObjectItemCaseSensitive(warm, "precision"))
			return err_set(LL_EINVAL, "Fields 'measure.warm.precision_pct' and 'precision' "
						  "are two stopping rules: give one.");
		*ret = JOB_SPEC_RUNS_AUTO;
		return 0;
	}
	if (cJSON_GetObjectItemCaseSensitive(warm, "max_seconds"))
		return err_set(LL_EINVAL, "Field 'measure.warm.max_seconds' goes with precision_pct only.");

	if (cJSON_IsString(runs)) {
		if (strcmp(runs->valuestring, "auto") != 0)
			return err_set(LL_EINVAL, "Field 'runs' must be an integer or \"auto\".");
		*ret = JOB_SPEC_RUNS_AUTO;
		return 0;
	}
	return json_get_int(warm, "runs", 1, JOB_SPEC_MAX_WARM_RUNS, false, 30, ret);
}

/* SECTION's "rounds" (1..JOB_SPEC_MAX_ROUNDS, default 1): no more rounds
 * than runs, so that every round has a run. */
static int get_rounds(const cJSON *section, const char *name, long long runs, long long *ret)
{
	int rc = json_get_int(section, "rounds", 1, JOB_SPEC_MAX_ROUNDS, false, 1, ret);

	if (rc < 0)
		return rc;
	if (runs != JOB_SPEC_RUNS_AUTO && *ret > runs)
		return err_set(LL_ERANGE, "Field '%s.rounds' is %lld, more than its %lld runs.", name, *ret,
			       runs);
	return 0;
}

/* SECTION's "round_gap_ms" into the normalized O when given
 * (JOB_SPEC_MIN_ROUND_GAP_MS..JOB_SPEC_MAX_ROUND_GAP_MS; the agent's
 * default, JOB_SPEC_DEFAULT_ROUND_GAP_MS, when not). */
static int normalize_round_gap(const cJSON *section, cJSON *o)
{
	long long gap;
	int rc;

	if (!cJSON_GetObjectItemCaseSensitive(section, "round_gap_ms"))
		return 0;
	if ((rc = json_get_int(section, "round_gap_ms", JOB_SPEC_MIN_ROUND_GAP_MS, JOB_SPEC_MAX_ROUND_GAP_MS,
			       false, JOB_SPEC_DEFAULT_ROUND_GAP_MS, &gap)) < 0)
		return rc;
	return cJSON_AddNumberToObject(o, "round_gap_ms", (double)gap) ? 0 : LL_ENOMEM;
}

/* precision_pct and max_seconds (normalize_warm_runs() checked what may
 * stand beside them) into the normalized O, when given. */
static int normalize_precision_pct(const cJSON *warm, cJSON *o)
{
	const cJSON *pct = cJSON_GetObjectItemCaseSensitive(warm, "precision_pct");
	long long seconds;
	int rc;

	if (!pct)
		return 0;
	if (!cJSON_IsNumber(pct) || !(pct->valuedouble >= JOB_SPEC_MIN_PRECISION_PCT) ||
	    !(pct->valuedouble <= JOB_SPEC_MAX_PRECISION_PCT))
		return err_set(LL_ERANGE, "Field 'measure.warm.precision_pct' must be a number %g..%g.",
			       JOB_SPEC_MIN_PRECISION_PCT, JOB_SPEC_MAX_PRECISION_PCT);
	if ((rc = json_get_int(warm, "max_seconds", 1, JOB_SPEC_MAX_SECONDS, false,
			       JOB_SPEC_DEFAULT_MAX_SECONDS, &seconds)) < 0)
		return rc;
	if (!cJSON_AddNumberToObject(o, "precision_pct", pct->valuedouble) ||
	    !cJSON_AddNumberToObject(o, "max_seconds", (double)seconds))
		return LL_ENOMEM;
	return 0;
}

/* The adaptive warm runs' cap and precision into the normalized O. */
static int normalize_auto(const cJSON *warm, cJSON *o)
{
	const cJSON *precision = cJSON_GetObjectItemCaseSensitive(warm, "precision");
	long long max_runs, rounds = (long long)cJSON_GetObjectItemCaseSensitive(o, "rounds")->valuedouble;
	double p = JOB_SPEC_DEFAULT_PRECISION;
	int rc;

	if ((rc = json_get_int(warm, "max_runs", 1, JOB_SPEC_MAX_AUTO_RUNS, false, JOB_SPEC_DEFAULT_AUTO_RUNS,
			       &max_runs)) < 0)
		return rc;
	if (precision) {
		if (!cJSON_IsNumber(precision) || !(precision->valuedouble >= JOB_SPEC_MIN_PRECISION) ||
		    !(precision->valuedouble <= JOB_SPEC_MAX_PRECISION))
			return err_set(LL_ERANGE, "Field 'measure.warm.precision' must be a number %g..%g.",
				       JOB_SPEC_MIN_PRECISION, JOB_SPEC_MAX_PRECISION);
		p = precision->valuedouble;
	}
	if (max_runs < rounds)
		return err_set(LL_ERANGE,
			       "Field 'measure.warm.max_runs' is %lld, fewer than its %lld rounds.", max_runs,
			       rounds);
	/* precision_pct's rule replaces the median's (normalize_warm_runs). */
	if (!cJSON_AddNumberToObject(o, "max_runs", (double)max_runs) ||
	    (!cJSON_GetObjectItemCaseSensitive(warm, "precision_pct") &&
	     !cJSON_AddNumberToObject(o, "precision", p)))
		return LL_ENOMEM;
	return normalize_precision_pct(warm, o);
}

/* "measure.noise": {"max_retakes": 0..JOB_SPEC_MAX_NOISE_RETAKES}, kept in
 * OUT only when given (the agent's default is the maximum). */
static int normalize_noise(const cJSON *noise, cJSON *out)
{
	static const char *const keys[] = {"max_retakes", NULL};
	long long retakes;
	cJSON *o;
	int rc;

	if ((rc = json_check_object(noise, keys, "measure.noise")) < 0 ||
	    (rc = json_get_int(noise, "max_retakes", 0, JOB_SPEC_MAX_NOISE_RETAKES, true, 0, &retakes)) < 0)
		return rc;
	o = cJSON_AddObjectToObject(out, "noise");
	return o && cJSON_AddNumberToObject(o, "max_retakes", (double)retakes) ? 0 : LL_ENOMEM;
}

static int normalize_measure(const cJSON *measure, cJSON *out)
{
	static const char *const keys[] = {"warm", "cold", "churn", "noise", NULL};
	static const char *const warm_keys[] = {"runs",          "warmup",      "rounds",
						"round_gap_ms",  "max_runs",    "precision",
						"precision_pct", "max_seconds", NULL};
	static const char *const cold_keys[] = {"runs", "rounds", "round_gap_ms", NULL};
	static const char *const churn_keys[] = {"processes", "dll_sets", NULL};
	const cJSON *warm, *cold, *churn, *noise, *item;
	long long runs, warmup, rounds, processes;
	cJSON *o, *sets;
	int rc;

	if (!measure) {
		o = cJSON_AddObjectToObject(out, "warm");
		if (!o || !cJSON_AddNumberToObject(o, "runs", 30) ||
		    !cJSON_AddNumberToObject(o, "warmup", 3) || !cJSON_AddNumberToObject(o, "rounds", 1))
			return LL_ENOMEM;
		return 0;
	}
	if ((rc = json_check_object(measure, keys, "measure")) < 0)
		return rc;
	warm = cJSON_GetObjectItemCaseSensitive(measure, "warm");
	cold = cJSON_GetObjectItemCaseSensitive(measure, "cold");
	churn = cJSON_GetObjectItemCaseSensitive(measure, "churn");
	noise = cJSON_GetObjectItemCaseSensitive(measure, "noise");
	if (!warm && !cold && !churn)
		return err_set(LL_EINVAL, "Field 'measure' must ask for warm, cold or churn.");
	if (noise && (rc = normalize_noise(noise, out)) < 0)
		return rc;
	if (warm) {
		if ((rc = json_check_object(warm, warm_keys, "measure.warm")) < 0 ||
		    (rc = normalize_warm_runs(warm, &runs)) < 0 ||
		    (rc = json_get_int(warm, "warmup", 0, JOB_SPEC_MAX_WARMUP, false, 3, &warmup)) < 0 ||
		    (rc = get_rounds(warm, "measure.warm", runs, &rounds)) < 0)
			return rc;
		o = cJSON_AddObjectToObject(out, "warm");
		if (!o ||
		    !(runs == JOB_SPEC_RUNS_AUTO ? cJSON_AddStringToObject(o, "runs", "auto")
						 : cJSON_AddNumberToObject(o, "runs", (double)runs)) ||
		    !cJSON_AddNumberToObject(o, "warmup", (double)warmup) ||
		    !cJSON_AddNumberToObject(o, "rounds", (double)rounds))
			return LL_ENOMEM;
		if ((rc = normalize_round_gap(warm, o)) < 0 ||
		    (runs == JOB_SPEC_RUNS_AUTO && (rc = normalize_auto(warm, o)) < 0))
			return rc;
		if (runs != JOB_SPEC_RUNS_AUTO && (cJSON_GetObjectItemCaseSensitive(warm, "max_runs") ||
						   cJSON_GetObjectItemCaseSensitive(warm, "precision")))
			return err_set(
				LL_EINVAL,
				"Fields 'measure.warm.max_runs' and 'precision' go with runs \"auto\" only.");
	}
	if (cold) {
		if ((rc = json_check_object(cold, cold_keys, "measure.cold")) < 0 ||
		    (rc = json_get_int(cold, "runs", 1, JOB_SPEC_MAX_COLD_RUNS, false, 10, &runs)) < 0 ||
		    (rc = get_rounds(cold, "measure.cold", runs, &rounds)) < 0)
			return rc;
		o = cJSON_AddObjectToObject(out, "cold");
		if (!o || !cJSON_AddNumberToObject(o, "runs", (double)runs) ||
		    !cJSON_AddNumberToObject(o, "rounds", (double)rounds))
			return LL_ENOMEM;
		if ((rc = normalize_round_gap(cold, o)) < 0)
			return rc;
	}
	if (churn) {
		const cJSON *given;
		if ((rc = json_check_object(churn, churn_keys, "measure.churn")) < 0 ||
		    (rc = json_get_int(churn, "processes", 1, JOB_SPEC_MAX_CHURN_PROCESSES, false, 1000,
				       &processes)) < 0)
			return rc;
		o = cJSON_AddObjectToObject(out, "churn");
		if (!o || !cJSON_AddNumberToObject(o, "processes", (double)processes))
			return LL_ENOMEM;
		sets = cJSON_AddArrayToObject(o, "dll_sets");
		if (!sets)
			return LL_ENOMEM;
		given = cJSON_GetObjectItemCaseSensitive(churn, "dll_sets");
		if (!given) {
			cJSON_AddItemToArray(sets, cJSON_CreateString("none"));
			cJSON_AddItemToArray(sets, cJSON_CreateString("user32"));
			return 0;
		}
		if (!cJSON_IsArray(given) || cJSON_GetArraySize(given) < 1 || cJSON_GetArraySize(given) > 8)
			return err_set(LL_EINVAL,
				       "Field 'measure.churn.dll_sets' must be an array of 1 to 8 names.");
		cJSON_ArrayForEach(item, given) {
			if (!cJSON_IsString(item) || !in_list(item->valuestring, churn_dll_sets))
				return err_set(LL_EINVAL,
					       "Unknown DLL set in 'measure.churn.dll_sets' (known: "
					       "none, user32, user32+gdi32, generated).");
			cJSON_AddItemToArray(sets, cJSON_CreateString(item->valuestring));
		}
	}
	return 0;
}

/* Adds to OUT an object NAME holding what NORMALIZE makes of JOB's member
 * NAME (NULL when absent). */
static int add_section(const cJSON *job, const char *name, int (*normalize)(const cJSON *section, cJSON *out),
		       cJSON *out)
{
	cJSON *o = cJSON_AddObjectToObject(out, name);

	if (!o)
		return LL_ENOMEM;
	return normalize(cJSON_GetObjectItemCaseSensitive(job, name), o);
}

/* The family's own section: "generator" for pe and elf, "program" for
 * program (job_spec_program.c); the other one must be absent. */
static int normalize_family_section(const cJSON *job, const char *family, cJSON *out)
{
	bool program = strcmp(family, "program") == 0;
	const char *mine = program ? "program" : "generator", *other = program ? "generator" : "program";

	static const char *const pe_only[] = {
		"function_bytes", "startup_share", "file_alignment", "crt", "strip_debug", NULL};
	const cJSON *gen;
	int rc;

	if (cJSON_GetObjectItemCaseSensitive(job, other))
		return err_set(LL_EINVAL, "Family '%s' takes no '%s' section.", family, other);
	if ((rc = add_section(job, mine, program ? job_spec_normalize_program : normalize_generator, out)) <
	    0)
		return rc;
	gen = cJSON_GetObjectItemCaseSensitive(out, "generator");
	for (size_t k = 0; strcmp(family, "pe") != 0 && gen && pe_only[k]; k++)
		if (cJSON_GetObjectItemCaseSensitive(gen, pe_only[k]))
			return err_set(LL_EINVAL, "Field 'generator.%s' is for the pe family only.",
				       pe_only[k]);
	if (strcmp(family, "pe") != 0 && gen &&
	    strcmp(cJSON_GetObjectItemCaseSensitive(gen, "main")->valuestring, "startup") == 0)
		return err_set(LL_EINVAL, "Field 'generator.main' \"startup\" is for the pe family only.");
	return 0;
}

/* The variant of the normalized VARIANTS whose delay_us is DELAY (absent
 * counts as 0), or NULL. */
static const cJSON *variant_with_delay(const cJSON *variants, long long delay)
{
	const cJSON *v;

	cJSON_ArrayForEach(v, variants) {
		const cJSON *d = cJSON_GetObjectItemCaseSensitive(v, "delay_us");
		if ((cJSON_IsNumber(d) ? (long long)d->valuedouble : 0) == delay)
			return v;
	}
	return NULL;
}

const char *job_spec_calibration_variant(const cJSON *normalized, int multiple)
{
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(normalized, "calibration");
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(c, "delay_us");
	const cJSON *v;

	if (!cJSON_IsNumber(d) || multiple < 0 || multiple > 2)
		return NULL;
	v = variant_with_delay(cJSON_GetObjectItemCaseSensitive(normalized, "variants"),
			       (long long)d->valuedouble * multiple);
	return v ? cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(v, "name")) : NULL;
}

/* The top-level "calibration" section (absent: nothing added): {"delay_us":
 * X}, X 1..JOB_SPEC_MAX_CALIBRATION_DELAY_US, and OUT's normalized
 * variants have delay_us 0, X and 2X. */
static int normalize_calibration(const cJSON *calibration, cJSON *out)
{
	static const char *const keys[] = {"delay_us", NULL};
	const cJSON *variants = cJSON_GetObjectItemCaseSensitive(out, "variants");
	long long delay;
	cJSON *o;
	int rc;

	if (!calibration)
		return 0;
	if ((rc = json_check_object(calibration, keys, "calibration")) < 0 ||
	    (rc = json_get_int(calibration, "delay_us", 1, JOB_SPEC_MAX_CALIBRATION_DELAY_US, true, 0,
			       &delay)) < 0)
		return rc;
	for (int k = 0; k < 3; k++)
		if (!variant_with_delay(variants, delay * k))
			return err_set(LL_EINVAL,
				       "A calibration job needs variants with delay_us 0, %lld and %lld "
				       "(none has %lld).",
				       delay, 2 * delay, delay * k);
	if (!(o = cJSON_AddObjectToObject(out, "calibration")) ||
	    !cJSON_AddNumberToObject(o, "delay_us", (double)delay))
		return LL_ENOMEM;
	return 0;
}

int job_spec_normalize(const cJSON *job, cJSON **ret_normalized)
{
	static const char *const keys[] = {"name",        "family", "generator", "program", "variants",
					   "measure",     "matrix", "priority",  "series",  "revision",
					   "calibration", "build",  NULL};
	static const char *const families[] = {"pe", "elf", "program", NULL};
	static const char *const builds[] = {"shared", "each-agent", NULL};
	const char *name, *family, *series, *revision, *build;
	long long priority;
	cJSON *out = NULL, *o;
	int rc;

	if (!cJSON_IsObject(job))
		return err_set(LL_EINVAL, "A job must be a JSON object.");
	if ((rc = json_check_keys(job, keys, "job")) < 0 ||
	    (rc = json_get_string(job, "name", JOB_SPEC_MAX_NAME, true, NULL, &name)) < 0 ||
	    (rc = json_get_string(job, "family", 16, true, NULL, &family)) < 0 ||
	    (rc = json_get_int(job, "priority", -100, 100, false, 0, &priority)) < 0 ||
	    (rc = json_get_string(job, "series", JOB_SPEC_MAX_SERIES, false, NULL, &series)) < 0 ||
	    (rc = json_get_string(job, "revision", JOB_SPEC_MAX_REVISION, false, NULL, &revision)) < 0 ||
	    (rc = json_get_string(job, "build", 16, false, "shared", &build)) < 0)
		return rc;
	if (!in_list(build, builds))
		return err_set(LL_EINVAL, "Field 'build' must be \"shared\" or \"each-agent\", not '%s'.",
			       build);
	if (!job_spec_text_valid(name))
		return err_set(LL_EINVAL, "Field 'name' has control characters.");
	if (series && !job_spec_series_valid(series))
		return err_set(LL_EINVAL, "Field 'series' must be 1 to %d printable characters.",
			       JOB_SPEC_MAX_SERIES);
	if (revision && (!revision[0] || !job_spec_text_valid(revision)))
		return err_set(LL_EINVAL,
			       "Field 'revision' must be 1 to %d characters without control "
			       "characters.",
			       JOB_SPEC_MAX_REVISION);
	if (!in_list(family, families))
		return names_unknown("family", family, families, sizeof(families) / sizeof(families[0]) - 1,
				     sizeof(families[0]));

	rc = LL_ENOMEM;
	out = cJSON_CreateObject();
	if (!out || !cJSON_AddStringToObject(out, "name", name) ||
	    !cJSON_AddStringToObject(out, "family", family) ||
	    !cJSON_AddNumberToObject(out, "priority", (double)priority) ||
	    (series && !cJSON_AddStringToObject(out, "series", series)) ||
	    (revision && !cJSON_AddStringToObject(out, "revision", revision)))
		goto fail;
	/* Kept only when given: without it the daemon's default decides
	 * (docs/builds.md). */
	if (cJSON_GetObjectItemCaseSensitive(job, "build") && strcmp(family, "program") == 0) {
		rc = err_set(LL_EINVAL, "Field 'build' is for the pe and elf families.");
		goto fail;
	}
	if (cJSON_GetObjectItemCaseSensitive(job, "build") && !cJSON_AddStringToObject(out, "build", build))
		goto fail;
	if ((rc = normalize_family_section(job, family, out)) < 0)
		goto fail;
	rc = LL_ENOMEM;
	if (!(o = cJSON_AddArrayToObject(out, "variants")))
		goto fail;
	if ((rc = normalize_variants(
		     cJSON_GetObjectItemCaseSensitive(job, "variants"), family,
		     job_spec_program_is_elf(cJSON_GetObjectItemCaseSensitive(out, "program")), o)) < 0)
		goto fail;
	if ((rc = add_section(job, "measure", normalize_measure, out)) < 0)
		goto fail;
	if (strcmp(family, "program") == 0 &&
	    cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(out, "measure"), "churn")) {
		rc = err_set(LL_EINVAL, "The program family measures warm and cold starts, not churn.");
		goto fail;
	}
	if ((rc = add_section(job, "matrix", job_spec_normalize_matrix, out)) < 0)
		goto fail;
	if (strcmp(family, "program") == 0 &&
	    job_spec_program_is_elf(cJSON_GetObjectItemCaseSensitive(out, "program")) &&
	    (rc = job_spec_matrix_linux_only(cJSON_GetObjectItemCaseSensitive(out, "matrix"))) < 0)
		goto fail;
	if (strcmp(family, "program") == 0 && cJSON_GetObjectItemCaseSensitive(job, "calibration")) {
		rc = err_set(LL_EINVAL, "Field 'calibration' is for the pe and elf families.");
		goto fail;
	}
	if ((rc = normalize_calibration(cJSON_GetObjectItemCaseSensitive(job, "calibration"), out)) < 0)
		goto fail;
	*ret_normalized = out;
	return 0;
fail:
	cJSON_Delete(out);
	return rc;
}
