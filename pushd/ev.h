/* ev: pushd's event loop, one epoll set and a binary heap of timers.
 * Callbacks run on the one thread; an object that a callback closes is
 * freed through ev_defer, after the batch of events in hand, so that no
 * event still queued can reach freed memory.
 * (Lifetime: pushd.h.) */
#ifndef POSTERN_EV_H
#define POSTERN_EV_H

#include <stddef.h>
#include <stdint.h>

struct ev;

struct ev_io {
	int fd;                 /* -1 once removed */
	uint32_t events;        /* EPOLLIN, EPOLLOUT, ... */
	void (*cb)(struct ev *ev, struct ev_io *io, uint32_t revents);
};

struct ev_timer {
	uint64_t when;          /* ev_now() milliseconds */
	int idx;                /* place in the heap, -1 when not armed */
	void (*cb)(struct ev *ev, struct ev_timer *t);
};

struct ev_defer_item {
	void (*fn)(void *p);
	void *p;
};

struct ev {
	int epfd;
	int stop;
	struct ev_timer **heap;
	size_t nheap, capheap;
	struct ev_defer_item *defer;
	size_t ndefer, capdefer;
	uint64_t now;           /* cached at each wake-up */
	/* Monotonic milliseconds: ev_clock, or a test's own clock. */
	uint64_t (*clock)(void);
};

/* 0, or -1 when epoll cannot be created. */
int ev_init(struct ev *ev);
/* Runs what is still deferred and frees the loop (not the objects). */
void ev_free(struct ev *ev);
/* Monotonic milliseconds. */
uint64_t ev_clock(void);

/* Watches fd for events with io->cb: 0 or -1. */
int ev_io_add(struct ev *ev, struct ev_io *io, int fd, uint32_t events,
    void (*cb)(struct ev *, struct ev_io *, uint32_t));
int ev_io_mod(struct ev *ev, struct ev_io *io, uint32_t events);
/* Stops watching (does not close the descriptor); io->fd becomes -1. */
void ev_io_del(struct ev *ev, struct ev_io *io);

void ev_timer_init(struct ev_timer *t, void (*cb)(struct ev *, struct ev_timer *));
/* (Re)arms t to fire once after ms milliseconds: 0, or -1 out of memory. */
int ev_timer_set(struct ev *ev, struct ev_timer *t, uint64_t ms);
void ev_timer_stop(struct ev *ev, struct ev_timer *t);
static inline int ev_timer_armed(const struct ev_timer *t) { return t->idx >= 0; }

/* Calls fn(p) after the current batch of events: 0, or -1 (then fn(p) has
 * already run, at once). */
int ev_defer(struct ev *ev, void (*fn)(void *), void *p);

/* Runs what was deferred, now (at shutdown). */
void ev_flush_deferred(struct ev *ev);

/* One turn without I/O: the timers due by ev->clock(), then what they
 * deferred. ev_run's own turn; a test drives its clock with it. */
void ev_run_timers(struct ev *ev);

/* Runs until ev_stop: 0, or -1 when epoll fails. */
int ev_run(struct ev *ev);
void ev_stop(struct ev *ev);

#endif
