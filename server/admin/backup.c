/* backup.c - loadlabd backup and loadlabd restore (admin.h). */
#include "admin.h"
#include "store/blob_files.h"
#include "store/store.h"

#include "loadlab/err.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct admin_args {
	const char *file; /* --to or --from */
	char data_dir[PATH_MAX];
	char db[PATH_MAX];
};

static int usage(const char *name, const char *problem)
{
	fprintf(stderr,
		"loadlabd %s: %s\n"
		"usage: loadlabd backup --to FILE [--data-dir DIR] [--db PATH]\n"
		"       loadlabd restore --from FILE --data-dir DIR [--db PATH]\n",
		name, problem);
	return 2;
}

/* Reads FILE_FLAG, --data-dir and --db (each once); the defaults are
 * loadlabd's. Returns 0 or usage()'s 2. */
static int parse(int argc, char **argv, const char *file_flag, bool need_data_dir, struct admin_args *ret)
{
	const char *data_dir = getenv("LOADLAB_DATA_DIR"), *db = getenv("LOADLAB_DB");
	bool data_dir_given = false;

	ret->file = NULL;
	for (int i = 1; i < argc; i++) {
		const char **slot = strcmp(argv[i], file_flag) == 0      ? &ret->file
				    : strcmp(argv[i], "--data-dir") == 0 ? &data_dir
				    : strcmp(argv[i], "--db") == 0       ? &db
									 : NULL;
		if (!slot)
			return usage(argv[0], "unknown argument");
		if (i + 1 >= argc || !argv[i + 1][0])
			return usage(argv[0], "a flag without its value");
		data_dir_given |= slot == &data_dir;
		*slot = argv[++i];
	}
	if (!ret->file)
		return usage(argv[0], strcmp(file_flag, "--to") == 0 ? "--to FILE is needed"
								     : "--from FILE is needed");
	if (need_data_dir && !data_dir_given)
		return usage(argv[0], "--data-dir DIR is needed (the folder to restore into)");
	if (!data_dir || !data_dir[0])
		data_dir = "./var";
	if ((size_t)snprintf(ret->data_dir, sizeof(ret->data_dir), "%s", data_dir) >= sizeof(ret->data_dir) ||
	    (size_t)snprintf(ret->db, sizeof(ret->db), "%s%s", db && db[0] ? db : data_dir,
			     db && db[0] ? "" : "/loadlab.db") >= sizeof(ret->db) ||
	    strlen(ret->file) + sizeof(".blobs") > PATH_MAX)
		return usage(argv[0], "a path is too long");
	return 0;
}

static void print_counts(const char *what, const char *file, const struct store_counts *c,
			 const struct blob_copy_counts *b)
{
	printf("loadlabd: %s %s: integrity_check ok, schema_version %lld, %lld jobs, %lld tasks, "
	       "%lld results, %lld agents, %lld series settings, %lld alerts; blobs: %lld copied "
	       "(%lld bytes), %lld there already\n",
	       what, file, c->schema_version, c->jobs, c->tasks, c->results, c->agents, c->series_settings,
	       c->alerts, b->copied, b->bytes, b->kept);
}

/* A backup (RESTORE false: the store at --db to FILE, DATA_DIR/blobs to
 * FILE.blobs) or a restore (FILE to the store, FILE.blobs to the blobs):
 * the store first, then the blobs; a failure of the blobs removes the
 * store's copy again. */
static int copy_lab(int argc, char **argv, bool restore)
{
	const char *name = restore ? "restore" : "backup";
	struct admin_args a;
	struct store_counts counts;
	struct blob_copy_counts blobs = {0};
	char data_blobs[PATH_MAX + 8], file_blobs[PATH_MAX + 8];
	int rc = parse(argc, argv, restore ? "--from" : "--to", restore, &a);

	if (rc)
		return rc;
	umask(077);
	snprintf(data_blobs, sizeof(data_blobs), "%s/blobs", a.data_dir);
	snprintf(file_blobs, sizeof(file_blobs), "%s.blobs", a.file);
	if (restore && mkdir(a.data_dir, 0700) < 0 && errno != EEXIST) {
		fprintf(stderr, "loadlabd restore: cannot create %s: %s\n", a.data_dir, strerror(errno));
		return 1;
	}
	rc = restore ? store_restore(a.file, a.db, &counts) : store_backup(a.db, a.file, &counts);
	if (rc < 0) {
		fprintf(stderr, "loadlabd %s: %s\n", name, err_message(rc));
		return 1;
	}
	rc = restore ? blobs_copy_folder(file_blobs, data_blobs, &blobs)
		     : blobs_copy_folder(data_blobs, file_blobs, &blobs);
	if (rc < 0) {
		fprintf(stderr, "loadlabd %s: the blobs failed: %s (the store's copy is removed)\n", name,
			err_message(rc));
		unlink(restore ? a.db : a.file);
		return 1;
	}
	print_counts(restore ? "restored" : "backup", restore ? a.db : a.file, &counts, &blobs);
	return 0;
}

int admin_backup(int argc, char **argv)
{
	return copy_lab(argc, argv, false);
}

int admin_restore(int argc, char **argv)
{
	return copy_lab(argc, argv, true);
}
