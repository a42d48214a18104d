/* rate: fixed-window counters in the shared database, so that every
 * process of every responder counts against the same limits. */
#ifndef POSTERN_RATE_H
#define POSTERN_RATE_H

#include <time.h>

#include "app.h"
#include "store.h"

/* Counts one hit of what in the window of `window` seconds holding now.
 * Returns 0 when the count is within limit, 1 when past it (retry_after
 * set to the seconds until the window ends), -1 on a database error. */
int rate_hit(struct app *a, const char *what, long limit, long window,
    time_t now, long *retry_after);
/* Several keys at once, in one statement (sign-in weighs four together,
 * see login.c), in the window holding now; at most RATE_KEYS_MAX, each
 * key at most once. rate_count_keys reads their counts into n[] (0 for
 * none); rate_add_keys adds one hit to each in one write and then reads
 * the counts into n[] (another process's hits in between included);
 * rate_refund_keys takes one back from each (never
 * below 0) in one write. 0, or -1 on a database error (nothing added). */
#define RATE_KEYS_MAX STORE_RATE_KEYS_MAX
int rate_count_keys(struct app *a, const char *const whats[], int k,
    long window, time_t now, long long n[]);
int rate_add_keys(struct app *a, const char *const whats[], int k,
    long window, time_t now, long long n[]);
int rate_refund_keys(struct app *a, const char *const whats[], int k,
    long window, time_t now);
/* The seconds from now to the end of its window. */
long rate_window_left(long window, time_t now);
/* rate_hit for a limit that many hits count against (the data-path
 * budget): hits are counted in this process's memory and added to the
 * shared row in batches of up to a 64th of the limit (at most 32), at
 * least once a second and on every hit once the count is past half the
 * limit. The processes of a responder may so admit up to (batch - 1)
 * each beyond the limit when one of them gets most of a session's
 * requests; see docs/DECISIONS.md. Same results as rate_hit. */
int rate_hit_batched(struct app *a, const char *what, long limit,
    long window, time_t now, long *retry_after);
/* Writes the hits rate_hit_batched holds and frees its memory (app_close
 * calls it). */
void rate_cache_close(struct app *a);
/* Takes back one hit counted in the same window (an attempt that did not
 * get an answer from the mail server must not count against anyone). */
int rate_refund(struct app *a, const char *what, long window, time_t now);
/* Drops windows that have ended. */
int rate_prune(struct app *a, time_t now);

#endif
