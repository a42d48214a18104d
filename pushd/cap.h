/* cap: event streams counted per session and per client address, so
 * that one cookie or one address cannot hold every descriptor of the web
 * server and pushd. A stream is counted under two keys; a session's
 * streams are also kept in the order they opened, so that a new one over
 * the session's cap can take the place of the oldest (a browser restarted
 * without closing its old connection is never locked out), but only once
 * that one has been open a while (a burst is refused instead). Addresses
 * are never taken from: over its cap an address is refused, so that one
 * person behind a shared address cannot end another's stream.
 *
 * Keys may be chosen by the client: the table's hash is keyed by a random
 * secret of the process, so they cannot be made to collide. */
#ifndef POSTERN_CAP_H
#define POSTERN_CAP_H

#include <stddef.h>
#include <stdint.h>

#define CAP_BUCKETS_MIN 256     /* chains of a table at first (a power of 2) */
#define CAP_LOAD 2              /* keys a chain before the table doubles */
#define CAP_KEY_MAX 64          /* a session id, an address's key */
#define CAP_SEED_LEN 32

struct cap_key;

/* One stream, embedded in its tab. */
struct cap_stream {
	struct cap_stream *next, *prev;  /* its session's, oldest first */
	struct cap_key *sess, *addr;     /* NULL while not counted */
	uint64_t since;                  /* ms (ev_clock) when it opened */
};

/* Keys by their hash: nb chains, doubled as the keys grow past CAP_LOAD
 * a chain (never shrunk: its size is the most keys there were). */
struct cap_table {
	struct cap_key **b;
	unsigned nb, n;
};

struct cap {
	struct cap_table sess, addr;
	unsigned char seed[CAP_SEED_LEN];
	unsigned per_sess, per_addr;     /* 0: no cap */
	uint64_t replace_after_ms;       /* an older stream may be replaced */
	unsigned nkeys;
};

enum cap_verdict {
	CAP_OPEN,            /* under both caps */
	CAP_REPLACE,         /* opens in the place of *oldest, which must end */
	CAP_SESSION_FULL,    /* refused: the session's streams are all young */
	CAP_ADDRESS_FULL     /* refused: the address is at its cap */
};

/* Sets the caps and a fresh random seed: 0, or -1 without randomness or
 * memory (nothing to free then). */
int cap_init(struct cap *c, unsigned per_sess, unsigned per_addr,
    uint64_t replace_after_ms);
/* Frees the keys (their streams are not touched). */
void cap_free(struct cap *c);

/* What a new stream of session sess from address addr would get at now.
 * With CAP_REPLACE, *oldest is the stream to end; refused, *retry_s is
 * the seconds worth waiting (at least 1). Counts nothing. */
enum cap_verdict cap_admit(const struct cap *c, const char *sess,
    const char *addr, uint64_t now, struct cap_stream **oldest,
    unsigned *retry_s);
/* Counts s under both keys, the newest of its session: 0, or -1 out of
 * memory (nothing counted). Keys longer than CAP_KEY_MAX are cut. */
int cap_add(struct cap *c, struct cap_stream *s, const char *sess,
    const char *addr, uint64_t now);
/* Uncounts s (a no-op when it is not counted); a key with no stream left
 * is freed. */
void cap_remove(struct cap *c, struct cap_stream *s);
/* The streams counted under a session or an address key. */
unsigned cap_session_count(const struct cap *c, const char *sess);
unsigned cap_address_count(const struct cap *c, const char *addr);

#endif
