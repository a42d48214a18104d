/* reach: the part of postern-admin check that asks the JMAP server. It
 * fetches the session resource the way sign-in does (upstream_call: the
 * configured timeouts and CA file, up to three redirects), but without
 * credentials: a JMAP server then answers 401 with a challenge, or 200
 * with a session document. Anything else is something to fix. */
#include "admin.h"

#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "buf.h"
#include "js.h"
#include "upstream.h"

#define SESSION_MAX (1 << 20)

/* What came back, gathered by the callbacks. */
struct probe {
	struct buf body;
	int challenged;
	char type[128];
};

static int probe_head(const struct up_head *h, void *ctx)
{
	struct probe *p = ctx;

	p->challenged = h->challenged;
	snprintf(p->type, sizeof(p->type), "%s", h->content_type);
	return 0;
}

static int probe_body(const char *b, size_t n, void *ctx)
{
	return buf_append(&((struct probe *)ctx)->body, b, n);
}

/* "host:port" of url, the scheme's port when it names none, after
 * "scheme://" when scheme is set; the URL itself when it does not parse. */
static void url_place(const char *url, int scheme, char *out, size_t n)
{
	CURLU *u = curl_url();
	char *s = NULL, *host = NULL, *port = NULL;

	snprintf(out, n, "%s", url);
	if (u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_SCHEME, &s, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) ==
	    CURLUE_OK)
		snprintf(out, n, "%s%s%s:%s", scheme ? s : "", scheme ? "://" : "",
		    host, port);
	curl_free(s);
	curl_free(host);
	curl_free(port);
	curl_url_cleanup(u);
}

/* 1 when a and b have the same scheme, host and port. */
static int same_origin(const char *a, const char *b)
{
	char oa[300], ob[300];

	url_place(a, 1, oa, sizeof(oa));
	url_place(b, 1, ob, sizeof(ob));
	return !strcmp(oa, ob);
}

static int tls_failure(int code)
{
	return code == CURLE_SSL_CONNECT_ERROR ||
	    code == CURLE_PEER_FAILED_VERIFICATION ||
	    code == CURLE_SSL_CACERT_BADFILE || code == CURLE_SSL_CERTPROBLEM ||
	    code == CURLE_SSL_CIPHER || code == CURLE_SSL_ISSUER_ERROR;
}

/* No HTTP answer: says why, with libcurl's words. */
static void no_answer(struct admin_report *r, const struct cfg *c,
    const struct up_call *k, int res)
{
	const char *at = k->final_url[0] ? k->final_url : k->url;
	char where[300];

	if (res == UP_TOO_LARGE)
		admin_error(r, "upstream %s: the answer is larger than %d bytes: "
		    "not a JMAP session", at, SESSION_MAX);
	else if (k->curl_code == CURLE_COULDNT_CONNECT) {
		url_place(at, 0, where, sizeof(where));
		admin_error(r, "upstream %s: cannot connect to %s: %s", at, where,
		    k->error);
	} else if (res == UP_TIMEOUT)
		admin_error(r, "upstream %s: no answer in time "
		    "(upstream_connect_timeout %lds, upstream_timeout %lds): %s",
		    at, c->upstream_connect_timeout, c->upstream_timeout, k->error);
	else if (tls_failure(k->curl_code))
		admin_error(r, "upstream %s: TLS failed: %s%s", at, k->error,
		    k->curl_code == CURLE_PEER_FAILED_VERIFICATION &&
		    !c->upstream_ca_file ? " (upstream_ca_file can name the CA "
		    "of a private certificate)" : "");
	else
		admin_error(r, "upstream %s: %s", at, k->error[0] ? k->error :
		    "the call could not be made");
}

/* A 200: a JMAP session document has capabilities and an apiUrl. */
static int is_session(const struct probe *p)
{
	json_object *o = js_parse(buf_str(&p->body), p->body.len), *caps;
	int ok = o && json_object_object_get_ex(o, "capabilities", &caps) &&
	    json_object_is_type(caps, json_type_object) && js_str(o, "apiUrl");

	json_object_put(o);
	return ok;
}

/* An HTTP answer: the JMAP server's, or what answered in its place. */
static void answer(struct admin_report *r, const struct up_call *k,
    const struct probe *p)
{
	const char *at = k->final_url;

	if (k->status == 401 && p->challenged)
		fprintf(r->out, "upstream %s: the JMAP server answers (401: it "
		    "asks for credentials)\n", at);
	else if (k->status == 401)
		admin_warning(r, "upstream %s answers 401 without "
		    "WWW-Authenticate: is it a JMAP server?", at);
	else if (k->status == 200 && is_session(p))
		fprintf(r->out, "upstream %s: the JMAP server answers (200: a "
		    "session document without credentials)\n", at);
	else if (k->status == 200)
		admin_error(r, "upstream %s answers 200 but not with a JMAP "
		    "session document (Content-Type %s): check upstream and "
		    "upstream_session_path", at, p->type[0] ? p->type : "none");
	else
		admin_error(r, "upstream %s answers HTTP %ld: not a JMAP session "
		    "resource; check upstream and upstream_session_path", at,
		    k->status);
}

/* Sign-in pins the session's URLs to upstream's origin: a session
 * resource answered from elsewhere would send the API calls to upstream
 * all the same. */
static void check_origin(struct admin_report *r, const struct cfg *c,
    const struct up_call *k)
{
	if (!c->upstream_follow_advertised && k->final_url[0] &&
	    !same_origin(k->final_url, c->upstream))
		admin_warning(r, "the session resource redirects to %s, another "
		    "origin than upstream %s: the session's URLs are pinned to "
		    "upstream's (set upstream to that origin, or "
		    "upstream_follow_advertised = yes)", k->final_url,
		    c->upstream);
}

int admin_check_upstream(const struct cfg *c, struct admin_report *r)
{
	struct upstream *up = upstream_new(c);
	struct probe p;
	struct up_call k;
	char *url = upstream_join(c, c->upstream_session_path);
	int res, before = r->errors;

	memset(&p, 0, sizeof(p));
	buf_init(&p.body, SESSION_MAX);
	if (up == NULL || url == NULL) {
		admin_error(r, "upstream %s: cannot set up the call", c->upstream);
		goto out;
	}
	memset(&k, 0, sizeof(k));
	k.method = "GET";
	k.url = url;
	k.on_head = probe_head;
	k.on_body = probe_body;
	k.ctx = &p;
	k.follow = 1;
	k.max_body = SESSION_MAX;
	if ((res = upstream_call(up, &k)) != UP_OK)
		no_answer(r, c, &k, res);
	else {
		answer(r, &k, &p);
		check_origin(r, c, &k);
	}
out:
	buf_free(&p.body);
	free(url);
	upstream_free(up);
	return r->errors - before;
}
