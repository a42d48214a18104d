#include "upstream.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "log.h"

/* The handle keeps the options of the last plain call (see plain_shape)
 * so that the next one of the same shape sets only what differs. */
#define UP_TYPE_MAX 128

struct upstream {
	CURL *h;
	const struct cfg *cfg;
	int kept;                       /* shape set up on h; -1: none */
	char kept_type[UP_TYPE_MAX];    /* its Content-Type */
	struct curl_slist *kept_hdrs;   /* its headers, set on h */
};

/* What one call carries through libcurl's callbacks. */
struct up_state {
	struct up_call *call;
	struct up_head head;
	CURL *h;
	int head_done;
	long long got;
	int aborted;
	int refused;               /* on_socket said no */
	char error[CURL_ERROR_SIZE];
};

struct upstream *upstream_new(const struct cfg *c)
{
	struct upstream *up = calloc(1, sizeof(*up));

	if (up == NULL)
		return NULL;
	if ((up->h = curl_easy_init()) == NULL) {
		free(up);
		return NULL;
	}
	up->cfg = c;
	up->kept = -1;
	return up;
}

void upstream_free(struct upstream *up)
{
	if (up == NULL)
		return;
	curl_easy_cleanup(up->h);
	curl_slist_free_all(up->kept_hdrs);
	free(up);
}

/* Copies a header value, trimmed, when it fits. */
static void copy_value(char *out, size_t n, const char *v, size_t len)
{
	while (len && isspace((unsigned char)*v))
		v++, len--;
	while (len && isspace((unsigned char)v[len - 1]))
		len--;
	if (len >= n)
		return;
	memcpy(out, v, len);
	out[len] = '\0';
}

static int header_is(const char *line, size_t n, const char *name, size_t *off)
{
	size_t k = strlen(name);

	if (n <= k || strncasecmp(line, name, k) || line[k] != ':')
		return 0;
	*off = k + 1;
	return 1;
}

static size_t on_header(char *line, size_t size, size_t nitems, void *ctx)
{
	struct up_state *s = ctx;
	size_t n = size * nitems, off;
	char num[32] = "";

	if (n >= 5 && !strncmp(line, "HTTP/", 5)) {
		/* A new response (after a redirect or 100): forget the last. */
		memset(&s->head, 0, sizeof(s->head));
		s->head.content_length = -1;
	} else if (header_is(line, n, "Content-Type", &off))
		copy_value(s->head.content_type, sizeof(s->head.content_type),
		    line + off, n - off);
	else if (header_is(line, n, "Content-Encoding", &off))
		copy_value(s->head.content_encoding,
		    sizeof(s->head.content_encoding), line + off, n - off);
	else if (header_is(line, n, "Retry-After", &off))
		copy_value(s->head.retry_after, sizeof(s->head.retry_after),
		    line + off, n - off);
	else if (header_is(line, n, "Content-Range", &off))
		copy_value(s->head.content_range, sizeof(s->head.content_range),
		    line + off, n - off);
	else if (header_is(line, n, "ETag", &off))
		copy_value(s->head.etag, sizeof(s->head.etag), line + off, n - off);
	else if (header_is(line, n, "Location", &off))
		copy_value(s->head.location, sizeof(s->head.location),
		    line + off, n - off);
	else if (header_is(line, n, "WWW-Authenticate", &off))
		s->head.challenged = 1;
	else if (header_is(line, n, "Content-Length", &off)) {
		copy_value(num, sizeof(num), line + off, n - off);
		s->head.content_length = isdigit((unsigned char)num[0]) ?
		    strtoll(num, NULL, 10) : -1;
	}
	return n;
}

static int deliver_head(struct up_state *s)
{
	s->head_done = 1;
	curl_easy_getinfo(s->h, CURLINFO_RESPONSE_CODE, &s->head.status);
	if (s->call->on_head && s->call->on_head(&s->head, s->call->ctx) == -1)
		return s->aborted = -1;
	return 0;
}

static size_t on_write(char *p, size_t size, size_t nmemb, void *ctx)
{
	struct up_state *s = ctx;
	size_t n = size * nmemb;

	if (!s->head_done && deliver_head(s) == -1)
		return 0;
	s->got += (long long)n;
	if (s->call->max_body && s->got > s->call->max_body) {
		s->aborted = 1;  /* too large */
		return 0;
	}
	if (s->call->on_body && s->call->on_body(p, n, s->call->ctx) == -1) {
		s->aborted = -1;
		return 0;
	}
	return n;
}

