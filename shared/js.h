/* js: json-c helpers. Bounded parsing (size and depth), typed getters that
 * check the type before reading, and the incremental checker the relay
 * feeds a streamed request body through. */
#ifndef POSTERN_JS_H
#define POSTERN_JS_H

#include <stddef.h>

#include <json-c/json.h>

#define JS_MAX_DEPTH 64

/* Parses exactly one JSON value (white space around allowed) of n bytes.
 * Returns the new object (caller puts it) or NULL. */
json_object *js_parse(const char *p, size_t n);
/* The member key of obj when it is a string / bool / object, else NULL /
 * dflt / NULL. A string holding a NUL (\u0000), which a C string would
 * cut short, is NULL too. */
const char *js_str(json_object *obj, const char *key);
int js_bool(json_object *obj, const char *key, int dflt);
json_object *js_obj(json_object *obj, const char *key);
/* In a JMAP response root, the arguments of the method response tagged
 * tag (RFC 8620 3.4) and named method (any method when NULL, never an
 * "error"), or NULL. */
json_object *js_response(json_object *root, const char *tag,
    const char *method);

/* Feeds a body through a tokener as it streams past. */
struct js_check {
	json_tokener *tok;
	json_object *root;     /* the parsed value once complete */
	int state;             /* 0 parsing, 1 complete, -1 bad */
	/* Where the bytes so far end: inside a string (and after a
	 * backslash), or where in a number (see track in js.c). */
	unsigned char in_str, esc, num;
	/* UTF-8 checked here, not by json-c, across pieces: continuation
	 * bytes still due and the range the next one must be in. */
	unsigned char u_need, u_lo, u_hi;
};
int js_check_init(struct js_check *c);
/* 0 while fine so far, -1 once the bytes cannot be one JSON value. */
int js_check_feed(struct js_check *c, const char *p, size_t n);
/* 0 when the whole body was exactly one JSON object. */
int js_check_end(struct js_check *c);
void js_check_free(struct js_check *c);

#endif
