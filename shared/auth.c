#include "auth.h"

#include <string.h>

#include <openssl/evp.h>

#include "log.h"
#include "login.h"
#include "sess.h"
#include "settings.h"
#include "store.h"
#include "usock.h"
#include "vapid.h"

static void logout(struct req *r)
{
	char cookie[SESS_COOKIE_LEN + 2];
	struct sess *s = NULL;
	json_object *o;

	/* Signing out always clears the cookie, even of a dead session. */
	if (req_cookie(r, SESS_COOKIE, cookie, sizeof(cookie)) == 0 &&
	    sess_lookup(r->app, cookie, r->now, &s) == 0) {
		sess_destroy(r->app, s->id);
		sess_free(s);
	}
	serve_clear_cookie(r);
	o = json_object_new_object();
	json_object_object_add(o, "ok", json_object_new_boolean(1));
	req_json(r, 200, o);
	json_object_put(o);
}

static void session(struct req *r)
{
	struct buf doc;

	buf_init(&doc, 1 << 24);
	if (sess_doc(r->app, r->sess, &doc) == -1) {
		serve_store_failed(r);
	} else {
		req_header(r, "Content-Type", "application/json; charset=utf-8");
		req_write(r, doc.data, doc.len);
		req_end(r);
	}
	buf_free(&doc);
}

static void sessions(struct req *r)
{
	json_object *list = sess_list(r->app, r->sess), *o;

	if (list == NULL) {
		serve_store_failed(r);
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "sessions", list);
	req_json(r, 200, o);
	json_object_put(o);
}

static void revoke_others(struct req *r)
{
	int n = sess_revoke_others(r->app, r->sess);
	json_object *o;

	if (n < 0) {
		serve_store_failed(r);
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "revoked", json_object_new_int(n));
	req_json(r, 200, o);
	json_object_put(o);
}

/* Web Push where pushd runs to send it and its key is readable: the
 * key's public half, which the browser hands its push service; else
 * false. The key file is read once per process. */
static json_object *webpush_feature(const struct cfg *c)
{
	static char key[VAPID_PUBLIC_B64_LEN + 1];
	static int read;
	EVP_PKEY *k;
	json_object *o;

	if (!c->webpush || c->push_mode == CFG_PUSH_OFF ||
	    !usock_alive(c->pushd_socket))
		return json_object_new_boolean(0);
	if (!read && (k = vapid_key_read(c->webpush_key_file)) != NULL) {
		read = vapid_public_b64(k, key) == 0;
		EVP_PKEY_free(k);
	}
	if (!read)
		return json_object_new_boolean(0);
	o = json_object_new_object();
	json_object_object_add(o, "key", json_object_new_string(key));
	return o;
}

static void config(struct req *r)
{
	const struct cfg *c = &r->app->cfg;
	json_object *o = json_object_new_object(), *f = json_object_new_object();

	json_object_object_add(o, "name", json_object_new_string(c->name));
	json_object_object_add(o, "version", json_object_new_string(PACKAGE_VERSION));
	json_object_object_add(o, "uploadMax", json_object_new_int64(c->upload_max));
	json_object_object_add(o, "maxRequest", json_object_new_int64(c->max_request));
	json_object_object_add(f, "imageProxy", json_object_new_boolean(c->image_proxy));
	/* Push is promised only when pushd is there to keep it: else the app
	 * polls from the start instead of trying a stream that fails. */
	json_object_object_add(f, "push", json_object_new_boolean(
	    c->push_mode != CFG_PUSH_OFF && usock_alive(c->pushd_socket)));
	json_object_object_add(f, "webpush", webpush_feature(c));
	json_object_object_add(f, "compression", json_object_new_boolean(c->compress));
	json_object_object_add(f, "contacts", json_object_new_boolean(cfg_carddav_on(c)));
	/* Filters where the operator did not turn them off: the app then
	 * asks /api/sieve whether the server has them. */
	json_object_object_add(f, "filters", json_object_new_boolean(cfg_sieve_on(c)));
	/* The app maps the server's hrefs below it back under /api/dav/. */
	if (cfg_carddav_on(c))
		json_object_object_add(o, "carddavPath", json_object_new_string(c->carddav_path));
	json_object_object_add(o, "features", f);
	req_json(r, 200, o);
	json_object_put(o);
}

/* One mode's accounts and open tabs into push_split's two objects. */
static void push_mode(void *ctx, const char *mode, long long accounts,
    long long with_tabs, long long tabs)
{
	json_object **two = ctx;

	(void)with_tabs;
	json_object_object_add(two[0], mode, json_object_new_int64(accounts));
	json_object_object_add(two[1], mode, json_object_new_int64(tabs));
}

/* Accounts and their open tabs by push mode, as pushd records them: the
 * "accounts" and "tabs" members of p. */
static void push_split(struct app *a, json_object *p)
{
	json_object *two[2] = { json_object_new_object(),
	    json_object_new_object() };

	store_push_modes(a->store, push_mode, two);
	json_object_object_add(p, "accounts", two[0]);
	json_object_object_add(p, "tabs", two[1]);
}

static void health(struct req *r)
{
	int ok = store_ping(r->app->store) == 0;
	json_object *o = json_object_new_object(), *p;

	json_object_object_add(o, "status", json_object_new_string(ok ? "ok" : "degraded"));
	json_object_object_add(o, "database", json_object_new_string(ok ? "ok" : "error"));
	/* The responders work without pushd (the app polls): its absence is
	 * reported, not a degraded status. */
	json_object_object_add(o, "pushd", json_object_new_string(
	    usock_alive(r->app->cfg.pushd_socket) ? "up" : "down"));
	p = json_object_new_object();
	if (ok)
		push_split(r->app, p);
	else
		json_object_object_add(p, "accounts", json_object_new_object());
	json_object_object_add(o, "push", p);
	if (!ok)
		req_header(r, "Retry-After", SERVE_RETRY_AFTER);
	req_json(r, ok ? 200 : 503, o);
	json_object_put(o);
}

const struct route auth_routes[] = {
	{ "POST", "/api/auth/login", 0, login_handle },
	{ "POST", "/api/auth/logout", 0, logout },
	{ "GET", "/api/auth/session", ROUTE_SESSION, session },
	{ "GET", "/api/auth/sessions", ROUTE_SESSION, sessions },
	{ "POST", "/api/auth/sessions/revoke-others", ROUTE_SESSION, revoke_others },
	{ "GET", "/api/auth/settings", ROUTE_SESSION | ROUTE_BUDGET, settings_get },
	{ "PUT", "/api/auth/settings", ROUTE_SESSION | ROUTE_BUDGET, settings_put },
	{ "GET", "/api/config", 0, config },
	{ "GET", "/api/health", 0, health },
	{ NULL, NULL, 0, NULL }
};