static size_t on_read(char *p, size_t size, size_t nmemb, void *ctx)
{
	struct up_state *s = ctx;
	size_t n = s->call->read(p, size * nmemb, s->call->ctx);

	if (n == (size_t)-1) {
		s->aborted = -1;
		return CURL_READFUNC_ABORT;
	}
	return n;
}

static struct curl_slist *call_headers(const struct up_call *c)
{
	struct curl_slist *l = NULL, *t;
	char line[192];
	size_t i;

	/* No "Expect: 100-continue" round trip. */
	l = curl_slist_append(l, "Expect:");
	if (l && c->content_type) {
		snprintf(line, sizeof(line), "Content-Type: %s", c->content_type);
		if ((t = curl_slist_append(l, line)) == NULL)
			goto fail;
		l = t;
	}
	if (l && c->pass_gzip && (t = curl_slist_append(l,
	    "Accept-Encoding: gzip")) == NULL)
		goto fail;
	for (i = 0; l && c->headers && c->headers[i]; i++) {
		if ((t = curl_slist_append(l, c->headers[i])) == NULL)
			goto fail;
		l = t;
	}
	return l;
fail:
	curl_slist_free_all(l);
	return NULL;
}

/* libcurl asks here for every socket it would connect; the caller's check
 * runs on the very address, so nothing unchecked is ever connected to. */
static curl_socket_t on_opensocket(void *ctx, curlsocktype purpose,
    struct curl_sockaddr *a)
{
	struct up_state *s = ctx;

	if (purpose != CURLSOCKTYPE_IPCXN || s->call->on_socket(&a->addr,
	    (socklen_t)a->addrlen, s->call->ctx) == -1) {
		s->refused = 1;
		return CURL_SOCKET_BAD;
	}
	return socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
}

/* The options of a pinned call, or of one that does not go to the JMAP
 * server (no connection shared with other calls, no proxy). */
static int pin_setopts(CURL *h, struct up_call *c, struct up_state *s,
    struct curl_slist *pin)
{
	int bad = 0;

#define SET(opt, val) bad |= curl_easy_setopt(h, opt, val) != CURLE_OK
	if (c->foreign || pin) {
		SET(CURLOPT_FRESH_CONNECT, 1L);
		SET(CURLOPT_FORBID_REUSE, 1L);
		SET(CURLOPT_PROXY, "");
	}
	if (pin)
		SET(CURLOPT_CONNECT_TO, pin);
	if (c->on_socket) {
		SET(CURLOPT_OPENSOCKETFUNCTION, on_opensocket);
		SET(CURLOPT_OPENSOCKETDATA, s);
	}
#undef SET
	return bad ? -1 : 0;
}

/* A body goes with POST, and with another method when the call has one
 * (CardDAV's PROPFIND, REPORT and PUT). */
static int sends_body(const struct up_call *c)
{
	return !strcmp(c->method, "POST") || c->read || c->body;
}

/* The options that stay the same for calls of one shape; 0, or -1 when
 * libcurl refused one. */
static int shape_setopts(struct upstream *up, struct up_call *c,
    struct curl_slist *hdrs)
{
	CURL *h = up->h;
	int bad = 0;

#define SET(opt, val) bad |= curl_easy_setopt(h, opt, val) != CURLE_OK
	SET(CURLOPT_PROTOCOLS_STR, "http,https");
	SET(CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	SET(CURLOPT_NOSIGNAL, 1L);
	SET(CURLOPT_TCP_KEEPALIVE, 1L);
	SET(CURLOPT_HTTPHEADER, hdrs);
	SET(CURLOPT_HEADERFUNCTION, on_header);
	SET(CURLOPT_WRITEFUNCTION, on_write);
	SET(CURLOPT_HTTP_CONTENT_DECODING, 0L);
	if (up->cfg->upstream_ca_file && !c->foreign)
		SET(CURLOPT_CAINFO, up->cfg->upstream_ca_file);
	if (c->user)
		SET(CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
	if (c->follow) {
		SET(CURLOPT_FOLLOWLOCATION, 1L);
		SET(CURLOPT_MAXREDIRS, 3L);
	}
	if (c->max_body)
		SET(CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)c->max_body);
	if (sends_body(c)) {
		SET(CURLOPT_POST, 1L);
		if (c->read)
			SET(CURLOPT_READFUNCTION, on_read);
	}
	/* CURLOPT_POST sends "POST" unless told otherwise, also for a GET
	 * that carries a body. */
	if (strcmp(c->method, "POST") && (strcmp(c->method, "GET") || sends_body(c)))
		SET(CURLOPT_CUSTOMREQUEST, c->method);
#undef SET
	return bad ? -1 : 0;
}

/* The options of this very call; 0, or -1 when libcurl refused one. */
static int call_setopts(struct upstream *up, struct up_call *c,
    struct up_state *s)
{
	CURL *h = up->h;
	int bad = 0;

#define SET(opt, val) bad |= curl_easy_setopt(h, opt, val) != CURLE_OK
	SET(CURLOPT_URL, c->url);
	SET(CURLOPT_CONNECTTIMEOUT, c->connect_timeout ? c->connect_timeout :
	    up->cfg->upstream_connect_timeout);
	SET(CURLOPT_TIMEOUT, c->timeout ? c->timeout : up->cfg->upstream_timeout);
	SET(CURLOPT_HEADERDATA, s);
	SET(CURLOPT_WRITEDATA, s);
	SET(CURLOPT_ERRORBUFFER, s->error);
	if (c->user) {
		SET(CURLOPT_USERNAME, c->user);
		SET(CURLOPT_PASSWORD, c->pass);
	}
	if (sends_body(c)) {
		SET(CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)c->body_len);
		if (c->read)
			SET(CURLOPT_READDATA, s);
		else
			SET(CURLOPT_POSTFIELDS, c->body ? c->body : "");
	}
#undef SET
	return bad ? -1 : 0;
}

