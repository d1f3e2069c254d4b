/*
 * sqlite_backup.c - store_backup() and store_restore() for the SQLite
 * backend (store.h, docs/operations.md).
 *
 * A backup opens the store file beside the running daemon (its own
 * connection: the daemon is not asked, and a stopped daemon's store is
 * backed up the same way) and copies it with SQLite's online backup API
 * in a single sqlite3_backup_step(-1): the whole copy is read inside one
 * read transaction, so it is the store as of one commit. In WAL mode a
 * reader does not block the writer: the daemon's writes go on, only its
 * checkpoints cannot pass the snapshot until the copy ends (the WAL grows
 * meanwhile). Steps of a few pages would let the writer in between, and a
 * change by another connection restarts such a backup from its first page.
 *
 * The copy goes to TO.partial, is switched to journal_mode=DELETE (one
 * self-contained file), checked (PRAGMA integrity_check), closed (synced)
 * and renamed to TO; the folder is synced after the rename.
 */
#include "sqlite_int.h"

#include "loadlab/err.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Syncs the folder that holds PATH (a rename into it is then durable). */
static void sync_folder_of(const char *path)
{
	char copy[PATH_MAX];
	int fd;

	snprintf(copy, sizeof(copy), "%s", path);
	fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

/* 0 when DB passes PRAGMA integrity_check, else LL_EFORMAT naming the
 * first problem SQLite found. */
static int check_integrity(sqlite3 *db, const char *what)
{
	sqlite3_stmt *stmt = NULL;
	int rc;

	if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &stmt, NULL) != SQLITE_OK)
		rc = err_set(LL_EFORMAT, "%s is not a loadlab store: %s.", what, sqlite3_errmsg(db));
	else if (sqlite3_step(stmt) != SQLITE_ROW)
		rc = err_set(LL_EFORMAT, "%s cannot be checked: %s.", what, sqlite3_errmsg(db));
	else if (strcmp((const char *)sqlite3_column_text(stmt, 0), "ok") != 0)
		rc = err_set(LL_EFORMAT, "%s fails PRAGMA integrity_check: %s.", what,
			     (const char *)sqlite3_column_text(stmt, 0));
	else
		rc = 0;
	sqlite3_finalize(stmt);
	return rc;
}

/* One count (a query's first column) to *RET; LL_EFORMAT when the table
 * is missing (not a loadlab store). */
static int count_of(sqlite3 *db, const char *sql, long long *ret)
{
	sqlite3_stmt *stmt = NULL;
	int rc = LL_EFORMAT;

	if (sqlite3_prepare_v2(db, sql, -1, &stmt, NULL) == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW) {
		*ret = sqlite3_column_int64(stmt, 0);
		rc = 0;
	}
	sqlite3_finalize(stmt);
	return rc < 0 ? err_set(rc, "Not a loadlab store (%s: %s).", sql, sqlite3_errmsg(db)) : 0;
}

static int count_rows(sqlite3 *db, struct store_counts *ret)
{
	struct store_counts c = {0};
	int rc;

	if ((rc = count_of(db, "PRAGMA user_version", &c.schema_version)) < 0 ||
	    (rc = count_of(db, "SELECT count(*) FROM jobs", &c.jobs)) < 0 ||
	    (rc = count_of(db, "SELECT count(*) FROM tasks", &c.tasks)) < 0 ||
	    (rc = count_of(db, "SELECT count(*) FROM results", &c.results)) < 0 ||
	    (rc = count_of(db, "SELECT count(*) FROM agents", &c.agents)) < 0 ||
	    (rc = count_of(db, "SELECT count(*) FROM series_settings", &c.series_settings)) < 0 ||
	    (rc = count_of(db, "SELECT count(*) FROM alerts", &c.alerts)) < 0)
		return rc;
	if (c.schema_version < 1)
		return err_set(LL_EFORMAT, "Not a loadlab store (user_version 0).");
	*ret = c;
	return 0;
}

/* Copies the database FROM (opened with FROM_FLAGS) to the new file TO in
 * one backup step, then makes TO a rollback-journal file, checks and
 * counts it. TO is removed on failure. */
static int copy_checked(const char *from, int from_flags, const char *to, const char *what,
			struct store_counts *ret_counts)
{
	sqlite3 *src = NULL, *dst = NULL;
	sqlite3_backup *backup;
	int rc = 0, step;

