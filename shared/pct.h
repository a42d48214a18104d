/* pct: percent-encoding (RFC 3986) for what postern puts into or takes out
 * of URLs: path segments, query parameters, URI template values and the
 * RFC 5987 filename* parameter. */
#ifndef POSTERN_PCT_H
#define POSTERN_PCT_H

#include <stddef.h>

#include "buf.h"

/* Decodes the n bytes at s into out (size outlen, NUL-terminated). '+' is
 * a plus, not a space. Returns the decoded length, or -1 for a broken
 * escape, an encoded NUL, or when it does not fit. */
long pct_decode(const char *s, size_t n, char *out, size_t outlen);
/* Appends the n bytes at s to b, every byte that is neither an ASCII letter
 * or digit nor in keep as %XX. 0, or -1 when b is full. */
int pct_encode(struct buf *b, const char *s, size_t n, const char *keep);
/* The value of key in a query string ("a=1&b=2"), decoded into out.
 * Returns 1 when found, 0 when absent, -1 when malformed or too long. */
int pct_query(const char *query, const char *key, char *out, size_t outlen);

/* What RFC 3986 leaves unencoded beside letters and digits, and what RFC
 * 5987 allows in a filename* value. */
#define PCT_UNRESERVED "-._~"
#define PCT_ATTR_CHAR "!#$&+-.^_`|~"

#endif