/* A call with none of the options that only some calls have (the relay's
 * POSTs, one after another) has a shape: the handle stays set up for it
 * between calls, with no reset. -1: any other call. */
static int plain_shape(const struct up_call *c)
{
	if (c->foreign || c->connect_to || c->on_socket || c->follow ||
	    c->max_body || c->headers || !c->content_type ||
	    (strcmp(c->method, "GET") && strcmp(c->method, "POST")) ||
	    strlen(c->content_type) >= UP_TYPE_MAX)
		return -1;
	return (strcmp(c->method, "POST") ? 0 : 1) | (c->user ? 2 : 0) |
	    (c->pass_gzip ? 4 : 0) | (c->read ? 8 : 0);
}

static void forget_shape(struct upstream *up)
{
	curl_slist_free_all(up->kept_hdrs);
	up->kept_hdrs = NULL;
	up->kept = -1;
}

/* Sets up the handle for c from scratch, or keeps it when the last call
 * had the same shape. *hdrs gets headers the caller frees after the call
 * (NULL when the handle keeps them). 0, or -1. */
static int setup(struct upstream *up, struct up_call *c, struct up_state *s,
    struct curl_slist **hdrs, struct curl_slist **pin)
{
	int shape = plain_shape(c);

	*hdrs = *pin = NULL;
	if (shape >= 0 && shape == up->kept &&
	    !strcmp(up->kept_type, c->content_type))
		return call_setopts(up, c, s);
	forget_shape(up);
	curl_easy_reset(up->h);  /* keeps the connection cache */
	if ((*hdrs = call_headers(c)) == NULL)
		return -1;
	if (c->connect_to && (*pin = curl_slist_append(NULL, c->connect_to)) == NULL)
		return -1;
	if (shape_setopts(up, c, *hdrs) == -1 || call_setopts(up, c, s) == -1 ||
	    pin_setopts(up->h, c, s, *pin) == -1) {
		log_err("upstream: libcurl refused an option");
		return -1;
	}
	if (shape >= 0) {
		up->kept = shape;
		snprintf(up->kept_type, sizeof(up->kept_type), "%s", c->content_type);
		up->kept_hdrs = *hdrs;
		*hdrs = NULL;
	}
	return 0;
}

static enum up_result map_code(CURLcode rc, const struct up_state *s)
{
	if (s->refused)
		return UP_REFUSED;
	switch (rc) {
	case CURLE_OK:
		return UP_OK;
	case CURLE_OPERATION_TIMEDOUT:
		return UP_TIMEOUT;
	case CURLE_FILESIZE_EXCEEDED:
		return UP_TOO_LARGE;
	case CURLE_WRITE_ERROR:
	case CURLE_ABORTED_BY_CALLBACK:
	case CURLE_READ_ERROR:
		return s->aborted == 1 ? UP_TOO_LARGE :
		    s->aborted ? UP_ABORTED : UP_ERROR;
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_CONNECT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_WEIRD_SERVER_REPLY:
		return UP_UNREACHABLE;
	default:
		return UP_ERROR;
	}
}

/* libcurl's message for a failed call, into c->error; for a connection
 * that failed, with the system's reason ("Connection refused"). */
static void call_error(struct upstream *up, struct up_call *c, CURLcode rc,
    const char *detail)
{
	long os = 0;

	snprintf(c->error, sizeof(c->error), "%s",
	    detail[0] ? detail : curl_easy_strerror(rc));
	if (rc == CURLE_COULDNT_CONNECT && curl_easy_getinfo(up->h,
	    CURLINFO_OS_ERRNO, &os) == CURLE_OK && os)
		snprintf(c->error + strlen(c->error), sizeof(c->error) -
		    strlen(c->error), " (%s)", strerror((int)os));
}

