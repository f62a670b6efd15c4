/*
 * policy_file: a policy file as the tools that read one from disk hand it on (the verifier's
 * --policy, attestctl policy put / policy-check / evaluate).
 *
 * A policy may name its signing keys by file ({"file": "keys/release.pem"} in "keys", relative
 * to the policy file's directory). The policy engine is pure and the verifier's API takes a
 * policy as a request body, so the file's reader puts each such key inline ("pem" for a PEM
 * file, "der" in base64 otherwise) before the policy goes anywhere. A policy without file
 * references is handed on byte for byte.
 *
 * Not pure: reads files (common/file.h). *out is malloc'd and NUL-terminated; the caller frees it.
 */
#ifndef VERIFIER_POLICY_FILE_H
#define VERIFIER_POLICY_FILE_H

#include <stddef.h>

/*
 * Reads the policy at path (at most LIMIT_POLICY_BYTES, no NUL byte) and resolves its key
 * files (each at most LIMIT_POLICY_KEY_BYTES). 0, or -errno with a one-line reason in err that
 * names the file.
 */
int policy_file_read(const char *path, char **out, size_t *out_len, char *err, size_t errlen);

#endif
