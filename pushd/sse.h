/* sse: a strict reader of a text/event-stream (the upstream's EventSource
 * in relay mode). Pure: bytes in, events out through a callback, no I/O.
 * Lines end in CRLF, LF or CR (a CRLF split between two reads is one
 * end); fields `event`, `data`, `id`, `retry` and comments (":...") are
 * understood, others ignored, as the WHATWG rules say. Strict where those
 * rules leave room: a line longer than SSE_LINE_MAX, an event's data past
 * SSE_DATA_MAX, an event name past SSE_NAME_MAX or a NUL byte breaks the
 * stream (sse_feed returns -1 from then on). Memory is held only while a
 * line or an event is incomplete. */
#ifndef POSTERN_SSE_H
#define POSTERN_SSE_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#define SSE_LINE_MAX (16 * 1024)
#define SSE_DATA_MAX (64 * 1024)
#define SSE_NAME_MAX 64
#define SSE_ID_MAX 128

/* One dispatched event: its type ("message" when none was named), its
 * data (the data lines joined by LF, NUL-terminated) and the last event id
 * seen so far ("" when none). Returns 0 to go on, anything else to stop:
 * sse_feed then returns that value at once. */
typedef int (*sse_cb)(void *ctx, const char *event, const char *data,
    size_t len, const char *id);

struct sse {
	struct buf line;            /* the incomplete line */
	struct buf data;            /* the incomplete event's data */
	sse_cb cb;
	void *ctx;
	char event[SSE_NAME_MAX + 1];
	char id[SSE_ID_MAX + 1];
	uint8_t has_data;           /* a data field was seen */
	uint8_t cr;                 /* the last byte was CR: skip one LF */
	uint8_t broken;
	uint8_t started;            /* past the first line (and its BOM) */
};

void sse_init(struct sse *s, sse_cb cb, void *ctx);
/* Reads n more bytes: 0, -1 when the stream broke a rule (and forever
 * after), or the callback's non-zero answer. */
int sse_feed(struct sse *s, const char *p, size_t n);
/* Back to the start of a stream (a reconnect); the last id is kept. */
void sse_reset(struct sse *s);
void sse_free(struct sse *s);

#endif
