#include "wpsub.h"

#include <stdlib.h>
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
#include "route.h"
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

/* A request's part on the database thread (route.h), by method. */
struct sub_wait {
	struct route_wait w;
	struct sub_in in;
	char *endpoint;            /* GET: the stored one; PUT: in's, copied */
	struct buf sealed;         /* PUT: the credentials, sealed */
	long long created;
	int status;                /* PUT: 0, or 500 (no mail account) */
	struct others *others;     /* PUT: the sessions whose row went */
};

static void sub_free(struct route_wait *w)
{
	struct sub_wait *x = container_of(w, struct sub_wait, w);

	free(x->endpoint);
	buf_wipe_free(&x->sealed);
	free(x->others);
	free(x);
}

static struct sub_wait *sub_wait_new(void (*work)(struct dbq_job *,
    struct store *), void (*then)(struct req *, struct route_wait *))
{
	struct sub_wait *x = calloc(1, sizeof(*x));

	if (x == NULL)
		return NULL;
	buf_init(&x->sealed, SEALED_MAX);
	x->w.j.work = work;
	x->w.then = then;
	x->w.free = sub_free;
	return x;
}

static int get_row(void *ctx, const struct store_webpush_row *row)
{
	struct sub_wait *x = ctx;

	free(x->endpoint);
	x->endpoint = strdup(row->endpoint);
	return x->endpoint ? 0 : -1;
}

static void get_work(struct dbq_job *j, struct store *st)
{
	struct sub_wait *x = container_of(j, struct sub_wait, w.j);

	j->rc = store_webpush_get(st, x->w.sess->id, get_row, x);
}

static void get_then(struct req *r, struct route_wait *w)
{
	struct sub_wait *x = container_of(w, struct sub_wait, w);
	json_object *o;

	if (w->j.rc == -1) {
		serve_store_failed(r);
		return;
	}
	o = json_object_new_object();
	json_object_object_add(o, "endpoint",
	    x->endpoint ? json_object_new_string(x->endpoint) : NULL);
	req_json(r, 200, o);
	json_object_put(o);
}

