/* fcgirec: the FastCGI record codec pushd speaks (FastCGI 1.0 spec). Pure:
 * no I/O and no state beyond its arguments, so that it can be unit-tested
 * byte by byte and fuzzed. Readers refuse anything malformed or over the
 * caps; writers split and pad as the spec asks. */
#ifndef POSTERN_FCGIREC_H
#define POSTERN_FCGIREC_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#define FCGI_HEADER_LEN 8
#define FCGI_VERSION_1 1
#define FCGI_MAX_CONTENT 65535
/* The largest whole record: header, content and the most padding. */
#define FCGI_MAX_RECORD (FCGI_HEADER_LEN + FCGI_MAX_CONTENT + 255)

enum fcgi_type {
	FCGI_BEGIN_REQUEST = 1,
	FCGI_ABORT_REQUEST = 2,
	FCGI_END_REQUEST = 3,
	FCGI_PARAMS = 4,
	FCGI_STDIN = 5,
	FCGI_STDOUT = 6,
	FCGI_STDERR = 7,
	FCGI_DATA = 8,
	FCGI_GET_VALUES = 9,
	FCGI_GET_VALUES_RESULT = 10,
	FCGI_UNKNOWN_TYPE = 11
};

#define FCGI_RESPONDER 1
#define FCGI_KEEP_CONN 1

enum fcgi_proto_status {
	FCGI_REQUEST_COMPLETE = 0,
	FCGI_CANT_MPX_CONN = 1,
	FCGI_OVERLOADED = 2,
	FCGI_UNKNOWN_ROLE = 3
};

/* One record as read; body points into the caller's bytes. */
struct fcgi_rec {
	uint8_t type;
	uint16_t id;
	uint16_t len;
	const uint8_t *body;
};

/* Reads one record from the n bytes at p. Returns the bytes it spans
 * (header, content and padding) with *r filled in, 0 when more bytes are
 * needed, or -1 when the record is malformed (a version other than 1, a
 * type of 0, content longer than max_len). */
long fcgirec_parse(const uint8_t *p, size_t n, size_t max_len,
    struct fcgi_rec *r);
/* The role and flags of a BEGIN_REQUEST body: 0, or -1 when the body is
 * not the 8 bytes the spec fixes. */
int fcgirec_begin(const struct fcgi_rec *r, uint16_t *role, uint8_t *flags);
/* Walks the name-value pairs of a PARAMS or GET_VALUES stream (p, n) from
 * *off. Returns 1 with the next pair (pointers into p), 0 at the end, -1
 * when a length is malformed or runs past n. */
int fcgirec_nv_next(const uint8_t *p, size_t n, size_t *off,
    const uint8_t **name, size_t *nlen, const uint8_t **val, size_t *vlen);

/* Writers append to out; each returns 0, or -1 when out's maximum would be
 * passed (out is then unchanged). */
/* A stream record (STDOUT, STDERR) carrying n bytes, split into records of
 * at most FCGI_MAX_CONTENT bytes and padded to a multiple of 8; n == 0
 * writes the empty record that ends the stream. */
int fcgirec_put_stream(struct buf *out, uint8_t type, uint16_t id,
    const void *p, size_t n);
int fcgirec_put_end(struct buf *out, uint16_t id, uint32_t app_status,
    uint8_t proto_status);
int fcgirec_put_unknown(struct buf *out, uint8_t type);
/* One name-value pair in FastCGI's encoding (1- or 4-byte lengths). */
int fcgirec_put_nv(struct buf *out, const char *name, size_t nlen,
    const char *val, size_t vlen);
/* Answers a GET_VALUES record: FCGI_MPXS_CONNS "1", and FCGI_MAX_CONNS,
 * FCGI_MAX_REQS from the arguments; names it does not know are left out,
 * as the spec asks. 0, -1 on a malformed query, -2 when out is full. */
int fcgirec_put_values(struct buf *out, const struct fcgi_rec *query,
    unsigned max_conns, unsigned max_reqs);

#endif
