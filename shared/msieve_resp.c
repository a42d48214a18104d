#include "msieve_resp.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

struct cur {
	const char *p;
	size_t n, i;
	size_t line;      /* where the line began */
	size_t lit;       /* literal bytes in the line so far */
	size_t need;      /* MSIEVE_MORE: the length p must reach */
	size_t max;
};

/* The line's own bytes up to upto, its literals left out, stay within
 * the bound, its CRLF aside. Checked wherever a line grows and again at
 * its end, so a line is refused the same whether it comes whole or cut:
 * a whole line within the bound passes every check its prefixes meet. */
static int line_ok(const struct cur *c, size_t upto)
{
	return upto - c->line - c->lit <= MSIEVE_LINE_MAX + 2;
}

static int more(struct cur *c, size_t need)
{
	if (!line_ok(c, c->n))
		return MSIEVE_BAD;
	c->need = need;
	return MSIEVE_MORE;
}

/* RFC 5804's ATOM-CHAR: no CTL, space, parenthesis, brace, quote,
 * backslash, '%', '*' or ']'. */
static int atom_char(unsigned char ch)
{
	return ch > 0x20 && ch < 0x7f && strchr("(){\"\\%*]", ch) == NULL;
}

/* An atom of at most len - 1 bytes into out. */
static int atom(struct cur *c, char *out, size_t len)
{
	size_t k = 0;

	while (c->i < c->n && atom_char((unsigned char)c->p[c->i])) {
		if (k + 1 >= len || !line_ok(c, c->i + 1))
			return MSIEVE_BAD;
		out[k++] = c->p[c->i++];
	}
	out[k] = '\0';
	if (c->i == c->n)
		return more(c, c->n + 1);
	return k ? MSIEVE_PARSED : MSIEVE_BAD;
}

static int quoted(struct cur *c, struct buf *out)
{
	size_t i = c->i + 1;
	char ch;

	for (; i < c->n; i++) {
		ch = c->p[i];
		if (ch == '"')
			break;
		if (ch == '\r' || ch == '\n' || ch == '\0')
			return MSIEVE_BAD;
		if (ch == '\\') {
			if (++i == c->n)
				break;
			if ((ch = c->p[i]) != '"' && ch != '\\')
				return MSIEVE_BAD;
		}
		if (!line_ok(c, i) || buf_putc(out, ch) == -1)
			return MSIEVE_BAD;
	}
	if (i == c->n)
		return more(c, c->n + 1);
	c->i = i + 1;
	return MSIEVE_PARSED;
}

/* {n} or {n+}, CRLF, then n bytes. */
static int literal(struct cur *c, struct buf *out)
{
	size_t i = c->i + 1, len = 0;

	for (; i < c->n && isdigit((unsigned char)c->p[i]); i++) {
		len = len * 10 + (size_t)(c->p[i] - '0');
		/* leading zeros are digits too: the line bound holds them */
		if (len > c->max || !line_ok(c, i + 1))
			return MSIEVE_BAD;
	}
	if (i < c->n && c->p[i] == '+')
		i++;
	if (i + 3 > c->n)
		return more(c, i + 3);
	if (i == c->i + 1 || memcmp(c->p + i, "}\r\n", 3))
		return MSIEVE_BAD;
	i += 3;
	/* Waiting for the body: the line's own bytes are all in. */
	if (c->n - i < len) {
		if (!line_ok(c, i))
			return MSIEVE_BAD;
		c->need = i + len;
		return MSIEVE_MORE;
	}
	if (memchr(c->p + i, '\0', len) || buf_append(out, c->p + i, len) == -1)
		return MSIEVE_BAD;
	c->lit += len;
	c->i = i + len;
	return MSIEVE_PARSED;
}

/* A quoted string or a literal, appended to out. */
static int string(struct cur *c, struct buf *out)
{
	if (c->i == c->n)
		return more(c, c->n + 1);
	if (c->p[c->i] == '"')
		return quoted(c, out);
	if (c->p[c->i] == '{')
		return literal(c, out);
	return MSIEVE_BAD;
}

/* One byte that must come next. */
static int expect(struct cur *c, char ch)
{
	if (c->i == c->n)
		return more(c, c->n + 1);
	if (c->p[c->i] != ch)
		return MSIEVE_BAD;
	c->i++;
	return MSIEVE_PARSED;
}

/* A line's end, and its length checked once more whole. */
static int crlf(struct cur *c)
{
	int rc;

	if ((rc = expect(c, '\r')) != MSIEVE_PARSED ||
	    (rc = expect(c, '\n')) != MSIEVE_PARSED)
		return rc;
	return line_ok(c, c->i) ? MSIEVE_PARSED : MSIEVE_BAD;
}

/* "(" atom [SP string] ")": the code kept, its argument not. */
static int resp_code(struct cur *c, struct msieve_resp *m)
{
	struct buf arg;
	int rc;

	c->i++;
	if ((rc = atom(c, m->code, sizeof(m->code))) != MSIEVE_PARSED)
		return rc;
	if (c->i < c->n && c->p[c->i] == ' ') {
		c->i++;
		buf_init(&arg, MSIEVE_LINE_MAX);
		rc = string(c, &arg);
		buf_free(&arg);
		if (rc != MSIEVE_PARSED)
			return rc;
	}
	return expect(c, ')');
}

