/* A job's report from its results' summaries: see report.h. Rendering
 * is in report_format.c. */
#include "report_int.h"
#include "summary.h"
#include "report_loader_work.h"

#include "loadlab/array.h"

#include "loadlab/err.h"
#include "loadlab/job_spec.h"
#include "loadlab/json.h"
#include "loadlab/log.h"
#include "loadlab/stats.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A result whose summary is not cached: summarized after the walk (the
 * store's reader is busy during it), on REPORT_THREADS threads. */
struct pending {
	cJSON *task;
	long long result_id;
	char *body;
	char *text;     /* the summary's text, cached after */
	cJSON *summary; /* read back from TEXT */
};

/* Threads that summarize a report's missing summaries: the request's and
 * one more (this machine kind has 2 cores; issue 16's goal is a report of
 * 1,000 8-variant results in 1 s when none is cached). */
#define REPORT_THREADS 2

struct job_rows {
	struct store *store;
	cJSON *tasks; /* [{"key","cell","task_id","state","last_error","summary"}] */
	struct pending *pending;
	size_t pending_count, pending_room;
	/* summaries computed here, cached after the walk */
	size_t computed, room;
	long long *ids;
	char **texts;
};

/* Keeps a computed summary for cache_summaries(); false: no memory. */
static bool keep_computed(struct job_rows *rows, long long id, char *text)
{
	size_t ids_room = rows->room, texts_room = rows->room;
	long long *ids;
	char **texts;

	/* Two arrays of one length, as report_data_keep() grows them. */
	if (!(ids = array_grow(rows->ids, rows->computed, &ids_room, sizeof(*ids), 64)))
		return false;
	rows->ids = ids;
	if (!(texts = array_grow(rows->texts, rows->computed, &texts_room, sizeof(*texts), 64)))
		return false;
	rows->texts = texts;
	rows->room = texts_room;
	rows->ids[rows->computed] = id;
	rows->texts[rows->computed++] = text;
	return true;
}

/* Keeps the task T's result BODY for summarize_pending(); false: no
 * memory. */
static bool keep_pending(struct job_rows *rows, cJSON *t, long long id, const char *body)
{
	struct pending *pending =
		array_grow(rows->pending, rows->pending_count, &rows->pending_room, sizeof(*pending), 64);
	char *copy;

	if (!pending)
		return false;
	rows->pending = pending;
	if (!(copy = strdup(body)))
		return false;
	rows->pending[rows->pending_count++] = (struct pending){.task = t, .result_id = id, .body = copy};
	return true;
}

static int collect_row(void *context, const struct store_report_row *row)
{
	struct job_rows *rows = context;
	cJSON *t = cJSON_CreateObject(), *cell = NULL, *summary = NULL;
	char key[512];

	json_parse_object(row->cell, strlen(row->cell), 0, &cell);
	report_cell_key(cell, key, sizeof(key));
	cJSON_AddStringToObject(t, "key", key);
	cJSON_AddItemToObject(t, "cell", cell ? cell : cJSON_CreateObject());
	cJSON_AddNumberToObject(t, "task_id", (double)row->task_id);
	cJSON_AddStringToObject(t, "state", row->state);
	if (row->last_error)
		cJSON_AddStringToObject(t, "last_error", row->last_error);
	cJSON_AddItemToArray(rows->tasks, t);
	if (!row->result_id)
		return 0;
	if (row->summary && row->summary_version == REPORT_SUMMARY_VERSION)
		json_parse_object(row->summary, strlen(row->summary), REPORT_MAX_BODY_DEPTH, &summary);
	if (summary)
		cJSON_AddItemToObject(t, "summary", summary);
	else if (!row->body || !keep_pending(rows, t, row->result_id, row->body))
		cJSON_AddStringToObject(t, "result_error", "The stored result could not be read.");
	return 0;
}

struct summarizing {
	struct job_rows *rows;
	pthread_mutex_t lock;
	size_t next;
};

/* Summarizes pending results until none is left. A summary is read back
 * from its text as a cached summary is: cJSON prints 15 significant
 * digits, so a figure read back may differ in its last bit, and the report
 * must not depend on whether it was cached. Compare's data is left to the
 * summarizer and to compare (summary.h). */
