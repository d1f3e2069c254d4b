/*
 * job_spec_program.c - the `program` family's job section: a manifest of
 * the user's files (relative path -> blob hash) and how to run it.
 * job_spec.h documents the rules; job_spec.c calls in here.
 */
#include "loadlab/job_spec.h"

#include "loadlab/err.h"
#include "loadlab/json.h"
#include "loadlab/case_fold.h"
#include "loadlab/names.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The program family's presets (API.md, "Names added in wave 2"). */
static const struct {
	const char *name;
	const char *bases; /* "as-built" | "unique" */
	bool bind;
	const char *aslr; /* "as-built" | "off" */
} program_presets[] = {
	{"as-built", "as-built", false, "as-built"},
	{"rebase", "unique", false, "off"},
	{"bind", "unique", true, "off"},
	{"aslr-off", "as-built", false, "off"},
};

static char ascii_lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool ends_with_ci(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	if (len < n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (ascii_lower(s[len - n + i]) != suffix[i])
			return false;
	return true;
}

/* True when the component S[0..LEN) names a Windows device: CON, PRN,
 * AUX, NUL, COM0-9, LPT0-9 (and COM/LPT with a superscript digit), CONIN$,
 * CONOUT$, CLOCK$, in any case, with or without an extension, with spaces
 * before the extension (Win32 path normalization strips them). */
static bool is_device_name(const char *s, size_t len)
{
	static const char *const plain[] = {"con", "prn", "aux", "nul", "conin$", "conout$", "clock$"};
	char base[16];
	size_t n = 0;

	while (n < len && s[n] != '.')
		n++;
	while (n > 0 && s[n - 1] == ' ')
		n--;
	if (n == 0 || n >= sizeof(base))
		return false;
	for (size_t i = 0; i < n; i++)
		base[i] = ascii_lower(s[i]);
	base[n] = '\0';
	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		if (strcmp(base, plain[i]) == 0)
			return true;
	if (strncmp(base, "com", 3) != 0 && strncmp(base, "lpt", 3) != 0)
		return false;
	if (n == 4 && base[3] >= '0' && base[3] <= '9')
		return true;
	/* U+00B9, U+00B2, U+00B3 in UTF-8. */
	return n == 5 && (unsigned char)base[3] == 0xc2 &&
	       ((unsigned char)base[4] == 0xb9 || (unsigned char)base[4] == 0xb2 ||
		(unsigned char)base[4] == 0xb3);
}

int job_spec_program_path_check(const char *path, const char **ret_rule)
{
	size_t len = strlen(path), start = 0;
	const char *rule = NULL;

	if (len == 0)
		rule = "it is empty";
	else if (len > JOB_SPEC_MAX_PROGRAM_PATH)
		rule = "it is longer than 260 bytes";
	else if (path[0] == '/' || path[0] == '\\')
		rule = "it must be relative (no leading '/' or '\\')";
	else if (strchr(path, '\\'))
		rule = "it contains a backslash; separate folders with '/'";
	else if (strchr(path, ':'))
		rule = "it contains ':' (a drive letter or an alternate data stream)";
	for (size_t i = 0; !rule && i < len; i++) {
		unsigned char c = (unsigned char)path[i];
		if (c < 0x20 || c == 0x7f)
			rule = "it contains a control character";
		else if (strchr("<>\"|?*", c))
			rule = "it contains a character Windows forbids in names (< > \" | ? *)";
	}
	while (!rule && start <= len) {
		const char *part = path + start;
		size_t n = strcspn(part, "/");
		if (n == 0)
			rule = "it has an empty component ('//' or a trailing '/')";
		else if ((n == 1 && part[0] == '.') || (n == 2 && part[0] == '.' && part[1] == '.'))
			rule = "it has a '.' or '..' component";
		else if (part[n - 1] == '.' || part[n - 1] == ' ')
			rule = "a component ends with a dot or a space";
		else if (is_device_name(part, n))
			rule = "a component is a Windows device name (CON, PRN, AUX, NUL, COM1-9, LPT1-9)";
		start += n + 1;
	}
	if (!rule)
		return 0;
	if (ret_rule)
		*ret_rule = rule;
	return err_set(LL_EINVAL, "Program file '%.300s' is refused: %s.", path, rule);
}

bool job_spec_blob_ref_valid(const char *ref, char ret_hex[65])
{
	if (strncmp(ref, "sha256:", 7) != 0 || strlen(ref + 7) != 64)
		return false;
	for (const char *p = ref + 7; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return false;
	if (ret_hex)
		memcpy(ret_hex, ref + 7, 65);
	return true;
}

/* Paths case-folded (case_fold.h), for case-collision checks. */
static int compare_folded(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int find_folded(char **sorted, size_t count, const char *key)
{
	return bsearch(&key, sorted, count, sizeof(*sorted), compare_folded) != NULL;
}

/* Refuses two paths that differ only in case (Unicode simple folding, as
 * Windows compares names: "Ä.dll" and "ä.dll"), and a path that is
 * also a folder of another ("bin" and "bin/app.exe"). */
static int check_collisions(const cJSON *files, int count)
{
	char **folded = calloc((size_t)count, sizeof(*folded));
	const cJSON *item;
	int n = 0, rc = 0;

	if (!folded)
		return LL_ENOMEM;
	cJSON_ArrayForEach(item, files) {
		size_t len = strlen(item->string);
		if (!(folded[n] = malloc(len + 1))) {
			rc = LL_ENOMEM;
			goto out;
		}
		case_fold_utf8(item->string, folded[n]);
		n++;
	}
	qsort(folded, (size_t)n, sizeof(*folded), compare_folded);
	for (int i = 1; i < n && rc == 0; i++)
		if (strcmp(folded[i - 1], folded[i]) == 0)
			rc = err_set(LL_EINVAL,
				     "Program file '%.300s' is refused: another path differs from it only in "
				     "case.",
				     folded[i]);
	for (int i = 0; i < n && rc == 0; i++) {
		char prefix[JOB_SPEC_MAX_PROGRAM_PATH + 1];
		for (const char *slash = folded[i]; rc == 0 && (slash = strchr(slash, '/')); slash++) {
			snprintf(prefix, sizeof(prefix), "%.*s", (int)(slash - folded[i]), folded[i]);
			if (find_folded(folded, (size_t)n, prefix))
				rc = err_set(
					LL_EINVAL,
					"Program file '%.260s' is refused: another path uses it as a folder.",
					prefix);
		}
	}
out:
	for (int i = 0; i < n; i++)
		free(folded[i]);
	free(folded);
	return rc;
}

static int normalize_files(const cJSON *files, cJSON *out)
{
	const cJSON *item;
	int count, rc;

	if (!cJSON_IsObject(files))
		return err_set(LL_EINVAL, "Field 'program.files' is required and must be an object "
					  "of relative paths to \"sha256:HEX\".");
	count = cJSON_GetArraySize(files);
	if (count < 1 || count > JOB_SPEC_MAX_PROGRAM_FILES)
		return err_set(LL_ERANGE, "Field 'program.files' must list 1 to %d files.",
			       JOB_SPEC_MAX_PROGRAM_FILES);
	cJSON_ArrayForEach(item, files) {
		if ((rc = job_spec_program_path_check(item->string, NULL)) < 0)
			return rc;
		if (!cJSON_IsString(item) || !job_spec_blob_ref_valid(item->valuestring, NULL))
			return err_set(LL_EINVAL,
				       "Program file '%.300s' is refused: its blob must be \"sha256:\" "
				       "and 64 lowercase hex digits.",
				       item->string);
	}
	if ((rc = check_collisions(files, count)) < 0)
		return rc;
	cJSON_ArrayForEach(item, files)
		if (!cJSON_AddStringToObject(out, item->string, item->valuestring))
			return LL_ENOMEM;
	return 0;
}

static int normalize_args(const cJSON *args, cJSON *out)
{
	const cJSON *item;
	size_t total = 0;

	if (!args)
		return 0;
	if (!cJSON_IsArray(args) || cJSON_GetArraySize(args) > JOB_SPEC_MAX_PROGRAM_ARGS)
		return err_set(LL_EINVAL, "Field 'program.args' must be an array of at most %d strings.",
			       JOB_SPEC_MAX_PROGRAM_ARGS);
	cJSON_ArrayForEach(item, args) {
		if (!cJSON_IsString(item))
			return err_set(LL_EINVAL, "Field 'program.args' must hold strings only.");
		for (const char *p = item->valuestring; *p; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				return err_set(LL_EINVAL,
					       "An argument in 'program.args' has a control character.");
		total += strlen(item->valuestring) + 1;
		if (total > JOB_SPEC_MAX_PROGRAM_ARGS_BYTES)
			return err_set(LL_ERANGE, "Field 'program.args' is longer than %d bytes in all.",
				       JOB_SPEC_MAX_PROGRAM_ARGS_BYTES);
		if (!cJSON_AddItemToArray(out, cJSON_CreateString(item->valuestring)))
			return LL_ENOMEM;
	}
	return 0;
}

/* One build's files and exe (PROGRAM's own, or one of its "builds"),
 * normalized into OUT; WHERE names the section in messages. An ELF
 * program's (ELF) exe needs no .exe. */
static int normalize_build(const cJSON *section, const char *where, bool elf, cJSON *out)
{
	const char *exe = NULL;
	cJSON *files;
	int rc;

	if ((rc = json_get_string(section, "exe", JOB_SPEC_MAX_PROGRAM_PATH, true, NULL, &exe)) < 0)
		return rc;
	if (!(files = cJSON_AddObjectToObject(out, "files")))
		return LL_ENOMEM;
	if ((rc = normalize_files(cJSON_GetObjectItemCaseSensitive(section, "files"), files)) < 0)
		return rc;
	if (!cJSON_GetObjectItemCaseSensitive(files, exe))
		return err_set(LL_EINVAL, "Field '%s.exe' ('%.300s') must be one of '%s.files'.", where, exe,
			       where);
	if (!elf && !ends_with_ci(exe, strlen(exe), ".exe"))
		return err_set(LL_EINVAL,
			       "Field '%s.exe' ('%.300s') must end in .exe (a PE program); a Linux "
			       "program needs \"format\": \"elf\".",
			       where, exe);
	return cJSON_AddStringToObject(out, "exe", exe) ? 0 : LL_ENOMEM;
}

/* True when LABEL is a build label: ^[a-z][a-z0-9_-]{0,31}$. */
static bool label_valid(const char *label)
{
	size_t n = strlen(label);

	if (n < 1 || n > JOB_SPEC_MAX_BUILD_LABEL || label[0] < 'a' || label[0] > 'z')
		return false;
	for (size_t i = 1; i < n; i++)
		if (!((label[i] >= 'a' && label[i] <= 'z') || (label[i] >= '0' && label[i] <= '9') ||
		      label[i] == '_' || label[i] == '-'))
			return false;
	return true;
}

/* "program.builds": JOB_SPEC_MIN_PROGRAM_BUILDS..JOB_SPEC_MAX_PROGRAM_BUILDS
 * builds {"label", "files", "exe"}, labels distinct, into OUT's "builds". */
static int normalize_builds(const cJSON *builds, bool elf, cJSON *out)
{
	static const char *const keys[] = {"label", "files", "exe", NULL};
	const char *labels[JOB_SPEC_MAX_PROGRAM_BUILDS];
	cJSON *list = cJSON_AddArrayToObject(out, "builds");
	const cJSON *item;
	int n = 0, rc;

	if (!list)
		return LL_ENOMEM;
	if (!cJSON_IsArray(builds) || cJSON_GetArraySize(builds) < JOB_SPEC_MIN_PROGRAM_BUILDS ||
	    cJSON_GetArraySize(builds) > JOB_SPEC_MAX_PROGRAM_BUILDS)
		return err_set(LL_ERANGE,
			       "Field 'program.builds' must be an array of %d to %d builds {\"label\", "
			       "\"files\", \"exe\"}.",
			       JOB_SPEC_MIN_PROGRAM_BUILDS, JOB_SPEC_MAX_PROGRAM_BUILDS);
	cJSON_ArrayForEach(item, builds) {
		const char *label = NULL;
		char where[64];
		cJSON *b;
		if (!cJSON_IsObject(item))
			return err_set(LL_EINVAL, "Each of 'program.builds' must be an object.");
		snprintf(where, sizeof(where), "program.builds[%d]", n);
		if ((rc = json_check_keys(item, keys, where)) < 0 ||
		    (rc = json_get_string(item, "label", 64, true, NULL, &label)) < 0)
			return rc;
		if (!label_valid(label))
			return err_set(LL_EINVAL,
				       "Field '%s.label' ('%.64s') must be 1 to %d of a-z, 0-9, '_' and '-', "
				       "starting with a letter.",
				       where, label, JOB_SPEC_MAX_BUILD_LABEL);
		for (int k = 0; k < n; k++)
			if (strcmp(labels[k], label) == 0)
				return err_set(LL_EINVAL, "Two of 'program.builds' are labelled '%s'.",
					       label);
		labels[n++] = label;
		if (!(b = json_array_add_object(list)) || !cJSON_AddStringToObject(b, "label", label))
			return LL_ENOMEM;
		if ((rc = normalize_build(item, where, elf, b)) < 0)
			return rc;
	}
	return 0;
}

const cJSON *job_spec_program_build(const cJSON *program, int index, const char **ret_label)
{
	const cJSON *builds = cJSON_GetObjectItemCaseSensitive(program, "builds");

	if (!builds) {
		if (index != 0 || !cJSON_IsObject(program))
			return NULL;
		if (ret_label)
			*ret_label = NULL;
		return program;
	}
	const cJSON *b = cJSON_GetArrayItem(builds, index);
	if (!cJSON_IsObject(b))
		return NULL;
	if (ret_label)
		*ret_label = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(b, "label"));
	return b;
}

int job_spec_normalize_program(const cJSON *program, cJSON *out)
{
	static const char *const keys[] = {"files", "exe",       "builds", "args",
					   "until", "timeout_s", "format", NULL};
	const char *until = NULL, *format = NULL;
	const cJSON *builds;
	long long timeout;
	cJSON *args;
	bool elf;
	int rc;

	if (!cJSON_IsObject(program))
		return err_set(LL_EINVAL, "Field 'program' is required and must be an object.");
	builds = cJSON_GetObjectItemCaseSensitive(program, "builds");
	if ((rc = json_check_keys(program, keys, "program")) < 0 ||
	    (rc = json_get_string(program, "format", 8, false, "pe", &format)) < 0 ||
	    (rc = json_get_string(program, "until", 16, false, "exit", &until)) < 0 ||
	    (rc = json_get_int(program, "timeout_s", 1, JOB_SPEC_MAX_PROGRAM_TIMEOUT, false, 60, &timeout)) <
		    0)
		return rc;
	if (strcmp(format, "pe") != 0 && strcmp(format, "elf") != 0)
		return err_set(LL_EINVAL, "Field 'program.format' must be \"pe\" (a Windows build) or "
					  "\"elf\" (a Linux build).");
	elf = strcmp(format, "elf") == 0;
	if (strcmp(until, "exit") != 0 && strcmp(until, elf ? "idle" : "input-idle") != 0)
		return err_set(LL_EINVAL, "Field 'program.until' must be \"exit\" or \"%s\" for %s program.",
			       elf ? "idle" : "input-idle", elf ? "an ELF" : "a PE");
	if (builds && (cJSON_GetObjectItemCaseSensitive(program, "files") ||
		       cJSON_GetObjectItemCaseSensitive(program, "exe")))
		return err_set(LL_EINVAL, "Field 'program' has either 'files' and 'exe' (one build) or "
					  "'builds' (several), not both.");
	if ((rc = builds ? normalize_builds(builds, elf, out)
			 : normalize_build(program, "program", elf, out)) < 0)
		return rc;
	if (!(args = cJSON_AddArrayToObject(out, "args")))
		return LL_ENOMEM;
	if ((rc = normalize_args(cJSON_GetObjectItemCaseSensitive(program, "args"), args)) < 0)
		return rc;
	if (!cJSON_AddStringToObject(out, "until", until) ||
	    !cJSON_AddNumberToObject(out, "timeout_s", (double)timeout) ||
	    (elf && !cJSON_AddStringToObject(out, "format", "elf")))
		return LL_ENOMEM;
	return 0;
}

/* A normalized variant ITEM (the agent re-checks a leased spec; KEYS its
 * members) appended to OUT by PRESET, the normalizer of its name: its
 * knobs must be its preset's. */
static int renormalize(const cJSON *item, const char *const *keys, int (*preset)(const cJSON *, cJSON *),
		       cJSON *out)
{
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(item, "name");
	int rc;

	if ((rc = json_check_keys(item, keys, "variant")) < 0)
		return rc;
	if (!cJSON_IsString(n))
		return err_set(LL_EINVAL, "A program variant needs a preset name.");
	if ((rc = preset(n, out)) < 0)
		return rc;
	if (!cJSON_Compare(cJSON_GetArrayItem(out, cJSON_GetArraySize(out) - 1), item, true))
		return err_set(LL_EINVAL, "Program variant '%.64s' must keep its preset's knobs.",
			       n->valuestring);
	return 0;
}

/* Appends to OUT the variant the string ITEM names, one of the COUNT
 * presets whose names are at FIRST, STRIDE bytes apart: {"name": ITEM}
 * and the knobs KNOBS adds of preset I (false: out of memory). LL_EINVAL
 * naming WHAT ("program variant") and the nearest preset for a name of
 * none, LL_ENOMEM; OUT untouched then. */
static int preset_variant(const cJSON *item, const char *what, const void *first, size_t count, size_t stride,
			  bool (*knobs)(cJSON *v, size_t i), cJSON *out)
{
	const char *name = cJSON_IsString(item) ? item->valuestring : NULL;
	size_t i;
	cJSON *v;

	if (!name)
		return err_set(LL_EINVAL, "Each program variant must be a preset name.");
	if ((i = names_find(name, first, count, stride)) == count)
		return names_unknown(what, name, first, count, stride);
	if (!(v = cJSON_CreateObject()) || !cJSON_AddStringToObject(v, "name", name) || !knobs(v, i) ||
	    !cJSON_AddItemToArray(out, v)) {
		cJSON_Delete(v);
		return LL_ENOMEM;
	}
	return 0;
}

bool job_spec_program_is_elf(const cJSON *program)
{
	const cJSON *format = cJSON_GetObjectItemCaseSensitive(program, "format");

	return cJSON_IsString(format) && strcmp(format->valuestring, "elf") == 0;
}

/* An ELF program's presets (docs/program-elf.md): what changes when it
 * starts, never its files. */
static const struct {
	const char *name;
	bool bind_now; /* LD_BIND_NOW=1 */
	bool pagein;   /* its files read once, sequentially, as part of the start */
} program_elf_presets[] = {
	{"as-built", false, false},
	{"bind-now", true, false},
	{"pagein", false, true},
};

static bool elf_program_knobs(cJSON *v, size_t i)
{
	return cJSON_AddBoolToObject(v, "bind_now", program_elf_presets[i].bind_now) &&
	       cJSON_AddBoolToObject(v, "pagein", program_elf_presets[i].pagein);
}

int job_spec_program_elf_variant(const cJSON *item, cJSON *out)
{
	static const char *const keys[] = {"name", "bind_now", "pagein", NULL};

	if (cJSON_IsObject(item))
		return renormalize(item, keys, job_spec_program_elf_variant, out);
	return preset_variant(item, "ELF program variant", &program_elf_presets[0].name,
			      sizeof(program_elf_presets) / sizeof(program_elf_presets[0]),
			      sizeof(program_elf_presets[0]), elf_program_knobs, out);
}

static bool pe_program_knobs(cJSON *v, size_t i)
{
	return cJSON_AddStringToObject(v, "bases", program_presets[i].bases) &&
	       cJSON_AddBoolToObject(v, "bind", program_presets[i].bind) &&
	       cJSON_AddStringToObject(v, "aslr", program_presets[i].aslr);
}

int job_spec_program_variant(const cJSON *item, cJSON *out)
{
	static const char *const keys[] = {"name", "bases", "bind", "aslr", NULL};

	if (cJSON_IsObject(item))
		return renormalize(item, keys, job_spec_program_variant, out);
	return preset_variant(item, "program variant", &program_presets[0].name,
			      sizeof(program_presets) / sizeof(program_presets[0]),
			      sizeof(program_presets[0]), pe_program_knobs, out);
}
