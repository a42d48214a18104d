/* store: postern's shared state behind one interface. Everything a
 * process keeps beyond one request (sessions, rate windows, pushd's
 * accounts, devices' Web Push subscriptions, settings) is read and
 * written here and nowhere else: no SQL
 * text and no engine call outside state/. Two engines behind it: SQLite
 * (db_sqlite.c, the default) and PostgreSQL (db_pg.c), under one
 * statement layer (db.h) so that each statement is written once; one file
 * per thing kept. A caller holds an opaque struct store; rows come back through
 * callbacks whose arguments are valid only during the call, so that the
 * engine's own memory is never copied on the data path. */
#ifndef POSTERN_STORE_H
#define POSTERN_STORE_H

#include <stddef.h>

#define STORE_SCHEMA_VERSION 6
#define STORE_RATE_KEYS_MAX 4

struct store;

/* -- the store itself (store.c) ------------------------------------------ */

/* Whether state_db is a libpq connection URI (postgresql:// or
 * postgres://) rather than the path of a SQLite file: 1 or 0. */
int store_is_url(const char *state_db);
/* state_db as it may be shown (postern-admin's output): a path as it is,
 * a URI without its user information and any password parameter, into
 * out (size n). */
void store_shown(const char *state_db, char *out, size_t n);
/* Opens (a SQLite file is created with mode 0600 when missing) and
 * brings the schema to STORE_SCHEMA_VERSION. 0 with *out set, or -1
 * with a message in err. */
int store_open(struct store **out, const char *path, char *err, size_t errlen);
void store_close(struct store *st);
/* A plain check that the store answers: 0 or -1. */
int store_ping(struct store *st);
/* Several writes as one (pushd's flush): 0 or -1. */
int store_begin(struct store *st);
int store_commit(struct store *st);
/* What postern-admin check reports of a store it must not change: opened
 * read-only, never created or migrated. *version is 0 for an empty file
 * or database;
 * *objects counts its tables and indexes. 0, or -1 with a message. */
int store_inspect(const char *path, long long *version, long long *objects,
    char *err, size_t errlen);

/* -- the nodes sharing the state (store_node.c) ---------------------------- */

/* A node_name's length at most. */
#define STORE_NODE_MAX 63
/* Seconds between a pushd's heartbeats, and without one before its node
 * counts as gone (six missed: a node that is only slow is never gone). */
#define STORE_NODE_BEAT 10
#define STORE_NODE_GONE 60

/* Names the node this process runs on (node_name, cut at STORE_NODE_MAX):
 * the push rows it writes are its own. Until then "". */
void store_set_node(struct store *st, const char *name);
const char *store_node(struct store *st);
/* The node's pushd is alive at now; starting: it starts at now. 0 or -1. */
int store_node_beat(struct store *st, long long now, int starting);
/* When the node's pushd last said it is alive, into *seen: 1, 0 when it
 * never did (or stopped), -1 on error. */
int store_node_seen(struct store *st, long long *seen);
/* The node's pushd stops: its row goes, its push rows keep no tabs. 0 or -1. */
int store_node_leave(struct store *st);
/* The nodes, fn(ctx, name, started, seen) for each, by name. 0 or -1. */
typedef void store_node_fn(void *ctx, const char *name, long long started,
    long long seen);
int store_node_list(struct store *st, store_node_fn *fn, void *ctx);

/* -- leases: which node holds an account's channel (store_lease.c) ------- */

/* Whether other nodes may share this state (PostgreSQL): then an account's
 * upstream channel runs on the node holding its lease, and what it brings
 * is told to the others (STORE_CHAN_CHANGES). */
int store_shared(struct store *st);
/* A lease lasts 10 s of the database's clock; its holder renews it every
 * 3 s and stops its channels by itself 6 s after its last renewal went
 * through (pushd's node.c), well before another node may take it. */
#define STORE_LEASE_TTL_MS 10000
/* Takes account's lease for this node, or renews it (mode: the row's
 * mode while it has none): 1 held, with *states the row's last states
 * (JSON, malloc'd) or NULL; 0 another node holds it; -1 on error. 1 at
 * once on SQLite. now: the row's updated. */
int store_lease_take(struct store *st, const char *account, const char *mode,
    long long now, char **states);
