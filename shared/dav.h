/* dav: the CardDAV relay (/api/dav/...), for the user's address books.
 * The app speaks CardDAV itself; postern adds the session's credentials
 * and lets through only what CardDAV needs: PROPFIND, REPORT, GET, PUT and
 * DELETE, on paths under the mail server's DAV tree (carddav_path on the
 * configured upstream: /api/dav/X is <upstream>/<carddav_path>X), the
 * headers Depth, If-Match, If-None-Match and a vCard Accept, and XML or
 * vCard both ways. The same session, CSRF and budget rules as the JMAP
 * relay (a GET, as every GET, needs no CSRF header); the server's 401 is
 * a 403 here, since the JMAP relay judges the session's credentials. */
#ifndef POSTERN_DAV_H
#define POSTERN_DAV_H

#include "serve.h"

#define DAV_PREFIX "/api/dav/"

void dav_handle(struct req *r);

/* For the unit test: 0 when rest (the path after DAV_PREFIX, as sent)
 * may be relayed, -1 when it could leave the DAV tree or is not a plain
 * path. */
int dav_path_ok(const char *rest);
/* 1 when a request or answer of this Content-Type may pass. */
int dav_type_ok(const char *type);

/* The routes, for the responder that serves them with the JMAP relay. */
#define DAV_ROUTE(method) { method, DAV_PREFIX, ROUTE_SESSION | ROUTE_BUDGET | \
	ROUTE_PREFIX | ROUTE_UPSTREAM, dav_handle }
#define DAV_ROUTES DAV_ROUTE("PROPFIND"), DAV_ROUTE("REPORT"), DAV_ROUTE("GET"), \
	DAV_ROUTE("PUT"), DAV_ROUTE("DELETE")

#endif
