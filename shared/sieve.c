#include "sieve.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "log.h"
#include "msieve.h"
#include "sess.h"

/* The server's error text shown to the user: Cyrus's names each error's
 * line, one a line; a few of them are enough. */
#define SIEVE_MESSAGE_MAX 1000

struct sieve {
	struct req *r;
	struct msieve_opts o;
	struct msieve s;
	char host[256];
	char port[8];
};

/* Copies h into out without the brackets of an IPv6 literal. */
static int host_copy(const char *h, char *out, size_t n)
{
	size_t len = strlen(h);

	if (len >= 2 && h[0] == '[' && h[len - 1] == ']') {
		h++;
		len -= 2;
	}
	if (len == 0 || len >= n)
		return -1;
	memcpy(out, h, len);
	out[len] = '\0';
	return 0;
}

int sieve_host(const struct cfg *c, char *out, size_t n)
{
	CURLU *u;
	char *h = NULL;
	int rc = -1;

	if (c->sieve_host)
		return host_copy(c->sieve_host, out, n);
	if (c->upstream == NULL || (u = curl_url()) == NULL)
		return -1;
	if (curl_url_set(u, CURLUPART_URL, c->upstream, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_HOST, &h, 0) == CURLUE_OK)
		rc = host_copy(h, out, n);
	curl_free(h);
	curl_url_cleanup(u);
	return rc;
}

/* Answers a connection or command that failed (an enum msieve_res). */
static void sieve_failed(struct req *r, const char *host, int res)
{
	if (res == MSIEVE_TIMEOUT)
		log_warn("sieve: %s did not answer in time", host);
	else if (res == MSIEVE_PROTOCOL)
		log_warn("sieve: %s broke off or did not answer as ManageSieve", host);
	switch (res) {
	case MSIEVE_UNAVAILABLE:
		req_error(r, ERR_SIEVE_UNAVAILABLE, NULL);
		break;
	case MSIEVE_REFUSED:
		req_error(r, ERR_SIEVE_REFUSED, NULL);
		break;
	case MSIEVE_TIMEOUT:
		req_error(r, ERR_UPSTREAM_TIMEOUT, NULL);
		break;
	default:
		req_error(r, ERR_UPSTREAM, NULL);
	}
}

/* 0 when filters are on, else -1 with the 404 answered. */
static int sieve_on(struct req *r)
{
	if (cfg_sieve_on(&r->app->cfg))
		return 0;
	req_error(r, ERR_NOT_FOUND, "No filters are set up here.");
	return -1;
}

/* Connects and signs in with the session's credentials: 0, or -1 with
 * the error answered and nothing left open. */
static int sieve_open(struct sieve *x, struct req *r)
{
	const struct cfg *c = &r->app->cfg;
	static const int tls[] = { [CFG_SIEVE_TLS_AUTO] = MSIEVE_TLS_AUTO,
	    [CFG_SIEVE_TLS_STARTTLS] = MSIEVE_TLS_STARTTLS,
	    [CFG_SIEVE_TLS_NO] = MSIEVE_TLS_NO };
	int res;

	memset(x, 0, sizeof(*x));
	x->r = r;
	if (sieve_host(c, x->host, sizeof(x->host)) == -1) {
		req_error(r, ERR_SIEVE_UNAVAILABLE, NULL);
		return -1;
	}
	snprintf(x->port, sizeof(x->port), "%ld", c->sieve_port);
	x->o.host = x->host;
	x->o.port = x->port;
	x->o.tls = tls[c->sieve_tls];
	x->o.ca_file = c->upstream_ca_file;
	x->o.connect_timeout = c->upstream_connect_timeout;
	x->o.timeout = c->upstream_timeout;
	x->o.max = (size_t)c->max_request;
	msieve_init(&x->s, &x->o);
	if ((res = msieve_connect(&x->s)) == MSIEVE_OK)
		res = msieve_login(&x->s, r->sess->user, r->sess->pass);
	if (res == MSIEVE_OK)
		return 0;
	if (res == MSIEVE_REFUSED)
		log_info("sieve: %s refused the session's credentials", x->host);
	msieve_close(&x->s);
	sieve_failed(r, x->host, res);
	return -1;
}

/* The server's error text as a message: its lines kept, other control
 * characters made spaces, trailing space cut, at most
 * SIEVE_MESSAGE_MAX bytes. NULL when it gave none. */
static char *sieve_message(const char *text)
{
	size_t n = strlen(text), i, k = 0;
	char *m;

	if (n > SIEVE_MESSAGE_MAX)
		n = SIEVE_MESSAGE_MAX;
	/* not in the middle of a UTF-8 sequence */
	while (n > 0 && ((unsigned char)text[n] & 0xc0) == 0x80)
		n--;
	if ((m = malloc(n + 1)) == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		if (text[i] == '\r')
			continue;
		m[k++] = (unsigned char)text[i] < 0x20 && text[i] != '\n' ?
		    ' ' : text[i];
	}
	while (k > 0 && (m[k - 1] == ' ' || m[k - 1] == '\n'))
		k--;
	m[k] = '\0';
	if (k == 0) {
		free(m);
		return NULL;
	}
	return m;
}

