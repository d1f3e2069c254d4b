/*
 * programs.c - the agent's side of programs.h: lookups in the tables that
 * embed.cmake generates, and writing a program out with its check. (The
 * other .c files here are Windows programs, never linked into the agent.)
 */
#include "programs/programs.h"

#include <string.h>

#include "loadlab/err.h"
#include "loadlab/plat.h"

const char *agent_program_source(const char *name, size_t *ret_size)
{
	for (size_t i = 0; i < agent_program_text_count; i++)
		if (strcmp(agent_program_texts[i].name, name) == 0) {
			if (ret_size)
				*ret_size = agent_program_texts[i].size;
			return agent_program_texts[i].text;
		}
	return NULL;
}

const char *agent_program_arch(void)
{
	return agent_programs_arch;
}

const char *agent_program_native_arch(void)
{
	return agent_programs_native_arch;
}

int agent_program_find(const char *name, const char *arch, const struct agent_program **ret)
{
	for (size_t i = 0; i < agent_program_count; i++)
		if (strcmp(agent_programs[i].name, name) == 0 && strcmp(agent_programs[i].arch, arch) == 0) {
			*ret = &agent_programs[i];
			return 0;
		}
	return err_set(LL_ENOTFOUND, "This agent carries no %s for %s (its programs are built for %s).", name,
		       arch, agent_programs_arch);
}

int agent_program_install(const char *name, const char *path, const struct agent_program **ret_program)
{
	return agent_program_install_arch(name, agent_programs_arch, path, ret_program);
}

int agent_program_install_arch(const char *name, const char *arch, const char *path,
			       const struct agent_program **ret_program)
{
	const struct agent_program *p = NULL;
	char sha256[65];
	long long size = -1;
	int rc;

	if ((rc = agent_program_find(name, arch, &p)) < 0 ||
	    (rc = plat_write_file(path, p->bytes, p->size)) < 0 ||
	    (rc = plat_file_sha256(path, sha256, &size)) < 0)
		return rc;
	if (size != (long long)p->size || strcmp(sha256, p->sha256) != 0) {
		plat_remove_file(path);
		return err_set(LL_EIO,
			       "%s as written to %s has %lld bytes and SHA-256 %s; the agent was built with "
			       "%zu bytes and SHA-256 %s.",
			       name, path, size, sha256, p->size, p->sha256);
	}
	if (ret_program)
		*ret_program = p;
	return 0;
}

cJSON *agent_program_json(const struct agent_program *program)
{
	cJSON *o = cJSON_CreateObject();

	if (!o || !cJSON_AddStringToObject(o, "name", program->name) ||
	    !cJSON_AddStringToObject(o, "arch", program->arch) ||
	    !cJSON_AddNumberToObject(o, "size", (double)program->size) ||
	    !cJSON_AddStringToObject(o, "sha256", program->sha256) ||
	    !cJSON_AddStringToObject(o, "compiler", program->compiler) ||
	    !cJSON_AddStringToObject(o, "built", "with the agent")) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}
