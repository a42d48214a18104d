#include "buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

void buf_init(struct buf *b, size_t max)
{
	b->data = NULL;
	b->len = b->cap = 0;
	b->max = max;
}

/* Makes room for n more bytes plus the NUL. */
static int buf_grow(struct buf *b, size_t n)
{
	size_t need, cap;
	char *p;

	if (n > b->max || b->len > b->max - n)
		return -1;
	need = b->len + n + 1;
	if (need <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	if ((p = realloc(b->data, cap)) == NULL)
		return -1;
	b->data = p;
	b->cap = cap;
	return 0;
}

int buf_append(struct buf *b, const void *p, size_t n)
{
	if (buf_grow(b, n) == -1)
		return -1;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int buf_puts(struct buf *b, const char *s)
{
	return buf_append(b, s, strlen(s));
}

int buf_putc(struct buf *b, char c)
{
	return buf_append(b, &c, 1);
}

void *buf_extend(struct buf *b, size_t n)
{
	char *p;

	if (buf_grow(b, n) == -1)
		return NULL;
	p = b->data + b->len;
	memset(p, 0, n + 1);
	b->len += n;
	return p;
}

int buf_vprintf(struct buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0 || buf_grow(b, (size_t)n) == -1)
		return -1;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = buf_vprintf(b, fmt, ap);
	va_end(ap);
	return rc;
}

const char *buf_str(const struct buf *b)
{
	return b->data ? b->data : "";
}

void buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

void buf_free(struct buf *b)
{
	free(b->data);
	buf_init(b, b->max);
}

void buf_wipe_free(struct buf *b)
{
	if (b->data)
		OPENSSL_cleanse(b->data, b->cap);
	buf_free(b);
}
