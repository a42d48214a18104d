#include "sess.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

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

static const char sql_insert[] =
    "INSERT INTO sessions(id, verifier, salt, sealed, doc, account, remember,"
    " created, seen, expires, api_url, download_url, upload_url, event_url,"
    " agent, ip, verified)"
    " VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?8,?9,?10,?11,?12,?13,?14,?15,?8)";
static const char sql_get[] =
    "SELECT verifier, salt, sealed, account, remember, created, seen, expires,"
    " api_url, download_url, upload_url, event_url, verified"
    " FROM sessions WHERE id = ?1";
static const char sql_get_doc[] = "SELECT doc FROM sessions WHERE id = ?1";
/* seen and verified together: the relay's acceptances ride on the write
 * that marks the session seen, once a minute. */
static const char sql_seen[] =
    "UPDATE sessions SET seen = ?2, verified = max(verified, ?3) WHERE id = ?1";
static const char sql_confirmed[] =
    "UPDATE sessions SET verified = max(verified, ?2), seen = max(seen, ?2)"
    " WHERE id = ?1";
static const char sql_state[] =
    "SELECT remember, seen, expires, verified FROM sessions WHERE id = ?1";
static const char sql_delete[] = "DELETE FROM sessions WHERE id = ?1";
static const char sql_list[] =
    "SELECT id, created, seen, agent, ip, remember FROM sessions"
    " WHERE account = ?1 ORDER BY seen DESC";
static const char sql_revoke[] =
    "DELETE FROM sessions WHERE account = ?1 AND id <> ?2";
static const char sql_prune[] = "DELETE FROM sessions WHERE expires <= ?1";

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
	sqlite3_stmt *st;

	if ((st = db_stmt(&a->db, sql_insert)) == NULL)
		return -1;
	sess_account(a, n->user, account);
	db_bind_text(st, 1, id);
	db_bind_blob(st, 2, verifier, SEAL_HASH_LEN);
	db_bind_blob(st, 3, salt, SALT_LEN);
	db_bind_blob(st, 4, creds->data, creds->len);
	db_bind_blob(st, 5, doc->data, doc->len);
	db_bind_text(st, 6, account);
	sqlite3_bind_int(st, 7, n->remember);
	sqlite3_bind_int64(st, 8, (long long)now);
	/* expires is the absolute end; idle expiry is checked from seen. */
	sqlite3_bind_int64(st, 9, (long long)now + a->cfg.session_lifetime);
	db_bind_text(st, 10, n->api_url);
	db_bind_text(st, 11, n->download_url);
	db_bind_text(st, 12, n->upload_url);
	db_bind_text(st, 13, n->event_url);
	db_bind_text(st, 14, n->agent ? n->agent : "");
	db_bind_text(st, 15, n->ip ? n->ip : "");
	return db_exec_stmt(&a->db, st);
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

static char *col_dup(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return strdup(t ? (const char *)t : "");
}

