/*
 * pe_verify.c - proves each variant is what its knobs claim before it is
 * timed: runs main.exe once in probe mode (what the loader did: each
 * module's preferred and actual base, every import's IAT value next to
 * GetProcAddress) and reads the files with the PE toolkit (relocation
 * counts, import and export modes, the bound import directory, function
 * layout), then compares both with the knobs.
 *
 * A contradiction makes the variant invalid with a reason; facts that are
 * no contradiction are recorded as such, e.g. that Wine's loader ignores
 * bound imports (it resolves every import again, DESIGN.md "Known traps"),
 * so under Wine a valid binding is checked against the files and reported
 * as not used by the loader.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "loadlab/err.h"
#include "loadlab/json.h"
#include "loadlab/pe.h"
#include "pe_family.h"

/* Facts about one of our DLLs read from its file. */
struct dll_facts {
	uint64_t image_base;
	uint32_t timestamp;
	size_t relocations;
	size_t named_exports;
	uint32_t text_rva;       /* the .text section's RVA */
	uint32_t file_alignment; /* the optional header's FileAlignment */
	uint32_t *function_rvas; /* by function index */
};

static void dll_facts_release(struct dll_facts *f, int count)
{
	for (int i = 0; f && i < count; i++)
		free(f[i].function_rvas);
	free(f);
}

static int read_dll(const struct pe_context *ctx, const char *dir, int i, struct dll_facts *ret)
{
	char path[PLAT_MAX_PATH + 1], name[64];
	struct pe_image *image = NULL;
	struct pe_exports exports = {0};
	struct pe_relocs relocs = {0};
	struct dll_facts f = {0};
	int rc;

	snprintf(name, sizeof(name), "lt%d.dll", i);
	if ((rc = family_path(path, dir, name)) < 0 || (rc = pe_image_open(path, &image)) < 0 ||
	    (rc = pe_exports_read(image, &exports)) < 0 || (rc = pe_relocs_read(image, &relocs)) < 0)
		goto out;
	f.image_base = image->image_base;
	f.timestamp = image->timestamp;
	f.relocations = relocs.count;
	f.named_exports = exports.name_count;
	f.file_alignment = image->file_alignment;
	for (uint32_t s = 0; s < image->section_count; s++)
		if (strcmp(image->sections[s].name, ".text") == 0)
			f.text_rva = image->sections[s].virtual_address;
	f.function_rvas = calloc((size_t)ctx->base.exports, sizeof(*f.function_rvas));
	if (!f.function_rvas) {
		rc = LL_ENOMEM;
		goto out;
	}
	for (int j = 0; j < ctx->base.exports; j++) {
		const struct pe_export *x = pe_exports_find_ordinal(&exports, (uint32_t)j + 1);
		f.function_rvas[j] = x ? x->rva : 0;
	}
	*ret = f;
	f.function_rvas = NULL;
out:
	free(f.function_rvas);
	pe_relocs_release(&relocs);
	pe_exports_release(&exports);
	pe_image_free(image);
	return rc;
}

/* verify.file_alignment: the DLLs' FileAlignment when they all have the
 * same, else 0; with generator.file_alignment, any other is invalid. */
static int check_alignment(const struct pe_context *ctx, struct pe_variant *var,
			   const struct dll_facts *facts, cJSON *verify)
{
	uint32_t align = facts[0].file_alignment;

	for (int i = 0; i < ctx->base.dlls; i++) {
		if (facts[i].file_alignment != facts[0].file_alignment)
			align = 0;
		if (ctx->knobs.file_alignment &&
		    facts[i].file_alignment != (uint32_t)ctx->knobs.file_alignment)
			family_variant_invalid(&var->base,
					       "lt%d.dll has file alignment %u, not the %d asked for.", i,
					       facts[i].file_alignment, ctx->knobs.file_alignment);
	}
	return cJSON_AddNumberToObject(verify, "file_alignment", align) ? 0 : LL_ENOMEM;
}

/* The probe report's array KEY into *RET, once OUT, the array its
 * verdicts go to, was made (NULL: LL_ENOMEM); LL_EFORMAT when the report
 * has none. */
static int probe_list(const cJSON *probe, const char *key, const cJSON *out, const cJSON **ret)
{
	*ret = cJSON_GetObjectItemCaseSensitive(probe, key);
	if (!out)
		return LL_ENOMEM;
	if (!cJSON_IsArray(*ret))
		return err_set(LL_EFORMAT, "The probe report has no %s.", key);
	return 0;
}

