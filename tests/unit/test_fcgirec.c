/* fcgirec: every record type, every split point, the caps, the padding. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fcgirec.h"

/* A record with the header written by hand, as a web server sends it. */
static void raw(struct buf *b, uint8_t type, uint16_t id, const void *p,
    size_t n, uint8_t pad)
{
	uint8_t h[8] = { 1, type, (uint8_t)(id >> 8), (uint8_t)id,
	    (uint8_t)(n >> 8), (uint8_t)n, pad, 0 };
	static const uint8_t zeros[255];

	assert_int_equal(buf_append(b, h, 8), 0);
	if (n)
		assert_int_equal(buf_append(b, p, n), 0);
	if (pad)
		assert_int_equal(buf_append(b, zeros, pad), 0);
}

/* What lighttpd sends for one GET, and more: both length encodings. */
static void request_stream(struct buf *b)
{
	static const uint8_t begin[8] = { 0, FCGI_RESPONDER, FCGI_KEEP_CONN };
	struct buf nv;
	char longval[300];

	memset(longval, 'x', sizeof(longval));
	buf_init(&nv, 4096);
	assert_int_equal(fcgirec_put_nv(&nv, "REQUEST_METHOD", 14, "GET", 3), 0);
	assert_int_equal(fcgirec_put_nv(&nv, "HTTP_COOKIE", 11, longval,
	    sizeof(longval)), 0);
	raw(b, FCGI_BEGIN_REQUEST, 1, begin, 8, 0);
	raw(b, FCGI_PARAMS, 1, nv.data, nv.len, 3);
	raw(b, FCGI_PARAMS, 1, NULL, 0, 0);
	raw(b, FCGI_STDIN, 1, "body", 4, 4);
	raw(b, FCGI_STDIN, 1, NULL, 0, 0);
	raw(b, FCGI_ABORT_REQUEST, 1, NULL, 0, 0);
	raw(b, FCGI_GET_VALUES, 0, NULL, 0, 0);
	buf_free(&nv);
}

static const uint8_t stream_types[] = {
	FCGI_BEGIN_REQUEST, FCGI_PARAMS, FCGI_PARAMS, FCGI_STDIN, FCGI_STDIN,
	FCGI_ABORT_REQUEST, FCGI_GET_VALUES
};

/* Parses p as a reader does that gets n bytes first and the rest later:
 * the records must come out the same for every split. */
static void parse_split(const uint8_t *p, size_t len, size_t split)
{
	uint8_t *held = malloc(len);
	size_t have = 0, fed = 0, got = 0;
	struct fcgi_rec r;
	long k;

	assert_non_null(held);
	while (fed < len) {
		size_t step = fed == 0 ? split : len - fed;

		memcpy(held + have, p + fed, step);
		have += step;
		fed += step;
		while ((k = fcgirec_parse(held, have, FCGI_MAX_CONTENT, &r)) > 0) {
			assert_true(got < sizeof(stream_types));
			assert_int_equal(r.type, stream_types[got]);
			assert_int_equal(r.id, r.type == FCGI_GET_VALUES ? 0 : 1);
			got++;
			memmove(held, held + k, have - (size_t)k);
			have -= (size_t)k;
		}
		assert_int_equal(k, 0);
	}
	assert_int_equal(got, sizeof(stream_types));
	assert_int_equal(have, 0);
	free(held);
}

static void every_split(void **state)
{
	struct buf b;
	size_t i;

	buf_init(&b, 1 << 16);
	request_stream(&b);
	for (i = 1; i <= b.len; i++)
		parse_split((const uint8_t *)b.data, b.len, i);
	buf_free(&b);
}

static void params_both_lengths(void **state)
{
	struct buf b;
	struct fcgi_rec r;
	const uint8_t *name, *val;
	size_t off = 0, nlen, vlen;
	uint16_t role;
	uint8_t flags;

	buf_init(&b, 1 << 16);
	request_stream(&b);
	assert_int_equal(fcgirec_parse((uint8_t *)b.data, b.len, 65535, &r), 16);
	assert_int_equal(fcgirec_begin(&r, &role, &flags), 0);
	assert_int_equal(role, FCGI_RESPONDER);
	assert_int_equal(flags, FCGI_KEEP_CONN);
	assert_true(fcgirec_parse((uint8_t *)b.data + 16, b.len - 16, 65535, &r) > 0);
	assert_int_equal(r.type, FCGI_PARAMS);
	assert_int_equal(fcgirec_nv_next(r.body, r.len, &off, &name, &nlen, &val, &vlen), 1);
	assert_int_equal(nlen, 14);
	assert_memory_equal(name, "REQUEST_METHOD", 14);
	assert_int_equal(vlen, 3);
	assert_memory_equal(val, "GET", 3);
	assert_int_equal(fcgirec_nv_next(r.body, r.len, &off, &name, &nlen, &val, &vlen), 1);
	assert_int_equal(vlen, 300);      /* the 4-byte length */
	assert_int_equal(r.body[off - 300 - 11 - 4], 0x80);
	assert_int_equal(fcgirec_nv_next(r.body, r.len, &off, &name, &nlen, &val, &vlen), 0);
	buf_free(&b);
}

