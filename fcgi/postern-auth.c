/* The sign-in responder: /api/auth/..., /api/config, /api/health. */
#include "auth.h"

int main(int argc, char **argv)
{
	return serve_main(argc, argv, "postern-auth", auth_routes);
}
