#include "js.h"

#include <math.h>
#include <string.h>

json_object *js_parse(const char *p, size_t n)
{
	struct js_check c;
	json_object *o = NULL;

	if (js_check_init(&c) == -1)
		return NULL;
	if (js_check_feed(&c, p, n) == 0 && js_check_end(&c) == 0) {
		o = c.root;
		c.root = NULL;
	}
	js_check_free(&c);
	return o;
}

const char *js_str(json_object *obj, const char *key)
{
	json_object *v;
	const char *s;

	if (obj == NULL || !json_object_object_get_ex(obj, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	/* json-c keeps a \u0000 as a NUL inside the string, where a C
	 * string would end: "alice\u0000x" would be read as "alice". */
	s = json_object_get_string(v);
	return strlen(s) == (size_t)json_object_get_string_len(v) ? s : NULL;
}

int js_bool(json_object *obj, const char *key, int dflt)
{
	json_object *v;

	if (obj == NULL || !json_object_object_get_ex(obj, key, &v) ||
	    !json_object_is_type(v, json_type_boolean))
		return dflt;
	return json_object_get_boolean(v);
}

json_object *js_obj(json_object *obj, const char *key)
{
	json_object *v;

	if (obj == NULL || !json_object_object_get_ex(obj, key, &v) ||
	    !json_object_is_type(v, json_type_object))
		return NULL;
	return v;
}

int js_check_init(struct js_check *c)
{
	c->root = NULL;
	c->state = 0;
	c->in_str = c->esc = 0;
	c->num = 0;
	c->u_need = 0;
	c->tok = json_tokener_new_ex(JS_MAX_DEPTH);
	if (c->tok == NULL)
		return -1;
	/* Not JSON_TOKENER_VALIDATE_UTF8: json-c 0.16 refuses a character
	 * split between two pieces, so track() checks UTF-8 instead. */
	json_tokener_set_flags(c->tok, JSON_TOKENER_STRICT);
	return 0;
}

static int only_space(const char *p, size_t n)
{
	for (; n; p++, n--)
		if (*p == '\0' || !strchr(" \t\r\n", *p))
			return 0;
	return 1;
}

/* json-c takes NaN and Infinity even when strict, and reads 1e999 as an
 * infinity: none is a JSON number, so no such value passes the check. */
static int all_finite(json_object *o)
{
	struct json_object_iterator it, end;
	size_t i, n;

	switch (json_object_get_type(o)) {
	case json_type_double:
		return isfinite(json_object_get_double(o));
	case json_type_array:
		n = json_object_array_length(o);
		for (i = 0; i < n; i++)
			if (!all_finite(json_object_array_get_idx(o, i)))
				return 0;
		return 1;
	case json_type_object:
		end = json_object_iter_end(o);
		for (it = json_object_iter_begin(o); !json_object_iter_equal(&it, &end);
		    json_object_iter_next(&it))
			if (!all_finite(json_object_iter_peek_value(&it)))
				return 0;
		return 1;
	default:
		return 1;
	}
}

/* One byte of UTF-8 (RFC 3629: no overlong form, no surrogate, nothing
 * past U+10FFFF), whatever piece it comes in: 0 or -1. */
static int utf8_byte(struct js_check *c, unsigned char b)
{
	if (c->u_need) {
		if (b < c->u_lo || b > c->u_hi)
			return -1;
		c->u_need--;
		c->u_lo = 0x80;
		c->u_hi = 0xbf;
		return 0;
	}
	if (b < 0x80)
		return 0;
	c->u_lo = 0x80;
	c->u_hi = 0xbf;
	if (b >= 0xc2 && b <= 0xdf)
		c->u_need = 1;
	else if (b >= 0xe0 && b <= 0xef) {
		c->u_need = 2;
		if (b == 0xe0)
			c->u_lo = 0xa0;
		else if (b == 0xed)
			c->u_hi = 0x9f;
	} else if (b >= 0xf0 && b <= 0xf4) {
		c->u_need = 3;
		if (b == 0xf0)
			c->u_lo = 0x90;
		else if (b == 0xf4)
			c->u_hi = 0x8f;
	} else
		return -1;
	return 0;
}

/* Where in a number the bytes so far end, to hold numbers to RFC 8259's
 * grammar: json-c's strict mode takes "00", "-01", "1.", "1.e5" and
 * "-.5", and, when a number goes on in a new piece, forgets that a minus
 * may only start it or follow its exponent ("1" then "-2" passed). */
enum { N_NONE, N_MINUS, N_ZERO, N_INT, N_POINT, N_FRAC, N_E, N_ESIGN, N_EXP };

/* The state after byte b outside a string in state s; -1 when b cannot
 * come there. A byte that ends a number (',', ']', '}', white space) is
 * left to json-c, as is anything outside numbers but '+' and '.'. */
static int number_step(int s, unsigned char b)
{
	int digit = b >= '0' && b <= '9', mark = b == 'e' || b == 'E';
	int sign = b == '+' || b == '-';

	switch (s) {
	case N_NONE:
		return b == '-' ? N_MINUS : b == '0' ? N_ZERO : digit ? N_INT :
		    b == '+' || b == '.' ? -1 : N_NONE;
	case N_MINUS:
		return b == '0' ? N_ZERO : digit ? N_INT : -1;
	case N_ZERO:
	case N_INT:
		if (digit)
			return s == N_INT ? N_INT : -1;
		return b == '.' ? N_POINT : mark ? N_E : sign ? -1 : N_NONE;
	case N_POINT:
		return digit ? N_FRAC : -1;
	case N_FRAC:
		return digit ? N_FRAC : mark ? N_E : sign || b == '.' ? -1 : N_NONE;
	case N_E:
		return digit ? N_EXP : sign ? N_ESIGN : -1;
	case N_ESIGN:
		return digit ? N_EXP : -1;
	default:  /* N_EXP */
		return digit ? N_EXP : sign || mark || b == '.' ? -1 : N_NONE;
	}
}

/* Follows strings, numbers and UTF-8 across pieces, so that the next
 * piece knows where it starts: 0, or -1 for bytes that are not UTF-8 or
 * not JSON although json-c's strict mode takes them: a single quote
 * (json-c reads 'a' as a member name), a control character inside a
 * string (RFC 8259 wants them escaped), a number off the grammar. */
static int track(struct js_check *c, const char *p, size_t n)
{
	unsigned char b;
	int s;

	for (; n; p++, n--) {
		b = (unsigned char)*p;
		if (utf8_byte(c, b) == -1)
			return -1;
		if (c->in_str) {
			if (b < 0x20)
				return -1;
			if (c->esc)
				c->esc = 0;
			else if (b == '\\')
				c->esc = 1;
			else if (b == '"')
				c->in_str = 0;
			continue;
		}
		if (b == '\'' || (s = number_step(c->num, b)) == -1)
			return -1;
		c->num = (unsigned char)s;
		c->in_str = b == '"';
	}
	return 0;
}

int js_check_feed(struct js_check *c, const char *p, size_t n)
{
	size_t used;

	if (c->state == 1) {
		if (!only_space(p, n))
			c->state = -1;
		return c->state == -1 ? -1 : 0;
	}
	if (c->state == -1 || n == 0)
		return c->state;
	if (n > 0x7fffffff || track(c, p, n) == -1)
		return c->state = -1;
	c->root = json_tokener_parse_ex(c->tok, p, (int)n);
	if (c->root != NULL) {
		used = (size_t)json_tokener_get_parse_end(c->tok);
		c->state = only_space(p + used, n - used) &&
		    all_finite(c->root) ? 1 : -1;
		return c->state == 1 ? 0 : -1;
	}
	if (json_tokener_get_error(c->tok) != json_tokener_continue)
		c->state = -1;
	return c->state;
}

int js_check_end(struct js_check *c)
{
	/* Only an object can be complete without more input, so a value that
	 * is still open at the end is as bad as a broken one. */
	if (c->state != 1 || !json_object_is_type(c->root, json_type_object))
		return -1;
	return 0;
}

void js_check_free(struct js_check *c)
{
	if (c->root)
		json_object_put(c->root);
	if (c->tok)
		json_tokener_free(c->tok);
	c->root = NULL;
	c->tok = NULL;
}

json_object *js_response(json_object *root, const char *tag,
    const char *method)
{
	json_object *resps, *r;
	const char *name, *t;
	size_t i;

	if (!json_object_object_get_ex(root, "methodResponses", &resps) ||
	    !json_object_is_type(resps, json_type_array))
		return NULL;
	for (i = 0; i < json_object_array_length(resps); i++) {
		r = json_object_array_get_idx(resps, i);
		if (!json_object_is_type(r, json_type_array) ||
		    json_object_array_length(r) != 3 ||
		    !json_object_is_type(json_object_array_get_idx(r, 0), json_type_string) ||
		    !json_object_is_type(json_object_array_get_idx(r, 2), json_type_string) ||
		    !json_object_is_type(json_object_array_get_idx(r, 1), json_type_object))
			continue;
		name = json_object_get_string(json_object_array_get_idx(r, 0));
		t = json_object_get_string(json_object_array_get_idx(r, 2));
		if (!strcmp(t, tag) && (method ? !strcmp(name, method) :
		    strcmp(name, "error") != 0))
			return json_object_array_get_idx(r, 1);
	}
	return NULL;
}