/* Our DLL's index from a module name "lt<i>.dll" (any case), or -1. */
static int our_dll(const struct pe_context *ctx, const char *name)
{
	int i, n = 0;
	if (!name || strncasecmp(name, "lt", 2) != 0 || sscanf(name + 2, "%d%n", &i, &n) != 1 ||
	    strcasecmp(name + 2 + n, ".dll") != 0 || i < 0 || i >= ctx->base.dlls)
		return -1;
	return i;
}

/* Module bases: probe versus files. Fills verify.modules and counts. */
static int check_modules(const struct pe_context *ctx, struct pe_variant *var, const cJSON *probe,
			 const struct dll_facts *facts, cJSON *verify)
{
	const cJSON *modules, *m;
	cJSON *out = cJSON_AddArrayToObject(verify, "modules");
	int relocated = 0, loaded = 0, rc;

	if ((rc = probe_list(probe, "modules", out, &modules)) < 0)
		return rc;
	cJSON_ArrayForEach(m, modules) {
		const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(m, "name"));
		uint64_t preferred = family_hex_value(m, "preferred");
		uint64_t actual = family_hex_value(m, "actual");
		bool is_loaded = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(m, "loaded"));
		int i = our_dll(ctx, name);
		cJSON *o = cJSON_CreateObject();

		if (!o || !cJSON_AddItemToArray(out, o))
			return cJSON_Delete(o), LL_ENOMEM;
		if (!cJSON_AddStringToObject(o, "name", name ? name : "?") ||
		    !cJSON_AddBoolToObject(o, "loaded", is_loaded) ||
		    (rc = family_add_hex(o, "preferred", preferred)) < 0 ||
		    (rc = family_add_hex(o, "actual", actual)) < 0 ||
		    !cJSON_AddBoolToObject(o, "relocated", is_loaded && preferred != actual))
			return LL_ENOMEM;
		if (i < 0)
			continue;
		if (!cJSON_AddNumberToObject(o, "relocations", (double)facts[i].relocations) ||
		    !cJSON_AddNumberToObject(o, "timestamp", facts[i].timestamp) ||
		    !cJSON_AddNumberToObject(o, "named_exports", (double)facts[i].named_exports))
			return LL_ENOMEM;
		if (!is_loaded) {
			family_variant_invalid(&var->base, "%s was not loaded.", name);
			continue;
		}
		loaded++;
		if (preferred != facts[i].image_base)
			family_variant_invalid(
				&var->base,
				"%s: the probe read base 0x%llx from its file, the toolkit 0x%llx.", name,
				(unsigned long long)preferred, (unsigned long long)facts[i].image_base);
		if (preferred != actual)
			relocated++;
	}
	if (!cJSON_AddNumberToObject(verify, "dll_count", ctx->base.dlls) ||
	    !cJSON_AddNumberToObject(verify, "dlls_loaded", loaded) ||
	    !cJSON_AddNumberToObject(verify, "dlls_relocated", relocated))
		return LL_ENOMEM;
	if (loaded != ctx->base.dlls)
		family_variant_invalid(&var->base, "Only %d of %d DLLs were loaded.", loaded, ctx->base.dlls);
	else if (strcmp(var->bases, "same") == 0 && relocated < ctx->base.dlls - 1)
		family_variant_invalid(&var->base,
				       "Bases 'same': %d of %d DLLs relocated, expected all but one.",
				       relocated, ctx->base.dlls);
	else if (strcmp(var->bases, "unique") == 0 && relocated != 0)
		family_variant_invalid(&var->base, "Bases 'unique': %d DLLs relocated, expected none.",
				       relocated);
	return 0;
}

/* Imports: how the file imports (name or ordinal), and how they resolved
 * at run time (IAT value versus GetProcAddress). */
