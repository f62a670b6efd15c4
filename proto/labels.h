/*
 * labels: the KEY=VALUE labels an operator puts on agents (at registration or later), as the
 * verifier, attestctl and the page spell them. A key is 1 to LIMIT_LABEL_KEY bytes of
 * [A-Za-z0-9._/-] starting with a letter or digit; a value 1 to LIMIT_LABEL_VALUE bytes of
 * [A-Za-z0-9._:/-]. Neither holds '=', ',' or a space, so "KEY=VALUE" splits at its '=' and a
 * CSV field or a URL query carries one unquoted. An agent has at most LIMIT_LABELS.
 */
#ifndef PROTO_LABELS_H
#define PROTO_LABELS_H

#include <stdbool.h>
#include <stddef.h>

#include "proto/limits.h"

bool label_key_valid(const char *key);
bool label_value_valid(const char *value);

/*
 * "KEY=VALUE" into key and value (NUL-terminated); -EINVAL if it is not one '=' between a
 * valid key and a valid value.
 */
int label_parse(const char *text, char key[LIMIT_LABEL_KEY + 1],
		char value[LIMIT_LABEL_VALUE + 1]);

#endif
