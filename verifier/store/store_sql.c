/*
 * The store's rules over an SQL driver (store_sql.h, store_driver.h): what each operation of
 * store_backend.h reads and writes, in which transaction, written once for every database.
 *
 * A decision that reads before it writes (enroll, activate, a new policy version) runs in one
 * write transaction, serialized against every other such decision (store_driver.h's locks);
 * a round is a compare-and-swap on its agent's boot-state version, so rounds need no lock.
 * Rounds come in batches from store.c's group commit: one transaction for the batch (the
 * commit's flush, not the SQL, is what a round costs), a savepoint for each round so that a
 * failing round is rolled back alone. Events for the webhooks are written in the transaction
 * of the change they report. A copy between stores, and a backup (a copy into a new SQLite
 * file), read one snapshot of the source (store_driver.h) a page at a time in key order.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "common/log.h"
#include "verifier/store/store_sql.h"
#include "verifier/store/store_sqlite.h" /* a backup is a SQLite store */

struct sql_store {
	struct store_backend base; /* first: store.c holds a pointer to it */
	const struct store_driver_ops *drv;
	struct store_driver *d;
	int64_t nonces_pruned; /* when spent challenges were last pruned (atomic) */
};

/* One connection held for one operation. */
struct db {
	struct sql_store *st;
	const struct store_driver_ops *o;
	struct store_conn *c;
	unsigned raised; /* outbox rows raise_event() wrote since the caller zeroed it */
};

/* A parameter list: P(SV_TEXT(id), SV_INT(now)) is the array and its length. */
#define P(...)                                                                             \
	(const struct store_value[]){ __VA_ARGS__ },                                       \
		(unsigned)(sizeof((const struct store_value[]){ __VA_ARGS__ }) /           \
			   sizeof(struct store_value))

static struct sql_store *ss(struct store_backend *b)
{
	return (struct sql_store *)b;
}

static int db_get(struct store_backend *b, struct db *db)
{
	db->st = ss(b);
	db->o = db->st->drv;
	db->c = NULL;
	db->raised = 0;
	return db->o->acquire(db->st->d, &db->c);
}

static void db_put(struct db *db)
{
	db->o->rollback(db->c); /* a no-op after a commit */
	db->o->release(db->st->d, db->c);
}

/* Runs statement id to its end; 0 or -EIO. changes() says what it changed. */
static int exec(struct db *db, enum store_stmt id, const struct store_value *p, unsigned n)
{
	int ret = db->o->query(db->c, id, p, n);

	while (!ret && (ret = db->o->step(db->c)) == 1)
		ret = 0;
	db->o->reset(db->c);
	return ret < 0 ? ret : 0;
}

/*
 * Runs statement id and moves to its first row: 1 with the row (read it, then done()), 0 no
 * row, -EIO. The statement is over when it returns anything but 1.
 */
static int first(struct db *db, enum store_stmt id, const struct store_value *p, unsigned n)
{
	int ret = db->o->query(db->c, id, p, n);

	if (!ret)
		ret = db->o->step(db->c);
	if (ret != 1)
		db->o->reset(db->c);
	return ret;
}

static void done(struct db *db)
{
	db->o->reset(db->c);
}

/*
 * A walk over the rows of one statement, the shape of every read:
 *
 *	struct rows r;
 *	int ret = 0;
 *
 *	for (rows_read(&r, b, STMT_X, P(...)); rows_next(&r);)
 *		if ((ret = use(&r.db)))
 *			break;
 *	return rows_end(&r, ret);
 *
 * rows_read() takes a connection for the walk alone (a read outside any transaction);
 * rows_query() walks on one the caller holds, in its transaction. rows_first() is
 * rows_read() and its first row: true with it. rows_end() ends the statement, gives
 * rows_read()'s connection back, and returns the walk's error (no connection, the statement
 * or a step failed), else ret: the caller's verdict on the rows it saw (say -ENOENT if none).
 */
struct rows {
	struct db db;
	int status; /* 0 while rows may come; the walk's error */
	bool owned; /* db is rows_read()'s own connection */
};

static void rows_query(struct rows *r, struct db *db, enum store_stmt id,
		       const struct store_value *p, unsigned n)
{
	r->db = *db;
	r->owned = false;
	r->status = db->o->query(db->c, id, p, n);
}

static void rows_read(struct rows *r, struct store_backend *b, enum store_stmt id,
		      const struct store_value *p, unsigned n)
{
	r->status = db_get(b, &r->db);
	r->owned = !r->status;
	if (r->owned)
		r->status = r->db.o->query(r->db.c, id, p, n);
}

/* Moves to the next row: true with it; false after the last, or on an error (kept). */
static bool rows_next(struct rows *r)
{
	int row = r->status ? 0 : r->db.o->step(r->db.c);

	if (row < 0)
		r->status = row;
	return row == 1;
}

static bool rows_first(struct rows *r, struct store_backend *b, enum store_stmt id,
		       const struct store_value *p, unsigned n)
{
	rows_read(r, b, id, p, n);
	return rows_next(r);
}

static int rows_end(struct rows *r, int ret)
{
	if (r->db.c)
		r->db.o->reset(r->db.c);
	if (r->owned)
		db_put(&r->db);
	return r->status ? r->status : ret;
}

static uint64_t changes(struct db *db)
{
	return db->o->changes(db->c);
}

/* Statement id alone, in a write transaction of its own; *changed: the rows it changed. */
static int exec_alone(struct store_backend *b, enum store_stmt id, const struct store_value *p,
		      unsigned n, uint64_t *changed)
{
	uint64_t rows = 0;
	struct db db;
	int ret;

	*changed = 0;
	if ((ret = db_get(b, &db)))
		return ret;
	if (!(ret = db.o->begin(db.c, STORE_LOCK_NONE)) && !(ret = exec(&db, id, p, n))) {
		rows = changes(&db);
		ret = db.o->commit(db.c);
	}
	db_put(&db);
	*changed = ret ? 0 : rows;
	return ret;
}

static int64_t col_int(struct db *db, unsigned col)
{
	return db->o->col_int(db->c, col);
}

static const char *col_text(struct db *db, unsigned col)
{
	return db->o->col_text(db->c, col, NULL);
}

static const void *col_blob(struct db *db, unsigned col, size_t *len)
{
	return db->o->col_blob(db->c, col, len);
}

static void text_copy(struct db *db, unsigned col, char *out, size_t cap)
{
	snprintf(out, cap, "%s", col_text(db, col));
}

/* A copy of a BLOB column; no bytes: *out NULL. */
static int blob_copy(struct db *db, unsigned col, uint8_t **out, size_t *len)
{
	const void *p = col_blob(db, col, len);

	*out = NULL;
	if (!p || !*len) {
		*len = 0;
		return 0;
	}
	*out = malloc(*len);
	if (!*out)
		return -ENOMEM;
	memcpy(*out, p, *len);
	return 0;
}

/* A copy of column col, NUL-terminated; a NULL column: *out NULL. */
static int column_dup(struct db *db, unsigned col, void **out, size_t *len)
{
	size_t n = 0;
	const char *p = db->o->col_null(db->c, col) ? NULL : db->o->col_text(db->c, col, &n);

	*out = NULL;
	if (len)
		*len = 0;
	if (!p)
		return 0;
	*out = malloc(n + 1);
	if (!*out)
		return -ENOMEM;
	memcpy(*out, p, n);
	((char *)*out)[n] = '\0';
	if (len)
		*len = n;
	return 0;
}

static bool events_on(const struct sql_store *st)
{
	return st->base.targets && st->base.targets->n;
}

/* Open, close ---------------------------------------------------------------------------- */

int store_sql_open(const struct store_driver_ops *drv, const struct store_ops *ops,
		   const char *location, struct store_backend **out)
{
	struct sql_store *st;
	int ret;

	*out = NULL;
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->base.ops = ops;
	st->drv = drv;
	if ((ret = drv->open(location, &st->d))) {
		free(st);
		return ret;
	}
	*out = &st->base;
	return 0;
}

void store_sql_close(struct store_backend *b)
{
	struct sql_store *st = ss(b);

	st->drv->close(st->d);
	free(st);
}


/* History and webhook events; inside the caller's transaction. --------------------------- */

static int history_add(struct db *db, const char *agent, int64_t now, const char *event,
		       const char *actor, const char *detail)
{
	return exec(db, STMT_HISTORY_ADD,
		    P(SV_TEXT(agent), SV_INT(now), SV_TEXT(event), SV_TEXT(actor),
		      SV_TEXT(detail ? detail : "")));
}

/* Writes event e into the outbox: one row per webhook target (store_event_rows()). */
/*
 * Appends a record to the audit trail (audit.h) in the caller's transaction: last in it, so
 * that the cursor's lock is held for no other statement. detail: a JSON object (taken: freed).
 */
