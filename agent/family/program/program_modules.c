/*
 * program_modules.c - the program's own DLLs against Wine's builtins of
 * the same names (docs/program-family.md, "Wine's builtin DLLs"): the
 * WINEDLLOVERRIDES entries that make Wine's loader prefer the program's
 * files, and the judgement of where each loaded module came from.
 */
#include "program_int.h"

#include <stdio.h>
#include <string.h>

#include "loadlab/err.h"
#include "loadlab/json.h"

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool same_text(const char *a, const char *b)
{
	for (; *a && *b; a++, b++)
		if (lower(*a) != lower(*b))
			return false;
	return *a == *b;
}

/* The file name of a '/'- or '\\'-separated PATH (borrowed from it). */
static const char *file_name(const char *path)
{
	const char *name = path + strlen(path);

	while (name > path && name[-1] != '/' && name[-1] != '\\')
		name--;
	return name;
}

/* A character Wine's WINEDLLOVERRIDES parser takes inside a name: not its
 * separators (';' between entries, ',' between names, '=' before the
 * order), not '*' (its wildcard), '/' or '\\' (a path), space or a
 * control; and ASCII only, since the variable passes through the locale's
 * conversion. */
static bool override_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       strchr("._-+~$#@!&()[]{}'^%", c) != NULL;
}

int program_dll_override_name(const char *path, char *out)
{
	const char *name = file_name(path);
	size_t n = strlen(name);

	if (n >= 4 && same_text(name + n - 4, ".dll"))
		n -= 4;
	if (n == 0 || n > JOB_SPEC_MAX_PROGRAM_PATH)
		return err_set(LL_EINVAL, "%s has no DLL name Wine could be told.", path);
	for (size_t i = 0; i < n; i++)
		if (!override_char(name[i]))
			return err_set(LL_EINVAL,
				       "%s: its name has a character WINEDLLOVERRIDES cannot carry (0x%02x).",
				       path, (unsigned char)name[i]);
	memcpy(out, name, n);
	out[n] = '\0';
	return 0;
}

/* Adds {"file": PATH, "reason": REASON} to LEFT_OUT. */
static int left_out_add(cJSON *left_out, const char *path, const char *reason)
{
	cJSON *o = json_array_add_object(left_out);

	if (!o || !cJSON_AddStringToObject(o, "file", path) || !cJSON_AddStringToObject(o, "reason", reason))
		return LL_ENOMEM;
	return 0;
}

int program_dll_overrides(const struct program_file *files, size_t count, size_t cap, char *out,
			  cJSON **ret_record)
{
	cJSON *record = cJSON_CreateObject(), *names, *left_out;
	size_t len = 0;
	int rc = LL_ENOMEM;

	if (!record || !(names = cJSON_AddArrayToObject(record, "names")) ||
	    !(left_out = cJSON_AddArrayToObject(record, "left_out")) || cap == 0)
		goto out;
	out[0] = '\0';
	for (size_t i = 0; i < count; i++) {
		char name[JOB_SPEC_MAX_PROGRAM_PATH + 1];
		const cJSON *seen;
		bool again = false;
		if (!files[i].dll)
			continue;
		if (program_dll_override_name(files[i].path, name) < 0) {
			rc = left_out_add(left_out, files[i].path, err_message(LL_EINVAL));
			err_clear();
			if (rc < 0)
				goto out;
			continue;
		}
		/* Wine's load order knows a name once, in any case. */
		cJSON_ArrayForEach(seen, names)
			again |= same_text(seen->valuestring, name);
		if (again)
			continue;
		/* ";NAME=n,b", no ';' before the first. */
		size_t need = strlen(name) + 4 + (len > 0);
		if (len + need + 1 > cap) {
			if ((rc = left_out_add(left_out, files[i].path,
					       "The overrides would exceed their limit "
					       "(RUNNER_MAX_DLL_OVERRIDES).")) < 0)
				goto out;
			continue;
		}
		len += (size_t)snprintf(out + len, cap - len, "%s%s=n,b", len ? ";" : "", name);
		cJSON *s = cJSON_CreateString(name);
		if (!s || !cJSON_AddItemToArray(names, s)) {
			cJSON_Delete(s);
			goto out;
		}
	}
	*ret_record = record;
	record = NULL;
	rc = 0;
out:
	cJSON_Delete(record);
	return rc;
}

