/* Summaries and compare's data made apart (summary.h): a report makes
 * summaries only; a compare of results without cached compare data gives
 * the same answer as with it, and caches the data it made; the summarizer
 * makes the data missing beside cached summaries; and the data is the
 * same bytes whichever path made it. Real store, real files. */
#include "check.h"
#include "reports/report.h"
#include "store/store.h"
#include "server/store_fixture.h"
#include "reports/summarizer.h"
#include "reports/summary.h"

#include "loadlab/err.h"

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char db_path[256];

#define AGENTS 2
#define SAMPLES 30

static const char job_text[] = "{\"name\":\"j\",\"family\":\"pe\",\"generator\":{\"dlls\":1,\"exports\":1},"
			       "\"variants\":[\"default\",\"rebase\"],"
			       "\"matrix\":{\"cells\":{\"os\":[\"win10\",\"winxp\"]}}}";

static uint64_t rng = 7;

/* "[v, v, ...]": SAMPLES values around CENTER. */
static void samples(char *out, size_t size, double center)
{
	size_t len = (size_t)snprintf(out, size, "[");
	for (int i = 0; i < SAMPLES; i++) {
		rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
		len += (size_t)snprintf(out + len, size - len, "%s%.1f", i ? "," : "",
					center + (double)((rng >> 33) % 200) / 10);
	}
	snprintf(out + len, size - len, "]");
}

/* The job JOB's task leased by AGENT gets a result: "default" around
 * 1000 us, "rebase" around 1000 * SLOWER, a floor around 600. */
static void play(struct store *s, long long agent, double slower, long long now)
{
	char a[1024], b[1024], f[1024], body[4096];
	cJSON *lease = NULL, *out = NULL;
	bool replayed = false;

	CHECK_EQ_INT(store_task_lease(s, agent, now, &lease), 0);
	samples(a, sizeof(a), 1000);
	samples(b, sizeof(b), 1000 * slower);
	samples(f, sizeof(f), 600);
	snprintf(body, sizeof(body),
		 "{\"attempt\":%lld,\"facts\":{\"os\":\"x\"},\"variants\":["
		 "{\"name\":\"default\",\"valid\":true,\"warm\":{\"samples_us\":%s}},"
		 "{\"name\":\"rebase\",\"valid\":true,\"warm\":{\"samples_us\":%s}}],"
		 "\"floor\":{\"warm\":{\"samples_us\":%s}}}",
		 fixture_num(lease, "attempt"), a, b, f);
	CHECK_EQ_INT(store_task_result(s, agent, fixture_num(lease, "task_id"), fixture_num(lease, "attempt"),
				       body, strlen(body), now + 1, &out, &replayed),
		     0);
	cJSON_Delete(lease);
	cJSON_Delete(out);
}

struct counts {
	int rows, summaries, compare, same_bytes;
};

/* Counts a job's cached summaries and compare data; where compare data is
 * cached, checks it is the bytes report_summarize_cell() and
 * report_compare_data_of() make of the result (the rows carry its text). */
static int count_row(void *context, const struct store_report_row *row)
{
	struct counts *c = context;

	c->rows++;
	c->summaries += row->summary != NULL;
	c->compare += row->compare != NULL;
	if (row->compare) {
		void *keyed = NULL, *alone = NULL;
		size_t keyed_len = 0, alone_len = 0;
		cJSON *summary = NULL;
		if (report_summarize_cell(row->body, row->cell, &summary, &keyed, &keyed_len) == 0 &&
		    report_compare_data_of(row->body, row->cell, &alone, &alone_len) == 0 && keyed &&
		    keyed_len == row->compare_len && alone_len == row->compare_len &&
		    memcmp(keyed, row->compare, keyed_len) == 0 &&
		    memcmp(alone, row->compare, alone_len) == 0)
			c->same_bytes++;
		cJSON_Delete(summary);
		free(keyed);
		free(alone);
	}
	return 0;
}

static struct counts counted(struct store *s, long long job)
{
	struct counts c = {0};

	CHECK_EQ_INT(store_job_report_rows(s, job, true, REPORT_SUMMARY_VERSION, count_row, &c), 0);
	return c;
}

static char *compared(struct store *s, long long base, long long cand)
{
	cJSON *cmp = NULL;
	char *text = NULL;

	CHECK_EQ_INT(report_compare(s, base, cand, 3, &cmp), 0);
	if (cmp)
		text = cJSON_PrintUnformatted(cmp);
	cJSON_Delete(cmp);
	return text ? text : strdup("");
}

