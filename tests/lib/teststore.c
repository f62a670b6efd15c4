/* The store a backend-neutral test opens; the contract is in teststore.h. */
#include "tests/lib/teststore.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libpq-fe.h>

#define TESTSTORE_URI_MAX 512

const char *teststore_pg(void)
{
	const char *s = getenv("ATTEST_TEST_PG");

	return s && s[0] ? s : NULL;
}

const char *teststore_backend(void)
{
	return teststore_pg() ? "postgresql" : "sqlite";
}

/* The database of store `name` in this process: names stay unique when tests run at once. */
static void db_name(const char *name, char *out, size_t cap)
{
	snprintf(out, cap, "t_%ld_%s", (long)getpid(), name);
}

static PGconn *connect_to(const char *db)
{
	char uri[TESTSTORE_URI_MAX];
	PGconn *c;

	snprintf(uri, sizeof(uri), "%s/%s", teststore_pg(), db);
	c = PQconnectdb(uri);
	if (PQstatus(c) != CONNECTION_OK) {
		fprintf(stderr, "teststore: cannot connect to %s: %s", uri, PQerrorMessage(c));
		PQfinish(c);
		return NULL;
	}
	PQclear(PQexec(c, "SET client_min_messages = warning"));
	return c;
}

static int exec_on(PGconn *c, const char *sql)
{
	PGresult *r = PQexec(c, sql);
	int ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;

	if (!ok)
		fprintf(stderr, "teststore: \"%s\": %s", sql, PQerrorMessage(c));
	PQclear(r);
	return ok ? 0 : -1;
}

int teststore_uri(const char *dir, const char *name, char *out, size_t cap)
{
	char db[128], sql[256];
	PGconn *c;
	int ret;

	if (!teststore_pg())
		return (size_t)snprintf(out, cap, "sqlite:%s/%s.db", dir, name) < cap ? 0 : -1;
	db_name(name, db, sizeof(db));
	c = connect_to("postgres");
	if (!c)
		return -1;
	snprintf(sql, sizeof(sql), "DROP DATABASE IF EXISTS \"%s\"", db);
	ret = exec_on(c, sql);
	snprintf(sql, sizeof(sql), "CREATE DATABASE \"%s\" ENCODING 'UTF8' TEMPLATE template0", db);
	if (!ret)
		ret = exec_on(c, sql);
	PQfinish(c);
	if (ret || (size_t)snprintf(out, cap, "%s/%s", teststore_pg(), db) >= cap)
		return -1;
	return 0;
}

int teststore_pg_int(const char *name, const char *sql, int *v)
{
	char db[128];
	PGconn *c;
	PGresult *r;
	int ret = -1;

	db_name(name, db, sizeof(db));
	c = connect_to(db);
	if (!c)
		return -1;
	r = PQexec(c, sql);
	if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) > 0) {
		*v = (int)strtol(PQgetvalue(r, 0, 0), NULL, 10);
		ret = 0;
	}
	PQclear(r);
	PQfinish(c);
	return ret;
}

int teststore_pg_exec(const char *name, const char *sql)
{
	char db[128];
	PGconn *c;
	int ret;

	db_name(name, db, sizeof(db));
	c = connect_to(db);
	if (!c)
		return -1;
	ret = exec_on(c, sql);
	PQfinish(c);
	return ret;
}

int teststore_save(int fd, const char *path)
{
	char buf[65536];
	ssize_t n;
	int out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (out < 0)
		return -1;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			n = -1;
	close(out);
	return n == 0 ? 0 : -1;
}
