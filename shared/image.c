#include "image.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <netdb.h>

#include <curl/curl.h>

#include "addr.h"
#include "dispo.h"
#include "fault.h"
#include "log.h"
#include "pct.h"
#include "upstream.h"

#define IMAGE_URL_MAX 2048
#define IMAGE_HOST_MAX 255
#define IMAGE_REDIRECTS 3
#define IMAGE_CONNECT_TIMEOUT 5
#define IMAGE_TYPE_MAX 32

#define TOO_LARGE "The image is too large."
#define TOO_SLOW "The image's server did not answer in time."
#define NOT_PUBLIC "The image's address is not public."

/* What resolving a host gave. */
enum image_where {
	IW_OK,
	IW_BAD,            /* not a host at all */
	IW_REFUSED,        /* an address that is not public */
	IW_UNKNOWN         /* the name does not resolve */
};

/* A URL the proxy may fetch, taken apart. */
struct image_url {
	char url[IMAGE_URL_MAX + 1];   /* normalised, without the fragment */
	char host[IMAGE_HOST_MAX + 1];
	long port;
};

/* One fetch: the address it is pinned to and what came back. */
struct image {
	struct req *r;
	struct addr pinned;
	int allow_loopback;
	struct fault fault;
	int redirect;       /* to follow: location is set */
	char location[IMAGE_URL_MAX + 1];
};

/* What the proxy passes on; everything else, SVG first, is refused. */
static const char *const image_types[] = {
	"image/png", "image/jpeg", "image/gif", "image/webp", "image/avif",
	"image/bmp", "image/x-icon", "image/vnd.microsoft.icon", NULL
};

static const char *const image_request_headers[] = {
	"Accept: image/avif,image/webp,image/png,image/jpeg,image/gif,"
	    "image/bmp,image/x-icon;q=0.9",
	"Accept-Encoding: identity",
	"User-Agent: postern-image-proxy",
	NULL
};

/* The type of an answer when it is an allowed image (image/jpg, which
 * some servers send, as image/jpeg): 0, or -1. */
static int image_type(const char *t, char out[IMAGE_TYPE_MAX])
{
	size_t n = strcspn(t, "; \t");
	int i;

	if (n == 9 && !strncasecmp(t, "image/jpg", 9)) {
		snprintf(out, IMAGE_TYPE_MAX, "image/jpeg");
		return 0;
	}
	for (i = 0; image_types[i]; i++)
		if (strlen(image_types[i]) == n &&
		    !strncasecmp(t, image_types[i], n)) {
			snprintf(out, IMAGE_TYPE_MAX, "%s", image_types[i]);
			return 0;
		}
	return -1;
}

/* Copies a libcurl URL part into out when it fits: 0 or -1. */
static int url_part(CURLU *h, CURLUPart part, unsigned flags, char *out,
    size_t n)
{
	char *v = NULL;
	int rc = -1;

	if (curl_url_get(h, part, &v, flags) == CURLUE_OK && strlen(v) < n) {
		memcpy(out, v, strlen(v) + 1);
		rc = 0;
	}
	curl_free(v);
	return rc;
}

static int has_part(CURLU *h, CURLUPart part)
{
	char *v = NULL;
	int rc = curl_url_get(h, part, &v, 0) == CURLUE_OK;

	curl_free(v);
	return rc;
}

/* Takes in (resolved against base, a redirect's origin, when not NULL)
 * apart: http or https only, no credentials, no zone. 0 or -1. */
static int image_parse_url(const char *base, const char *in,
    struct image_url *u)
{
	CURLU *h = curl_url();
	char scheme[8], port[8];
	char *end;
	int rc = -1;

	if (h == NULL || strlen(in) > IMAGE_URL_MAX)
		goto out;
	if ((base && curl_url_set(h, CURLUPART_URL, base, 0) != CURLUE_OK) ||
	    curl_url_set(h, CURLUPART_URL, in, 0) != CURLUE_OK)
		goto out;
	if (url_part(h, CURLUPART_SCHEME, 0, scheme, sizeof(scheme)) == -1 ||
	    (strcmp(scheme, "http") && strcmp(scheme, "https")))
		goto out;
	/* Credentials never travel, and a zone names a local interface. */
	if (has_part(h, CURLUPART_USER) || has_part(h, CURLUPART_PASSWORD) ||
	    has_part(h, CURLUPART_ZONEID))
		goto out;
	curl_url_set(h, CURLUPART_FRAGMENT, NULL, 0);
	if (url_part(h, CURLUPART_HOST, 0, u->host, sizeof(u->host)) == -1 ||
	    url_part(h, CURLUPART_PORT, CURLU_DEFAULT_PORT, port,
	    sizeof(port)) == -1 ||
	    url_part(h, CURLUPART_URL, 0, u->url, sizeof(u->url)) == -1)
		goto out;
	u->port = strtol(port, &end, 10);
	rc = *end == '\0' && u->port > 0 && u->port < 65536 ? 0 : -1;
out:
	curl_url_cleanup(h);
	return rc;
}