static int audit_append(struct db *db, int64_t now, const char *kind, const char *actor,
			const char *agent, json_t *detail)
{
	static const uint8_t zeros[AUDIT_HASH_LEN];
	struct audit_record r = { .time = now, .kind = kind, .actor = actor ? actor : "",
				  .agent = agent ? agent : "" };
	char *text = detail ? json_dumps(detail, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	const void *prev;
	size_t len = 0;
	int ret;

	json_decref(detail);
	if (!text)
		return -ENOMEM;
	r.detail = text;
	ret = first(db, STMT_AUDIT_CURSOR, P(SV_BLOB(zeros, sizeof(zeros))));
	if (ret == 1) {
		r.seq = col_int(db, 0);
		prev = col_blob(db, 1, &len);
		if (len == AUDIT_HASH_LEN)
			memcpy(r.prev_hash, prev, AUDIT_HASH_LEN);
		done(db);
		ret = len == AUDIT_HASH_LEN ? 0 : -EINVAL;
	} else if (ret == 0) {
		ret = -EIO; /* RETURNING always has its row */
	}
	if (!ret)
		ret = audit_record_hash(&r, r.hash);
	if (!ret)
		ret = exec(db, STMT_AUDIT_INSERT,
			   P(SV_INT(r.seq), SV_INT(r.time), SV_TEXT(r.kind), SV_TEXT(r.actor),
			     SV_TEXT(r.agent), SV_TEXT(r.detail),
			     SV_BLOB(r.prev_hash, AUDIT_HASH_LEN), SV_BLOB(r.hash, AUDIT_HASH_LEN)));
	if (!ret)
		ret = exec(db, STMT_AUDIT_CURSOR_SET, P(SV_BLOB(r.hash, AUDIT_HASH_LEN)));
	if (ret == -EINVAL)
		log_error("store: the audit trail's cursor holds no hash of %u bytes", AUDIT_HASH_LEN);
	free(text);
	return ret;
}

static bool hash_col(struct db *db, unsigned col, uint8_t out[AUDIT_HASH_LEN]);

/* The audit head the event carries (struct store_event_audit), read in the caller's transaction. */
static int event_audit(struct db *db, struct store_event_audit *a)
{
	const void *sig, *key;
	size_t sig_len, key_len;
	int row;

	memset(a, 0, sizeof(*a));
	row = first(db, STMT_AUDIT_LAST, NULL, 0);
	if (row == 1) {
		a->seq = col_int(db, 0);
		(void)hash_col(db, 1, a->hash);
		done(db);
	}
	if (row < 0)
		return row;
	row = first(db, STMT_AUDIT_SIGNED_LIST, P(SV_INT(1)));
	if (row == 1) {
		sig = col_blob(db, 3, &sig_len);
		key = col_blob(db, 4, &key_len);
		if (sig && key && sig_len <= sizeof(a->signature) &&
		    key_len <= sizeof(a->public_key)) {
			a->has_signed = true;
			a->signed_seq = col_int(db, 0);
			(void)hash_col(db, 1, a->signed_hash);
			a->signed_time = col_int(db, 2);
			memcpy(a->signature, sig, sig_len);
			a->signature_len = sig_len;
			memcpy(a->public_key, key, key_len);
			a->public_key_len = key_len;
		}
		done(db);
	}
	return row < 0 ? row : 0;
}

static int raise_event(struct db *db, const struct store_event *ev)
{
	struct store_event_audit audit;
	struct store_event_rows rows;
	struct store_event with = *ev;
	const struct store_event *e = &with;
	int ret;

	if (!events_on(db->st))
		return 0;
	if ((ret = event_audit(db, &audit)))
		return ret;
	with.audit = &audit;
	ret = store_event_rows(&db->st->base, e, &rows);

	for (size_t i = 0; !ret && i < rows.ntargets; i++)
		ret = exec(db, STMT_OUTBOX_ADD,
			   P(SV_TEXT(rows.id), SV_TEXT(rows.targets[i]),
			     SV_TEXT(store_event_type_str(e->type)), SV_TEXT(e->agent),
			     SV_INT(e->time), SV_TEXT(rows.body)));
	if (!ret)
		db->raised += (unsigned)rows.ntargets;
	store_event_rows_release(&rows);
	return ret;
}

/* Agents ------------------------------------------------------------------------------- */

static int unchanged_agent(struct db *db, const char *id);

static void agent_summary_row(struct db *db, struct store_agent *a)
{
	const char *state = col_text(db, 1);
	const void *p;
	size_t n;

	text_copy(db, 0, a->id, sizeof(a->id));
	a->state = !strcmp(state, "active")    ? AGENT_ACTIVE
		   : !strcmp(state, "retired") ? AGENT_RETIRED
					       : AGENT_PENDING;
	p = col_blob(db, 2, &n);
	a->ak_name_len = 0;
	if (p && n > 0 && n <= sizeof(a->ak_name)) {
		memcpy(a->ak_name, p, n);
		a->ak_name_len = n;
	}
	p = col_blob(db, 3, &n);
	memset(a->cred_digest, 0, sizeof(a->cred_digest));
	if (p && n == STORE_CRED_DIGEST_LEN)
		memcpy(a->cred_digest, p, STORE_CRED_DIGEST_LEN);
	text_copy(db, 4, a->policy, sizeof(a->policy));
	a->created_at = col_int(db, 5);
	a->activated_at = col_int(db, 6);
	a->boot_number = (uint64_t)col_int(db, 7);
	a->next_entry = (uint64_t)col_int(db, 8);
	a->last_verdict_at = col_int(db, 9);
	a->last_trusted = (int)col_int(db, 10);
	a->open_violations = (uint64_t)col_int(db, 11);
	a->retired_at = col_int(db, 12);
	a->reset_at = col_int(db, 13);
	a->interval = (uint32_t)col_int(db, 14);
	a->stale_event_for = col_int(db, 15);
	store_judged_versions_parse(col_text(db, 16), &a->judged);
	a->amendment_version = col_int(db, 17);
	a->policy_version = col_int(db, 18);
}

static int agent_read(struct db *db, const char *id, struct store_agent *out)
{
	int ret;

	memset(out, 0, sizeof(*out));
	ret = first(db, STMT_AGENT_GET, P(SV_TEXT(id)));
	if (ret <= 0)
		return ret ? ret : -ENOENT;
	agent_summary_row(db, out);
	if ((ret = blob_copy(db, STORE_AGENT_SUMMARY_NCOLS, &out->ek_pub, &out->ek_pub_len)) ||
	    (ret = blob_copy(db, STORE_AGENT_SUMMARY_NCOLS + 1, &out->ek_cert,
			     &out->ek_cert_len)) ||
	    (ret = blob_copy(db, STORE_AGENT_SUMMARY_NCOLS + 2, &out->ak_pub, &out->ak_pub_len)))
		store_agent_release(out);
	done(db);
	return ret;
}

int store_sql_agent_get(struct store_backend *b, const char *id, struct store_agent *out)
{
	struct db db;
	int ret;

	memset(out, 0, sizeof(*out));
	if ((ret = db_get(b, &db)))
		return ret;
	ret = agent_read(&db, id, out);
	db_put(&db);
	return ret;
}

/* Deletes expired pending enrollments, then counts what the enrollment rule needs. */
static int enroll_facts(struct db *db, const struct store_agent *a, int64_t now,
			const struct store_enroll_limits *lim, struct store_enroll_facts *f)
{
	uint64_t expired;
	int ret;

	memset(f, 0, sizeof(*f));
	if ((ret = exec(db, STMT_PENDING_EXPIRE_LABELS, P(SV_INT(now - lim->pending_ttl)))) ||
	    (ret = exec(db, STMT_PENDING_EXPIRE, P(SV_INT(now - lim->pending_ttl)))))
		return ret;
	expired = changes(db);
	if (expired > 0)
		log_info("store: %" PRIu64 " pending enrollments older than %lld s expired", expired,
			 (long long)lim->pending_ttl);
	ret = first(db, STMT_ENROLL_FACTS, P(SV_BLOB(a->ek_pub, a->ek_pub_len), SV_TEXT(a->id)));
	if (ret == 0)
		ret = -EIO; /* the statement always has its row */
	if (ret < 0)
		return ret;
	f->ek_active_elsewhere = col_int(db, 0) != 0;
	f->ek_pending_elsewhere = (uint64_t)col_int(db, 1);
	f->pending = (uint64_t)col_int(db, 2);
	done(db);
	return 0;
}

/* A boot_state column (a blob) decoded; -EINVAL (logged) if it does not. */
static int boot_state_column(struct db *db, unsigned col, const char *agent,
			     struct boot_state *out)
{
	size_t n;
	const uint8_t *p = col_blob(db, col, &n);

	if (boot_state_decode(p, n, out)) {
		log_error("store: boot state of agent \"%s\" does not decode: %zu bytes,"
			  " version %d; expected %u bytes, version %u",
			  agent, n, p && n > 0 ? p[0] : -1, BOOT_STATE_ENCODED_LEN,
			  BOOT_STATE_VERSION);
		memset(out, 0, sizeof(*out));
		return -EINVAL;
	}
	return 0;
}

/*
 * After a reset agent enrolled with new keys: its boot session starts over (the next round is
 * a first one; boot numbers go on from the last, so its violations stay apart), the event log
 * of the old machine goes, the history says so. The caller holds the transaction.
 */
static int enroll_replaced(struct db *db, const char *id, int64_t now)
{
	uint8_t blob[BOOT_STATE_ENCODED_LEN];
	struct boot_state bs;
	int ret, had;

	memset(&bs, 0, sizeof(bs));
	had = first(db, STMT_BOOT_GET, P(SV_TEXT(id)));
	if (had < 0)
		return had;
	if (had) {
		ret = boot_state_column(db, 0, id, &bs);
		done(db);
		if (ret)
			return ret;
		uint64_t boot_number = bs.boot_number;

		memset(&bs, 0, sizeof(bs));
		bs.boot_number = boot_number; /* started = false: the next round is a first one */
		boot_state_encode(&bs, blob);
		if ((ret = exec(db, STMT_BOOT_RESTART,
				P(SV_TEXT(id), SV_BLOB(blob, sizeof(blob)), SV_INT(now)))))
			return ret;
	}
	if ((ret = exec(db, STMT_BOOT_LOG_DELETE, P(SV_TEXT(id)))))
		return ret;
	return history_add(db, id, now, "re-enrolled", "agent",
			   "new EK and AK after a reset; pending activation");
}

/* Writes the agent row of an enrollment the rule allowed. */
static int enroll_write(struct db *db, const struct store_agent *a, int64_t now,
			enum store_enroll_result result)
{
	const struct store_value id = SV_TEXT(a->id), ek_cert = SV_BLOB(a->ek_cert, a->ek_cert_len),
				 ak_pub = SV_BLOB(a->ak_pub, a->ak_pub_len),
				 ak_name = SV_BLOB(a->ak_name, a->ak_name_len),
				 cred = SV_BLOB(a->cred_digest, STORE_CRED_DIGEST_LEN),
				 ek_pub = SV_BLOB(a->ek_pub, a->ek_pub_len), at = SV_INT(now);
	int ret;

	switch (result) {
	case STORE_ENROLL_NEW:
		ret = exec(db, STMT_AGENT_INSERT,
			   P(id, ek_cert, ak_pub, ak_name, cred, ek_pub, SV_TEXT(a->policy), at));
		return ret ? ret : history_add(db, a->id, now, "enrolled", "agent",
					       "pending activation");
	case STORE_ENROLL_REPLACED:
		ret = exec(db, STMT_AGENT_REPLACE, P(id, ek_cert, ak_pub, ak_name, cred, ek_pub, at));
		return ret ? ret : enroll_replaced(db, a->id, now);
	default: /* STORE_ENROLL_REFRESHED */
		return exec(db, STMT_AGENT_REFRESH, P(id, ek_cert, ak_pub, ak_name, cred, at));
	}
}

/* What an enrollment reads of its id's registration. */
struct enroll_registration {
	bool found;
	enum store_ek_kind kind;
	uint8_t ek_sha256[32];
	char policy[LIMIT_POLICY_NAME + 1];
	char *labels; /* JSON object text, malloc'd */
};

static int registration_row(struct db *db, struct store_registration *r)
{
	const void *p;
	size_t n;

	memset(r, 0, sizeof(*r));
	r->agent = col_text(db, 0);
	r->ek_kind = strcmp(col_text(db, 1), "cert") ? STORE_EK_PUBLIC : STORE_EK_CERT;
	p = col_blob(db, 2, &n);
	if (!p || n != sizeof(r->ek_sha256)) {
		log_error("store: the registration of agent \"%s\" holds an EK digest of %zu bytes",
			  r->agent, n);
		return -EINVAL;
	}
	memcpy(r->ek_sha256, p, n);
	r->ek_cert = col_blob(db, 3, &r->ek_cert_len);
	r->policy = col_text(db, 4);
	r->labels = col_text(db, 5);
	r->actor = col_text(db, 6);
	r->created_at = col_int(db, 7);
	return 0;
}

static int enroll_registration_read(struct db *db, const char *id,
				    struct enroll_registration *out)
{
	struct store_registration r;
	int ret;

	memset(out, 0, sizeof(*out));
	ret = first(db, STMT_REGISTRATION_GET, P(SV_TEXT(id)));
	if (ret <= 0)
		return ret;
	ret = registration_row(db, &r);
	if (!ret) {
		out->found = true;
		out->kind = r.ek_kind;
		memcpy(out->ek_sha256, r.ek_sha256, sizeof(out->ek_sha256));
		snprintf(out->policy, sizeof(out->policy), "%s", r.policy ? r.policy : "");
		out->labels = strdup(r.labels ? r.labels : "{}");
		if (!out->labels)
			ret = -ENOMEM;
	}
	done(db);
	return ret;
}

/*
 * Labels (a JSON object of text values) given to an agent that lacks those keys: a
 * registration's, written when its agent enrolls. The caller holds the transaction.
 */
static int labels_add(struct db *db, const char *agent, const char *labels)
{
	json_t *o = json_loads(labels, 0, NULL);
	const char *key;
	json_t *v;
	int ret = 0;

	if (!json_is_object(o)) {
		json_decref(o);
		log_error("store: the labels of agent \"%s\" are not a JSON object", agent);
		return -EINVAL;
	}
	json_object_foreach(o, key, v) {
		if (!json_is_string(v)) {
			ret = -EINVAL;
			break;
		}
		if ((ret = exec(db, STMT_LABEL_ADD,
				P(SV_TEXT(agent), SV_TEXT(key), SV_TEXT(json_string_value(v))))))
			break;
	}
	json_decref(o);
	return ret;
}

/*
 * Admission, in the enrollment's transaction (store_agent_enroll_admitted()): the result
 * that refuses the enrollment, or STORE_ENROLL_NEW when admission lets it go on.
 */
static enum store_enroll_result admission_decide(const struct store_admission *adm,
						 const struct enroll_registration *reg)
{
	const uint8_t *have;

	if (!reg->found)
		return adm->required ? STORE_ENROLL_NOT_REGISTERED : STORE_ENROLL_NEW;
	have = reg->kind == STORE_EK_CERT ? adm->ek_spki_sha256 : adm->ek_pub_sha256;
	return memcmp(have, reg->ek_sha256, sizeof(reg->ek_sha256)) ? STORE_ENROLL_EK_NOT_REGISTERED
								     : STORE_ENROLL_NEW;
}

int store_sql_agent_enroll(struct store_backend *b, const struct store_agent *a,
			   const struct store_admission *adm, int64_t now,
			   const struct store_enroll_limits *lim,
			   enum store_enroll_result *result)
{
	struct enroll_registration reg = { 0 };
	struct store_enroll_facts facts;
	struct store_agent cur, admitted;
	struct db db;
	int ret;
	bool exists;

	*result = STORE_ENROLL_CONFLICT;
	if ((ret = db_get(b, &db)))
		return ret;
	if ((ret = db.o->begin(db.c, STORE_LOCK_ENROLL)) ||
	    (ret = enroll_facts(&db, a, now, lim, &facts)))
		goto out;
	if (adm) {
		if ((ret = enroll_registration_read(&db, a->id, &reg)) < 0)
			goto out;
		ret = 0;
		*result = admission_decide(adm, &reg);
		if (*result != STORE_ENROLL_NEW) {
			ret = db.o->commit(db.c); /* the expiry of pending enrollments alone */
			goto refused;
		}
	}
	ret = agent_read(&db, a->id, &cur);
	if (ret && ret != -ENOENT)
		goto out;
	exists = ret == 0;
	*result = store_enroll_decide(exists ? &cur : NULL, a, &facts, lim);
	if (exists)
		store_agent_release(&cur);
	ret = 0;
	admitted = *a;
	if (*result == STORE_ENROLL_NEW && reg.found)
		snprintf(admitted.policy, sizeof(admitted.policy), "%s", reg.policy);
	if (*result == STORE_ENROLL_NEW || *result == STORE_ENROLL_REFRESHED ||
	    *result == STORE_ENROLL_REPLACED)
		ret = enroll_write(&db, &admitted, now, *result);
	if (!ret && *result == STORE_ENROLL_NEW && reg.found)
		ret = labels_add(&db, a->id, reg.labels);
	/*
	 * Refused: only the expiry is kept (it would happen at the next enrollment). Refreshed:
	 * the old credential dies with the update; a pending activation with it now fails.
	 */
	if (!ret)
		ret = db.o->commit(db.c);
out:
	if (ret)
		*result = STORE_ENROLL_CONFLICT;
refused:
	free(reg.labels);
	db_put(&db);
	return ret;
}

/* Why a pending agent may not become active now: 0 if it may. */
static int activate_check(struct db *db, const char *id,
			  const uint8_t digest[STORE_CRED_DIGEST_LEN], int64_t now,
			  const struct store_enroll_limits *lim)
{
	const void *cred;
	size_t n;
	int ret = first(db, STMT_ACTIVATE_FACTS, P(SV_TEXT(id)));

	if (ret <= 0)
		return ret ? ret : -ESTALE; /* unknown (or expired and deleted since) */
	cred = col_blob(db, 1, &n);
	if (strcmp(col_text(db, 0), "pending") != 0 || !cred || n != STORE_CRED_DIGEST_LEN ||
	    memcmp(cred, digest, STORE_CRED_DIGEST_LEN) != 0)
		ret = -ESTALE;
	else if (col_int(db, 2) <= now - lim->pending_ttl)
		ret = -ETIMEDOUT;
	else if (col_int(db, 3))
		ret = -EEXIST;
	else
		ret = 0;
	done(db);
	return ret;
}

/* The history row and the agent.enrolled event of an activation, in its transaction. */
static int activated(struct db *db, const char *id, int64_t now)
{
	struct store_agent a;
	struct store_event e;
	int ret = history_add(db, id, now, "activated", "agent", "its AK is trusted");

	if (ret || !events_on(db->st))
		return ret;
	if ((ret = agent_read(db, id, &a)))
		return ret;
	memset(&e, 0, sizeof(e));
	e.type = STORE_EVENT_ENROLLED;
	e.agent = id;
	e.time = now;
	e.ak_name = a.ak_name;
	e.ak_name_len = a.ak_name_len;
	ret = raise_event(db, &e);
	store_agent_release(&a);
	return ret;
}

int store_sql_agent_activate(struct store_backend *b, const char *id,
			     const uint8_t digest[STORE_CRED_DIGEST_LEN], int64_t now,
			     const struct store_enroll_limits *lim)
{
	struct db db;
	int ret;

	if ((ret = db_get(b, &db)))
		return ret;
	/* One transaction: two pending ids of one EK activated at once cannot both win. */
	if ((ret = db.o->begin(db.c, STORE_LOCK_ENROLL)) ||
	    (ret = activate_check(&db, id, digest, now, lim)) ||
	    (ret = exec(&db, STMT_AGENT_ACTIVATE,
			P(SV_TEXT(id), SV_BLOB(digest, STORE_CRED_DIGEST_LEN), SV_INT(now)))))
		goto out;
	if (changes(&db) != 1)
		ret = -ESTALE;
	else if (!(ret = activated(&db, id, now)))
		ret = db.o->commit(db.c);
out:
	db_put(&db);
	return ret;
}

/* 0 if policy `name` has a version, -ENODATA if not. The caller holds the policy lock. */
static int policy_exists(struct db *db, const char *name)
{
	int ret = first(db, STMT_POLICY_VERSION, P(SV_TEXT(name)));

	if (ret <= 0)
		return ret ? ret : -EIO; /* max() always has its row */
	ret = db->o->col_null(db->c, 0) ? -ENODATA : 0;
	done(db);
	return ret;
}

/* Registrations -------------------------------------------------------------------------- */

/* Under the policy lock: a policy a registration names exists when it commits. */
int store_sql_registrations_add(struct store_backend *b, const struct store_registration *regs,
				size_t n, const char *actor, int64_t now, size_t *failed)
{
	struct db db;
	size_t i;
	int ret;

	*failed = 0;
	if ((ret = db_get(b, &db)))
		return ret;
	if ((ret = db.o->begin(db.c, STORE_LOCK_POLICY)))
		goto out;
	for (i = 0; i < n; i++) {
		const struct store_registration *r = &regs[i];

		*failed = i;
		if (r->policy[0] && (ret = policy_exists(&db, r->policy)))
			goto out;
		if ((ret = exec(&db, STMT_REGISTRATION_ADD,
				P(SV_TEXT(r->agent), SV_TEXT(store_ek_kind_str(r->ek_kind)),
				  SV_BLOB(r->ek_sha256, sizeof(r->ek_sha256)),
				  SV_BLOB(r->ek_cert_len ? r->ek_cert : NULL, r->ek_cert_len),
				  SV_TEXT(r->policy), SV_TEXT(r->labels), SV_TEXT(actor), SV_INT(now)))))
			goto out;
		if (changes(&db) != 1) {
			ret = -EEXIST;
			goto out;
		}
	}
	/* The audit records last (audit_append()), one per registration. */
	for (i = 0; i < n; i++) {
		char hex[2 * sizeof(regs[i].ek_sha256) + 1];
		json_t *labels = json_loads(regs[i].labels, 0, NULL);

		*failed = i;
		for (size_t k = 0; k < sizeof(regs[i].ek_sha256); k++)
			snprintf(hex + 2 * k, 3, "%02x", regs[i].ek_sha256[k]);
		if ((ret = audit_append(&db, now, "agent.registered", actor, regs[i].agent,
					json_pack("{s:s, s:s, s:s, s:o}", "ek",
						  store_ek_kind_str(regs[i].ek_kind), "ek_sha256",
						  hex, "policy", regs[i].policy, "labels",
						  labels ? labels : json_object()))))
			goto out;
	}
	*failed = 0;
	ret = db.o->commit(db.c);
out:
	db_put(&db);
	return ret;
}

int store_sql_registration_get(struct store_backend *b, const char *agent,
			       store_registration_cb cb, void *arg)
{
	struct store_registration reg;
	struct rows r;
	int ret = -ENOENT;

	if (rows_first(&r, b, STMT_REGISTRATION_GET, P(SV_TEXT(agent))) &&
	    !(ret = registration_row(&r.db, &reg)))
		ret = cb(arg, &reg);
	return rows_end(&r, ret);
}

int store_sql_registrations_list(struct store_backend *b, store_registration_cb cb, void *arg)
{
	struct store_registration reg;
	struct rows r;
	int ret = 0;

	for (rows_read(&r, b, STMT_REGISTRATIONS_LIST, NULL, 0); rows_next(&r);)
		if ((ret = registration_row(&r.db, &reg)) || (ret = cb(arg, &reg)))
			break;
	return rows_end(&r, ret);
}

int store_sql_agent_labels(struct store_backend *b, const char *agent, store_label_cb cb,
			   void *arg)
{
	struct rows r;
	int ret = 0;

	for (rows_read(&r, b, STMT_LABELS_GET, P(SV_TEXT(agent))); rows_next(&r);)
		if ((ret = cb(arg, col_text(&r.db, 0), col_text(&r.db, 1))))
			break;
	return rows_end(&r, ret);
}

int store_sql_labels_all(struct store_backend *b, store_fleet_label_cb cb, void *arg)
{
	struct rows r;
	int ret = 0;

	for (rows_read(&r, b, STMT_LABELS_ALL, NULL, 0); rows_next(&r);)
		if ((ret = cb(arg, col_text(&r.db, 0), col_text(&r.db, 1), col_text(&r.db, 2))))
			break;
	return rows_end(&r, ret);
}

/* A registration's labels (JSON text) with the change applied, in *out (caller frees). */
static int labels_json_change(const char *labels, const struct store_label *set, size_t nset,
			      const char *const *remove, size_t nremove, char **out)
{
	json_t *o = json_loads(labels ? labels : "{}", 0, NULL);
	int ret = 0;

	*out = NULL;
	if (!json_is_object(o)) {
		json_decref(o);
		return -EINVAL;
	}
	for (size_t i = 0; !ret && i < nset; i++)
		if (json_object_set_new(o, set[i].key, json_string(set[i].value)))
			ret = -ENOMEM;
	for (size_t i = 0; i < nremove; i++)
		json_object_del(o, remove[i]);
	if (!ret && json_object_size(o) > LIMIT_LABELS)
		ret = -E2BIG;
	if (!ret && !(*out = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS)))
		ret = -ENOMEM;
	json_decref(o);
	return ret;
}

