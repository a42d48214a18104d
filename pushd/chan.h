/* chan: the channels that bring an account's changes to pushd, behind one
 * interface. In the order of preference (acct.c's):
 *
 *   subscription  chan_sub.c    a PushSubscription (RFC 8620 7.2): the
 *                               mail server calls /api/push/<token>;
 *   relay         chan_relay.c  one upstream EventSource per account;
 *   poll          chan_poll.c   a state call every push_poll_interval.
 *
 * acct.mode names the one in charge; acct_set_mode is the one place that
 * changes it, acct_fall_back takes the next usable one when a channel
 * cannot go on. A better channel may be tried while another carries (a
 * subscription awaits its verification while the relay runs; the relay
 * is tried again on its backoff while polling): when it works it takes
 * over, without a gap and without dropping a tab. Each channel's state
 * (acct.poll, .relay, .sub) is allocated while it runs and freed after
 * the batch once it stops. The poll's state calls serve every mode: the
 * baseline, the gap after a reconnect, and the watch that re-checks the
 * sessions of the tabs (chan_poll.c).
 *
 * The account core calls a channel only through its struct chan (acct.h),
 * found in pd->chans (set by main.c), so that no channel's code is linked
 * back into acct.c; a channel calls the core (acct.h) and the channels
 * after it directly. (Lifetime: pushd.h.) */
#ifndef POSTERN_CHAN_H
#define POSTERN_CHAN_H

#include "acct.h"

/* Each channel's struct chan (acct.h). */
extern const struct chan chan_poll, chan_relay, chan_sub;

/* chan_poll.c, for the other channels. */
/* One state call now (or after the one in flight): the baseline, or the
 * changes a reconnect may have missed. */
void poll_now(struct acct *a);
/* The sessions of the tabs are re-checked every push_poll_interval
 * (relay and subscription modes; the poll does it on each call). */
void poll_watch(struct acct *a);
/* The next state call is not needed (a subscription took over); the
 * watch goes on. */
void poll_rest(struct acct *a);

/* A subscription: none (yet, or gone); created and awaiting its
 * verification; verified; failed (the server has none, or it was not
 * verified in time). */
enum chan_sub_state { SUB_NONE, SUB_PENDING, SUB_VERIFIED, SUB_FAILED };

/* The subscription's state (chan_sub.c's; here for the callback's tests). */
struct chan_sub {
	struct acct *a;
	struct pushd *pd;
	struct mc_job job;               /* the PushSubscription call in flight */
	struct buf resp;
	char *id;
	/* SHA-256 (hex) of the token in the callback URL (32 random bytes,
	 * base64url), "" when none: the token itself is not kept. */
	char token_hash[ACCT_TOKEN_HEX + 1];
	char *verify_code;               /* a PushVerification to confirm */
	json_object *leftovers;          /* ours to destroy with the next set */
	long long expires;
	struct ev_timer timer;           /* renewal check, verification deadline */
	struct ev_timer idle_timer;      /* no tab for push_idle: destroy */
	struct ev_timer grace_timer;     /* the relay closes after verification */
	struct sub_load *load;           /* an earlier run's, being read */
	uint8_t state;                   /* enum chan_sub_state */
	uint8_t step;                    /* the call in flight (its table row) */
	unsigned want;                   /* calls waiting (bits, chan_sub.c) */
};

/* chan_sub.c, for the push callback (callback.c). */
/* What pushd keeps of a push token (its SHA-256 in hex), in memory and in
 * push_accounts.token_hash. */
void sub_token_hash(const char *token, char out[ACCT_TOKEN_HEX + 1]);
/* A PushVerification for subscription id with code: the HTTP status
 * (202 taken, 403 not ours or not awaited). */
int sub_verification(struct acct *a, const char *id, const char *code);

#endif
