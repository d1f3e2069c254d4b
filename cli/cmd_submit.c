/* loadlab submit FILE [--wait [--quiet]]: POST /api/v1/jobs, then optionally
 * follow GET /api/v1/jobs/{id} until the job is done, failed or cancelled,
 * and print the report of a job that is done. */
#include "args.h"
#include "client.h"
#include "commands.h"
#include "job_file.h"
#include "job_poll.h"
#include "job_report.h"
#include "submit_program.h"
#include "table.h"
#include "waiting.h"

#include "loadlab/buf.h"
#include "loadlab/err.h"
#include "loadlab/job_spec.h"
#include "loadlab/json.h"

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A job file larger than this is surely a mistake; the server has its own cap. */
#define SUBMIT_FILE_LIMIT ((size_t)1 << 20)

static const char usage_text[] =
	"usage: loadlab submit FILE [--wait [--quiet]] [--program-dir DIR [--program-dir CAND...]]\n\n"
	"Submits the job in FILE (JSON, see schemas/job_submit.json; '-' reads stdin)\n"
	"and prints its id and task count: \"job ID: N tasks, STATE\". A file that is\n"
	"not JSON is refused here, its mistake placed as FILE:LINE:COLUMN. When no\n"
	"enrolled agent can take some tasks now, says why on stderr (\"warning: 4\n"
	"tasks: no agent has os=winxp\"); the job is queued all the same.\n\n"
	"  --wait   follow the job until it ends: a progress line redrawn in place on a\n"
	"           terminal, a plain line for each change otherwise; while nothing\n"
	"           runs, the line says why tasks wait. A job that is done ends\n"
	"           on its report, the tables `loadlab report ID` prints. Exit 0\n"
	"           when the job is done, 1 when it failed or was cancelled, 2 on\n"
	"           an error.\n"
	"  --quiet  with --wait: the progress only, no report at the end\n"
	"  --program-dir DIR\n"
	"           a program job: hash DIR's files, upload those the server lacks, and\n"
	"           submit with their manifest as program.files (also: \"program\":\n"
	"           {\"dir\": DIR} in FILE, relative to FILE). Prints \"program: N files,\n"
	"           U uploaded (B bytes)\" first. Without it, a program job's\n"
	"           program.files must all be uploaded already: those that are not\n"
	"           are named by path, and nothing is submitted (exit 2).\n"
	"           Given 2 to 4 times: an A/B job, one build per folder, the first the\n"
	"           base (\"program\": {\"builds\": [{\"label\": \"base\", ...},\n"
	"           {\"label\": \"candidate\", ...}]}), every variant run for each build\n"
	"           in the same passes; `loadlab compare --job ID` judges it.\n";

static int read_file(const char *path, struct buf *out)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	char chunk[65536];
	size_t n;
	int rc = 0;

	if (!f)
		return err_set(LL_EIO, "Cannot open %s: %s.", path, strerror(errno));
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		rc = buf_append(out, chunk, n);
		if (rc < 0) {
			if (rc == LL_ETOOBIG)
				err_set(rc, "%s is larger than %zu bytes.", path, out->limit);
			break;
		}
	}
	if (rc == 0 && ferror(f))
		rc = err_set(LL_EIO, "Cannot read %s: %s.", path, strerror(errno));
	if (f != stdin)
		fclose(f);
	return rc;
}

/* The 201 answer's "warnings" on stderr, one line each. */
static void print_warnings(const cJSON *created)
{
	const cJSON *warning;

	cJSON_ArrayForEach(warning, cJSON_GetObjectItemCaseSensitive(created, "warnings")) {
		if (!cJSON_IsString(warning))
			continue;
		fputs("loadlab submit: warning: ", stderr);
		table_print_text(stderr, warning->valuestring);
		fputc('\n', stderr);
	}
	fflush(stderr);
}

static long long count_of(const cJSON *tasks_by_state, const char *state)
{
	long long n = 0;

	if (json_get_int(tasks_by_state, state, 0, 1LL << 53, false, 0, &n) < 0)
		return 0;
	return n;
}