static void *summarize_some(void *arg)
{
	struct summarizing *w = arg;

	for (;;) {
		struct pending *p;
		cJSON *summary = NULL;
		pthread_mutex_lock(&w->lock);
		p = w->next < w->rows->pending_count ? &w->rows->pending[w->next++] : NULL;
		pthread_mutex_unlock(&w->lock);
		if (!p)
			return NULL;
		if (report_summarize_result(p->body, &summary) == 0)
			p->text = report_print_json(summary);
		cJSON_Delete(summary);
		if (p->text &&
		    json_parse_object(p->text, strlen(p->text), REPORT_MAX_BODY_DEPTH, &p->summary) < 0) {
			free(p->text);
			p->text = NULL;
		}
	}
}

/* The summaries of the pending results, added to their tasks in task
 * order (or why there is none) and kept for cache_summaries(). */
static void summarize_pending(struct job_rows *rows)
{
	struct summarizing w = {.rows = rows, .next = 0};
	pthread_t helpers[REPORT_THREADS - 1];
	int started = 0;

	pthread_mutex_init(&w.lock, NULL);
	for (; rows->pending_count > 1 && started < REPORT_THREADS - 1; started++)
		if (pthread_create(&helpers[started], NULL, summarize_some, &w) != 0)
			break;
	summarize_some(&w);
	for (int i = 0; i < started; i++)
		pthread_join(helpers[i], NULL);
	pthread_mutex_destroy(&w.lock);
	for (size_t i = 0; i < rows->pending_count; i++) {
		struct pending *p = &rows->pending[i];
		if (p->summary) {
			cJSON_AddItemToObject(p->task, "summary", p->summary);
			if (keep_computed(rows, p->result_id, p->text))
				p->text = NULL;
		} else {
			cJSON_AddStringToObject(p->task, "result_error",
						"The stored result could not be read.");
		}
		free(p->text);
		free(p->body);
	}
	free(rows->pending);
	rows->pending = NULL;
	rows->pending_count = 0;
}

/* Stores, in one transaction, the summaries collect_row() computed, and
 * frees them. */
static void cache_summaries(struct store *store, struct job_rows *rows)
{
	summary_cache_put(store, rows->computed, rows->ids, (const char *const *)rows->texts, NULL, NULL);
	for (size_t i = 0; i < rows->computed; i++)
		free(rows->texts[i]);
	free(rows->ids);
	free(rows->texts);
}

/* The figures of one variant in one task, or why there are none. */
static cJSON *variant_cell(const cJSON *task, const char *variant, const char *table)
{
	const cJSON *summary = get(task, "summary"), *v = get(get(summary, "variants"), variant);
	const char *state = string(task, "state");
	cJSON *c = cJSON_CreateObject();

	cJSON_AddStringToObject(c, "cell", string(task, "key"));
	if (strcmp(state, "done") != 0) {
		bool dead = strcmp(state, "dead") == 0;
		cJSON_AddStringToObject(c, "status",
					dead                              ? "failed"
					: strcmp(state, "cancelled") == 0 ? "cancelled"
									  : "pending");
		cJSON_AddStringToObject(c, "reason",
					dead && string(task, "last_error") ? string(task, "last_error")
					: dead                             ? "the task failed"
									   : state);
		return c;
	}
	if (!summary) {
		cJSON_AddStringToObject(c, "status", "missing");
		cJSON_AddStringToObject(c, "reason",
					string(task, "result_error") ? string(task, "result_error")
								     : "no result");
		return c;
	}
	if (!v) {
		cJSON_AddStringToObject(c, "status", "missing");
		cJSON_AddStringToObject(c, "reason", "the result has no such variant");
		return c;
	}
	if (cJSON_IsFalse(get(v, "valid"))) {
		cJSON_AddStringToObject(c, "status", "invalid");
		cJSON_AddStringToObject(c, "reason",
					string(v, "reason") ? string(v, "reason") : "verification failed");
		return c;
	}
	if (!get(v, table)) {
		cJSON_AddStringToObject(c, "status", "missing");
		cJSON_AddStringToObject(c, "reason",
					strcmp(table, "warm") == 0 ? "no warm samples" : "no cold samples");
		return c;
	}
	cJSON_AddStringToObject(c, "status", "ok");
	for (const cJSON *f = get(v, table)->child; f; f = f->next)
		if (strcmp(f->string, "vs_baseline") != 0 && strcmp(f->string, "modules") != 0)
			cJSON_AddItemToObject(c, f->string, cJSON_Duplicate(f, true));
	if (strcmp(table, "warm") == 0 && get(v, "vs_baseline"))
		for (const cJSON *f = get(v, "vs_baseline")->child; f; f = f->next)
			cJSON_AddItemToObject(c, f->string, cJSON_Duplicate(f, true));
	if (strcmp(table, "cold") == 0 && get(get(v, "cold"), "vs_baseline"))
		for (const cJSON *f = get(get(v, "cold"), "vs_baseline")->child; f; f = f->next)
			cJSON_AddItemToObject(c, f->string, cJSON_Duplicate(f, true));
	return c;
}

