#define _GNU_SOURCE 1
#include "dbq.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <sys/eventfd.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "app.h"
#include "log.h"
#include "pushd.h"
#include "store.h"

struct dbq {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct dbq_job *todo, **todo_tail;   /* for the thread */
	struct dbq_job *done, **done_tail;   /* back to the loop */
	int stop;
	int efd;                             /* the thread wakes the loop */
	struct store *st;                    /* the thread's own */
	/* The thread's view of the process (each job's app): the loop's
	 * configuration and secret, read only; its own store and caches. */
	struct app app;
	/* The loop stopped waiting for the thread (dbq_stop): it runs
	 * nothing more, whatever is queued. */
	int abandoned;
	struct ev_io io;
};

static void *dbq_thread(void *p)
{
	struct dbq *q = p;
	struct dbq_job *j;
	uint64_t one = 1;

	pthread_mutex_lock(&q->mu);
	for (;;) {
		while (q->todo == NULL && !q->stop)
			pthread_cond_wait(&q->cv, &q->mu);
		if ((j = q->todo) == NULL || q->abandoned)
			break;          /* stopping, and nothing left to run */
		if ((q->todo = j->next) == NULL)
			q->todo_tail = &q->todo;
		pthread_mutex_unlock(&q->mu);
		j->next = NULL;
		j->work(j, q->st);
		pthread_mutex_lock(&q->mu);
		*q->done_tail = j;
		q->done_tail = &j->next;
		/* A full counter (never, at 2^64) only means the loop is
		 * already woken. */
		if (write(q->efd, &one, sizeof(one)) == -1 && errno != EAGAIN)
			log_warn("pushd: the database thread cannot wake the loop");
	}
	/* The budget's batched hits are written, on the thread's store
	 * (not when the loop went on without it: the configuration the
	 * thread's app shares may be gone). */
	if (!q->abandoned) {
		pthread_mutex_unlock(&q->mu);
		app_close_caches(&q->app);
	} else
		pthread_mutex_unlock(&q->mu);
	return NULL;
}

static void dbq_done(struct dbq_job *j)
{
	if (!j->request)
		j->pd->dbq_out--;
	j->done(j);
}

/* The dones in hand, in the order the work ran. */
static void dbq_finish(struct pushd *pd)
{
	struct dbq *q = pd->dbq;
	struct dbq_job *j, *next;

	for (;;) {
		pthread_mutex_lock(&q->mu);
		j = q->done;
		q->done = NULL;
		q->done_tail = &q->done;
		pthread_mutex_unlock(&q->mu);
		if (j == NULL)
			return;
		for (; j; j = next) {
			next = j->next;
			dbq_done(j);
		}
	}
}

static void dbq_ready(struct ev *ev, struct ev_io *io, uint32_t revents)
{
	struct pushd *pd = pushd_of(ev);
	uint64_t n;

	(void)io;
	(void)revents;
	if (read(pd->dbq->efd, &n, sizeof(n)) == -1 && errno != EAGAIN)
		log_warn("pushd: the database thread's wake-up was not read");
	dbq_finish(pd);
}

static void dbq_free(struct dbq *q)
{
	if (q->efd != -1)
		close(q->efd);
	/* What work run after the thread ended cached (dbq_stop's dones). */
	app_close_caches(&q->app);
	store_close(q->st);
	pthread_cond_destroy(&q->cv);
	pthread_mutex_destroy(&q->mu);
	free(q);
}

int dbq_start(struct pushd *pd)
{
	struct dbq *q = calloc(1, sizeof(*q));
	char err[256];

	if (q == NULL)
		return -1;
	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->cv, NULL);
	q->todo_tail = &q->todo;
	q->done_tail = &q->done;
	q->io.fd = -1;
	q->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (q->efd == -1 ||
	    store_open(&q->st, pd->app.cfg.state_db, err, sizeof(err)) == -1) {
		log_err("pushd: the database thread has no connection (%s)",
		    q->efd == -1 ? "no eventfd" : err);
		dbq_free(q);
		return -1;
	}
	store_set_node(q->st, pd->app.cfg.node_name);
	q->app = pd->app;
	q->app.store = q->st;
	q->app.up = NULL;
	q->app.rate_cache = NULL;
	q->app.sess_cache = NULL;
	q->app.n_closers = 0;
	if (ev_io_add(&pd->ev, &q->io, q->efd, EPOLLIN, dbq_ready) == -1 ||
	    pthread_create(&q->thread, NULL, dbq_thread, q) != 0) {
		log_err("pushd: the database thread does not start");
		if (q->io.fd != -1)
			ev_io_del(&pd->ev, &q->io);
		dbq_free(q);
		return -1;
	}
	pd->dbq = q;
	return 0;
}

