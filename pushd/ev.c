#include "ev.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#define EV_BATCH 256

uint64_t ev_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The loop's clock: a test's, or the monotonic one (a loop made without
 * ev_init has none). */
static uint64_t ev_now_clock(const struct ev *ev)
{
	return ev->clock ? ev->clock() : ev_clock();
}

int ev_init(struct ev *ev)
{
	*ev = (struct ev){ .epfd = -1, .clock = ev_clock };
	ev->epfd = epoll_create1(EPOLL_CLOEXEC);
	ev->now = ev_clock();
	return ev->epfd == -1 ? -1 : 0;
}

static void run_deferred(struct ev *ev)
{
	size_t i;

	/* A deferred function may defer more: walk by index, not a copy. */
	for (i = 0; i < ev->ndefer; i++)
		ev->defer[i].fn(ev->defer[i].p);
	ev->ndefer = 0;
}

void ev_flush_deferred(struct ev *ev)
{
	run_deferred(ev);
}

void ev_free(struct ev *ev)
{
	run_deferred(ev);
	free(ev->defer);
	free(ev->heap);
	if (ev->epfd != -1)
		close(ev->epfd);
	*ev = (struct ev){ .epfd = -1, .clock = ev_clock };
}

int ev_io_add(struct ev *ev, struct ev_io *io, int fd, uint32_t events,
    void (*cb)(struct ev *, struct ev_io *, uint32_t))
{
	struct epoll_event e = { .events = events, .data.ptr = io };

	io->fd = fd;
	io->events = events;
	io->cb = cb;
	if (epoll_ctl(ev->epfd, EPOLL_CTL_ADD, fd, &e) == -1) {
		io->fd = -1;
		return -1;
	}
	return 0;
}

int ev_io_mod(struct ev *ev, struct ev_io *io, uint32_t events)
{
	struct epoll_event e = { .events = events, .data.ptr = io };

	if (io->fd < 0)
		return -1;
	if (events == io->events)
		return 0;
	if (epoll_ctl(ev->epfd, EPOLL_CTL_MOD, io->fd, &e) == -1)
		return -1;
	io->events = events;
	return 0;
}

void ev_io_del(struct ev *ev, struct ev_io *io)
{
	if (io->fd < 0)
		return;
	epoll_ctl(ev->epfd, EPOLL_CTL_DEL, io->fd, NULL);
	io->fd = -1;
}

/* -- timers: a binary min-heap on when, each timer knowing its index ----- */

static void heap_swap(struct ev *ev, size_t a, size_t b)
{
	struct ev_timer *t = ev->heap[a];

	ev->heap[a] = ev->heap[b];
	ev->heap[b] = t;
	ev->heap[a]->idx = (int)a;
	ev->heap[b]->idx = (int)b;
}

static void heap_up(struct ev *ev, size_t i)
{
	while (i > 0 && ev->heap[(i - 1) / 2]->when > ev->heap[i]->when) {
		heap_swap(ev, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static void heap_down(struct ev *ev, size_t i)
{
	size_t l, m;

	for (;;) {
		l = 2 * i + 1;
		m = i;
		if (l < ev->nheap && ev->heap[l]->when < ev->heap[m]->when)
			m = l;
		if (l + 1 < ev->nheap && ev->heap[l + 1]->when < ev->heap[m]->when)
			m = l + 1;
		if (m == i)
			return;
		heap_swap(ev, i, m);
		i = m;
	}
}

void ev_timer_init(struct ev_timer *t, void (*cb)(struct ev *, struct ev_timer *))
{
	t->when = 0;
	t->idx = -1;
	t->cb = cb;
}

void ev_timer_stop(struct ev *ev, struct ev_timer *t)
{
	size_t i = (size_t)t->idx;

	if (t->idx < 0)
		return;
	t->idx = -1;
	if (i == --ev->nheap)
		return;
	ev->heap[i] = ev->heap[ev->nheap];
	ev->heap[i]->idx = (int)i;
	heap_up(ev, i);
	heap_down(ev, (size_t)ev->heap[i]->idx);
}

int ev_timer_set(struct ev *ev, struct ev_timer *t, uint64_t ms)
{
	struct ev_timer **h;
	size_t cap;

	ev_timer_stop(ev, t);
	if (ev->nheap == ev->capheap) {
		cap = ev->capheap ? 2 * ev->capheap : 64;
		if ((h = realloc(ev->heap, cap * sizeof(*h))) == NULL)
			return -1;
		ev->heap = h;
		ev->capheap = cap;
	}
	t->when = ev_now_clock(ev) + ms;
	t->idx = (int)ev->nheap;
	ev->heap[ev->nheap++] = t;
	heap_up(ev, (size_t)t->idx);
	return 0;
}

int ev_defer(struct ev *ev, void (*fn)(void *), void *p)
{
	struct ev_defer_item *d;
	size_t cap;

	if (ev->ndefer == ev->capdefer) {
		cap = ev->capdefer ? 2 * ev->capdefer : 64;
		if ((d = realloc(ev->defer, cap * sizeof(*d))) == NULL) {
			fn(p);
			return -1;
		}
		ev->defer = d;
		ev->capdefer = cap;
	}
	ev->defer[ev->ndefer++] = (struct ev_defer_item){ fn, p };
	return 0;
}

/* The epoll timeout: until the earliest timer, or forever. */
static int next_timeout(struct ev *ev)
{
	uint64_t now;

	if (ev->nheap == 0)
		return -1;
	now = ev_now_clock(ev);
	if (ev->heap[0]->when <= now)
		return 0;
	return ev->heap[0]->when - now > 3600000 ? 3600000 :
	    (int)(ev->heap[0]->when - now);
}

static void run_timers(struct ev *ev)
{
	struct ev_timer *t;
	size_t budget = ev->nheap;

	/* At most the timers due now: one that re-arms itself for 0 ms runs
	 * again on the next turn, after I/O, not in a loop here. */
	ev->now = ev_now_clock(ev);
	while (budget-- && ev->nheap && ev->heap[0]->when <= ev->now) {
		t = ev->heap[0];
		ev_timer_stop(ev, t);
		t->cb(ev, t);
	}
}

void ev_run_timers(struct ev *ev)
{
	run_timers(ev);
	run_deferred(ev);
}

int ev_run(struct ev *ev)
{
	struct epoll_event evs[EV_BATCH];
	struct ev_io *io;
	int i, n;

	while (!ev->stop) {
		n = epoll_wait(ev->epfd, evs, EV_BATCH, next_timeout(ev));
		if (n == -1 && errno != EINTR)
			return -1;
		ev->now = ev_now_clock(ev);
		for (i = 0; i < n; i++) {
			io = evs[i].data.ptr;
			/* Removed by an earlier callback of this batch. */
			if (io->fd >= 0)
				io->cb(ev, io, evs[i].events);
		}
		ev_run_timers(ev);
	}
	return 0;
}

void ev_stop(struct ev *ev)
{
	ev->stop = 1;
}
