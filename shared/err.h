/* err: every error postern answers with, in one table: the code of the
 * JSON body ({"error": code, "message": text}), its HTTP status and the
 * message a person reads when the call site has nothing more precise to
 * say. docs/API.md lists each code with its status; test_req checks the
 * two against each other. */
#ifndef POSTERN_ERR_H
#define POSTERN_ERR_H

enum err {
	ERR_NONE,               /* not an error: what a transfer starts with */
	ERR_BAD_REQUEST,        /* 400 bad_request */
	ERR_INVALID_SETTINGS,   /* 400 invalid_settings */
	ERR_UNAUTHENTICATED,    /* 401 unauthenticated */
	ERR_INVALID_CREDENTIALS,/* 401 invalid_credentials */
	ERR_FORBIDDEN,          /* 403 forbidden */
	ERR_CROSS_SITE,         /* 403 cross_site_request */
	ERR_MISSING_CSRF,       /* 403 missing_csrf_header */
	ERR_PRIVATE_ADDRESS,    /* 403 private_address */
	ERR_NOT_FOUND,          /* 404 not_found */
	ERR_METHOD,             /* 405 method_not_allowed */
	ERR_TOO_LARGE,          /* 413 too_large */
	ERR_URI_TOO_LONG,       /* 414 too_large */
	ERR_MEDIA_TYPE,         /* 415 unsupported_media_type */
	ERR_RANGE,              /* 416 bad_request */
	ERR_RATE_LIMITED,       /* 429 rate_limited */
	ERR_INTERNAL,           /* 500 internal_error */
	ERR_UPSTREAM,           /* 502 upstream_error */
	ERR_UNAVAILABLE,        /* 503 service_unavailable */
	ERR_UPSTREAM_TIMEOUT,   /* 504 upstream_timeout */
	/* The address book server's own 4xx, with its status (dav.c). */
	ERR_DAV_REFUSED,        /* 4xx dav_refused */
	/* Filters (sieve.c): the ManageSieve server refused the script; it
	 * is not there, or not a ManageSieve server; it refused the
	 * session's credentials (never a 401: the JMAP relay judges those). */
	ERR_SIEVE_INVALID,      /* 422 sieve_invalid */
	ERR_SIEVE_UNAVAILABLE,  /* 502 sieve_unavailable */
	ERR_SIEVE_REFUSED,      /* 502 sieve_refused */
	/* Web Push: a subscription's endpoint that postern will not push to
	 * (not https, not a push service the operator allows). */
	ERR_WEBPUSH_ENDPOINT,   /* 422 webpush_endpoint */
	/* Not an answer of its own: the mail server refused the session's
	 * credentials, and serve_session_refused ends the session. */
	ERR_SESSION_REFUSED,
	ERR_COUNT
};

struct err_entry {
	int status;             /* 0: the caller gives it */
	const char *code;
	const char *message;
};

/* The entry of e (never NULL for e < ERR_COUNT). */
const struct err_entry *err_entry(enum err e);

#endif
