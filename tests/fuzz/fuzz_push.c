/* Fuzz target for pushd's push callback (POST /api/push/<token>, the body
 * a JMAP server sends: pushd/callback.c, as route.c calls it).
 *
 * The input's first byte picks the subscription's state, whether the
 * account has a tab, and which token is presented; its first line (after
 * that byte) is the Content-Type, the rest the body. The answer must be
 * one of the documented statuses, 202 only for a JSON object the state
 * takes, and a token nobody holds must learn nothing but 404. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "acct.h"
#include "callback.h"
#include "chan.h"
#include "fuzzapp.h"
#include "pushd.h"

#define TOKEN "dG9rZW4tb2YtdGhlLWZ1enotdGFyZ2V0LTAxMjM0NTY"

static struct pushd pd;
static struct acct *the;
static struct chan_sub sub;

static void setup(void)
{
	fuzzapp_open(&pd.app);
	if (ev_init(&pd.ev) == -1 || (the = calloc(1, sizeof(*the))) == NULL)
		abort();
	the->pd = &pd;
	snprintf(the->key, sizeof(the->key), "%032x", 7);
	sub_token_hash(TOKEN, sub.token_hash);
	sub.a = the;
	the->sub = &sub;
	the->jmap_id = strdup("A1");
	pd.accts[0] = the;
	pd.naccts = 1;
	pd.next_id = 1;
}

static void teardown(void)
{
	unsigned i, k;

	for (i = 0; i < ACCT_RING; i++)
		for (k = 0; k < ACCT_NTYPES; k++)
			free(the->ring[i].states[k]);
	for (k = 0; k < ACCT_NTYPES; k++)
		free(the->states[k]);
	free(the->jmap_id);
	free(the);
	ev_free(&pd.ev);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *token;
	char *copy, *type, *body, *nl;
	char hash[ACCT_TOKEN_HEX + 1], key[APP_KEY_HEX + 1];
	size_t n;
	int rc, known;

	if (the == NULL) {
		setup();
		atexit(teardown);
	}
	if (size == 0 || (copy = malloc(size)) == NULL)
		return 0;
	/* The sub_id stays NULL: a verification is never accepted, so that
	 * no call to the JMAP server is started. */
	sub.state = data[0] % 4;
	the->ntabs = (data[0] >> 2) & 1;
	token = (data[0] >> 3) & 1 ? "someone-elses-token" : TOKEN;
	memcpy(copy, data + 1, size - 1);
	copy[size - 1] = '\0';
	type = copy;
	if ((nl = memchr(copy, '\n', size - 1)) != NULL) {
		*nl = '\0';
		body = nl + 1;
		n = size - 1 - (size_t)(body - copy);
	} else {
		body = copy + size - 1;
		n = 0;
	}
	/* As route.c: the token's hash followed here, else stored. */
	sub_token_hash(token, hash);
	known = callback_here(&pd, hash) ? 2 : callback_stored(pd.app.store,
	    hash, key);
	if (known == -1)
		abort();
	rc = known == 0 ? 404 : callback_take(&pd, hash, known == 2 ? NULL :
	    key, (data[0] >> 4) & 1 ? NULL : type, body, n);
	if (rc != 202 && rc != 400 && rc != 403 && rc != 404 && rc != 415)
		abort();
	if (token[0] == 's' && rc != 404)
		abort();
	if (rc == 202 && sub.state != SUB_VERIFIED)
		abort();
	free(copy);
	return 0;
}

#define FUZZ_CORPUS "push"
#include "replay.h"
