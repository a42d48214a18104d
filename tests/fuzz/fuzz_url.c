/* Fuzz target for the URL checks: the image proxy's url= (shared/image.c,
 * included here for its static parser), the pinning of URLs a JMAP
 * server advertises (upstream_pin) and the response headers postern
 * reads from any upstream (shared/upstream.c's header callback, included
 * likewise).
 *
 * Lines of the input: an image URL, a base it is resolved against (a
 * redirect's origin; empty for none), an advertised URL, then response
 * header lines. A taken image URL is http(s) without credentials, with a
 * host and a port in range, and taking it again gives the same host and
 * port; a literal host is taken only when public. A pinned URL always has the configured
 * scheme, host and port and no credentials or fragment. Header values are
 * bounded and NUL-terminated. */
#include "../../shared/image.c"
#include "../../shared/upstream.c"

#include "lines.h"

static struct cfg cfg;

/* The same name, or literals of the same address. */
static int same_host(const char *x, const char *y)
{
	struct addr a, b;
	int rx = addr_parse_host(x, &a), ry = addr_parse_host(y, &b);

	if (rx != ry)
		return 0;
	return rx == 1 ? addr_equal(&a, &b) : !strcmp(x, y);
}

static void image_url(const char *in, const char *base)
{
	struct image_url u, v;
	struct addr a;
	enum image_where w;

	if (image_parse_url(*base ? base : NULL, in, &u) != 0)
		return;
	if (strncmp(u.url, "http://", 7) && strncmp(u.url, "https://", 8))
		abort();
	if (u.host[0] == '\0' || u.port < 1 || u.port > 65535 ||
	    strchr(u.host, '@') || strchr(u.url, '#'))
		abort();
	/* A host that is neither a name nor a literal is refused before any
	 * fetch (image_resolve), however libcurl reads it. */
	if (addr_parse_host(u.host, &a) == -1)
		return;
	/* libcurl reads the URL it wrote to the same place, though not always
	 * in the same words: "1059%34334" comes back as "10594334", then as
	 * "0.161.168.30". */
	if (image_parse_url(NULL, u.url, &v) != 0 || u.port != v.port ||
	    !same_host(u.host, v.host))
		abort();
	/* Names would be resolved: only literals are checked here. */
	if (addr_parse_host(u.host, &a) != 0) {
		w = image_resolve(&u, &a, 0);
		if (w == IW_OK && !addr_allowed(&a, 0))
			abort();
	}
}

static void pinned(const char *base, const char *advertised)
{
	char *url = upstream_pin(&cfg, *base ? base : cfg.upstream, advertised);
	CURLU *h;
	char *v = NULL;

	if (url == NULL)
		return;
	if ((h = curl_url()) == NULL ||
	    curl_url_set(h, CURLUPART_URL, url, 0) != CURLUE_OK)
		abort();
	if (curl_url_get(h, CURLUPART_HOST, &v, 0) != CURLUE_OK ||
	    strcmp(v, "127.0.0.1"))
		abort();
	curl_free(v);
	v = NULL;
	if (curl_url_get(h, CURLUPART_PORT, &v, 0) != CURLUE_OK || strcmp(v, "9"))
		abort();
	curl_free(v);
	v = NULL;
	if (curl_url_get(h, CURLUPART_SCHEME, &v, 0) != CURLUE_OK ||
	    strcmp(v, "http"))
		abort();
	curl_free(v);
	if (has_part(h, CURLUPART_USER) || has_part(h, CURLUPART_PASSWORD) ||
	    has_part(h, CURLUPART_FRAGMENT))
		abort();
	curl_url_cleanup(h);
	free(url);
}

static void bounded(const char *s, size_t n)
{
	if (strnlen(s, n) >= n)
		abort();
}

static void headers(const struct lines *l, size_t from)
{
	struct up_state s;
	char *line;
	size_t i, n;

	memset(&s, 0, sizeof(s));
	s.head.content_length = -1;
	for (i = from; i < l->n; i++) {
		/* As libcurl hands them over: with CRLF, not NUL-terminated. */
		n = strlen(l->f[i]);
		if ((line = malloc(n + 2)) == NULL)
			return;
		memcpy(line, l->f[i], n);
		memcpy(line + n, "\r\n", 2);
		if (on_header(line, 1, n + 2, &s) != n + 2)
			abort();
		free(line);
	}
	bounded(s.head.content_type, sizeof(s.head.content_type));
	bounded(s.head.content_encoding, sizeof(s.head.content_encoding));
	bounded(s.head.retry_after, sizeof(s.head.retry_after));
	bounded(s.head.content_range, sizeof(s.head.content_range));
	bounded(s.head.location, sizeof(s.head.location));
	if (s.head.content_length < -1)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct lines l;
	char err[128];

	if (cfg.upstream == NULL) {
		cfg_defaults(&cfg);
		if (cfg_set(&cfg, "upstream", "http://127.0.0.1:9", err,
		    sizeof(err)) != 0)
			abort();
		log_init("fuzz", LOG_ERR);
	}
	if (lines_split(&l, data, size, 12) == -1)
		return 0;
	image_url(l.f[0], l.f[1]);
	pinned(l.f[1], l.f[2]);
	headers(&l, 3);
	lines_free(&l);
	return 0;
}

#define FUZZ_CORPUS "url"
#include "replay.h"
