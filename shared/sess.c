#include "sess.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "store.h"

#define SALT_LEN 16
/* Sessions whose key and credentials a process keeps open between their
 * requests (direct-mapped by id). */
#define SESS_CACHE_SLOTS 64

/* What opening a session's row gave, valid for as long as the row still
 * holds the same verifier, salt and sealed credentials. */
struct sess_slot {
	char id[SESS_ID_LEN + 1];      /* "" when free */
	unsigned char verifier[SEAL_HASH_LEN];
	unsigned char salt[SALT_LEN];
	unsigned char *sealed;
	size_t sealed_len;
	unsigned char key[SEAL_KEY_LEN];
	struct buf creds;
};

struct sess_cache {
	struct sess_slot slot[SESS_CACHE_SLOTS];
};

void sess_account(const struct app *a, const char *user, char out[APP_KEY_HEX + 1])
{
	char lower[512];
	size_t i;

	for (i = 0; user[i] && i + 1 < sizeof(lower); i++)
		lower[i] = (char)(user[i] >= 'A' && user[i] <= 'Z' ?
		    user[i] + 32 : user[i]);
	lower[i] = '\0';
	app_key(a, "account", lower, out);
}

/* The session key: HKDF over cookie secret and server secret together. */
static int derive_key(const struct app *a, const char *id,
    const unsigned char *secret, const unsigned char *salt,
    unsigned char key[SEAL_KEY_LEN])
{
	unsigned char ikm[SESS_SECRET_BYTES + APP_SECRET_LEN];
	char info[64];
	int rc;

	memcpy(ikm, secret, SESS_SECRET_BYTES);
	memcpy(ikm + SESS_SECRET_BYTES, a->secret, APP_SECRET_LEN);
	snprintf(info, sizeof(info), "postern session v1 %s", id);
	rc = seal_hkdf(ikm, sizeof(ikm), salt, SALT_LEN, info, strlen(info),
	    key, SEAL_KEY_LEN);
	seal_wipe(ikm, sizeof(ikm));
	return rc;
}

/* Seals the credentials and the document for a new session. */
static int seal_new(const unsigned char *key, const char *id,
    const struct sess_new *n, struct buf *creds, struct buf *doc)
{
	struct buf plain;
	char aad[SESS_ID_LEN + 8];
	int rc;

	buf_init(&plain, 1 << 16);
	rc = buf_puts(&plain, n->user) | buf_putc(&plain, '\0') |
	    buf_puts(&plain, n->pass);
	snprintf(aad, sizeof(aad), "%s/creds", id);
	if (rc == 0)
		rc = seal_encrypt(key, aad, strlen(aad), plain.data, plain.len, creds);
	buf_wipe_free(&plain);
	snprintf(aad, sizeof(aad), "%s/doc", id);
	if (rc == 0)
		rc = seal_encrypt(key, aad, strlen(aad), n->doc, strlen(n->doc), doc);
	return rc;
}

static int insert_row(struct app *a, const char *id,
    const unsigned char *verifier, const unsigned char *salt,
    const struct buf *creds, const struct buf *doc, const struct sess_new *n,
    time_t now)
{
	char account[APP_KEY_HEX + 1];
	struct store_sess_row row = {
		.id = id, .account = account,
		.verifier = verifier, .verifier_len = SEAL_HASH_LEN,
		.salt = salt, .salt_len = SALT_LEN,
		.sealed = (const unsigned char *)creds->data,
		.sealed_len = creds->len,
		.doc = (const unsigned char *)doc->data, .doc_len = doc->len,
		.remember = n->remember,
		.created = (long long)now,
		/* expires is the absolute end; idle expiry is checked from
		 * seen. */
		.expires = (long long)now + a->cfg.session_lifetime,
		.api_url = n->api_url, .download_url = n->download_url,
		.upload_url = n->upload_url, .event_url = n->event_url,
		.agent = n->agent, .ip = n->ip,
	};

	sess_account(a, n->user, account);
	return store_sess_insert(a->store, &row);
}

