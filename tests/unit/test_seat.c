/* seat: in a full pool with a request waiting, a client's stalled answer
 * is given up while it holds another process, one at a time, and the
 * last free process is not given to a client with a stalled one; bursts
 * that are read meet neither rule, and nothing acts while nobody waits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "seat.h"

#define A "192.0.2.1"
#define B "2001:db8::/64"

/* The tables hold four seats; seat 3 is the one asked about. */
static void the_refusal(void **state)
{
	uint64_t a = seat_hash(A), b = seat_hash(B);
	int64_t now = 100000, old = now - SEAT_STALL_MS, fresh = now - 10;
	struct seat none[4] = { { 0, 0 }, { 0, 0 }, { 0, 0 }, { 0, 0 } };
	struct seat a_stalled_free[4] = { { a, old }, { a, old }, { 0, 0 }, { 0, 0 } };
	struct seat a_stalled_full[4] = { { a, old }, { b, 0 }, { b, 0 }, { 0, 0 } };
	struct seat a_reading_full[4] = { { a, 0 }, { a, fresh }, { b, 0 }, { 0, 0 } };
	struct seat b_stalls_full[4] = { { a, 0 }, { SEAT_BUSY, 0 }, { b, old }, { 0, 0 } };
	struct seat a_yielded_full[4] = { { a, SEAT_YIELDED }, { b, 0 }, { b, 0 }, { 0, 0 } };
	struct seat one[1] = { { 0, 0 } };

	(void)state;
	assert_true(a > SEAT_BUSY && b > SEAT_BUSY && a != b);
	assert_false(seat_refuses(one, 1, 0, a, now));                 /* a pool of one */
	assert_false(seat_refuses(none, 4, 3, a, now));
	assert_false(seat_refuses(a_stalled_free, 4, 3, a, now));      /* one more is free */
	assert_true(seat_refuses(a_stalled_full, 4, 3, a, now));       /* the last, a stalls */
	assert_false(seat_refuses(a_stalled_full, 4, 3, b, now));      /* b's answers are read */
	assert_false(seat_refuses(a_reading_full, 4, 3, a, now));      /* a burst that is read */
	assert_false(seat_refuses(b_stalls_full, 4, 3, a, now));       /* b stalls, not a */
	assert_true(seat_refuses(a_yielded_full, 4, 3, a, now));       /* a's is going */
}

static void the_yield(void **state)
{
	uint64_t a = seat_hash(A), b = seat_hash(B);
	struct seat one_free[4] = { { a, 5 }, { a, 0 }, { 0, 0 }, { a, 9 } };
	struct seat a_holds_more[4] = { { b, 0 }, { a, 0 }, { b, 0 }, { a, 9 } };
	struct seat a_holds_one[4] = { { b, 0 }, { SEAT_BUSY, 0 }, { b, 7 }, { a, 9 } };
	struct seat a_all[4] = { { a, 8 }, { a, 9 }, { a, 3 }, { a, 9 } };

	(void)state;
	assert_false(seat_yields(one_free, 4, 3));      /* the pool is not full */
	assert_true(seat_yields(a_holds_more, 4, 3));   /* a holds another */
	assert_false(seat_yields(a_holds_one, 4, 3));   /* a holds only this one */
	/* All a's, stalled: one yields, the latest to stall (3, not 1 on a
	 * tie by seat), then none of the others while it is free. */
	assert_true(seat_yields(a_all, 4, 3));
	assert_false(seat_yields(a_all, 4, 1));
	assert_false(seat_yields(a_all, 4, 0));
	assert_false(seat_yields(a_all, 4, 2));
	/* Seat 3 gave up and has not left yet: no other yields meanwhile. */
	a_all[3].stalled_ms = SEAT_YIELDED;
	assert_false(seat_yields(a_all, 4, 1));
	assert_false(seat_yields(a_all, 4, 0));
	a_all[3].client = 0;
	assert_false(seat_yields(a_all, 4, 1));
}

static void outside_a_pool_nothing(void **state)
{
	int sv[2];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	seat_busy();
	assert_int_equal(seat_take(A), 0);
	assert_int_equal(seat_wait_writable(sv[0], 10), 0);
	seat_leave();
	close(sv[0]);
	close(sv[1]);
}

/* fd's buffer filled to the brim: the reader has stopped. */
static void fill(int fd)
{
	char chunk[4096] = { 0 };
	int fl = fcntl(fd, F_GETFL);

	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	while (write(fd, chunk, sizeof(chunk)) > 0)
		;
	fcntl(fd, F_SETFL, fl);
}

/* A listening socket with a connection waiting in its queue (c, never
 * accepted), as a pool's socket is while all its processes are busy; the
 * seats told of it. -1 for the listener when set is 0: nobody waits. */
