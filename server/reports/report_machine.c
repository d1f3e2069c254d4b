/* The machine facts that move load times, and their digest: see report_machine.h. */
#include "report_machine.h"

#include "loadlab/json.h"
#include "loadlab/plat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kept[] = {"cpu_model", "cores",      "os", "os_version", "distro",
				   "arch",      "disk",       "fs", "runner",     "wine_version",
				   "toolchain", "toolchains", NULL};

cJSON *report_machine_facts(const cJSON *facts)
{
	cJSON *out = cJSON_CreateObject();

	for (int i = 0; out && kept[i]; i++) {
		const cJSON *v =
			cJSON_IsObject(facts) ? cJSON_GetObjectItemCaseSensitive(facts, kept[i]) : NULL;
		if (v && !cJSON_AddItemToObject(out, kept[i], cJSON_Duplicate(v, true))) {
			cJSON_Delete(out);
			return NULL;
		}
	}
	return out;
}

void report_machine_digest(const cJSON *machine, char ret[REPORT_MACHINE_DIGEST_HEX + 1])
{
	char hex[65] = "";
	char *text = json_print(machine);

	if (!text || plat_sha256(text, strlen(text), hex) < 0)
		snprintf(hex, sizeof(hex), "%s", "unknown");
	free(text);
	memcpy(ret, hex, REPORT_MACHINE_DIGEST_HEX);
	ret[REPORT_MACHINE_DIGEST_HEX] = '\0';
}

cJSON *report_machine_differences(const cJSON *before, const cJSON *after)
{
	cJSON *out = cJSON_CreateArray();

	for (int i = 0; out && kept[i]; i++) {
		const cJSON *a = cJSON_GetObjectItemCaseSensitive(before, kept[i]);
		const cJSON *b = cJSON_GetObjectItemCaseSensitive(after, kept[i]);
		cJSON *d;
		if ((!a && !b) || (a && b && cJSON_Compare(a, b, true)))
			continue;
		d = cJSON_CreateObject();
		cJSON_AddStringToObject(d, "fact", kept[i]);
		cJSON_AddItemToObject(d, "before", a ? cJSON_Duplicate(a, true) : cJSON_CreateNull());
		cJSON_AddItemToObject(d, "after", b ? cJSON_Duplicate(b, true) : cJSON_CreateNull());
		cJSON_AddItemToArray(out, d);
	}
	return out;
}
