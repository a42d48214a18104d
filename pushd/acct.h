/* acct: one signed-in person (the account key sessions share) while they
 * have tabs open: their tabs, the upstream channel that tells pushd about
 * changes (a verified PushSubscription, else one relayed EventSource, else
 * a poll), the last states seen and a small ring of recent events for
 * Last-Event-ID. The credentials are kept only in memory, only while tabs
 * are open (and, for an account with a subscription, push_idle after the
 * last one, to destroy it), then wiped. */
#ifndef POSTERN_ACCT_H
#define POSTERN_ACCT_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "ev.h"
#include "mcurl.h"
#include "sess.h"
#include "sse.h"

struct pushd;
struct acct_tab;
struct acct_check;

/* The data types pushd reports, as bits of a tab's filter. */
enum acct_type { ACCT_EMAIL, ACCT_MAILBOX, ACCT_THREAD, ACCT_NTYPES };
#define ACCT_ALL ((1u << ACCT_NTYPES) - 1)
#define ACCT_RING 16
#define ACCT_TOKEN_HEX 64               /* a push token's SHA-256, hex */

enum acct_mode { ACCT_POLL, ACCT_RELAY, ACCT_SUBSCRIPTION };
/* A subscription: none, created and awaiting its verification, verified;
 * unsupported when the server has none or it failed (relay goes on). */
enum acct_sub { SUB_NONE, SUB_PENDING, SUB_VERIFIED, SUB_FAILED };

/* An account's view of one of its tabs: what its fan-out and checks
 * need, and how to reach the stream. tab.c embeds it in its struct tab
 * and fills ops, so that acct.c needs nothing of tab.c. */
struct acct_tab_ops {
	/* Sends one whole event frame: 0, or -1 when the tab is gone. */
	int (*send)(struct acct_tab *t, const char *frame, size_t n);
	/* Ends the stream (freed after the current batch). */
	void (*end)(struct acct_tab *t);
};

struct acct_tab {
	const struct acct_tab_ops *ops;
	struct acct *acct;
	struct acct_tab *next, *prev;    /* the account's tabs */
	char sess_id[SESS_ID_LEN + 1];
	uint8_t types;                   /* ACCT_T_* bits the tab wants */
	uint8_t closeafter;              /* end after the first state event */
	uint8_t dead;
	uint8_t acct_creds;              /* its session's credentials are the
	                                    ones its account calls with */
	uint8_t visible;                 /* a page of the browser is in view
	                                    (visible=1): its account polls
	                                    faster */
};

/* One state change, kept in the ring for replay. */
struct acct_event {
	uint64_t id;
	uint8_t mask;                    /* the types that changed; 0: a mark */
	char *states[ACCT_NTYPES];       /* the states after it (mask bits) */
};

struct acct {
	struct acct *next;               /* hash chain in pd->accts */
	struct pushd *pd;
	char key[APP_KEY_HEX + 1];
	char *jmap_id;                   /* the JMAP accountId (primary mail) */
	char *api_url, *event_url;       /* pinned upstream URLs */
	struct buf creds;                /* "user\0pass" */
	long long creds_created;         /* the sign-in they came from */
	long long accepted;              /* the mail server last took them */
	struct acct_check *checks;       /* tabs' own credentials being asked */
	struct acct_tab *tabs;
	unsigned ntabs;
	enum acct_mode mode;
	char *states[ACCT_NTYPES];       /* last states seen, NULL: not yet */
	struct acct_event ring[ACCT_RING];
	unsigned ring_n, ring_head;      /* entries held; next slot */
	uint64_t last_id;                /* the newest event id (or mark) */
	struct ev_timer poll_timer;
	uint64_t poll_started;           /* ev_now() when the last poll began */
	unsigned nvisible;               /* tabs in view: polls come faster */
	struct mc_job job;               /* the poll in flight */
	struct buf resp;
	/* Relay mode: the upstream EventSource and its reader. */
	struct mc_job stream;
	struct sse sse;
	struct ev_timer relay_timer;     /* the reconnect after a backoff */
	struct ev_timer check_timer;     /* sessions re-checked (relay) */
	unsigned backoff_ms;
	uint8_t relay_up;                /* the stream answered 200 event-stream */
	uint8_t relay_ever;              /* it did at least once */
	uint8_t relay_fails;             /* reconnects in a row that failed */
	/* Subscription mode: one PushSubscription (RFC 8620 7.2). */
	struct mc_job sjob;              /* the PushSubscription call in flight */
	struct buf sresp;
	char *sub_id;
	/* SHA-256 (hex) of the token in the callback URL (32 random bytes,
	 * base64url), "" when none: the token itself is not kept. */
	char token_hash[ACCT_TOKEN_HEX + 1];
	char *verify_code;               /* a PushVerification to confirm */
	long long sub_expires;
	struct ev_timer sub_timer;       /* renewal check, verification deadline */
	struct ev_timer idle_timer;      /* no tab for push_idle: destroy */
	struct ev_timer grace_timer;     /* the relay closes after verification */
	uint8_t sub_state;               /* enum acct_sub */
	uint8_t sop;                     /* the call in flight (enum) */
	uint8_t sub_want;                /* calls waiting (bits) */
	uint8_t dirty;                   /* the db row needs writing */
	uint8_t dead;
	uint8_t failing;                 /* the last poll failed (log once) */
	uint8_t poll_again;              /* a poll was asked for while one ran */
	uint8_t creds_refused;           /* the mail server refused creds */
};

/* The bit of a type name, 0 when pushd does not report it. */
unsigned acct_type_bit(const char *name, size_t n);
extern const char *const acct_type_names[ACCT_NTYPES];

/* Adds t to the account of session s, creating the account (and starting
 * its upstream channel) for its first tab: 0 or -1. */
int acct_attach(struct pushd *pd, const struct sess *s, struct acct_tab *t);
/* Removes t; the account ends with its last tab. */
void acct_detach(struct acct_tab *t);
/* Marks the streams of session s in view or not (POST /api/events): an
 * account with one in view polls every push_poll_visible. Returns how
 * many streams the session has open (0: none, nothing changed). */
int acct_set_visible(struct pushd *pd, const struct sess *s, int visible);
/* Sends t the events after last_event_id (a header value, or NULL) that
 * the ring still holds, or a resync event when it cannot know what t
 * missed. */
void acct_replay(struct acct *a, struct acct_tab *t, const char *last_event_id);
/* Removes rows a previous run left for channels that died with it. */
void acct_startup(struct pushd *pd);
/* What pushd keeps of a push token (its SHA-256 in hex), in memory and in
 * push_accounts.token_hash. */
void acct_token_hash(const char *token, char out[ACCT_TOKEN_HEX + 1]);
/* Whether token is a push subscription's of this pushd: 1, 0, or -1 when
 * the database cannot tell. */
int acct_token_known(struct pushd *pd, const char *token);
/* POST /api/push/<token>: the HTTP status to answer (202 accepted, 403
 * refused, 400 malformed, 404 unknown, 415 not JSON, 500). */
int acct_push_callback(struct pushd *pd, const char *token,
    const char *content_type, const char *body, size_t n);
/* Ends every account (at shutdown, after their tabs). */
void acct_shutdown(struct pushd *pd);

#endif
