/* The relay responder: the JMAP API (/api/jmap), the address book's
 * CardDAV (/api/dav/) and the filters' ManageSieve (/api/sieve), all
 * calls to the mail server on the session's credentials, in one pool. */
#include "dav.h"
#include "relay.h"
#include "sieve.h"

static const struct route routes[] = {
	RELAY_ROUTE,
	DAV_ROUTES,
	SIEVE_ROUTES,
	{ NULL, NULL, 0, NULL }
};

int main(int argc, char **argv)
{
	return serve_main(argc, argv, "postern-jmap", routes);
}