static void malformed_refused(void **state)
{
	uint8_t rec[16] = { 1, FCGI_STDIN, 0, 1, 0, 8, 0, 0 };
	struct fcgi_rec r;
	uint16_t role;
	uint8_t flags;

	assert_int_equal(fcgirec_parse(rec, 16, 65535, &r), 16);
	rec[0] = 2;                                     /* version */
	assert_int_equal(fcgirec_parse(rec, 16, 65535, &r), -1);
	assert_int_equal(fcgirec_parse(rec, 1, 65535, &r), -1);
	rec[0] = 1;
	rec[1] = 0;                                     /* type 0 */
	assert_int_equal(fcgirec_parse(rec, 16, 65535, &r), -1);
	rec[1] = FCGI_STDIN;
	assert_int_equal(fcgirec_parse(rec, 16, 7, &r), -1);   /* over the cap */
	rec[4] = 0xff;                                  /* 65288 bytes: wait */
	assert_int_equal(fcgirec_parse(rec, 16, 65535, &r), 0);
	assert_int_equal(fcgirec_parse(rec, 7, 65535, &r), 0);
	rec[4] = 0;
	rec[1] = FCGI_BEGIN_REQUEST;                    /* body not 8 bytes */
	rec[5] = 4;
	assert_int_equal(fcgirec_parse(rec, 16, 65535, &r), 12);
	assert_int_equal(fcgirec_begin(&r, &role, &flags), -1);
}

static void nv_malformed(void **state)
{
	const uint8_t *name, *val;
	size_t off, nlen, vlen;
	static const uint8_t past[] = { 3, 1, 'a', 'b' };       /* runs past */
	static const uint8_t cut4[] = { 0x80, 0, 1 };           /* 4-byte cut */
	static const uint8_t huge[] = { 0xff, 0xff, 0xff, 0xff, 0 };
	static const uint8_t novalue[] = { 1 };

	off = 0;
	assert_int_equal(fcgirec_nv_next(past, sizeof(past), &off, &name, &nlen, &val, &vlen), -1);
	off = 0;
	assert_int_equal(fcgirec_nv_next(cut4, sizeof(cut4), &off, &name, &nlen, &val, &vlen), -1);
	off = 0;
	assert_int_equal(fcgirec_nv_next(huge, sizeof(huge), &off, &name, &nlen, &val, &vlen), -1);
	off = 0;
	assert_int_equal(fcgirec_nv_next(novalue, sizeof(novalue), &off, &name, &nlen, &val, &vlen), -1);
}

static void stdout_padding_and_split(void **state)
{
	struct buf b;
	struct fcgi_rec r;
	char *big = calloc(1, 70000);
	long k;
	size_t off = 0, total = 0;
	int n = 0;

	assert_non_null(big);
	buf_init(&b, 1 << 20);
	assert_int_equal(fcgirec_put_stream(&b, FCGI_STDOUT, 7, "hello", 5), 0);
	assert_int_equal(b.len, 16);                     /* 8 + 5 + 3 */
	assert_memory_equal(b.data + 13, "\0\0\0", 3);
	assert_int_equal((uint8_t)b.data[6], 3);
	buf_reset(&b);
	assert_int_equal(fcgirec_put_stream(&b, FCGI_STDOUT, 7, big, 70000), 0);
	assert_int_equal(b.len % 8, 0);
	while ((k = fcgirec_parse((uint8_t *)b.data + off, b.len - off, 65535, &r)) > 0) {
		assert_int_equal(r.type, FCGI_STDOUT);
		assert_int_equal(r.id, 7);
		assert_true(r.len <= FCGI_MAX_CONTENT);
		assert_int_equal(k % 8, 0);
		total += r.len;
		off += (size_t)k;
		n++;
	}
	assert_int_equal(n, 2);
	assert_int_equal(total, 70000);
	buf_reset(&b);
	assert_int_equal(fcgirec_put_stream(&b, FCGI_STDOUT, 7, NULL, 0), 0);
	assert_int_equal(b.len, 8);
	assert_int_equal(fcgirec_parse((uint8_t *)b.data, b.len, 65535, &r), 8);
	assert_int_equal(r.len, 0);
	buf_free(&b);
	free(big);
}