/* The audit record's detail of a label change: {"set": {K: V}, "remove": [K]}. */
static json_t *labels_detail(const struct store_label *set, size_t nset,
			     const char *const *remove, size_t nremove)
{
	json_t *s = json_object(), *r = json_array();

	for (size_t i = 0; s && i < nset; i++)
		json_object_set_new(s, set[i].key, json_string(set[i].value));
	for (size_t i = 0; r && i < nremove; i++)
		json_array_append_new(r, json_string(remove[i]));
	if (!s || !r) {
		json_decref(s);
		json_decref(r);
		return NULL;
	}
	return json_pack("{s:o, s:o}", "set", s, "remove", r);
}

/* Under the enrollment lock: an enrollment copies a registration's labels. */
int store_sql_agent_labels_change(struct store_backend *b, const char *id,
				  const struct store_label *set, size_t nset,
				  const char *const *remove, size_t nremove, const char *actor,
				  int64_t now)
{
	struct enroll_registration reg = { 0 };
	char *reg_labels = NULL;
	bool enrolled;
	json_t *detail;
	struct db db;
	int ret;

	if ((ret = db_get(b, &db)))
		return ret;
	if ((ret = db.o->begin(db.c, STORE_LOCK_ENROLL)))
		goto out;
	ret = unchanged_agent(&db, id);
	if (ret != -EALREADY && ret != -ENOENT)
		goto out;
	enrolled = ret == -EALREADY;
	if ((ret = enroll_registration_read(&db, id, &reg)) < 0)
		goto out;
	ret = 0;
	if (!enrolled && !reg.found) {
		ret = -ENOENT;
		goto out;
	}
	for (size_t i = 0; enrolled && !ret && i < nset; i++)
		ret = exec(&db, STMT_LABEL_SET,
			   P(SV_TEXT(id), SV_TEXT(set[i].key), SV_TEXT(set[i].value)));
	for (size_t i = 0; enrolled && !ret && i < nremove; i++)
		ret = exec(&db, STMT_LABEL_DELETE, P(SV_TEXT(id), SV_TEXT(remove[i])));
	if (!ret && enrolled) {
		ret = first(&db, STMT_LABELS_COUNT, P(SV_TEXT(id)));
		if (ret == 1) {
			ret = col_int(&db, 0) > (int64_t)LIMIT_LABELS ? -E2BIG : 0;
			done(&db);
		} else if (ret == 0) {
			ret = -EIO; /* COUNT always has its row */
		}
	}
	if (!ret && reg.found &&
	    !(ret = labels_json_change(reg.labels, set, nset, remove, nremove, &reg_labels)))
		ret = exec(&db, STMT_REGISTRATION_LABELS_SET, P(SV_TEXT(id), SV_TEXT(reg_labels)));
	if (ret)
		goto out;
	detail = labels_detail(set, nset, remove, nremove);
	if (!detail) {
		ret = -ENOMEM;
		goto out;
	}
	if (!(ret = audit_append(&db, now, "agent.labels", actor, id, detail)))
		ret = db.o->commit(db.c);
out:
	free(reg.labels);
	free(reg_labels);
	db_put(&db);
	return ret;
}

/* The ids a label assignment changes, collected before it writes. */
struct id_list {
	char **ids;
	size_t n, cap;
};

static int id_list_add(struct id_list *l, const char *id)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		char **p = realloc(l->ids, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		l->ids = p;
		l->cap = cap;
	}
	if (!(l->ids[l->n] = strdup(id)))
		return -ENOMEM;
	l->n++;
	return 0;
}

static void id_list_release(struct id_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->ids[i]);
	free(l->ids);
	memset(l, 0, sizeof(*l));
}

/* Under the policy lock, as store_sql_agent_set_policy(). */
int store_sql_policy_assign_label(struct store_backend *b, const char *policy,
				  const struct store_label *l, bool apply, const char *actor,
				  int64_t now, store_id_cb cb, void *arg, uint64_t *matching)
{
	struct id_list todo = { 0 };
	char label[LIMIT_LABEL_KEY + LIMIT_LABEL_VALUE + 2];
	struct rows r;
	struct db db;
	int ret;

	*matching = 0;
	snprintf(label, sizeof(label), "%s=%s", l->key, l->value);
	if ((ret = db_get(b, &db)))
		return ret;
	if ((ret = db.o->begin(db.c, STORE_LOCK_POLICY)) ||
	    (policy[0] && (ret = policy_exists(&db, policy))))
		goto out;
	for (rows_query(&r, &db, STMT_LABEL_AGENTS,
			P(SV_TEXT(l->key), SV_TEXT(l->value), SV_TEXT(policy)));
	     rows_next(&r);) {
		(*matching)++;
		if (!col_int(&r.db, 1) && (ret = id_list_add(&todo, col_text(&r.db, 0))))
			break;
	}
	ret = rows_end(&r, ret);
	for (size_t i = 0; !ret && i < todo.n; i++)
		ret = cb ? cb(arg, todo.ids[i]) : 0;
	if (ret || !apply)
		goto out;
	for (size_t i = 0; !ret && i < todo.n; i++)
		if (!(ret = exec(&db, STMT_AGENT_SET_POLICY, P(SV_TEXT(todo.ids[i]), SV_TEXT(policy)))))
			ret = exec(&db, STMT_REGISTRATION_SET_POLICY,
				   P(SV_TEXT(todo.ids[i]), SV_TEXT(policy)));
	/* The audit records last (audit_append()), one per agent. */
	for (size_t i = 0; !ret && i < todo.n; i++)
		ret = audit_append(&db, now, "agent.policy", actor, todo.ids[i],
				   json_pack("{s:s, s:s}", "policy", policy, "label", label));
	if (!ret)
		ret = db.o->commit(db.c);
out:
	id_list_release(&todo);
	db_put(&db);
	return ret;
}

/* Under the enrollment lock: an enrollment reads the registration it admits by. */
int store_sql_registration_delete(struct store_backend *b, const char *agent,
				  const char *actor, int64_t now)
{
	struct db db;
	int ret;

	if ((ret = db_get(b, &db)))
		return ret;
	if ((ret = db.o->begin(db.c, STORE_LOCK_ENROLL)) ||
	    (ret = exec(&db, STMT_REGISTRATION_DELETE, P(SV_TEXT(agent)))))
		goto out;
	if (changes(&db) != 1)
		ret = -ENOENT;
	else if (!(ret = audit_append(&db, now, "agent.unregistered", actor, agent,
				      json_object())))
		ret = db.o->commit(db.c);
out:
	db_put(&db);
	return ret;
}

