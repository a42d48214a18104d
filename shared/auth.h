/* auth: the sign-in responder's handlers: /api/auth/login, logout,
 * session, sessions, sessions/revoke-others, and /api/config and
 * /api/health. */
#ifndef POSTERN_AUTH_H
#define POSTERN_AUTH_H

#include "serve.h"

extern const struct route auth_routes[];

#endif
