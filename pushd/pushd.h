/* pushd: the daemon's shared context. One struct, made in main() and
 * reached from every callback (the loop is embedded in it), holding what
 * lives as long as the process: configuration and database, the
 * listening socket, the libcurl multi handle, the accounts.
 *
 * Lifetime and re-entrancy: the rules every pushd file keeps.
 *
 * 1. One thread, one loop (ev.h). No call blocks; a callback that needs
 *    to wait arms a timer or starts a transfer and returns. Database work
 *    goes to dbq.h's thread, which touches nothing of the loop's.
 * 2. What a callback ends is unlinked at once and freed after the batch
 *    of events in hand (ev_defer): a connection, a tab, an account, a
 *    channel's state (chan.h), a libcurl socket watcher. Deferred frees
 *    run in the order they were asked for, so a channel's state goes
 *    before its account.
 * 3. So every callback that can still be reached for an ended object
 *    checks first that it is alive, and again after each call that can
 *    end it (a tab's send, acct_check_tabs, a mode change) before it
 *    touches it or re-arms a timer: conn.dead, acct_tab.dead, acct.dead,
 *    and for a channel's state "its account is alive and still holds
 *    it" (poll_alive, relay_alive, sub_alive).
 * 4. A fan-out walks a list with the next element saved first; a tab
 *    that ends meanwhile keeps its next pointer until it is freed.
 * 5. in_curl: inside a libcurl callback (an event stream's head and
 *    bytes) no transfer may be started or cancelled. What ends there leaves its
 *    transfer to its deferred free, which cancels it, and the write
 *    callback returns short so that libcurl ends it; what needs a call
 *    meanwhile asks for it on a 0 ms timer (poll_now).
 * 6. stopping: at shutdown the tabs end first, then the accounts; nothing
 *    is kept for later (no idle subscription) and nothing new starts. */
#ifndef POSTERN_PUSHD_H
#define POSTERN_PUSHD_H

#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>
#include <openssl/evp.h>

#include "app.h"
#include "cap.h"
#include "ev.h"

/* Hard caps: nothing read from outside grows past these. */
#define PUSHD_PARAMS_MAX (32 * 1024)   /* one request's FastCGI params */
#define PUSHD_BODY_MAX (64 * 1024)     /* a push callback body */
#define PUSHD_QUEUE_MAX (32 * 1024)    /* bytes queued for one stream */
#define PUSHD_CONN_REQS 64             /* requests at once on a connection */
#define PUSHD_HEAD_TIMEOUT_MS 10000    /* to read a request's head */
#define PUSHD_IDLE_TIMEOUT_MS 30000    /* a kept connection with no request */
#define PUSHD_FD_RESERVE 32            /* descriptors kept for the rest */
#define PUSHD_ACCT_BUCKETS 1024
/* A session's oldest stream makes way for a new one over the session's
 * cap only once it has been open this long: a reload wins, a burst is
 * refused. */
#define PUSHD_REPLACE_AFTER_MS 10000
/* Several nodes: leases (store_lease.c) renewed every 3 s; the holder's
 * channels stop by themselves 6 s after the last renewal that went
 * through, 4 s before the lease (10 s) may pass to another node. */
#define PUSHD_LEASE_TICK_MS 3000
#define PUSHD_LEASE_FENCE_MS 6000
/* A NOTIFY payload's bytes at most (PostgreSQL's limit is 8,000). */
#define PUSHD_NOTIFY_MAX 7900

#define container_of(p, type, member) \
	((type *)(void *)((char *)(p) - offsetof(type, member)))

struct conn;
struct acct;
struct chan;
struct preq;
struct wp_watch;
struct wp_push;
struct store_listen;
struct dbq;

struct pushd {
	struct app app;
	struct ev ev;
	struct ev_io listen_io;
	struct ev_io signal_io;
	int spare_fd;              /* closed to accept and refuse at EMFILE */
	struct conn *conns;        /* every open connection */
	unsigned nconns, max_conns;
	unsigned ntabs;
	struct cap cap;            /* streams per session and per address */
	unsigned cap_refused;      /* refused since the last report */
	uint64_t cap_logged;       /* when that was (ms, ev_clock) */
	struct acct *accts[PUSHD_ACCT_BUCKETS];
	unsigned naccts;
	CURLM *multi;
	struct curl_slist *json_headers;   /* of every JMAP call pushd makes */
	struct curl_slist *sse_headers;    /* of an upstream event stream */
	struct ev_timer curl_timer;
	struct ev_timer flush_timer;   /* writes dirty accounts to the db */
	struct ev_timer node_timer;    /* the node's heartbeat (node.c) */
	struct store_listen *bus;      /* the other nodes (bus.c), or NULL */
	struct ev_io bus_io;
	struct ev_timer bus_timer;
	char user_agent[96];           /* on every upstream call (mcurl.c) */
	struct ev_timer lease_timer;   /* leases renewed, taken (node.c) */
	unsigned lease_round;          /* counts renewals */
	uint64_t lease_ok;             /* when the last one went through
	                                  (ev_clock ms, as it was sent) */
	uint64_t followed_checked;     /* followers' sessions last checked */
	uint8_t fenced;                /* the channels stopped for it */
	/* The database work off the loop (dbq.h), and what of it is out:
	 * one renewal, one heartbeat, one flush, one look for free leases
	 * at a time. */
	struct dbq *dbq;
	unsigned dbq_out;
	uint8_t renew_out, beat_out, flush_out, free_out;
	uint64_t next_id;          /* event ids: increasing, also across restarts */
	int stopping;
	int in_curl;               /* inside a libcurl callback: no multi calls */
	/* What conn.c hands a request whose head is in (route.c's). */
	void (*route)(struct preq *q);
	/* The channels by mode (chan.h), as the account core reaches them. */
	const struct chan *const *chans;
	/* Web Push (wp*.h): the VAPID key (NULL: off), the devices' watches,
	 * the pushes out and the payloads waiting for a slot. */
	EVP_PKEY *wp_key;
	char *wp_subject;
	struct wp_watch *watches;
	struct wp_push *wp_pushes;     /* out now */
	unsigned wp_out;
	unsigned wp_queued;            /* watches with a payload waiting */
};

static inline struct pushd *pushd_of(struct ev *ev)
{
	return container_of(ev, struct pushd, ev);
}

/* A new event id: larger than every id given before, by this process or
 * an earlier one (ids start from the wall clock in microseconds). */
static inline uint64_t pushd_next_id(struct pushd *pd)
{
	return pd->next_id++;
}

#endif