/* Renews every lease this node holds, fn(ctx, account) for each: 0, or -1
 * (none renewed, as far as the caller may know). 0 at once on SQLite. */
typedef void store_lease_fn(void *ctx, const char *account);
int store_lease_renew(struct store *st, store_lease_fn *fn, void *ctx);
/* Gives account's lease up (its row stays, any node may take it, and it
 * is not renewed): 0 or -1. 0 at once on SQLite. */
int store_lease_release(struct store *st, const char *account);
/* Of the n accounts, those whose lease this node could take now (no row,
 * its own, or lapsed): fn(ctx, account) for each; 0 or -1. One statement
 * for STORE_LEASE_BATCH accounts, so that a node following thousands
 * asks once, not once each. Every one, at once, on SQLite. */
#define STORE_LEASE_BATCH 1000
int store_lease_free(struct store *st, const char *const *accounts, size_t n,
    store_lease_fn *fn, void *ctx);

/* -- what one node tells the others (store_listen.c) ---------------------- */

/* Through the database, on PostgreSQL (NOTIFY/LISTEN); SQLite is one node
 * and tells nobody. Payloads never hold a secret. Channel "postern_sessions":
 * sessions ended by a sign-out or a revoke, "s <session id>", "a <account
 * key>" (all of the account's, or all but one) or "*" (any). */
#define STORE_CHAN_SESSIONS "postern_sessions"
/* Channel "postern_changes": an account's new states, from the node that
 * holds its lease, {"a": account key, "s": {type: state}} (JSON); or a
 * push callback that reached a node without the lease, for the holder:
 * {"a": account key, "h": token hash, "b": the push object as it
 * came}. */
#define STORE_CHAN_CHANGES "postern_changes"
/* Tells channel's listeners payload (at commit, inside a transaction):
 * 0, or -1 (the statement layer logs why). 0 at once on SQLite. */
int store_notify(struct store *st, const char *channel, const char *payload);

/* A connection that listens, driven by the caller's event loop: it never
 * waits. Made for a PostgreSQL state_db only (NULL for a SQLite path or
 * out of memory). channels: NULL-terminated, plain identifiers. */
struct store_listen;
struct store_listen *store_listen_new(const char *state_db,
    const char *const *channels);
void store_listen_free(struct store_listen *l);
/* Its socket (-1 while it has none) and what to wait for on it: POLLIN,
 * POLLOUT or both. Both change as the connection is made again. */
int store_listen_fd(const struct store_listen *l);
short store_listen_events(const struct store_listen *l);
/* Called when the socket is ready: goes on connecting, then listening,
 * then hands each notification to fn. 1 when it has just begun to listen
 * (what was told before is lost: the caller looks again at what it
 * holds), 0, or -1 when the connection broke (store_listen_restart
 * later). */
typedef void store_listen_fn(void *ctx, const char *channel,
    const char *payload);
int store_listen_step(struct store_listen *l, store_listen_fn *fn, void *ctx);
/* Starts connecting again (after -1, or a connection too slow to come):
 * 0, or -1 when it cannot even start (try again later). */
int store_listen_restart(struct store_listen *l);
/* Whether it listens now. */
int store_listen_ready(const struct store_listen *l);

/* -- sessions (store_sessions.c) ------------------------------------------ */

/* A session's row. Which members are filled depends on the call. */
struct store_sess_row {
	const char *id, *account;
	const unsigned char *verifier, *salt, *sealed, *doc;
	size_t verifier_len, salt_len, sealed_len, doc_len;
	int remember;
	long long created, seen, expires, verified;
	const char *api_url, *download_url, *upload_url, *event_url;
	const char *agent, *ip;
};
/* Called with one row; its pointers are valid only during the call. The
 * walk stops at a result other than 0, which the walk returns. */
typedef int store_sess_fn(void *ctx, const struct store_sess_row *row);

/* A new session: every member but verified (created) and seen (created).
 * 0 or -1. */
int store_sess_insert(struct store *st, const struct store_sess_row *row);
/* Session id's row for opening it (all but doc, agent and ip) to fn: fn's
 * result, 1 when there is no such row, -1 on error. */
