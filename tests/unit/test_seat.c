/* seat: no client takes a pool's last free process while it holds
 * another; a client's seats across processes (the shared table). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "seat.h"

static void the_rule(void **state)
{
	uint64_t a = seat_hash("192.0.2.1"), b = seat_hash("2001:db8::/64");
	uint64_t none[3] = { 0, 0, 0 }, two_a[3] = { a, a, 0 };
	uint64_t full_b[3] = { b, b, b }, full_ab[3] = { a, b, b };

	(void)state;
	assert_true(a != 0 && b != 0 && a != b);
	assert_true(seat_allowed(NULL, 0, a));          /* a pool of one */
	assert_true(seat_allowed(none, 3, a));
	assert_true(seat_allowed(two_a, 3, a));         /* one more is free */
	assert_true(seat_allowed(full_b, 3, a));        /* a holds none */
	assert_false(seat_allowed(full_ab, 3, a));      /* the last, and a holds one */
	assert_true(seat_allowed(full_ab, 3, seat_hash("198.51.100.7")));
}

static void outside_a_pool_always(void **state)
{
	(void)state;
	assert_int_equal(seat_take("192.0.2.1"), 0);
	seat_leave();
}

/* Four processes of a pool, played by one process moving between the
 * seats of the shared table, then by children of it. */
static void pool_of_four(void **state)
{
	int i;
	pid_t pid;
	int status;

	(void)state;
	assert_int_equal(seat_open(4), 0);
	for (i = 0; i < 3; i++) {
		seat_mine(i);
		assert_int_equal(seat_take("192.0.2.1"), 0);
	}
	seat_mine(3);
	assert_int_equal(seat_take("192.0.2.1"), -1);   /* the last one: kept */
	assert_int_equal(seat_take("192.0.2.2"), 0);    /* for another client */
	seat_leave();
	/* A child sees the parent's seats: the table is shared. */
	pid = fork();
	if (pid == 0) {
		seat_mine(3);
		_exit(seat_take("192.0.2.1") == -1 ? 0 : 1);
	}
	assert_true(pid > 0 && waitpid(pid, &status, 0) == pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* A process that ended leaves its seat free. */
	seat_free(0);
	seat_mine(3);
	assert_int_equal(seat_take("192.0.2.1"), 0);
	seat_leave();
	/* Seats a child takes are seen by its parent. */
	seat_mine(0);
	seat_leave();
	pid = fork();
	if (pid == 0) {
		seat_mine(0);
		_exit(seat_take("192.0.2.9"));
	}
	assert_true(pid > 0 && waitpid(pid, &status, 0) == pid);
	seat_mine(3);
	assert_int_equal(seat_take("192.0.2.1"), -1);   /* 0 is 192.0.2.9's */
	assert_int_equal(seat_take("192.0.2.5"), 0);
	seat_leave();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_rule),
		cmocka_unit_test(outside_a_pool_always),
		cmocka_unit_test(pool_of_four),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