static int check_imports(const struct pe_context *ctx, struct pe_variant *var, const cJSON *probe,
			 const struct dll_facts *facts, const struct pe_imports *file_imports, cJSON *verify)
{
	const cJSON *imports, *x;
	size_t ours = 0, by_ordinal = 0, by_name = 0, resolved_ok = 0, mismatched = 0, others = 0,
	       others_ok = 0, named_exports = 0;
	cJSON *o = cJSON_AddObjectToObject(verify, "imports");
	cJSON *bad = o ? cJSON_AddArrayToObject(o, "mismatches") : NULL;
	int rc;

	if ((rc = probe_list(probe, "imports", bad, &imports)) < 0)
		return rc;
	cJSON_ArrayForEach(x, imports) {
		const char *dll = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(x, "dll"));
		uint64_t iat = family_hex_value(x, "iat");
		uint64_t resolved = family_hex_value(x, "resolved");
		bool ok = resolved != 0 && iat == resolved;

		if (our_dll(ctx, dll) < 0) {
			others++;
			others_ok += ok;
			continue;
		}
		ours++;
		if (cJSON_GetObjectItemCaseSensitive(x, "ordinal"))
			by_ordinal++;
		else
			by_name++;
		if (ok)
			resolved_ok++;
		else if (mismatched++ < 10) {
			cJSON *copy = cJSON_Duplicate(x, true);
			if (!copy || !cJSON_AddItemToArray(bad, copy))
				return cJSON_Delete(copy), LL_ENOMEM;
		}
	}
	/* The file's own account: every descriptor of our DLLs, by ordinal or
	 * by name (PE spec, "Import Lookup Table": bit 63/31 set). */
	size_t file_by_ordinal = 0, file_by_name = 0;
	for (size_t m = 0; m < file_imports->module_count; m++) {
		if (our_dll(ctx, file_imports->modules[m].name) < 0)
			continue;
		for (size_t f = 0; f < file_imports->modules[m].function_count; f++) {
			if (file_imports->modules[m].functions[f].by_ordinal)
				file_by_ordinal++;
			else
				file_by_name++;
		}
	}
	for (int i = 0; i < ctx->base.dlls; i++)
		named_exports += facts[i].named_exports;
	if (!cJSON_AddNumberToObject(o, "total", (double)ours) ||
	    !cJSON_AddNumberToObject(o, "by_ordinal", (double)by_ordinal) ||
	    !cJSON_AddNumberToObject(o, "by_name", (double)by_name) ||
	    !cJSON_AddNumberToObject(o, "file_by_ordinal", (double)file_by_ordinal) ||
	    !cJSON_AddNumberToObject(o, "file_by_name", (double)file_by_name) ||
	    !cJSON_AddNumberToObject(o, "resolved_ok", (double)resolved_ok) ||
	    !cJSON_AddNumberToObject(o, "system_imports", (double)others) ||
	    !cJSON_AddNumberToObject(o, "system_resolved_ok", (double)others_ok) ||
	    !cJSON_AddNumberToObject(verify, "named_exports", (double)named_exports))
		return LL_ENOMEM;
	size_t expected = (size_t)ctx->base.dlls * (size_t)ctx->base.exports;
	if (ours != expected)
		family_variant_invalid(&var->base,
				       "The program imports %zu functions of the DLLs, expected %zu.", ours,
				       expected);
	else if (resolved_ok != ours)
		family_variant_invalid(&var->base, "%zu imports do not hold what GetProcAddress returns.",
				       ours - resolved_ok);
	else if (var->ordinal && (by_ordinal != ours || file_by_ordinal != ours))
		family_variant_invalid(&var->base, "Imports 'ordinal': %zu of %zu imports are by name.",
				       by_name, ours);
	else if (var->ordinal && named_exports != 0)
		family_variant_invalid(&var->base, "Imports 'ordinal': the DLLs still export %zu names.",
				       named_exports);
	else if (!var->ordinal && (by_name != ours || file_by_name != ours))
		family_variant_invalid(&var->base, "Imports 'name': %zu of %zu imports are by ordinal.",
				       by_ordinal, ours);
	return 0;
}

/* Binding: a bound import directory naming every module the program
 * imports from, each with the timestamp of the file the loader would
 * use, descriptors marked bound, and the file's IAT holding what the
 * loader resolved for modules at their preferred bases. */
