/* Fuzz target for percent-decoding and query strings (shared/pct.c).
 *
 * The input is decoded into a buffer of a size its first byte picks (the
 * result must fit, be NUL-terminated and no longer than the input),
 * encoded and decoded back (the same bytes must return, unless they hold
 * a NUL, which is refused), and read as a query string for the keys
 * postern asks for. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "pct.h"

static char out[1 << 16];

static void decode_bounded(const char *s, size_t n, size_t outlen)
{
	long k = pct_decode(s, n, out, outlen);

	if (k >= 0 && ((size_t)k >= outlen || (size_t)k > n || out[k] != '\0' ||
	    strlen(out) != (size_t)k))
		abort();
}

static void round_trip(const char *s, size_t n, const char *keep)
{
	struct buf b;
	long k;

	buf_init(&b, 3 * n + 1);
	if (pct_encode(&b, s, n, keep) == -1 || b.len > 3 * n)
		abort();
	k = pct_decode(buf_str(&b), b.len, out, sizeof(out));
	if (memchr(s, '\0', n) != NULL) {
		if (k != -1)
			abort();
	} else if (n < sizeof(out) &&
	    (k != (long)n || memcmp(out, s, n) != 0))
		abort();
	buf_free(&b);
}

static void query(const char *q, const char *key, size_t outlen)
{
	int rc = pct_query(q, key, out, outlen);

	if (rc < -1 || rc > 1 ||
	    (rc == 1 && (strnlen(out, outlen) >= outlen)))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const keys[] = { "url", "events", "closeafter",
	    "accept", "ping", "", "a" };
	char *s;
	size_t i;

	if (size == 0 || size >= sizeof(out) / 3)
		return 0;
	/* An exact copy, so that a read past the end is caught. */
	if ((s = malloc(size + 1)) == NULL)
		return 0;
	memcpy(s, data, size);
	decode_bounded(s, size, (size_t)data[0] % 64);
	decode_bounded(s, size, sizeof(out));
	round_trip(s, size, PCT_UNRESERVED);
	round_trip(s, size, PCT_ATTR_CHAR);
	s[size] = '\0';
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		query(s, keys[i], (size_t)data[0] % 32);
		query(s, keys[i], sizeof(out));
	}
	free(s);
	return 0;
}

#define FUZZ_CORPUS "pct"
#include "replay.h"