static void sub_get(struct req *r)
{
	struct sub_wait *x = sub_wait_new(get_work, get_then);

	if (x == NULL)
		req_error(r, ERR_INTERNAL, NULL);
	else
		route_wait(r, &x->w);
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
 * that the mail of the one before is never shown to the one after. The
 * rows that went are in o, their watches for the loop to end. */
static int take_over(struct store *st, const char *endpoint, struct others *o)
{
	struct others found = { .session = o->session };
	int i, rc;

	if (store_webpush_endpoint(st, endpoint, other_row, &found) == -1)
		return -1;
	for (i = 0; i < found.n; i++) {
		/* Only when the row went: that session may have subscribed
		 * anew meanwhile, with another endpoint. */
		if ((rc = store_webpush_delete(st, found.ids[i], endpoint)) == -1)
			return -1;
		if (rc > 0) {
			memcpy(o->ids[o->n], found.ids[i], SESS_ID_LEN + 1);
			memcpy(o->accounts[o->n++], found.accounts[i],
			    APP_KEY_HEX + 1);
		}
	}
	return 0;
}

static void put_row(const struct sub_wait *x, const struct sess *s,
    struct store_webpush_row *row)
{
	*row = (struct store_webpush_row){
		.session = s->id, .account = s->account,
		.endpoint = x->endpoint,
		.p256dh = x->in.p256dh, .p256dh_len = sizeof(x->in.p256dh),
		.auth = x->in.auth, .auth_len = sizeof(x->in.auth),
		.created = x->created,
		.sealed = (const unsigned char *)x->sealed.data,
		.sealed_len = x->sealed.len,
	};
}

static void put_work(struct dbq_job *j, struct store *st)
{
	struct sub_wait *x = container_of(j, struct sub_wait, w.j);
	const struct sess *s = x->w.sess;
	struct store_webpush_row row;
	char *jmap_id = acct_primary_mail(j->app, s);

	j->rc = -1;
	if (jmap_id == NULL) {
		x->status = 500;
		return;
	}
	x->others->session = s->id;
	if (wp_seal(j->app, s, jmap_id, &x->sealed) == 0 &&
	    take_over(st, x->endpoint, x->others) == 0) {
		put_row(x, s, &row);
		j->rc = store_webpush_put(st, &row);
	}
	free(jmap_id);
}

/* Whether or not its client is still there: the sessions that lost the
 * endpoint stop here and elsewhere, the new row is watched here and
 * told. */
static void put_settle(struct route_wait *w)
{
	struct sub_wait *x = container_of(w, struct sub_wait, w);
	struct pushd *pd = w->j.pd;
	struct store_webpush_row row;
	int i;

	for (i = 0; i < x->others->n; i++) {
		wp_watch_end(pd, x->others->accounts[i], x->others->ids[i]);
		wp_watch_tell(pd, x->others->accounts[i], x->others->ids[i]);
	}
	if (w->j.rc == -1)
		return;
	put_row(x, w->sess, &row);
	wp_watch_row(pd, &row);
	wp_watch_tell(pd, row.account, row.session);
}

static void put_then(struct req *r, struct route_wait *w)
{
	struct sub_wait *x = container_of(w, struct sub_wait, w);

	if (x->status == 500)
		req_error(r, ERR_INTERNAL, "The session names no mail account.");
	else if (w->j.rc == -1)
		serve_store_failed(r);
	else {
		req_status(r, 204);
		req_end(r);
	}
}

static void sub_put(struct req *r)
{
	json_object *o = req_json_body(r, BODY_MAX, "The subscription", 0);
	struct sub_wait *x;

	if (o == NULL)
		return;
	if ((x = sub_wait_new(put_work, put_then)) == NULL ||
	    (x->others = calloc(1, sizeof(*x->others))) == NULL) {
		if (x)
			sub_free(&x->w);
		req_error(r, ERR_INTERNAL, NULL);
	} else if (sub_read(r, o, &x->in) == -1)
		sub_free(&x->w);        /* answered */
	else if ((x->endpoint = strdup(x->in.endpoint)) == NULL) {
		sub_free(&x->w);
		req_error(r, ERR_INTERNAL, NULL);
	} else {
		x->in.endpoint = x->endpoint;   /* o's goes with o */
		x->created = (long long)time(NULL);
		x->w.keep = 1;
		x->w.settle = put_settle;
		route_wait(r, &x->w);
	}
	json_object_put(o);
}

static void delete_work(struct dbq_job *j, struct store *st)
{
	struct sub_wait *x = container_of(j, struct sub_wait, w.j);

	j->rc = store_webpush_delete(st, x->w.sess->id, NULL);
}

static void delete_settle(struct route_wait *w)
{
	if (w->j.rc != -1)
		wp_watch_tell(w->j.pd, w->sess->account, w->sess->id);
}

static void delete_then(struct req *r, struct route_wait *w)
{
	if (w->j.rc == -1) {
		serve_store_failed(r);
		return;
	}
	req_status(r, 204);
	req_end(r);
}

static void sub_delete(struct req *r, struct pushd *pd)
{
	struct sub_wait *x = sub_wait_new(delete_work, delete_then);

	if (x == NULL) {
		req_error(r, ERR_INTERNAL, NULL);
		return;
	}
	wp_watch_end(pd, r->sess->account, r->sess->id);
	x->w.keep = 1;
	x->w.settle = delete_settle;
	route_wait(r, &x->w);
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
		sub_put(r);
	else if (!strcmp(r->method, "DELETE"))
		sub_delete(r, pd);
	else {
		req_header(r, "Allow", "GET, PUT, DELETE");
		req_error(r, ERR_METHOD, NULL);
	}
}
