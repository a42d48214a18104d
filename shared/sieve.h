/* sieve: the filters and vacation routes (/api/sieve), the user's Sieve
 * script read, checked and stored over ManageSieve (msieve.c) with the
 * session's credentials. The app keeps one script, "postern", and makes
 * it the active one; GET shows the active script whatever its name.
 * Each request opens its own connection and closes it (docs/DECISIONS.md,
 * "Filters and vacation (ManageSieve)"). The JMAP relay judges the
 * session: a ManageSieve server refusing its credentials is a 502
 * sieve_refused here, never a 401 that would sign the user out. */
#ifndef POSTERN_SIEVE_H
#define POSTERN_SIEVE_H

#include "serve.h"

#define SIEVE_PATH "/api/sieve"
#define SIEVE_CHECK_PATH "/api/sieve/check"
/* The script postern writes when the request names none. */
#define SIEVE_DEFAULT_NAME "postern"

void sieve_get(struct req *r);
void sieve_put(struct req *r);
void sieve_check(struct req *r);

/* The host to connect to: sieve_host, or the host of upstream, without
 * IPv6 brackets, into out. 0, or -1 when there is none (or it is too
 * long). */
int sieve_host(const struct cfg *c, char *out, size_t n);

/* The routes, for the responder that serves them with the JMAP relay.
 * Not ROUTE_UPSTREAM: the session is checked against the JMAP server
 * first (session_recheck), since ManageSieve's refusal is no verdict on
 * it. */
#define SIEVE_ROUTES \
	{ "GET", SIEVE_PATH, ROUTE_SESSION | ROUTE_BUDGET, sieve_get }, \
	{ "PUT", SIEVE_PATH, ROUTE_SESSION | ROUTE_BUDGET, sieve_put }, \
	{ "POST", SIEVE_CHECK_PATH, ROUTE_SESSION | ROUTE_BUDGET, sieve_check }

#endif
