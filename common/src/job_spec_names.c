/* The rules of a job's names (job_spec.h): matrix, fact and label keys,
 * series names, agents' names, and the text of names, revisions and
 * matrix values. What
 * job_spec.c, job_spec_matrix.c and the daemon check names with. */
#include "loadlab/job_spec.h"

#include "loadlab/err.h"

#include <string.h>

bool job_spec_key_valid(const char *name)
{
	size_t n = strlen(name);

	if (n < 1 || n > 32 || name[0] < 'a' || name[0] > 'z')
		return false;
	for (size_t i = 1; i < n; i++) {
		char c = name[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
			return false;
	}
	return true;
}

bool job_spec_series_valid(const char *name)
{
	size_t n = strlen(name);

	if (n < 1 || n > JOB_SPEC_MAX_SERIES)
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)name[i] < 0x21 || (unsigned char)name[i] > 0x7e)
			return false;
	return true;
}

int job_spec_agent_name_check(const char *name, const char *field)
{
	size_t n = strlen(name);

	if (n >= 1 && n <= JOB_SPEC_MAX_AGENT_NAME && job_spec_text_valid(name))
		return 0;
	return err_set(LL_EINVAL, "Field '%s' must be an agent's name: 1 to %d bytes, no control character.",
		       field, JOB_SPEC_MAX_AGENT_NAME);
}

bool job_spec_text_valid(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
	return true;
}
