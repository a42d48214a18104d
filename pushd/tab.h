/* tab: one browser tab's Server-Sent-Events stream. A tab is small (its
 * size is a headline figure): where its stream goes, its account, the
 * session it was opened with (to notice a sign-out), its filter and a
 * ping timer. Everything it writes is formatted when sent.
 * (Lifetime: pushd.h.) */
#ifndef POSTERN_TAB_H
#define POSTERN_TAB_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "acct.h"
#include "cap.h"
#include "ev.h"
#include "sess.h"

struct req;
struct preq;
struct acct;
struct pushd;

#define TAB_PING_MIN 5
#define TAB_PING_MAX 30

struct tab {
	struct preq *q;             /* the FastCGI request carrying the stream */
	struct acct_tab at;         /* its account's view of it */
	struct ev_timer ping;
	struct cap_stream cap;      /* counted under its session and address */
	uint8_t ping_s;             /* seconds between pings */
};

/* GET /api/events (a route handler: r->sess is set). Over the session's
 * or the address's cap of streams: 429, or the session's oldest stream
 * makes way (see cap.h). */
void tab_handle(struct req *r);
/* The request under the tab ended (client gone, connection closed): the
 * tab leaves its account and is freed; nothing more is written. */
void tab_gone(struct tab *t);
/* pushd ends the stream: the request is finished, the tab freed. */
void tab_end(struct tab *t);
/* Sends one whole event frame: 0, or -1 when the tab is gone. */
int tab_send(struct tab *t, const char *frame, size_t n);

#endif