int store_sess_get(struct store *st, const char *id, store_sess_fn *fn,
    void *ctx);
/* From now on store_sess_get answers from rows this process read before,
 * without a round trip, on a database that other nodes share and tell of
 * the sessions they end (PostgreSQL): a kept row is used while the
 * connection listens, has nothing unread, and answered a statement within
 * STORE_SESS_KEPT_MS; a row another node ended is then forgotten as soon
 * as its NOTIFY arrives (about 0.1 ms after the commit), and one this
 * process changes at once. Where fn returns other than 0 for a kept row
 * (expired by its kept seen, say), fn is called again with the row read
 * anew: so fn must be one that can run twice, and must not call the store
 * (a kept row is freed by what the store does). For long-lived processes
 * only (FastCGI responders): 0, or -1 where it is not done (SQLite, whose
 * own read costs 4 µs and whose processes tell nothing; out of memory).
 * 250 ms bounds how long a process cut off from the database (a
 * partition, a frozen server) answers from rows another node may have
 * ended; a busy process runs a statement every few ms anyway (its rate
 * writes), and an idle one's read costs nobody. A process reads what it
 * is told only at its lookups: while it waits for requests, that waits in
 * its socket and then in PostgreSQL's notification queue (sign-outs of a
 * few dozen bytes each, against the queue's 8 GB). */
#define STORE_SESS_KEPT_MS 250
int store_sess_keep(struct store *st);
/* Session id's sealed session document (doc only) to fn: as above. */
int store_sess_doc(struct store *st, const char *id, store_sess_fn *fn,
    void *ctx);
/* remember, seen, expires and verified of session id into *row (no
 * pointers): 1 when found, 0 when not, -1 on error. */
int store_sess_times(struct store *st, const char *id,
    struct store_sess_row *row);
/* Marks session id seen at seen, and accepted by the mail server at
 * verified unless it was later. 0 or -1. */
int store_sess_seen(struct store *st, const char *id, long long seen,
    long long verified);
/* The mail server accepted session id's credentials at now: verified and
 * seen. 0 or -1. */
int store_sess_confirmed(struct store *st, const char *id, long long now);
/* The sessions of account (every account when NULL), last seen first, to
 * fn (id, account, remember, created, seen, expires, agent, ip): 0, fn's
 * result, or -1. */
int store_sess_list(struct store *st, const char *account, store_sess_fn *fn,
    void *ctx);
/* Deletions; each returns the rows deleted, or -1. Each one that deleted
 * a row tells the other nodes (STORE_CHAN_SESSIONS), so that their event
 * streams of those sessions end at once. */
int store_sess_delete(struct store *st, const char *id);
int store_sess_delete_others(struct store *st, const char *account,
    const char *keep_id);
int store_sess_delete_account(struct store *st, const char *account);
int store_sess_delete_all(struct store *st);
int store_sess_delete_prefix(struct store *st, const char *prefix);
/* Sessions that ended for good (expires <= now). */
int store_sess_prune(struct store *st, long long now);
/* How many session ids begin with prefix, or -1. */
long long store_sess_count_prefix(struct store *st, const char *prefix);

/* -- rate windows (store_rate.c) ----------------------------------------- */

/* A key's count in the window that begins at win and ends at until. */

/* Adds k hits to key: the new count, or -1. */
long long store_rate_add(struct store *st, const char *key, long long win,
    long long until, long k);
/* Takes one hit back (never below 0): 0 or -1. */
int store_rate_refund(struct store *st, const char *key, long long win);
/* Over 1 to STORE_RATE_KEYS_MAX keys at once, one statement each: their
 * counts into n[] (0 for a key without a row); one hit added to each; one
 * taken back from each. 0 or -1. */
int store_rate_counts(struct store *st, const char *const keys[], int k,
    long long win, long long n[]);
int store_rate_add_each(struct store *st, const char *const keys[], int k,
    long long win, long long until);
int store_rate_refund_each(struct store *st, const char *const keys[], int k,
    long long win);
/* Deletes the windows ended by now: 0 or -1. */
int store_rate_prune(struct store *st, long long now);

/* -- settings (store_settings.c) ----------------------------------------- */

/* The account's settings as JSON text into *json (malloc'd; NULL when it
 * has none): 0 or -1. */