/* Checks every address of a name; the first is the one to connect to. */
static enum image_where resolve_name(const char *host, struct addr *out,
    int allow_loopback)
{
	struct addrinfo hints, *res = NULL, *ai;
	struct addr a;
	enum image_where w = IW_UNKNOWN;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_ADDRCONFIG;
	if (getaddrinfo(host, NULL, &hints, &res) != 0)
		return IW_UNKNOWN;
	for (ai = res; ai; ai = ai->ai_next) {
		if (addr_from_sockaddr(ai->ai_addr, ai->ai_addrlen, &a) == -1)
			continue;
		if (!addr_allowed(&a, allow_loopback)) {
			log_info("image: refused a name with an address that is "
			    "not public (%s)", addr_class_name(addr_classify(&a)));
			w = IW_REFUSED;
			break;
		}
		if (w == IW_UNKNOWN) {
			*out = a;
			w = IW_OK;
		}
	}
	freeaddrinfo(res);
	return w;
}

/* Where a URL's host is, checked before anything connects. */
static enum image_where image_resolve(const struct image_url *u,
    struct addr *out, int allow_loopback)
{
	int rc = addr_parse_host(u->host, out);

	if (rc == -1)
		return IW_BAD;
	if (rc == 0)
		return resolve_name(u->host, out, allow_loopback);
	if (!addr_allowed(out, allow_loopback)) {
		log_info("image: refused an address that is not public (%s)",
		    addr_class_name(addr_classify(out)));
		return IW_REFUSED;
	}
	return IW_OK;
}

/* libcurl is about to connect: only to the address that was checked. */
static int image_socket(const struct sockaddr *sa, socklen_t len, void *ctx)
{
	struct image *x = ctx;
	struct addr a;

	if (addr_from_sockaddr(sa, len, &a) == -1 ||
	    !addr_equal(&a, &x->pinned) || !addr_allowed(&a, x->allow_loopback)) {
		log_warn("image: refused a connection to an unchecked address");
		return -1;
	}
	return 0;
}

static int is_redirect(long status)
{
	return status == 301 || status == 302 || status == 303 ||
	    status == 307 || status == 308;
}

/* Sorts the origin's answer; for an image, starts the response. */
static int image_head(const struct up_head *h, void *ctx)
{
	struct image *x = ctx;
	struct req *r = x->r;
	char type[IMAGE_TYPE_MAX], len[32];

	if (is_redirect(h->status) && h->location[0]) {
		snprintf(x->location, sizeof(x->location), "%s", h->location);
		x->redirect = 1;
		return -1;
	}
	if (h->status == 404 || h->status == 410)
		fault_set(&x->fault, ERR_NOT_FOUND, "The image does not exist.");
	else if (h->status != 200)
		fault_set(&x->fault, ERR_UPSTREAM,
		    "The image's server answered with an error.");
	else if (image_type(h->content_type, type) == -1)
		fault_set(&x->fault, ERR_MEDIA_TYPE,
		    "This is not an image postern passes on.");
	else if (h->content_encoding[0] &&
	    strcasecmp(h->content_encoding, "identity"))
		fault_set(&x->fault, ERR_UPSTREAM,
		    "The image's server sent it encoded.");
	else if (h->content_length > r->app->cfg.image_proxy_max)
		fault_set(&x->fault, ERR_TOO_LARGE, TOO_LARGE);
	if (x->fault.err != ERR_NONE)
		return -1;
	req_header(r, "Content-Type", type);
	req_header(r, "Content-Security-Policy", DISPO_CSP);
	if (h->content_length >= 0) {
		snprintf(len, sizeof(len), "%lld", h->content_length);
		req_header(r, "Content-Length", len);
	}
	return 0;
}

static int image_body(const char *p, size_t n, void *ctx)
{
	struct image *x = ctx;

	return req_write(x->r, p, n);
}

