#include "settings.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "js.h"
#include "log.h"
#include "sess.h"
#include "store.h"

enum kind { K_BOOL, K_CHOICE, K_TEXT, K_LANG, K_INT, K_IDENTITIES,
	K_TEMPLATES, K_FOLDERS };

struct key {
	const char *name;
	enum kind kind;
	const char *dflt;              /* K_CHOICE, K_TEXT, K_LANG */
	int dflt_int;                  /* K_BOOL, K_INT */
	const char *const *choices;    /* K_CHOICE, NULL-terminated */
	const char *choices_text;      /* for the error message */
	int min, max;                  /* K_INT */
};

/* A string member of an identity or a template: its name, the most bytes
 * it may hold, whether it must be there and not empty. */
struct field {
	const char *name;
	size_t max;
	int required;
};

static const char *const themes[] = { "system", "light", "dark", NULL };
static const char *const densities[] = { "comfortable", "compact", NULL };
static const char *const formats[] = { "plain", "rich", NULL };
static const char *const after_actions[] = { "next", "previous", "list", NULL };

static const struct key keys[] = {
	{ "theme", K_CHOICE, "system", 0, themes, "system, light or dark", 0, 0 },
	{ "density", K_CHOICE, "comfortable", 0, densities,
	    "comfortable or compact", 0, 0 },
	{ "threads", K_BOOL, NULL, 1, NULL, NULL, 0, 0 },
	{ "showImages", K_BOOL, NULL, 0, NULL, NULL, 0, 0 },
	{ "compose", K_CHOICE, "plain", 0, formats, "plain or rich", 0, 0 },
	{ "signature", K_TEXT, "", 0, NULL, NULL, 0, 0 },
	{ "language", K_LANG, "", 0, NULL, NULL, 0, 0 },
	/* Seconds a sent mail waits for Undo. */
	{ "sendDelay", K_INT, NULL, 10, NULL, NULL, 0, SETTINGS_SEND_DELAY_MAX },
	/* Per identity id, what the server cannot keep (no Identity/set). */
	{ "identities", K_IDENTITIES, NULL, 0, NULL, NULL, 0, 0 },
	/* Saved replies. */
	{ "templates", K_TEMPLATES, NULL, 0, NULL, NULL, 0, 0 },
	/* What opens once the open message was deleted, archived or moved. */
	{ "afterAction", K_CHOICE, "next", 0, after_actions,
	    "next, previous or list", 0, 0 },
	/* The folders whose new mail notifies (the tab's notifications and
	 * Web Push): null, the Inbox; else these mailbox ids. */
	{ "notifyFolders", K_FOLDERS, NULL, 0, NULL, NULL, 0, 0 },
};

static const struct field identity_fields[] = {
	{ "name", SETTINGS_NAME_MAX, 0 },
	{ "replyTo", SETTINGS_REPLY_TO_MAX, 0 },
	{ "signature", SETTINGS_SIGNATURE_MAX, 0 },
	{ NULL, 0, 0 },
};
static const struct field template_fields[] = {
	{ "name", SETTINGS_TEMPLATE_NAME_MAX, 1 },
	{ "body", SETTINGS_TEMPLATE_MAX, 1 },
	{ NULL, 0, 0 },
};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

static json_object *key_default(const struct key *k)
{
	switch (k->kind) {
	case K_BOOL:
		return json_object_new_boolean(k->dflt_int);
	case K_INT:
		return json_object_new_int(k->dflt_int);
	case K_IDENTITIES:
		return json_object_new_object();
	case K_TEMPLATES:
		return json_object_new_array();
	case K_FOLDERS:
		return NULL;
	default:
		return json_object_new_string(k->dflt);
	}
}

json_object *settings_defaults(void)
{
	json_object *o = json_object_new_object();
	size_t i;

	for (i = 0; i < NKEYS; i++)
		json_object_object_add(o, keys[i].name, key_default(&keys[i]));
	return o;
}

static const struct key *find_key(const char *name)
{
	size_t i;

	for (i = 0; i < NKEYS; i++)
		if (!strcmp(keys[i].name, name))
			return &keys[i];
	return NULL;
}

/* A language tag as the app's catalogues name them: "" (the browser's
 * choice) or letters, then "-" and letters or digits, at most 35 bytes. */
static int valid_lang(const char *s)
{
	size_t i, n = strlen(s), run = 0;

	if (n == 0)
		return 1;
	if (n > 35)
		return 0;
	for (i = 0; i < n; i++) {
		if (s[i] == '-') {
			if (run == 0 || i + 1 == n)
				return 0;
			run = 0;
		} else if ((s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= '0' && s[i] <= '9' && i > 1)) {
			run++;
		} else {
			return 0;
		}
	}
	return 1;
}