static void end_and_unknown(void **state)
{
	struct buf b;
	struct fcgi_rec r;

	buf_init(&b, 1024);
	assert_int_equal(fcgirec_put_end(&b, 258, 0x01020304, FCGI_OVERLOADED), 0);
	assert_int_equal(fcgirec_parse((uint8_t *)b.data, b.len, 65535, &r), 16);
	assert_int_equal(r.type, FCGI_END_REQUEST);
	assert_int_equal(r.id, 258);
	assert_int_equal(r.len, 8);
	assert_memory_equal(r.body, "\1\2\3\4\2\0\0\0", 8);
	buf_reset(&b);
	assert_int_equal(fcgirec_put_unknown(&b, 42), 0);
	assert_int_equal(fcgirec_parse((uint8_t *)b.data, b.len, 65535, &r), 16);
	assert_int_equal(r.type, FCGI_UNKNOWN_TYPE);
	assert_int_equal(r.id, 0);
	assert_int_equal(r.body[0], 42);
	buf_free(&b);
}

static void get_values(void **state)
{
	struct buf q, b;
	struct fcgi_rec r, res;
	const uint8_t *name, *val;
	size_t off = 0, nlen, vlen;
	int seen = 0;

	buf_init(&q, 1024);
	buf_init(&b, 1024);
	fcgirec_put_nv(&q, "FCGI_MPXS_CONNS", 15, "", 0);
	fcgirec_put_nv(&q, "FCGI_NOT_A_NAME", 15, "", 0);
	fcgirec_put_nv(&q, "FCGI_MAX_REQS", 13, "", 0);
	r = (struct fcgi_rec){ FCGI_GET_VALUES, 0, (uint16_t)q.len, (uint8_t *)q.data };
	assert_int_equal(fcgirec_put_values(&b, &r, 100, 64), 0);
	assert_true(fcgirec_parse((uint8_t *)b.data, b.len, 65535, &res) > 0);
	assert_int_equal(res.type, FCGI_GET_VALUES_RESULT);
	while (fcgirec_nv_next(res.body, res.len, &off, &name, &nlen, &val, &vlen) == 1) {
		if (nlen == 15) {
			assert_memory_equal(name, "FCGI_MPXS_CONNS", 15);
			assert_memory_equal(val, "1", vlen);
		} else {
			assert_memory_equal(name, "FCGI_MAX_REQS", 13);
			assert_memory_equal(val, "64", vlen);
		}
		seen++;
	}
	assert_int_equal(seen, 2);
	/* No room: refused apart from malformed, and nothing written. */
	buf_free(&b);
	buf_init(&b, 16);
	assert_int_equal(fcgirec_put_values(&b, &r, 100, 64), -2);
	assert_int_equal(b.len, 0);
	/* A malformed query is refused and writes nothing. */
	r.len = 1;
	buf_reset(&b);
	assert_int_equal(fcgirec_put_values(&b, &r, 100, 64), -1);
	assert_int_equal(b.len, 0);
	buf_free(&q);
	buf_free(&b);
}

static void writers_respect_max(void **state)
{
	struct buf b;

	buf_init(&b, 20);
	assert_int_equal(fcgirec_put_stream(&b, FCGI_STDOUT, 1, "abc", 3), 0);
	assert_int_equal(fcgirec_put_stream(&b, FCGI_STDOUT, 1, "abc", 3), -1);
	assert_int_equal(b.len, 16);
	assert_int_equal(fcgirec_put_end(&b, 1, 0, 0), -1);
	assert_int_equal(b.len, 16);
	buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_split),
		cmocka_unit_test(params_both_lengths),
		cmocka_unit_test(malformed_refused),
		cmocka_unit_test(nv_malformed),
		cmocka_unit_test(stdout_padding_and_split),
		cmocka_unit_test(end_and_unknown),
		cmocka_unit_test(get_values),
		cmocka_unit_test(writers_respect_max),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
