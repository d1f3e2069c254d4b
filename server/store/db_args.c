/*
 * db_args.c - argument lists bound on a driver's statement and the first
 * column read as an integer (db_args.h).
 */
#include "db_args.h"

#include "store.h"

#include "loadlab/err.h"

void db_args_bind(const struct db_stmt_ops *ops, void *stmt, const char *types, va_list ap)
{
	for (int i = 0; types[i]; i++) {
		if (types[i] == 'i') {
			ops->bind_int64(stmt, i + 1, va_arg(ap, long long));
		} else if (types[i] == 'n') {
			long long n = va_arg(ap, long long);
			if (n)
				ops->bind_int64(stmt, i + 1, n);
			else
				ops->bind_null(stmt, i + 1);
		} else if (types[i] == 'd') {
			ops->bind_double(stmt, i + 1, va_arg(ap, double));
		} else if (types[i] == 't') {
			ops->bind_text(stmt, i + 1, va_arg(ap, const char *), -1); /* NULL: a text NULL */
		} else {
			ops->bind_blob(stmt, i + 1, va_arg(ap, const unsigned char *), STORE_TOKEN_HASH_SIZE);
		}
	}
}

int db_args_int(const struct db_stmt_ops *ops, void *stmt, long long *ret, long long default_value,
		const char *types, va_list ap)
{
	int rc;

	db_args_bind(ops, stmt, types, ap);
	rc = ops->step(stmt);
	if (ret && rc == DB_ROW)
		*ret = ops->column_null(stmt, 0) ? default_value : ops->column_int64(stmt, 0);
	else if (ret && rc == DB_DONE)
		*ret = default_value;
	return rc;
}

int db_args_on(const struct db_stmt_ops *ops, void *conn, long long *ret, long long default_value,
	       const char *sql, const char *types, ...)
{
	void *stmt = ops->cached(conn, sql);
	va_list ap;
	int rc;

	if (!stmt)
		return LL_ESTORE; /* cached() said why */
	va_start(ap, types);
	rc = db_args_int(ops, stmt, ret, default_value, types, ap);
	va_end(ap);
	ops->uncache(conn, stmt);
	return rc < 0 ? rc : 0;
}