static int in_choices(const char *s, const char *const *choices)
{
	for (; *choices; choices++)
		if (!strcmp(s, *choices))
			return 1;
	return 0;
}

/* Whether v is a string without NUL of at most max bytes (and not empty
 * when required); else the reason in err, naming it as what. */
static int check_string(json_object *v, const char *what, size_t max,
    int required, char *err, size_t errlen)
{
	const char *s;

	if (!json_object_is_type(v, json_type_string)) {
		snprintf(err, errlen, "%s must be a string.", what);
		return -1;
	}
	s = json_object_get_string(v);
	/* A string with an embedded NUL is nothing the app would send. */
	if (strlen(s) != (size_t)json_object_get_string_len(v)) {
		snprintf(err, errlen, "%s holds a NUL.", what);
		return -1;
	}
	if (strlen(s) > max) {
		snprintf(err, errlen, "%s is longer than %zu bytes.", what, max);
		return -1;
	}
	if (required && *s == '\0') {
		snprintf(err, errlen, "%s is empty.", what);
		return -1;
	}
	return 0;
}

/* Whether v is an object of the string members fields (those required
 * present); else the reason in err. key names the setting. */
static int check_fields(const char *key, json_object *v,
    const struct field *fields, char *err, size_t errlen)
{
	const struct field *f;
	json_object *m;
	char what[96];

	if (!json_object_is_type(v, json_type_object)) {
		snprintf(err, errlen, "Each entry of the setting \"%s\" must be an "
		    "object.", key);
		return -1;
	}
	json_object_object_foreach(v, name, mv) {
		for (f = fields; f->name && strcmp(f->name, name); f++)
			;
		if (f->name == NULL) {
			snprintf(err, errlen, "An entry of the setting \"%s\" has an "
			    "unknown member \"%.32s\".", key, name);
			return -1;
		}
		(void)mv;
	}
	for (f = fields; f->name; f++) {
		snprintf(what, sizeof(what), "The \"%s\" of an entry of the setting "
		    "\"%s\"", f->name, key);
		if (!json_object_object_get_ex(v, f->name, &m)) {
			if (!f->required)
				continue;
			snprintf(err, errlen, "%s is missing.", what);
			return -1;
		}
		if (check_string(m, what, f->max, f->required, err, errlen) == -1)
			return -1;
	}
	return 0;
}

/* identities: an object of at most SETTINGS_IDENTITIES_MAX identity ids
 * (1 to SETTINGS_ID_MAX bytes), each an object of identity_fields. */
static int check_identities(const struct key *k, json_object *v, char *err,
    size_t errlen)
{
	if (!json_object_is_type(v, json_type_object)) {
		snprintf(err, errlen, "The setting \"%s\" must be an object.",
		    k->name);
		return -1;
	}
	if (json_object_object_length(v) > SETTINGS_IDENTITIES_MAX) {
		snprintf(err, errlen, "The setting \"%s\" holds more than %d "
		    "identities.", k->name, SETTINGS_IDENTITIES_MAX);
		return -1;
	}
	json_object_object_foreach(v, id, entry) {
		if (*id == '\0' || strlen(id) > SETTINGS_ID_MAX) {
			snprintf(err, errlen, "The setting \"%s\" holds an identity id "
			    "that is empty or longer than %d bytes.", k->name,
			    SETTINGS_ID_MAX);
			return -1;
		}
		if (check_fields(k->name, entry, identity_fields, err, errlen) == -1)
			return -1;
	}
	return 0;
}

/* templates: an array of at most SETTINGS_TEMPLATES_MAX objects of
 * template_fields. */
static int check_templates(const struct key *k, json_object *v, char *err,
    size_t errlen)
{
	size_t i, n;

	if (!json_object_is_type(v, json_type_array)) {
		snprintf(err, errlen, "The setting \"%s\" must be an array.",
		    k->name);
		return -1;
	}
	n = json_object_array_length(v);
	if (n > SETTINGS_TEMPLATES_MAX) {
		snprintf(err, errlen, "The setting \"%s\" holds more than %d "
		    "templates.", k->name, SETTINGS_TEMPLATES_MAX);
		return -1;
	}
	for (i = 0; i < n; i++)
		if (check_fields(k->name, json_object_array_get_idx(v, i),
		    template_fields, err, errlen) == -1)
			return -1;
	return 0;
}

/* notifyFolders: null, or an array of at most SETTINGS_FOLDERS_MAX
 * mailbox ids of 1 to SETTINGS_ID_MAX bytes. */
