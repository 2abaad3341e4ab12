/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_BASE64_H
#define AGENTSBX_BASE64_H

#include <stddef.h>

/* RFC 4648 base64 with padding.  Heap strings, NUL-terminated. */
char *base64_encode(const void *data, size_t len);
/* -1 on a character outside the alphabet or a bad length; whitespace is
 * not allowed. */
int base64_decode(const char *text, size_t text_len, char **out, size_t *out_len);

#endif
