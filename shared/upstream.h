/* upstream: HTTP to the JMAP server through libcurl. One easy handle per
 * process, reused so that connections stay alive; every call has timeouts,
 * http(s) only, certificate checks on. Only an allow-list of response
 * headers is ever read, so nothing else can reach the browser. */
#ifndef POSTERN_UPSTREAM_H
#define POSTERN_UPSTREAM_H

#include <stddef.h>

#include <sys/socket.h>

#include "cfg.h"

enum up_result {
	UP_OK,           /* an HTTP answer came (any status) */
	UP_UNREACHABLE,  /* no connection, reset, TLS failure, empty reply */
	UP_TIMEOUT,
	UP_ABORTED,      /* one of our callbacks stopped it */
	UP_TOO_LARGE,    /* the answer passed max_body */
	UP_ERROR,
	UP_REFUSED       /* on_socket refused the address: nothing was sent */
};

/* The response headers postern may use. */
struct up_head {
	long status;
	long long content_length;   /* -1 when absent */
	char content_type[128];
	char content_encoding[32];
	char retry_after[32];
	char content_range[96];
	char etag[128];             /* "" when absent or too long */
	char location[2048];        /* "" when absent or too long */
	int challenged;             /* a WWW-Authenticate header came */
};

struct up_call {
	/* "GET", "POST", or another (CardDAV's), sent with a body when the
	 * call has one. */
	const char *method;
	const char *url;
	const char *user, *pass;    /* Basic auth, both or neither */
	const char *content_type;   /* of the request body */
	long long body_len;         /* -1: sent chunked */
	/* Fills p with up to n request body bytes: count, 0 at the end, or
	 * (size_t)-1 to abort. NULL for no body. */
	size_t (*read)(char *p, size_t n, void *ctx);
	/* Or the whole body in memory (body_len bytes), sent with the head
	 * when small; used when read is NULL and body is not. */
	const char *body;
	/* Called once when the status and headers are in, before any body;
	 * -1 aborts. */
	int (*on_head)(const struct up_head *h, void *ctx);
	/* Body bytes as they come; -1 aborts. */
	int (*on_body)(const char *p, size_t n, void *ctx);
	void *ctx;
	int follow;                 /* follow up to 3 redirects (GET) */
	int pass_gzip;              /* ask for gzip and do not decode it */
	long long max_body;         /* 0: no cap */
	long status;                /* out: the HTTP status, 0 if none */
	char final_url[1024];       /* out: the URL that answered */
	int curl_code;              /* out: libcurl's CURLcode, 0 if it went */
	char error[256];            /* out: libcurl's message, "" if it went */

	/* Extra request headers ("Name: value"), NULL-terminated; the caller
	 * checks them (no CR/LF). */
	const char *const *headers;
	/* A call to somewhere other than the JMAP server (the image proxy):
	 * a fresh connection closed afterwards, no proxy from the environment,
	 * not the upstream's CA file. */
	int foreign;
	/* CURLOPT_CONNECT_TO entry ("::addr:port"): connect there whatever the
	 * URL's host would resolve to. NULL: no pin. A pinned call gets a
	 * fresh connection (a cached one would bypass the pin), closed after. */
	const char *connect_to;
	/* Called with each address libcurl is about to connect to, before the
	 * socket exists; -1 refuses it (the call ends with UP_REFUSED). */
	int (*on_socket)(const struct sockaddr *sa, socklen_t len, void *ctx);
	long timeout;               /* seconds; 0: upstream_timeout */
	long connect_timeout;       /* seconds; 0: upstream_connect_timeout */
};

struct upstream *upstream_new(const struct cfg *c);
void upstream_free(struct upstream *up);
int upstream_call(struct upstream *up, struct up_call *c);

/* Resolves advertised against base (the session resource's URL) and, unless
 * upstream_follow_advertised is set, replaces its scheme, host and port by
 * the configured upstream's, keeping path and query. Returns a malloc'd
 * URL or NULL when either does not parse. */
char *upstream_pin(const struct cfg *c, const char *base, const char *advertised);
/* The configured upstream joined with a path ("/.well-known/jmap"). */
char *upstream_join(const struct cfg *c, const char *path);

#endif
