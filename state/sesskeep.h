/* sesskeep: session rows a process keeps between its requests (private to
 * state/), so that a lookup on a database other nodes share costs no round
 * trip. Only a table: when a kept row may be trusted, and what the other
 * nodes told that ends one, is store_sessions.c's. Direct-mapped by id;
 * each row one allocation, its strings and blobs copied in. */
#ifndef POSTERN_STATE_SESSKEEP_H
#define POSTERN_STATE_SESSKEEP_H

#include "store.h"

/* Rows kept at most: one process of a pool serves a few hundred sessions
 * in a busy minute; a row is about 600 bytes. */
#define SESSKEEP_SLOTS 256

struct sesskeep;

struct sesskeep *sesskeep_new(void);
void sesskeep_free(struct sesskeep *k);
/* The row kept for id (as store_sess_get fills it, id and account set),
 * valid until the next call that changes k; NULL when none. */
const struct store_sess_row *sesskeep_find(struct sesskeep *k, const char *id);
/* Keeps a copy of r (id and account set), in place of what its slot held;
 * one that cannot be copied is simply not kept. */
void sesskeep_put(struct sesskeep *k, const struct store_sess_row *r);
/* Forgets id's row; every row of account; every row. */
void sesskeep_drop(struct sesskeep *k, const char *id);
void sesskeep_drop_account(struct sesskeep *k, const char *account);
void sesskeep_clear(struct sesskeep *k);
/* What STORE_CHAN_SESSIONS told ("s <id>", "a <account>", "*"; anything
 * else forgets every row, to be safe). */
void sesskeep_told(struct sesskeep *k, const char *payload);

#endif
