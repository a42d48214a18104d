/* route: what pushd answers. A request whose head is in becomes a struct
 * req (shared/req.h) over the FastCGI request, so that the checks and the
 * answers are the responders' own: cross-site refusal, the session
 * cookie, the security headers, the JSON errors.
 * (Lifetime: pushd.h.) */
#ifndef POSTERN_ROUTE_H
#define POSTERN_ROUTE_H

struct preq;

/* Answers q, or turns it into a tab's stream (main.c hands it to conn.c
 * as pd->route). */
void route_request(struct preq *q);

#endif