/* One line for the job's progress: tasks done of all, the other states that
 * are not empty, and the phase of each leased task (at most 4). */
static void progress_line(long long id, const cJSON *job, const char *state, char *line, size_t size)
{
	const cJSON *by_state = cJSON_GetObjectItemCaseSensitive(job, "tasks_by_state");
	const cJSON *tasks = cJSON_GetObjectItemCaseSensitive(job, "tasks");
	static const char *const others[] = {"leased", "queued", "dead", "cancelled"};
	const cJSON *task;
	long long total = 0;
	size_t used;
	int shown = 0, more = 0;

	json_get_int(job, "task_count", 0, 1LL << 53, false, 0, &total);
	used = (size_t)snprintf(line, size, "job %lld %s: %lld/%lld tasks done", id, state,
				count_of(by_state, "done"), total);
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]) && used < size; i++) {
		long long n = count_of(by_state, others[i]);
		if (n)
			used += (size_t)snprintf(line + used, size - used, ", %lld %s", n, others[i]);
	}
	cJSON_ArrayForEach(task, tasks) {
		const cJSON *phase = cJSON_GetObjectItemCaseSensitive(task, "phase");
		const cJSON *percent = cJSON_GetObjectItemCaseSensitive(task, "percent");
		const cJSON *task_state = cJSON_GetObjectItemCaseSensitive(task, "state");
		char phase_text[40], percent_text[16];

		if (!cJSON_IsString(task_state) || strcmp(task_state->valuestring, "leased") != 0 ||
		    !cJSON_IsString(phase))
			continue;
		if (shown == 4) {
			more++;
			continue;
		}
		table_json_text(phase, phase_text, sizeof(phase_text));
		table_json_text(percent, percent_text, sizeof(percent_text));
		if (used < size)
			used += (size_t)snprintf(line + used, size - used, "%s %s%s%s", shown ? "," : " |",
						 phase_text, cJSON_IsNumber(percent) ? " " : "",
						 cJSON_IsNumber(percent) ? percent_text : "");
		if (used < size && cJSON_IsNumber(percent))
			used += (size_t)snprintf(line + used, size - used, "%%");
		shown++;
	}
	if (more && used < size)
		used += (size_t)snprintf(line + used, size - used, ", +%d more", more);
	if (!shown && used < size) {
		size_t others = 0;
		const char *reason = waiting_first_reason(job, &others);
		if (reason)
			used += (size_t)snprintf(line + used, size - used, " | waiting: %s", reason);
		if (reason && others && used < size)
			snprintf(line + used, size - used, " (+%zu more reasons)", others);
	}
}

/* Follows job ID until it ends; returns the exit code. */
static int submit_wait(struct rest_client *c, long long id)
{
	bool tty = isatty(STDOUT_FILENO);
	char line[512] = "", last[512] = "";
	int code = 2;

	for (;;) {
		cJSON *job = NULL;
		const char *state = NULL;
		int rc = job_poll(c, id, &job, &state);

		if (rc < 0) {
			if (tty && *last)
				fputc('\n', stdout);
			fflush(stdout);
			return client_fail("submit", rc);
		}
		progress_line(id, job, state, line, sizeof(line));
		if (tty) {
			fputs("\r", stdout);
			table_print_text(stdout, line);
			fputs("\033[K", stdout);
		} else if (strcmp(line, last) != 0) {
			table_print_text(stdout, line);
			fputc('\n', stdout);
		}
		fflush(stdout);
		snprintf(last, sizeof(last), "%s", line);
		if (job_poll_finished(state)) {
			code = strcmp(state, "done") == 0 ? 0 : 1;
			cJSON_Delete(job);
			break;
		}
		cJSON_Delete(job);
		job_poll_sleep(0);
	}
	if (tty)
		fputc('\n', stdout);
	return code;
}