/*
 * Under the policy lock: the policy it names exists when the assignment commits, and a
 * deletion (store_sql_policy_delete()) that read "no agent uses it" has committed before or
 * waits until after.
 */
int store_sql_agent_set_policy(struct store_backend *b, const char *id, const char *policy)
{
	struct db db;
	bool enrolled;
	int ret;

	if ((ret = db_get(b, &db)))
		return ret;
	if ((ret = db.o->begin(db.c, STORE_LOCK_POLICY)) ||
	    (ret = exec(&db, STMT_AGENT_SET_POLICY, P(SV_TEXT(id), SV_TEXT(policy)))))
		goto out;
	enrolled = changes(&db) == 1;
	if (!enrolled) {
		ret = unchanged_agent(&db, id);
		if (ret == -EALREADY)
			ret = -ENODATA; /* the agent exists: the policy does not */
		if (ret != -ENOENT)
			goto out;
		/* Not enrolled: registered, perhaps (its enrollment takes the policy then). */
		if (policy[0] && (ret = policy_exists(&db, policy)))
			goto out;
	}
	if ((ret = exec(&db, STMT_REGISTRATION_SET_POLICY, P(SV_TEXT(id), SV_TEXT(policy)))))
		goto out;
	if (!enrolled && changes(&db) != 1) {
		ret = -ENOENT;
		goto out;
	}
	if ((ret = audit_append(&db, (int64_t)time(NULL), "agent.policy", "operator", id,
				enrolled ? json_pack("{s:s}", "policy", policy)
					 : json_pack("{s:s, s:b}", "policy", policy,
						     "registration", 1))))
		goto out;
	ret = db.o->commit(db.c);
out:
	db_put(&db);
	return ret;
}

int store_sql_agents_list(struct store_backend *b, store_agent_cb cb, void *arg)
{
	struct store_agent a;
	struct rows r;
	int ret = 0;

	for (rows_read(&r, b, STMT_AGENTS_LIST, NULL, 0); rows_next(&r);) {
		memset(&a, 0, sizeof(a));
		agent_summary_row(&r.db, &a);
		a.last_reasons_json = col_text(&r.db, STORE_AGENT_SUMMARY_NCOLS);
		if ((ret = cb(arg, &a)))
			break;
	}
	return rows_end(&r, ret);
}

int store_sql_agents_liveness(struct store_backend *b, store_agent_cb cb, void *arg)
{
	struct store_agent a;
	struct rows r;
	int ret = 0;

	for (rows_read(&r, b, STMT_AGENTS_LIVENESS, NULL, 0); rows_next(&r);) {
		memset(&a, 0, sizeof(a));
		text_copy(&r.db, 0, a.id, sizeof(a.id));
		a.state = AGENT_ACTIVE;
		a.activated_at = col_int(&r.db, 1);
		a.last_verdict_at = col_int(&r.db, 2);
		a.interval = (uint32_t)col_int(&r.db, 3);
		a.stale_event_for = col_int(&r.db, 4);
		if ((ret = cb(arg, &a)))
			break;
	}
	return rows_end(&r, ret);
}

/* Boot state and rounds ------------------------------------------------------------------ */

int store_sql_boot_get(struct store_backend *b, const char *agent, struct boot_state *out,
		       uint64_t *version)
{
	struct rows r;
	int ret = 0; /* no row: no evidence yet, started = false */

	memset(out, 0, sizeof(*out));
	*version = 0;
	if (rows_first(&r, b, STMT_BOOT_GET, P(SV_TEXT(agent))) &&
	    !(ret = boot_state_column(&r.db, 0, agent, out)))
		*version = (uint64_t)col_int(&r.db, 1);
	return rows_end(&r, ret);
}

int store_sql_round_context(struct store_backend *b, const char *agent,
			    const char *default_policy, const char *amendment,
			    struct store_round_ctx *out)
{
	const void *p;
	struct rows r;
	size_t n;
	int ret;

	memset(out, 0, sizeof(*out));
	if (!rows_first(&r, b, STMT_ROUND_CONTEXT,
			P(SV_TEXT(agent), SV_TEXT(default_policy), SV_TEXT(amendment)))) {
		ret = -ENOENT;
		goto out;
	}
	ret = 0;
	out->state = agent_state_of(col_text(&r.db, 0));
	text_copy(&r.db, 1, out->policy, sizeof(out->policy));
	p = col_blob(&r.db, 2, &n);
	if (p && n > 0 && n <= sizeof(out->ak_name)) {
		memcpy(out->ak_name, p, n);
		out->ak_name_len = n;
	}
	if (!r.db.o->col_null(r.db.c, 3)) {
		if ((ret = boot_state_column(&r.db, 3, agent, &out->boot)))
			goto out;
		out->version = (uint64_t)col_int(&r.db, 4);
	}
	out->open_violations = (uint64_t)col_int(&r.db, 5);
	out->open_violations_in_boot = (uint64_t)col_int(&r.db, 6);
	p = col_blob(&r.db, 7, &n);
	if (p && n == 32) {
		out->has_boot_log = true;
		memcpy(out->boot_log_sha256, p, 32);
	}
	out->policy_version = col_int(&r.db, 8);
	out->amendment_version = col_int(&r.db, 9);
out:
	if ((ret = rows_end(&r, ret)))
		memset(&out->boot, 0, sizeof(out->boot));
	return ret;
}

int store_sql_boot_log_get(struct store_backend *b, const char *agent, struct store_boot_log *out)
{
	const void *p;
	void *dup;
	struct rows r;
	size_t n;
	int ret;

	memset(out, 0, sizeof(*out));
	if (!rows_first(&r, b, STMT_BOOT_LOG_GET, P(SV_TEXT(agent)))) {
		ret = -ENOENT;
		goto out;
	}
	ret = 0;
	p = col_blob(&r.db, 1, &n);
	if (!p || n != 32) {
		log_error("store: the boot log of agent \"%s\" has no sha256", agent);
		ret = -EINVAL;
		goto out;
	}
	memcpy(out->sha256, p, 32);
	p = col_blob(&r.db, 4, &n);
	if (p && n == 32)
		memcpy(out->judged_key, p, 32);
	out->judged_boot = (uint64_t)col_int(&r.db, 3);
	out->received_at = col_int(&r.db, 6);
	if ((ret = column_dup(&r.db, 0, &dup, &out->log_len)) == 0) {
		out->log = dup;
		if ((ret = column_dup(&r.db, 2, &dup, NULL)) == 0) {
			out->cmdline = dup;
			if ((ret = column_dup(&r.db, 5, &dup, NULL)) == 0)
				out->summary = dup;
		}
	}
	if (!ret && !out->log)
		ret = -EINVAL;
out:
	if ((ret = rows_end(&r, ret)))
		store_boot_log_release(out);
	return ret;
}

/*
 * One violation of a round (store.h, store_round_commit()): a new open row, a recurrence after
 * a decision (a new open row naming the decided one), more of an open one, or entries sent
 * again, which change nothing. Inside the round's savepoint.
 */
static int round_violation(struct db *db, const struct store_round *r,
			   const struct store_round_violation *v)
{
	size_t plen = v->path_len || !v->path ? v->path_len : strlen(v->path);
	uint64_t count = v->count ? v->count : 1;
	uint64_t last = v->last_entry > v->entry ? v->last_entry : v->entry;
	uint64_t boot = r->next->boot_number;
	/* A path is bound as the bytes it is (a BLOB): it need not be UTF-8. */
	const struct store_value path = SV_BLOB(v->path, plen);
	int64_t newest = 0, recurs, vid;
	bool open = false, resent = false;
	int ret;

	ret = first(db, STMT_VIOLATION_NEWEST,
		    P(SV_TEXT(r->agent), SV_TEXT(v->reason), path, SV_TEXT(v->digest)));
	if (ret < 0)
		return ret;
	if (ret == 1) {
		int state = violation_state_from_str(col_text(db, 1));

		newest = col_int(db, 0);
		open = state == VIOLATION_OPEN;
		/*
		 * The same boot, nothing past the entry already counted: a resent tail (or a boot
		 * judged again). Not for an approved row: approval taught a policy or amendment
		 * to allow this, so it comes back only because that was withdrawn (a rollback).
		 */
		resent = (uint64_t)col_int(db, 2) == boot && last <= (uint64_t)col_int(db, 3) &&
			 state != VIOLATION_APPROVED;
		done(db);
	}
	if (resent)
		return 0;
	if (open)
		return exec(db, STMT_VIOLATION_AGAIN,
			    P(SV_INT(newest), SV_INT(boot), SV_INT(last), SV_INT(r->now),
			      SV_INT(count)));
	recurs = newest; /* 0: the first time; else it recurs after an operator's decision */
	ret = first(db, STMT_VIOLATION_INSERT,
		    P(SV_TEXT(r->agent), SV_TEXT(v->reason), path, SV_TEXT(v->digest),
		      SV_INT(boot), SV_INT(last),
		      SV_TEXT(v->template_name ? v->template_name : ""), SV_INT(r->now),
		      SV_INT(count), recurs ? SV_INT(recurs) : SV_NULL));
	if (ret == 0)
		ret = -EIO; /* RETURNING always has its row */
	if (ret < 0)
		return ret;
	vid = col_int(db, 0);
	done(db);
	if (!events_on(db->st))
		return 0;
	struct store_event e = {
		.type = STORE_EVENT_VIOLATION, .agent = r->agent, .time = r->now,
		.violation_id = vid, .reason = v->reason, .path = v->path, .path_len = plen,
		.digest = v->digest, .entry = last, .count = count, .recurs = recurs,
		.boot_number = boot,
	};
	return raise_event(db, &e);
}

static int boot_log_write(struct db *db, const struct store_round *r)
{
	const struct store_boot_log *bl = r->boot_log;

	return exec(db, STMT_BOOT_LOG_PUT,
		    P(SV_TEXT(r->agent), SV_BLOB(bl->log ? (const void *)bl->log : "", bl->log_len),
		      SV_BLOB(bl->sha256, 32), SV_TEXT(bl->cmdline), SV_INT(bl->judged_boot),
		      SV_BLOB(bl->judged_key, 32), SV_TEXT(bl->summary), SV_INT(bl->received_at),
		      SV_INT(r->now)));
}

/* Whether agent id is still active (a failed compare-and-swap: a newer round, or not). */
static bool still_active(struct db *db, const char *id)
{
	bool active = false;

	if (first(db, STMT_AGENT_STATE, P(SV_TEXT(id))) == 1) {
		active = !strcmp(col_text(db, 0), "active");
		done(db);
	}
	return active;
}

/*
 * What this round's verdict changes against the agent's last one: *changed when it has none, or
 * its trust or its reasons differ (such a verdict is never pruned); *turned when it turns
 * untrusted (its last was trusted, or none: agent.untrusted is raised); *trust_changed when it
 * is the first or its trust differs (the audit trail records it).
 */
static int verdict_changes(struct db *db, const struct store_round *r, bool *changed,
			   bool *turned, bool *trust_changed)
{
	const char *reasons = r->reasons_json ? r->reasons_json : "[]";
	int ret = first(db, STMT_LAST_VERDICT, P(SV_TEXT(r->agent)));

	*changed = ret == 0;
	*turned = ret == 0 && !r->trusted;
	*trust_changed = ret == 0;
	if (ret == 1) {
		bool was_trusted = col_int(db, 0) != 0;

		*changed = was_trusted != r->trusted || strcmp(col_text(db, 1), reasons) != 0;
		*turned = was_trusted && !r->trusted;
		*trust_changed = was_trusted != r->trusted;
		done(db);
	}
	return ret < 0 ? ret : 0;
}

/* The challenge spent and the boot state's compare-and-swap; nothing else of the round. */
static int round_claim(struct db *db, const struct store_round *r)
{
	uint8_t blob[BOOT_STATE_ENCODED_LEN];
	const struct boot_state *n = r->next;
	int ret;

	if (r->nonce_len) {
		ret = exec(db, STMT_NONCE_SPEND,
			   P(SV_BLOB(r->nonce, r->nonce_len), SV_TEXT(r->agent),
			     SV_INT(r->nonce_expires)));
		if (ret || changes(db) != 1)
			return ret ? ret : -EALREADY;
	}
	boot_state_encode(n, blob);
	/* Compare-and-swap: only over the version this round read, else nothing is written. */
	if (r->prev_version)
		ret = exec(db, STMT_BOOT_UPDATE,
			   P(SV_TEXT(r->agent), SV_BLOB(blob, sizeof(blob)), SV_INT(n->reset_count),
			     SV_INT(n->restart_count), SV_INT(n->boot_number),
			     SV_INT(n->next_entry), SV_INT(r->now), SV_INT(r->prev_version)));
	else
		ret = exec(db, STMT_BOOT_INSERT,
			   P(SV_TEXT(r->agent), SV_BLOB(blob, sizeof(blob)), SV_INT(n->reset_count),
			     SV_INT(n->restart_count), SV_INT(n->boot_number),
			     SV_INT(n->next_entry), SV_INT(r->now)));
	if (!ret && changes(db) != 1)
		ret = still_active(db, r->agent) ? -ESTALE : -EKEYREVOKED;
	return ret;
}

/*
 * The round's evidence (store.h, "Evidence"): its record, and a copy of the event log and of
 * the policy versions it names unless one is kept already.
 */
