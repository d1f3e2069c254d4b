/*
 * admin.h - loadlabd's subcommands for operators (docs/operations.md):
 *
 *   loadlabd backup --to FILE [--data-dir DIR] [--db PATH]
 *   loadlabd restore --from FILE --data-dir DIR [--db PATH]
 *   loadlabd migrate --from PATH.db --to postgresql://... [--blobs-from DIR --blobs-to DIR]
 *
 * A backup is FILE, a SQLite copy of the store as of one commit
 * (store_backup()), and FILE.blobs/, the blobs laid out as DATA_DIR/blobs/
 * (blobs_copy_folder()). The store is copied first: every blob it
 * references was stored before its job was, so the blobs copied after it
 * hold them all. The backup opens the store file itself, beside the
 * running daemon: no token, no request, the same for a stopped daemon.
 *
 * --data-dir and --db default as loadlabd's own (./var, DATA_DIR/loadlab.db;
 * LOADLAB_DATA_DIR and LOADLAB_DB too). Each prints one line of what it
 * did to stdout and returns the process's exit code: 0, 1 when the work
 * failed (a message on stderr; nothing is left half made), 2 for bad
 * arguments.
 */
#ifndef LOADLAB_SERVER_ADMIN_H
#define LOADLAB_SERVER_ADMIN_H

/* ARGV[0] is the subcommand's name. */
int admin_backup(int argc, char **argv);
int admin_restore(int argc, char **argv);
/* A SQLite store into an empty PostgreSQL database (store_migrate()). */
int admin_migrate(int argc, char **argv);

#endif