struct submit_options {
	bool wait;
	bool quiet; /* --wait without the report */
	const char *program_dir;
	/* --program-dir given more than once: an A/B job's builds */
	const char *program_dirs[JOB_SPEC_MAX_PROGRAM_BUILDS];
	int program_dir_count;
};

static int submit_option(void *context, int option, const char *value)
{
	struct submit_options *o = context;

	if (option == 'w')
		o->wait = true;
	else if (option == 'q')
		o->quiet = true;
	else if (option == 'p') {
		if (o->program_dir_count == JOB_SPEC_MAX_PROGRAM_BUILDS)
			return err_set(LL_EINVAL, "--program-dir may be given at most %d times.",
				       JOB_SPEC_MAX_PROGRAM_BUILDS);
		o->program_dirs[o->program_dir_count++] = value;
		o->program_dir = value;
	}
	return 0;
}

int cmd_submit(int argc, char **argv)
{
	static const struct option options[] = {
		{"wait", no_argument, NULL, 'w'},
		{"quiet", no_argument, NULL, 'q'},
		{"program-dir", required_argument, NULL, 'p'},
		{NULL, 0, NULL, 0},
	};
	struct rest_client c = {0};
	struct buf file;
	cJSON *parsed = NULL, *created = NULL;
	const char *state = NULL;
	long long id = 0, tasks = 0;
	struct submit_options o = {0};
	char *program_body = NULL;
	int rc = args_parse(argc, argv, "submit", usage_text, options, submit_option, &o), code = 2;

	if (rc >= 0)
		return rc;
	if (argc - optind != 1)
		return args_usage_error("submit", "expects one job FILE");
	if (o.quiet && !o.wait)
		return args_usage_error("submit", "--quiet goes with --wait");

	buf_init(&file, SUBMIT_FILE_LIMIT);
	rc = read_file(argv[optind], &file);
	if (rc < 0)
		goto fail;
	/* Refuse what is not JSON here, with the file's name, line and column
	 * in the message; the server checks everything else. */
	rc = job_file_parse(strcmp(argv[optind], "-") == 0 ? "stdin" : argv[optind], file.data, file.len,
			    &parsed);
	if (rc < 0)
		goto fail;
	rc = client_open(&c);
	if (rc == 0 && o.program_dir_count > 1)
		rc = submit_program_prepare_builds(&c, parsed, o.program_dirs, o.program_dir_count,
						   &program_body);
	else if (rc == 0)
		rc = submit_program_prepare(&c, parsed, argv[optind], o.program_dir, &program_body);
	/* A manifest given as it is: its missing files named by path. */
	if (rc == 0 && !program_body)
		rc = submit_program_check_files(&c, parsed, argv[optind]);
	if (rc == 0)
		rc = client_get_object(&c, "POST", "/api/v1/jobs",
				       program_body ? program_body : buf_str(&file), &created);
	if (rc == 0)
		rc = json_get_int(created, "id", 1, 1LL << 53, true, 0, &id);
	if (rc == 0)
		rc = json_get_int(created, "task_count", 0, 1LL << 53, true, 0, &tasks);
	if (rc == 0)
		rc = json_get_string(created, "state", 64, false, "queued", &state);
	if (rc < 0)
		goto fail;
	printf("job %lld: %lld task%s, ", id, tasks, tasks == 1 ? "" : "s");
	table_print_text(stdout, state);
	fputc('\n', stdout);
	fflush(stdout);
	print_warnings(created);
	code = o.wait ? submit_wait(&c, id) : 0;
	/* A done job ends on its report, as `loadlab report ID` prints it. */
	if (o.wait && !o.quiet && code == 0) {
		fputc('\n', stdout);
		if ((rc = job_report_print(id, "json", true)) < 0)
			code = client_fail("submit", rc);
	}
	fflush(stdout);
	goto out;
fail:
	code = client_fail("submit", rc);
out:
	cJSON_Delete(created);
	cJSON_Delete(parsed);
	free(program_body);
	buf_release(&file);
	rest_client_close(&c);
	return code;
}
