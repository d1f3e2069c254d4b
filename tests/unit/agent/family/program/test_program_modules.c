/*
 * The program family's own DLLs against Wine's builtins
 * (agent/family/program/program_modules.c): the WINEDLLOVERRIDES names
 * (".dll" stripped, each once, names Wine's parser would split refused,
 * the length bound), and the judgement of where a loaded module came
 * from, with the paths the debug probe saw under Wine 8 for zlib's
 * example_d.exe (test_program_zlib.py): its own zlib1.dll from the
 * variant's folder, and Wine's builtin from its builtin folder, which
 * makes the variant invalid with a reason naming the file.
 */
#include "check.h"
#include "family/program/program_int.h"
#include "loadlab/err.h"

#include <stdio.h>
#include <string.h>

static struct program_file file(const char *path, bool dll)
{
	struct program_file f = {.pe = true, .dll = dll};

	snprintf(f.path, sizeof(f.path), "%s", path);
	return f;
}

static const char *record_name(const cJSON *record, const char *list, int i)
{
	return cJSON_GetStringValue(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(record, list), i));
}

static void test_override_names(void)
{
	char name[JOB_SPEC_MAX_PROGRAM_PATH + 1] = "untouched";

	CHECK_EQ_INT(program_dll_override_name("zlib1.dll", name), 0);
	CHECK_EQ_STR(name, "zlib1");
	CHECK_EQ_INT(program_dll_override_name("bin/plugins/MSVCP140.DLL", name), 0);
	CHECK_EQ_STR(name, "MSVCP140");
	/* Wine strips ".dll" only. */
	CHECK_EQ_INT(program_dll_override_name("bin/ctl.ocx", name), 0);
	CHECK_EQ_STR(name, "ctl.ocx");
	CHECK_EQ_INT(program_dll_override_name("bin/d3dx9_43.dll", name), 0);
	CHECK_EQ_STR(name, "d3dx9_43");
	snprintf(name, sizeof(name), "untouched");
	/* Wine's separators and wildcard, a space, non-ASCII: no override. */
	CHECK_EQ_INT(program_dll_override_name("a;b.dll", name), LL_EINVAL);
	CHECK_EQ_INT(program_dll_override_name("a,b.dll", name), LL_EINVAL);
	CHECK_EQ_INT(program_dll_override_name("a=n.dll", name), LL_EINVAL);
	CHECK_EQ_INT(program_dll_override_name("*.dll", name), LL_EINVAL);
	CHECK_EQ_INT(program_dll_override_name("my lib.dll", name), LL_EINVAL);
	CHECK_EQ_INT(program_dll_override_name("caf\xc3\xa9.dll", name), LL_EINVAL);
	CHECK_EQ_INT(program_dll_override_name("bin/.dll", name), LL_EINVAL);
	CHECK_EQ_STR(name, "untouched");
	err_clear();
}

/* LEFT's entry AT names FILE, and its reason has REASON in it. */
static void check_left_out(const cJSON *left, int at, const char *file, const char *reason)
{
	const cJSON *entry = cJSON_GetArrayItem(left, at);
	const char *why = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(entry, "reason"));

	CHECK_EQ_STR(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(entry, "file")), file);
	CHECK(why && strstr(why, reason) != NULL);
}

static void test_overrides(void)
{
	struct program_file files[] = {
		file("example_d.exe", false), file("zlib1.dll", true),    file("readme.txt", false),
		file("sub/ZLIB1.dll", true),  file("bad;name.dll", true), file("vcruntime140.dll", true),
	};
	char out[64];
	cJSON *record = NULL;

	CHECK_EQ_INT(program_dll_overrides(files, 6, sizeof(out), out, &record), 0);
	CHECK_EQ_STR(out, "zlib1=n,b;vcruntime140=n,b");
	CHECK_EQ_STR(record_name(record, "names", 0), "zlib1");
	CHECK_EQ_STR(record_name(record, "names", 1), "vcruntime140");
	CHECK_EQ_INT(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(record, "names")), 2);
	const cJSON *left = cJSON_GetObjectItemCaseSensitive(record, "left_out");
	CHECK_EQ_INT(cJSON_GetArraySize(left), 1);
	check_left_out(left, 0, "bad;name.dll", "cannot carry (0x3b)");
	cJSON_Delete(record);
	record = NULL;

	/* The bound: "zlib1=n,b" takes 10 bytes with its NUL; what does not
	 * fit is left out, and named. */
	CHECK_EQ_INT(program_dll_overrides(files, 6, 20, out, &record), 0);
	CHECK_EQ_STR(out, "zlib1=n,b");
	CHECK(strlen(out) < 20);
	left = cJSON_GetObjectItemCaseSensitive(record, "left_out");
	CHECK_EQ_INT(cJSON_GetArraySize(left), 2);
	check_left_out(left, 1, "vcruntime140.dll", "limit");
	cJSON_Delete(record);
	record = NULL;

	/* No DLLs: no entries. */
	CHECK_EQ_INT(program_dll_overrides(files, 1, sizeof(out), out, &record), 0);
	CHECK_EQ_STR(out, "");
	cJSON_Delete(record);
}

/* As the Linux agent's runner gives them: the program's folder and the
 * builtin folder as a program under wine64 sees them. */
static const char *const wine_dirs[] = {"Z:\\usr\\lib\\x86_64-linux-gnu\\wine\\x86_64-windows",
					"Z:\\w\\wineprefix\\drive_c\\windows\\system32"};
