/* subjson: the JSON of the PushSubscription calls (RFC 8620 7.2), built
 * and read; no state of its own (chan_sub.c keeps that). */
#ifndef POSTERN_SUBJSON_H
#define POSTERN_SUBJSON_H

#include <stddef.h>

#include <json-c/json_types.h>

/* The request {"using": [core], "methodCalls": [[method, args, "p"]]},
 * args (taken) with accountId added. */
json_object *subjson_call(const char *method, const char *account,
    json_object *args);
/* A UTCDate of t; a UTCDate's time, or 0 when s is none. */
json_object *subjson_utc(long long t);
long long subjson_parse_utc(const char *s);
/* {"ids": null}: every subscription of the credentials. */
json_object *subjson_get(void);
/* {"destroy": [id]}; {"destroy": ids} (taken). */
json_object *subjson_destroy(const char *id);
json_object *subjson_destroy_all(json_object *ids);
/* {"update": {id: {key: value}}} (value taken). */
json_object *subjson_update(const char *id, const char *key, json_object *value);
/* {"create": {"c": {deviceClientId, url, expires, types: null}}}, and
 * {"destroy": leftovers} (taken) when there are any. */
json_object *subjson_create(const char *device, const char *url,
    long long expires, json_object *leftovers);
/* Whether a /set answer's "updated" holds id (its patch, or NULL, into
 * *patch when asked). */
int subjson_updated(json_object *args, const char *id, json_object **patch);
/* The "expires" of a subscription object when it has a valid one, else
 * fallback. */
long long subjson_expires(json_object *o, long long fallback);
/* The arguments of the response tagged "p" when it answers method, inside
 * *root (the parsed body, to put); NULL when it does not. */
json_object *subjson_answer(const char *body, size_t len, const char *method,
    json_object **root);
/* Walks a PushSubscription/get list: 1 when it holds ours (id, verified),
 * 0 when not; the ids of the others of this device are added to
 * *leftovers (an array made when needed). Other devices' are never
 * touched. */
int subjson_ours(json_object *list, const char *device, const char *id,
    json_object **leftovers);

#endif