static int evidence_write(struct db *db, const struct store_round *r, int64_t verdict_id)
{
	const struct store_round_evidence *e = r->evidence;
	int ret;

	ret = exec(db, STMT_EVIDENCE_INSERT,
		   P(SV_INT(verdict_id), SV_TEXT(r->agent), SV_TEXT(e->record),
		     e->boot_log_sha256 ? SV_BLOB(e->boot_log_sha256, 32) : SV_NULL));
	if (!ret && changes(db) != 1)
		ret = -EKEYREVOKED; /* the agent is gone: round_claim() found it active before */
	if (!ret && e->boot_log_sha256) {
		ret = exec(db, STMT_EVIDENCE_BOOT_LOG,
			   P(SV_TEXT(r->agent), SV_BLOB(e->boot_log_sha256, 32), SV_INT(r->now)));
		if (!ret && changes(db) != 1)
			log_warn("store: agent \"%s\": the event log its verdict %lld judged is not"
				 " stored; its evidence will be exported without it", r->agent,
				 (long long)verdict_id);
	}
	if (!ret && e->policy && e->policy_version > 0)
		ret = exec(db, STMT_EVIDENCE_POLICY,
			   P(SV_TEXT(e->policy), SV_INT(e->policy_version)));
	if (!ret && e->amendment_version > 0) {
		char amendment[STORE_AMENDMENT_NAME_MAX + 1];

		store_amendment_name(r->agent, amendment);
		ret = exec(db, STMT_EVIDENCE_POLICY,
			   P(SV_TEXT(amendment), SV_INT(e->amendment_version)));
	}
	return ret;
}

/* Writes one round inside the caller's savepoint. */
static int round_write(struct db *db, const struct store_round *r, int64_t *verdict_id,
		       bool *trust_changed)
{
	bool known = r->judged && r->judged->known; /* what judged it, named by the verdict */
	bool turned = false, changed = false;
	int ret;

	if ((ret = round_claim(db, r)))
		return ret;
	if (r->boot_log && (ret = boot_log_write(db, r)))
		return ret;
	if (r->interval &&
	    (ret = exec(db, STMT_AGENT_INTERVAL, P(SV_TEXT(r->agent), SV_INT(r->interval)))))
		return ret;
	if ((ret = verdict_changes(db, r, &changed, &turned, trust_changed)))
		return ret;
	turned = turned && events_on(db->st);
	ret = first(db, STMT_VERDICT_INSERT,
		    P(SV_TEXT(r->agent), SV_INT(r->next->boot_number), SV_INT(r->now),
		      SV_INT(r->trusted ? 1 : 0), SV_TEXT(r->reasons_json ? r->reasons_json : "[]"),
		      SV_INT(r->next_offset), SV_TEXT(known ? r->judged->policy : ""),
		      SV_INT(known ? r->judged->policy_version : 0),
		      SV_INT(known ? r->judged->amendment_version : 0), SV_INT(changed ? 1 : 0)));
	if (ret == 0)
		ret = -EIO; /* RETURNING always has its row */
	if (ret < 0)
		return ret;
	*verdict_id = col_int(db, 0);
	done(db);
	ret = exec(db, STMT_HOUR_ADD,
		   P(SV_TEXT(r->agent), SV_INT(store_hour_of(r->now)), SV_INT(r->trusted ? 1 : 0),
		     SV_INT(r->trusted ? 0 : 1)));
	if (ret)
		return ret;
	if (r->evidence && (ret = evidence_write(db, r, *verdict_id)))
		return ret;
	if (turned) {
		struct store_event e = {
			.type = STORE_EVENT_UNTRUSTED, .agent = r->agent, .time = r->now,
			.verdict_id = *verdict_id, .boot_number = r->next->boot_number,
			.reasons_json = r->reasons_json,
		};

		if ((ret = raise_event(db, &e)))
			return ret;
	}
	for (size_t i = 0; i < r->nviolations && !ret; i++)
		ret = round_violation(db, r, &r->violations[i]);
	return ret;
}

/* A spent challenge is refused as expired once past its expiry: forget it then. */
static void nonces_prune(struct db *db, int64_t now)
{
	int64_t last = __atomic_load_n(&db->st->nonces_pruned, __ATOMIC_RELAXED);

	if (now - last < STORE_NONCES_PRUNE_EVERY)
		return;
	__atomic_store_n(&db->st->nonces_pruned, now, __ATOMIC_RELAXED);
	if (exec(db, STMT_NONCES_PRUNE, P(SV_INT(now - STORE_NONCES_KEEP))))
		log_warn("store: spent challenges not pruned; the next batch tries again");
}

/* The rounds of a batch in the order they are written: by agent id, else as queued. */
struct batch_slot {
	struct store_pending_round *w;
	size_t queued;
};

static int slot_cmp(const void *a, const void *b)
{
	const struct batch_slot *x = a, *y = b;
	int c = strcmp(x->w->r->agent, y->w->r->agent);

	return c ? c : x->queued < y->queued ? -1 : 1;
}

/* What a round that failed, or was not written yet, leaves: no verdict, nothing changed. */
static void outcome_clear(struct store_pending_round *w)
{
	w->verdict_id = 0;
	w->trust_changed = false;
	w->raised = false;
}

/*
 * The batch's transaction (slots in write order). With `confined`, each round in a savepoint of
 * its own, so that a round that fails leaves the others' writes (its w->ret says why); without,
 * no savepoint (two statements less per round, each a round trip on a server database), and
 * the first round that fails rolls the whole transaction back: -EAGAIN, nothing written, that
 * round's w->ret set.
 */
static int batch_write(struct db *db, struct batch_slot *slots, size_t n, bool confined)
{
	struct store_pending_round *w;
	int ret;

	for (size_t i = 0; i < n; i++) {
		slots[i].w->ret = 0;
		outcome_clear(slots[i].w);
	}
	ret = db->o->begin(db->c, STORE_LOCK_NONE);
	for (size_t i = 0; !ret && i < n; i++) {
		w = slots[i].w;
		if (confined && (w->ret = db->o->savepoint(db->c)))
			continue;
		db->raised = 0;
		w->ret = round_write(db, w->r, &w->verdict_id, &w->trust_changed);
		w->raised = db->raised > 0;
		if (w->ret && !confined) {
			outcome_clear(w);
			db->o->rollback(db->c);
			return -EAGAIN;
		}
		if (w->ret) {
			outcome_clear(w);
			db->o->savepoint_rollback(db->c);
		}
		if (confined)
			db->o->savepoint_release(db->c);
	}
	/* Last in the transaction (audit_append()): the trust changes, in agent order. */
	for (size_t i = 0; !ret && i < n; i++) {
		w = slots[i].w;
		if (!w->ret && w->trust_changed)
			ret = audit_append(db, w->r->now, "trust", "verifier", w->r->agent,
					   json_pack("{s:I, s:b, s:I}", "verdict",
						     (json_int_t)w->verdict_id, "trusted",
						     w->r->trusted, "boot_number",
						     (json_int_t)w->r->next->boot_number));
	}
	if (!ret && n)
		nonces_prune(db, slots[0].w->r->now);
	if (!ret)
		ret = db->o->commit(db->c);
	return ret;
}

/*
 * store_backend.h: one transaction for the batch. Rounds are written ordered by agent id, so
 * that two verifiers' batches on one database lock boot states in the same order and never
 * deadlock; two rounds of one agent keep their queue order (the second finds the first's
 * version). A spent challenge names its agent, so that order covers it too. Rounds seldom fail
 * (a stale boot state, a reused challenge): the batch is written without savepoints first, and
 * only when a round fails, again with a savepoint per round, so that it fails alone (a database
 * error it met is then logged twice).
 */
void store_sql_commit_rounds(struct store_backend *b, struct store_pending_round *batch)
{
	struct store_pending_round *w;
	struct batch_slot *slots;
	size_t n = 0;
	struct db db;
	int ret;
	bool got = false;

	for (w = batch; w; w = w->next, n++)
		w->ret = 0;
	slots = calloc(n ? n : 1, sizeof(*slots));
	n = 0;
	for (w = batch; slots && w; w = w->next, n++)
		slots[n] = (struct batch_slot){ w, n };
	if (!slots)
		ret = -ENOMEM;
	else if (!(ret = db_get(b, &db)))
		got = true;
	if (!ret) {
		qsort(slots, n, sizeof(*slots), slot_cmp);
		ret = batch_write(&db, slots, n, false);
		if (ret == -EAGAIN)
			ret = batch_write(&db, slots, n, true);
	}
	if (ret)
		for (w = batch; w; w = w->next)
			w->ret = w->ret ? w->ret : ret;
	if (got)
		db_put(&db);
	free(slots);
}

int store_sql_verdicts_list(struct store_backend *b, const char *agent, unsigned limit,
			    store_verdict_cb cb, void *arg)
{
	struct store_verdict v;
	struct rows r;
	int ret = 0;

	for (rows_read(&r, b, STMT_VERDICTS_LIST, P(SV_TEXT(agent), SV_INT(limit)));
	     rows_next(&r);) {
		memset(&v, 0, sizeof(v));
		v.id = col_int(&r.db, 0);
		text_copy(&r.db, 1, v.agent, sizeof(v.agent));
		v.boot_number = (uint64_t)col_int(&r.db, 2);
		v.time = col_int(&r.db, 3);
		v.trusted = col_int(&r.db, 4) != 0;
		v.reasons_json = col_text(&r.db, 5);
		v.next_offset = (uint64_t)col_int(&r.db, 6);
		text_copy(&r.db, 7, v.judged.policy, sizeof(v.judged.policy));
		v.judged.known = v.judged.policy[0] != '\0';
		v.judged.policy_version = col_int(&r.db, 8);
		v.judged.amendment_version = col_int(&r.db, 9);
		if ((ret = cb(arg, &v)))
			break;
	}
	return rows_end(&r, ret);
}

/* Retention ------------------------------------------------------------------------------ */

int store_sql_verdicts_prune(struct store_backend *b, const char *agent, unsigned keep,
			     unsigned limit, uint64_t *deleted)
{
	int64_t bound = 0;
	struct db db;
	int ret, row;

	*deleted = 0;
	if (!keep || !limit)
		return -EINVAL;
	if ((ret = db_get(b, &db)))
		return ret;
	if ((ret = db.o->begin(db.c, STORE_LOCK_NONE)))
		goto out;
	row = first(&db, STMT_VERDICTS_PRUNE_BOUND,
		    P(SV_TEXT(agent), SV_INT(keep - 1), SV_INT(limit)));
	if (row == 1) {
		bound = col_int(&db, 0); /* NULL (none to prune) reads as 0 */
		done(&db);
	}
	ret = row < 0 ? row : 0;
	/* The evidence first, by the same rows (STMT_VERDICTS_PRUNE_BOUND). */
	if (!ret && bound > 0 &&
	    !(ret = exec(&db, STMT_EVIDENCE_PRUNE, P(SV_TEXT(agent), SV_INT(bound)))) &&
	    !(ret = exec(&db, STMT_VERDICTS_PRUNE, P(SV_TEXT(agent), SV_INT(bound)))))
		*deleted = changes(&db);
	if (!ret)
		ret = db.o->commit(db.c);
	else
		db.o->rollback(db.c);
out:
	if (ret)
		*deleted = 0;
	db_put(&db);
	return ret;
}

int store_sql_evidence_logs_prune(struct store_backend *b, int64_t before, unsigned limit,
				  uint64_t *deleted)
{
	*deleted = 0;
	if (!limit)
		return -EINVAL;
	return exec_alone(b, STMT_EVIDENCE_LOGS_PRUNE, P(SV_INT(before), SV_INT(limit)), deleted);
}

static char *text_dup(struct db *db, unsigned col)
{
	const char *t = col_text(db, col);

	return strdup(t ? t : "");
}

static uint8_t *blob_dup(struct db *db, unsigned col, size_t *len)
{
	const void *p = col_blob(db, col, len);
	uint8_t *out = malloc(*len ? *len : 1);

	if (out && *len)
		memcpy(out, p, *len);
	return out;
}

int store_sql_evidence_get(struct store_backend *b, int64_t verdict_id, struct store_evidence *out)
{
	struct rows r;
	int ret = -ENOENT;

	memset(out, 0, sizeof(*out));
	if (rows_first(&r, b, STMT_EVIDENCE_GET, P(SV_INT(verdict_id)))) {
		bool has_log = !r.db.o->col_null(r.db.c, 2);

		out->record = text_dup(&r.db, 0);
		out->ak_pub = blob_dup(&r.db, 1, &out->ak_pub_len);
		if (has_log)
			out->boot_log = blob_dup(&r.db, 2, &out->boot_log_len);
		ret = !out->record || !out->ak_pub || (has_log && !out->boot_log) ? -ENOMEM : 0;
	}
	if ((ret = rows_end(&r, ret)))
		store_evidence_release(out);
	return ret;
}

int store_sql_evidence_policy(struct store_backend *b, const char *name, int64_t version,
			      char **json)
{
	struct rows r;
	int ret = -ENOENT;

	*json = NULL;
	if (rows_first(&r, b, STMT_EVIDENCE_POLICY_GET, P(SV_TEXT(name), SV_INT(version))))
		ret = (*json = text_dup(&r.db, 0)) ? 0 : -ENOMEM;
	return rows_end(&r, ret);
}

int store_sql_counters_prune(struct store_backend *b, int64_t before, unsigned limit,
			     uint64_t *deleted)
{
	*deleted = 0;
	if (!limit)
		return -EINVAL;
	return exec_alone(b, STMT_HOURS_PRUNE, P(SV_INT(before), SV_INT(limit)), deleted);
}

