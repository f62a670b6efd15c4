/*
 * cluster.c: challenges that any verifier holding the cluster key accepts for the agent they
 * were issued to, until they expire, and nothing else; key files that are too short refused.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/check.h"
#include "verifier/store/cluster.h"

static char dir[] = "/tmp/test_cluster.XXXXXX";

static int write_key(const char *name, const char *text, char *path, size_t cap)
{
	FILE *f;

	snprintf(path, cap, "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f) == 0 ? 0 : -1;
}

static void test_keys(void)
{
	struct cluster *c = (struct cluster *)&c;
	char path[256];

	CHECK(write_key("short", "0123456789abcdef0123456789abcde\n", path, sizeof(path)) == 0 &&
		      cluster_load(path, &c) == -EINVAL && !c,
	      "31 bytes and a newline: too short");
	CHECK(write_key("ok", "0123456789abcdef0123456789abcdef\n", path, sizeof(path)) == 0 &&
		      cluster_load(path, &c) == 0 && c,
	      "32 bytes: a key");
	cluster_free(c);
	c = (struct cluster *)&c;
	snprintf(path, sizeof(path), "%s/missing", dir);
	CHECK(cluster_load(path, &c) == -ENOENT && !c, "a missing file");
	cluster_free(NULL);
}

static void test_nonces(void)
{
	struct cluster *a = NULL, *a2 = NULL, *b = NULL;
	uint8_t n[CLUSTER_NONCE_LEN], m[CLUSTER_NONCE_LEN], bad[CLUSTER_NONCE_LEN + 1];
	char path[256];
	int64_t exp = 0;
	int refused = 0;

	CHECK(write_key("a", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n", path, sizeof(path)) == 0 &&
		      cluster_load(path, &a) == 0 && cluster_load(path, &a2) == 0,
	      "two verifiers load key a");
	CHECK(write_key("b", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\n", path, sizeof(path)) == 0 &&
		      cluster_load(path, &b) == 0,
	      "a third loads key b");
	if (!a || !a2 || !b)
		goto out;
	CHECK(cluster_nonce_make(a, "web-01", 1060, n) == 0, "verifier 1 issues a challenge");
	CHECK(cluster_nonce_check(a2, "web-01", n, sizeof(n), 1000, &exp) == 0 && exp == 1060,
	      "verifier 2 accepts it for the agent, with its expiry");
	CHECK(cluster_nonce_check(a2, "web-01", n, sizeof(n), 1060, &exp) == 0,
	      "up to its expiry");
	CHECK(cluster_nonce_check(a2, "web-01", n, sizeof(n), 1061, &exp) == -ETIMEDOUT,
	      "and not after it");
	CHECK(cluster_nonce_check(a2, "web-02", n, sizeof(n), 1000, &exp) == -ENOENT,
	      "another agent's: unknown");
	CHECK(cluster_nonce_check(b, "web-01", n, sizeof(n), 1000, &exp) == -ENOENT,
	      "another cluster's: unknown");
	CHECK(cluster_nonce_check(a2, "web-01", n, sizeof(n) - 1, 1000, &exp) == -ENOENT,
	      "a shorter one: unknown");
	memcpy(bad, n, sizeof(n));
	bad[sizeof(n)] = 0;
	CHECK(cluster_nonce_check(a2, "web-01", bad, sizeof(bad), 1000, &exp) == -ENOENT,
	      "a longer one: unknown");
	for (size_t i = 0; i < sizeof(n); i++) {
		memcpy(bad, n, sizeof(n));
		bad[i] ^= 0x01;
		refused += cluster_nonce_check(a2, "web-01", bad, sizeof(n), 1000, &exp) == -ENOENT;
	}
	CHECK(refused == (int)sizeof(n), "every changed bit refused, the expiry's too (%d of %zu)",
	      refused, sizeof(n));
	CHECK(cluster_nonce_make(a, "web-01", 1060, m) == 0 && memcmp(m, n, sizeof(n)) != 0,
	      "two challenges for the same agent and second differ");
out:
	cluster_free(a);
	cluster_free(a2);
	cluster_free(b);
}

int main(void)
{
	char cmd[128];

	if (!mkdtemp(dir))
		return 2;
	CASE(test_keys);
	CASE(test_nonces);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	return check_finish();
}