static bool table_present(const cJSON *tasks, const char *table)
{
	const cJSON *t, *v;

	cJSON_ArrayForEach(t, tasks)
		cJSON_ArrayForEach(v, get(get(t, "summary"), "variants"))
			if (get(v, table))
				return true;
	return false;
}

static cJSON *build_table(const cJSON *tasks, const cJSON *variant_names, const char *table,
			  const char *baseline)
{
	cJSON *out = cJSON_CreateObject(), *rows = cJSON_CreateArray();
	const cJSON *name, *t;

	cJSON_AddStringToObject(out, "baseline", baseline);
	cJSON_ArrayForEach(name, variant_names) {
		cJSON *row = cJSON_CreateObject(), *cells = cJSON_AddArrayToObject(row, "cells");
		cJSON_AddStringToObject(row, "variant", name->valuestring);
		cJSON_ArrayForEach(t, tasks)
			cJSON_AddItemToArray(cells, variant_cell(t, name->valuestring, table));
		cJSON_AddItemToArray(rows, row);
	}
	cJSON_AddItemToObject(out, "variants", rows);
	return out;
}

/* The column's kind of sentence, computed: per variant, where it was
 * significantly faster or slower than the baseline, and where not. */
/* True when the WARM table has a cell with a median (a cold-only job's
 * has none). */
static bool timed_warm(const cJSON *warm)
{
	const cJSON *row, *c;

	cJSON_ArrayForEach(row, get(warm, "variants"))
		cJSON_ArrayForEach(c, get(row, "cells"))
			if (cJSON_IsNumber(get(c, "median_us")))
				return true;
	return false;
}

/* One sentence per variant of the COLD table whose cold start, page
 * faults or bytes read differ significantly from the table's baseline in
 * some cell, appended to OUT. */
static void cold_findings(const cJSON *cold, cJSON *out)
{
	static const char *const figures[][3] = {
		{"change_pct", "significant", "cold start"},
		{"page_faults_change_pct", "page_faults_significant", "page faults"},
		{"read_bytes_change_pct", "read_bytes_significant", "bytes read"},
	};
	const char *baseline = string(cold, "baseline");
	const cJSON *row, *c;

	cJSON_ArrayForEach(row, get(cold, "variants")) {
		struct buf text;
		int said = 0;
		if (strcmp(string(row, "variant"), baseline) == 0)
			continue;
		buf_init(&text, 8192);
		buf_printf(&text, "%s against %s at cold start:", string(row, "variant"), baseline);
		cJSON_ArrayForEach(c, get(row, "cells")) {
			for (size_t i = 0; i < sizeof(figures) / sizeof(figures[0]); i++) {
				if (!cJSON_IsTrue(get(c, figures[i][1])) ||
				    !cJSON_IsNumber(get(c, figures[i][0])))
					continue;
				double change = number(c, figures[i][0], 0);
				buf_printf(&text, "%s %s %s by %.1f %% on %s", said ? ";" : "", figures[i][2],
					   change < 0 ? "fell" : "rose", fabs(change), string(c, "cell"));
				said++;
			}
		}
		buf_append_str(&text, said ? "." : " no significant change.");
		cJSON_AddItemToArray(out, cJSON_CreateString(buf_str(&text)));
		buf_release(&text);
	}
}

