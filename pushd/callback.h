/* callback: POST /api/push/<token>, a JMAP server's calls to the
 * PushSubscriptions of this pushd.
 * (Lifetime: pushd.h.) */
#ifndef POSTERN_CALLBACK_H
#define POSTERN_CALLBACK_H

#include <stddef.h>

#include "acct.h"

struct pushd;

/* Whether token is a push subscription's of this pushd: 1, 0, or -1 when
 * the database cannot tell. */
int callback_token_known(struct pushd *pd, const char *token);
/* The request: the HTTP status to answer (202 accepted, 403 refused, 400
 * malformed, 404 unknown, 415 not JSON, 500). */
int callback_handle(struct pushd *pd, const char *token,
    const char *content_type, const char *body, size_t n);

#endif
