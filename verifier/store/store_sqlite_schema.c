/*
 * The SQLite store's schema: the migrations of store_schema.h, applied in order when the store
 * opens. PRAGMA user_version holds the number of the last one applied (0: a new file, or a
 * database from before versions). Each runs in its own transaction together with the version
 * it reaches, so a failure leaves the database at the version before it. Besides a step's
 * text, this file converts what older SQLite verifiers wrote (store_old_rows).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/encoding.h"
#include "verifier/store/boot_state.h"
#include "common/log.h"
#include "verifier/store/store_backend.h"
#include "verifier/store/store_schema.h"
#include "verifier/store/store_sqlite.h"

int store_sqlite_exec(sqlite3 *db, const char *sql)
{
	char *msg = NULL;
	int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);

	if (rc != SQLITE_OK) {
		log_error("store: \"%.60s\" failed: sqlite error %d \"%s\"", sql, rc,
			  msg ? msg : sqlite3_errstr(rc));
		sqlite3_free(msg);
		return -EIO;
	}
	return 0;
}

static int db_fail(sqlite3 *db, int rc, const char *what)
{
	log_error("store: %s failed: sqlite error %d \"%s\"", what, rc, sqlite3_errmsg(db));
	return -EIO;
}

/*
 * Before version 2 a boot state was stored as layout 1: u32 1, u32 240 (host order), then a
 * copy of struct boot_state's bytes as an LP64 little-endian build (x86-64, arm64) lays it
 * out: started at 0, reset_count 4, restart_count 8, clock 16, boot_number 24, next_entry 32,
 * replay at 40 (banks 40, reserved 44, entries 48, violations 56, other_pcr 64, sha1 72,
 * sha256 92, sha384 124, sha512 172), tail padding to 240. Padding is not read. Builds with
 * another layout wrote another size or byte order; their rows are refused, not guessed at.
 */
#define LAYOUT1 1
#define LAYOUT1_STRUCT 240u
#define LAYOUT1_BLOB (8u + LAYOUT1_STRUCT)

