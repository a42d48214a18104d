#include "visible.h"

#include <string.h>

#include <json-c/json.h>

#include "acct.h"
#include "conn.h"
#include "pushd.h"
#include "req.h"

/* The value of visible= in query q: 0 or 1, or -1 when absent or not
 * exactly "0" or "1". Other parameters (cache busters) are ignored. */
static int query_visible(const char *q)
{
	size_t n;

	while (*q) {
		n = strcspn(q, "&");
		if (n == 9 && !strncmp(q, "visible=", 8) && (q[8] == '0' ||
		    q[8] == '1'))
			return q[8] == '1';
		if (n >= 7 && !strncmp(q, "visible", 7) &&
		    (n == 7 || q[7] == '='))
			return -1;
		q += n + (q[n] == '&');
	}
	return -1;
}

/* The browser's streams stay open across the change: reconnecting would
 * end a one-tab account (its relay stream and the ring of missed events
 * with it) at every switch of tab. */
void visible_handle(struct req *r)
{
	struct pushd *pd = conn_preq(r)->c->pd;
	json_object *o;
	int v, n;

	if (pd->app.cfg.push_mode == CFG_PUSH_OFF) {
		req_error(r, ERR_NOT_FOUND, "Push is turned off.");
		return;
	}
	if ((v = query_visible(r->query)) == -1) {
		req_error(r, ERR_BAD_REQUEST, "visible must be 0 or 1.");
		return;
	}
	n = acct_set_visible(pd, r->sess, v);
	if ((o = json_object_new_object()) == NULL ||
	    json_object_object_add(o, "streams", json_object_new_int(n))) {
		json_object_put(o);
		req_error(r, ERR_INTERNAL, "Out of memory.");
		return;
	}
	req_json(r, 200, o);
}
