/*
 * wine_dll_registry.c - runner_dll_registry_set() and its undoing
 * (runner.h): a Windows agent under Wine has Wine's loader prefer a
 * program's own DLLs through the prefix's registry, since Wine resets
 * WINEDLLOVERRIDES in every process a Windows program starts.
 */
#include "runner/runner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadlab/err.h"
#include "loadlab/log.h"

/* A name as WINEDLLOVERRIDES and the registry take it (program_modules.c
 * checks the characters); longer ones are refused. */
#define NAME_MAX_BYTES 256

/* Splits ENTRIES ("NAME=n,b;NAME,NAME2=n,b;...") into its names, calling
 * VISIT(CONTEXT, NAME) for each; stops at VISIT's first error. */
static int each_name(const char *entries, int (*visit)(void *context, const char *name), void *context)
{
	const char *p = entries;

	while (p && *p) {
		const char *end = strchr(p, ';'), *eq;
		size_t len = end ? (size_t)(end - p) : strlen(p);
		eq = memchr(p, '=', len);
		size_t names_len = eq ? (size_t)(eq - p) : len;
		for (size_t i = 0; i < names_len;) {
			size_t k = i;
			char name[NAME_MAX_BYTES];
			while (k < names_len && p[k] != ',')
				k++;
			if (k - i >= sizeof(name))
				return err_set(LL_ETOOBIG,
					       "A DLL name of %zu bytes is too long for the registry.",
					       k - i);
			memcpy(name, p + i, k - i);
			name[k - i] = '\0';
			if (name[0]) {
				int rc = visit(context, name);
				if (rc < 0)
					return rc;
			}
			i = k + 1;
		}
		p = end ? end + 1 : NULL;
	}
	return 0;
}

#ifdef _WIN32

#include <windows.h>

/* One value the agent wrote, and what it replaced. */
struct saved_value {
	char name[NAME_MAX_BYTES];
	bool had;   /* the value existed before */
	DWORD type; /* its type then */
	char *data; /* its data then (malloc'd) */
	DWORD size;
};

struct runner_dll_registry {
	struct saved_value *values;
	size_t count, cap;
	HKEY key;
};

static const char key_path[] = "Software\\Wine\\DllOverrides";
static const char our_value[] = "native,builtin";

static int write_one(void *context, const char *name)
{
	struct runner_dll_registry *g = context;
	struct saved_value *v;
	DWORD type = 0, size = 0;
	LONG rc;

	for (size_t i = 0; i < g->count; i++)
		if (_stricmp(g->values[i].name, name) == 0)
			return 0;
	if (g->count == RUNNER_MAX_REGISTRY_OVERRIDES)
		return err_set(LL_ETOOBIG, "More than %d DLL overrides for the registry.",
			       RUNNER_MAX_REGISTRY_OVERRIDES);
	if (g->count == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 16;
		struct saved_value *grown = realloc(g->values, cap * sizeof(*grown));
		if (!grown)
			return err_set(LL_ENOMEM, "Out of memory.");
		g->values = grown;
		g->cap = cap;
	}
	v = &g->values[g->count];
	memset(v, 0, sizeof(*v));
	snprintf(v->name, sizeof(v->name), "%s", name);
	if (RegQueryValueExA(g->key, name, NULL, &type, NULL, &size) == ERROR_SUCCESS) {
		v->had = true;
		v->type = type;
		v->size = size;
		if (!(v->data = malloc(size ? size : 1)))
			return err_set(LL_ENOMEM, "Out of memory.");
		if (RegQueryValueExA(g->key, name, NULL, &type, (BYTE *)v->data, &v->size) != ERROR_SUCCESS) {
			free(v->data);
			return err_set(LL_EIO, "Cannot read the registry value %s\\%s.", key_path, name);
		}
	}
	g->count++; /* restored even when the write below fails half-way */
	rc = RegSetValueExA(g->key, name, 0, REG_SZ, (const BYTE *)our_value, sizeof(our_value));
	if (rc != ERROR_SUCCESS)
		return err_set(LL_EIO, "Cannot write the registry value HKCU\\%s\\%s (error %ld).", key_path,
			       name, (long)rc);
	return 0;
}

int runner_dll_registry_set(struct runner *r, const char *entries, const char **ret_key)
{
	struct runner_dll_registry *g;
	LONG rc;
	int err;

	*ret_key = NULL;
	if (!r->wine || r->through_wine64 || !plat_under_wine())
		return 0;
	runner_dll_registry_restore(r);
	if (!(g = calloc(1, sizeof(*g))))
		return err_set(LL_ENOMEM, "Out of memory.");
	rc = RegCreateKeyExA(HKEY_CURRENT_USER, key_path, 0, NULL, 0, KEY_QUERY_VALUE | KEY_SET_VALUE, NULL,
			     &g->key, NULL);
	if (rc != ERROR_SUCCESS) {
		free(g);
		return err_set(LL_EIO, "Cannot open HKCU\\%s (error %ld).", key_path, (long)rc);
	}
	r->registry = g;
	if ((err = each_name(entries, write_one, g)) < 0) {
		runner_dll_registry_restore(r);
		return err;
	}
	log_event(LOG_INFO, "wine_dll_registry_set", "key", "HKCU\\Software\\Wine\\DllOverrides", NULL);
	*ret_key = "HKCU\\Software\\Wine\\DllOverrides";
	return 0;
}

void runner_dll_registry_restore(struct runner *r)
{
	struct runner_dll_registry *g = r->registry;

	if (!g)
		return;
	for (size_t i = g->count; i-- > 0;) {
		struct saved_value *v = &g->values[i];
		if (v->had)
			RegSetValueExA(g->key, v->name, 0, v->type, (const BYTE *)v->data, v->size);
		else
			RegDeleteValueA(g->key, v->name);
		free(v->data);
	}
	RegCloseKey(g->key);
	free(g->values);
	free(g);
	r->registry = NULL;
}

#else

static int count_one(void *context, const char *name)
{
	(void)name;
	(*(size_t *)context)++;
	return 0;
}

/* Linux: Wine takes WINEDLLOVERRIDES from the runner's environment
 * (runner_dll_overrides_set); the names are only checked here. */
int runner_dll_registry_set(struct runner *r, const char *entries, const char **ret_key)
{
	size_t n = 0;

	(void)r;
	*ret_key = NULL;
	return each_name(entries, count_one, &n);
}

void runner_dll_registry_restore(struct runner *r)
{
	(void)r;
}

#endif
