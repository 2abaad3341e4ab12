/* SPDX-License-Identifier: Apache-2.0 */
#ifndef AGENTSBX_UTF8_H
#define AGENTSBX_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* Length of the well-formed UTF-8 sequence at p (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF), 0 if there is none. */
size_t utf8_seq_len(const unsigned char *p, size_t n);

/* s[0..n) well-formed UTF-8 with no NUL byte: text as JSON can carry it. */
bool utf8_is_text(const char *s, size_t n);

/* A heap copy of s[0..n) in which each byte that starts no well-formed
 * sequence is U+FFFD; NUL-terminated, *out_len without the NUL. */
char *utf8_clean(const char *s, size_t n, size_t *out_len);

#endif
