#include "fcgirec.h"

#include <stdio.h>
#include <string.h>

long fcgirec_parse(const uint8_t *p, size_t n, size_t max_len,
    struct fcgi_rec *r)
{
	size_t clen, plen;

	if ((n >= 1 && p[0] != FCGI_VERSION_1) || (n >= 2 && p[1] == 0))
		return -1;
	if (n < FCGI_HEADER_LEN)
		return 0;
	clen = (size_t)p[4] << 8 | p[5];
	plen = p[6];
	if (clen > max_len)
		return -1;
	if (n < FCGI_HEADER_LEN + clen + plen)
		return 0;
	r->type = p[1];
	r->id = (uint16_t)(p[2] << 8 | p[3]);
	r->len = (uint16_t)clen;
	r->body = p + FCGI_HEADER_LEN;
	return (long)(FCGI_HEADER_LEN + clen + plen);
}

int fcgirec_begin(const struct fcgi_rec *r, uint16_t *role, uint8_t *flags)
{
	if (r->type != FCGI_BEGIN_REQUEST || r->len != 8)
		return -1;
	*role = (uint16_t)(r->body[0] << 8 | r->body[1]);
	*flags = r->body[2];
	return 0;
}

/* One length: a byte below 0x80, or four bytes with the top bit set. */
static int nv_len(const uint8_t *p, size_t n, size_t *off, size_t *len)
{
	if (*off >= n)
		return -1;
	if (!(p[*off] & 0x80)) {
		*len = p[(*off)++];
		return 0;
	}
	if (n - *off < 4)
		return -1;
	*len = (size_t)(p[*off] & 0x7f) << 24 | (size_t)p[*off + 1] << 16 |
	    (size_t)p[*off + 2] << 8 | p[*off + 3];
	*off += 4;
	return 0;
}

int fcgirec_nv_next(const uint8_t *p, size_t n, size_t *off,
    const uint8_t **name, size_t *nlen, const uint8_t **val, size_t *vlen)
{
	if (*off == n)
		return 0;
	if (nv_len(p, n, off, nlen) == -1 || nv_len(p, n, off, vlen) == -1)
		return -1;
	if (*nlen > n - *off || *vlen > n - *off - *nlen)
		return -1;
	*name = p + *off;
	*val = p + *off + *nlen;
	*off += *nlen + *vlen;
	return 1;
}

static void put_header(uint8_t h[FCGI_HEADER_LEN], uint8_t type, uint16_t id,
    size_t clen, size_t plen)
{
	h[0] = FCGI_VERSION_1;
	h[1] = type;
	h[2] = (uint8_t)(id >> 8);
	h[3] = (uint8_t)id;
	h[4] = (uint8_t)(clen >> 8);
	h[5] = (uint8_t)clen;
	h[6] = (uint8_t)plen;
	h[7] = 0;
}

/* One record of clen <= FCGI_MAX_CONTENT bytes, zero-padded to 8. */
static int put_record(struct buf *out, uint8_t type, uint16_t id,
    const void *p, size_t clen)
{
	static const uint8_t zeros[8];
	uint8_t h[FCGI_HEADER_LEN];
	size_t plen = (8 - clen % 8) % 8;

	put_header(h, type, id, clen, plen);
	if (buf_append(out, h, sizeof(h)) == -1 ||
	    (clen && buf_append(out, p, clen) == -1) ||
	    (plen && buf_append(out, zeros, plen) == -1))
		return -1;
	return 0;
}

/* Undoes a partial write so that a failed writer leaves out unchanged. */
static int undo(struct buf *out, size_t mark)
{
	out->len = mark;
	if (out->data)
		out->data[mark] = '\0';
	return -1;
}

int fcgirec_put_stream(struct buf *out, uint8_t type, uint16_t id,
    const void *p, size_t n)
{
	const uint8_t *s = p;
	size_t mark = out->len, k;

	if (n == 0)
		return put_record(out, type, id, NULL, 0) == -1 ? undo(out, mark) : 0;
	while (n) {
		k = n > FCGI_MAX_CONTENT ? FCGI_MAX_CONTENT : n;
		if (put_record(out, type, id, s, k) == -1)
			return undo(out, mark);
		s += k;
		n -= k;
	}
	return 0;
}

int fcgirec_put_end(struct buf *out, uint16_t id, uint32_t app_status,
    uint8_t proto_status)
{
	uint8_t b[8] = { (uint8_t)(app_status >> 24), (uint8_t)(app_status >> 16),
	    (uint8_t)(app_status >> 8), (uint8_t)app_status, proto_status, 0, 0, 0 };
	size_t mark = out->len;

	return put_record(out, FCGI_END_REQUEST, id, b, 8) == -1 ?
	    undo(out, mark) : 0;
}

int fcgirec_put_unknown(struct buf *out, uint8_t type)
{
	uint8_t b[8] = { type, 0, 0, 0, 0, 0, 0, 0 };
	size_t mark = out->len;

	return put_record(out, FCGI_UNKNOWN_TYPE, 0, b, 8) == -1 ?
	    undo(out, mark) : 0;
}

static int put_len(struct buf *out, size_t n)
{
	uint8_t b[4] = { (uint8_t)(n >> 24 | 0x80), (uint8_t)(n >> 16),
	    (uint8_t)(n >> 8), (uint8_t)n };

	if (n < 0x80) {
		b[0] = (uint8_t)n;
		return buf_append(out, b, 1);
	}
	return n > 0x7fffffff ? -1 : buf_append(out, b, 4);
}

int fcgirec_put_nv(struct buf *out, const char *name, size_t nlen,
    const char *val, size_t vlen)
{
	size_t mark = out->len;

	if (put_len(out, nlen) == -1 || put_len(out, vlen) == -1 ||
	    buf_append(out, name, nlen) == -1 ||
	    (vlen && buf_append(out, val, vlen) == -1))
		return undo(out, mark);
	return 0;
}

/* The value pushd gives for one GET_VALUES name, or NULL when unknown. */
static const char *value_of(const uint8_t *name, size_t n, char *num,
    size_t numlen, unsigned max_conns, unsigned max_reqs)
{
	if (n == 15 && !memcmp(name, "FCGI_MPXS_CONNS", 15))
		return "1";
	if (n == 14 && !memcmp(name, "FCGI_MAX_CONNS", 14)) {
		snprintf(num, numlen, "%u", max_conns);
		return num;
	}
	if (n == 13 && !memcmp(name, "FCGI_MAX_REQS", 13)) {
		snprintf(num, numlen, "%u", max_reqs);
		return num;
	}
	return NULL;
}

int fcgirec_put_values(struct buf *out, const struct fcgi_rec *query,
    unsigned max_conns, unsigned max_reqs)
{
	struct buf body;
	const uint8_t *name, *val;
	const char *v;
	char num[16];
	size_t off = 0, nlen, vlen, mark = out->len;
	int rc;

	buf_init(&body, FCGI_MAX_CONTENT);
	while ((rc = fcgirec_nv_next(query->body, query->len, &off, &name,
	    &nlen, &val, &vlen)) == 1) {
		v = value_of(name, nlen, num, sizeof(num), max_conns, max_reqs);
		if (v && fcgirec_put_nv(&body, (const char *)name, nlen, v,
		    strlen(v)) == -1)
			rc = -1;
		if (rc == -1)
			break;
	}
	if (rc == 0 && put_record(out, FCGI_GET_VALUES_RESULT, 0, body.data,
	    body.len) == -1)
		rc = undo(out, mark) - 1;
	buf_free(&body);
	return rc;
}