int store_sql_counters_list(struct store_backend *b, const char *agent, int64_t since,
			    unsigned limit, store_counters_cb cb, void *arg)
{
	struct store_counters c;
	struct rows r;
	int ret = 0;

	for (rows_read(&r, b, STMT_HOURS_LIST, P(SV_TEXT(agent), SV_INT(since), SV_INT(limit)));
	     rows_next(&r);) {
		c.hour = col_int(&r.db, 0);
		c.rounds = (uint64_t)col_int(&r.db, 1);
		c.trusted = (uint64_t)col_int(&r.db, 2);
		c.untrusted = (uint64_t)col_int(&r.db, 3);
		if ((ret = cb(arg, &c)))
			break;
	}
	return rows_end(&r, ret);
}

int store_sql_agent_ids(struct store_backend *b, const char *after, unsigned limit,
			store_agent_id_cb cb, void *arg)
{
	struct rows r;
	int ret = 0;

	for (rows_read(&r, b, STMT_AGENT_IDS, P(SV_TEXT(after ? after : ""), SV_INT(limit)));
	     rows_next(&r);)
		if ((ret = cb(arg, col_text(&r.db, 0))))
			break;
	return rows_end(&r, ret);
}

/* Audit trail ---------------------------------------------------------------------------- */

static bool hash_col(struct db *db, unsigned col, uint8_t out[AUDIT_HASH_LEN])
{
	size_t len = 0;
	const void *p = col_blob(db, col, &len);

	memset(out, 0, AUDIT_HASH_LEN);
	if (len != AUDIT_HASH_LEN)
		return false;
	memcpy(out, p, AUDIT_HASH_LEN);
	return true;
}

/*
 * A record whose stored hashes are not 32 bytes is handed over with zeros there: the chain check
 * finds it then, as it finds any other edit.
 */
int store_sql_audit_list(struct store_backend *b, int64_t after, unsigned limit,
			 store_audit_cb cb, void *arg)
{
	struct audit_record rec;
	struct rows r;
	int ret = 0;

	for (rows_read(&r, b, STMT_AUDIT_LIST, P(SV_INT(after), SV_INT(limit))); rows_next(&r);) {
		memset(&rec, 0, sizeof(rec));
		rec.seq = col_int(&r.db, 0);
		rec.time = col_int(&r.db, 1);
		rec.kind = col_text(&r.db, 2);
		rec.actor = col_text(&r.db, 3);
		rec.agent = col_text(&r.db, 4);
		rec.detail = col_text(&r.db, 5);
		(void)hash_col(&r.db, 6, rec.prev_hash);
		(void)hash_col(&r.db, 7, rec.hash);
		if ((ret = cb(arg, &rec)))
			break;
	}
	return rows_end(&r, ret);
}

int store_sql_audit_last(struct store_backend *b, int64_t *seq, uint8_t hash[AUDIT_HASH_LEN])
{
	struct rows r;
	int ret = 0; /* no row: an empty trail */

	*seq = 0;
	memset(hash, 0, AUDIT_HASH_LEN);
	if (rows_first(&r, b, STMT_AUDIT_LAST, NULL, 0)) {
		*seq = col_int(&r.db, 0);
		if (!hash_col(&r.db, 1, hash))
			ret = -EINVAL;
	}
	return rows_end(&r, ret);
}

int store_sql_audit_signed_put(struct store_backend *b, const struct store_audit_signed *s)
{
	struct db db;
	int ret;

	if ((ret = db_get(b, &db)))
		return ret;
	ret = exec(&db, STMT_AUDIT_SIGNED_PUT,
		   P(SV_INT(s->seq), SV_BLOB(s->hash, AUDIT_HASH_LEN), SV_INT(s->time),
		     SV_BLOB(s->signature, s->signature_len),
		     SV_BLOB(s->public_key, s->public_key_len)));
	db_put(&db);
	return ret;
}

int store_sql_audit_signed_list(struct store_backend *b, unsigned limit,
				store_audit_signed_cb cb, void *arg)
{
	struct store_audit_signed s;
	struct rows r;
	int ret = 0;

	for (rows_read(&r, b, STMT_AUDIT_SIGNED_LIST, P(SV_INT(limit))); rows_next(&r);) {
		memset(&s, 0, sizeof(s));
		s.seq = col_int(&r.db, 0);
		(void)hash_col(&r.db, 1, s.hash);
		s.time = col_int(&r.db, 2);
		s.signature = col_blob(&r.db, 3, &s.signature_len);
		s.public_key = col_blob(&r.db, 4, &s.public_key_len);
		if ((ret = cb(arg, &s)))
			break;
	}
	return rows_end(&r, ret);
}

/* Violations ----------------------------------------------------------------------------- */

/* Reads a row selected with the violation columns; the strings live until the next step. */
static void violation_from_row(struct db *db, struct store_violation *v)
{
	int vs;

	memset(v, 0, sizeof(*v));
	v->id = col_int(db, 0);
	v->agent = col_text(db, 1);
	v->boot_number = (uint64_t)col_int(db, 2);
	v->entry = (uint64_t)col_int(db, 3);
	/* A BLOB read as text: its bytes, unchanged, with a NUL after them. */
	v->path = db->o->col_text(db->c, 4, &v->path_len);
	v->digest = col_text(db, 5);
	v->template_name = col_text(db, 6);
	v->reason = col_text(db, 7);
	v->first_seen = col_int(db, 8);
	v->last_seen = col_int(db, 9);
	v->count = (uint64_t)col_int(db, 10);
	vs = violation_state_from_str(col_text(db, 11));
	v->state = vs < 0 ? VIOLATION_OPEN : (enum violation_state)vs;
	v->recurs = col_int(db, 12);
	v->decided_at = col_int(db, 13);
	v->decision = col_text(db, 14);
}

int store_sql_violation_get(struct store_backend *b, int64_t id, store_violation_cb cb,
			    void *arg)
{
	struct store_violation v;
	struct rows r;
	int ret = -ENOENT;

	if (rows_first(&r, b, STMT_VIOLATION_GET, P(SV_INT(id)))) {
		violation_from_row(&r.db, &v);
		ret = cb(arg, &v);
	}
	return rows_end(&r, ret);
}

/* A statement of one row of counts, read into out[0..n). */
static int counts_of(struct store_backend *b, enum store_stmt id, const struct store_value *p,
		     unsigned np, uint64_t *out, unsigned n)
{
	struct rows r;
	int ret = -EIO; /* a count always has its row */

	for (unsigned i = 0; i < n; i++)
		out[i] = 0;
	if (rows_first(&r, b, id, p, np)) {
		for (unsigned i = 0; i < n; i++)
			out[i] = (uint64_t)col_int(&r.db, i);
		ret = 0;
	}
	return rows_end(&r, ret);
}

int store_sql_violations_open_count(struct store_backend *b, const char *agent,
				    uint64_t boot_number, uint64_t *total, uint64_t *in_boot)
{
	uint64_t c[2];
	int ret = counts_of(b, STMT_VIOLATIONS_OPEN_COUNT, P(SV_TEXT(agent), SV_INT(boot_number)),
			    c, 2);

	*total = c[0];
	*in_boot = c[1];
	return ret;
}

int store_sql_violations_list(struct store_backend *b, int state, const char *agent,
			      unsigned limit, store_violation_cb cb, void *arg)
{
	struct store_violation v;
	struct rows r;
	int ret = 0;

	for (rows_read(&r, b, STMT_VIOLATIONS_LIST,
		       P(SV_TEXT(state >= 0 ? violation_state_str((enum violation_state)state)
					    : NULL),
			 SV_TEXT(agent), SV_INT(limit)));
	     rows_next(&r);) {
		violation_from_row(&r.db, &v);
		if ((ret = cb(arg, &v)))
			break;
	}
	return rows_end(&r, ret);
}

int store_sql_violation_decide(struct store_backend *b, int64_t id, enum violation_state state,
			       int64_t now, const char *decision)
{
	struct db db;
	int ret;

	if ((ret = db_get(b, &db)))
		return ret;
	if (!(ret = db.o->begin(db.c, STORE_LOCK_NONE)))
		ret = exec(&db, STMT_VIOLATION_DECIDE,
			   P(SV_INT(id), SV_TEXT(violation_state_str(state)), SV_INT(now),
			     SV_TEXT(decision)));
	if (!ret && changes(&db) != 1) {
		/* Not open: decided already, or no such violation. */
		ret = first(&db, STMT_VIOLATION_GET, P(SV_INT(id)));
		if (ret == 1) {
			ret = -EALREADY;
			done(&db);
		}
		ret = ret == 0 ? -ENOENT : ret;
		goto out;
	}
	if (!ret && (ret = first(&db, STMT_VIOLATION_GET, P(SV_INT(id)))) != 1)
		ret = ret ? ret : -EIO;
	else if (ret == 1) {
		json_t *d = json_pack("{s:I, s:s, s:s, s:s}", "violation", (json_int_t)id, "state",
				      violation_state_str(state), "decision",
				      decision ? decision : "", "reason", col_text(&db, 7));
		char agent[LIMIT_AGENT_ID + 1];

		text_copy(&db, 1, agent, sizeof(agent));
		done(&db);
		ret = audit_append(&db, now, "violation.decided", "operator", agent, d);
	}
	if (!ret)
		ret = db.o->commit(db.c);
out:
	db_put(&db);
	return ret;
}

/* Policies ------------------------------------------------------------------------------- */

int store_sql_policy_put(struct store_backend *b, const char *name, int64_t expected,
			 const char *json, const struct store_policy_sig *sig, const char *actor,
			 int64_t now, int64_t *version)
{
	const char *signer = sig && sig->signer ? sig->signer : "";
	const char *signature = sig && sig->signature ? sig->signature : "";
	json_t *detail;
	struct db db;
	int64_t cur = 0, next = 0;
	bool same = false;
	int ret, row;

	if ((ret = db_get(b, &db)))
		return ret;
	if ((ret = db.o->begin(db.c, STORE_LOCK_POLICY)))
		goto out;
	row = first(&db, STMT_POLICY_NEWEST, P(SV_TEXT(name)));
	if (row < 0) {
		ret = row;
		goto out;
	}
	if (row == 1) {
		cur = col_int(&db, 0);
		/* the same text signed anew is a new version: it records who signed it */
		same = !strcmp(col_text(&db, 1), json) && !strcmp(col_text(&db, 2), signature);
		done(&db);
	}
	if (expected != STORE_POLICY_ANY && cur != expected) {
		*version = cur;
		ret = -ESTALE; /* written since the caller read it */
		goto out;
	}
	if (same) {
		*version = cur;
		goto out; /* unchanged: no new version */
	}
	if (row == 0) { /* none: a deleted policy's versions go on */
		row = first(&db, STMT_POLICY_DELETED_VERSION, P(SV_TEXT(name)));
		if (row < 0) {
			ret = row;
			goto out;
		}
		if (row == 1) {
			next = col_int(&db, 0);
			done(&db);
		}
	}
	next = (cur > next ? cur : next) + 1;
	if ((ret = exec(&db, STMT_POLICY_INSERT,
			P(SV_TEXT(name), SV_INT(next), SV_TEXT(json), SV_TEXT(actor),
			  SV_INT(now), SV_TEXT(signer), SV_TEXT(signature)))))
		goto out;
	detail = json_pack("{s:s, s:I, s:I}", "policy", name, "version", (json_int_t)next, "bytes",
			   (json_int_t)strlen(json));
	if (detail && signature[0])
		json_object_set_new(detail, "signer", json_string(signer));
	if ((ret = audit_append(&db, now, "policy.version", actor,
				strncmp(name, "agent/", 6) ? "" : name + 6, detail)))
		goto out;
	if (!(ret = db.o->commit(db.c)))
		*version = next;
out:
	db_put(&db);
	return ret;
}

int store_sql_policy_version(struct store_backend *b, const char *name, int64_t *version)
{
	struct rows r;
	int ret = -EIO; /* max() always has its row */

	*version = 0;
	if (rows_first(&r, b, STMT_POLICY_VERSION, P(SV_TEXT(name)))) {
		if (r.db.o->col_null(r.db.c, 0))
			ret = -ENOENT;
		else
			*version = col_int(&r.db, 0), ret = 0;
	}
	return rows_end(&r, ret);
}

int store_sql_policy_get(struct store_backend *b, const char *name, char **json,
			 int64_t *version)
{
	struct rows r;
	int ret = -ENOENT;

	*json = NULL;
	if (rows_first(&r, b, STMT_POLICY_NEWEST, P(SV_TEXT(name)))) {
		*version = col_int(&r.db, 0);
		*json = strdup(col_text(&r.db, 1));
		ret = *json ? 0 : -ENOMEM;
	}
	return rows_end(&r, ret);
}

int store_sql_policy_get_version(struct store_backend *b, const char *name, int64_t version,
				 char **json, char **signer, char **signature)
{
	struct rows r;
	int ret = -ENOENT;

	*json = NULL;
	if (signer)
		*signer = NULL;
	if (signature)
		*signature = NULL;
	if (rows_first(&r, b, STMT_POLICY_GET_VERSION, P(SV_TEXT(name), SV_INT(version)))) {
		ret = (*json = strdup(col_text(&r.db, 0))) ? 0 : -ENOMEM;
		if (!ret && signer && !(*signer = strdup(col_text(&r.db, 1))))
			ret = -ENOMEM;
		if (!ret && signature && !(*signature = strdup(col_text(&r.db, 2))))
			ret = -ENOMEM;
		if (ret) {
			free(*json);
			*json = NULL;
		}
	}
	return rows_end(&r, ret);
}

