/* The relay responder: the JMAP API (/api/jmap) and the address book's
 * CardDAV (/api/dav/), both calls to the mail server on the session's
 * credentials, in one pool. */
#include "dav.h"
#include "relay.h"

static const struct route routes[] = {
	RELAY_ROUTE,
	DAV_ROUTES,
	{ NULL, NULL, 0, NULL }
};

int main(int argc, char **argv)
{
	return serve_main(argc, argv, "postern-jmap", routes);
}