static uint64_t le(const uint8_t *p, unsigned bytes)
{
	uint64_t v = 0;

	for (unsigned i = bytes; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

static int layout1_decode(const uint8_t *blob, size_t len, struct boot_state *out)
{
	struct replay_state *rs = &out->replay;
	const uint8_t *p;

	memset(out, 0, sizeof(*out));
	if (!blob || len != LAYOUT1_BLOB || le(blob, 4) != LAYOUT1 ||
	    le(blob + 4, 4) != LAYOUT1_STRUCT || blob[8] > 1)
		return -EINVAL;
	p = blob + 8;
	out->started = p[0] == 1;
	out->reset_count = (uint32_t)le(p + 4, 4);
	out->restart_count = (uint32_t)le(p + 8, 4);
	out->clock = le(p + 16, 8);
	out->boot_number = le(p + 24, 8);
	out->next_entry = le(p + 32, 8);
	rs->banks = (uint32_t)le(p + 40, 4);
	rs->entries = le(p + 48, 8);
	rs->violations = le(p + 56, 8);
	rs->other_pcr = le(p + 64, 8);
	memcpy(rs->sha1, p + 72, sizeof(rs->sha1));
	memcpy(rs->sha256, p + 92, sizeof(rs->sha256));
	memcpy(rs->sha384, p + 124, sizeof(rs->sha384));
	memcpy(rs->sha512, p + 172, sizeof(rs->sha512));
	if (rs->banks & ~(uint32_t)REPLAY_ALL_BANKS)
		return -EINVAL;
	return 0;
}

/* Converts one row of the old table; the caller steps `sel` and owns both statements. */
static int m2_row(sqlite3 *db, sqlite3_stmt *sel, sqlite3_stmt *ins)
{
	const char *agent = (const char *)sqlite3_column_text(sel, 0);
	int layout = sqlite3_column_int(sel, 1);
	const uint8_t *p = sqlite3_column_blob(sel, 2);
	int n = sqlite3_column_bytes(sel, 2);
	uint8_t blob[BOOT_STATE_ENCODED_LEN];
	struct boot_state bs;
	int rc;

	if (!agent)
		agent = "";
	if (layout != LAYOUT1 || n < 0 || layout1_decode(p, (size_t)n, &bs)) {
		log_error("store: the boot state of agent \"%s\" (layout %d, %d bytes) is not"
			  " what an LP64 little-endian verifier wrote (layout 1, %u bytes); to"
			  " start the agent's record over, delete its row (DELETE FROM boot_state"
			  " WHERE agent = '%s')", agent, layout, n, LAYOUT1_BLOB, agent);
		return -EINVAL;
	}
	/* The summary columns were written from the same struct: they must agree. */
	if ((int64_t)bs.reset_count != sqlite3_column_int64(sel, 3) ||
	    (int64_t)bs.restart_count != sqlite3_column_int64(sel, 4) ||
	    (int64_t)bs.boot_number != sqlite3_column_int64(sel, 5) ||
	    (int64_t)bs.next_entry != sqlite3_column_int64(sel, 6)) {
		log_error("store: the boot state of agent \"%s\" disagrees with its own columns"
			  " (boot %lld, next entry %lld; the blob says %llu, %llu)",
			  agent, (long long)sqlite3_column_int64(sel, 5),
			  (long long)sqlite3_column_int64(sel, 6),
			  (unsigned long long)bs.boot_number, (unsigned long long)bs.next_entry);
		return -EINVAL;
	}
	boot_state_encode(&bs, blob);
	sqlite3_bind_text(ins, 1, agent, -1, SQLITE_STATIC);
	sqlite3_bind_blob(ins, 2, blob, (int)sizeof(blob), SQLITE_STATIC);
	for (int col = 3; col <= 7; col++)
		sqlite3_bind_int64(ins, col, sqlite3_column_int64(sel, col));
	rc = sqlite3_step(ins);
	sqlite3_reset(ins);
	sqlite3_clear_bindings(ins);
	return rc == SQLITE_DONE ? 0 : db_fail(db, rc, "boot state conversion");
}

/* Step 2's rows: each layout-1 boot state re-encoded into the new table, the old one dropped. */
static int old_boot_states(sqlite3 *db)
{
	sqlite3_stmt *sel = NULL, *ins = NULL;
	int ret, rc;

	rc = sqlite3_prepare_v2(db,
				"SELECT agent, layout, state, reset_count, restart_count, boot_number,"
				" next_entry, updated_at FROM boot_state_layout1 ORDER BY agent",
				-1, &sel, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db,
					"INSERT INTO boot_state(agent, state, reset_count,"
					" restart_count, boot_number, next_entry, updated_at)"
					" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
					-1, &ins, NULL);
	if (rc != SQLITE_OK) {
		ret = db_fail(db, rc, "prepare");
		goto out;
	}
	while ((rc = sqlite3_step(sel)) == SQLITE_ROW)
		if ((ret = m2_row(db, sel, ins)))
			goto out;
	if (rc != SQLITE_DONE) {
		ret = db_fail(db, rc, "boot state read");
		goto out;
	}
	sqlite3_finalize(sel);
	sel = NULL;
	ret = store_sqlite_exec(db, "DROP TABLE boot_state_layout1");
out:
	sqlite3_finalize(sel);
	sqlite3_finalize(ins);
	return ret;
}

/* Step 3's rows: active agents that already share an EK are kept, and named for an operator. */
static int old_shared_eks(sqlite3 *db)
{
	sqlite3_stmt *s = NULL;
	int ret, rc;

	rc = sqlite3_prepare_v2(db,
				"SELECT group_concat(id, ', ') FROM (SELECT id, ek_pub FROM agents"
				" WHERE state = 'active' ORDER BY id) GROUP BY ek_pub"
				" HAVING COUNT(*) > 1",
				-1, &s, NULL);
	if (rc != SQLITE_OK)
		return db_fail(db, rc, "prepare");
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		log_warn("store: agents %s are active with one EK, so one TPM stands for all of"
			 " them; new ones are refused, these are kept: keep one, delete the others",
			 (const char *)sqlite3_column_text(s, 0));
	ret = rc == SQLITE_DONE ? 0 : db_fail(db, rc, "agents sharing an EK");
	sqlite3_finalize(s);
	return ret;
}

/*
 * Before version 4 a violation's path was display text: each byte outside a valid UTF-8
 * sequence (NUL, 0x80-0xff) written as the four characters \xNN, a backslash as itself. This
 * turns such text back into the bytes. A real path that held the text "\x80" (backslash, x,
 * two hex digits of such a byte) was stored the same way and is read as the byte: the old
 * rendering cannot tell them apart, and real paths spelt like that are not known to exist.
 */
static size_t m4_unescape(const unsigned char *in, size_t n, unsigned char *out)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		uint8_t b;

		if (in[i] == '\\' && i + 3 < n && in[i + 1] == 'x' &&
		    hex_decode((const char *)in + i + 2, 2, &b, 1) == 1 && (b == 0 || b >= 0x80)) {
			out[o++] = b;
			i += 3;
		} else {
			out[o++] = in[i];
		}
	}
	return o;
}