/* PATH as the comparisons below read it into OUT (PLAT_MAX_PATH + 1
 * bytes): without the NT prefixes "\??\" and "\\?\", '\\'-separated,
 * lower case (Windows' file names compare without case, ASCII here). */
static void normalize(const char *path, char *out)
{
	size_t n = 0;

	if (strncmp(path, "\\??\\", 4) == 0 || strncmp(path, "\\\\?\\", 4) == 0)
		path += 4;
	for (; *path && n < PLAT_MAX_PATH; path++)
		out[n++] = *path == '/' ? '\\' : lower(*path);
	while (n > 0 && out[n - 1] == '\\')
		n--;
	out[n] = '\0';
}

/* FOLDER (normalized) is one where Wine's builtins, or Windows' system
 * DLLs, are found: one of SYSTEM_DIRS, or the system32 or syswow64 of
 * C:\windows, as Wine names its builtins' folder. */
static bool system_folder(const char *folder, const char *const *system_dirs, size_t system_dir_count)
{
	char dir[PLAT_MAX_PATH + 1];

	if (strcmp(folder, "c:\\windows\\system32") == 0 || strcmp(folder, "c:\\windows\\syswow64") == 0)
		return true;
	for (size_t i = 0; i < system_dir_count; i++) {
		normalize(system_dirs[i], dir);
		if (strcmp(folder, dir) == 0)
			return true;
	}
	return false;
}

void program_module_judge(const struct program_file *files, size_t count,
			  const struct program_module_where *where, const char *path,
			  struct program_module_origin *ret)
{
	char loaded[PLAT_MAX_PATH + 1], own[PLAT_MAX_PATH + 1], folder[PLAT_MAX_PATH + 1];
	struct program_module_origin o = {.file = -1, .manifest_file = -1};
	const char *name, *shown = path;
	long named = -1;

	if (strncmp(path, "\\??\\", 4) == 0 || strncmp(path, "\\\\?\\", 4) == 0)
		shown = path + 4;
	normalize(path, loaded);
	name = file_name(loaded);
	normalize(where->program_dir, folder);
	for (size_t i = 0; i < count && o.file < 0; i++) {
		int n = snprintf(own, sizeof(own), "%s\\%s", folder, files[i].path);
		if (n < 0 || (size_t)n >= sizeof(own))
			continue;
		normalize(own, own);
		if (strcmp(loaded, own) == 0)
			o.file = (long)i;
		else if (named < 0 && files[i].dll && same_text(name, file_name(files[i].path)))
			named = (long)i;
	}
	if (o.file >= 0) {
		o.from_program_folder = true;
	} else if (named >= 0) {
		/* A DLL of the manifest's name, from elsewhere: not the program's code. */
		char override[JOB_SPEC_MAX_PROGRAM_PATH + 1];
		char why[JOB_SPEC_MAX_PROGRAM_PATH + 200];
		size_t n = (size_t)(name - loaded);

		snprintf(folder, sizeof(folder), "%.*s", (int)(n > 0 ? n - 1 : 0), loaded);
		bool system = system_folder(folder, where->system_dirs, where->system_dir_count);
		if (!system) {
			snprintf(why, sizeof(why), "another file of that name, which the loader found first");
		} else if (!where->wine) {
			snprintf(why, sizeof(why),
				 "a system DLL: the loader takes a known DLL from the "
				 "system folder");
		} else if (program_dll_override_name(files[named].path, override) == 0) {
			snprintf(why, sizeof(why),
				 "a Wine builtin: Wine takes its own DLL of a name unless WINEDLLOVERRIDES "
				 "says %s=n,b and the loader finds the program's file first",
				 override);
		} else {
			err_clear();
			snprintf(why, sizeof(why),
				 "a Wine builtin: Wine takes its own DLL of a name that "
				 "WINEDLLOVERRIDES cannot carry");
		}
		o.manifest_file = named;
		snprintf(o.reason, sizeof(o.reason),
			 "%s was loaded from %s (%s), not from the program's folder.",
			 file_name(files[named].path), shown, why);
	}
	*ret = o;
}
