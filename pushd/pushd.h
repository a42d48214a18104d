/* pushd: the daemon's shared context. One struct, made in main() and
 * reached from every callback (the loop is embedded in it), holding what
 * lives as long as the process: configuration and database, the
 * listening socket, the libcurl multi handle, the accounts. */
#ifndef POSTERN_PUSHD_H
#define POSTERN_PUSHD_H

#include <stddef.h>
#include <stdint.h>

#include <curl/curl.h>

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

#define container_of(p, type, member) \
	((type *)(void *)((char *)(p) - offsetof(type, member)))

struct conn;
struct acct;
struct preq;

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
	uint64_t next_id;          /* event ids: increasing, also across restarts */
	int stopping;
	int in_curl;               /* inside a libcurl callback: no multi calls */
	/* What conn.c hands a request whose head is in (route.c's). */
	void (*route)(struct preq *q);
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
