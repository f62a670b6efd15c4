/*
 * teststore: which store a backend-neutral test opens. The same test program runs on each
 * backend: on SQLite by default, on PostgreSQL when ATTEST_TEST_PG names a server the test may
 * create databases on (tests/scaleout/store_pg.sh starts one and runs the store tests again
 * with it):
 *
 *   ATTEST_TEST_PG=postgresql://postgres@127.0.0.1:PORT   (no database: one per store below)
 *
 * teststore_uri() gives the URI of a new, empty store named `name`: sqlite:DIR/NAME.db, or on
 * PostgreSQL a database made for it (dropped first if a run before left one). The pg_* helpers
 * run SQL on such a database outside the store, as tests/lib/sqlfile.h does on a SQLite file.
 */
#ifndef TESTS_LIB_TESTSTORE_H
#define TESTS_LIB_TESTSTORE_H

#include <stdbool.h>
#include <stddef.h>

/* The server of ATTEST_TEST_PG, or NULL: the tests run on SQLite. */
const char *teststore_pg(void);

/* "sqlite" or "postgresql", for messages. */
const char *teststore_backend(void);

/* The URI of a new, empty store; 0, or -1 (printed on stderr). */
int teststore_uri(const char *dir, const char *name, char *out, size_t cap);

/* On the PostgreSQL database of store `name`: the first column of the first row as an int;
 * runs SQL. 0, or -1. */
int teststore_pg_int(const char *name, const char *sql, int *v);
int teststore_pg_exec(const char *name, const char *sql);

/* What store_backup() handed over (fd, read to its end) written to a new file at path; 0, -1. */
int teststore_save(int fd, const char *path);

#endif