int store_settings_get(struct store *st, const char *account, char **json);
int store_settings_put(struct store *st, const char *account,
    const char *json, long long now);

/* -- pushd's accounts (store_push.c) ------------------------------------- */

/* How pushd follows an account; a subscription outlives the process. */
enum store_push_mode {
	STORE_PUSH_POLL,
	STORE_PUSH_RELAY,
	STORE_PUSH_SUBSCRIPTION,
	STORE_PUSH_NMODES
};

struct store_push_row {
	const char *account;
	enum store_push_mode mode;
	const char *states;           /* JSON, or NULL */
	long tabs;
	long long updated;
	/* a verified subscription's id and expiry, or NULL; its token hash,
	 * also while it awaits its verification, or NULL */
	const char *sub_id, *token_hash;
	long long expires;
};

/* Writes the account's row as this node's (store_set_node), replacing
 * what was there. 0 or -1. */
int store_push_put(struct store *st, const struct store_push_row *row);
/* Deletes the account's row whatever its mode; only a poll's or a
 * relay's (a subscription outlives the process): only when this node
 * wrote it. 0 or -1. */
int store_push_delete(struct store *st, const char *account);
int store_push_delete_channel(struct store *st, const char *account);
/* At pushd's start on this node, at now: of its own rows and those of no
 * live node (another node seen within STORE_NODE_GONE), no poll or relay
 * is running and no tab is open; a subscription past its expiry is gone
 * on the server too; nodes gone go; this node starts. 0 or -1. */
int store_push_startup(struct store *st, long long now);
/* The account's verified subscription: its id (malloc'd) into *sub_id,
 * its token hash (hash_len bytes, terminated) into hash and its expiry:
 * 1, 0 when there is none, -1 on error. */
int store_push_held(struct store *st, const char *account, char **sub_id,
    char *hash, size_t hash_len, long long *expires);
/* Whether a subscription (verified, or awaiting its verification) holds
 * this token hash: 1 with its account's key into account (size n), 0,
 * or -1. */
int store_push_token_account(struct store *st, const char *hash,
    char *account, size_t n);
/* Accounts by mode: for each mode that has any, fn(ctx, mode name,
 * accounts, accounts with tabs, tabs). 0 or -1. */
typedef void store_push_mode_fn(void *ctx, const char *mode,
    long long accounts, long long with_tabs, long long tabs);
int store_push_modes(struct store *st, store_push_mode_fn *fn, void *ctx);
/* Verified subscriptions: all, expired by now, due for renewal by
 * renew_by. 0 or -1. */
int store_push_subs(struct store *st, long long now, long long renew_by,
    long long *all, long long *expired, long long *due);

/* -- devices' Web Push subscriptions (store_webpush.c) --------------------- */

struct store_webpush_row {
	const char *session, *account, *endpoint;
	const unsigned char *p256dh, *auth, *sealed;
	size_t p256dh_len, auth_len, sealed_len;
	long long created;
};
/* Called with one row; its pointers are valid only during the call. The
 * walk stops at a result other than 0, which the walk returns. */
typedef int store_webpush_fn(void *ctx, const struct store_webpush_row *row);

/* The session's subscription, replacing the one it had: 0 or -1 (also
 * when the session is gone). */
int store_webpush_put(struct store *st, const struct store_webpush_row *row);
/* The session's subscription to fn: fn's result, 1 when it has none, -1
 * on error. */
int store_webpush_get(struct store *st, const char *session,
    store_webpush_fn *fn, void *ctx);
/* The subscriptions of account (every account when NULL, by account), to
 * fn: 0, fn's result, or -1. */
int store_webpush_list(struct store *st, const char *account,
    store_webpush_fn *fn, void *ctx);
/* The subscriptions that hold endpoint (a browser has one: several
 * sessions signed in on it one after another), to fn: as above. */
int store_webpush_endpoint(struct store *st, const char *endpoint,
    store_webpush_fn *fn, void *ctx);
/* Deletes the session's subscription; with endpoint, only while it is
 * still that one (a push service said it is gone, and the device may have
 * subscribed anew meanwhile). The rows deleted, or -1. */
int store_webpush_delete(struct store *st, const char *session,
    const char *endpoint);

#endif

