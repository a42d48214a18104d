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

struct pushd;
struct store;

/* Jobs waiting or out at most: past it, dbq_push refuses (a database
 * that stopped answering; every producer also keeps one of its own out
 * at a time, so only the changes told to other nodes can pile up). */
#define DBQ_MAX 4096

struct dbq_job {
	struct dbq_job *next;
	struct pushd *pd;
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
/* How many jobs are waiting or out. */
unsigned dbq_pending(const struct pushd *pd);
/* At shutdown, after the accounts ended: the thread runs what is queued
 * (their rows released), the dones run, the connection closes. */
void dbq_stop(struct pushd *pd);

#endif