/* Step 4's rows: the paths m4_unescape() changes, rewritten; the caller holds the transaction. */
static int old_escaped_paths(sqlite3 *db)
{
	sqlite3_stmt *sel = NULL, *upd = NULL;
	unsigned char *buf = NULL;
	int ret = 0, rc;

	rc = sqlite3_prepare_v2(db, "SELECT id, path FROM violations"
				" WHERE instr(path, CAST('\\x' AS BLOB)) > 0", -1, &sel, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db, "UPDATE violations SET path = ?2 WHERE id = ?1", -1,
					&upd, NULL);
	if (rc != SQLITE_OK) {
		ret = db_fail(db, rc, "prepare");
		goto out;
	}
	while ((rc = sqlite3_step(sel)) == SQLITE_ROW) {
		const unsigned char *p = sqlite3_column_blob(sel, 1);
		size_t n = (size_t)sqlite3_column_bytes(sel, 1), m;

		free(buf);
		buf = malloc(n + 1);
		if (!buf) {
			ret = -ENOMEM;
			goto out;
		}
		m = m4_unescape(p, n, buf);
		sqlite3_bind_int64(upd, 1, sqlite3_column_int64(sel, 0));
		sqlite3_bind_blob(upd, 2, buf, (int)m, SQLITE_STATIC);
		rc = sqlite3_step(upd);
		sqlite3_reset(upd);
		if (rc != SQLITE_DONE) {
			ret = db_fail(db, rc, "path conversion");
			goto out;
		}
	}
	if (rc != SQLITE_DONE)
		ret = db_fail(db, rc, "violations read");
out:
	free(buf);
	sqlite3_finalize(sel);
	sqlite3_finalize(upd);
	return ret;
}

/* What older SQLite verifiers wrote, converted after a step's text (store_schema.h). */
static int (*const old_rows[])(sqlite3 *db) = {
	[STORE_OLD_BOOT_STATE_LAYOUT1] = old_boot_states,
	[STORE_OLD_SHARED_EKS] = old_shared_eks,
	[STORE_OLD_ESCAPED_PATHS] = old_escaped_paths,
};

/* Step i: its text, then what it converts. */
static int step(sqlite3 *db, unsigned i)
{
	enum store_old_rows o = store_migrations[i].old_rows;
	const char *sql = store_migration_sql(i, STORE_DIALECT_SQLITE);
	int ret = sql ? store_sqlite_exec(db, sql) : -EINVAL;

	if (!ret && o != STORE_OLD_ROWS_NONE)
		ret = o < sizeof(old_rows) / sizeof(old_rows[0]) && old_rows[o] ? old_rows[o](db)
										   : -EINVAL;
	return ret;
}

/* The integer the one-row, one-column query `sql` answers. */
static int query_int(sqlite3 *db, const char *sql, int *v)
{
	sqlite3_stmt *s = NULL;
	int rc = sqlite3_prepare_v2(db, sql, -1, &s, NULL);

	if (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		*v = sqlite3_column_int(s, 0);
		sqlite3_finalize(s);
		return 0;
	}
	sqlite3_finalize(s);
	return db_fail(db, rc, sql);
}

int store_sqlite_migrate(sqlite3 *db, const char *path)
{
	char sql[64], where[PATH_MAX + 2];
	int from = -1, v = 0, tables = 0, ret;

	for (;;) {
		/* IMMEDIATE: two verifiers starting on one file do not both migrate it. */
		if ((ret = store_sqlite_exec(db, "BEGIN IMMEDIATE")))
			return ret;
		if ((ret = query_int(db, "PRAGMA user_version", &v)))
			goto fail;
		if (from < 0) {
			from = v;
			if ((ret = query_int(db, "SELECT count(*) FROM sqlite_master", &tables)))
				goto fail;
		}
		if (v == STORE_SCHEMA_VERSION)
			break;
		if (v < 0 || v > STORE_SCHEMA_VERSION) {
			log_error("store: \"%s\" has schema version %d; this verifier knows 0 to %d:"
				  " run the verifier that wrote it (or a newer one)",
				  path, v, STORE_SCHEMA_VERSION);
			ret = -EPROTO;
			goto fail;
		}
		if ((ret = step(db, (unsigned)v))) {
			log_error("store: upgrading \"%s\" to schema version %d (%s) failed; it stays"
				  " at version %d", path, v + 1, store_migrations[v].what, v);
			goto fail;
		}
		snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", v + 1);
		if ((ret = store_sqlite_exec(db, sql)) || (ret = store_sqlite_exec(db, "COMMIT")))
			goto fail;
	}
	if ((ret = store_sqlite_exec(db, "COMMIT")))
		goto fail;
	snprintf(where, sizeof(where), "\"%s\"", path);
	store_schema_opened(where, !tables, from, STORE_SCHEMA_VERSION);
	return 0;
fail:
	if (!sqlite3_get_autocommit(db))
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	return ret;
}
