#include "sse.h"

#include <string.h>

void sse_init(struct sse *s, sse_cb cb, void *ctx)
{
	memset(s, 0, sizeof(*s));
	buf_init(&s->line, SSE_LINE_MAX);
	buf_init(&s->data, SSE_DATA_MAX);
	s->cb = cb;
	s->ctx = ctx;
}

void sse_reset(struct sse *s)
{
	buf_free(&s->line);
	buf_free(&s->data);
	s->event[0] = '\0';
	s->has_data = s->cr = s->broken = s->started = 0;
}

void sse_free(struct sse *s)
{
	buf_free(&s->line);
	buf_free(&s->data);
}

/* The blank line: the event is dispatched when it has data. */
static int dispatch(struct sse *s)
{
	int rc = 0;
	size_t n = s->data.len;

	if (s->has_data) {
		if (n && s->data.data[n - 1] == '\n')
			s->data.data[--n] = '\0';
		rc = s->cb(s->ctx, s->event[0] ? s->event : "message",
		    n ? s->data.data : "", n, s->id);
	}
	buf_free(&s->data);
	s->has_data = 0;
	s->event[0] = '\0';
	return rc;
}

/* One whole line (no terminator). */
static int line(struct sse *s, const char *p, size_t n)
{
	const char *colon, *v;
	size_t fn, vn;

	/* A UTF-8 byte-order mark may open the stream. */
	if (!s->started) {
		s->started = 1;
		if (n >= 3 && !memcmp(p, "\xEF\xBB\xBF", 3)) {
			p += 3;
			n -= 3;
		}
	}
	if (n == 0)
		return dispatch(s);
	if (p[0] == ':')
		return 0;
	colon = memchr(p, ':', n);
	fn = colon ? (size_t)(colon - p) : n;
	v = colon ? colon + 1 : p + n;
	vn = n - (size_t)(v - p);
	if (vn && *v == ' ') {
		v++;
		vn--;
	}
	if (fn == 4 && !memcmp(p, "data", 4)) {
		if (buf_append(&s->data, v, vn) == -1 ||
		    buf_putc(&s->data, '\n') == -1)
			return -1;
		s->has_data = 1;
	} else if (fn == 5 && !memcmp(p, "event", 5)) {
		if (vn > SSE_NAME_MAX)
			return -1;
		memcpy(s->event, v, vn);
		s->event[vn] = '\0';
	} else if (fn == 2 && !memcmp(p, "id", 2)) {
		if (vn > SSE_ID_MAX)
			return -1;
		memcpy(s->id, v, vn);
		s->id[vn] = '\0';
	}
	/* retry and unknown fields: ignored. */
	return 0;
}

int sse_feed(struct sse *s, const char *p, size_t n)
{
	size_t i = 0, start;
	int rc;

	if (s->broken)
		return -1;
	if (s->cr && i < n) {
		s->cr = 0;
		if (p[i] == '\n')
			i++;
	}
	while (i < n) {
		start = i;
		while (i < n && p[i] != '\n' && p[i] != '\r' && p[i] != '\0')
			i++;
		if (i < n && p[i] == '\0')
			goto broken;
		if (i == n) {
			if (buf_append(&s->line, p + start, i - start) == -1)
				goto broken;
			break;
		}
		/* p[i] ends the line. */
		if (s->line.len) {
			if (buf_append(&s->line, p + start, i - start) == -1)
				goto broken;
			rc = line(s, s->line.data, s->line.len);
			buf_free(&s->line);
		} else {
			if (i - start > SSE_LINE_MAX)
				goto broken;
			rc = line(s, p + start, i - start);
		}
		if (p[i] == '\r') {
			if (i + 1 < n) {
				if (p[i + 1] == '\n')
					i++;
			} else
				s->cr = 1;
		}
		i++;
		if (rc == -1)
			goto broken;
		if (rc)
			return rc;
	}
	return 0;
broken:
	s->broken = 1;
	buf_free(&s->line);
	buf_free(&s->data);
	return -1;
}
