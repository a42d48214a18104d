/* seat: what one client holds of a pool of processes (pool.c, -n N).
 * Under Apache a process that answers a download its reader never reads
 * waits for the send deadline (30 s; Apache keeps only 4 MiB of an
 * answer), and the per-address connection cap (50) is above a pool (4).
 * So on such routes (ROUTE_HOLDS) a client never takes a pool's last free
 * process while it holds another one of it: whatever one client does, one
 * process stays for the others. Each process of the pool has a seat in a table shared by them
 * all (a shared mapping made before the fork): the hash of the client it
 * serves, or 0. A process that dies leaves its seat to the next one. */
#ifndef POSTERN_SEAT_H
#define POSTERN_SEAT_H

#include <stdint.h>

#define SEAT_MAX 64

/* In the pool's parent, before the children start: a table of n seats
 * (1 to SEAT_MAX). 0, or -1 (then no seat is ever refused). */
int seat_open(int n);
/* In a child: seat i of the table is its own. In the parent: seat i is
 * free again (its process ended). */
void seat_mine(int i);
void seat_free(int i);
/* In a child, before a request of client (its client_net) is served:
 * 0 when the seat is taken, -1 when it would be the pool's last free
 * process and the client already holds another one (the request is
 * then refused). Outside a pool always 0. */
int seat_take(const char *client);
/* The request is done: the seat is free. */
void seat_leave(void);

/* For the unit test: the rule, given the other seats' values. */
int seat_allowed(const uint64_t *others, int n_others, uint64_t me);
uint64_t seat_hash(const char *client);

#endif
