/* What the job_spec unit tests share: a job's text parsed, and
 * normalized (job_spec_normalize()). */
#ifndef LOADLAB_TEST_JOB_SPEC_TEXT_H
#define LOADLAB_TEST_JOB_SPEC_TEXT_H

#include "check.h"
#include "loadlab/job_spec.h"
#include "loadlab/json.h"

#include <string.h>

static inline cJSON *parse(const char *text)
{
	cJSON *root = NULL;

	CHECK_EQ_INT(json_parse(text, strlen(text), 0, &root), 0);
	return root;
}

static inline int normalize_text(const char *text, cJSON **ret)
{
	cJSON *job = parse(text);
	int rc = job_spec_normalize(job, ret);

	cJSON_Delete(job);
	return rc;
}

#endif
