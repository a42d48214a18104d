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
	c->last = '\0';
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

/* Follows strings and UTF-8 across pieces, so that the next piece knows
 * whether it starts inside one: 0, or -1 for bytes that are not UTF-8. */
static int track(struct js_check *c, const char *p, size_t n)
{
	for (; n; p++, n--) {
		if (utf8_byte(c, (unsigned char)*p) == -1)
			return -1;
		if (c->esc)
			c->esc = 0;
		else if (c->in_str && *p == '\\')
			c->esc = 1;
		else if (*p == '"')
			c->in_str = !c->in_str;
	}
	c->last = p[-1];
	return 0;
}

/* json-c 0.16 forgets, when a number goes on in a new piece, that a minus
 * may only start it or follow its exponent: "1" then "-2" passes as a
 * number. Outside a string, a minus right after a digit, point, sign is
 * never JSON, so such a piece is refused here. */
static int bad_resume(const struct js_check *c, const char *p)
{
	return !c->in_str && *p == '-' && c->last != '\0' &&
	    strchr("0123456789.+-", c->last) != NULL;
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
	if (n > 0x7fffffff || bad_resume(c, p) || track(c, p, n) == -1)
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
