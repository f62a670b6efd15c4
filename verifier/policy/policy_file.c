/* Reading a policy file and putting its key files inline; the contract is in policy_file.h. */
#include "verifier/policy/policy_file.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/file.h"
#include "proto/dynbuf.h"
#include "proto/encoding.h"
#include "proto/limits.h"
#include "verifier/policy/policy_json.h"


/* keys[i].file -> keys[i].pem or .der; the file relative to dir unless absolute. */
static int inline_key(json_t *key, size_t i, const char *dir, char *err, size_t errlen)
{
	const char *name = json_string_value(json_object_get(key, "file"));
	struct dynbuf b;
	char path[4096];
	json_t *v;
	int rc;

	if (!name || !*name) {
		policy_seterr(err, errlen, "keys[%zu]: \"file\" must be a file name", i);
		return -EINVAL;
	}
	if (snprintf(path, sizeof(path), "%s%s%s", name[0] == '/' ? "" : dir,
		     name[0] == '/' ? "" : "/", name) >= (int)sizeof(path)) {
		policy_seterr(err, errlen, "keys[%zu]: file name too long", i);
		return -ENAMETOOLONG;
	}
	dynbuf_init(&b, LIMIT_POLICY_KEY_BYTES);
	rc = file_read(path, &b);
	if (rc) {
		policy_seterr(err, errlen, "keys[%zu]: cannot read key file \"%s\": %s", i, path,
		       rc == -EFBIG ? "larger than LIMIT_POLICY_KEY_BYTES" : strerror(-rc));
		return rc;
	}
	if (memmem(b.buf, b.len, "-----BEGIN ", 11)) {
		v = json_stringn(b.buf, b.len);
		rc = v ? json_object_set_new(key, "pem", v) : -1;
	} else {
		char *b64 = base64_encode_alloc((const uint8_t *)b.buf, b.len);

		v = b64 ? json_string(b64) : NULL;
		rc = v ? json_object_set_new(key, "der", v) : -1;
		free(b64);
	}
	dynbuf_release(&b);
	if (rc || json_object_del(key, "file")) {
		policy_seterr(err, errlen, "keys[%zu]: key file \"%s\" is neither PEM text nor DER", i, path);
		return -EINVAL;
	}
	return 0;
}

static int resolve(const char *policy_path, char **text, size_t *len, char *err, size_t errlen)
{
	json_error_t jerr;
	json_t *root = json_loadb(*text, *len, JSON_REJECT_DUPLICATES, &jerr), *keys, *k;
	char *copy = strdup(policy_path), *dir, *out = NULL;
	size_t i, n = 0;
	int rc = 0;

	if (!copy) {
		json_decref(root);
		return -ENOMEM;
	}
	dir = dirname(copy);
	/* Whatever does not parse is the policy engine's to explain; hand it on unchanged. */
	keys = json_object_get(root, "keys");
	json_array_foreach(keys, i, k) {
		if (!json_is_object(k) || !json_object_get(k, "file"))
			continue;
		rc = inline_key(k, i, dir, err, errlen);
		if (rc)
			goto out;
		n++;
	}
	if (n) {
		out = json_dumps(root, JSON_INDENT(1));
		if (!out) {
			rc = -ENOMEM;
			goto out;
		}
		free(*text);
		*text = out;
		*len = strlen(out);
	}
out:
	json_decref(root);
	free(copy);
	return rc;
}

int policy_file_read(const char *path, char **out, size_t *out_len, char *err, size_t errlen)
{
	struct dynbuf b;
	size_t len = 0;
	char *text;
	int rc;

	*out = NULL;
	*out_len = 0;
	dynbuf_init(&b, LIMIT_POLICY_BYTES);
	rc = file_read(path, &b);
	if (rc) {
		policy_seterr(err, errlen, "cannot read policy \"%s\": %s", path,
		       rc == -EFBIG ? "larger than LIMIT_POLICY_BYTES" : strerror(-rc));
		return rc;
	}
	text = dynbuf_take(&b, &len);
	if (!text)
		return -ENOMEM;
	if (strlen(text) != len) {
		policy_seterr(err, errlen, "policy \"%s\" contains a NUL byte", path);
		free(text);
		return -EINVAL;
	}
	/* Only a policy that names a key file is parsed here (a policy may be 500 MB). */
	if (strstr(text, "\"file\"")) {
		rc = resolve(path, &text, &len, err, errlen);
		if (rc) {
			free(text);
			return rc;
		}
	}
	*out = text;
	*out_len = len;
	return 0;
}