int store_sql_policy_versions(struct store_backend *b, const char *name,
			      store_policy_version_cb cb, void *arg)
{
	struct store_policy_version v;
	struct rows r;
	int ret = 0;

	for (rows_read(&r, b, STMT_POLICY_VERSIONS, P(SV_TEXT(name))); rows_next(&r);) {
		v.version = col_int(&r.db, 0);
		v.actor = col_text(&r.db, 1);
		v.time = col_int(&r.db, 2);
		v.bytes = (uint64_t)col_int(&r.db, 3);
		v.signer = col_text(&r.db, 4);
		v.signed_ = col_int(&r.db, 5) != 0;
		if ((ret = cb(arg, &v)))
			break;
	}
	return rows_end(&r, ret);
}

int store_sql_policy_agents(struct store_backend *b, const char *name, uint64_t *count)
{
	return counts_of(b, STMT_POLICY_AGENTS, P(SV_TEXT(name)), count, 1);
}

int store_sql_policies_list(struct store_backend *b, const char *default_policy,
			    store_policy_summary_cb cb, void *arg)
{
	struct store_policy_summary p;
	struct rows r;
	int ret = 0;

	for (rows_read(&r, b, STMT_POLICIES_LIST, P(SV_TEXT(default_policy))); rows_next(&r);) {
		p.name = col_text(&r.db, 0);
		p.version = col_int(&r.db, 1);
		p.time = col_int(&r.db, 2);
		p.actor = col_text(&r.db, 3);
		p.agents = (uint64_t)col_int(&r.db, 4);
		if ((ret = cb(arg, &p)))
			break;
	}
	return rows_end(&r, ret);
}

/*
 * Under the policy lock, which every assignment takes (store_sql_agent_set_policy()): "no
 * agent uses it" still holds when the versions go. The deletion keeps the newest version
 * number (STMT_POLICY_DELETION_RECORD) for store_sql_policy_put().
 */
int store_sql_policy_delete(struct store_backend *b, const char *name, const char *actor,
			    int64_t now)
{
	struct db db;
	int64_t newest;
	int ret;

	if ((ret = db_get(b, &db)))
		return ret;
	if ((ret = db.o->begin(db.c, STORE_LOCK_POLICY)))
		goto out;
	ret = first(&db, STMT_POLICY_VERSION, P(SV_TEXT(name)));
	if (ret <= 0) {
		ret = ret ? ret : -EIO; /* max() always has its row */
		goto out;
	}
	ret = db.o->col_null(db.c, 0) ? -ENOENT : 0;
	newest = col_int(&db, 0);
	done(&db);
	if (ret)
		goto out;
	ret = first(&db, STMT_POLICY_AGENTS, P(SV_TEXT(name)));
	if (ret <= 0) {
		ret = ret ? ret : -EIO;
		goto out;
	}
	ret = col_int(&db, 0) > 0 ? -EBUSY : 0;
	done(&db);
	if (ret)
		goto out;
	/* A registered agent enrolls with its registration's policy: that one is in use too. */
	ret = first(&db, STMT_POLICY_REGISTRATIONS, P(SV_TEXT(name)));
	if (ret <= 0) {
		ret = ret ? ret : -EIO;
		goto out;
	}
	ret = col_int(&db, 0) > 0 ? -EBUSY : 0;
	done(&db);
	if (ret || (ret = exec(&db, STMT_POLICY_DELETE, P(SV_TEXT(name)))) ||
	    (ret = exec(&db, STMT_POLICY_DELETION_RECORD,
			P(SV_TEXT(name), SV_INT(newest), SV_TEXT(actor), SV_INT(now)))) ||
	    (ret = audit_append(&db, now, "policy.deleted", actor, "",
				json_pack("{s:s, s:I}", "policy", name, "version",
					  (json_int_t)newest))))
		goto out;
	ret = db.o->commit(db.c);
out:
	db_put(&db);
	return ret;
}

/* Metrics -------------------------------------------------------------------------------- */

int store_sql_counts(struct store_backend *b, struct store_counts *out)
{
	uint64_t c[6];
	int ret = counts_of(b, STMT_COUNTS, NULL, 0, c, 6);

	memset(out, 0, sizeof(*out));
	if (ret)
		return ret;
	out->agents_pending = c[0];
	out->agents_active = c[1];
	out->violations_open = c[2];
	out->verdicts_trusted = c[3];
	out->verdicts_untrusted = c[4];
	out->agents_retired = c[5];
	return 0;
}

/* Lifecycle, liveness, webhook outbox ---------------------------------------------------- */

/* Everything stored for agent id; the caller holds the transaction. */
static int purge(struct db *db, const char *id)
{
	char amendment[STORE_AMENDMENT_NAME_MAX + 1];
	static const enum store_stmt steps[] = {
		STMT_PURGE_BOOT_STATE, STMT_PURGE_BOOT_LOG, STMT_PURGE_VERDICTS, STMT_PURGE_HOURS,
		STMT_PURGE_VIOLATIONS, STMT_PURGE_AMENDMENT, STMT_PURGE_HISTORY, STMT_PURGE_AGENT,
		STMT_PURGE_EVIDENCE, STMT_PURGE_EVIDENCE_AMENDMENT, STMT_PURGE_LABELS,
	};
	int ret = 0;

	store_amendment_name(id, amendment);
	for (size_t i = 0; !ret && i < sizeof(steps) / sizeof(steps[0]); i++)
		ret = exec(db, steps[i],
			   P(SV_TEXT(steps[i] == STMT_PURGE_AMENDMENT ||
						 steps[i] == STMT_PURGE_EVIDENCE_AMENDMENT
					 ? amendment
					 : id)));
	return ret;
}

/* Raises e and commits; the caller's transaction holds the change e reports. */
static int raise_and_commit(struct db *db, const struct store_event *e)
{
	int ret = raise_event(db, e);

	return ret ? ret : db->o->commit(db->c);
}

/* After an UPDATE of agent id that changed nothing: -EALREADY if it exists, else -ENOENT. */
static int unchanged_agent(struct db *db, const char *id)
{
	int ret = first(db, STMT_AGENT_STATE, P(SV_TEXT(id)));

	if (ret == 1)
		done(db);
	return ret == 1 ? -EALREADY : ret == 0 ? -ENOENT : ret;
}

int store_sql_agent_retire(struct store_backend *b, const char *id, int64_t now,
			   const char *actor, bool purge_all)
{
	struct store_agent a;
	struct db db;
	int ret;

	if ((ret = db_get(b, &db)))
		return ret;
	/* Under the enrollment lock: a retired agent's EK may enroll under another id. */
	if ((ret = db.o->begin(db.c, STORE_LOCK_ENROLL)) || (ret = agent_read(&db, id, &a)))
		goto out;
	store_agent_release(&a);
	if (purge_all) {
		ret = purge(&db, id);
	} else {
		ret = exec(&db, STMT_AGENT_RETIRE, P(SV_TEXT(id), SV_INT(now)));
		if (!ret && changes(&db) != 1)
			ret = -EALREADY;
		if (!ret)
			ret = history_add(&db, id, now, "retired", actor,
					  "evidence refused; its EK may enroll under another id");
	}
	if (!ret)
		ret = audit_append(&db, now, purge_all ? "agent.purged" : "agent.retired", actor, id,
				   json_object());
	if (!ret)
		ret = raise_and_commit(&db, &(struct store_event){ .type = STORE_EVENT_RETIRED,
				.agent = id, .time = now, .actor = actor, .purged = purge_all });
out:
	db_put(&db);
	return ret;
}

int store_sql_agent_reset(struct store_backend *b, const char *id, int64_t now,
			  const char *actor)
{
	struct db db;
	int ret;

	if ((ret = db_get(b, &db)))
		return ret;
	/* Under the enrollment lock: a reset decides what the agent's next enrollment may do. */
	if ((ret = db.o->begin(db.c, STORE_LOCK_ENROLL)) ||
	    (ret = exec(&db, STMT_AGENT_RESET, P(SV_TEXT(id), SV_INT(now)))))
		goto out;
	if (changes(&db) != 1)
		ret = unchanged_agent(&db, id);
	if (!ret)
		ret = history_add(&db, id, now, "reset", actor,
				  "its next enrollment may bring a new EK and AK");
	if (!ret)
		ret = audit_append(&db, now, "agent.reset", actor, id, json_object());
	if (!ret)
		ret = raise_and_commit(&db, &(struct store_event){ .type = STORE_EVENT_RESET,
				.agent = id, .time = now, .actor = actor });
out:
	db_put(&db);
	return ret;
}

int store_sql_agent_history(struct store_backend *b, const char *id, unsigned limit,
			    store_agent_event_cb cb, void *arg)
{
	struct store_agent_event e;
	struct rows r;
	int ret = 0;

	for (rows_read(&r, b, STMT_HISTORY_LIST, P(SV_TEXT(id), SV_INT(limit))); rows_next(&r);) {
		e.id = col_int(&r.db, 0);
		e.time = col_int(&r.db, 1);
		e.event = col_text(&r.db, 2);
		e.actor = col_text(&r.db, 3);
		e.detail = col_text(&r.db, 4);
		if ((ret = cb(arg, &e)))
			break;
	}
	return rows_end(&r, ret);
}

int store_sql_agent_mark_stale(struct store_backend *b, const char *id, int64_t last_seen,
			       uint32_t interval, int64_t stale_after, int64_t now)
{
	struct db db;
	int ret;

	if ((ret = db_get(b, &db)))
		return ret;
	if ((ret = db.o->begin(db.c, STORE_LOCK_NONE)) ||
	    (ret = exec(&db, STMT_AGENT_MARK_STALE, P(SV_TEXT(id), SV_INT(last_seen)))))
		goto out;
	if (changes(&db) != 1)
		ret = unchanged_agent(&db, id);
	if (!ret)
		ret = raise_and_commit(&db, &(struct store_event){ .type = STORE_EVENT_STALE,
				.agent = id, .time = now, .last_seen = last_seen,
				.interval = interval, .stale_after = stale_after });
out:
	db_put(&db);
	return ret;
}

/* A claimed row, copied: the cursor's strings die with the next step. */
struct claimed {
	struct store_outbox_row r;
	char *strings;
};

static int claimed_copy(struct db *db, struct claimed *out)
{
	const char *f[5] = { col_text(db, 1), col_text(db, 2), col_text(db, 3), col_text(db, 4),
			     col_text(db, 6) };
	size_t len[5], total = 0;
	char *p;

	for (int i = 0; i < 5; i++)
		total += (len[i] = strlen(f[i]) + 1);
	p = out->strings = malloc(total);
	if (!p)
		return -ENOMEM;
	for (int i = 0; i < 5; i++) {
		memcpy(p, f[i], len[i]);
		f[i] = p;
		p += len[i];
	}
	out->r = (struct store_outbox_row){
		.id = col_int(db, 0), .event_id = f[0], .target = f[1], .type = f[2],
		.agent = f[3], .created_at = col_int(db, 5), .body = f[4],
		.attempts = (uint32_t)col_int(db, 7),
	};
	return 0;
}

