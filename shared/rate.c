#include "rate.h"

#include <stdlib.h>
#include <string.h>

#include "store.h"

/* The in-memory side of rate_hit_batched: a direct-mapped table of the
 * keys this process counts, each with the hits it admitted but has not
 * yet added to the shared row. */
#define RATE_SLOTS 128
#define RATE_WHAT_MAX 64
#define RATE_BATCH_MAX 32

struct rate_slot {
	char what[RATE_WHAT_MAX];  /* "" when free */
	char key[APP_KEY_HEX + 1];
	long window;
	long long win;             /* the window known and pending belong to */
	long long known;           /* the shared count after our last write */
	long pending;              /* admitted here, not yet written */
	time_t written;            /* when we last wrote; 0: never */
};

struct rate_cache {
	struct rate_slot slot[RATE_SLOTS];
};

/* The start of the window of `window` seconds that holds now. */
static long long window_of(long window, time_t now)
{
	return (long long)now / window * window;
}

/* Adds k hits to key's row of window win: the new count, or -1. */
static long long add_hits(struct app *a, const char *key, long long win,
    long window, long k)
{
	return store_rate_add(a->store, key, win, win + window, k);
}

/* Whether a count n is past limit (retry_after then set). */
static int over(long long n, long limit, long window, time_t now,
    long *retry_after)
{
	if (n <= limit)
		return 0;
	*retry_after = rate_window_left(window, now);
	return 1;
}

/* A window's first write clears out ended ones: at most once per key and
 * window, and cheap through the index on until. */
static void first_write(struct app *a, long long n, long k, time_t now)
{
	if (n == k)
		rate_prune(a, now);
}

long rate_window_left(long window, time_t now)
{
	return (long)(window_of(window, now) + window - now);
}

/* The keys of whats[0..k) into keys, and pointers to them into ptrs. */
static int make_keys(struct app *a, const char *const whats[], int k,
    char keys[][APP_KEY_HEX + 1], const char *ptrs[])
{
	int i;

	if (k < 1 || k > RATE_KEYS_MAX)
		return -1;
	for (i = 0; i < k; i++) {
		app_key(a, "rate", whats[i], keys[i]);
		ptrs[i] = keys[i];
	}
	return 0;
}

int rate_count_keys(struct app *a, const char *const whats[], int k,
    long window, time_t now, long long n[])
{
	char keys[RATE_KEYS_MAX][APP_KEY_HEX + 1];
	const char *ptrs[RATE_KEYS_MAX];

	if (make_keys(a, whats, k, keys, ptrs) == -1)
		return -1;
	return store_rate_counts(a->store, ptrs, k, window_of(window, now), n);
}

int rate_add_keys(struct app *a, const char *const whats[], int k,
    long window, time_t now, long long n[])
{
	char keys[RATE_KEYS_MAX][APP_KEY_HEX + 1];
	const char *ptrs[RATE_KEYS_MAX];
	long long win = window_of(window, now);
	int i;

	if (make_keys(a, whats, k, keys, ptrs) == -1 ||
	    store_rate_add_each(a->store, ptrs, k, win, win + window) == -1 ||
	    store_rate_counts(a->store, ptrs, k, win, n) == -1)
		return -1;
	/* A window's first hit of any of them clears out ended windows. */
	for (i = 0; i < k; i++)
		if (n[i] == 1) {
			rate_prune(a, now);
			break;
		}
	return 0;
}

int rate_refund_keys(struct app *a, const char *const whats[], int k,
    long window, time_t now)
{
	char keys[RATE_KEYS_MAX][APP_KEY_HEX + 1];
	const char *ptrs[RATE_KEYS_MAX];

	if (make_keys(a, whats, k, keys, ptrs) == -1)
		return -1;
	return store_rate_refund_each(a->store, ptrs, k, window_of(window, now));
}

int rate_hit(struct app *a, const char *what, long limit, long window,
    time_t now, long *retry_after)
{
	char key[APP_KEY_HEX + 1];
	long long n;

	app_key(a, "rate", what, key);
	if ((n = add_hits(a, key, window_of(window, now), window, 1)) < 0)
		return -1;
	first_write(a, n, 1, now);
	return over(n, limit, window, now, retry_after);
}

/* Hits held in memory at most: a 64th of the limit, so that the few
 * processes of a responder together overshoot it by a few per cent at
 * worst; 1 (every hit written) below a limit of 128. */
static long batch_size(long limit)
{
	long k = limit / 64;

	return k < 1 ? 1 : k > RATE_BATCH_MAX ? RATE_BATCH_MAX : k;
}

static unsigned int slot_index(const char *what, long window)
{
	unsigned int h = 2166136261u ^ (unsigned int)window;

	for (; *what; what++)
		h = (h ^ (unsigned char)*what) * 16777619u;
	return h % RATE_SLOTS;
}

/* Writes what a slot holds: its owner left or another key takes it. */
static void slot_flush(struct app *a, struct rate_slot *sl)
{
	if (sl->what[0] && sl->pending > 0)
		add_hits(a, sl->key, sl->win, sl->window, sl->pending);
	sl->pending = 0;
}

static struct rate_slot *slot_for(struct app *a, const char *what, long window)
{
	struct rate_slot *sl;

	if (strlen(what) >= RATE_WHAT_MAX)
		return NULL;
	if (a->rate_cache == NULL) {
		if ((a->rate_cache = calloc(1, sizeof(*a->rate_cache))) == NULL)
			return NULL;
		app_on_close(a, rate_cache_close);
	}
	sl = &a->rate_cache->slot[slot_index(what, window)];
	if (sl->window == window && !strcmp(sl->what, what))
		return sl;
	slot_flush(a, sl);
	memset(sl, 0, sizeof(*sl));
	strcpy(sl->what, what);
	app_key(a, "rate", what, sl->key);
	sl->window = window;
	sl->win = -1;
	return sl;
}

int rate_hit_batched(struct app *a, const char *what, long limit,
    long window, time_t now, long *retry_after)
{
	long long win = window_of(window, now), n;
	struct rate_slot *sl = slot_for(a, what, window);
	long k;

	if (sl == NULL)
		return rate_hit(a, what, limit, window, now, retry_after);
	if (sl->win != win) {
		/* Hits still pending belong to a window that has ended. */
		sl->win = win;
		sl->known = 0;
		sl->pending = 0;
		sl->written = 0;
	}
	/* Held here only while well below the limit, less than the batch,
	 * and within the second of the last write (which read the count). */
	if (sl->written == now && sl->pending + 1 < batch_size(limit) &&
	    sl->known + sl->pending + 1 <= limit / 2) {
		sl->pending++;
		return 0;
	}
	k = sl->pending + 1;
	if ((n = add_hits(a, sl->key, win, window, k)) < 0)
		return -1;
	sl->pending = 0;
	sl->known = n;
	sl->written = now;
	first_write(a, n, k, now);
	return over(n, limit, window, now, retry_after);
}

void rate_cache_close(struct app *a)
{
	size_t i;

	if (a->rate_cache == NULL)
		return;
	for (i = 0; i < RATE_SLOTS; i++)
		slot_flush(a, &a->rate_cache->slot[i]);
	free(a->rate_cache);
	a->rate_cache = NULL;
}

int rate_refund(struct app *a, const char *what, long window, time_t now)
{
	char key[APP_KEY_HEX + 1];

	app_key(a, "rate", what, key);
	return store_rate_refund(a->store, key, window_of(window, now));
}

int rate_prune(struct app *a, time_t now)
{
	return store_rate_prune(a->store, (long long)now);
}
