/*
 * queue_build.c - the build tasks' policy (queue_build.h). No I/O, no
 * clock: the store passes every fact in.
 */
#include "queue_build.h"

#include "loadlab/err.h"

#include <stdio.h>
#include <string.h>

bool queue_build_shared(const cJSON *spec, bool each_agent_default)
{
	const cJSON *family = cJSON_GetObjectItemCaseSensitive(spec, "family");
	const cJSON *build = cJSON_GetObjectItemCaseSensitive(spec, "build");

	if (!cJSON_IsString(family) ||
	    (strcmp(family->valuestring, "pe") != 0 && strcmp(family->valuestring, "elf") != 0))
		return false;
	if (!cJSON_IsString(build))
		return !each_agent_default;
	return strcmp(build->valuestring, "each-agent") != 0;
}

/* The string KEY of the cell, else of the facts, else NULL. */
static const char *cell_or_fact(const cJSON *cell, const cJSON *facts, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(cell, key);

	if (!cJSON_IsString(v))
		v = cJSON_GetObjectItemCaseSensitive(facts, key);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* A Windows architecture's mingw-w64 name: "x86_64" or "i686"; NULL when
 * mingw-w64 builds none for ARCH. */
static const char *pe_architecture(const char *arch)
{
	static const char *const x86[] = {"i686", "i586", "i386", "x86", NULL};
	static const char *const x64[] = {"x86_64", "amd64", "x64", NULL};

	for (size_t i = 0; x86[i]; i++)
		if (strcmp(arch, x86[i]) == 0)
			return "i686";
	for (size_t i = 0; x64[i]; i++)
		if (strcmp(arch, x64[i]) == 0)
			return "x86_64";
	return NULL;
}

int queue_build_target(const char *family, const cJSON *cell, const cJSON *facts, cJSON **ret_target)
{
	const char *arch = cell_or_fact(cell, facts, "arch");
	char toolchain[64];
	cJSON *t;

	if (!arch)
		arch = "x86_64";
	if (strcmp(family, "pe") == 0) {
		const char *pe = pe_architecture(arch);
		if (!pe)
			return err_set(LL_EINVAL, "The pe family builds for x86_64 or i686, not '%s'.", arch);
		arch = pe;
		snprintf(toolchain, sizeof(toolchain), "%s-w64-mingw32-gcc", arch);
	} else {
		const cJSON *kind = cJSON_GetObjectItemCaseSensitive(cell, "toolchain");
		snprintf(toolchain, sizeof(toolchain), "%s",
			 cJSON_IsString(kind) ? kind->valuestring : "gcc+ld");
	}
	if (strlen(arch) > 32)
		return err_set(LL_EINVAL, "The architecture '%.32s...' is too long.", arch);
	t = cJSON_CreateObject();
	if (!t || !cJSON_AddStringToObject(t, "family", family) ||
	    !cJSON_AddStringToObject(t, "architecture", arch) ||
	    !cJSON_AddStringToObject(t, "toolchain", toolchain)) {
		cJSON_Delete(t);
		return err_set(LL_ENOMEM, "Out of memory.");
	}
	*ret_target = t;
	return 0;
}

static const char *target_string(const cJSON *target, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(target, key);

	return cJSON_IsString(v) ? v->valuestring : "";
}

/* Whether the array fact KEY of FACTS holds NAME. */
static bool fact_lists(const cJSON *facts, const char *key, const char *name)
{
	const cJSON *item;

	cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(facts, key))
		if (cJSON_IsString(item) && strcmp(item->valuestring, name) == 0)
			return true;
	return false;
}

/* Whether AGENT has what TARGET's build needs, quarantined or not. */
static bool can_build(const cJSON *target, const struct queue_agent *agent)
{
	const char *family = target_string(target, "family");
	const char *toolchain = target_string(target, "toolchain");

	if (strcmp(family, "pe") == 0)
		return fact_lists(agent->facts, "toolchains", toolchain);
	if (strcmp(family, "elf") == 0) {
		const cJSON *arch = cJSON_GetObjectItemCaseSensitive(agent->facts, "arch");
		return fact_lists(agent->facts, "toolchain", toolchain) && cJSON_IsString(arch) &&
		       strcmp(arch->valuestring, target_string(target, "architecture")) == 0;
	}
	return false;
}

bool queue_build_matches(const cJSON *target, const struct queue_agent *agent)
{
	return agent->builder && !agent->quarantined && can_build(target, agent);
}

bool queue_build_waiting(const cJSON *target, const struct queue_agent *agents, size_t count, char *reason)
{
	const struct queue_agent *unmarked = NULL;
	size_t able = 0, marked = 0;

	reason[0] = '\0';
	for (size_t i = 0; i < count; i++) {
		if (!can_build(target, &agents[i]))
			continue;
		able++;
		if (!agents[i].builder) {
			unmarked = &agents[i];
			continue;
		}
		if (!agents[i].quarantined && agents[i].online)
			return true;
		marked++;
	}
	if (able == 0)
		snprintf(reason, QUEUE_WAITING_REASON_SIZE, "no agent can build %s for %s: needs %s",
			 target_string(target, "family"), target_string(target, "architecture"),
			 target_string(target, "toolchain"));
	else if (marked == 0 && able == 1 && unmarked->name)
		/* the id in the hint: names may be shared, and are up to 64 bytes */
		snprintf(reason, QUEUE_WAITING_REASON_SIZE,
			 "agent %.64s can build %s for %s but is not marked as a builder"
			 " (an admin marks it: loadlab agents --builder %lld)",
			 unmarked->name, target_string(target, "family"),
			 target_string(target, "architecture"), unmarked->id);
	else if (marked == 0)
		snprintf(reason, QUEUE_WAITING_REASON_SIZE,
			 "%zu agent%s can build %s for %s but none is marked as a builder"
			 " (an admin marks one: loadlab agents --builder NAME)",
			 able, able == 1 ? "" : "s", target_string(target, "family"),
			 target_string(target, "architecture"));
	else
		snprintf(reason, QUEUE_WAITING_REASON_SIZE,
			 "the agents that can build %s for %s are offline or quarantined",
			 target_string(target, "family"), target_string(target, "architecture"));
	return false;
}

bool queue_build_wanted(const cJSON *const *cells, const long long *pinned, size_t cell_count,
			const struct queue_agent *agents, size_t count)
{
	for (size_t i = 0; i < cell_count; i++)
		for (size_t k = 0; k < count; k++)
			if (queue_task_matches(cells[i], pinned[i], &agents[k]))
				return true;
	return false;
}