static void queue(int set, int *lfd, int *c)
{
	struct sockaddr_un sa = { AF_UNIX, "" };

	*lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(*lfd >= 0);
	/* An abstract name: nothing on disk. */
	snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, "postern-test-seat-%d", (int)getpid());
	assert_int_equal(bind(*lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(*lfd, 4), 0);
	*c = socket(AF_UNIX, SOCK_STREAM, 0);
	if (set)
		assert_int_equal(connect(*c, (struct sockaddr *)&sa, sizeof(sa)), 0);
	seat_listen(*lfd);
}

static void unqueue(int lfd, int c)
{
	seat_listen(-1);
	close(c);
	close(lfd);
}

/* A connection whose reader stopped: sv[0] cannot take another write. */
static void stalled(int sv[2])
{
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	fill(sv[0]);
}

static void done_with(int sv[2])
{
	close(sv[0]);
	close(sv[1]);
}

/* A pool of four played by this process moving between the seats of the
 * shared table (seat_open before any fork, as pool_run does). */
static void pool_of_four(void **state)
{
	int i, sv[2], lfd, c;

	(void)state;
	assert_int_equal(seat_open(4), 0);
	for (i = 0; i < 3; i++) {
		seat_mine(i);
		seat_busy();
		assert_int_equal(seat_take(A), 0);   /* a burst: nothing stalls */
	}
	seat_mine(3);
	seat_busy();
	assert_int_equal(seat_take(A), 0);           /* the last: A stalls nowhere */
	seat_leave();

	/* Seat 0's answer stalls; then the last process is kept from A. */
	stalled(sv);
	seat_mine(0);
	/* The pool is not full (seat 3 is free): waits out the deadline. */
	assert_int_equal(seat_wait_writable(sv[0], SEAT_STALL_MS * 2), -1);
	done_with(sv);
	stalled(sv);
	seat_mine(3);
	seat_busy();
	assert_int_equal(seat_take(B), 0);           /* now full: 3 × A, B */
	seat_mine(0);
	/* Full, A holds two more, but nobody waits: the deadline again. */
	assert_int_equal(seat_wait_writable(sv[0], SEAT_STALL_MS * 2), -1);
	done_with(sv);
	stalled(sv);
	/* And with a request waiting: given up long before the deadline,
	 * and the connection is shut down (nothing else waits on it). */
	queue(1, &lfd, &c);
	assert_int_equal(seat_wait_writable(sv[0], 3600 * 1000L), -1);
	assert_int_equal(write(sv[0], "x", 1), -1);
	assert_int_equal(errno, EPIPE);
	/* Seat 0 gave up: A is refused the last free process (seat 3 left)
	 * while someone waits, and served when nobody does. */
	seat_mine(3);
	seat_leave();
	assert_int_equal(seat_take(A), -1);
	seat_leave();
	unqueue(lfd, c);
	assert_int_equal(seat_take(A), 0);
	done_with(sv);
	for (i = 0; i < 4; i++)
		seat_free(i);
}

/* A reader that takes the answer, slowly: the wait ends with room. */
static void a_slow_reader_is_waited_for(void **state)
{
	char buf[65536];
	int sv[2], i, lfd, c;
	pid_t pid;

	(void)state;
	queue(1, &lfd, &c);                          /* someone waits throughout */
	for (i = 1; i < 4; i++) {                    /* the pool is full of A */
		seat_mine(i);
		seat_busy();
		assert_int_equal(seat_take(A), 0);
	}
	stalled(sv);
	if ((pid = fork()) == 0) {
		/* 4 KiB every 300 ms: progress several times a second, room
		 * for a write only after 2 s (past SEAT_STALL_MS). */
		for (i = 0; i < 40; i++) {
			usleep(300 * 1000);
			if (read(sv[1], buf, 4096) <= 0)
				_exit(1);
		}
		_exit(0);
	}
	seat_mine(0);
	seat_busy();
	assert_int_equal(seat_take(A), 0);
	assert_int_equal(seat_wait_writable(sv[0], 3600 * 1000L), 0);
	unqueue(lfd, c);
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	close(sv[0]);
	close(sv[1]);
	for (i = 0; i < 4; i++)
		seat_free(i);
}

/* A child sees the parent's seats: the table is shared. */
static void shared_across_fork(void **state)
{
	int status, i, sv[2], lfd, c;
	pid_t pid;

	(void)state;
	for (i = 0; i < 4; i++) {
		if (i == 2)
			continue;
		seat_mine(i);
		seat_busy();
		assert_int_equal(seat_take(A), 0);
	}
	queue(1, &lfd, &c);
	if ((pid = fork()) == 0) {
		/* Yields only if it sees the parent's three seats of A. */
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == -1)
			_exit(2);
		fill(sv[0]);
		seat_mine(2);
		seat_busy();
		_exit(seat_take(A) == 0 && seat_wait_writable(sv[0], 3600 * 1000L) == -1 ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	unqueue(lfd, c);
	for (i = 0; i < 4; i++)
		seat_free(i);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_refusal),
		cmocka_unit_test(the_yield),
		cmocka_unit_test(outside_a_pool_nothing),
		cmocka_unit_test(pool_of_four),
		cmocka_unit_test(a_slow_reader_is_waited_for),
		cmocka_unit_test(shared_across_fork),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
