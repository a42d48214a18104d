#include "wpsub.h"

#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "acct.h"
#include "addr.h"
#include "conn.h"
#include "js.h"
#include "log.h"
#include "pushd.h"
#include "req.h"
#include "seal.h"
#include "serve.h"
#include "sess.h"
#include "store.h"
#include "webpush.h"
#include "wpwatch.h"

/* Push services' endpoints are a few hundred bytes (FCM's about 200,
 * Mozilla's and Apple's under 400). */
#define ENDPOINT_MAX 1024
#define BODY_MAX 4096
#define SEALED_MAX 4096

struct sub_in {
	const char *endpoint;
	unsigned char p256dh[WEBPUSH_P256DH_LEN], auth[WEBPUSH_AUTH_LEN];
};

static int get_row(void *ctx, const struct store_webpush_row *row)
{
	json_object *o = ctx;

	json_object_object_add(o, "endpoint", json_object_new_string(row->endpoint));
	return 0;
}

static void sub_get(struct req *r)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "endpoint", NULL);
	if (store_webpush_get(r->app->store, r->sess->id, get_row, o) == -1)
		serve_store_failed(r);
	else
		req_json(r, 200, o);
	json_object_put(o);
}

static int key_field(json_object *keys, const char *name, unsigned char *out,
    size_t n)
{
	const char *v = js_str(keys, name);

	return v && seal_b64url_decode(v, strlen(v), out, n) == (long)n ? 0 : -1;
}

/* Whether the endpoint's host may be pushed to: on the operator's list,
 * and not an address literal that is not public (names are checked on the
 * address each push connects to). */
static int host_ok(const struct cfg *c, const char *origin)
{
	char host[WEBPUSH_ORIGIN_MAX], *end;
	struct addr a;
	int lit;

	snprintf(host, sizeof(host), "%s", origin + strlen("https://"));
	end = host[0] == '[' ? strchr(host, ']') : strrchr(host, ':');
	if (end)
		end[host[0] == '['] = '\0';
	if (!cfg_webpush_host_allowed(c, host))
		return 0;
	lit = addr_parse_host(host, &a);
	return lit == 0 || (lit == 1 &&
	    addr_allowed(&a, c->webpush_allow_loopback_for_tests));
}

/* The body as a subscription: 0, or the error answered. */
static int sub_read(struct req *r, json_object *o, struct sub_in *in)
{
	char origin[WEBPUSH_ORIGIN_MAX];
	json_object *keys = js_obj(o, "keys");
	struct buf probe;
	int ok;

	in->endpoint = js_str(o, "endpoint");
	if (in->endpoint == NULL || strlen(in->endpoint) > ENDPOINT_MAX ||
	    keys == NULL || key_field(keys, "p256dh", in->p256dh,
	    sizeof(in->p256dh)) || key_field(keys, "auth", in->auth,
	    sizeof(in->auth))) {
		req_error(r, ERR_BAD_REQUEST, "The subscription needs an endpoint "
		    "and keys p256dh (65 bytes) and auth (16 bytes), base64url.");
		return -1;
	}
	if (webpush_origin(in->endpoint, origin, sizeof(origin)) == -1 ||
	    !host_ok(&r->app->cfg, origin)) {
		req_error(r, ERR_WEBPUSH_ENDPOINT, NULL);
		return -1;
	}
	/* A key that is not a point on P-256 fails here, not at each push. */
	buf_init(&probe, 256);
	ok = webpush_encrypt(in->p256dh, sizeof(in->p256dh), in->auth,
	    sizeof(in->auth), "", 0, &probe) == 0;
	buf_free(&probe);
	if (!ok)
		req_error(r, ERR_BAD_REQUEST, "p256dh is not a P-256 public key.");
	return ok ? 0 : -1;
}

/* Other sessions that hold the same endpoint: the same browser, where
 * someone else signed in before and never signed out. */
#define OTHERS_MAX 16
struct others {
	const char *session;
	char ids[OTHERS_MAX][SESS_ID_LEN + 1];
	char accounts[OTHERS_MAX][APP_KEY_HEX + 1];
	int n;
};

