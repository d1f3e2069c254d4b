/*
 * loader_stats_run.c - loader_stats_take() (loader_stats.h): one untimed
 * run of a program with glibc's LD_DEBUG=statistics, its output read back.
 */
#include "measure/loader_stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loadlab/err.h"
#include "loadlab/plat.h"
#include "measure/plat_measure.h"

/* Most environment entries a program's run may carry beside ours. */
#define MAX_ENV 64

/* {"source", "not_counted": WHY} */
static int not_counted(const char *why, cJSON **ret)
{
	cJSON *o = cJSON_CreateObject();

	if (!o || !cJSON_AddStringToObject(o, "source", "glibc LD_DEBUG=statistics, one untimed run") ||
	    !cJSON_AddStringToObject(o, "not_counted", why)) {
		cJSON_Delete(o);
		return err_set(LL_ENOMEM, "Out of memory.");
	}
	*ret = o;
	return 0;
}

#ifdef _WIN32

int loader_stats_take(const struct measure_program *p, const char *dir, long long timeout_ms, cJSON **ret)
{
	(void)p;
	(void)dir;
	(void)timeout_ms;
	return not_counted("LD_DEBUG=statistics is glibc's (Linux) loader's", ret);
}

#else

struct found {
	const char *dir;
	struct loader_stats stats;
	bool have;
	int rc; /* LL_ENOMEM or a path too long */
};

/* plat_list_dir's visitor: the first "ld.*" file with statistics. */
static int visit(void *context, const char *name)
{
	struct found *f = context;
	char path[PLAT_MAX_PATH + 1], *text = NULL;
	size_t len;

	if (strncmp(name, "ld.", 3) != 0)
		return 0;
	if ((f->rc = plat_path_join(path, sizeof(path), f->dir, name)) < 0)
		return 1;
	if (plat_read_file(path, LOADER_STATS_MAX_OUTPUT, &text, &len) < 0)
		return 0;
	f->have = loader_stats_parse(text, &f->stats) == 0;
	free(text);
	return f->have;
}

static int remove_output(void *context, const char *name)
{
	char path[PLAT_MAX_PATH + 1];

	if (strncmp(name, "ld.", 3) == 0 && plat_path_join(path, sizeof(path), context, name) == 0)
		plat_remove_file(path);
	return 0;
}

int loader_stats_take(const struct measure_program *p, const char *dir, long long timeout_ms, cJSON **ret)
{
	struct plat_spawn_options spawn = p->spawn;
	struct plat_measure_counters k;
	struct found found = {.dir = dir};
	const char *env[MAX_ENV + 3];
	char output[PLAT_MAX_PATH + 32], path[PLAT_MAX_PATH + 1], *text = NULL, why[300];
	size_t n = 0, len;
	int rc;

	if ((rc = plat_mkdirs(dir)) < 0 || (rc = plat_path_join(path, sizeof(path), dir, "ld")) < 0)
		return rc;
	plat_list_dir(dir, remove_output, (void *)dir);
	/* The program's own variables but any LD_DEBUG*, then ours. */
	for (size_t i = 0; spawn.env_add && spawn.env_add[i]; i++) {
		if (strncmp(spawn.env_add[i], "LD_DEBUG", 8) == 0)
			continue;
		if (n == MAX_ENV)
			return not_counted("the program's run sets too many variables", ret);
		env[n++] = spawn.env_add[i];
	}
	snprintf(output, sizeof(output), "LD_DEBUG_OUTPUT=%s", path);
	env[n++] = "LD_DEBUG=statistics";
	env[n++] = output;
	env[n] = NULL;
	spawn.env_add = env;
	spawn.stdout_path = spawn.stderr_path = NULL;
	if ((rc = plat_measure_run(&spawn, timeout_ms, false, &k)) < 0) {
		snprintf(why, sizeof(why), "the run failed: %s", err_message(rc));
		return not_counted(why, ret);
	}
	if (k.exit_code != 0) {
		snprintf(why, sizeof(why), "the run exited with %d", k.exit_code);
		return not_counted(why, ret);
	}
	/* Its own file first (ld.PID), else any other process's. */
	snprintf(output, sizeof(output), "%s.%lld", path, k.pid);
	if (plat_read_file(output, LOADER_STATS_MAX_OUTPUT, &text, &len) == 0)
		found.have = loader_stats_parse(text, &found.stats) == 0;
	free(text);
	if (!found.have)
		plat_list_dir(dir, visit, &found);
	if (found.rc < 0)
		return found.rc;
	if (!found.have)
		return not_counted("the run wrote no loader statistics (a static program, or not "
				   "glibc's loader)",
				   ret);
	return loader_stats_json(&found.stats, ret);
}

#endif