/* Adds v to o under k; v is taken either way (json-c keeps it only on
 * success). 0, or -1 when out of memory (v NULL included). */
static int obj_add(json_object *o, const char *k, json_object *v)
{
	if (v != NULL && json_object_object_add(o, k, v) == 0)
		return 0;
	json_object_put(v);
	return -1;
}

/* 422 sieve_invalid with the server's reason and, when it names one,
 * the line. */
static void sieve_invalid(struct req *r, const struct msieve_resp *m)
{
	const struct err_entry *e = err_entry(ERR_SIEVE_INVALID);
	char *msg = sieve_message(buf_str(&m->text));
	long line = msieve_error_line(buf_str(&m->text));
	json_object *o = json_object_new_object();

	if (o == NULL || obj_add(o, "error", json_object_new_string(e->code)) ||
	    obj_add(o, "message", json_object_new_string(msg ? msg : e->message)) ||
	    (line > 0 && obj_add(o, "line", json_object_new_int64(line))))
		req_error(r, ERR_INTERNAL, "Out of memory.");
	else
		req_json(r, e->status, o);
	json_object_put(o);
	free(msg);
}

/* A command's result: 0 when OK, else -1 with the error answered (a NO
 * of PUTSCRIPT or CHECKSCRIPT is the script's: 422). */
static int sieve_done(struct sieve *x, int res, int about_script)
{
	if (res == MSIEVE_OK)
		return 0;
	if (res == MSIEVE_NO && about_script)
		sieve_invalid(x->r, &x->s.resp);
	else if (res == MSIEVE_NO) {
		log_warn("sieve: %s answered NO (%s)", x->host, x->s.resp.code);
		req_error(x->r, ERR_UPSTREAM, NULL);
	} else
		sieve_failed(x->r, x->host, res);
	return -1;
}

/* The request's "script" (and "name" when with_name): 0, or -1 with the
 * 400 answered. Borrowed from body. */
static int sieve_body(struct req *r, json_object *body, int with_name,
    const char **script, size_t *len, const char **name)
{
	json_object *v;

	if (!json_object_object_get_ex(body, "script", &v) ||
	    !json_object_is_type(v, json_type_string)) {
		req_error(r, ERR_BAD_REQUEST, "The script is missing.");
		return -1;
	}
	*script = json_object_get_string(v);
	*len = (size_t)json_object_get_string_len(v);
	if (memchr(*script, '\0', *len) != NULL) {
		req_error(r, ERR_BAD_REQUEST, "A script holds no NUL character.");
		return -1;
	}
	if (!with_name)
		return 0;
	*name = SIEVE_DEFAULT_NAME;
	if (!json_object_object_get_ex(body, "name", &v))
		return 0;
	if (!json_object_is_type(v, json_type_string) ||
	    !msieve_name_ok(json_object_get_string(v))) {
		req_error(r, ERR_BAD_REQUEST, "A script's name is 1 to 64 letters, "
		    "digits, spaces, dots, dashes or underscores.");
		return -1;
	}
	*name = json_object_get_string(v);
	return 0;
}

/* Which script GET shows: the active one, else "postern", else none
 * (-1). *active says whether it is active. */
static int sieve_pick(const struct msieve_resp *m, int *active)
{
	int i, named = -1;

	for (i = 0; i < m->n_items; i++) {
		if (!strcasecmp(msieve_val(m, i), "ACTIVE")) {
			*active = 1;
			return i;
		}
		if (!strcmp(msieve_key(m, i), SIEVE_DEFAULT_NAME))
			named = i;
	}
	*active = 0;
	return named;
}

/* The words of s as a JSON array, or NULL when out of memory. */
static json_object *str_array(const char *s)
{
	json_object *a = json_object_new_array(), *w;
	size_t n;

	while (a && *s) {
		n = strcspn(s, " ");
		if (n && ((w = json_object_new_string_len(s, (int)n)) == NULL ||
		    json_object_array_add(a, w))) {
			json_object_put(w);
			json_object_put(a);
			return NULL;
		}
		s += n;
		s += strspn(s, " ");
	}
	return a;
}

/* {"name", "script", "active", "extensions", "scripts"}: scripts the
 * LISTSCRIPTS names (a reference taken), script GETSCRIPT's answer of
 * len bytes, or NULL when there is none (""). NULL when out of memory. */
