/* ev: timers in order, stopped timers silent, I/O callbacks, deferred
 * frees after the batch. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <cmocka.h>

#include "ev.h"

#define container_of(p, type, member) \
	((type *)(void *)((char *)(p) - offsetof(type, member)))

struct probe {
	struct ev_timer t;
	int n;
	int *log, *nlog;
	uint64_t when;
};

static void on_probe(struct ev *ev, struct ev_timer *t)
{
	struct probe *p = container_of(t, struct probe, t);

	p->log[(*p->nlog)++] = p->n;
	p->when = ev_clock();
}

static void on_stop(struct ev *ev, struct ev_timer *t)
{
	ev_stop(ev);
}

static void timers_in_order(void **state)
{
	struct ev ev;
	struct probe p[4];
	struct ev_timer stop;
	/* 100 ms apart: under valgrind, setting the four takes tens of ms. */
	static const int ms[4] = { 300, 100, 200, 250 };
	int log[4], nlog = 0, i;

	assert_int_equal(ev_init(&ev), 0);
	for (i = 0; i < 4; i++) {
		p[i] = (struct probe){ .n = i, .log = log, .nlog = &nlog };
		ev_timer_init(&p[i].t, on_probe);
		assert_int_equal(ev_timer_set(&ev, &p[i].t, (uint64_t)ms[i]), 0);
	}
	ev_timer_stop(&ev, &p[3].t);
	assert_false(ev_timer_armed(&p[3].t));
	ev_timer_init(&stop, on_stop);
	ev_timer_set(&ev, &stop, 400);
	assert_int_equal(ev_run(&ev), 0);
	assert_int_equal(nlog, 3);
	assert_int_equal(log[0], 1);
	assert_int_equal(log[1], 2);
	assert_int_equal(log[2], 0);
	ev_free(&ev);
}

static void many_timers(void **state)
{
	struct ev ev;
	struct probe *p = calloc(500, sizeof(*p));
	struct ev_timer stop;
	int *log = calloc(500, sizeof(int)), nlog = 0, i;

	assert_non_null(p);
	assert_int_equal(ev_init(&ev), 0);
	srand(7);
	for (i = 0; i < 500; i++) {
		p[i] = (struct probe){ .n = i, .log = log, .nlog = &nlog };
		ev_timer_init(&p[i].t, on_probe);
		ev_timer_set(&ev, &p[i].t, (uint64_t)(rand() % 40));
	}
	for (i = 0; i < 500; i += 3)      /* stops from all over the heap */
		ev_timer_stop(&ev, &p[i].t);
	ev_timer_init(&stop, on_stop);
	ev_timer_set(&ev, &stop, 80);
	ev_run(&ev);
	assert_int_equal(nlog, 500 - 167);
	for (i = 1; i < nlog; i++)
		assert_true(p[log[i - 1]].t.when <= p[log[i]].t.when);
	ev_free(&ev);
	free(p);
	free(log);
}

struct reader {
	struct ev_io io;
	int fds[2];
	int got, freed_during_batch;
	int *freed;
};

static void deferred(void *p)
{
	*(int *)p = 1;
}

static void on_readable(struct ev *ev, struct ev_io *io, uint32_t revents)
{
	struct reader *r = container_of(io, struct reader, io);
	char c;

	assert_int_equal(read(io->fd, &c, 1), 1);
	r->got = c;
	ev_io_del(ev, io);
	ev_defer(ev, deferred, r->freed);
	r->freed_during_batch = *r->freed;
	ev_stop(ev);
}

static void io_and_defer(void **state)
{
	struct ev ev;
	struct reader r = { .got = 0 };
	int freed = 0;

	r.freed = &freed;
	assert_int_equal(pipe(r.fds), 0);
	assert_int_equal(ev_init(&ev), 0);
	assert_int_equal(ev_io_add(&ev, &r.io, r.fds[0], EPOLLIN, on_readable), 0);
	assert_int_equal(write(r.fds[1], "x", 1), 1);
	ev_run(&ev);
	assert_int_equal(r.got, 'x');
	assert_int_equal(r.io.fd, -1);
	assert_int_equal(r.freed_during_batch, 0);   /* not inside the batch */
	assert_int_equal(freed, 1);                  /* but right after it */
	close(r.fds[0]);
	close(r.fds[1]);
	ev_free(&ev);
}

/* A timer that re-arms itself for 0 ms does not keep I/O from running. */
static void on_spin(struct ev *ev, struct ev_timer *t)
{
	ev_timer_set(ev, t, 0);
}

static void zero_timer_does_not_starve(void **state)
{
	struct ev ev;
	struct ev_timer spin, stop;
	struct reader r = { .got = 0 };
	int freed = 0;

	r.freed = &freed;
	assert_int_equal(pipe(r.fds), 0);
	assert_int_equal(ev_init(&ev), 0);
	ev_io_add(&ev, &r.io, r.fds[0], EPOLLIN, on_readable);
	ev_timer_init(&spin, on_spin);
	ev_timer_set(&ev, &spin, 0);
	ev_timer_init(&stop, on_stop);
	ev_timer_set(&ev, &stop, 2000);
	assert_int_equal(write(r.fds[1], "y", 1), 1);
	ev_run(&ev);
	assert_int_equal(r.got, 'y');
	close(r.fds[0]);
	close(r.fds[1]);
	ev_free(&ev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(timers_in_order),
		cmocka_unit_test(many_timers),
		cmocka_unit_test(io_and_defer),
		cmocka_unit_test(zero_timer_does_not_starve),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