int sess_create(struct app *a, const struct sess_new *n, time_t now,
    char *cookie)
{
	unsigned char idb[SESS_ID_BYTES], secret[SESS_SECRET_BYTES];
	unsigned char salt[SALT_LEN], verifier[SEAL_HASH_LEN], key[SEAL_KEY_LEN];
	char id[SESS_ID_LEN + 1];
	struct buf creds, doc;
	int rc = -1;

	buf_init(&creds, 1 << 20);
	buf_init(&doc, 1 << 24);
	if (seal_random(idb, sizeof(idb)) == -1 ||
	    seal_random(secret, sizeof(secret)) == -1 ||
	    seal_random(salt, sizeof(salt)) == -1)
		goto out;
	seal_b64url_encode(idb, sizeof(idb), id);
	seal_sha256(secret, sizeof(secret), verifier);
	if (derive_key(a, id, secret, salt, key) == -1 ||
	    seal_new(key, id, n, &creds, &doc) == -1 ||
	    insert_row(a, id, verifier, salt, &creds, &doc, n, now) == -1)
		goto out;
	memcpy(cookie, id, SESS_ID_LEN);
	cookie[SESS_ID_LEN] = '.';
	seal_b64url_encode(secret, sizeof(secret), cookie + SESS_ID_LEN + 1);
	rc = 0;
out:
	seal_wipe(secret, sizeof(secret));
	seal_wipe(key, sizeof(key));
	buf_free(&creds);
	buf_free(&doc);
	return rc;
}