static int other_row(void *ctx, const struct store_webpush_row *row)
{
	struct others *o = ctx;

	if (strcmp(row->session, o->session) &&
	    strlen(row->session) == SESS_ID_LEN &&
	    strlen(row->account) == APP_KEY_HEX) {
		memcpy(o->ids[o->n], row->session, SESS_ID_LEN + 1);
		memcpy(o->accounts[o->n++], row->account, APP_KEY_HEX + 1);
	}
	return o->n == OTHERS_MAX;
}

/* A browser has one push subscription: a new session's takes it over, so
 * that the mail of the one before is never shown to the one after. */
static int take_over(struct req *r, struct pushd *pd, const char *endpoint)
{
	struct others o = { .session = r->sess->id };
	int i, rc;

	if (store_webpush_endpoint(r->app->store, endpoint, other_row, &o) == -1)
		return -1;
	for (i = 0; i < o.n; i++) {
		/* Only when the row went: that session may have subscribed
		 * anew meanwhile, with another endpoint. */
		if ((rc = store_webpush_delete(r->app->store, o.ids[i],
		    endpoint)) == -1)
			return -1;
		if (rc > 0) {
			wp_watch_end(pd, o.accounts[i], o.ids[i]);
			wp_watch_tell(pd, o.accounts[i], o.ids[i]);
		}
	}
	return 0;
}

static int sub_store(struct req *r, struct pushd *pd, const struct sub_in *in,
    const char *jmap_id)
{
	struct buf sealed;
	struct store_webpush_row row = {
		.session = r->sess->id, .account = r->sess->account,
		.endpoint = in->endpoint,
		.p256dh = in->p256dh, .p256dh_len = sizeof(in->p256dh),
		.auth = in->auth, .auth_len = sizeof(in->auth),
		.created = (long long)time(NULL),
	};
	int rc = -1;

	buf_init(&sealed, SEALED_MAX);
	if (take_over(r, pd, in->endpoint) == 0 &&
	    wp_seal(pd, r->sess, jmap_id, &sealed) == 0) {
		row.sealed = (const unsigned char *)sealed.data;
		row.sealed_len = sealed.len;
		if ((rc = store_webpush_put(r->app->store, &row)) == 0) {
			wp_watch_row(pd, &row);
			wp_watch_tell(pd, row.account, row.session);
		}
	}
	buf_wipe_free(&sealed);
	return rc;
}

static void sub_put(struct req *r, struct pushd *pd)
{
	json_object *o = req_json_body(r, BODY_MAX, "The subscription", 0);
	struct sub_in in;
	char *jmap_id;

	if (o == NULL)
		return;
	if (sub_read(r, o, &in) == 0) {
		if ((jmap_id = acct_primary_mail(pd, r->sess)) == NULL)
			req_error(r, ERR_INTERNAL, "The session names no mail "
			    "account.");
		else if (sub_store(r, pd, &in, jmap_id) == -1)
			serve_store_failed(r);
		else {
			req_status(r, 204);
			req_end(r);
		}
		free(jmap_id);
	}
	json_object_put(o);
}

static void sub_delete(struct req *r, struct pushd *pd)
{
	wp_watch_end(pd, r->sess->account, r->sess->id);
	if (store_webpush_delete(r->app->store, r->sess->id, NULL) == -1) {
		serve_store_failed(r);
		return;
	}
	wp_watch_tell(pd, r->sess->account, r->sess->id);
	req_status(r, 204);
	req_end(r);
}

void wpsub_handle(struct req *r)
{
	struct pushd *pd = conn_preq(r)->c->pd;

	if (pd->wp_key == NULL) {
		req_error(r, ERR_NOT_FOUND, "Web Push is turned off.");
		return;
	}
	if (!strcmp(r->method, "GET"))
		sub_get(r);
	else if (!strcmp(r->method, "PUT"))
		sub_put(r, pd);
	else if (!strcmp(r->method, "DELETE"))
		sub_delete(r, pd);
	else {
		req_header(r, "Allow", "GET, PUT, DELETE");
		req_error(r, ERR_METHOD, NULL);
	}
}
