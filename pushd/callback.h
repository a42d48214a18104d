/* callback: POST /api/push/<token>, a JMAP server's calls to the
 * PushSubscriptions of this pushd. On several nodes the callback may reach
 * a node that does not hold the account's lease (the JMAP server calls
 * push_public_url, behind the load balancer): that node finds the token's
 * hash in the database and passes the callback on to the holder through
 * it (bus.h). (Lifetime: pushd.h.) */
#ifndef POSTERN_CALLBACK_H
#define POSTERN_CALLBACK_H

#include <stddef.h>

#include <json-c/json.h>

#include "acct.h"

struct pushd;

/* Whether token is a push subscription's of this pushd: 1, 0, or -1 when
 * the database cannot tell. */
int callback_token_known(struct pushd *pd, const char *token);
/* The request: the HTTP status to answer (202 accepted, 403 refused, 400
 * malformed, 404 unknown, 415 not JSON, 500). */
int callback_handle(struct pushd *pd, const char *token,
    const char *content_type, const char *body, size_t n);
/* A callback that reached another node, passed on (bus.c) to this one,
 * which holds account a: {"a": key, "h": token hash, "b": the push
 * object as it came}. Taken as the callback would have been here, only
 * with the hash of this node's subscription. */
void callback_passed(struct acct *a, json_object *o);

#endif
