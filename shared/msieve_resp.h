/* msieve_resp: a ManageSieve (RFC 5804) server's answer, parsed. Pure:
 * bytes in, one answer out, no I/O, hard bounds on every line, string
 * and literal (the fuzz target drives it); the client is msieve.c. */
#ifndef POSTERN_MSIEVE_RESP_H
#define POSTERN_MSIEVE_RESP_H

#include <stddef.h>

#include "buf.h"

/* A line outside its literals and its CRLF, whether it comes whole or
 * in pieces: Cyrus's longest, the SIEVE capability, is about 300 bytes;
 * RFC 5804 caps a quoted string at 1024. */
#define MSIEVE_LINE_MAX 4096
/* Data lines in one answer: a dozen capabilities, or one per script
 * (Cyrus keeps at most 5 by default). */
#define MSIEVE_ITEMS_MAX 64
#define MSIEVE_CODE_MAX 64

enum msieve_status { MSIEVE_ST_OK, MSIEVE_ST_NO, MSIEVE_ST_BYE };

/* msieve_parse's results. */
enum msieve_parsed { MSIEVE_PARSED, MSIEVE_MORE, MSIEVE_BAD };

/* One data line: its first string and, when it has one, its second
 * token (a capability's value, LISTSCRIPTS's ACTIVE); offsets into the
 * answer's data, each string NUL-terminated there. */
struct msieve_item {
	size_t key, key_len;
	size_t val, val_len;
	int has_val;
};

/* One whole answer: its data lines, then the OK, NO or BYE line. */
struct msieve_resp {
	int status;                  /* enum msieve_status */
	char code[MSIEVE_CODE_MAX];  /* "QUOTA/MAXSCRIPTS", "" when none */
	struct buf text;             /* the human text, "" when none */
	struct buf data;             /* the data lines' strings */
	struct msieve_item items[MSIEVE_ITEMS_MAX];
	int n_items;
	size_t max;                  /* bytes of one string or literal */
};

/* max bounds one string or literal (a script: max_request). */
void msieve_resp_init(struct msieve_resp *m, size_t max);
void msieve_resp_free(struct msieve_resp *m);
/* Parses the answer at the start of p[0..n) into m (reset first).
 * MSIEVE_PARSED with *used the bytes it took; MSIEVE_MORE when p ends
 * before it does, *used then the length p must reach before trying
 * again; MSIEVE_BAD when it is not ManageSieve or passes a bound (a line
 * over MSIEVE_LINE_MAX, a string over m->max, more than
 * MSIEVE_ITEMS_MAX lines). */
int msieve_parse(const char *p, size_t n, struct msieve_resp *m,
    size_t *used);
/* Item i's first string, or its second token ("" when it has none). */
const char *msieve_key(const struct msieve_resp *m, int i);
const char *msieve_val(const struct msieve_resp *m, int i);
/* The line an error text names ("line 4: syntax error"), or 0. */
long msieve_error_line(const char *text);

#endif
