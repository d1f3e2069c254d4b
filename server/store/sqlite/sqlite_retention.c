/*
 * sqlite_retention.c - retention of raw samples and compaction for the
 * SQLite backend (store.h, "retention and compaction").
 *
 * Retention rewrites a result's body without its raw samples
 * (result_prune.h) and stamps results.pruned_at; the pages it frees go to
 * the free list. Compaction returns them: the store is kept in
 * auto_vacuum=INCREMENTAL mode (sqlite_auto_vacuum.c), so
 * `PRAGMA incremental_vacuum` moves the free pages to the file's end and
 * drops them inside an ordinary write (no VACUUM, which would stop every
 * write for as long as it copies the whole file), and a checkpoint
 * (TRUNCATE) then copies the log into the file and cuts both. Pruning a
 * small result frees room inside its page rather than whole pages, which
 * only a full compaction (VACUUM, run alone by the writer) gives back.
 */
#include "sqlite_int.h"
#include "store/result_prune.h"

#include "loadlab/err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The results retention drops the samples of at ?1 (now), at most ?2:
 * results of the series' jobs past retain_days or older than the newest
 * retain_points jobs (cut: the oldest job kept), with a summary and compare
 * data, not pruned yet; never of a protected job: a series' newest done
 * job, the baseline its last check compared with, an open alert's job or
 * baseline. The per-series parts are computed once per statement. */
#define RETENTION_CANDIDATES                                                                           \
	"WITH ranked AS (SELECT j.series, j.id, ss.retain_points AS keep,"                             \
	"  row_number() OVER (PARTITION BY j.series ORDER BY j.id DESC) AS rn"                         \
	"  FROM jobs j JOIN series_settings ss ON ss.name = j.series WHERE ss.retain_points > 0),"     \
	" cut AS MATERIALIZED (SELECT series, id AS first_kept FROM ranked WHERE rn = keep),"          \
	" protected AS MATERIALIZED ("                                                                 \
	"  SELECT max(id) AS id FROM jobs WHERE state = 'done' AND series IS NOT NULL GROUP BY series" \
	"  UNION SELECT baseline_id FROM series_checks WHERE job_id IN"                                \
	"   (SELECT max(job_id) FROM series_checks GROUP BY series)"                                   \
	"  UNION SELECT job_id FROM alerts WHERE acked_at IS NULL"                                     \
	"  UNION SELECT baseline_id FROM alerts WHERE acked_at IS NULL)"                               \
	" SELECT r.id, r.body FROM series_settings ss"                                                 \
	" JOIN jobs j ON j.series = ss.name LEFT JOIN cut c ON c.series = ss.name"                     \
	" JOIN tasks t ON t.job_id = j.id JOIN results r ON r.task_id = t.id"                          \
	" JOIN result_summaries m ON m.result_id = r.id"                                               \
	" WHERE (ss.retain_days > 0 OR ss.retain_points > 0) AND r.pruned_at IS NULL"                  \
	" AND m.compare IS NOT NULL"                                                                   \
	" AND ((ss.retain_days > 0 AND j.created_at < ?1 - ss.retain_days * 86400000)"                 \
	"  OR j.id < coalesce(c.first_kept, 0))"                                                       \
	" AND j.id NOT IN (SELECT id FROM protected WHERE id IS NOT NULL)"                             \
	" ORDER BY r.id LIMIT ?2"

struct retention_op {
	long long now;
	int limit;
	int pruned;
};

static int op_retention(struct store *s, void *arg)
{
	struct retention_op *a = arg;
	sqlite3_stmt *pick = sq_prepare(s->writer, RETENTION_CANDIDATES);
	int rc = pick ? 0 : LL_ESTORE;

	if (pick) {
		sqlite3_bind_int64(pick, 1, a->now);
		sqlite3_bind_int(pick, 2, a->limit);
	}
	while (rc == 0 && sqlite3_step(pick) == SQLITE_ROW) {
		long long id = sqlite3_column_int64(pick, 0);
		const char *body = (const char *)sqlite3_column_text(pick, 1);
		char *pruned = NULL;
		/* A body that is not JSON is stamped and kept as it is. */
		if (result_prune_samples(body, (size_t)sqlite3_column_bytes(pick, 1), &pruned) < 0)
			pruned = NULL;
		rc = pruned ? sq_run(s->writer, "UPDATE results SET body = ?, pruned_at = ? WHERE id = ?",
				     "tii", pruned, a->now, id)
			    : sq_run(s->writer, "UPDATE results SET pruned_at = ? WHERE id = ?", "ii", a->now,
				     id);
		free(pruned);
		a->pruned += rc == 0;
	}
	sqlite3_finalize(pick);
	return rc;
}

int sqlite_retention_apply(struct store *s, long long now, int limit, int *ret_pruned)
{
	struct retention_op a = {now, limit, 0};
	int rc = store_write(s, op_retention, &a);

	if (rc < 0)
		return rc;
	*ret_pruned = a.pruned;
	return 0;
}

static int op_incremental_vacuum(struct store *s, void *arg)
{
	(void)arg;
	return sq_exec(s->writer, "PRAGMA incremental_vacuum");
}

/* Run alone, outside a transaction (store_write_alone()). */
static int op_vacuum(struct store *s, void *arg)
{
	(void)arg;
	return sq_exec(s->writer, "VACUUM");
}

/* The store's size in pages (those still in its log included). */
static long long pages_size(struct store *s)
{
	long long pages = 0, page_size = 0;

	sq_int(s->reader, &pages, 0, "PRAGMA page_count", "");
	sq_int(s->reader, &page_size, 0, "PRAGMA page_size", "");
	return pages * page_size;
}

/* The size of the store's file (its -wal not counted). */
static long long file_size(struct store *s)
{
	const char *path = sqlite3_db_filename(s->reader, "main");
	struct stat st;

	return path && stat(path, &st) == 0 ? (long long)st.st_size : 0;
}

int sqlite_compact(struct store *s, bool full, long long *ret_bytes_before, long long *ret_bytes_after)
{
	long long before, after;
	int rc;

	pthread_mutex_lock(&s->reader_lock);
	before = pages_size(s);
	pthread_mutex_unlock(&s->reader_lock);
	if ((rc = full ? store_write_alone(s, op_vacuum, NULL)
		       : store_write(s, op_incremental_vacuum, NULL)) < 0)
		return rc;
	/* The writer's pages are in the log: the checkpoint writes them and
	 * truncates the file to its pages (waiting for a batch in progress). */
	pthread_mutex_lock(&s->reader_lock);
	rc = sq_exec(s->reader, "PRAGMA wal_checkpoint(TRUNCATE)");
	after = file_size(s);
	pthread_mutex_unlock(&s->reader_lock);
	if (rc < 0)
		return rc;
	*ret_bytes_before = before;
	*ret_bytes_after = after;
	return 0;
}
