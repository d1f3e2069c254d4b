/*
 * store_stats.c - the store's figures and its liveness check, written once
 * over the statement layer (db.h): tasks and jobs by state, agents,
 * results and pending webhooks, counted in one snapshot. The backend adds
 * what only it knows, the store's size and its commits
 * (store_backend.h's stats).
 */
#include "store/db.h"
#include "store/store_backend.h"
#include "store/store_stats.h"

#include "loadlab/err.h"

#include <string.h>

/* Where a state's count (column 1) goes and, when SECOND is not NULL,
 * column 2. */
struct state_count {
	const char *state;
	long long *count, *second;
};

static void add_state(void *context, struct db_stmt *row)
{
	const char *state = db_column_text(row, 0);

	for (const struct state_count *c = context; c->state && state; c++)
		if (strcmp(state, c->state) == 0) {
			*c->count = db_column_int64(row, 1);
			if (c->second)
				*c->second = db_column_int64(row, 2);
			return;
		}
}

int store_stats_count(struct store *s, long long now, struct store_stats *st)
{
	long long seen = now - store_options_of(s)->offline_after_ms;
	int rc;

	db_snapshot_begin(s);
	rc = db_read_rows(s,
			  "SELECT state, count(*), sum(CASE WHEN not_before <= ? THEN 1 ELSE 0 END)"
			  " FROM tasks GROUP BY state",
			  add_state,
			  (struct state_count[]){{"queued", &st->tasks_queued, &st->tasks_ready},
						 {"leased", &st->tasks_leased, NULL},
						 {"done", &st->tasks_done, NULL},
						 {"dead", &st->tasks_dead, NULL},
						 {"cancelled", &st->tasks_cancelled, NULL},
						 {NULL, NULL, NULL}},
			  "i", now);
	if (rc == 0)
		rc = db_read_each(s, "SELECT state, count(*) FROM jobs GROUP BY state", add_state,
				  (struct state_count[]){{"queued", &st->jobs_queued, NULL},
							 {"running", &st->jobs_running, NULL},
							 {"done", &st->jobs_done, NULL},
							 {"failed", &st->jobs_failed, NULL},
							 {"cancelled", &st->jobs_cancelled, NULL},
							 {NULL, NULL, NULL}});
	if (rc == 0)
		rc = db_int(s, &st->agents_quarantined, 0,
			    "SELECT count(*) FROM agents WHERE quarantined != 0", "");
	if (rc == 0)
		rc = db_int(s, &st->agents_online, 0,
			    "SELECT count(*) FROM agents WHERE quarantined = 0 AND last_seen >= ?", "i",
			    seen);
	if (rc == 0)
		rc = db_int(s, &st->agents_offline, 0,
			    "SELECT count(*) FROM agents WHERE quarantined = 0"
			    " AND (last_seen IS NULL OR last_seen < ?)",
			    "i", seen);
	if (rc == 0)
		rc = db_int(s, &st->results, 0, "SELECT count(*) FROM results", "");
	if (rc == 0)
		rc = db_int(s, &st->webhooks_pending, 0,
			    "SELECT count(*) FROM alerts WHERE webhook_due IS NOT NULL", "");
	{
		int end = db_snapshot_end(s);
		return rc < 0 ? rc : end;
	}
}

int store_check(struct store *s)
{
	long long one = 0;
	int rc, end;

	db_read_begin(s);
	rc = db_int(s, &one, 0, "SELECT 1", "");
	end = db_read_end(s);
	return rc < 0 || end < 0 || one != 1 ? LL_ESTORE : 0;
}
