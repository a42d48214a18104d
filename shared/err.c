#include "err.h"

#include <stddef.h>

static const struct err_entry table[ERR_COUNT] = {
	[ERR_NONE] = { 0, NULL, NULL },
	[ERR_BAD_REQUEST] = { 400, "bad_request", "The request is not valid." },
	[ERR_INVALID_SETTINGS] = { 400, "invalid_settings",
	    "The settings are not valid." },
	[ERR_UNAUTHENTICATED] = { 401, "unauthenticated", "Please sign in." },
	[ERR_INVALID_CREDENTIALS] = { 401, "invalid_credentials",
	    "Wrong username or password." },
	[ERR_FORBIDDEN] = { 403, "forbidden", "This is not allowed." },
	[ERR_CROSS_SITE] = { 403, "cross_site_request",
	    "Requests from other sites are refused." },
	[ERR_MISSING_CSRF] = { 403, "missing_csrf_header",
	    "The X-Postern-CSRF header is required." },
	[ERR_PRIVATE_ADDRESS] = { 403, "private_address",
	    "The address is not public." },
	[ERR_NOT_FOUND] = { 404, "not_found", "Not found." },
	[ERR_METHOD] = { 405, "method_not_allowed",
	    "This method is not allowed here." },
	[ERR_TOO_LARGE] = { 413, "too_large", "The request is too large." },
	[ERR_URI_TOO_LONG] = { 414, "too_large",
	    "The request's address is too long." },
	[ERR_MEDIA_TYPE] = { 415, "unsupported_media_type",
	    "This type of content is not taken here." },
	[ERR_RANGE] = { 416, "bad_request", "The range cannot be satisfied." },
	[ERR_RATE_LIMITED] = { 429, "rate_limited",
	    "Too many requests. Please wait and try again." },
	[ERR_INTERNAL] = { 500, "internal_error",
	    "Something went wrong inside postern." },
	[ERR_UPSTREAM] = { 502, "upstream_error",
	    "The mail server answered with an error." },
	[ERR_UNAVAILABLE] = { 503, "service_unavailable",
	    "postern's database is busy or unavailable. Please try again in "
	    "a moment." },
	[ERR_UPSTREAM_TIMEOUT] = { 504, "upstream_timeout",
	    "The mail server did not answer in time." },
	[ERR_DAV_REFUSED] = { 0, "dav_refused",
	    "The address book server refused the request." },
	[ERR_SIEVE_INVALID] = { 422, "sieve_invalid",
	    "The mail server did not accept the filters." },
	[ERR_SIEVE_UNAVAILABLE] = { 502, "sieve_unavailable",
	    "Filters are not available on this mail server." },
	[ERR_SIEVE_REFUSED] = { 502, "sieve_refused",
	    "The mail server's filter service did not accept this sign-in." },
	[ERR_WEBPUSH_ENDPOINT] = { 422, "webpush_endpoint",
	    "This browser's push service is not one this server sends "
	    "notifications to." },
	[ERR_SESSION_REFUSED] = { 401, "unauthenticated",
	    "The mail server no longer accepts this sign-in. Please sign in "
	    "again." },
};

const struct err_entry *err_entry(enum err e)
{
	return &table[(unsigned)e < ERR_COUNT ? e : ERR_INTERNAL];
}
