/*
 * Helpers shared by attestctl subcommands.
 *
 * attestctl_map_file(): maps a regular file read-only (an empty file gives *buf NULL, *len 0);
 * release with attestctl_unmap_file(). Returns 0 or -errno.
 */
#ifndef VERIFIER_ATTESTCTL_UTIL_H
#define VERIFIER_ATTESTCTL_UTIL_H

#include <stddef.h>
#include <stdint.h>

int attestctl_map_file(const char *path, const uint8_t **buf, size_t *len);
void attestctl_unmap_file(const uint8_t *buf, size_t len);

#endif