static json_object *sieve_doc(struct sieve *x, json_object *scripts,
    const char *name, const char *script, size_t len, int active)
{
	json_object *o = json_object_new_object();

	if (o == NULL)
		return NULL;
	if (obj_add(o, "name", json_object_new_string(name)) ||
	    obj_add(o, "script", json_object_new_string_len(script ? script : "",
	    script ? (int)len : 0)) ||
	    obj_add(o, "active", json_object_new_boolean(active)) ||
	    obj_add(o, "extensions", str_array(x->s.sieve)) ||
	    obj_add(o, "scripts", json_object_get(scripts))) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* Fills names from the LISTSCRIPTS answer and *pick (malloc'd) with the
 * name GET shows: the picked index (-1: none), or -2 out of memory. */
static int sieve_list(struct sieve *x, json_object *names, char **pick,
    int *active)
{
	const struct msieve_resp *m = &x->s.resp;
	json_object *v;
	int i, k = sieve_pick(m, active);

	for (i = 0; i < m->n_items; i++)
		if ((v = json_object_new_string(msieve_key(m, i))) == NULL ||
		    json_object_array_add(names, v)) {
			json_object_put(v);
			return -2;
		}
	*pick = strdup(k >= 0 ? msieve_key(m, k) : SIEVE_DEFAULT_NAME);
	return *pick ? k : -2;
}

void sieve_get(struct req *r)
{
	char *name = NULL;
	const char *script = NULL;
	size_t len = 0;
	struct sieve x;
	json_object *names = NULL, *doc = NULL;
	int active = 0, k, res;

	if (sieve_on(r) == -1 || sieve_open(&x, r) == -1)
		return;
	if (sieve_done(&x, msieve_listscripts(&x.s), 0) == -1)
		goto out;
	if ((names = json_object_new_array()) == NULL ||
	    (k = sieve_list(&x, names, &name, &active)) == -2) {
		req_error(r, ERR_INTERNAL, "Out of memory.");
		goto out;
	}
	if (k >= 0 && (res = msieve_getscript(&x.s, name)) != MSIEVE_OK) {
		sieve_done(&x, res, 0);
		goto out;
	}
	if (k >= 0) {
		/* msieve_getscript made sure of its one item */
		script = msieve_key(&x.s.resp, 0);
		len = x.s.resp.items[0].key_len;
	}
	if ((doc = sieve_doc(&x, names, name, script, len, active)) == NULL)
		req_error(r, ERR_INTERNAL, "Out of memory.");
	else
		req_json(r, 200, doc);
out:
	json_object_put(doc);
	json_object_put(names);
	free(name);
	msieve_close(&x.s);
}

/* The request's body read and checked, and the connection open: the
 * body (the caller puts it; script and name are borrowed from it), or
 * NULL with the error answered and nothing open. */
static json_object *sieve_begin(struct sieve *x, struct req *r,
    const char **script, size_t *len, const char **name)
{
	json_object *body;

	if (sieve_on(r) == -1 || (body = req_json_body(r,
	    (size_t)r->app->cfg.max_request, "The filters", 0)) == NULL)
		return NULL;
	if (sieve_body(r, body, name != NULL, script, len, name) == -1 ||
	    sieve_open(x, r) == -1) {
		json_object_put(body);
		return NULL;
	}
	return body;
}

/* 200 with {k: v} and, when k2 is set, {k2: true}; v is taken. */
static void sieve_reply(struct req *r, const char *k, json_object *v,
    const char *k2)
{
	json_object *o = json_object_new_object();

	if (o == NULL)
		json_object_put(v);
	if (o == NULL || obj_add(o, k, v) ||
	    (k2 && obj_add(o, k2, json_object_new_boolean(1))))
		req_error(r, ERR_INTERNAL, "Out of memory.");
	else
		req_json(r, 200, o);
	json_object_put(o);
}

void sieve_put(struct req *r)
{
	const char *script, *name;
	struct sieve x;
	json_object *body;
	size_t len;

	if ((body = sieve_begin(&x, r, &script, &len, &name)) == NULL)
		return;
	if (sieve_done(&x, msieve_putscript(&x.s, name, script, len), 1) == 0 &&
	    sieve_done(&x, msieve_setactive(&x.s, name), 0) == 0)
		sieve_reply(r, "name", json_object_new_string(name), "active");
	msieve_close(&x.s);
	json_object_put(body);
}

void sieve_check(struct req *r)
{
	const char *script;
	struct sieve x;
	json_object *body;
	size_t len;

	if ((body = sieve_begin(&x, r, &script, &len, NULL)) == NULL)
		return;
	if (sieve_done(&x, msieve_checkscript(&x.s, script, len), 1) == 0)
		sieve_reply(r, "ok", json_object_new_boolean(1), NULL);
	msieve_close(&x.s);
	json_object_put(body);
}
