/* sess: signed-in sessions in the shared database. The cookie holds
 * "<id>.<secret>"; the database holds SHA-256 of the secret, and the
 * credentials and session document sealed (AES-256-GCM) under a key derived
 * from the cookie's secret, the server secret and a per-session salt. The
 * database alone or the cookie alone reveals nothing. */
#ifndef POSTERN_SESS_H
#define POSTERN_SESS_H

#include <time.h>

#include <json-c/json.h>

#include "app.h"
#include "buf.h"
#include "seal.h"

#define SESS_COOKIE "postern_session"
#define SESS_ID_BYTES 16
#define SESS_SECRET_BYTES 32
#define SESS_ID_LEN 22       /* base64url of 16 bytes */
#define SESS_SECRET_LEN 43   /* base64url of 32 bytes */
#define SESS_COOKIE_LEN (SESS_ID_LEN + 1 + SESS_SECRET_LEN)

struct sess {
	char id[SESS_ID_LEN + 1];
	char account[APP_KEY_HEX + 1];
	unsigned char key[SEAL_KEY_LEN];
	struct buf creds;        /* "user\0pass", wiped when freed */
	const char *user, *pass; /* into creds */
	char *api_url, *download_url, *upload_url, *event_url;
	int remember;
	long long created, seen, expires;
	/* When the mail server last accepted the credentials, as the row
	 * says; and when it did during this request (0: it was not asked, or
	 * refused), written with the next touch. */
	long long verified, accepted;
	int ended;               /* destroyed during this request */
};

/* What a new session stores beside the credentials. */
struct sess_new {
	const char *user, *pass;
	int remember;
	const char *doc;         /* the rewritten session document (JSON) */
	const char *api_url, *download_url, *upload_url, *event_url;
	const char *agent, *ip;
};

/* Creates a session; writes the cookie value (SESS_COOKIE_LEN + 1 bytes)
 * into cookie. 0 or -1. */
int sess_create(struct app *a, const struct sess_new *n, time_t now,
    char *cookie);
/* Finds the session of a cookie value and opens its credentials. Returns
 * 0 with *out set (caller frees with sess_free), 1 when there is none (bad,
 * unknown, altered or expired: an expired one is deleted), -1 on a database
 * error. Writes nothing: sess_touch marks it seen after the request. */
int sess_lookup(struct app *a, const char *cookie, time_t now, struct sess **out);
/* After a request of s: marks it seen, and records the mail server's
 * acceptance of it during the request (sess_accepted), in one write at
 * most once a minute, so that the data path costs no write per request. A
 * session that ended during the request is left alone. */
void sess_touch(struct app *a, struct sess *s, time_t now);
/* The mail server answered a call made with s's credentials just now
 * (a 2xx): recorded by the next sess_touch. No write. */
void sess_accepted(struct sess *s, time_t now);
/* The mail server accepted the credentials of session id when asked for
 * that purpose: recorded at once (verified and seen), so that no other
 * process asks again within session_recheck. 0 or -1. */
int sess_confirmed(struct app *a, const char *id, time_t now);
/* The mail server refused the credentials of session id (a password
 * changed): the session ends, everywhere, at once. The one place that
 * does this for the relay, blobs, the session checks and pushd. */
void sess_refused(struct app *a, const char *id);
/* Whether an acceptance at verified still stands at now (within
 * session_recheck): 1 or 0. */
int sess_fresh(const struct app *a, long long verified, time_t now);
/* The state of session id without its cookie (pushd's tabs): 1 when it
 * exists and has not expired, with *verified set; 0 when it is gone or
 * expired; -1 when the database failed. */
int sess_state(struct app *a, const char *id, time_t now, long long *verified);
/* The same for a row already read (store_sess_times): 1 or 0. */
struct store_sess_row;
int sess_row_alive(const struct app *a, const struct store_sess_row *r,
    time_t now);
/* The session document, opened into out. 0 or -1. */
int sess_doc(struct app *a, const struct sess *s, struct buf *out);
int sess_destroy(struct app *a, const char *id);
/* The account's sessions as a JSON array (current one marked). */
json_object *sess_list(struct app *a, const struct sess *s);
/* Ends every session of the account but s: the count, or -1. */
int sess_revoke_others(struct app *a, const struct sess *s);
/* Deletes expired sessions: the count, or -1. */
int sess_prune(struct app *a, time_t now);
/* Wipes and frees the keys and credentials this process keeps open for
 * the sessions it served last (app_close calls it). A session is served
 * from there only while its row still holds what it was opened from. */
void sess_cache_free(struct app *a);
void sess_free(struct sess *s);
/* The account key of a login (what groups one person's sessions). */
void sess_account(const struct app *a, const char *user, char out[APP_KEY_HEX + 1]);
/* When a session ends unless used again: its idle expiry from the last
 * use, capped by its absolute end. */
time_t sess_ends(const struct app *a, time_t seen, time_t expires,
    int remember);

#endif
