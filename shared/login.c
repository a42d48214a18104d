#include "login.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clientnet.h"
#include "js.h"
#include "log.h"
#include "rate.h"
#include "sess.h"
#include "serve.h"
#include "upstream.h"

#define LOGIN_BODY_MAX 16384
#define SESSION_DOC_MAX (1 << 20)
#define USER_MAX 256
#define PASS_MAX 1024

/* What postern advertises in place of the upstream URLs. */
static const char *const url_keys[4] = {
	"apiUrl", "downloadUrl", "uploadUrl", "eventSourceUrl"
};
static const char *const url_ours[4] = {
	"/api/jmap",
	"/api/blob/{accountId}/{blobId}/{name}?accept={type}",
	"/api/upload/{accountId}",
	"/api/events?types={types}&closeafter={closeafter}&ping={ping}"
};

/* An attempt's rate keys: its client's address (client_net) and
 * user, the address, and all clients, which hold the attempt while the
 * mail server is asked and keep it when the answer is no; and the
 * address's failures, counted once the answer is no. */
enum { K_USER, K_IP, K_ALL, K_FAIL };
#define K_HELD K_FAIL  /* the keys before K_FAIL hold an attempt */

struct login {
	const char *user, *pass;
	int remember;
	struct login_attempt at;
};

int login_rewrite(const struct cfg *c, json_object *doc, const char *base,
    char *urls[4])
{
	const char *v;
	int i;

	for (i = 0; i < 4; i++)
		urls[i] = NULL;
	for (i = 0; i < 4; i++) {
		/* Servers without push (or a bad value) get an empty URL. */
		if ((v = js_str(doc, url_keys[i])) == NULL && i < 3)
			goto fail;
		urls[i] = v ? upstream_pin(c, base, v) : strdup("");
		if (urls[i] == NULL)
			goto fail;
		json_object_object_add(doc, url_keys[i],
		    json_object_new_string(url_ours[i]));
	}
	return 0;
fail:
	for (i = 0; i < 4; i++) {
		free(urls[i]);
		urls[i] = NULL;
	}
	return -1;
}

static int valid_user(const char *u)
{
	size_t n = strlen(u);

	if (n == 0 || n > USER_MAX)
		return 0;
	for (; *u; u++)
		if ((unsigned char)*u < 0x21 || *u == 0x7f || *u == ':')
			return 0;
	return 1;
}

/* Reads and checks the body; answers the error itself. */
static json_object *read_body(struct req *r, struct login *l)
{
	json_object *o = req_json_body(r, LOGIN_BODY_MAX, "The sign-in request", 1);

	if (o == NULL)
		return NULL;
	l->user = js_str(o, "username");
	l->pass = js_str(o, "password");
	l->remember = js_bool(o, "remember", 0);
	if (!l->user || !l->pass || !valid_user(l->user) || !*l->pass ||
	    strlen(l->pass) > PASS_MAX) {
		req_error(r, ERR_BAD_REQUEST,
		    "A username and a password are required.");
		json_object_put(o);
		return NULL;
	}
	return o;
}

static void make_keys(struct app *a, struct login_attempt *t,
    const char *ip, const char *user)
{
	char net[REQ_IP_MAX + 8];
	size_t len;

	client_net(ip, a->cfg.login_ipv6_prefix, net, sizeof(net));
	snprintf(t->keys[K_USER], LOGIN_KEY_MAX, "login-user:%s ", net);
	len = strlen(t->keys[K_USER]);
	if (len + APP_KEY_HEX < LOGIN_KEY_MAX)
		sess_account(a, user, t->keys[K_USER] + len);
	snprintf(t->keys[K_IP], LOGIN_KEY_MAX, "login-ip:%s", net);
	snprintf(t->keys[K_ALL], LOGIN_KEY_MAX, "login-all");
	snprintf(t->keys[K_FAIL], LOGIN_KEY_MAX, "login-fail:%s", net);
}

