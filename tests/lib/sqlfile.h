/*
 * sqlfile: one SQL statement on a SQLite file, outside the store, for tests that look at or
 * damage what the store wrote. Each call opens and closes the database.
 */
#ifndef TESTS_LIB_SQLFILE_H
#define TESTS_LIB_SQLFILE_H

/* The first column of the first row of `sql` as an int; 0, or -1 on any failure. */
int sql_int(const char *path, const char *sql, int *v);

/* Runs `sql` (one or more statements); 0 or -1. */
int sql_exec(const char *path, const char *sql);

#endif