static cJSON *findings(const cJSON *warm)
{
	cJSON *out = cJSON_CreateArray();
	const cJSON *row, *c;
	const char *baseline = string(warm, "baseline");
	bool timed = timed_warm(warm);

	cJSON_ArrayForEach(row, get(warm, "variants")) {
		struct buf text;
		int faster = 0, slower = 0, same = 0;
		if (strcmp(string(row, "variant"), baseline) == 0)
			continue;
		buf_init(&text, 8192);
		buf_printf(&text, "%s against %s:", string(row, "variant"), baseline);
		cJSON_ArrayForEach(c, get(row, "cells")) {
			if (!get(c, "change_pct"))
				continue;
			double change = number(c, "change_pct", 0);
			if (cJSON_IsTrue(get(c, "significant"))) {
				buf_printf(&text, "%s load time %s by %.1f %% on %s",
					   faster + slower ? ";" : "", change < 0 ? "improved" : "worsened",
					   fabs(change), string(c, "cell"));
				change < 0 ? faster++ : slower++;
			} else {
				same++;
			}
		}
		if (same)
			buf_printf(&text, "%s no significant change in %d cell%s", faster + slower ? ";" : "",
				   same, same > 1 ? "s" : "");
		if (faster + slower + same == 0 && !timed) {
			buf_release(&text); /* a cold-only job: its findings are the cold table's */
			continue;
		}
		if (faster + slower + same == 0)
			buf_append_str(&text, " no comparable cells");
		buf_append_str(&text, ".");
		cJSON_AddItemToArray(out, cJSON_CreateString(buf_str(&text)));
		buf_release(&text);
	}
	return out;
}

/* The variant a table compares with, as summary.c picks it: PREFERRED
 * when NAMES (strings) has it, else a program's "as-built", else the
 * first name; PREFERRED when NAMES is empty. */
static const char *baseline_name(const cJSON *names, const char *preferred)
{
	const char *order[] = {preferred, "as-built"};
	const cJSON *name;

	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		cJSON_ArrayForEach(name, names)
			if (strcmp(name->valuestring, order[i]) == 0)
				return order[i];
	return names->child ? names->child->valuestring : preferred;
}

/* Adds to the report's cell C the "builder" of build task ID: the name of
 * the agent the store says leased it (JOB's "builds"), not what a
 * measuring agent's result says; null when the store names none. */
static void add_builder(cJSON *c, const cJSON *job, double id)
{
	const cJSON *b;

	cJSON_ArrayForEach(b, get(job, "builds"))
		if (number(b, "id", -1) == id && string(b, "builder")) {
			cJSON_AddStringToObject(c, "builder", string(b, "builder"));
			return;
		}
	cJSON_AddNullToObject(c, "builder");
}