/* After OK, NO or BYE: [SP "(" code ")"] [SP string] CRLF. */
static int status_rest(struct cur *c, struct msieve_resp *m)
{
	int rc;

	if (c->i < c->n && c->p[c->i] == ' ' && c->i + 1 < c->n &&
	    c->p[c->i + 1] == '(') {
		c->i++;
		if ((rc = resp_code(c, m)) != MSIEVE_PARSED)
			return rc;
	}
	if (c->i < c->n && c->p[c->i] == ' ') {
		c->i++;
		if ((rc = string(c, &m->text)) != MSIEVE_PARSED)
			return rc;
	}
	return crlf(c);
}

static int status_line(struct cur *c, struct msieve_resp *m)
{
	char word[8];
	int rc;

	if ((rc = atom(c, word, sizeof(word))) != MSIEVE_PARSED)
		return rc;
	if (!strcasecmp(word, "OK"))
		m->status = MSIEVE_ST_OK;
	else if (!strcasecmp(word, "NO"))
		m->status = MSIEVE_ST_NO;
	else if (!strcasecmp(word, "BYE"))
		m->status = MSIEVE_ST_BYE;
	else
		return MSIEVE_BAD;
	return status_rest(c, m);
}

/* A token after the first: a string or an atom, into out. */
static int token(struct cur *c, struct buf *out)
{
	char a[MSIEVE_CODE_MAX];
	int rc;

	if (c->i < c->n && (c->p[c->i] == '"' || c->p[c->i] == '{'))
		return string(c, out);
	if ((rc = atom(c, a, sizeof(a))) != MSIEVE_PARSED)
		return rc;
	return buf_puts(out, a) == -1 ? MSIEVE_BAD : MSIEVE_PARSED;
}

/* string *(SP token) CRLF: its first string and second token kept. */
static int data_line(struct cur *c, struct msieve_resp *m)
{
	struct msieve_item *it;
	struct buf skip;
	int rc, k;

	if (m->n_items == MSIEVE_ITEMS_MAX)
		return MSIEVE_BAD;
	it = &m->items[m->n_items];
	memset(it, 0, sizeof(*it));
	it->key = m->data.len;
	if ((rc = string(c, &m->data)) != MSIEVE_PARSED)
		return rc;
	it->key_len = m->data.len - it->key;
	if (buf_putc(&m->data, '\0') == -1)
		return MSIEVE_BAD;
	for (k = 0; c->i < c->n && c->p[c->i] == ' '; k++) {
		c->i++;
		if (k == 0) {
			it->val = m->data.len;
			rc = token(c, &m->data);
			it->val_len = m->data.len - it->val;
			it->has_val = 1;
			if (rc == MSIEVE_PARSED && buf_putc(&m->data, '\0') == -1)
				rc = MSIEVE_BAD;
		} else {
			buf_init(&skip, m->max);
			rc = token(c, &skip);
			buf_free(&skip);
		}
		if (rc != MSIEVE_PARSED)
			return rc;
		if (!line_ok(c, c->i))
			return MSIEVE_BAD;
	}
	if ((rc = crlf(c)) == MSIEVE_PARSED)
		m->n_items++;
	return rc;
}

static void resp_reset(struct msieve_resp *m)
{
	buf_reset(&m->text);
	buf_reset(&m->data);
	m->status = MSIEVE_ST_BYE;
	m->code[0] = '\0';
	m->n_items = 0;
}

void msieve_resp_init(struct msieve_resp *m, size_t max)
{
	memset(m, 0, sizeof(*m));
	m->max = max;
	buf_init(&m->text, max);
	/* the strings of every line, their NULs, and a line's slack */
	buf_init(&m->data, max + MSIEVE_ITEMS_MAX * (MSIEVE_LINE_MAX + 2));
}

void msieve_resp_free(struct msieve_resp *m)
{
	buf_wipe_free(&m->text);
	buf_wipe_free(&m->data);
}

int msieve_parse(const char *p, size_t n, struct msieve_resp *m,
    size_t *used)
{
	struct cur c;
	int rc;

	resp_reset(m);
	memset(&c, 0, sizeof(c));
	c.p = p;
	c.n = n;
	c.max = m->max;
	for (;;) {
		c.line = c.i;
		c.lit = 0;
		if (c.i == c.n)
			rc = more(&c, c.n + 1);
		else if (p[c.i] == '"' || p[c.i] == '{')
			rc = data_line(&c, m);
		else if ((rc = status_line(&c, m)) == MSIEVE_PARSED) {
			*used = c.i;
			return MSIEVE_PARSED;
		}
		if (rc == MSIEVE_MORE)
			*used = c.need;
		if (rc != MSIEVE_PARSED)
			return rc;
	}
}

const char *msieve_key(const struct msieve_resp *m, int i)
{
	return buf_str(&m->data) + m->items[i].key;
}

const char *msieve_val(const struct msieve_resp *m, int i)
{
	return m->items[i].has_val ? buf_str(&m->data) + m->items[i].val : "";
}

long msieve_error_line(const char *text)
{
	const char *p = text;
	long v = 0;

	/* Cyrus: "line 4: syntax error"; others put it after a script name. */
	while ((p = strstr(p, "line ")) != NULL) {
		p += 5;
		for (v = 0; isdigit((unsigned char)*p) && v < 100000000; p++)
			v = v * 10 + (*p - '0');
		if (v > 0 && (*p == ':' || *p == ',' || *p == ' ' || *p == '\0'))
			return v;
	}
	return 0;
}
