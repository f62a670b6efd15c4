/*
 * store_driver: what an SQL database gives the store, for store_sql.c alone.
 *
 * The store's rules (what enrolling, a round, a decision or a purge writes), its transactions
 * and its group commit are written once, in store_sql.c, over this seam; a driver only moves
 * statements and rows: it connects, opens and ends transactions, runs statement N of the
 * statement table (store_statements.h) with typed parameters and hands back the rows. A driver
 * knows nothing of agents or rounds.
 *
 * Connections: acquire() gives the caller a connection of its own until release(); a driver
 * serializes what it must (one SQLite connection behind a mutex, or a pool). On a connection,
 * one statement runs at a time: query() starts it, step() moves to each row (the columns are
 * read with col_*() until the next step() or reset()), reset() ends it. Every statement is
 * reset before the next query() and before release(). Errors are logged by the driver with the
 * statement's `what` and the database's own code and message, and returned as -EIO (-ENOSPC
 * when the database's disk is full, if the driver can tell).
 *
 * Transactions: begin() opens one that writes, serialized against every other writer that
 * takes the same `lock` (SQLite serializes all writers anyway; a server database takes an
 * advisory lock for the decisions that read before they write). Savepoints confine one
 * round's failure inside a batch. rollback() is a no-op outside a transaction.
 */
#ifndef VERIFIER_STORE_DRIVER_H
#define VERIFIER_STORE_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "verifier/store/store_statements.h"

struct store_driver; /* a driver's own state */
struct store_conn;   /* one of its connections */

/* A parameter of a statement: ?1 is the first of the array. */
enum store_value_type { STORE_V_NULL, STORE_V_INT, STORE_V_TEXT, STORE_V_BLOB };

struct store_value {
	enum store_value_type type;
	int64_t i;
	const void *p; /* TEXT: NUL-terminated; BLOB: len bytes */
	size_t len;
};

/* NULL text is SQL NULL, and so is a BLOB of no pointer (one of no bytes is empty). */
static inline struct store_value store_value_text(const char *s)
{
	return (struct store_value){ .type = s ? STORE_V_TEXT : STORE_V_NULL, .p = s };
}

#define SV_NULL ((struct store_value){ .type = STORE_V_NULL })
#define SV_INT(v) ((struct store_value){ .type = STORE_V_INT, .i = (int64_t)(v) })
#define SV_TEXT(s) store_value_text(s)
#define SV_BLOB(b, n) ((struct store_value){ .type = STORE_V_BLOB, .p = (b), .len = (n) })

/* Which decisions a write transaction is serialized against (see above). */
enum store_lock {
	STORE_LOCK_NONE,   /* rounds, liveness, outbox: compare-and-swap or single rows decide */
	STORE_LOCK_ENROLL, /* enroll, activate, retire, reset: EK uniqueness is read, then written */
	STORE_LOCK_POLICY, /* a new policy version: the newest is read, then the next written */
};

struct store_driver_ops {
	const char *scheme; /* "sqlite" in "sqlite:PATH" */
	/*
	 * location: the URI after "SCHEME:". Connects, brings the schema to the current version
	 * and prepares the statement table. 0, -EINVAL (a bad location), -EIO, -EPROTO (a schema
	 * newer than this build), all logged.
	 */
	int (*open)(const char *location, struct store_driver **out);
	void (*close)(struct store_driver *d);

	/* 0 with *out, -EIO (no database: logged once per outage). */
	int (*acquire)(struct store_driver *d, struct store_conn **out);
	void (*release)(struct store_driver *d, struct store_conn *c);

	int (*begin)(struct store_conn *c, enum store_lock lock);
	int (*commit)(struct store_conn *c);
	void (*rollback)(struct store_conn *c);
	int (*savepoint)(struct store_conn *c);
	int (*savepoint_release)(struct store_conn *c);
	int (*savepoint_rollback)(struct store_conn *c);

	/* Starts statement id with n parameters; 0 or -EIO. The values are read until reset(). */
	int (*query)(struct store_conn *c, enum store_stmt id, const struct store_value *p,
		     unsigned n);
	/*
	 * query() of SQL outside the table (written as the table's are), prepared for this use
	 * alone: store_sql.c's copy names its tables and columns at run time.
	 */
	int (*query_sql)(struct store_conn *c, const char *sql, const struct store_value *p,
			 unsigned n);
	/* 1 a row, 0 no more rows, -EIO. */
	int (*step)(struct store_conn *c);
	void (*reset)(struct store_conn *c);
	/* Rows changed by the last statement that ran to its end. */
	uint64_t (*changes)(struct store_conn *c);

	/* Columns of the current row; a NULL column reads as 0, "" or no bytes. */
	bool (*col_null)(struct store_conn *c, unsigned col);
	int64_t (*col_int)(struct store_conn *c, unsigned col);
	/* Text, or a BLOB's bytes as they are, NUL-terminated; *len (if asked) its bytes. */
	const char *(*col_text)(struct store_conn *c, unsigned col, size_t *len);
	const void *(*col_blob)(struct store_conn *c, unsigned col, size_t *len);

	/*
	 * For copies, of a table whose ids the database generates (store_sql.c's copy_tables):
	 * identity_last() the largest id it has generated (0: none), which is past its last row
	 * when the rows after it were deleted; identity_follow(), after rows were copied into it
	 * with their ids, makes the ids generated next follow both its rows and `last`, so that
	 * no id is given twice. 0 or -EIO.
	 */
	int (*identity_last)(struct store_conn *c, const char *table, int64_t *last);
	int (*identity_follow)(struct store_conn *c, const char *table, int64_t last);

	/*
	 * A connection that reads the database as of one moment while the others go on writing
	 * (store_sql.c's copies and backups): only query_sql(), step(), col_*() and reset() are
	 * used on it, and snapshot_end() ends it. 0 with *out, -EIO (logged).
	 */
	int (*snapshot)(struct store_driver *d, struct store_conn **out);
	void (*snapshot_end)(struct store_driver *d, struct store_conn *c);
};

#endif
