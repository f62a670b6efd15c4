/* EK certificates in NV: DER lengths and fill; the contract is in ekcert.h. */
#include "proto/ekcert.h"

#include <errno.h>
#include <limits.h>

#include <openssl/asn1.h>
#include <openssl/err.h>

int ekcert_der_length(const uint8_t *buf, size_t len, size_t *der_len)
{
	const unsigned char *p = buf;
	long body = 0;
	int tag = 0, cls = 0, ret;

	if (!buf || len < 2 || len > LONG_MAX)
		return -EINVAL;
	/* ASN1_get_object sets 0x80 when the stated length runs past len; 0x01 is indefinite. */
	ret = ASN1_get_object(&p, &body, &tag, &cls, (long)len);
	if (ret & 0x80) {
		ERR_clear_error();
		return -EINVAL;
	}
	if (ret != V_ASN1_CONSTRUCTED || tag != V_ASN1_SEQUENCE || cls != V_ASN1_UNIVERSAL ||
	    body < 0 || (size_t)body > len - (size_t)(p - buf))
		return -EINVAL;
	*der_len = (size_t)(p - buf) + (size_t)body;
	return 0;
}

bool ekcert_is_fill(const uint8_t *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (buf[i] != 0xFF && buf[i] != 0x00)
			return false;
	return true;
}

int ekcert_trim(const uint8_t *buf, size_t len, size_t *cert_len)
{
	size_t n = 0;

	if (ekcert_der_length(buf, len, &n) || !ekcert_is_fill(buf + n, len - n))
		return -EINVAL;
	*cert_len = n;
	return 0;
}

int ekcert_next(const uint8_t *buf, size_t len, size_t *off, size_t *cert_len)
{
	size_t n = 0;

	if (!buf || *off > len)
		return -EINVAL;
	if (ekcert_is_fill(buf + *off, len - *off)) {
		*off = len;
		return 1;
	}
	if (ekcert_der_length(buf + *off, len - *off, &n))
		return -EINVAL;
	*cert_len = n;
	*off += n;
	return 0;
}
