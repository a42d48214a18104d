/* acct: the account core. One signed-in person (the account key sessions
 * share) while they have tabs open: their tabs, the channel in charge of
 * telling pushd about changes (a verified PushSubscription, else one
 * relayed EventSource, else a poll: chan_*.c behind struct chan), the
 * last states seen and a small ring of recent events for Last-Event-ID
 * (events.c). The credentials are kept only in memory, only while tabs
 * are open (and, for an account with a subscription, push_idle after the
 * last one, to destroy it), then wiped. Its part of the shared state
 * (lease, push row, what it tells other nodes, its tabs' sessions) is
 * acct_db.c's, off the loop. (Lifetime: pushd.h.) */
#ifndef POSTERN_ACCT_H
#define POSTERN_ACCT_H

#include <stddef.h>
#include <stdint.h>

#include <json-c/json_types.h>

#include "buf.h"
#include "check.h"
#include "ev.h"
#include "mcurl.h"
#include "sess.h"

struct app;
struct pushd;
struct acct_tab;
struct chan_poll;
struct chan_relay;
struct chan_sub;
struct wp_mail;

/* The data types pushd reports, as bits of a tab's filter. */
enum acct_type { ACCT_EMAIL, ACCT_MAILBOX, ACCT_THREAD, ACCT_NTYPES };
#define ACCT_ALL ((1u << ACCT_NTYPES) - 1)
#define ACCT_RING 16
#define ACCT_TOKEN_HEX 64               /* a push token's SHA-256, hex */

/* The channels, in the store's numbering; their order of preference is
 * acct.c's. */
enum acct_mode { ACCT_POLL, ACCT_RELAY, ACCT_SUBSCRIPTION, ACCT_NMODES };

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
	uint8_t watch;                   /* no stream: a device's Web Push
	                                    subscription (wpwatch.h) */
};

/* One state change, kept in the ring for replay. */
struct acct_event {
	uint64_t id;
	uint8_t mask;                    /* the types that changed; 0: a mark */
	uint8_t baseline;                /* the first states this node knew */
	char *states[ACCT_NTYPES];       /* the states after it (mask bits) */
};

/* An account. Its channels' own state hangs on it, each allocated only
 * while that channel runs (chan.h). */
struct acct {
	struct acct *next;               /* hash chain in pd->accts */
	struct pushd *pd;
	char key[APP_KEY_HEX + 1];
	char *jmap_id;                   /* the JMAP accountId (primary mail) */
	char *api_url, *event_url;       /* pinned upstream URLs */
	struct buf creds;                /* "user\0pass" */
	long long creds_created;         /* the sign-in they came from */
	long long accepted;              /* the mail server last took them */
	struct check_set checks;         /* tabs' own credentials being asked */
	struct acct_tab *tabs;
	unsigned ntabs;
	unsigned nvisible;               /* tabs in view: polls come faster */
	unsigned nwatch;                 /* of the tabs, Web Push watches */
	struct wp_mail *wpm;             /* new mail for them (wpmail.h) */
	enum acct_mode mode;             /* the channel in charge (chan.h) */
	char *states[ACCT_NTYPES];       /* last states seen, NULL: not yet */
	struct acct_event ring[ACCT_RING];
	unsigned ring_n, ring_head;      /* entries held; next slot */
	uint64_t last_id;                /* the newest event id (or mark) */
	struct chan_poll *poll;          /* the state calls (every mode) */
	struct chan_relay *relay;        /* the upstream event stream */
	struct chan_sub *sub;            /* a PushSubscription */
	uint8_t dirty;                   /* the db row needs writing */
	uint8_t flushed;                 /* in the flush being written */
	uint8_t dead;
	uint8_t creds_refused;           /* the mail server refused creds */
	uint8_t stream_seen;             /* the event stream worked once */
	uint8_t no_stream;               /* event_url answered, not with a
	                                    stream: never relayed again */
	uint8_t follower;                /* another node holds the lease: no
	                                    channel runs here (node.c) */
	unsigned lease_round;            /* the last renewal that had it */
	/* Asked of the database and not yet answered (dbq.h): one each. */
	uint8_t taking;                  /* the lease */
	uint8_t tried;                   /* the lease was asked for before */
	uint8_t checking;                /* the tabs' sessions */
	uint8_t check_again;             /* and again after that answer */
};

struct store_push_row;

/* A channel, as the account core sees it (chan.h tells the channels). */
struct chan {
	const char *name;
	/* A tab is there: begin (again) what the channel does before it can
	 * carry (a subscription is looked for), or NULL. 1 when the choice
	 * of the channel in charge must wait for it (acct_choose, once it
	 * knows whether it can carry: an earlier run's subscription is
	 * read), else 0. */
	int (*start)(struct acct *a);
	/* Whether it can carry the account's changes now. */
	int (*usable)(const struct acct *a);
	/* It carries them from now on (started if it did not run). */
	void (*enter)(struct acct *a);
	/* Stops; its state goes after the batch. */
	void (*stop)(struct acct *a);
	/* The account's last tab closed: 1 when the channel keeps the account
	 * for a while (a subscription, to destroy it after push_idle; it ends
	 * the account then), else 0 (acct_end stops what still runs). */
	int (*idle)(struct acct *a);
	/* A tab came into view (polls come faster), or NULL. */
	void (*visible)(struct acct *a);
	/* Adds what the channel keeps across restarts to the account's row,
	 * or NULL. */
	void (*row)(const struct acct *a, struct store_push_row *row);
};

/* The bit of a type name, 0 when pushd does not report it. */
unsigned acct_type_bit(const char *name, size_t n);
extern const char *const acct_type_names[ACCT_NTYPES];

