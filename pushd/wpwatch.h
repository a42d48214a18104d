/* wpwatch: a device's Web Push subscription keeping its account followed
 * with every tab closed. A watch is a tab of the account with no stream
 * (acct_tab.watch): the account core keeps its channel and credentials
 * for it as for a tab, checks its session as a tab's, and ends it with
 * the session. Its credentials come from the subscription's row, sealed
 * under the server secret when the device subscribed (conf/schema.sql
 * says why). (Lifetime: pushd.h.) */
#ifndef POSTERN_WPWATCH_H
#define POSTERN_WPWATCH_H

#include <stdint.h>

#include "acct.h"
#include "buf.h"
#include "sess.h"
#include "webpush.h"

struct app;
struct pushd;
struct sess;
struct store_webpush_row;

/* A subscription's row as read, kept past the read (the database's
 * work is off the loop, dbq.h): what one push needs. */
struct wp_row {
	char session[SESS_ID_LEN + 1];
	char account[APP_KEY_HEX + 1];
	char *endpoint;
	unsigned char p256dh[WEBPUSH_P256DH_LEN], auth[WEBPUSH_AUTH_LEN];
	size_t p256dh_len, auth_len;
};

/* Copies row into r: 0, or -1 (no memory, or keys of sizes no valid
 * subscription has). */
int wp_row_copy(struct wp_row *r, const struct store_webpush_row *row);
/* The copy as a row again (its pointers into r). */
void wp_row_view(const struct wp_row *r, struct store_webpush_row *row);
void wp_row_free(struct wp_row *r);

struct wp_watch {
	struct acct_tab at;
	struct wp_watch *next, *prev;    /* pd->watches */
	uint64_t backoff_until;          /* ev ms: no push before this */
	uint32_t backoff_s;              /* the last wait; doubles */
	uint8_t in_flight;               /* a push of it is out */
	char *queued;                    /* the next payload, waiting for
	                                    that push or for a free slot */
	struct wp_row *queued_row;       /* and the row it goes to */
};

/* What a watch of session s needs, sealed for its row into out (jmap_id:
 * its primary mail account) under a key from a's secret (on the database
 * thread: the job's app): 0 or -1. */
int wp_seal(const struct app *a, const struct sess *s, const char *jmap_id,
    struct buf *out);
/* A watch for a stored subscription, replacing the session's: 0, or -1
 * (the row cannot be opened, or its account not followed). */
int wp_watch_row(struct pushd *pd, const struct store_webpush_row *row);
/* A watch for every stored subscription (start-up). */
void wp_watch_startup(struct pushd *pd);
/* The watch of session id of account, or NULL: among the account's tabs,
 * so that a push to each of a thousand subscriptions does not walk them
 * all each time. */
struct wp_watch *wp_watch_find(struct pushd *pd, const char *account,
    const char *sess_id);
/* Ends that watch, if any. */
void wp_watch_end(struct pushd *pd, const char *account, const char *sess_id);
/* A subscription of session sess_id stored or removed on this node: the
 * other nodes are told, so that each watches it too (the lease holder
 * pushes). */
void wp_watch_tell(struct pushd *pd, const char *account, const char *sess_id);
/* Told by another node that the session's subscription changed: its row
 * is read (off the loop, in order) and, as it is then, watched here too,
 * or its watch ends. */
void wp_watch_told(struct pushd *pd, const char *account, const char *sess_id);
/* Listening to the other nodes again: what they told meanwhile is lost,
 * so the stored rows are read again (off the loop) and decide every
 * watch, as a told row does. */
void wp_watch_recheck(struct pushd *pd);
/* Ends every watch (at shutdown, with the tabs). */
void wp_watch_shutdown(struct pushd *pd);

#endif