static int check_binding(const struct pe_context *ctx, struct pe_variant *var, const cJSON *probe,
			 const struct pe_image *exe, const struct pe_imports *file_imports, cJSON *verify)
{
	struct pe_bound_imports bound = {0};
	cJSON *o = cJSON_AddObjectToObject(verify, "binding"), *mods;
	size_t ours_bound = 0, stale = 0, iat_checked = 0, iat_wrong = 0;
	bool all_at_preferred = true;
	int rc;

	if (!o || !(mods = cJSON_AddArrayToObject(o, "modules")))
		return LL_ENOMEM;
	if ((rc = pe_bound_imports_read(exe, &bound)) < 0)
		return rc;
	if (!var->bind && bound.count == 0) {
		/* Nothing bound, as the knobs say. */
		if (!cJSON_AddBoolToObject(o, "present", false))
			rc = LL_ENOMEM;
		goto out;
	}
	for (size_t b = 0; b < bound.count; b++) {
		uint32_t have = 0;
		bool found =
			family_loader_timestamp(&ctx->runner, var->base.dir, bound.modules[b].name, &have);
		bool match = found && have == bound.modules[b].timestamp;
		cJSON *m = cJSON_CreateObject();

		if (!m || !cJSON_AddItemToArray(mods, m)) {
			cJSON_Delete(m);
			rc = LL_ENOMEM;
			goto out;
		}
		if (!cJSON_AddStringToObject(m, "name", bound.modules[b].name) ||
		    !cJSON_AddNumberToObject(m, "timestamp", bound.modules[b].timestamp) ||
		    !cJSON_AddBoolToObject(m, "file_found", found) ||
		    !cJSON_AddNumberToObject(m, "file_timestamp", have) ||
		    !cJSON_AddBoolToObject(m, "timestamp_matches", match)) {
			rc = LL_ENOMEM;
			goto out;
		}
		if (our_dll(ctx, bound.modules[b].name) >= 0) {
			ours_bound++;
			if (!match)
				stale++;
		}
	}
	/* The file's IAT versus what the loader resolved (probe), for our
	 * DLLs at their preferred bases. */
	const cJSON *modules = cJSON_GetObjectItemCaseSensitive(probe, "modules"), *pm;
	cJSON_ArrayForEach(pm, modules) {
		const char *name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(pm, "name"));
		if (our_dll(ctx, name) >= 0 &&
		    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(pm, "relocated")))
			all_at_preferred = false;
	}
	const cJSON *imports = cJSON_GetObjectItemCaseSensitive(probe, "imports"), *x;
	size_t index = 0;
	for (size_t m = 0; m < file_imports->module_count; m++) {
		const struct pe_import_module *mod = &file_imports->modules[m];
		for (size_t f = 0; f < mod->function_count; f++, index++) {
			x = cJSON_GetArrayItem(imports, (int)index);
			if (our_dll(ctx, mod->name) < 0 || !x)
				continue;
			iat_checked++;
			if (mod->timestamp != 0xFFFFFFFFu ||
			    mod->functions[f].iat_value != family_hex_value(x, "resolved"))
				iat_wrong++;
		}
	}
	bool valid = ours_bound == (size_t)ctx->base.dlls && stale == 0 && iat_wrong == 0 && all_at_preferred;
	if (!cJSON_AddBoolToObject(o, "present", bound.count > 0) ||
	    !cJSON_AddNumberToObject(o, "dlls_bound", (double)ours_bound) ||
	    !cJSON_AddNumberToObject(o, "stale", (double)stale) ||
	    !cJSON_AddNumberToObject(o, "iat_checked", (double)iat_checked) ||
	    !cJSON_AddNumberToObject(o, "iat_wrong", (double)iat_wrong) ||
	    !cJSON_AddNumberToObject(o, "modules_bound_by_binder", (double)var->bind_modules_bound) ||
	    !cJSON_AddNumberToObject(o, "modules_skipped_by_binder", (double)var->bind_modules_skipped) ||
	    !cJSON_AddBoolToObject(o, "valid", valid)) {
		rc = LL_ENOMEM;
		goto out;
	}
	/* Whether the loader used it: Wine never does; Windows does exactly
	 * when the binding is valid for the modules as loaded. */
	if (ctx->runner.wine) {
		if (!cJSON_AddBoolToObject(o, "loader_used_binding", false) ||
		    !cJSON_AddStringToObject(o, "note",
					     "Wine ignores bound imports and resolves every import."))
			rc = LL_ENOMEM;
	} else if (!cJSON_AddBoolToObject(o, "loader_used_binding", valid)) {
		rc = LL_ENOMEM;
	}
	if (rc < 0)
		goto out;
	if (var->bind) {
		if (bound.count == 0)
			family_variant_invalid(&var->base,
					       "Bind: the program has no bound import directory.");
		else if (ours_bound != (size_t)ctx->base.dlls)
			family_variant_invalid(&var->base,
					       "Bind: %zu of %d DLLs are in the bound import directory.",
					       ours_bound, ctx->base.dlls);
		else if (stale)
			family_variant_invalid(&var->base,
					       "Bind: %zu bound DLLs' timestamps differ from their files.",
					       stale);
		else if (iat_wrong)
			family_variant_invalid(
				&var->base,
				"Bind: %zu IAT entries in the file differ from what the loader resolved.",
				iat_wrong);
		else if (!all_at_preferred)
			family_variant_invalid(&var->base,
					       "Bind: DLLs were relocated, so the binding cannot be used.");
	} else if (bound.count > 0) {
		family_variant_invalid(&var->base,
				       "Not bound, yet the program has a bound import directory.");
	}
