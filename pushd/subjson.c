#define _GNU_SOURCE 1
#include "subjson.h"

#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "js.h"

#define CORE_CAP "urn:ietf:params:jmap:core"

json_object *subjson_call(const char *method, const char *account,
    json_object *args)
{
	json_object *o = json_object_new_object(), *using, *calls, *call;

	json_object_object_add(args, "accountId", json_object_new_string(account));
	using = json_object_new_array();
	json_object_array_add(using, json_object_new_string(CORE_CAP));
	call = json_object_new_array();
	json_object_array_add(call, json_object_new_string(method));
	json_object_array_add(call, args);
	json_object_array_add(call, json_object_new_string("p"));
	calls = json_object_new_array();
	json_object_array_add(calls, call);
	json_object_object_add(o, "using", using);
	json_object_object_add(o, "methodCalls", calls);
	return o;
}

json_object *subjson_utc(long long t)
{
	char out[32];
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(out, sizeof(out), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return json_object_new_string(out);
}

long long subjson_parse_utc(const char *s)
{
	struct tm tm;

	memset(&tm, 0, sizeof(tm));
	if (s == NULL || strptime(s, "%Y-%m-%dT%H:%M:%S", &tm) == NULL)
		return 0;
	return (long long)timegm(&tm);
}

json_object *subjson_get(void)
{
	json_object *args = json_object_new_object();

	json_object_object_add(args, "ids", NULL);
	return args;
}

json_object *subjson_destroy_all(json_object *ids)
{
	json_object *args = json_object_new_object();

	json_object_object_add(args, "destroy", ids);
	return args;
}

json_object *subjson_destroy(const char *id)
{
	json_object *ids = json_object_new_array();

	json_object_array_add(ids, json_object_new_string(id));
	return subjson_destroy_all(ids);
}

json_object *subjson_update(const char *id, const char *key, json_object *value)
{
	json_object *args = json_object_new_object(), *upd, *patch;

	patch = json_object_new_object();
	json_object_object_add(patch, key, value);
	upd = json_object_new_object();
	json_object_object_add(upd, id, patch);
	json_object_object_add(args, "update", upd);
	return args;
}

json_object *subjson_create(const char *device, const char *url,
    long long expires, json_object *leftovers)
{
	json_object *args = json_object_new_object(), *create, *c;

	c = json_object_new_object();
	json_object_object_add(c, "deviceClientId", json_object_new_string(device));
	json_object_object_add(c, "url", json_object_new_string(url));
	json_object_object_add(c, "expires", subjson_utc(expires));
	json_object_object_add(c, "types", NULL);
	create = json_object_new_object();
	json_object_object_add(create, "c", c);
	json_object_object_add(args, "create", create);
	if (leftovers)
		json_object_object_add(args, "destroy", leftovers);
	return args;
}

int subjson_updated(json_object *args, const char *id, json_object **patch)
{
	json_object *o = args ? js_obj(args, "updated") : NULL;

	if (o == NULL || id == NULL || !json_object_object_get_ex(o, id, NULL))
		return 0;
	if (patch)
		*patch = js_obj(o, id);
	return 1;
}

long long subjson_expires(json_object *o, long long fallback)
{
	long long t = o ? subjson_parse_utc(js_str(o, "expires")) : 0;

	return t > 0 ? t : fallback;
}

json_object *subjson_answer(const char *body, size_t len, const char *method,
    json_object **root)
{
	*root = NULL;
	if (len == 0 || (*root = js_parse(body, len)) == NULL)
		return NULL;
	/* Every call subjson_call makes is tagged "p". */
	return js_response(*root, "p", method);
}

int subjson_ours(json_object *list, const char *device, const char *id,
    json_object **leftovers)
{
	json_object *it;
	const char *sid, *d;
	int held = 0;
	size_t k;

	for (k = 0; list && json_object_is_type(list, json_type_array) &&
	    k < json_object_array_length(list); k++) {
		it = json_object_array_get_idx(list, k);
		if ((sid = js_str(it, "id")) == NULL ||
		    (d = js_str(it, "deviceClientId")) == NULL || strcmp(d, device))
			continue;     /* somebody else's: never touched */
		if (id && !strcmp(sid, id) &&
		    js_str(it, "verificationCode") != NULL) {
			held = 1;
			continue;
		}
		if (*leftovers == NULL)
			*leftovers = json_object_new_array();
		json_object_array_add(*leftovers, json_object_new_string(sid));
	}
	return held;
}