int store_sql_outbox_claim(struct store_backend *b, const char *target, int64_t now,
			   int64_t lease, unsigned limit, store_outbox_cb cb, void *arg)
{
	struct claimed *rows = NULL;
	struct rows r;
	struct db db;
	size_t n = 0;
	int ret;

	if (limit == 0)
		return 0;
	rows = calloc(limit, sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	if ((ret = db_get(b, &db)))
		goto out_free;
	if ((ret = db.o->begin(db.c, STORE_LOCK_NONE)))
		goto out_put;
	for (rows_query(&r, &db, STMT_OUTBOX_DUE, P(SV_TEXT(target), SV_INT(now), SV_INT(limit)));
	     n < limit && rows_next(&r); n++)
		if ((ret = claimed_copy(&r.db, &rows[n])))
			break;
	ret = rows_end(&r, ret);
	for (size_t i = 0; !ret && i < n; i++)
		ret = exec(&db, STMT_OUTBOX_CLAIM, P(SV_INT(rows[i].r.id), SV_INT(now + lease)));
	if (!ret)
		ret = db.o->commit(db.c);
out_put:
	db_put(&db);
	/* Outside the connection: the caller delivers them (HTTP) from its callback. */
	for (size_t i = 0; !ret && i < n; i++)
		ret = cb(arg, &rows[i].r);
out_free:
	for (size_t i = 0; i < n; i++)
		free(rows[i].strings);
	free(rows);
	return ret;
}

int store_sql_outbox_settle(struct store_backend *b, const struct store_outbox_settle *v,
			    size_t n)
{
	struct db db;
	int ret, settled = 0;

	if (n == 0)
		return 0;
	if ((ret = db_get(b, &db)))
		return ret;
	if ((ret = db.o->begin(db.c, STORE_LOCK_NONE)))
		goto out;
	for (size_t i = 0; !ret && i < n; i++) {
		switch (v[i].outcome) {
		case STORE_OUTBOX_DELIVERED:
			ret = exec(&db, STMT_OUTBOX_DELETE, P(SV_INT(v[i].row)));
			break;
		case STORE_OUTBOX_FAILED:
			ret = exec(&db, STMT_OUTBOX_RETRY, P(SV_INT(v[i].row), SV_INT(v[i].next_at),
							     SV_TEXT(v[i].error ? v[i].error : "")));
			break;
		case STORE_OUTBOX_UNTRIED:
			ret = exec(&db, STMT_OUTBOX_CLAIM, P(SV_INT(v[i].row), SV_INT(v[i].next_at)));
			break;
		default:
			ret = -EINVAL;
		}
		if (!ret)
			settled += (int)changes(&db);
	}
	if (!ret)
		ret = db.o->commit(db.c);
out:
	db_put(&db);
	return ret ? ret : settled;
}

int store_sql_outbox_pending(struct store_backend *b, const char *target, uint64_t *count)
{
	return counts_of(b, STMT_OUTBOX_PENDING, P(SV_TEXT(target)), count, 1);
}

/* Copy and backup ------------------------------------------------------------------------ */

/*
 * Every table of the schema, in an order that puts an agent before what refers to it, with its
 * columns and what each is: I a number, T text, B bytes, and the leading columns that are its
 * key (pages of the source are read in key order). A migration that adds a table or a column
 * adds it here (tests/unit/test_store_copy.c compares this list with the schema).
 */
static const struct copy_table {
	const char *name;
	const char *columns;
	const char *types;
	const char *key;
	bool identity; /* its id is generated: the next one follows the copied ids */
	bool large;    /* a row may be megabytes (a log, a policy): read a few at a time */
} copy_tables[] = {
	{ "agents",
	  "id, ek_pub, ek_cert, ak_pub, ak_name, state, cred_digest, policy, created_at,"
	  " activated_at, enrolled_at, retired_at, reset_at, round_interval, stale_event_for",
	  "TBBBBTBTIIIIIII", "id", false, false },
	{ "boot_state",
	  "agent, state, reset_count, restart_count, boot_number, next_entry, updated_at, version",
	  "TBIIIIII", "agent", false, false },
	{ "boot_logs",
	  "agent, log, sha256, cmdline, judged_boot, judged_key, summary, received_at, updated_at",
	  "TBBTIBTII", "agent", false, true },
	{ "verdicts",
	  "id, agent, boot_number, time, trusted, reasons, next_offset, policy, policy_version,"
	  " amendment_version, changed",
	  "ITIIITITIII", "id", true, false },
	{ "verdict_hours", "agent, hour, rounds, trusted, untrusted", "TIIII", "agent, hour", false,
	  false },
	{ "violations",
	  "id, agent, boot_number, entry, path, digest, template, reason, first_seen, last_seen,"
	  " count, state, recurs, decided_at, decision",
	  "ITIIBTTTIIITIIT", "id", true, false },
	{ "policies", "name, version, json, actor, time, signer, signature", "TITTITT",
	  "name, version", false, true },
	{ "agent_history", "id, agent, time, event, actor, detail", "ITITTT", "id", true, false },
	{ "webhook_outbox",
	  "id, event_id, target, type, agent, created_at, body, attempts, next_attempt_at,"
	  " last_error",
	  "ITTTTITIIT", "id", true, false },
	{ "spent_nonces", "nonce, agent, expires_at", "BTI", "nonce", false, false },
	{ "policy_deletions", "name, version, actor, time", "TITI", "name", false, false },
	{ "audit_log", "seq, time, kind, actor, agent, detail, prev_hash, hash", "IITTTTBB", "seq",
	  false, false },
	{ "audit_head", "id, seq, hash", "IIB", "id", false, false },
	{ "audit_signed", "seq, hash, time, signature, public_key", "IBIBB", "seq", false, false },
	{ "verdict_evidence", "verdict_id, agent, record, ak_pub, boot_log", "ITTBB", "verdict_id",
	  false, true },
	{ "evidence_boot_logs", "sha256, log, used_at", "BBI", "sha256", false, true },
	{ "evidence_policies", "name, version, json", "TIT", "name, version", false, true },
	{ "registrations",
	  "agent, ek_kind, ek_sha256, ek_cert, policy, labels, actor, created_at", "TTBBTTTI",
	  "agent", false, false },
	{ "agent_labels", "agent, key, value", "TTT", "agent, key", false, false },
};

#define COPY_TABLES (sizeof(copy_tables) / sizeof(copy_tables[0]))
#define COPY_SQL_MAX 1024
#define COPY_MAX_COLUMNS 16
#define COPY_MAX_KEY 2
#define COPY_PAGE 1024 /* rows of the source read at once */
#define COPY_PAGE_LARGE 8 /* of a large table's */

const char *store_sql_copy_table(size_t i, unsigned *ncolumns)
{
	if (i >= COPY_TABLES)
		return NULL;
	*ncolumns = (unsigned)strlen(copy_tables[i].types);
	return copy_tables[i].name;
}

/* query_sql() of SQL outside the statement table, walked as rows_query() walks. */
static void rows_query_sql(struct rows *r, struct db *db, const char *sql,
			   const struct store_value *p, unsigned n)
{
	r->db = *db;
	r->owned = false;
	r->status = db->o->query_sql(db->c, sql, p, n);
}

/* -ENOTEMPTY (logged) if any table of the target has a row. */
static int copy_target_empty(struct db *to)
{
	char sql[COPY_SQL_MAX];
	struct rows r;
	int ret = 0;

	for (size_t t = 0; !ret && t < COPY_TABLES; t++) {
		snprintf(sql, sizeof(sql), "SELECT 1 FROM %s LIMIT 1", copy_tables[t].name);
		rows_query_sql(&r, to, sql, NULL, 0);
		if (rows_next(&r)) {
			log_error("store: copy: the target store has %s already: copy only into an"
				  " empty store", copy_tables[t].name);
			ret = -ENOTEMPTY;
		}
		ret = rows_end(&r, ret);
	}
	return ret;
}

/* The value of column col of the source's row, as the target's column type t wants it. */
static struct store_value copy_value(struct db *from, unsigned col, char t)
{
	size_t n;
	const void *p;

	if (from->o->col_null(from->c, col))
		return SV_NULL;
	if (t == 'I')
		return SV_INT(col_int(from, col));
	if (t == 'T')
		return SV_TEXT(col_text(from, col));
	p = from->o->col_text(from->c, col, &n); /* bytes: a BLOB read as they are */
	return SV_BLOB(p, n);
}

/* The key of the last row of a page, kept beyond it: the next page starts after it. */
struct copy_key {
	struct store_value v[COPY_MAX_KEY];
	void *mem[COPY_MAX_KEY];
	unsigned n;
};

static void copy_key_release(struct copy_key *k)
{
	for (unsigned i = 0; i < COPY_MAX_KEY; i++)
		free(k->mem[i]);
	memset(k->mem, 0, sizeof(k->mem));
}

static int copy_key_keep(struct db *from, const struct copy_table *t, struct copy_key *k)
{
	copy_key_release(k);
	for (unsigned i = 0; i < k->n; i++) {
		struct store_value v = copy_value(from, i, t->types[i]);
		size_t len = v.type == STORE_V_TEXT ? strlen(v.p) + 1 : v.len;

		if (v.type == STORE_V_TEXT || v.type == STORE_V_BLOB) {
			if (!(k->mem[i] = malloc(len ? len : 1)))
				return -ENOMEM;
			memcpy(k->mem[i], v.p, len);
			v.p = k->mem[i];
		}
		k->v[i] = v;
	}
	return 0;
}

static unsigned copy_page(const struct copy_table *t)
{
	return t->large ? COPY_PAGE_LARGE : COPY_PAGE;
}

/*
 * The statements of table t: a page of the source from the start (sel[0]) and after a key
 * (sel[1]: "WHERE (k1, k2) > (?1, ?2)"), both in key order; the target's insert. -E2BIG if
 * one does not fit.
 */
static int copy_sql(const struct copy_table *t, char sel[2][COPY_SQL_MAX], char *ins,
		    unsigned *nkey)
{
	unsigned n = (unsigned)strlen(t->types);
	char after[64] = "";
	size_t len, alen = 0;

	*nkey = 1;
	for (const char *c = t->key; *c; c++)
		*nkey += *c == ',';
	for (unsigned i = 0; i < *nkey; i++)
		alen += (size_t)snprintf(after + alen, sizeof(after) - alen, "%s?%u", i ? ", " : "",
					 i + 1);
	if (n > COPY_MAX_COLUMNS || *nkey > COPY_MAX_KEY || *nkey > n || alen >= sizeof(after))
		return -E2BIG;
	if ((size_t)snprintf(sel[0], COPY_SQL_MAX, "SELECT %s FROM %s ORDER BY %s LIMIT %u",
			     t->columns, t->name, t->key, copy_page(t)) >= COPY_SQL_MAX ||
	    (size_t)snprintf(sel[1], COPY_SQL_MAX,
			     "SELECT %s FROM %s WHERE (%s) > (%s) ORDER BY %s LIMIT %u", t->columns,
			     t->name, t->key, after, t->key, copy_page(t)) >= COPY_SQL_MAX)
		return -E2BIG;
	len = (size_t)snprintf(ins, COPY_SQL_MAX, "INSERT INTO %s(%s) VALUES (", t->name,
			       t->columns);
	for (unsigned i = 0; i < n && len < COPY_SQL_MAX; i++)
		len += (size_t)snprintf(ins + len, COPY_SQL_MAX - len, "%s?%u", i ? ", " : "",
					i + 1);
	if (len + 2 > COPY_SQL_MAX)
		return -E2BIG;
	memcpy(ins + len, ")", 2);
	return 0;
}

/* Statement sql (outside the table) run to its end on db; 0 or the driver's error. */
static int exec_sql(struct db *db, const char *sql, const struct store_value *p, unsigned n)
{
	int ret = db->o->query_sql(db->c, sql, p, n);

	while (!ret && (ret = db->o->step(db->c)) == 1)
		ret = 0;
	done(db);
	return ret < 0 ? ret : 0;
}

static int copy_table(struct db *from, struct db *to, const struct copy_table *t, uint64_t *rows)
{
	struct store_value v[COPY_MAX_COLUMNS];
	char sel[2][COPY_SQL_MAX], ins[COPY_SQL_MAX];
	unsigned n = (unsigned)strlen(t->types), page = copy_page(t);
	struct copy_key key = { 0 };
	struct rows r;
	int ret;

	*rows = 0;
	if ((ret = copy_sql(t, sel, ins, &key.n)))
		return ret;
	while (!ret && page == copy_page(t)) {
		rows_query_sql(&r, from, sel[*rows > 0], key.v, *rows > 0 ? key.n : 0);
		for (page = 0; !ret && rows_next(&r);) {
			for (unsigned i = 0; i < n; i++)
				v[i] = copy_value(&r.db, i, t->types[i]);
			if (!(ret = exec_sql(to, ins, v, n)) && ++page == copy_page(t))
				ret = copy_key_keep(&r.db, t, &key);
			*rows += !ret;
		}
		ret = rows_end(&r, ret);
	}
	copy_key_release(&key);
	if (!ret && t->identity) {
		int64_t last = 0;

		if (!(ret = from->o->identity_last(from->c, t->name, &last)))
			ret = to->o->identity_follow(to->c, t->name, last);
	}
	return ret;
}

/*
 * Every table of from into to: read from one snapshot of from (store_driver.h), written in one
 * transaction on to, which must be empty. log_tables: a line per table copied.
 */
static int copy_stores(struct store_backend *from_b, struct store_backend *to_b, bool log_tables)
{
	struct db from = { .st = ss(from_b), .o = ss(from_b)->drv }, to;
	uint64_t rows;
	int ret;

	if ((ret = from.o->snapshot(from.st->d, &from.c)))
		return ret;
	if ((ret = db_get(to_b, &to))) {
		from.o->snapshot_end(from.st->d, from.c);
		return ret;
	}
	if ((ret = to.o->begin(to.c, STORE_LOCK_ENROLL)) || (ret = copy_target_empty(&to)))
		goto out;
	for (size_t t = 0; !ret && t < COPY_TABLES; t++) {
		if ((ret = copy_table(&from, &to, &copy_tables[t], &rows)))
			log_error("store: copy: table %s not copied; the target is left as it was",
				  copy_tables[t].name);
		else if (log_tables)
			log_info("store: copy: %s: %" PRIu64 " rows", copy_tables[t].name, rows);
	}
	if (!ret)
		ret = to.o->commit(to.c);
out:
	db_put(&to);
	from.o->snapshot_end(from.st->d, from.c);
	return ret;
}

int store_sql_copy(struct store_backend *from, struct store_backend *to)
{
	return copy_stores(from, to, true);
}

int store_sql_backup(struct store_backend *b, int *fd_out, uint64_t *size)
{
	const char *dir = getenv("TMPDIR");
	struct store_backend *to = NULL;
	char tmp[PATH_MAX];
	struct stat stbuf;
	int fd, ret;

	*fd_out = -1;
	*size = 0;
	if (!dir || !dir[0])
		dir = "/tmp";
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s/attest-backup-XXXXXX", dir) >= sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		log_error("store: backup: cannot create \"%s\": %s", tmp, strerror(-ret));
		return ret;
	}
	(void)fchmod(fd, 0600); /* EK certificates, policies, the fleet's history */
	if (!(ret = store_sqlite_open_scratch(tmp, &to)))
		ret = copy_stores(b, to, false);
	if (to)
		store_sql_close(to);
	/* No fsync: the file has no name, and lives only as long as the caller reads it. */
	if (!ret && (fstat(fd, &stbuf) < 0 || lseek(fd, 0, SEEK_SET) < 0)) {
		ret = -errno;
		log_error("store: backup: \"%s\": %s", tmp, strerror(-ret));
	}
	if (!ret) {
		*size = (uint64_t)stbuf.st_size;
		*fd_out = fd;
		fd = -1;
	}
	unlink(tmp);
	if (fd >= 0)
		close(fd);
	return ret;
}
