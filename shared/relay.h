/* relay: the JMAP API relay (/api/jmap). The request body streams from the
 * browser to the JMAP server through an incremental JSON check; the answer
 * streams back, gzip-compressed only for a client that asks. */
#ifndef POSTERN_RELAY_H
#define POSTERN_RELAY_H

#include "serve.h"

void relay_handle(struct req *r);

/* The route, for the responder that serves it (with the CardDAV relay). */
#define RELAY_ROUTE { "POST", "/api/jmap", ROUTE_SESSION | ROUTE_BUDGET | \
	ROUTE_UPSTREAM, relay_handle }

#endif
