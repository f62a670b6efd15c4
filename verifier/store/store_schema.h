/*
 * store_schema: the store's schema, one list of numbered forward migrations that every driver
 * runs in order when it opens a database (store_sqlite_schema.c, store_pg_schema.c: each keeps
 * the number of the last step applied in its own way, and runs each step in a transaction of
 * its own together with the number it reaches).
 *
 * A step is written once, in portable SQL spelt with SQLite's types (INTEGER, BLOB, INTEGER
 * PRIMARY KEY AUTOINCREMENT), which a driver of another dialect translates as it runs the step
 * (PostgreSQL's table of them: store_pg_schema.c). Where the dialects truly differ, the step
 * gives each dialect its own text instead (translated too, so the parts they share are one
 * macro). A step may also have the SQLite driver convert what
 * older SQLite verifiers wrote (store_old_rows): no database of another dialect predates them.
 *
 * Rules for a new migration: append it (never edit or reorder one that shipped), make it bring
 * a database of the previous version to the new one in every dialect, and raise
 * STORE_SCHEMA_VERSION. tests/unit/test_store_migrate.c checks that every step has a text for
 * every dialect, and upgrades a SQLite database of every older version kept in tests/data/.
 */
#ifndef VERIFIER_STORE_SCHEMA_H
#define VERIFIER_STORE_SCHEMA_H

#define STORE_SCHEMA_VERSION 14

enum store_dialect { STORE_DIALECT_SQLITE, STORE_DIALECT_PG, STORE_DIALECTS };

/* What older SQLite verifiers wrote that a step converts, besides its text (SQLite only). */
enum store_old_rows {
	STORE_OLD_ROWS_NONE,
	STORE_OLD_BOOT_STATE_LAYOUT1, /* boot states copied from a struct's bytes */
	STORE_OLD_SHARED_EKS,         /* active agents sharing one EK: named in the log, kept */
	STORE_OLD_ESCAPED_PATHS,      /* violation paths written as display text */
};

struct store_migration {
	const char *what;
	const char *sql;                     /* portable; NULL where every dialect has its own */
	const char *own[STORE_DIALECTS];     /* a dialect's own text, instead of sql */
	enum store_old_rows old_rows;
};

/* Step i brings a database of version i to version i + 1. */
extern const struct store_migration store_migrations[STORE_SCHEMA_VERSION];

/* The text of step i in dialect d (its own, else the portable one); NULL if it has none. */
const char *store_migration_sql(unsigned i, enum store_dialect d);

#endif
