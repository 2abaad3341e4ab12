/* SPDX-License-Identifier: Apache-2.0 */
#include "base64.h"

#include <stdbool.h>
#include <stdlib.h>

#include "util.h"

static const char alphabet[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *base64_encode(const void *data, size_t len)
{
	const unsigned char *p = data;
	char *out = xmalloc((len + 2) / 3 * 4 + 1), *o = out;

	for (size_t i = 0; i < len; i += 3) {
		unsigned v = (unsigned)p[i] << 16;
		if (i + 1 < len)
			v |= (unsigned)p[i + 1] << 8;
		if (i + 2 < len)
			v |= p[i + 2];
		*o++ = alphabet[(v >> 18) & 63];
		*o++ = alphabet[(v >> 12) & 63];
		*o++ = i + 1 < len ? alphabet[(v >> 6) & 63] : '=';
		*o++ = i + 2 < len ? alphabet[v & 63] : '=';
	}
	*o = '\0';
	return out;
}

static int value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	return c == '+' ? 62 : c == '/' ? 63 :
					  -1;
}

int base64_decode(const char *text, size_t n, char **out, size_t *out_len)
{
	size_t pad = 0, o = 0;
	char *buf;

	if (n % 4)
		return -1;
	if (n && text[n - 1] == '=')
		pad++;
	if (n > 1 && text[n - 2] == '=')
		pad++;
	buf = xmalloc(n / 4 * 3 + 1);
	for (size_t i = 0; i < n; i += 4) {
		int v[4];
		for (int k = 0; k < 4; k++) {
			bool padding = i + (size_t)k >= n - pad;
			v[k] = padding ? 0 : value(text[i + (size_t)k]);
			if (v[k] < 0) {
				free(buf);
				return -1;
			}
		}
		unsigned w = (unsigned)v[0] << 18 | (unsigned)v[1] << 12 | (unsigned)v[2] << 6 |
			     (unsigned)v[3];
		buf[o++] = (char)(w >> 16);
		if (i + 2 < n - pad)
			buf[o++] = (char)(w >> 8);
		if (i + 3 < n - pad)
			buf[o++] = (char)w;
	}
	buf[o] = '\0';
	*out = buf;
	*out_len = o;
	return 0;
}
