/* The JMAP relay responder: /api/jmap. */
#include "relay.h"

int main(int argc, char **argv)
{
	return serve_main(argc, argv, "postern-jmap", relay_routes);
}