int report_job(struct store *store, long long job_id, bool modules, cJSON **ret_report)
{
	struct job_rows rows = {.store = store, .tasks = cJSON_CreateArray()};
	cJSON *job = NULL, *out, *cells, *names, *significance, *info;
	const cJSON *spec, *v, *t;
	bool program;
	int rc;

	if ((rc = store_job_get(store, job_id, &job)) < 0 ||
	    (rc = store_job_report_rows(store, job_id, false, REPORT_SUMMARY_VERSION, collect_row, &rows)) <
		    0) {
		for (size_t i = 0; i < rows.pending_count; i++)
			free(rows.pending[i].body);
		free(rows.pending);
		cJSON_Delete(job);
		cJSON_Delete(rows.tasks);
		cache_summaries(NULL, &rows);
		return rc;
	}
	summarize_pending(&rows);
	cache_summaries(store, &rows);
	spec = get(job, "spec");
	out = cJSON_CreateObject();
	info = cJSON_AddObjectToObject(out, "job");
	cJSON_AddNumberToObject(info, "id", (double)job_id);
	cJSON_AddStringToObject(info, "name", string(job, "name"));
	cJSON_AddStringToObject(info, "family", string(job, "family"));
	cJSON_AddStringToObject(info, "state", string(job, "state"));
	/* A pe or elf job has a generator, a program job a program section. */
	cJSON_AddItemToObject(info, "generator", cJSON_Duplicate(get(spec, "generator"), true));
	cJSON_AddItemToObject(info, "program", cJSON_Duplicate(get(spec, "program"), true));
	program = get(spec, "program") != NULL;

	cells = cJSON_AddArrayToObject(out, "cells");
	cJSON_ArrayForEach(t, rows.tasks) {
		cJSON *c = cJSON_CreateObject();
		cJSON_AddStringToObject(c, "key", string(t, "key"));
		cJSON_AddItemToObject(c, "cell", cJSON_Duplicate(get(t, "cell"), true));
		cJSON_AddNumberToObject(c, "task_id", number(t, "task_id", 0));
		cJSON_AddStringToObject(c, "state", string(t, "state"));
		if (get(t, "summary"))
			cJSON_AddItemToObject(c, "facts",
					      cJSON_Duplicate(get(get(t, "summary"), "facts"), true));
		/* A shared build's task, builder and toolchain (docs/builds.md). */
		if (cJSON_IsNumber(get(get(t, "summary"), "build_task"))) {
			double id = number(get(t, "summary"), "build_task", 0);
			cJSON_AddNumberToObject(c, "build_task", id);
			add_builder(c, job, id);
		}
		if (cJSON_IsObject(get(get(t, "summary"), "toolchain")))
			cJSON_AddItemToObject(c, "toolchain",
					      cJSON_Duplicate(get(get(t, "summary"), "toolchain"), true));
		cJSON_AddItemToArray(cells, c);
	}
	names = cJSON_CreateArray();
	{
		/* an A/B job's variants are "LABEL:PRESET", build after build */
		const cJSON *section = get(spec, "program");
		const char *label = NULL;
		int b = 0;
		job_spec_program_build(section, 0, &label);
		do {
			cJSON_ArrayForEach(v, get(spec, "variants")) {
				char name[2 * JOB_SPEC_MAX_NAME + 2];
				snprintf(name, sizeof(name), "%s%s%s", label ? label : "", label ? ":" : "",
					 string(v, "name"));
				cJSON_AddItemToArray(names, cJSON_CreateString(name));
			}
		} while (label && job_spec_program_build(section, ++b, &label));
	}

	{
		cJSON *warm = build_table(rows.tasks, names, "warm", baseline_name(names, "default"));
		/* a cold-only or churn-only job took no warm samples: its table is
		 * not shown (every cell "missing: no warm samples") */
		cJSON_AddBoolToObject(warm, "measured", get(get(spec, "measure"), "warm") != NULL);
		cJSON_AddItemToObject(out, "warm", warm);
		cJSON_AddItemToObject(out, "findings", findings(warm));
	}
	if (table_present(rows.tasks, "cold")) {
		cJSON *cold = build_table(rows.tasks, names, "cold",
					  baseline_name(names, program ? "as-built" : "rebase"));
		if (modules) {
			cJSON *per_module = cJSON_AddArrayToObject(cold, "modules");
			cJSON_ArrayForEach(t, rows.tasks) {
				cJSON_ArrayForEach(v, get(get(t, "summary"), "variants")) {
					const cJSON *m;
					cJSON_ArrayForEach(m, get(get(v, "cold"), "modules")) {
						cJSON *r = cJSON_Duplicate(m, true);
						cJSON_AddStringToObject(r, "cell", string(t, "key"));
						cJSON_AddStringToObject(r, "variant", v->string);
						cJSON_AddItemToArray(per_module, r);
					}
				}
			}
		}
		cold_findings(cold, cJSON_GetObjectItemCaseSensitive(out, "findings"));
		cJSON_AddItemToObject(out, "cold", cold);
	} else {
		cJSON_AddNullToObject(out, "cold");
	}
	{
		cJSON *churn = report_churn_table(rows.tasks);
		if (churn)
			report_churn_findings(churn, cJSON_GetObjectItemCaseSensitive(out, "findings"));
		cJSON_AddItemToObject(out, "churn", churn ? churn : cJSON_CreateNull());
	}
	{
		/* The loader's work beside the times (report_loader_work.h);
		 * absent where no result recorded any (as older reports were). */
		cJSON *loader_work = report_loader_work_table(rows.tasks, names);
		if (loader_work) {
			report_loader_work_findings(loader_work,
						    cJSON_GetObjectItemCaseSensitive(out, "findings"));
			cJSON_AddItemToObject(out, "loader_work", loader_work);
		}
	}
	report_annotate(out, spec);
	{
		/* Only a job with a shared build has "shipped". */
		cJSON *shipped = report_shipped(rows.tasks, names);
		if (shipped)
			cJSON_AddItemToObject(out, "shipped", shipped);
	}
	if (get(get(spec, "program"), "builds")) {
		/* an A/B job: its builds against the base, paired by pass */
		cJSON *ab = NULL;
		if (report_ab(store, job_id, 0, &ab) == 0)
			cJSON_AddItemToObject(out, "ab", ab);
		err_clear();
	}
	significance = cJSON_AddObjectToObject(out, "significance");
	cJSON_AddStringToObject(significance, "test", "mann-whitney-u, two-sided");
	cJSON_AddNumberToObject(significance, "alpha", REPORT_ALPHA);
	cJSON_AddNumberToObject(significance, "min_effect_pct", REPORT_MIN_EFFECT_PCT);
	cJSON_AddStringToObject(significance, "ci", "bootstrap percentile, 95 %");
	cJSON_Delete(names);
	cJSON_Delete(job);
	cJSON_Delete(rows.tasks);
	*ret_report = out;
	return 0;
}