int upstream_call(struct upstream *up, struct up_call *c)
{
	struct up_state s;
	struct curl_slist *hdrs = NULL, *pin = NULL;
	enum up_result res = UP_ERROR;
	CURLcode rc;
	char *url = NULL;

	memset(&s, 0, sizeof(s));
	s.call = c;
	s.h = up->h;
	s.head.content_length = -1;
	c->final_url[0] = c->error[0] = '\0';
	c->status = 0;
	c->curl_code = 0;
	if (setup(up, c, &s, &hdrs, &pin) == -1) {
		forget_shape(up);
		goto out;
	}
	rc = curl_easy_perform(up->h);
	/* The buffer lives in this frame: the handle must not keep it. */
	curl_easy_setopt(up->h, CURLOPT_ERRORBUFFER, NULL);
	res = map_code(rc, &s);
	c->curl_code = (int)rc;
	if (rc != CURLE_OK)
		call_error(up, c, rc, s.error);
	/* A foreign URL came from a message: its caller logs what it may. */
	if (res != UP_OK && res != UP_ABORTED && res != UP_REFUSED && !c->foreign)
		log_warn("upstream: %s: %s", c->url, c->error);
	if (res == UP_OK && !s.head_done && deliver_head(&s) == -1)
		res = UP_ABORTED;
	c->status = s.head.status;
	if (curl_easy_getinfo(up->h, CURLINFO_EFFECTIVE_URL, &url) == CURLE_OK && url)
		snprintf(c->final_url, sizeof(c->final_url), "%s", url);
out:
	curl_slist_free_all(pin);
	curl_slist_free_all(hdrs);
	return res;
}

/* Copies one part from src to dst (absent in src: cleared in dst). */
static int copy_part(CURLU *dst, CURLU *src, CURLUPart part)
{
	char *v = NULL;
	CURLUcode rc;

	if (curl_url_get(src, part, &v, 0) != CURLUE_OK)
		return curl_url_set(dst, part, NULL, 0) == CURLUE_OK ? 0 : -1;
	rc = curl_url_set(dst, part, v, 0);
	curl_free(v);
	return rc == CURLUE_OK ? 0 : -1;
}

/* The configured upstream, parsed once: a sign-in pins four URLs to it.
 * Kept for the process; parsed again only if another upstream is asked
 * for (the unit tests use several). */
static CURLU *origin_of(const char *upstream)
{
	static char *url;
	static CURLU *parsed;
	CURLU *u;
	char *copy = NULL;

	if (url && !strcmp(url, upstream))
		return parsed;
	if ((u = curl_url()) == NULL || (copy = strdup(upstream)) == NULL ||
	    curl_url_set(u, CURLUPART_URL, upstream, 0) != CURLUE_OK) {
		curl_url_cleanup(u);
		free(copy);
		return NULL;
	}
	curl_url_cleanup(parsed);
	free(url);
	url = copy;
	parsed = u;
	return parsed;
}

char *upstream_pin(const struct cfg *c, const char *base, const char *advertised)
{
	CURLU *u = curl_url(), *origin;
	char *tmp = NULL, *out = NULL;

	if (!u)
		goto out;
	if (curl_url_set(u, CURLUPART_URL, base, 0) != CURLUE_OK ||
	    curl_url_set(u, CURLUPART_URL, advertised, 0) != CURLUE_OK)
		goto out;
	/* Credentials and fragments never travel in a pinned URL. */
	curl_url_set(u, CURLUPART_USER, NULL, 0);
	curl_url_set(u, CURLUPART_PASSWORD, NULL, 0);
	curl_url_set(u, CURLUPART_FRAGMENT, NULL, 0);
	if (!c->upstream_follow_advertised) {
		if ((origin = origin_of(c->upstream)) == NULL ||
		    copy_part(u, origin, CURLUPART_SCHEME) == -1 ||
		    copy_part(u, origin, CURLUPART_HOST) == -1 ||
		    copy_part(u, origin, CURLUPART_PORT) == -1)
			goto out;
	}
	if (curl_url_get(u, CURLUPART_URL, &tmp, 0) == CURLUE_OK)
		out = strdup(tmp);
out:
	curl_free(tmp);
	curl_url_cleanup(u);
	return out;
}

char *upstream_join(const struct cfg *c, const char *path)
{
	return upstream_pin(c, c->upstream, path);
}
