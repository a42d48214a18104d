/* A push callback taken as pushd's route.c takes it, in one call: the
 * token's hash among the accounts followed here, else in the store (on
 * the database thread in pushd, here on the test's store). */
#ifndef POSTERN_TESTCALLBACK_H
#define POSTERN_TESTCALLBACK_H

#include <string.h>

#include "callback.h"
#include "chan.h"
#include "pushd.h"

/* 2 followed here, 1 stored (key set), 0 unknown, -1 the store failed. */
static inline int tc_known(struct pushd *pd, const char *token,
    char hash[ACCT_TOKEN_HEX + 1], char key[APP_KEY_HEX + 1])
{
	sub_token_hash(token, hash);
	return callback_here(pd, hash) ? 2 : callback_stored(pd->app.store,
	    hash, key);
}

/* The HTTP status of a JSON callback with body for token. */
static inline int tc_callback(struct pushd *pd, const char *token,
    const char *body)
{
	char hash[ACCT_TOKEN_HEX + 1], key[APP_KEY_HEX + 1];
	int k = tc_known(pd, token, hash, key);

	if (k <= 0)
		return k ? 500 : 404;
	return callback_take(pd, hash, k == 2 ? NULL : key, "application/json",
	    body, strlen(body));
}

#endif
