/* migrate.c - loadlabd migrate (admin.h, docs/operations.md): a SQLite
 * store into an empty PostgreSQL database (store_migrate()), and with
 * --blobs-from/--blobs-to the blob folder copied as files. */
#include "admin.h"
#include "store/blob_files.h"
#include "store/store.h"

#include "loadlab/err.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static int usage(const char *problem)
{
	fprintf(stderr,
		"loadlabd migrate: %s\n"
		"usage: loadlabd migrate --from PATH.db --to postgresql://... "
		"[--blobs-from DIR --blobs-to DIR]\n",
		problem);
	return 2;
}

int admin_migrate(int argc, char **argv)
{
	const char *from = NULL, *to = NULL, *blobs_from = NULL, *blobs_to = NULL;
	struct store_migrate_counts c;
	struct blob_copy_counts blobs = {0};
	int rc;

	for (int i = 1; i < argc; i++) {
		const char **slot = !strcmp(argv[i], "--from")         ? &from
				    : !strcmp(argv[i], "--to")         ? &to
				    : !strcmp(argv[i], "--blobs-from") ? &blobs_from
				    : !strcmp(argv[i], "--blobs-to")   ? &blobs_to
								       : NULL;
		if (!slot)
			return usage("unknown argument");
		if (i + 1 >= argc || !argv[i + 1][0])
			return usage("a flag without its value");
		if (*slot)
			return usage("a flag given twice");
		*slot = argv[++i];
	}
	if (!from || !to)
		return usage("--from PATH.db and --to postgresql://... are needed");
	if (!blobs_from != !blobs_to)
		return usage("--blobs-from and --blobs-to go together");
	rc = store_migrate(from, to, &c);
	for (int i = 0; (rc == 0 || c.mismatches) && i < c.tables; i++)
		printf("loadlabd: migrate %-18s %lld rows -> %lld%s\n", c.table[i].name, c.table[i].from,
		       c.table[i].to, c.table[i].from == c.table[i].to ? "" : "  MISMATCH");
	if (rc < 0) {
		fprintf(stderr, "loadlabd migrate: %s\n", err_message(rc));
		return 1;
	}
	if (blobs_from) {
		umask(077);
		rc = blobs_copy_folder(blobs_from, blobs_to, &blobs);
		if (rc < 0) {
			fprintf(stderr,
				"loadlabd migrate: the store is migrated, but the blobs failed: %s "
				"(copy %s to %s again)\n",
				err_message(rc), blobs_from, blobs_to);
			return 1;
		}
	}
	printf("loadlabd: migrated %s to PostgreSQL: schema_version %lld, %d tables, counts equal; "
	       "blobs: %lld copied (%lld bytes), %lld there already\n",
	       from, c.schema_version, c.tables, blobs.copied, blobs.bytes, blobs.kept);
	return 0;
}
