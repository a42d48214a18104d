/* callback: POST /api/push/<token>, what a JMAP server sends to a
 * PushSubscription of this pushd (RFC 8620 7.2): its PushVerification,
 * then each StateChange. The token is found by its SHA-256, among the
 * accounts in memory or, after a restart or when another node holds the
 * account, in the store (on the database thread: route.c). (Lifetime:
 * pushd.h.) */
#include "callback.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <json-c/json.h>

#include "acct.h"
#include "bus.h"
#include "chan.h"
#include "js.h"
#include "log.h"
#include "pushd.h"
#include "seal.h"
#include "store.h"

/* The state of the account's subscription when it has the token of this
 * hash (compared in constant time), else -1. */
static int token_state(const struct acct *a, const char *hash)
{
	const struct chan_sub *s = a->sub;

	return s && s->token_hash[0] &&
	    seal_equal(s->token_hash, hash, ACCT_TOKEN_HEX) ? s->state : -1;
}

/* The account whose subscription's token hashes to hash. */
static struct acct *acct_by_token(struct pushd *pd, const char *hash)
{
	struct acct *a;
	unsigned i;

	for (i = 0; i < PUSHD_ACCT_BUCKETS; i++)
		for (a = pd->accts[i]; a; a = a->next)
			if (token_state(a, hash) >= 0)
				return a;
	return NULL;
}

int callback_here(struct pushd *pd, const char *hash)
{
	return acct_by_token(pd, hash) != NULL;
}

/* Looked up by the hash, so that what the lookup's time tells is of a
 * hash, not of the token. */
int callback_stored(struct store *st, const char *hash,
    char key[APP_KEY_HEX + 1])
{
	return store_push_token_account(st, hash, key, APP_KEY_HEX + 1);
}

/* A PushVerification: its code goes back to the mail server (a is NULL
 * when the subscription's account has no tab here: refused). */
static int on_verification(struct acct *a, json_object *o)
{
	const char *id = js_str(o, "pushSubscriptionId");
	const char *code = js_str(o, "verificationCode");

	if (id == NULL || code == NULL || strlen(code) > 512)
		return 400;
	return a ? sub_verification(a, id, code) : 403;
}

/* A StateChange of a verified subscription: the account's new states. */
static int on_state_change(struct acct *a, const char *hash, json_object *o)
{
	char *states[ACCT_NTYPES] = { NULL };
	json_object *changed;
	unsigned i, got;

	if (a == NULL)
		return 202;  /* ours, but no tab is open here: nobody to tell */
	if (token_state(a, hash) != SUB_VERIFIED)
		return 403;
	if ((changed = js_obj(o, "changed")) == NULL)
		return 400;
	got = acct_changed_states(a, changed, states);
	/* A subscription kept with no tab here still tells the other
	 * nodes' tabs (they follow while this node holds the lease). */
	if (got && (a->ntabs || store_shared(a->pd->app.store)))
		acct_new_states(a, states, got);
	for (i = 0; i < ACCT_NTYPES; i++)
		free(states[i]);
	return 202;
}

/* A push object for account a (NULL: its subscription is not followed
 * here): the HTTP status. */
static int take(struct acct *a, const char *hash, json_object *o)
{
	const char *type = js_str(o, "@type");

	if (type && !strcmp(type, "PushVerification"))
		return on_verification(a, o);
	if (type && !strcmp(type, "StateChange"))
		return on_state_change(a, hash, o);
	return 400;
}

/* The callback, for the node holding the account, as it came: 202, or
 * 400 for what the holder would refuse as malformed. What does not fit a
 * NOTIFY (PUSHD_NOTIFY_MAX: a StateChange of very many accounts) is
 * dropped, logged: the holder's next change tells it. */
static int pass_on(struct pushd *pd, const char *key, const char *hash,
    json_object *o)
{
	const char *type = js_str(o, "@type"), *text;
	json_object *m;

	if (type == NULL || (strcmp(type, "PushVerification") &&
	    strcmp(type, "StateChange")) || take(NULL, hash, o) == 400 ||
	    (!strcmp(type, "StateChange") && js_obj(o, "changed") == NULL))
		return 400;
	m = json_object_new_object();
	json_object_object_add(m, "a", json_object_new_string(key));
	json_object_object_add(m, "h", json_object_new_string(hash));
	json_object_object_add(m, "b", json_object_get(o));
	text = json_object_to_json_string_ext(m, JSON_C_TO_STRING_PLAIN);
	if (strlen(text) > PUSHD_NOTIFY_MAX)
		log_warn("pushd: a push callback too long to pass on (dropped)");
	else
		bus_tell(pd, text);
	json_object_put(m);
	return 202;
}

void callback_passed(struct acct *a, json_object *o)
{
	const char *hash = js_str(o, "h");
	json_object *b = js_obj(o, "b");

	/* Taken only with the hash of this node's own subscription. */
	if (hash && strlen(hash) == ACCT_TOKEN_HEX && b &&
	    token_state(a, hash) >= 0)
		take(a, hash, b);
}

int callback_take(struct pushd *pd, const char *hash, const char *key,
    const char *content_type, const char *body, size_t n)
{
	struct acct *a = acct_by_token(pd, hash);
	json_object *o;
	int rc = 400;

	if (a == NULL && key == NULL)
		return 404;
	if (content_type == NULL || strncasecmp(content_type, "application/json", 16) ||
	    (content_type[16] != '\0' && content_type[16] != ';'))
		return 415;
	/* Ours, and not followed here with it: on several nodes, for the
	 * holder; on one, nobody to tell. */
	if ((o = js_parse(body, n)) != NULL &&
	    json_object_is_type(o, json_type_object))
		rc = a == NULL && store_shared(pd->app.store) ?
		    pass_on(pd, key, hash, o) : take(a, hash, o);
	json_object_put(o);
	return rc;
}
