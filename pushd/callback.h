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
struct store;

/* A token is known by its hash (sub_token_hash): first among the
 * accounts followed here, on the loop; else in the store, on the
 * database thread (dbq.h). */
/* Whether hash is the token of a subscription followed here: 1 or 0. */
int callback_here(struct pushd *pd, const char *hash);
/* Whether the store holds hash as a subscription's token: 1 with its
 * account's key in key, 0, or -1 when the store cannot tell. */
int callback_stored(struct store *st, const char *hash,
    char key[APP_KEY_HEX + 1]);
/* A callback for the token of hash, followed here or (key set, from
 * callback_stored) only stored: the HTTP status to answer (202 accepted,
 * 403 refused, 400 malformed, 404 unknown, 415 not JSON). */
int callback_take(struct pushd *pd, const char *hash, const char *key,
    const char *content_type, const char *body, size_t n);
/* A callback that reached another node, passed on (bus.c) to this one,
 * which holds account a: {"a": key, "h": token hash, "b": the push
 * object as it came}. Taken as the callback would have been here, only
 * with the hash of this node's subscription. */
void callback_passed(struct acct *a, json_object *o);

#endif