static const struct program_module_where under_wine = {.program_dir = "Z:\\w\\work\\1-1\\v\\00",
						       .system_dirs = wine_dirs,
						       .system_dir_count = 2,
						       .wine = true};

static void test_judge(void)
{
	struct program_file files[] = {file("example_d.exe", false), file("zlib1.dll", true),
				       file("lib/Plugin.dll", true)};
	struct program_module_origin o;

	/* The program's own files, as the probe saw them under Wine 8. */
	program_module_judge(files, 3, &under_wine, "\\??\\Z:\\w\\work\\1-1\\v\\00\\example_d.exe", &o);
	CHECK_EQ_INT(o.file, 0);
	CHECK(o.from_program_folder);
	CHECK_EQ_INT(o.manifest_file, -1);
	program_module_judge(files, 3, &under_wine, "\\??\\Z:\\w\\work\\1-1\\v\\00\\zlib1.dll", &o);
	CHECK_EQ_INT(o.file, 1);
	CHECK(o.from_program_folder);
	/* Any case, '/' or '\\', "\\\\?\\" too. */
	program_module_judge(files, 3, &under_wine, "\\\\?\\z:\\W\\work\\1-1\\v\\00\\LIB\\plugin.DLL", &o);
	CHECK_EQ_INT(o.file, 2);
	program_module_judge(files, 3, &under_wine, "Z:/w/work/1-1/v/00/lib/Plugin.dll", &o);
	CHECK_EQ_INT(o.file, 2);

	/* Wine's builtin in the program's DLL's place: the variant is invalid. */
	program_module_judge(files, 3, &under_wine,
			     "\\??\\Z:\\usr\\lib\\x86_64-linux-gnu\\wine\\x86_64-windows\\zlib1.dll", &o);
	CHECK_EQ_INT(o.file, -1);
	CHECK(!o.from_program_folder);
	CHECK_EQ_INT(o.manifest_file, 1);
	CHECK_EQ_STR(o.reason,
		     "zlib1.dll was loaded from "
		     "Z:\\usr\\lib\\x86_64-linux-gnu\\wine\\x86_64-windows\\zlib1.dll (a Wine builtin: "
		     "Wine takes its own DLL of a name unless WINEDLLOVERRIDES says zlib1=n,b and the "
		     "loader finds the program's file first), not from the program's folder.");
	/* As lpImageName names a builtin: C:\windows\system32. */
	program_module_judge(files, 3, &under_wine, "C:\\windows\\system32\\ZLIB1.DLL", &o);
	CHECK_EQ_INT(o.manifest_file, 1);
	CHECK(strncmp(o.reason, "zlib1.dll was loaded from C:\\windows\\system32\\ZLIB1.DLL (a Wine builtin",
		      70) == 0);
	/* Another copy of the name elsewhere is not the program's either. */
	program_module_judge(files, 3, &under_wine, "\\??\\Z:\\w\\work\\1-1\\v\\01\\zlib1.dll", &o);
	CHECK_EQ_INT(o.manifest_file, 1);
	CHECK(strstr(o.reason, "(another file of that name, which the loader found first)") != NULL);
	/* A DLL of the manifest in a subfolder, found beside the exe. */
	program_module_judge(files, 3, &under_wine, "\\??\\Z:\\w\\work\\1-1\\v\\00\\plugin.dll", &o);
	CHECK_EQ_INT(o.manifest_file, 2);
	CHECK(strncmp(o.reason, "Plugin.dll was loaded from Z:\\w\\work\\1-1\\v\\00\\plugin.dll", 50) == 0);

	/* A name no override could carry, replaced by a builtin of that name. */
	struct program_file odd[] = {file("odd;name.dll", true)};
	program_module_judge(odd, 1, &under_wine, "C:\\windows\\system32\\odd;name.dll", &o);
	CHECK_EQ_INT(o.manifest_file, 0);
	CHECK(strstr(o.reason, "(a Wine builtin: Wine takes its own DLL of a name that WINEDLLOVERRIDES "
			       "cannot carry)") != NULL);

	/* System DLLs the program did not ship: recorded, and fine. */
	program_module_judge(files, 3, &under_wine,
			     "\\??\\Z:\\usr\\lib\\x86_64-linux-gnu\\wine\\x86_64-windows\\kernel32.dll", &o);
	CHECK_EQ_INT(o.file, -1);
	CHECK_EQ_INT(o.manifest_file, -1);
	CHECK(!o.from_program_folder);
	CHECK_EQ_STR(o.reason, "");
	/* A manifest path is matched whole, not as a suffix of another folder. */
	program_module_judge(files, 3, &under_wine, "\\??\\Z:\\w\\work\\1-1\\v\\00x\\example_d.exe", &o);
	CHECK_EQ_INT(o.file, -1);

	/* Natively, a system folder is no Wine builtin. */
	const char *const windows_dirs[] = {"C:\\Windows\\system32"};
	const struct program_module_where native = {
		.program_dir = "C:/lab/work/1-1/v/00", .system_dirs = windows_dirs, .system_dir_count = 1};
	program_module_judge(files, 3, &native, "C:\\Windows\\System32\\zlib1.dll", &o);
	CHECK_EQ_INT(o.manifest_file, 1);
	CHECK(strstr(o.reason, "(a system DLL") != NULL && strstr(o.reason, "Wine") == NULL);
	program_module_judge(files, 3, &native, "C:\\lab\\work\\1-1\\v\\00\\zlib1.dll", &o);
	CHECK_EQ_INT(o.file, 1);
}

int main(void)
{
	test_override_names();
	test_overrides();
	test_judge();
	return check_finish();
}