static int check_folders(const struct key *k, json_object *v, char *err,
    size_t errlen)
{
	size_t i, n;

	if (v == NULL)
		return 0;
	if (!json_object_is_type(v, json_type_array) ||
	    (n = json_object_array_length(v)) > SETTINGS_FOLDERS_MAX) {
		snprintf(err, errlen, "The setting \"%s\" must be null or an array "
		    "of at most %d folder ids.", k->name, SETTINGS_FOLDERS_MAX);
		return -1;
	}
	for (i = 0; i < n; i++)
		if (check_string(json_object_array_get_idx(v, i), "A folder id",
		    SETTINGS_ID_MAX, 1, err, errlen) == -1)
			return -1;
	return 0;
}

static int check_int(const struct key *k, json_object *v, char *err,
    size_t errlen)
{
	int64_t n;

	if (json_object_is_type(v, json_type_int)) {
		n = json_object_get_int64(v);
		if (n >= k->min && n <= k->max)
			return 0;
	}
	snprintf(err, errlen, "The setting \"%s\" must be a whole number from "
	    "%d to %d.", k->name, k->min, k->max);
	return -1;
}

/* Whether v suits k; else the reason in err. */
static int check_value(const struct key *k, json_object *v, char *err,
    size_t errlen)
{
	char what[64];
	const char *s;

	switch (k->kind) {
	case K_BOOL:
		if (json_object_is_type(v, json_type_boolean))
			return 0;
		snprintf(err, errlen, "The setting \"%s\" must be true or false.",
		    k->name);
		return -1;
	case K_INT:
		return check_int(k, v, err, errlen);
	case K_IDENTITIES:
		return check_identities(k, v, err, errlen);
	case K_TEMPLATES:
		return check_templates(k, v, err, errlen);
	case K_FOLDERS:
		return check_folders(k, v, err, errlen);
	default:
		break;
	}
	snprintf(what, sizeof(what), "The setting \"%s\"", k->name);
	if (check_string(v, what, k->kind == K_TEXT ? SETTINGS_SIGNATURE_MAX :
	    (size_t)-1, 0, err, errlen) == -1)
		return -1;
	s = json_object_get_string(v);
	if (k->kind == K_CHOICE && !in_choices(s, k->choices)) {
		snprintf(err, errlen, "The setting \"%s\" must be %s.", k->name,
		    k->choices_text);
		return -1;
	}
	if (k->kind == K_LANG && !valid_lang(s)) {
		snprintf(err, errlen, "The setting \"%s\" must be a language tag "
		    "such as \"en\" or \"pt-BR\", or empty.", k->name);
		return -1;
	}
	return 0;
}

json_object *settings_check(json_object *in, char *err, size_t errlen)
{
	const struct key *k;
	json_object *out;

	if (in == NULL || !json_object_is_type(in, json_type_object)) {
		snprintf(err, errlen, "The settings must be a JSON object.");
		return NULL;
	}
	out = settings_defaults();
	json_object_object_foreach(in, name, v) {
		if ((k = find_key(name)) == NULL) {
			snprintf(err, errlen, "There is no setting called \"%.64s\".",
			    name);
			json_object_put(out);
			return NULL;
		}
		if (check_value(k, v, err, errlen) == -1) {
			json_object_put(out);
			return NULL;
		}
		json_object_object_add(out, k->name, json_object_get(v));
	}
	return out;
}

int settings_load(struct app *a, const char *account, json_object **out)
{
	json_object *stored = NULL;
	char err[160], *text;

	*out = NULL;
	if (store_settings_get(a->store, account, &text) == -1)
		return -1;
	if (text)
		stored = js_parse(text, strlen(text));
	free(text);
	/* What was stored passed the check when it was written; checking it
	 * again keeps a key this version no longer knows from failing. */
	if (stored && (*out = settings_check(stored, err, sizeof(err))) == NULL)
		log_warn("settings: stored settings dropped: %s", err);
	json_object_put(stored);
	if (*out == NULL)
		*out = settings_defaults();
	return 0;
}

int settings_store(struct app *a, const char *account, json_object *o,
    time_t now)
{
	return store_settings_put(a->store, account,
	    json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
	    (long long)now);
}

void settings_get(struct req *r)
{
	json_object *o;

	if (settings_load(r->app, r->sess->account, &o) == -1) {
		req_error(r, ERR_INTERNAL, "The settings could not be read.");
		return;
	}
	req_json(r, 200, o);
	json_object_put(o);
}

void settings_put(struct req *r)
{
	json_object *in, *o;
	char err[160];

	if ((in = req_json_body(r, SETTINGS_BODY_MAX, "The settings", 0)) == NULL)
		return;
	o = settings_check(in, err, sizeof(err));
	json_object_put(in);
	if (o == NULL) {
		req_error(r, ERR_INVALID_SETTINGS, err);
		return;
	}
	if (settings_store(r->app, r->sess->account, o, r->now) == -1) {
		req_error(r, ERR_INTERNAL, "The settings could not be saved.");
	} else {
		req_json(r, 200, o);
	}
	json_object_put(o);
}
