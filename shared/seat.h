/* seat: what each process of a pool (pool.c, -n N) is doing, in a table
 * the pool shares, and the two rules that keep one client from holding
 * a whole pool with answers it never reads.
 *
 * Under Apache an answer nobody reads holds its process until the send
 * deadline (30 s) once Apache has taken 4 MiB of it, and one address may
 * have 50 connections (mod_qos) against a pool of 4. A stalled answer is
 * one whose connection to the web server took nothing for SEAT_STALL_MS.
 * Only while the pool is full and a request waits for a process:
 *   - a process whose answer is stalled, while its client holds another
 *     process, gives the answer up (seat_wait_writable), one at a time;
 *   - the last free process is not given to a client that holds a
 *     stalled one (seat_take: a 429).
 * A slow reader also looks stalled at times (Apache stops taking the
 * answer while it writes its 4 MiB out to the client), so neither rule
 * acts unless someone waits: then one client's second process gives way
 * rather than another person waiting up to 30 s. Outside a pool
 * (lighttpd's max-procs, CGI) there is no table and no rule. */
#ifndef POSTERN_SEAT_H
#define POSTERN_SEAT_H

#include <stdint.h>

#define SEAT_MAX 64
/* How long the request that waits may wait for a stalled answer to give
 * way: a second. A slow reader may go that long without progress too
 * (gaps of 1.2 s at 1 MiB/s under Apache), which is why the rules act
 * only while someone waits. */
#define SEAT_STALL_MS 1000

struct seat {
	uint64_t client;         /* 0 free, SEAT_BUSY before the client is known */
	int64_t stalled_ms;      /* since when its answer took nothing, 0, or
	                          * SEAT_YIELDED */
};
#define SEAT_BUSY 1
#define SEAT_YIELDED (-1)    /* the answer was given up; the seat is not yet left */

/* In the pool's parent, before the children start: a table of n seats
 * (1 to SEAT_MAX). 0, or -1 (then no rule ever applies). */
int seat_open(int n);
/* In a child: seat i is its own. In the parent: seat i is free again
 * (its process ended). */
void seat_mine(int i);
void seat_free(int i);
/* In a child: the pool's listening socket, whose queue tells whether a
 * request waits for a process. */
void seat_listen(int fd);

/* This process is one of a pool's: the rules below can apply. */
int seat_pooled(void);
/* A request was accepted: the process is busy (its body counts too). */
void seat_busy(void);
/* The request's client (its client_net) is known: 0, or -1 when this is
 * the pool's last free process, client holds a stalled one and another
 * request waits (refuse it). Outside a pool always 0. */
int seat_take(const char *client);
/* The answer is written to its end (after FCGX_Finish_r): free. */
void seat_leave(void);

/* Before a write on fd, the connection to the web server: waits until
 * it has room. 0 then; -1 when the answer is given up (the rule above,
 * or no progress for idle_ms), fd then shut down so that nothing more
 * waits on it. Outside a pool: 0 at once. */
int seat_wait_writable(int fd, long idle_ms);

/* The rules, for the unit test, on a copy of the n seats: whether mine
 * is refused to client me, or (stalled) yields; the callers also ask
 * that a request waits. */
int seat_refuses(const struct seat *all, int n, int mine, uint64_t me,
    int64_t now_ms);
int seat_yields(const struct seat *all, int n, int mine);
uint64_t seat_hash(const char *client);

#endif
