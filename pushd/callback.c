/* callback: POST /api/push/<token>, what a JMAP server sends to a
 * PushSubscription of this pushd (RFC 8620 7.2): its PushVerification,
 * then each StateChange. The token is found by its SHA-256, among the
 * accounts in memory or, after a restart, in the store. (Lifetime:
 * pushd.h.) */
#include "callback.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <json-c/json.h>

#include "acct.h"
#include "chan.h"
#include "js.h"
#include "pushd.h"
#include "store.h"

/* The account whose subscription's token hashes to hash. */
static struct acct *acct_by_token(struct pushd *pd, const char *hash)
{
	struct acct *a;
	unsigned i;

	for (i = 0; i < PUSHD_ACCT_BUCKETS; i++)
		for (a = pd->accts[i]; a; a = a->next)
			if (sub_token_state(a, hash) >= 0)
				return a;
	return NULL;
}

/* A verified subscription whose account has no tabs in this process (a
 * restart): 1 when the database holds the token's hash. Looked up by the
 * hash, so that what the lookup's time tells is of a hash, not of the
 * token. */
static int token_stored(struct pushd *pd, const char *hash)
{
	return store_push_token_known(pd->app.store, hash);
}

int callback_token_known(struct pushd *pd, const char *token)
{
	char hash[ACCT_TOKEN_HEX + 1];

	sub_token_hash(token, hash);
	return acct_by_token(pd, hash) ? 1 : token_stored(pd, hash);
}

int callback_handle(struct pushd *pd, const char *token,
    const char *content_type, const char *body, size_t n)
{
	struct acct *a;
	json_object *o, *changed;
	char *states[ACCT_NTYPES] = { NULL };
	char hash[ACCT_TOKEN_HEX + 1];
	const char *type, *id, *code;
	unsigned i, got;
	int known, rc;

	sub_token_hash(token, hash);
	if ((a = acct_by_token(pd, hash)) == NULL &&
	    (known = token_stored(pd, hash)) <= 0)
		return known == -1 ? 500 : 404;
	if (content_type == NULL || strncasecmp(content_type, "application/json", 16) ||
	    (content_type[16] != '\0' && content_type[16] != ';'))
		return 415;
	if ((o = js_parse(body, n)) == NULL ||
	    !json_object_is_type(o, json_type_object) ||
	    (type = js_str(o, "@type")) == NULL) {
		json_object_put(o);
		return 400;
	}
	if (!strcmp(type, "PushVerification")) {
		id = js_str(o, "pushSubscriptionId");
		code = js_str(o, "verificationCode");
		rc = 403;
		if (id == NULL || code == NULL || strlen(code) > 512)
			rc = 400;
		else if (a)
			rc = sub_verification(a, id, code);
		json_object_put(o);
		return rc;
	}
	if (strcmp(type, "StateChange")) {
		json_object_put(o);
		return 400;
	}
	if (a == NULL) {
		/* Ours, but no tab is open in this process: nobody to tell. */
		json_object_put(o);
		return 202;
	}
	if (sub_token_state(a, hash) != SUB_VERIFIED) {
		json_object_put(o);
		return 403;
	}
	if ((changed = js_obj(o, "changed")) == NULL) {
		json_object_put(o);
		return 400;
	}
	got = acct_changed_states(a, changed, states);
	json_object_put(o);
	if (got && a->ntabs)
		acct_new_states(a, states, got, 0);
	for (i = 0; i < ACCT_NTYPES; i++)
		free(states[i]);
	return 202;
}