/* The seconds an attempt waits, given the counts of its keys (this
 * attempt included, but for K_FAIL); 0 when it goes on. The address and
 * user, and the address, have their limits; past the ceiling in all,
 * an address with a failure in the window waits for the next, and one
 * with another attempt under way a second: only an address without
 * either is let through, so that people who sign in right still can
 * while the mail server is spared guesses. */
static long wait_for(const struct cfg *c, const long long n[LOGIN_KEYS],
    time_t now)
{
	long left = rate_window_left(c->login_window, now);

	if (n[K_USER] > c->login_limit_user || n[K_IP] > c->login_limit_ip)
		return left;
	if (n[K_ALL] <= c->login_limit_all)
		return 0;
	if (n[K_FAIL] > 0)
		return left;
	return n[K_IP] > 1 ? 1 : 0;
}

/* The key texts of an attempt, as rate_*_keys take them. */
static void key_list(const struct login_attempt *t,
    const char *whats[LOGIN_KEYS])
{
	int i;

	for (i = 0; i < LOGIN_KEYS; i++)
		whats[i] = t->keys[i];
}

/* Takes the attempt back from the keys that hold it. */
static void refund(struct app *a, struct login_attempt *t)
{
	const char *whats[LOGIN_KEYS];

	key_list(t, whats);
	if (t->counted)
		rate_refund_keys(a, whats, K_HELD, a->cfg.login_window, t->now);
	t->counted = 0;
}

/* Judged first on what is counted already, so that a refused attempt
 * counts nowhere; then counted and judged again, as another process
 * may have counted in between. One read, and one write to count it. */
int login_admit(struct app *a, struct login_attempt *t, const char *ip,
    const char *user, time_t now, long *wait)
{
	long window = a->cfg.login_window;
	const char *whats[LOGIN_KEYS];
	long long n[LOGIN_KEYS];
	int i;

	memset(t, 0, sizeof(*t));
	t->now = now;
	make_keys(a, t, ip, user);
	key_list(t, whats);
	if (rate_count_keys(a, whats, LOGIN_KEYS, window, now, n) == -1)
		return -1;
	for (i = 0; i < K_HELD; i++)
		n[i]++;
	if ((*wait = wait_for(&a->cfg, n, now)) != 0)
		return 1;
	if (rate_add_keys(a, whats, K_HELD, window, now, n) == -1)
		return -1;
	t->counted = 1;
	if ((*wait = wait_for(&a->cfg, n, now)) == 0)
		return 0;
	refund(a, t);
	return 1;
}

void login_settle(struct app *a, struct login_attempt *t, int wrong)
{
	const char *fail = t->keys[K_FAIL];
	long long n;

	if (!wrong)
		refund(a, t);
	else if (t->counted && rate_add_keys(a, &fail, 1, a->cfg.login_window,
	    t->now, &n) == -1)
		log_warn("sign-in: a failure could not be counted");
	t->counted = 0;
}

static int admit(struct req *r, struct login *l)
{
	long wait = 0;

	switch (login_admit(r->app, &l->at, r->ip, l->user, r->now, &wait)) {
	case 0:
		return 0;
	case 1:
		log_info("sign-in rate limited for %s", r->ip);
		req_rate_limited(r, wait);
		return -1;
	default:
		serve_store_failed(r);
		return -1;
	}
}

static int collect(const char *p, size_t n, void *ctx)
{
	return buf_append(ctx, p, n);
}

static void upstream_failed(struct req *r, int res, long status)
{
	if (res == UP_TIMEOUT)
		req_error(r, ERR_UPSTREAM_TIMEOUT, "The mail server did not "
		    "answer in time. This is not a problem with your password; "
		    "please try again later.");
	else
		req_error(r, ERR_UPSTREAM, "The mail server could not "
		    "be reached. This is not a problem with your password; "
		    "please try again later.");
	log_warn("sign-in: upstream failed (result %d, status %ld)", res, status);
}