/* Fills s from the row; checks the verifier. 0, 1 (no match) or -1. */
static int load_row(sqlite3_stmt *st, struct sess *s,
    const unsigned char *secret, unsigned char *verifier, unsigned char *salt)
{
	const void *p;

	seal_sha256(secret, SESS_SECRET_BYTES, verifier);
	p = sqlite3_column_blob(st, 0);
	if (!p || sqlite3_column_bytes(st, 0) != SEAL_HASH_LEN ||
	    !seal_equal(p, verifier, SEAL_HASH_LEN))
		return 1;
	p = sqlite3_column_blob(st, 1);
	if (!p || sqlite3_column_bytes(st, 1) != SALT_LEN)
		return 1;
	memcpy(salt, p, SALT_LEN);
	snprintf(s->account, sizeof(s->account), "%s",
	    (const char *)sqlite3_column_text(st, 3));
	s->remember = sqlite3_column_int(st, 4);
	s->created = sqlite3_column_int64(st, 5);
	s->seen = sqlite3_column_int64(st, 6);
	s->expires = sqlite3_column_int64(st, 7);
	s->api_url = col_dup(st, 8);
	s->download_url = col_dup(st, 9);
	s->upload_url = col_dup(st, 10);
	s->event_url = col_dup(st, 11);
	s->verified = sqlite3_column_int64(st, 12);
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

	if (a->sess_cache == NULL &&
	    (a->sess_cache = calloc(1, sizeof(*a->sess_cache))) == NULL)
		return NULL;
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

/* Derives the key and opens the credentials, from the cache when it can. */
static int open_session(struct app *a, struct sess *s,
    const unsigned char *secret, const unsigned char *verifier,
    const unsigned char *salt, const void *sealed, size_t n)
{
	if (sealed == NULL)
		return -1;
	if (open_cached(a, s, verifier, salt, sealed, n) == 0)
		return 0;
	buf_wipe_free(&s->creds);
	buf_init(&s->creds, 1 << 20);
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
	sqlite3_stmt *st;

	if (s == NULL || s->ended || now - s->seen < 60 ||
	    (st = db_stmt(&a->db, sql_seen)) == NULL)
		return;
	db_bind_text(st, 1, s->id);
	sqlite3_bind_int64(st, 2, (long long)now);
	sqlite3_bind_int64(st, 3, s->accepted);
	if (db_exec_stmt(&a->db, st) == 0) {
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
	sqlite3_stmt *st = db_stmt(&a->db, sql_confirmed);

	if (st == NULL)
		return -1;
	db_bind_text(st, 1, id);
	sqlite3_bind_int64(st, 2, (long long)now);
	return db_exec_stmt(&a->db, st);
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

int sess_state(struct app *a, const char *id, time_t now, long long *verified)
{
	sqlite3_stmt *st = db_stmt(&a->db, sql_state);
	int rc;

	if (st == NULL)
		return -1;
	db_bind_text(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*verified = sqlite3_column_int64(st, 3);
		rc = now < sess_ends(a, (time_t)sqlite3_column_int64(st, 1),
		    (time_t)sqlite3_column_int64(st, 2), sqlite3_column_int(st, 0));
	} else
		rc = rc == SQLITE_DONE ? 0 : -1;
	sqlite3_reset(st);
	return rc;
}

/* Reads the row, checks it, and opens the credentials. */
static int lookup_row(struct app *a, struct sess *s, const unsigned char *secret,
    time_t now)
{
	unsigned char salt[SALT_LEN], verifier[SEAL_HASH_LEN];
	sqlite3_stmt *st;
	int rc;

	if ((st = db_stmt(&a->db, sql_get)) == NULL)
		return -1;
	db_bind_text(st, 1, s->id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE)
		rc = 1;
	else if (rc != SQLITE_ROW)
		rc = -1;
	else if ((rc = load_row(st, s, secret, verifier, salt)) == 0) {
		if (expired(a, s, now))
			rc = 2;
		else if (open_session(a, s, secret, verifier, salt,
		    sqlite3_column_blob(st, 2),
		    (size_t)sqlite3_column_bytes(st, 2)) == -1)
			rc = 1;
	}
	sqlite3_reset(st);
	return rc;
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

int sess_doc(struct app *a, const struct sess *s, struct buf *out)
{
	char aad[SESS_ID_LEN + 8];
	sqlite3_stmt *st;
	int rc = -1;

	if ((st = db_stmt(&a->db, sql_get_doc)) == NULL)
		return -1;
	db_bind_text(st, 1, s->id);
	snprintf(aad, sizeof(aad), "%s/doc", s->id);
	if (sqlite3_step(st) == SQLITE_ROW)
		rc = seal_decrypt(s->key, aad, strlen(aad),
		    sqlite3_column_blob(st, 0),
		    (size_t)sqlite3_column_bytes(st, 0), out);
	sqlite3_reset(st);
	return rc;
}

int sess_destroy(struct app *a, const char *id)
{
	sqlite3_stmt *st = db_stmt(&a->db, sql_delete);

	cache_forget(a, id);
	if (st == NULL)
		return -1;
	db_bind_text(st, 1, id);
	return db_exec_stmt(&a->db, st);
}

static json_object *list_entry(sqlite3_stmt *st, const struct sess *s)
{
	json_object *o = json_object_new_object();
	const char *id = (const char *)sqlite3_column_text(st, 0);

	/* Only a prefix of the id: enough to tell devices apart, useless as a
	 * credential (the cookie's secret half is never stored anyway). */
	json_object_object_add(o, "id", json_object_new_string_len(id, 8));
	json_object_object_add(o, "current",
	    json_object_new_boolean(!strcmp(id, s->id)));
	json_object_object_add(o, "created",
	    json_object_new_int64(sqlite3_column_int64(st, 1)));
	json_object_object_add(o, "lastSeen",
	    json_object_new_int64(sqlite3_column_int64(st, 2)));
	json_object_object_add(o, "userAgent",
	    json_object_new_string((const char *)sqlite3_column_text(st, 3)));
	json_object_object_add(o, "ip",
	    json_object_new_string((const char *)sqlite3_column_text(st, 4)));
	json_object_object_add(o, "remember",
	    json_object_new_boolean(sqlite3_column_int(st, 5)));
	return o;
}

json_object *sess_list(struct app *a, const struct sess *s)
{
	json_object *arr;
	sqlite3_stmt *st;
	int rc;

	if ((st = db_stmt(&a->db, sql_list)) == NULL)
		return NULL;
	arr = json_object_new_array();
	db_bind_text(st, 1, s->account);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		json_object_array_add(arr, list_entry(st, s));
	sqlite3_reset(st);
	if (rc != SQLITE_DONE) {
		log_err("sess: list: %s", sqlite3_errmsg(a->db.h));
		json_object_put(arr);
		return NULL;
	}
	return arr;
}

int sess_revoke_others(struct app *a, const struct sess *s)
{
	sqlite3_stmt *st = db_stmt(&a->db, sql_revoke);

	if (st == NULL)
		return -1;
	db_bind_text(st, 1, s->account);
	db_bind_text(st, 2, s->id);
	if (db_exec_stmt(&a->db, st) == -1)
		return -1;
	sess_cache_free(a);  /* keep nothing open of the ended ones */
	return sqlite3_changes(a->db.h);
}

int sess_prune(struct app *a, time_t now)
{
	sqlite3_stmt *st = db_stmt(&a->db, sql_prune);

	if (st == NULL)
		return -1;
	sqlite3_bind_int64(st, 1, (long long)now);
	if (db_exec_stmt(&a->db, st) == -1)
		return -1;
	return sqlite3_changes(a->db.h);
}

void sess_free(struct sess *s)
{
	if (s == NULL)
		return;
	buf_wipe_free(&s->creds);
	seal_wipe(s->key, sizeof(s->key));
	free(s->api_url);
	free(s->download_url);
	free(s->upload_url);
	free(s->event_url);
	free(s);
}
