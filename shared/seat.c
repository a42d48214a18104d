#include "seat.h"

#include <stddef.h>
#include <time.h>

#include <linux/sockios.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include "log.h"

/* The table is shared across processes: only lock-free atomics work there. */
_Static_assert(__atomic_always_lock_free(sizeof(int64_t), 0), "lock-free 64-bit atomics");

/* A write goes ahead once the socket has room for libfcgi's buffer
 * (8 KiB) with its kernel overhead. */
#define SEAT_ROOM (32 * 1024)
/* How often a waiting write looks for progress. */
#define SEAT_TICK_MS 100

static struct seat *seats;       /* shared by the pool; NULL outside one */
static int n_seats;
static int my_seat = -1;
static int listen_fd = -1;

int seat_open(int n)
{
	void *p;

	if (n < 1 || n > SEAT_MAX)
		return -1;
	p = mmap(NULL, (size_t)n * sizeof(*seats), PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	seats = p;
	n_seats = n;
	return 0;
}

void seat_mine(int i)
{
	my_seat = i;
}

void seat_free(int i)
{
	if (seats && i >= 0 && i < n_seats) {
		__atomic_store_n(&seats[i].stalled_ms, 0, __ATOMIC_SEQ_CST);
		__atomic_store_n(&seats[i].client, 0, __ATOMIC_SEQ_CST);
	}
}

void seat_listen(int fd)
{
	listen_fd = fd;
}

/* A request waits in the listening socket's queue: every process is
 * busy, else one would have taken it. */
static int someone_waits(void)
{
	struct pollfd p = { listen_fd, POLLIN, 0 };

	return listen_fd >= 0 && poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

int seat_pooled(void)
{
	return seats && my_seat >= 0 && my_seat < n_seats;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* FNV-1a, never 0 or SEAT_BUSY. */
uint64_t seat_hash(const char *client)
{
	uint64_t h = 14695981039346656037ULL;

	for (; *client; client++)
		h = (h ^ (unsigned char)*client) * 1099511628211ULL;
	return h | 2;
}

/* Every seat but mine is taken. */
static int others_busy(const struct seat *all, int n, int mine)
{
	int i;

	for (i = 0; i < n; i++)
		if (i != mine && all[i].client == 0)
			return 0;
	return 1;
}

int seat_refuses(const struct seat *all, int n, int mine, uint64_t me,
    int64_t now_ms)
{
	int i;

	if (!others_busy(all, n, mine))
		return 0;
	for (i = 0; i < n; i++)
		if (i != mine && all[i].client == me && (all[i].stalled_ms == SEAT_YIELDED ||
		    (all[i].stalled_ms > 0 && now_ms - all[i].stalled_ms >= SEAT_STALL_MS)))
			return 1;
	return 0;
}

/* Of a client's stalled answers the latest to stall yields first (the
 * higher seat on a tie), and none while another of its seats has yielded
 * and not yet left: one at a time, so that the process it frees turns the
 * client's queued requests away (seat_refuses) while the others stay
 * stalled, rather than all of them yielding to serve the client again. */
int seat_yields(const struct seat *all, int n, int mine)
{
	const struct seat *me = &all[mine];
	int i, holds = 0;

	if (!others_busy(all, n, mine))
		return 0;
	for (i = 0; i < n; i++) {
		if (i == mine || all[i].client != me->client)
			continue;
		holds = 1;
		if (all[i].stalled_ms == SEAT_YIELDED || all[i].stalled_ms > me->stalled_ms ||
		    (all[i].stalled_ms == me->stalled_ms && i > mine))
			return 0;
	}
	return holds;
}

/* A copy of the table. */
static void snapshot(struct seat *out)
{
	int i;

	for (i = 0; i < n_seats; i++) {
		out[i].client = __atomic_load_n(&seats[i].client, __ATOMIC_SEQ_CST);
		out[i].stalled_ms = __atomic_load_n(&seats[i].stalled_ms, __ATOMIC_SEQ_CST);
	}
}

void seat_busy(void)
{
	if (seat_pooled())
		__atomic_store_n(&seats[my_seat].client, SEAT_BUSY, __ATOMIC_SEQ_CST);
}

/* The seat holds the client before the others are read, so that two
 * processes taking the last two at once for one client see each other. */
int seat_take(const char *client)
{
	struct seat all[SEAT_MAX];
	uint64_t me = seat_hash(client);

	if (!seat_pooled())
		return 0;
	__atomic_store_n(&seats[my_seat].client, me, __ATOMIC_SEQ_CST);
	snapshot(all);
	return seat_refuses(all, n_seats, my_seat, me, now_ms()) && someone_waits() ? -1 : 0;
}

void seat_leave(void)
{
	if (seat_pooled())
		seat_free(my_seat);
}

static void set_stalled(int64_t since)
{
	__atomic_store_n(&seats[my_seat].stalled_ms, since, __ATOMIC_SEQ_CST);
}

/* What the peer has not taken yet, and room for a write: 1, 0 or -1
 * (cannot tell). */
static int has_room(int fd, int *queued)
{
	socklen_t len;
	int cap;

	len = sizeof(cap);
	if (ioctl(fd, SIOCOUTQ, queued) == -1 ||
	    getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &cap, &len) == -1)
		return -1;
	return cap - *queued >= SEAT_ROOM;
}

/* Logged at most once a minute, with the count: an attacker's thousand
 * stalled downloads are one line. */
static void log_given_up(const char *why)
{
	static int64_t last;
	static long count;
	int64_t now = now_ms();

	count++;
	if (last && now - last < 60000)
		return;
	log_info("%ld answer(s) their readers stopped taking given up (last: %s)",
	    count, why);
	last = now;
	count = 0;
}

static int give_up(int fd, const char *why)
{
	log_given_up(why);
	set_stalled(SEAT_YIELDED);
	shutdown(fd, SHUT_RDWR);
	return -1;
}

int seat_wait_writable(int fd, long idle_ms)
{
	struct pollfd p = { fd, POLLOUT, 0 };
	struct seat all[SEAT_MAX];
	int64_t since, now;
	int queued, last;

	if (!seat_pooled() || has_room(fd, &queued) != 0)
		return 0;
	since = now_ms();
	last = queued;
	set_stalled(since);
	for (;;) {
		if (poll(&p, 1, SEAT_TICK_MS) > 0 || has_room(fd, &queued) != 0)
			break;
		now = now_ms();
		if (queued < last) {
			last = queued;
			set_stalled(since = now);
		}
		if (now - since >= idle_ms)
			return give_up(fd, "the send deadline");
		if (now - since < SEAT_STALL_MS)
			continue;
		snapshot(all);
		if (seat_yields(all, n_seats, my_seat) && someone_waits())
			return give_up(fd, "its client holds another process of a full pool");
	}
	set_stalled(0);
	return 0;
}
