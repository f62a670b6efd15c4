/* SQL on a store's file for tests; the contract is in sqlfile.h. */
#include "tests/lib/sqlfile.h"

#include <stddef.h>

#include <sqlite3.h>

int sql_int(const char *path, const char *sql, int *v)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *s = NULL;
	int ok = sqlite3_open(path, &db) == SQLITE_OK &&
		 sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK &&
		 sqlite3_step(s) == SQLITE_ROW;

	if (ok)
		*v = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	sqlite3_close(db);
	return ok ? 0 : -1;
}

int sql_exec(const char *path, const char *sql)
{
	sqlite3 *db = NULL;
	int rc = sqlite3_open(path, &db);

	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	sqlite3_close(db);
	return rc == SQLITE_OK ? 0 : -1;
}
