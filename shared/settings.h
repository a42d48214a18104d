/* settings: the app's preferences, kept per account in the state database
 * (never per session, so every device of a person sees the same). A small
 * JSON object of known keys with typed values; anything else is refused. */
#ifndef POSTERN_SETTINGS_H
#define POSTERN_SETTINGS_H

#include <stddef.h>
#include <time.h>

#include <json-c/json.h>

#include "app.h"
#include "req.h"

/* The largest request body PUT accepts (larger is 413): room for the
 * templates and the identities. */
#define SETTINGS_BODY_MAX 65536
/* The longest signature (also an identity's), in bytes. */
#define SETTINGS_SIGNATURE_MAX 4000
/* sendDelay: seconds, 0 to this. */
#define SETTINGS_SEND_DELAY_MAX 30
/* identities: how many, an id's bytes, a name's, a reply-to's. */
#define SETTINGS_IDENTITIES_MAX 20
#define SETTINGS_ID_MAX 255
#define SETTINGS_NAME_MAX 256
#define SETTINGS_REPLY_TO_MAX 1024
/* notifyFolders: how many folders (each id SETTINGS_ID_MAX bytes). */
#define SETTINGS_FOLDERS_MAX 100
/* templates: how many, a name's bytes, a body's. */
#define SETTINGS_TEMPLATES_MAX 30
#define SETTINGS_TEMPLATE_NAME_MAX 200
#define SETTINGS_TEMPLATE_MAX 8000

/* Every key with its default value (caller puts it). */
json_object *settings_defaults(void);
/* Checks in (an object of known keys, each of its type) and returns the
 * whole set with defaults for the keys not given (caller puts it), or NULL
 * with the reason in err. */
json_object *settings_check(json_object *in, char *err, size_t errlen);
/* The account's settings, defaults filled in: 0 with *out set, or -1 on a
 * database error. */
int settings_load(struct app *a, const char *account, json_object **out);
/* Replaces the account's settings with o (already checked): 0 or -1. */
int settings_store(struct app *a, const char *account, json_object *o,
    time_t now);

/* GET and PUT /api/auth/settings. */
void settings_get(struct req *r);
void settings_put(struct req *r);

#endif
