/* Label syntax; the contract is in labels.h. */
#include "proto/labels.h"

#include <errno.h>
#include <string.h>

static bool alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* n bytes of s, 1 to max, each alnum or in `extra`. */
static bool spelt(const char *s, size_t n, size_t max, const char *extra)
{
	if (n == 0 || n > max)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!alnum(s[i]) && (s[i] == '\0' || !strchr(extra, s[i])))
			return false;
	return true;
}

bool label_key_valid(const char *key)
{
	return key && alnum(key[0]) && spelt(key, strlen(key), LIMIT_LABEL_KEY, "._/-");
}

bool label_value_valid(const char *value)
{
	return value && spelt(value, strlen(value), LIMIT_LABEL_VALUE, "._:/-");
}

int label_parse(const char *text, char key[LIMIT_LABEL_KEY + 1],
		char value[LIMIT_LABEL_VALUE + 1])
{
	const char *eq = text ? strchr(text, '=') : NULL;
	size_t kn, vn;

	if (!eq)
		return -EINVAL;
	kn = (size_t)(eq - text);
	vn = strlen(eq + 1);
	if (kn == 0 || kn > LIMIT_LABEL_KEY || vn == 0 || vn > LIMIT_LABEL_VALUE)
		return -EINVAL;
	memcpy(key, text, kn);
	key[kn] = '\0';
	memcpy(value, eq + 1, vn);
	value[vn] = '\0';
	return label_key_valid(key) && label_value_valid(value) ? 0 : -EINVAL;
}