/* Splits "<id>.<secret>" and decodes the secret: 0 or -1. */
static int parse_cookie(const char *cookie, char *id, unsigned char *secret)
{
	if (strlen(cookie) != SESS_COOKIE_LEN || cookie[SESS_ID_LEN] != '.')
		return -1;
	memcpy(id, cookie, SESS_ID_LEN);
	id[SESS_ID_LEN] = '\0';
	if (strspn(id, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789-_") != SESS_ID_LEN)
		return -1;
	return seal_b64url_decode(cookie + SESS_ID_LEN + 1, SESS_SECRET_LEN,
	    secret, SESS_SECRET_BYTES) == SESS_SECRET_BYTES ? 0 : -1;
}

static void free_urls(struct sess *s)
{
	free(s->api_url);
	free(s->download_url);
	free(s->upload_url);
	free(s->event_url);
	s->api_url = s->download_url = s->upload_url = s->event_url = NULL;
}

/* Fills s from the row; checks the verifier. 0, 1 (no match) or -1. */
static int load_row(const struct store_sess_row *r, struct sess *s,
    const unsigned char *secret, unsigned char *verifier)
{
	seal_sha256(secret, SESS_SECRET_BYTES, verifier);
	if (!r->verifier || r->verifier_len != SEAL_HASH_LEN ||
	    !seal_equal(r->verifier, verifier, SEAL_HASH_LEN))
		return 1;
	if (!r->salt || r->salt_len != SALT_LEN)
		return 1;
	snprintf(s->account, sizeof(s->account), "%s", r->account);
	s->remember = r->remember;
	s->created = r->created;
	s->seen = r->seen;
	s->expires = r->expires;
	free_urls(s);  /* a row kept in memory may be followed by the row */
	s->api_url = strdup(r->api_url);
	s->download_url = strdup(r->download_url);
	s->upload_url = strdup(r->upload_url);
	s->event_url = strdup(r->event_url);
	s->verified = r->verified;
	if (!s->api_url || !s->download_url || !s->upload_url || !s->event_url)
		return -1;
	return 0;
}

/* Points user and pass into the opened "user\0pass". */
static int split_creds(struct sess *s)
{
	size_t ulen = strlen(s->creds.data);

	if (ulen == s->creds.len)
		return -1;
	s->user = s->creds.data;
	s->pass = s->creds.data + ulen + 1;
	return 0;
}

static int open_creds(struct sess *s, const void *sealed, size_t n)
{
	char aad[SESS_ID_LEN + 8];

	snprintf(aad, sizeof(aad), "%s/creds", s->id);
	if (seal_decrypt(s->key, aad, strlen(aad), sealed, n, &s->creds) == -1)
		return -1;
	return split_creds(s);
}

static void slot_clear(struct sess_slot *sl)
{
	seal_wipe(sl->key, sizeof(sl->key));
	buf_wipe_free(&sl->creds);
	free(sl->sealed);
	memset(sl, 0, sizeof(*sl));
}

static struct sess_slot *slot_of(struct app *a, const char *id)
{
	unsigned int h = 2166136261u;

	if (a->sess_cache == NULL) {
		if ((a->sess_cache = calloc(1, sizeof(*a->sess_cache))) == NULL)
			return NULL;
		app_on_close(a, sess_cache_free);
	}
	for (; *id; id++)
		h = (h ^ (unsigned char)*id) * 16777619u;
	return &a->sess_cache->slot[h % SESS_CACHE_SLOTS];
}

/* Opens the credentials from the cache when the row is the one the slot
 * was filled from: 0, or -1 (not cached). The verifier matched the
 * cookie's secret already, so an equal one means the same secret, and
 * with the same salt the same key. */
static int open_cached(struct app *a, struct sess *s,
    const unsigned char *verifier, const unsigned char *salt,
    const void *sealed, size_t n)
{
	struct sess_slot *sl = slot_of(a, s->id);

	if (sl == NULL || strcmp(sl->id, s->id) || sl->sealed_len != n ||
	    !seal_equal(sl->verifier, verifier, SEAL_HASH_LEN) ||
	    memcmp(sl->salt, salt, SALT_LEN) || memcmp(sl->sealed, sealed, n) ||
	    buf_append(&s->creds, sl->creds.data, sl->creds.len) == -1)
		return -1;
	memcpy(s->key, sl->key, SEAL_KEY_LEN);
	return split_creds(s);
}

/* Keeps what was just opened for the session's next requests. */
static void cache_opened(struct app *a, const struct sess *s,
    const unsigned char *verifier, const unsigned char *salt,
    const void *sealed, size_t n)
{
	struct sess_slot *sl = slot_of(a, s->id);

	if (sl == NULL)
		return;
	slot_clear(sl);
	buf_init(&sl->creds, s->creds.max);
	if ((sl->sealed = malloc(n ? n : 1)) == NULL ||
	    buf_append(&sl->creds, s->creds.data, s->creds.len) == -1) {
		slot_clear(sl);
		return;
	}
	memcpy(sl->sealed, sealed, n);
	sl->sealed_len = n;
	memcpy(sl->verifier, verifier, SEAL_HASH_LEN);
	memcpy(sl->salt, salt, SALT_LEN);
	memcpy(sl->key, s->key, SEAL_KEY_LEN);
	memcpy(sl->id, s->id, sizeof(sl->id));
}

static void creds_reset(struct sess *s)
{
	buf_wipe_free(&s->creds);
	buf_init(&s->creds, 1 << 20);
}

/* Derives the key and opens the credentials, from the cache when it can. */
static int open_session(struct app *a, struct sess *s,
    const unsigned char *secret, const unsigned char *verifier,
    const unsigned char *salt, const void *sealed, size_t n)
{
	if (sealed == NULL)
		return -1;
	creds_reset(s);   /* a kept row may have been opened before (twice) */
	if (open_cached(a, s, verifier, salt, sealed, n) == 0)
		return 0;
	creds_reset(s);
	if (derive_key(a, s->id, secret, salt, s->key) == -1 ||
	    open_creds(s, sealed, n) == -1)
		return -1;
	cache_opened(a, s, verifier, salt, sealed, n);
	return 0;
}

void sess_cache_free(struct app *a)
{
	size_t i;

	if (a->sess_cache == NULL)
		return;
	for (i = 0; i < SESS_CACHE_SLOTS; i++)
		slot_clear(&a->sess_cache->slot[i]);
	free(a->sess_cache);
	a->sess_cache = NULL;
}

/* Forgets a session this process may keep open. */
static void cache_forget(struct app *a, const char *id)
{
	struct sess_slot *sl;

	if (a->sess_cache && (sl = slot_of(a, id)) && !strcmp(sl->id, id))
		slot_clear(sl);
}

time_t sess_ends(const struct app *a, time_t seen, time_t expires,
    int remember)
{
	time_t idle = seen + (remember ? a->cfg.session_remember_idle :
	    a->cfg.session_idle);

	return idle < expires ? idle : expires;
}

static int expired(const struct app *a, const struct sess *s, time_t now)
{
	return now >= sess_ends(a, s->seen, s->expires, s->remember);
}

void sess_touch(struct app *a, struct sess *s, time_t now)
{
	if (s == NULL || s->ended || now - s->seen < 60)
		return;
	if (store_sess_seen(a->store, s->id, (long long)now, s->accepted) == 0) {
		s->seen = now;
		if (s->accepted > s->verified)
			s->verified = s->accepted;
	}
}

void sess_accepted(struct sess *s, time_t now)
{
	s->accepted = now;
}

int sess_confirmed(struct app *a, const char *id, time_t now)
{
	return store_sess_confirmed(a->store, id, (long long)now);
}

void sess_refused(struct app *a, const char *id)
{
	log_info("the mail server refused a session's credentials; ending it");
	sess_destroy(a, id);
}

int sess_fresh(const struct app *a, long long verified, time_t now)
{
	return (long long)now - verified < a->cfg.session_recheck;
}

int sess_row_alive(const struct app *a, const struct store_sess_row *r,
    time_t now)
{
	return now < sess_ends(a, (time_t)r->seen, (time_t)r->expires,
	    r->remember);
}

int sess_state(struct app *a, const char *id, time_t now, long long *verified)
{
	struct store_sess_row r;
	int rc = store_sess_times(a->store, id, &r);

	if (rc != 1)
		return rc;
	*verified = r.verified;
	return sess_row_alive(a, &r, now);
}

/* What lookup_row's walk over the row needs. */
struct lookup {
	struct app *a;
	struct sess *s;
	const unsigned char *secret;
	time_t now;
};

/* The row of the session looked up: checked and its credentials opened.
 * 0, 1 (no match), 2 (expired) or -1. It may run twice, a kept row's
 * result other than 0 followed by the row itself (store_sess_keep). */
static int lookup_open(void *ctx, const struct store_sess_row *r)
{
	struct lookup *l = ctx;
	unsigned char verifier[SEAL_HASH_LEN];
	int rc = load_row(r, l->s, l->secret, verifier);

	if (rc != 0)
		return rc;
	if (expired(l->a, l->s, l->now))
		return 2;
	return open_session(l->a, l->s, l->secret, verifier, r->salt,
	    r->sealed, r->sealed_len) == -1 ? 1 : 0;
}

/* Reads the row, checks it, and opens the credentials. */
static int lookup_row(struct app *a, struct sess *s, const unsigned char *secret,
    time_t now)
{
	struct lookup l = { a, s, secret, now };

	return store_sess_get(a->store, s->id, lookup_open, &l);
}

int sess_lookup(struct app *a, const char *cookie, time_t now, struct sess **out)
{
	unsigned char secret[SESS_SECRET_BYTES];
	struct sess *s;
	int rc;

	*out = NULL;
	if ((s = calloc(1, sizeof(*s))) == NULL)
		return -1;
	buf_init(&s->creds, 1 << 20);
	if (parse_cookie(cookie, s->id, secret) == -1) {
		sess_free(s);
		return 1;
	}
	rc = lookup_row(a, s, secret, now);
	seal_wipe(secret, sizeof(secret));
	if (rc == 2) {
		sess_destroy(a, s->id);
		rc = 1;
	}
	if (rc != 0) {
		sess_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

/* The sealed document of the session opened into out. */
struct doc_open {
	const struct sess *s;
	struct buf *out;
};

static int doc_open(void *ctx, const struct store_sess_row *r)
{
	struct doc_open *d = ctx;
	char aad[SESS_ID_LEN + 8];

	snprintf(aad, sizeof(aad), "%s/doc", d->s->id);
	return seal_decrypt(d->s->key, aad, strlen(aad), r->doc, r->doc_len,
	    d->out);
}

int sess_doc(struct app *a, const struct sess *s, struct buf *out)
{
	struct doc_open d = { s, out };

	return store_sess_doc(a->store, s->id, doc_open, &d) == 0 ? 0 : -1;
}

int sess_destroy(struct app *a, const char *id)
{
	cache_forget(a, id);
	return store_sess_delete(a->store, id) == -1 ? -1 : 0;
}

/* The device list's walk: one entry per session of the account. */
struct list_walk {
	const struct sess *s;
	json_object *arr;
};

static int list_entry(void *ctx, const struct store_sess_row *r)
{
	struct list_walk *w = ctx;
	json_object *o = json_object_new_object();

	/* Only a prefix of the id: enough to tell devices apart, useless as a
	 * credential (the cookie's secret half is never stored anyway). */
	json_object_object_add(o, "id", json_object_new_string_len(r->id, 8));
	json_object_object_add(o, "current",
	    json_object_new_boolean(!strcmp(r->id, w->s->id)));
	json_object_object_add(o, "created", json_object_new_int64(r->created));
	json_object_object_add(o, "lastSeen", json_object_new_int64(r->seen));
	json_object_object_add(o, "userAgent", json_object_new_string(r->agent));
	json_object_object_add(o, "ip", json_object_new_string(r->ip));
	json_object_object_add(o, "remember",
	    json_object_new_boolean(r->remember));
	json_object_array_add(w->arr, o);
	return 0;
}

json_object *sess_list(struct app *a, const struct sess *s)
{
	struct list_walk w = { s, json_object_new_array() };

	if (store_sess_list(a->store, s->account, list_entry, &w) != 0) {
		json_object_put(w.arr);
		return NULL;
	}
	return w.arr;
}

int sess_revoke_others(struct app *a, const struct sess *s)
{
	int n = store_sess_delete_others(a->store, s->account, s->id);

	if (n >= 0)
		sess_cache_free(a);  /* keep nothing open of the ended ones */
	return n;
}

int sess_prune(struct app *a, time_t now)
{
	return store_sess_prune(a->store, (long long)now);
}

void sess_free(struct sess *s)
{
	if (s == NULL)
		return;
	buf_wipe_free(&s->creds);
	seal_wipe(s->key, sizeof(s->key));
	free_urls(s);
	free(s);
}
