/* dbq: pushd's database work, off its loop. A statement to PostgreSQL
 * over the network, a frozen server or a SQLite file locked by a
 * responder would otherwise stop every stream for as long as it waits;
 * here one thread with its own connection runs the work in the order it
 * was asked for, and each job's done runs back on the loop.
 *
 * A job carries copies of what its work needs (an account's key, never
 * a pointer to the account): by the time done runs, what asked for it may
 * have ended; done looks it up again, and frees the job.
 *
 * Without a thread (dbq_start not called: the unit tests) the work runs
 * at once on the loop's own store and done after the batch of events in
 * hand, so that done never runs inside the call that asked for it. */
#ifndef POSTERN_PUSHD_DBQ_H
#define POSTERN_PUSHD_DBQ_H

#include <stdint.h>

struct app;
struct pushd;
struct store;

/* Jobs waiting or out at most: past it, dbq_push refuses (a database
 * that stopped answering; the renewals, heartbeats, flushes, session
 * checks and lease takes keep one each out at a time, and what else piles
 * up — changes told to other nodes, Web Push's reads — stops here). */
#define DBQ_MAX 4096
/* Seconds pushd waits for the thread at shutdown. */
#define DBQ_STOP_S 5

struct dbq_job {
	struct dbq_job *next;
	struct pushd *pd;
	/* For work, set when queued: the process as the thread sees it (its
	 * store is work's st), for what takes a struct app (sessions, rate
	 * limits): the configuration and secret, with caches of the
	 * thread's own (without the thread, the loop's). */
	struct app *app;
	uint8_t request;             /* queued by dbq_push_request */
	/* On the database thread, with its store: nothing of the loop's. */
	void (*work)(struct dbq_job *j, struct store *st);
	/* On the loop, once work ran (or at shutdown, with pd->stopping set
	 * and work not run when the store never opened): frees j. */
	void (*done)(struct dbq_job *j);
	int rc;                      /* work's to set, done's to read */
};

/* Opens the thread's own connection to state_db and starts it: 0, or -1
 * (logged; pushd then runs its database work on the loop). */
int dbq_start(struct pushd *pd);
/* Queues j (work and done set): 0, or -1 when DBQ_MAX jobs are out (j is
 * not queued; the caller frees it). */
int dbq_push(struct pushd *pd, struct dbq_job *j);
/* The same, ahead of every job waiting and past DBQ_MAX: a lease renewal
 * or a heartbeat, which must not wait behind bulk work (a renewal that
 * waits 6 s fences the node). */
int dbq_push_first(struct pushd *pd, struct dbq_job *j);
/* The same, in order, neither bound by DBQ_MAX nor counted in it: a
 * request's (route.h). The requests pushd holds bound these already
 * (PUSHD_CONN_REQS on each of at most max_conns connections; a request
 * that ends cancels its job), and they must not be refused when
 * thousands of tabs come back at once, nor crowd out the node's own. */
void dbq_push_request(struct pushd *pd, struct dbq_job *j);
/* A job whose work has not begun is taken out of the queue: its done
 * runs after the batch with rc -1 and its work never. One already begun
 * or done is left as it is. */
void dbq_cancel(struct pushd *pd, struct dbq_job *j);
/* At shutdown, after the accounts ended: the thread runs what is queued
 * (their rows released), the dones run, the connection closes. */
void dbq_stop(struct pushd *pd);

#endif