/* Runs SQL on the store's file through a connection of its own. */
static void store_file_exec(const char *sql)
{
	sqlite3 *db = NULL;

	CHECK_EQ_INT(sqlite3_open(db_path, &db), SQLITE_OK);
	CHECK_EQ_INT(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
}

static void test_made_apart(void)
{
	struct store *s = NULL;
	struct summarizer *z = NULL;
	struct counts c;
	cJSON *report = NULL;
	long long t = 1000000, agents[AGENTS], base, cand;
	char *first, *again;

	CHECK_EQ_INT(store_open(db_path, &test_store_options, &s), 0);
	agents[0] = fixture_enroll(s, "a", "{\"os\":\"win10\"}", t);
	agents[1] = fixture_enroll(s, "b", "{\"os\":\"winxp\"}", t);
	base = fixture_submit(s, job_text, t);
	for (int i = 0; i < AGENTS; i++)
		play(s, agents[i], 1.0, t + 10);
	cand = fixture_submit(s, job_text, t + 100);
	for (int i = 0; i < AGENTS; i++)
		play(s, agents[i], 1.1, t + 110);

	/* Nothing cached: compare computes what it needs per request, and
	 * caches nothing beside summaries that do not exist. */
	first = compared(s, base, cand);
	CHECK(strstr(first, "\"rows\"") != NULL && strstr(first, "\"status\":\"slower\"") != NULL);
	c = counted(s, base);
	CHECK_EQ_INT(c.rows, AGENTS);
	CHECK_EQ_INT(c.summaries, 0);

	/* A report computes and caches the summaries only. */
	CHECK_EQ_INT(report_job(s, base, false, &report), 0);
	cJSON_Delete(report);
	CHECK_EQ_INT(report_job(s, cand, false, &report), 0);
	cJSON_Delete(report);
	c = counted(s, base);
	CHECK_EQ_INT(c.summaries, AGENTS);
	CHECK_EQ_INT(c.compare, 0);

	/* Summaries without compare data: the same answer, and the data is
	 * cached by that compare, the same bytes as the summarizer's. */
	again = compared(s, base, cand);
	CHECK_EQ_STR(again, first);
	free(again);
	c = counted(s, base);
	CHECK_EQ_INT(c.compare, AGENTS);
	CHECK_EQ_INT(c.same_bytes, AGENTS);
	CHECK_EQ_INT(counted(s, cand).compare, AGENTS);
	again = compared(s, base, cand); /* from the cached data */
	CHECK_EQ_STR(again, first);
	free(again);

	/* A summary stored again without compare data keeps the data. */
	CHECK_EQ_INT(report_job(s, base, false, &report), 0);
	cJSON_Delete(report);
	CHECK_EQ_INT(counted(s, base).compare, AGENTS);

	/* Compare data of an older layout (the store then leaves the result
	 * text out): made again from the text, the same answer, cached. */
	store_file_exec("UPDATE result_summaries SET compare = zeroblob(64)");
	again = compared(s, base, cand);
	CHECK_EQ_STR(again, first);
	free(again);
	CHECK_EQ_INT(counted(s, base).same_bytes, AGENTS);

	/* Compare data lost: the summarizer makes it at start. */
	store_file_exec("UPDATE result_summaries SET compare = NULL");
	CHECK_EQ_INT(counted(s, base).compare, 0);
	CHECK_EQ_INT(summarizer_start(s, &z), 0);
	for (int i = 0; i < 3000 && (summarizer_pending(z) || summarizer_compare_pending(z)); i++)
		usleep(10000);
	CHECK_EQ_INT(summarizer_pending(z), 0);
	CHECK_EQ_INT(summarizer_compare_pending(z), 0);
	summarizer_stop(z);
	c = counted(s, base);
	CHECK_EQ_INT(c.compare, AGENTS);
	CHECK_EQ_INT(c.same_bytes, AGENTS);
	CHECK_EQ_INT(counted(s, cand).same_bytes, AGENTS);
	again = compared(s, base, cand);
	CHECK_EQ_STR(again, first);
	free(again);
	free(first);
	store_close(s);
}

/* Summaries lost: the summarizer makes them, then their compare data. */
static void test_summarizer_both(void)
{
	struct store *s = NULL;
	struct summarizer *z = NULL;
	struct counts c;

	store_file_exec("DELETE FROM result_summaries");
	CHECK_EQ_INT(store_open(db_path, &test_store_options, &s), 0);
	CHECK_EQ_INT(counted(s, 1).summaries, 0);
	CHECK_EQ_INT(summarizer_start(s, &z), 0);
	for (int i = 0; i < 3000 && (summarizer_pending(z) || summarizer_compare_pending(z)); i++)
		usleep(10000);
	summarizer_stop(z);
	for (long long job = 1; job <= 2; job++) {
		c = counted(s, job);
		CHECK_EQ_INT(c.summaries, AGENTS);
		CHECK_EQ_INT(c.compare, AGENTS);
		CHECK_EQ_INT(c.same_bytes, AGENTS);
	}
	store_close(s);
}

int main(void)
{
	char dir[FIXTURE_DIR_SIZE];

	fixture_dir_make("summary", dir);
	snprintf(db_path, sizeof(db_path), "%s/store.db", dir);
	test_made_apart();
	test_summarizer_both();
	return fixture_dir_finish(dir);
}