out:
	pe_bound_imports_release(&bound);
	return rc;
}

/* Trace order: each DLL's traced functions first in .text, contiguous and
 * in trace order. */
static int check_order(const struct pe_context *ctx, struct pe_variant *var, const struct dll_facts *facts,
		       cJSON *verify)
{
	cJSON *o, *per;
	int good = 0;

	if (!var->trace_order)
		return 0;
	o = cJSON_AddObjectToObject(verify, "order");
	if (!o || !(per = cJSON_AddArrayToObject(o, "dlls")))
		return LL_ENOMEM;
	for (int i = 0; i < ctx->base.dlls; i++) {
		size_t n = ctx->base.trace ? ctx->base.trace_count[i] : 0;
		const struct dll_facts *f = &facts[i];
		bool at_start = false, in_order = n > 0, contiguous = n > 0;
		uint32_t first = 0, last = 0;
		cJSON *d = cJSON_CreateObject(), *names;
		char name[64];

		if (!d || !cJSON_AddItemToArray(per, d))
			return cJSON_Delete(d), LL_ENOMEM;
		snprintf(name, sizeof(name), "lt%d.dll", i);
		if (!cJSON_AddStringToObject(d, "dll", name) ||
		    !(names = cJSON_AddArrayToObject(d, "traced")))
			return LL_ENOMEM;
		for (size_t r = 0; r < n; r++) {
			int j = ctx->base.trace[i][r];
			snprintf(name, sizeof(name), "lt%d_f%d", i, j);
			cJSON *s = cJSON_CreateString(name);
			if (!s || !cJSON_AddItemToArray(names, s))
				return cJSON_Delete(s), LL_ENOMEM;
			if (r == 0)
				first = f->function_rvas[j];
			else if (f->function_rvas[j] <= last)
				in_order = false;
			last = f->function_rvas[j];
		}
		if (n > 0) {
			at_start = first == f->text_rva;
			/* Contiguous: no untraced function lies between the first
			 * and the last traced one. */
			for (int j = 0; j < ctx->base.exports; j++) {
				bool traced = false;
				for (size_t r = 0; r < n; r++)
					traced |= ctx->base.trace[i][r] == j;
				if (!traced && f->function_rvas[j] >= first && f->function_rvas[j] <= last)
					contiguous = false;
			}
		}
		if (!cJSON_AddBoolToObject(d, "at_start_of_text", at_start) ||
		    !cJSON_AddBoolToObject(d, "in_trace_order", in_order) ||
		    !cJSON_AddBoolToObject(d, "contiguous", contiguous))
			return LL_ENOMEM;
		if (at_start && in_order && contiguous)
			good++;
	}
	if (!cJSON_AddNumberToObject(o, "dlls_in_trace_order", good))
		return LL_ENOMEM;
	if (good != ctx->base.dlls)
		family_variant_invalid(&var->base,
				       "Order 'trace': %d of %d DLLs have their traced functions first, "
				       "contiguous and in trace order.",
				       good, ctx->base.dlls);
	return 0;
}

