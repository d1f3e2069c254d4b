/*
 * pe_msvc.c - the commands that build a variant with Microsoft's cl and
 * link, for agents that have MSVC. Only the argv lists are produced here
 * (and checked by tests/agent/test_pe_pipeline.py); running them is the
 * build phase's business once an MSVC agent exists.
 *
 * Flags (link.exe documentation): /DEF exports from the .def file (NONAME
 * entries are exported by ordinal only, and the import library then
 * imports them by ordinal); /BASE sets the preferred base; /DYNAMICBASE:NO
 * clears IMAGE_DLLCHARACTERISTICS_DYNAMIC_BASE; /ORDER:@file lays out
 * COMDAT functions (cl /Gy) in the file's order; /NODEFAULTLIB and
 * /ENTRY:DllMain keep the CRT and its relocations out of the DLLs, as the
 * mingw build does.
 */
#include <stdio.h>
#include <string.h>

#include "loadlab/err.h"
#include "pe_family.h"

/* Appends ARGS (COUNT strings) to COMMANDS as one argv array. */
static int add_command(cJSON *commands, const char *const *args, size_t count)
{
	cJSON *argv = cJSON_CreateStringArray(args, (int)count);

	if (!argv || !cJSON_AddItemToArray(commands, argv)) {
		cJSON_Delete(argv);
		return LL_ENOMEM;
	}
	return 0;
}

/* Formats into one of the slots of TEXT; LL_ETOOBIG when it does not fit. */
#define SLOT(i, ...)                                                                              \
	do {                                                                                      \
		if ((size_t)snprintf(text[i], sizeof(text[i]), __VA_ARGS__) >= sizeof(text[i])) { \
			rc = err_set(LL_ETOOBIG, "An MSVC command argument is too long.");        \
			goto out;                                                                 \
		}                                                                                 \
		args[n++] = text[i];                                                              \
	} while (0)

/* Appends the cl command that compiles SRC\UNIT.c into OUT\UNIT.obj, with
 * /GS- for a DLL and /Gy when the functions are to be laid out by an order
 * file. */
static int add_compile(cJSON *commands, const char *src, const char *out, const char *unit, bool dll, bool gy)
{
	char text[2][PLAT_MAX_PATH + 64];
	const char *args[8];
	size_t n = 0;
	int rc;

	args[n++] = "cl";
	args[n++] = "/nologo";
	args[n++] = "/O1";
	if (dll)
		args[n++] = "/GS-";
	args[n++] = "/c";
	if (gy)
		args[n++] = "/Gy";
	SLOT(0, "%s\\%s.c", src, unit);
	SLOT(1, "/Fo%s\\%s.obj", out, unit);
	return add_command(commands, args, n);
out:
	return rc;
}

int pe_msvc_commands(int dlls, const struct pe_variant *variant, const char *src, const char *out,
		     cJSON **ret_commands)
{
	char text[6][PLAT_MAX_PATH + 64];
	const char *args[32];
	cJSON *commands = cJSON_CreateArray();
	bool fixed = strcmp(variant->bases, "toolchain") != 0;
	size_t n;
	int rc = 0;

	if (!commands)
		return LL_ENOMEM;
	for (int i = 0; i < dlls; i++) {
		char unit[16];

		snprintf(unit, sizeof(unit), "lt%d", i);
		if ((rc = add_compile(commands, src, out, unit, true, variant->trace_order)) < 0)
			goto out;
		n = 0;
		args[n++] = "link";
		args[n++] = "/nologo";
		args[n++] = "/DLL";
		args[n++] = "/NODEFAULTLIB";
		args[n++] = "/ENTRY:DllMain";
		SLOT(0, "/DEF:%s\\lt%d%s.def", src, i, variant->ordinal ? "_ordinal" : "");
		SLOT(1, "/OUT:%s\\lt%d.dll", out, i);
		SLOT(2, "/IMPLIB:%s\\lt%d.lib", out, i);
		if (fixed) {
			SLOT(3, "/BASE:0x%llx", (unsigned long long)PE_SAME_BASE);
			args[n++] = "/DYNAMICBASE:NO";
		}
		if (variant->trace_order)
			SLOT(4, "/ORDER:@%s\\lt%d.order", src, i);
		SLOT(5, "%s\\lt%d.obj", out, i);
		if ((rc = add_command(commands, args, n)) < 0)
			goto out;
	}
	if ((rc = add_compile(commands, src, out, "main", false, false)) < 0)
		goto out;
	/* The program links every import library: one argv built in JSON. */
	{
		const char *head[] = {"link", "/nologo"};
		cJSON *argv;
		char path[PLAT_MAX_PATH + 64];
		if ((rc = add_command(commands, head, 2)) < 0)
			goto out;
		argv = cJSON_GetArrayItem(commands, cJSON_GetArraySize(commands) - 1);
		snprintf(path, sizeof(path), "/OUT:%s\\main.exe", out);
		if (!cJSON_AddItemToArray(argv, cJSON_CreateString(path)))
			goto nomem;
		if (fixed && !cJSON_AddItemToArray(argv, cJSON_CreateString("/DYNAMICBASE:NO")))
			goto nomem;
		snprintf(path, sizeof(path), "%s\\main.obj", out);
		if (!cJSON_AddItemToArray(argv, cJSON_CreateString(path)))
			goto nomem;
		for (int i = 0; i < dlls; i++) {
			snprintf(path, sizeof(path), "%s\\lt%d.lib", out, i);
			if (!cJSON_AddItemToArray(argv, cJSON_CreateString(path)))
				goto nomem;
		}
		if (!cJSON_AddItemToArray(argv, cJSON_CreateString("kernel32.lib")))
			goto nomem;
	}
	*ret_commands = commands;
	return 0;
nomem:
	rc = LL_ENOMEM;
out:
	cJSON_Delete(commands);
	return rc;
}