	if (sqlite3_open_v2(from, &src, from_flags, NULL) != SQLITE_OK) {
		rc = err_set(LL_EIO, "Cannot open %s: %s.", from,
			     src ? sqlite3_errmsg(src) : "out of memory");
		goto out;
	}
	sqlite3_busy_timeout(src, 10000);
	if (sqlite3_open_v2(to, &dst, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
		rc = err_set(LL_EIO, "Cannot create %s: %s.", to,
			     dst ? sqlite3_errmsg(dst) : "out of memory");
		goto out;
	}
	backup = sqlite3_backup_init(dst, "main", src, "main");
	if (!backup) {
		rc = err_set(LL_EIO, "Cannot start the copy of %s: %s.", from, sqlite3_errmsg(dst));
		goto out;
	}
	do
		step = sqlite3_backup_step(backup, -1);
	while (step == SQLITE_BUSY || step == SQLITE_LOCKED);
	sqlite3_backup_finish(backup);
	if (step != SQLITE_DONE) {
		rc = err_set(step == SQLITE_FULL ? LL_ENOSPACE : LL_EIO, "Cannot copy %s: %s.", from,
			     sqlite3_errstr(step));
		goto out;
	}
	if (sqlite3_exec(dst, "PRAGMA journal_mode=DELETE", NULL, NULL, NULL) != SQLITE_OK) {
		rc = err_set(LL_EIO, "Cannot finish %s: %s.", to, sqlite3_errmsg(dst));
		goto out;
	}
	if ((rc = check_integrity(dst, what)) < 0 || (rc = count_rows(dst, ret_counts)) < 0)
		goto out;
out:
	sqlite3_close(src);
	if (sqlite3_close(dst) != SQLITE_OK && rc == 0)
		rc = err_set(LL_EIO, "Cannot close %s.", to);
	if (rc < 0)
		unlink(to);
	return rc;
}

/* Checks the backup FROM, read-only, and counts it. */
static int check_backup(const char *from, struct store_counts *ret_counts)
{
	sqlite3 *db = NULL;
	int rc;

	if (sqlite3_open_v2(from, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		rc = err_set(LL_EFORMAT, "Cannot open the backup %s.", from);
	else if ((rc = check_integrity(db, "The backup")) == 0)
		rc = count_rows(db, ret_counts);
	sqlite3_close(db);
	return rc;
}

static int refuse_existing(const char *path)
{
	struct stat st;

	if (stat(path, &st) == 0)
		return err_set(LL_ECONFLICT, "%s exists already; a backup or restore never replaces a file.",
			       path);
	return 0;
}

int sqlite_backup(const char *location, const char *to, struct store_counts *ret_counts)
{
	char partial[PATH_MAX];
	struct stat st;
	int rc;

	if ((rc = refuse_existing(to)) < 0)
		return rc;
	if (stat(location, &st) < 0)
		return err_set(LL_ENOTFOUND, "No store at %s: %s.", location, strerror(errno));
	if (snprintf(partial, sizeof(partial), "%s.partial", to) >= (int)sizeof(partial))
		return err_set(LL_EINVAL, "The path %s is too long.", to);
	unlink(partial); /* an earlier backup that was interrupted */
	/* READWRITE (never CREATE): a reader of a WAL store may need to
	 * rebuild its -shm index when the daemon is not running. */
	if ((rc = copy_checked(location, SQLITE_OPEN_READWRITE, partial, "The copy", ret_counts)) < 0)
		return rc;
	if (rename(partial, to) < 0) {
		rc = err_set(LL_EIO, "Cannot rename the copy to %s: %s.", to, strerror(errno));
		unlink(partial);
		return rc;
	}
	sync_folder_of(to);
	return 0;
}

int sqlite_restore(const char *from, const char *location, struct store_counts *ret_counts)
{
	struct stat st;
	int rc;

	if ((rc = refuse_existing(location)) < 0)
		return rc;
	if (stat(from, &st) < 0)
		return err_set(LL_ENOTFOUND, "No backup at %s: %s.", from, strerror(errno));
	/* The backup is checked before anything is written, and the copy after. */
	if ((rc = check_backup(from, ret_counts)) < 0 ||
	    (rc = copy_checked(from, SQLITE_OPEN_READONLY, location, "The restored store", ret_counts)) < 0)
		return rc;
	chmod(location, 0600);
	sync_folder_of(location);
	return 0;
}