/* Adds t to the account of session s, creating the account (and starting
 * its upstream channel) for its first tab, which jmap_id names the
 * primary mail account of (NULL when the account is followed already):
 * 0 or -1. */
int acct_attach(struct pushd *pd, const struct sess *s, const char *jmap_id,
    struct acct_tab *t);
/* Ends the account's tabs of session sess_id. */
void acct_end_session(struct acct *a, const char *sess_id);
/* The mail server's word on session sess_id, written off the loop
 * (acct_db.c): accepted now, or refused (the session ends, and once that
 * is written its tabs here: a stream that comes back meets a 401). */
void acct_verdict(struct acct *a, const char *sess_id, int refused);
/* The JMAP accountId of session s's primary mail account (malloc'd), or
 * NULL: read from the store, on the database thread (app: the job's). */
char *acct_primary_mail(struct app *app, const struct sess *s);
/* The account of key while pushd follows it, or NULL. */
struct acct *acct_lookup(struct pushd *pd, const char *key);
/* fn(a, ctx) on every live account, the next saved first (fn may end a). */
void acct_each(struct pushd *pd, void (*fn)(struct acct *a, void *ctx),
    void *ctx);
/* Whether session id has a tab of the account in view: 1 or 0. */
int acct_sess_visible(const struct acct *a, const char *sess_id);
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
/* Readies the accounts' writes to the state. */
void acct_startup(struct pushd *pd);
/* Ends every account (at shutdown, after their tabs). */
void acct_shutdown(struct pushd *pd);

/* Several nodes on one state (node.c, bus.c): the lease on an account's
 * channel. Whether this node may call the mail server for the account
 * now: it holds the lease, renewed within PUSHD_LEASE_FENCE_MS (always
 * on one node). */
int acct_leased(const struct acct *a);
/* The lease was not renewed: the channels stop, the account follows. */
void acct_lease_lost(struct acct *a);
/* A follower with tabs tries the lease again: when it takes it, its
 * channels start, from the row's last states. */
void acct_lease_retry(struct acct *a);
/* The account's lease is given up (off the loop), and with
 * ACCT_ROW_CHANNEL its row when a poll's or a relay's (a subscription's
 * outlives the process), with ACCT_ROW_ANY its row whatever the mode. */
enum { ACCT_ROW_KEEP, ACCT_ROW_CHANNEL, ACCT_ROW_ANY };
void acct_release(struct pushd *pd, const char *key, int row);

/* -- between the account core (acct.c) and its state (acct_db.c) -------- */

/* Asks for the account's lease: 1 when this node holds it now (always on
 * one node), 0 when the answer comes later (then acct_begin). */
int acct_lease(struct acct *a);
/* The lease is held: the channels start, the best usable one carries. */
void acct_begin(struct acct *a);
/* The holder tells the other nodes the states that changed. */
void acct_publish(struct acct *a, char *const states[ACCT_NTYPES],
    unsigned changed);
/* The holder on another node told new states: a follower's tabs get them
 * (takes the strings it keeps, as acct_new_states). */
void acct_heard(struct acct *a, char *states[ACCT_NTYPES], unsigned got);
/* Every tab is told to look for itself (what it missed cannot be known):
 * a resync event (events.c). */
void acct_resync(struct acct *a);

/* -- for the channels (chan_*.c) and the events (events.c) -------------- */

/* The channel m carries the account's changes from now on (why: for the
 * log, which tells each change once). */
void acct_set_mode(struct acct *a, enum acct_mode m, const char *why);
/* The channels started: the best usable one carries (once, for a
 * channel whose start asked to wait). */
void acct_choose(struct acct *a);
/* The channel `from` cannot carry them (why): the next usable one in the
 * order of preference does. */
void acct_fall_back(struct acct *a, enum acct_mode from, const char *why);
/* The row in push_accounts is to be written (within a second). */
void acct_dirty(struct acct *a);
/* The same, at the next turn of the loop. */
void acct_dirty_now(struct acct *a);
/* Ends the account: its channels stop, its tabs are already gone. */
void acct_end(struct acct *a);
/* The mail server answered a call made with the account's credentials. */
void acct_accepted(struct acct *a, long status);
/* Ends the tabs nothing vouches for any more; revoke: the mail server
 * refused the account's credentials (every tab ends). */
void acct_check_tabs(struct acct *a, int revoke);
/* One JMAP API call with the account's credentials: json posted (copied),
 * the answer appended to answer (up to its cap): 0, or -1 when it
 * cannot be started. */
int acct_call(struct acct *a, struct mc_job *job, const char *json,
    struct buf *answer);
/* The account's login and password, for a request of a channel. */
const char *acct_user(const struct acct *a);
const char *acct_pass(const struct acct *a);

/* Compares with the states seen before; a change becomes an event for
 * the tabs, the first answer included (the tabs open already looked
 * before it). Takes the strings it keeps (NULLed in states). */
void acct_new_states(struct acct *a, char *states[ACCT_NTYPES],
    unsigned got);

/* events.c: the types, the ring and the fan-out. */
/* The states a StateChange's "changed" object names for the account: the
 * mask of types taken into states (strdup'd). */
unsigned acct_changed_states(const struct acct *a, json_object *changed,
    char *states[ACCT_NTYPES]);
/* Adds an event to the ring (its strings are the caller's to fill) and
 * makes it the newest. */
struct acct_event *acct_ring_push(struct acct *a, unsigned mask);
/* Sends e to every tab that wants it. */
void acct_emit(struct acct *a, const struct acct_event *e);
/* Adds a mark to the ring: the id a first Last-Event-ID can name. */
void acct_mark(struct acct *a);
/* Frees the ring's and the states' strings. */
void acct_events_free(struct acct *a);

#endif
