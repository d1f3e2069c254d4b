/*
 * sqlite_auto_vacuum.c - keeps the store in auto_vacuum=INCREMENTAL mode,
 * which compaction needs (sqlite_retention.c): a new store is made so
 * when it is opened (sqlite_writer.c, open_connection()), one made by an
 * earlier loadlabd by compaction_prepare() after its migrations.
 */
#include "sqlite_int.h"

#include "loadlab/err.h"
#include "loadlab/log.h"

int compaction_prepare(sqlite3 *db)
{
	long long mode = 0;

	if (sq_int(db, &mode, 0, "PRAGMA auto_vacuum", "") < 0)
		return LL_ESTORE;
	if (mode == 2)
		return 0;
	/* A store made before auto_vacuum was set: one VACUUM applies it. */
	if (sq_exec(db, "PRAGMA auto_vacuum=INCREMENTAL") < 0 || sq_exec(db, "VACUUM") < 0)
		return err_set(LL_ESTORE, "Cannot convert the store for compaction (VACUUM failed).");
	log_event(LOG_INFO, "store_vacuumed", "auto_vacuum", "incremental", NULL);
	return 0;
}
