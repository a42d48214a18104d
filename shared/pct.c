#include "pct.h"

#include <string.h>

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

long pct_decode(const char *s, size_t n, char *out, size_t outlen)
{
	size_t i, k = 0;
	int hi, lo;

	if (outlen == 0)
		return -1;
	for (i = 0; i < n; i++) {
		if (k + 1 >= outlen)
			return -1;
		if (s[i] != '%') {
			if (s[i] == '\0')
				return -1;
			out[k++] = s[i];
			continue;
		}
		if (i + 2 >= n)
			return -1;
		if ((hi = hexval(s[i + 1])) < 0 || (lo = hexval(s[i + 2])) < 0 ||
		    (hi == 0 && lo == 0))
			return -1;
		out[k++] = (char)(hi << 4 | lo);
		i += 2;
	}
	out[k] = '\0';
	return (long)k;
}

int pct_encode(struct buf *b, const char *s, size_t n, const char *keep)
{
	static const char hex[] = "0123456789ABCDEF";
	unsigned char c;
	char esc[3];
	size_t i;

	for (i = 0; i < n; i++) {
		c = (unsigned char)s[i];
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || (c && strchr(keep, c))) {
			if (buf_putc(b, (char)c) == -1)
				return -1;
			continue;
		}
		esc[0] = '%';
		esc[1] = hex[c >> 4];
		esc[2] = hex[c & 15];
		if (buf_append(b, esc, 3) == -1)
			return -1;
	}
	return 0;
}

int pct_query(const char *query, const char *key, char *out, size_t outlen)
{
	size_t klen = strlen(key), n;
	const char *p = query, *amp;

	while (p && *p) {
		amp = strchr(p, '&');
		n = amp ? (size_t)(amp - p) : strlen(p);
		if (n >= klen && !strncmp(p, key, klen) &&
		    (n == klen || p[klen] == '=')) {
			if (n == klen) {
				if (outlen == 0)
					return -1;
				out[0] = '\0';
				return 1;
			}
			return pct_decode(p + klen + 1, n - klen - 1, out,
			    outlen) < 0 ? -1 : 1;
		}
		p = amp ? amp + 1 : NULL;
	}
	return 0;
}
