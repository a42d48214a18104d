/* Fuzz target for pushd's event-stream reader (pushd/sse.c).
 *
 * With libFuzzer:
 *   clang -g -DFUZZ_LIBFUZZER -fsanitize=fuzzer,address,undefined \
 *     -Ishared -Ipushd tests/fuzz/fuzz_sse.c pushd/sse.c shared/buf.c \
 *     -lcrypto -o fuzz_sse
 *   ./fuzz_sse tests/fuzz/corpus/sse
 * Built by make check without -DFUZZ_LIBFUZZER, it replays the corpus (the
 * files named on the command line, or the stored corpus) as a TAP test.
 *
 * The input is an upstream event stream. It is read whole, then in two
 * pieces split at a point the input picks, then in pieces of a size the
 * input picks: every read must yield the same events and the same end. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sse.h"

/* A hash of the events seen, so that reads can be compared cheaply. */
struct seen {
	uint64_t h;
	unsigned n;
};

static void mix(uint64_t *h, const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n--)
		*h = (*h ^ *c++) * 1099511628211ULL;
	*h = (*h ^ 0xff) * 1099511628211ULL;
}

static int cb(void *ctx, const char *event, const char *data, size_t len,
    const char *id)
{
	struct seen *s = ctx;

	if (strlen(event) > SSE_NAME_MAX || strlen(id) > SSE_ID_MAX ||
	    len > SSE_DATA_MAX || data[len] != '\0')
		abort();
	mix(&s->h, event, strlen(event));
	mix(&s->h, data, len);
	mix(&s->h, id, strlen(id));
	s->n++;
	return 0;
}

static int read_in(const uint8_t *p, size_t n, size_t step, struct seen *s)
{
	struct sse x;
	size_t off = 0, k;
	int rc = 0;

	sse_init(&x, cb, s);
	s->h = 1469598103934665603ULL;
	s->n = 0;
	while (off < n && rc == 0) {
		k = n - off < step ? n - off : step;
		rc = sse_feed(&x, (const char *)p + off, k);
		off += k;
	}
	sse_free(&x);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct seen a, b, c;
	struct sse x;
	size_t split;
	int ra, rb, rc;

	if (size == 0)
		return 0;
	ra = read_in(data, size, size, &a);
	split = data[0] % size;
	sse_init(&x, cb, &b);
	b.h = 1469598103934665603ULL;
	b.n = 0;
	rb = sse_feed(&x, (const char *)data, split);
	if (rb == 0)
		rb = sse_feed(&x, (const char *)data + split, size - split);
	sse_free(&x);
	rc = read_in(data, size, (size_t)(data[size - 1] % 7) + 1, &c);
	if (ra != rb || ra != rc || a.n != b.n || a.n != c.n || a.h != b.h ||
	    a.h != c.h)
		abort();
	return 0;
}

#define FUZZ_CORPUS "sse"
#include "replay.h"
