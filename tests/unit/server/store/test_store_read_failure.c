/* A failed step is sticky (db.h): a list whose read fails part way, here
 * on a SQLite page of a table zeroed while the store was closed,
 * fails the list with an error instead of answering the rows read before
 * the failure as the whole list. */
#include "check.h"
#include "store/store.h"
#include "server/store_fixture.h"

#include "loadlab/err.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Jobs in the series: enough for the jobs table to fill many pages. */
#define JOBS 240
/* The cells of the first job (16 x 16): its tasks fill many pages too. */
#define CELLS 256

/* Zeroes one leaf page of TABLE in the store file PATH (closed): the
 * leaf at NUMERATOR / DENOMINATOR of the table's leaves in key order (dbstat's
 * path). Its page type becomes invalid, so a read that reaches it fails
 * with SQLITE_CORRUPT after the rows of the leaves before it. */
static void corrupt_leaf(const char *path, const char *table, int numerator, int denominator)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	long long pages[512], page_size = 0;
	int count = 0, fd;
	char *zero;

	CHECK_EQ_INT(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	CHECK_EQ_INT(sqlite3_prepare_v2(db, "PRAGMA page_size", -1, &st, NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		page_size = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	CHECK_EQ_INT(sqlite3_prepare_v2(db,
					"SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf'"
					" ORDER BY path",
					-1, &st, NULL),
		     SQLITE_OK);
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	while (count < 512 && sqlite3_step(st) == SQLITE_ROW)
		pages[count++] = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	CHECK(page_size > 0);
	CHECK(count >= 4); /* the leaf chosen has rows before and after it */
	if (page_size <= 0 || count < 4)
		return;
	zero = calloc(1, (size_t)page_size);
	fd = open(path, O_WRONLY);
	CHECK(fd >= 0);
	CHECK_EQ_INT((int)pwrite(fd, zero, (size_t)page_size,
				 (pages[count * numerator / denominator] - 1) * page_size),
		     (int)page_size);
	close(fd);
	free(zero);
}

/* The report rows' visitor: counts the rows it is given. */
static int count_row(void *context, const struct store_report_row *row)
{
	(void)row;
	++*(int *)context;
	return 0;
}

static void test_list_cut_short_fails(const char *path)
{
	struct store *s = NULL;
	cJSON *jobs = NULL;
	long long t = 1700000000000LL, matrix_job;
	char text[1024], values[256];
	int rows = 0;

	CHECK_EQ_INT(store_open(path, &test_store_options, &s), 0);
	/* Job 1: 16 x 16 cells, tasks 1..256 */
	values[0] = '\0';
	for (int i = 0; i < 16; i++)
		snprintf(values + strlen(values), sizeof(values) - strlen(values), "%s\"v%d\"", i ? "," : "",
			 i);
	snprintf(text, sizeof(text),
		 "{\"name\":\"wide\",\"family\":\"pe\",\"generator\":{\"dlls\":1,\"exports\":1},"
		 "\"variants\":[\"default\"],\"matrix\":{\"cells\":{\"a\":[%s],\"b\":[%s]}}}",
		 values, values);
	matrix_job = fixture_submit(s, text, t);
	CHECK(matrix_job > 0);
	for (int i = 0; i < JOBS; i++) {
		snprintf(text, sizeof(text),
			 "{\"name\":\"job%d\",\"family\":\"pe\",\"generator\":{\"dlls\":1,\"exports\":1},"
			 "\"variants\":[\"default\"],\"series\":\"nightly\"}",
			 i);
		CHECK(fixture_submit(s, text, t + i) > 0);
	}
	/* Whole before the damage. */
	CHECK_EQ_INT(store_series_jobs(s, "nightly", 0, &jobs), 0);
	CHECK_EQ_INT(cJSON_GetArraySize(jobs), JOBS);
	cJSON_Delete(jobs);
	jobs = NULL;
	CHECK_EQ_INT(store_job_report_rows(s, matrix_job, false, 1, count_row, &rows), 0);
	CHECK_EQ_INT(rows, CELLS);
	store_close(s);

	/* The middle of the series' jobs; a quarter into the tasks (job 1's). */
	corrupt_leaf(path, "jobs", 1, 2);
	corrupt_leaf(path, "tasks", 1, 4);
	s = NULL;
	CHECK_EQ_INT(store_open(path, &test_store_options, &s), 0);
	if (!s)
		return;
	/* The series' jobs: rows by the index, each read from the damaged table. */
	CHECK_EQ_INT(store_series_jobs(s, "nightly", 0, &jobs), LL_ESTORE);
	CHECK(jobs == NULL);
	CHECK(strlen(err_message(LL_ESTORE)) > 0);
	/* A job's report rows: the visitor saw part of them and is told. */
	rows = 0;
	CHECK_EQ_INT(store_job_report_rows(s, matrix_job, false, 1, count_row, &rows), LL_ESTORE);
	CHECK(rows > 0 && rows < CELLS);
	store_close(s);
}

int main(void)
{
	char dir[FIXTURE_DIR_SIZE];
	char path[300];

	fixture_dir_make("store-read-failure", dir);
	snprintf(path, sizeof(path), "%s/store.db", dir);
	test_list_cut_short_fails(path);
	return fixture_dir_finish(dir);
}
