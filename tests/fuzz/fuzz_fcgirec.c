/* Fuzz target for pushd's FastCGI record codec (pushd/fcgirec.c).
 *
 * With libFuzzer:
 *   clang -g -DFUZZ_LIBFUZZER -fsanitize=fuzzer,address,undefined \
 *     -Ishared -Ipushd \
 *     tests/fuzz/fuzz_fcgirec.c pushd/fcgirec.c shared/buf.c -lcrypto \
 *     -o fuzz_fcgirec
 *   ./fuzz_fcgirec tests/fuzz/corpus/fcgirec
 * Built by make check without -DFUZZ_LIBFUZZER, it replays the corpus (the
 * files named on the command line, or the stored corpus) as a TAP test.
 *
 * The input is a byte stream as a web server would send it. Every record
 * is read, its body walked the way pushd does (BEGIN, name-value pairs,
 * GET_VALUES answered), and the same stream read again in two pieces split
 * at a point the input picks: both reads must yield the same records. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fcgirec.h"

#define MAX_RECS 4096

struct seen {
	uint8_t type;
	uint16_t id, len;
};

static void walk(const struct fcgi_rec *r)
{
	const uint8_t *name, *val;
	size_t off = 0, nlen, vlen;
	uint16_t role;
	uint8_t flags;
	struct buf out;

	if (r->type == FCGI_BEGIN_REQUEST)
		(void)fcgirec_begin(r, &role, &flags);
	while (fcgirec_nv_next(r->body, r->len, &off, &name, &nlen, &val, &vlen) == 1)
		if (off > r->len)
			abort();
	buf_init(&out, 1 << 17);
	if (r->type == FCGI_GET_VALUES)
		(void)fcgirec_put_values(&out, r, 100, 64);
	(void)fcgirec_put_stream(&out, FCGI_STDOUT, r->id, r->body, r->len);
	if (out.len % 8)
		abort();
	buf_free(&out);
}

/* Reads the records of p[0..n); returns how many (into seen). */
static size_t read_all(const uint8_t *p, size_t n, struct seen *seen, int check)
{
	struct fcgi_rec r;
	size_t off = 0, k = 0;
	long used;

	while (k < MAX_RECS && (used = fcgirec_parse(p + off, n - off,
	    FCGI_MAX_CONTENT, &r)) > 0) {
		if ((size_t)used > n - off || r.body + r.len > p + n)
			abort();
		if (check)
			walk(&r);
		seen[k++] = (struct seen){ r.type, r.id, r.len };
		off += (size_t)used;
	}
	return k;
}

/* The same stream in two pieces: records whole in the first piece, then
 * the rest (the incomplete tail carried over, as pushd's connection does). */
static size_t read_split(const uint8_t *p, size_t n, size_t split,
    struct seen *seen)
{
	struct fcgi_rec r;
	size_t off = 0, k = 0;
	long used;

	while (k < MAX_RECS && (used = fcgirec_parse(p + off, split - off,
	    FCGI_MAX_CONTENT, &r)) > 0) {
		seen[k++] = (struct seen){ r.type, r.id, r.len };
		off += (size_t)used;
	}
	if (used == -1)
		return k;
	return k + read_all(p + off, n - off, seen + k, 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct seen a[MAX_RECS], b[MAX_RECS * 2];
	size_t na, nb, split;

	if (size == 0)
		return 0;
	na = read_all(data, size, a, 1);
	split = data[0] % size;
	nb = read_split(data, size, split, b);
	/* A malformed record stops both reads at the same place. */
	if (na < MAX_RECS && (nb < na || memcmp(a, b, na * sizeof(*a))))
		abort();
	return 0;
}

#define FUZZ_CORPUS "fcgirec"
#include "replay.h"