/* What kept the origin from answering, in the image's words. */
static void image_res_fault(struct fault *f, int res)
{
	switch (res) {
	case UP_TOO_LARGE:
		fault_set(f, ERR_TOO_LARGE, TOO_LARGE);
		break;
	case UP_TIMEOUT:
		fault_set(f, ERR_UPSTREAM_TIMEOUT, TOO_SLOW);
		break;
	case UP_REFUSED:
		fault_set(f, ERR_PRIVATE_ADDRESS, NOT_PUBLIC);
		break;
	default:
		fault_set(f, ERR_UPSTREAM, "The image's server could not be reached.");
		break;
	}
}

static void image_finish(struct image *x, int res)
{
	if (x->fault.err == ERR_NONE && res != UP_OK)
		image_res_fault(&x->fault, res);
	if (x->fault.err != ERR_NONE && !x->r->client_gone)
		fault_finish(x->r, &x->fault, UP_OK);
}

/* Answers what resolving refused; 0 when the host may be fetched. */
static int image_where_error(struct req *r, enum image_where w)
{
	switch (w) {
	case IW_OK:
		return 0;
	case IW_BAD:
		req_error(r, ERR_BAD_REQUEST, "The image's host is not valid.");
		break;
	case IW_REFUSED:
		req_error(r, ERR_PRIVATE_ADDRESS, NOT_PUBLIC);
		break;
	case IW_UNKNOWN:
		req_error(r, ERR_UPSTREAM, "The image's host name does not resolve.");
		break;
	}
	return -1;
}

/* Fetches one URL by the deadline of the whole image; returns 1 when it
 * redirected (x->location), else 0 with the answer given. */
static int image_hop(struct req *r, struct image *x, const struct image_url *u,
    time_t deadline)
{
	const struct cfg *cf = &r->app->cfg;
	char host[64], pin[96];
	struct up_call c;
	long left = (long)(deadline - time(NULL));
	int res;

	memset(x, 0, sizeof(*x));
	x->r = r;
	if (left < 1) {
		req_error(r, ERR_UPSTREAM_TIMEOUT, TOO_SLOW);
		return 0;
	}
	x->allow_loopback = cf->image_proxy_allow_loopback_for_tests;
	if (image_where_error(r,
	    image_resolve(u, &x->pinned, x->allow_loopback)) == -1)
		return 0;
	if (addr_format(&x->pinned, host, sizeof(host)) == -1) {
		req_error(r, ERR_INTERNAL, "The image's address cannot be used.");
		return 0;
	}
	snprintf(pin, sizeof(pin), "::%s:%ld", host, u->port);
	memset(&c, 0, sizeof(c));
	c.method = "GET";
	c.url = u->url;
	c.headers = image_request_headers;
	c.foreign = 1;
	c.connect_to = pin;
	c.on_socket = image_socket;
	c.on_head = image_head;
	c.on_body = image_body;
	c.ctx = x;
	c.max_body = cf->image_proxy_max;
	c.timeout = left;
	c.connect_timeout = left < IMAGE_CONNECT_TIMEOUT ? left :
	    IMAGE_CONNECT_TIMEOUT;
	res = upstream_call(r->app->up, &c);
	if (x->redirect)
		return 1;
	image_finish(x, res);
	return 0;
}

void image_handle(struct req *r)
{
	const struct cfg *cf = &r->app->cfg;
	char in[IMAGE_URL_MAX + 1];
	struct image_url u, next;
	struct image x;
	time_t deadline;
	int hop;

	if (!cf->image_proxy) {
		req_error(r, ERR_NOT_FOUND, "The image proxy is turned off.");
		return;
	}
	if (cf->image_proxy_allow_loopback_for_tests)
		log_warn("image_proxy_allow_loopback_for_tests is on: "
		    "never on a real server");
	if (pct_query(r->query, "url", in, sizeof(in)) != 1 ||
	    image_parse_url(NULL, in, &u) == -1) {
		req_error(r, ERR_BAD_REQUEST, "url is not an http(s) address.");
		return;
	}
	deadline = time(NULL) + cf->image_proxy_timeout;
	for (hop = 0; image_hop(r, &x, &u, deadline) == 1; hop++) {
		if (hop == IMAGE_REDIRECTS) {
			req_error(r, ERR_UPSTREAM, "The image was redirected too often.");
			break;
		}
		if (image_parse_url(u.url, x.location, &next) == -1) {
			req_error(r, ERR_UPSTREAM,
			    "The image was redirected to an address that is not allowed.");
			break;
		}
		u = next;
	}
}

const struct route image_routes[] = {
	{ "GET", "/api/image", ROUTE_SESSION | ROUTE_BUDGET, image_handle },
	{ NULL, NULL, 0, NULL }
};
