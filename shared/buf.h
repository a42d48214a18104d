/* buf: the one growable byte buffer, always NUL-terminated, with a hard
 * maximum so that nothing read from outside can grow without bound. */
#ifndef POSTERN_BUF_H
#define POSTERN_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct buf {
	char *data;   /* NULL until the first append; then NUL-terminated */
	size_t len;
	size_t cap;
	size_t max;   /* appends that would pass this fail */
};

void buf_init(struct buf *b, size_t max);
/* Each returns 0, or -1 when the result would pass max or memory ran out
 * (the buffer is then unchanged). */
int buf_append(struct buf *b, const void *p, size_t n);
int buf_puts(struct buf *b, const char *s);
int buf_putc(struct buf *b, char c);
/* Adds n bytes (zeroed) and returns where they start, or NULL. */
void *buf_extend(struct buf *b, size_t n);
int buf_printf(struct buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int buf_vprintf(struct buf *b, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
/* The contents as a string: "" when empty, never NULL. */
const char *buf_str(const struct buf *b);
void buf_reset(struct buf *b);
/* Frees the storage, wiping it first when it may hold a secret. */
void buf_free(struct buf *b);
void buf_wipe_free(struct buf *b);

#endif