static void set_cookie(struct req *r, const char *value, int remember)
{
	char v[256], age[32] = "";
	int secure = r->app->cfg.cookie_secure == CFG_SECURE_YES ||
	    (r->app->cfg.cookie_secure == CFG_SECURE_AUTO && r->https);

	if (remember)
		snprintf(age, sizeof(age), "; Max-Age=%ld",
		    r->app->cfg.session_lifetime);
	snprintf(v, sizeof(v), "%s=%s; Path=/; HttpOnly; SameSite=Lax%s%s",
	    SESS_COOKIE, value, age, secure ? "; Secure" : "");
	req_header(r, "Set-Cookie", v);
}

/* Turns the upstream's session document into a postern session. */
static void start_session(struct req *r, const struct login *l,
    json_object *doc, const char *base)
{
	char *urls[4];
	char cookie[SESS_COOKIE_LEN + 1];
	struct sess_new n;
	int rc;

	if (login_rewrite(&r->app->cfg, doc, base, urls) == -1) {
		req_error(r, ERR_UPSTREAM,
		    "The mail server's session document is not usable.");
		return;
	}
	memset(&n, 0, sizeof(n));
	n.user = l->user;
	n.pass = l->pass;
	n.remember = l->remember;
	n.doc = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN);
	n.api_url = urls[0];
	n.download_url = urls[1];
	n.upload_url = urls[2];
	n.event_url = urls[3];
	n.agent = req_param(r, "HTTP_USER_AGENT");
	n.ip = r->ip;
	rc = sess_create(r->app, &n, r->now, cookie);
	for (int i = 0; i < 4; i++)
		free(urls[i]);
	if (rc == -1) {
		serve_store_failed(r);
		return;
	}
	set_cookie(r, cookie, l->remember);
	seal_wipe(cookie, sizeof(cookie));
	sess_prune(r->app, r->now);
	req_json(r, 200, doc);
}

/* Asks the session resource with the credentials and acts on the answer. */
static void check_upstream(struct req *r, struct login *l)
{
	struct up_call c;
	struct buf body;
	json_object *doc = NULL;
	char *url;
	int res, wrong;
	long status = 0;

	if ((url = upstream_join(&r->app->cfg,
	    r->app->cfg.upstream_session_path)) == NULL) {
		login_settle(r->app, &l->at, 0);
		req_error(r, ERR_INTERNAL, "The upstream URL is not valid.");
		return;
	}
	buf_init(&body, SESSION_DOC_MAX);
	memset(&c, 0, sizeof(c));
	c.method = "GET";
	c.url = url;
	c.user = l->user;
	c.pass = l->pass;
	c.on_body = collect;
	c.ctx = &body;
	c.follow = 1;
	c.max_body = SESSION_DOC_MAX;
	/* A person is waiting: login_timeout, within upstream_timeout. */
	c.timeout = r->app->cfg.login_timeout < r->app->cfg.upstream_timeout ?
	    r->app->cfg.login_timeout : r->app->cfg.upstream_timeout;
	res = upstream_call(r->app->up, &c);
	status = c.status;
	/* Only a wrong password counts: an attempt the mail server did not
	 * answer, and a success, count against no one. */
	wrong = res == UP_OK && (status == 401 || status == 403);
	login_settle(r->app, &l->at, wrong);
	if (res != UP_OK) {
		upstream_failed(r, res, status);
	} else if (wrong) {
		log_info("sign-in failed for %s", r->ip);
		req_error(r, ERR_INVALID_CREDENTIALS, NULL);
	} else if (status != 200 || (doc = js_parse(buf_str(&body), body.len)) == NULL) {
		upstream_failed(r, UP_ERROR, status);
	} else {
		start_session(r, l, doc, c.final_url);
	}
	json_object_put(doc);
	buf_free(&body);
	free(url);
}

void login_handle(struct req *r)
{
	struct login l;
	json_object *body;

	memset(&l, 0, sizeof(l));
	if ((body = read_body(r, &l)) == NULL)
		return;
	if (admit(r, &l) == 0)
		check_upstream(r, &l);
	/* The password lives in the parsed body: wipe it before freeing. */
	if (l.pass)
		seal_wipe((void *)(uintptr_t)l.pass, strlen(l.pass));
	json_object_put(body);
}
