/*
 * authenticode: the digest UEFI firmware logs for a PE/COFF image it loads (PCR 4,
 * EV_EFI_BOOT_SERVICES_APPLICATION): the Authenticode hash of "Windows Authenticode Portable
 * Executable Signature Format", computed the way EDK2 (OVMF) does it:
 *   1. the headers up to SizeOfHeaders, leaving out the CheckSum field and the Certificate
 *      Table entry of the data directories (when the image has one);
 *   2. each section's raw data (SizeOfRawData bytes at PointerToRawData), in the order of
 *      PointerToRawData;
 *   3. the bytes after what 1 and 2 covered, up to the end of the file less the size of the
 *      attribute certificate table (a signature appended by sbsign is left out).
 * A Linux bzImage with the EFI stub is such an image. Pure: no I/O; every offset and size of
 * the untrusted image is checked against its length first.
 */
#ifndef PROTO_AUTHENTICODE_H
#define PROTO_AUTHENTICODE_H

#include <stddef.h>
#include <stdint.h>

#include "proto/alg.h"

#define AUTHENTICODE_MAX_SECTIONS 96u /* the PE/COFF specification's limit */

/*
 * out = the Authenticode digest of the image in bank alg (alg->size bytes). 0; -EINVAL with
 * *why (a static string naming the field) for an image that is not a well-formed PE/COFF file;
 * -ENOMEM or -EIO (OpenSSL) otherwise.
 */
int authenticode_digest(const struct alg *alg, const uint8_t *img, size_t len, uint8_t *out,
			const char **why);

#endif
