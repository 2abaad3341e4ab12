/* SPDX-License-Identifier: Apache-2.0 */
#include "utf8.h"

#include <string.h>

#include "util.h"

size_t utf8_seq_len(const unsigned char *p, size_t n)
{
	unsigned char b = p[0], lo = 0x80, hi = 0xbf;
	size_t len;

	if (b < 0x80)
		return 1;
	if (b < 0xc2 || b > 0xf4)
		return 0;
	len = b < 0xe0 ? 2 : b < 0xf0 ? 3 :
					4;
	if (b == 0xe0)
		lo = 0xa0; /* no overlong 3-byte forms */
	else if (b == 0xed)
		hi = 0x9f; /* no surrogates */
	else if (b == 0xf0)
		lo = 0x90; /* no overlong 4-byte forms */
	else if (b == 0xf4)
		hi = 0x8f; /* nothing above U+10FFFF */
	if (n < len || p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

bool utf8_is_text(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0, l; i < n; i += l) {
		l = p[i] ? utf8_seq_len(p + i, n - i) : 0;
		if (!l)
			return false;
	}
	return true;
}

char *utf8_clean(const char *s, size_t n, size_t *out_len)
{
	const unsigned char *p = (const unsigned char *)s;
	char *out = xmalloc(n * 3 + 1);
	size_t o = 0;

	for (size_t i = 0; i < n;) {
		size_t l = utf8_seq_len(p + i, n - i);

		if (l) {
			memcpy(out + o, p + i, l);
			o += l;
			i += l;
		} else {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		}
	}
	out[o] = '\0';
	*out_len = o;
	return out;
}