/* Without the thread: done after the batch in hand. */
static void dbq_later(void *p)
{
	dbq_done(p);
}

static int dbq_queue(struct pushd *pd, struct dbq_job *j, int first,
    int request)
{
	struct dbq *q = pd->dbq;

	j->pd = pd;             /* a refused job's done may still need it */
	j->app = q ? &q->app : &pd->app;
	j->request = (uint8_t)request;
	if (pd->dbq_out >= DBQ_MAX && !first && !request)
		return -1;
	j->next = NULL;
	if (!request)
		pd->dbq_out++;
	if (q == NULL) {
		if (pd->app.store)
			j->work(j, pd->app.store);
		else
			j->rc = -1;
		ev_defer(&pd->ev, dbq_later, j);
		return 0;
	}
	pthread_mutex_lock(&q->mu);
	if (q->stop) {
		/* At shutdown, from a done (the thread has ended): the work
		 * runs here, its done with the rest (dbq_finish). */
		pthread_mutex_unlock(&q->mu);
		j->work(j, q->st);
		pthread_mutex_lock(&q->mu);
		*q->done_tail = j;
		q->done_tail = &j->next;
	} else if (first) {
		if ((j->next = q->todo) == NULL)
			q->todo_tail = &j->next;
		q->todo = j;
		pthread_cond_signal(&q->cv);
	} else {
		*q->todo_tail = j;
		q->todo_tail = &j->next;
		pthread_cond_signal(&q->cv);
	}
	pthread_mutex_unlock(&q->mu);
	return 0;
}

int dbq_push(struct pushd *pd, struct dbq_job *j)
{
	return dbq_queue(pd, j, 0, 0);
}

int dbq_push_first(struct pushd *pd, struct dbq_job *j)
{
	return dbq_queue(pd, j, 1, 0);
}

void dbq_push_request(struct pushd *pd, struct dbq_job *j)
{
	dbq_queue(pd, j, 0, 1);
}

void dbq_cancel(struct pushd *pd, struct dbq_job *j)
{
	struct dbq *q = pd->dbq;
	struct dbq_job **pp, *prev = NULL;
	uint64_t one = 1;

	if (q == NULL)
		return;         /* without the thread its work ran already */
	pthread_mutex_lock(&q->mu);
	for (pp = &q->todo; *pp && *pp != j; pp = &(*pp)->next)
		prev = *pp;
	if (*pp == j) {
		if ((*pp = j->next) == NULL)
			q->todo_tail = prev ? &prev->next : &q->todo;
		j->next = NULL;
		j->rc = -1;
		*q->done_tail = j;
		q->done_tail = &j->next;
		if (write(q->efd, &one, sizeof(one)) == -1 && errno != EAGAIN)
			log_warn("pushd: the database thread cannot wake the loop");
	}
	pthread_mutex_unlock(&q->mu);
}

void dbq_stop(struct pushd *pd)
{
	struct dbq *q = pd->dbq;

	if (q == NULL)
		return;
	struct timespec until;

	pthread_mutex_lock(&q->mu);
	q->stop = 1;
	pthread_cond_signal(&q->cv);
	pthread_mutex_unlock(&q->mu);
	/* A database that stopped answering holds the thread in a statement
	 * that never ends: pushd exits without it, its memory left to the
	 * exit (the leases lapse, the rows are cleaned up at the next
	 * start). */
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += DBQ_STOP_S;
	if (pthread_timedjoin_np(q->thread, NULL, &until) != 0) {
		log_warn("pushd: the database did not answer within %d s at "
		    "shutdown: what was left for it is not written", DBQ_STOP_S);
		pthread_mutex_lock(&q->mu);
		q->abandoned = 1;
		pthread_mutex_unlock(&q->mu);
		ev_io_del(&pd->ev, &q->io);
		pd->dbq = NULL;
		return;
	}
	dbq_finish(pd);
	ev_io_del(&pd->ev, &q->io);
	dbq_free(q);
	pd->dbq = NULL;
}
