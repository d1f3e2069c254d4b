/*
 * schema_steps.c - the migrations applied in order (schema_steps.h).
 */
#include "schema_steps.h"

#include "loadlab/err.h"
#include "loadlab/log.h"

#include <stdio.h>

int schema_steps_apply(const struct schema_steps *steps, void *conn, const char *const *migrations,
		       int version, int latest)
{
	char sql[96], reached[16];

	for (int v = version; v < latest; v++) {
		snprintf(sql, sizeof(sql), steps->set_version, v + 1);
		if (steps->exec(conn, steps->begin) < 0)
			return LL_ESTORE;
		if (steps->exec(conn, migrations[v]) < 0 || steps->exec(conn, sql) < 0) {
			steps->exec(conn, "ROLLBACK");
			return LL_ESTORE;
		}
		if (steps->exec(conn, "COMMIT") < 0)
			return LL_ESTORE;
		snprintf(reached, sizeof(reached), "%d", v + 1);
		log_event(LOG_INFO, "store_migrated", "schema_version", reached, NULL);
	}
	return 0;
}
