/* store_pg: private to the PostgreSQL backend (store_pg.c, store_pg_schema.c). */
#ifndef VERIFIER_STORE_PG_H
#define VERIFIER_STORE_PG_H

#include <stdint.h>

#include <libpq-fe.h>

/* Runs SQL without parameters or rows; 0, or -EIO logged with the server's SQLSTATE and message. */
int store_pg_exec(PGconn *c, const char *sql);

/* Logs a failed result (SQLSTATE and message, or the connection's error) with `what`; -EIO. */
int store_pg_fail(PGconn *c, const PGresult *r, const char *what);

/*
 * A migration's portable text (store_schema.h) in PostgreSQL's types: INTEGER PRIMARY KEY
 * AUTOINCREMENT, INTEGER and BLOB as whole words outside quoted literals become an identity
 * column, BIGINT and BYTEA; WITHOUT ROWID goes. Malloc'd; NULL if out of memory.
 */
char *store_pg_ddl(const char *sql);

/*
 * Brings the database to STORE_SCHEMA_VERSION (store_schema.h): each missing migration in its
 * own transaction with the version it reaches, under an advisory lock so that verifiers
 * starting together on one database migrate it once. 0; -EPROTO (logged) if the database is newer than
 * this build; -EIO (logged, that migration rolled back) if a migration fails. `where` names the
 * database in messages.
 */
int store_pg_migrate(PGconn *c, const char *where);

#endif