static int verify_variant(struct pe_context *ctx, struct pe_variant *var)
{
	char exe_path[PLAT_MAX_PATH + 1], report[PLAT_MAX_PATH + 1], log_path[PLAT_MAX_PATH + 1];
	const char *args[] = {"probe", "probe.json", NULL};
	struct dll_facts *facts = NULL;
	struct pe_image *exe = NULL;
	struct pe_imports imports = {0};
	cJSON *verify = NULL, *probe = NULL;
	char *text = NULL;
	size_t len = 0;
	int rc, code = 0, read_count = 0, attempts = 0;

	var->base.valid = true;
	if ((rc = family_files_json(&ctx->base, &pe_names, var->base.dir, false, &var->base.files)) < 0)
		goto out;
	verify = cJSON_CreateObject();
	facts = calloc((size_t)ctx->base.dlls, sizeof(*facts));
	if (!verify || !facts) {
		rc = LL_ENOMEM;
		goto out;
	}
	for (; read_count < ctx->base.dlls; read_count++)
		if ((rc = read_dll(ctx, var->base.dir, read_count, &facts[read_count])) < 0)
			goto out;
	if ((rc = family_path(exe_path, var->base.dir, "main.exe")) < 0 ||
	    (rc = pe_image_open(exe_path, &exe)) < 0 || (rc = pe_imports_read(exe, false, &imports)) < 0 ||
	    (rc = family_path(report, var->base.dir, "probe.json")) < 0 ||
	    (rc = family_path(log_path, var->base.dir, "probe.log")) < 0)
		goto out;
	/* Under Wine on a busy machine a start fails now and then: a failed
	 * probe is run once more before the variant is called invalid, and
	 * the attempts are recorded. */
	do {
		remove(report);
		if ((rc = runner_run(&ctx->runner, exe_path, args, var->base.dir, log_path, PE_RUN_TIMEOUT_MS,
				     &code, NULL)) < 0)
			goto out;
		attempts++;
	} while ((code != 0 || !plat_file_exists(report)) && attempts < 2);
	if (!cJSON_AddNumberToObject(verify, "probe_attempts", attempts)) {
		rc = LL_ENOMEM;
		goto out;
	}
	if (!cJSON_AddNumberToObject(verify, "probe_exit_code", code)) {
		rc = LL_ENOMEM;
		goto out;
	}
	if (code != 0 || family_read_file(report, PE_MAX_REPORT, &text, &len) < 0 ||
	    json_parse_object(text, len, 8, &probe) < 0) {
		family_variant_invalid(&var->base, "The probe run failed (exit code %d, report %s).", code,
				       text ? "unreadable" : "missing");
		rc = pe_loader_variant(ctx, var, NULL);
		goto done;
	}
	if ((rc = check_modules(ctx, var, probe, facts, verify)) < 0 ||
	    (rc = check_imports(ctx, var, probe, facts, &imports, verify)) < 0 ||
	    (rc = check_binding(ctx, var, probe, exe, &imports, verify)) < 0 ||
	    (rc = check_order(ctx, var, facts, verify)) < 0) {
		if (rc == LL_EFORMAT) {
			family_variant_invalid(&var->base, "The probe report is malformed: %s",
					       err_message(rc));
			rc = 0;
			goto done;
		}
		goto out;
	}
	size_t relocations = 0;
	for (int i = 0; i < ctx->base.dlls; i++)
		relocations += facts[i].relocations;
	if (!cJSON_AddNumberToObject(verify, "relocations", (double)relocations) ||
	    !cJSON_AddNumberToObject(verify, "relocations_generated",
				     (double)ctx->base.dlls * ctx->base.exports * ctx->base.globals)) {
		rc = LL_ENOMEM;
		goto out;
	}
	if ((rc = check_alignment(ctx, var, facts, verify)) < 0 ||
	    (rc = pe_loader_variant(ctx, var, probe)) < 0)
		goto out;
	if (relocations < (size_t)ctx->base.dlls * ctx->base.exports * ctx->base.globals)
		family_variant_invalid(&var->base,
				       "The DLLs have %zu base relocations, fewer than the %d generated.",
				       relocations, ctx->base.dlls * ctx->base.exports * ctx->base.globals);
done:
	var->base.verify = verify;
	verify = NULL;
out:
	cJSON_Delete(verify);
	cJSON_Delete(probe);
	free(text);
	pe_imports_release(&imports);
	pe_image_free(exe);
	dll_facts_release(facts, read_count);
	return rc;
}

int pe_verify(struct pe_context *ctx)
{
	int rc;

	for (size_t v = 0; v < ctx->variant_count; v++) {
		if ((rc = family_progress(ctx->base.task, "verify", (int)(100 * v / ctx->variant_count))) <
			    0 ||
		    (rc = verify_variant(ctx, &ctx->variants[v])) < 0)
			return rc;
	}
	return family_progress(ctx->base.task, "verify", 100);
}
