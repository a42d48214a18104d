/* rate: fixed-window counters in the shared database. Times are fixed
 * values, never the clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "rate.h"
#include "testapp.h"

/* A window start: 60 s windows start at multiples of 60. */
#define T0 ((time_t)1700000040)

static void first_hits_within_limit_allowed(void **state)
{
	struct testapp *t = *state;
	long retry = -5;

	assert_int_equal(rate_hit(&t->app, "k", 3, 60, T0, &retry), 0);
	assert_int_equal(rate_hit(&t->app, "k", 3, 60, T0 + 10, &retry), 0);
	assert_int_equal(rate_hit(&t->app, "k", 3, 60, T0 + 20, &retry), 0);
	/* retry_after is only set when limited. */
	assert_int_equal(retry, -5);
}

static void hit_past_limit_limited_until_window_end(void **state)
{
	struct testapp *t = *state;
	long retry = 0;
	int i;

	for (i = 0; i < 3; i++)
		assert_int_equal(rate_hit(&t->app, "k", 3, 60, T0 + i, &retry), 0);
	assert_int_equal(rate_hit(&t->app, "k", 3, 60, T0 + 15, &retry), 1);
	assert_int_equal(retry, 45);
	assert_int_equal(rate_hit(&t->app, "k", 3, 60, T0 + 59, &retry), 1);
	assert_int_equal(retry, 1);
}

static void new_window_resets(void **state)
{
	struct testapp *t = *state;
	long retry = 0;
	int i;

	for (i = 0; i < 4; i++)
		rate_hit(&t->app, "k", 3, 60, T0 + 30, &retry);
	assert_int_equal(rate_hit(&t->app, "k", 3, 60, T0 + 59, &retry), 1);
	assert_int_equal(rate_hit(&t->app, "k", 3, 60, T0 + 60, &retry), 0);
	assert_int_equal(rate_hit(&t->app, "k", 3, 60, T0 + 61, &retry), 0);
	assert_int_equal(rate_hit(&t->app, "k", 3, 60, T0 + 62, &retry), 0);
	assert_int_equal(rate_hit(&t->app, "k", 3, 60, T0 + 63, &retry), 1);
	assert_int_equal(retry, 57);
}

static void windows_are_aligned(void **state)
{
	struct testapp *t = *state;
	long retry = 0;

	/* A first hit late in a window does not start a window of its own. */
	assert_int_equal(rate_hit(&t->app, "k", 1, 60, T0 + 50, &retry), 0);
	assert_int_equal(rate_hit(&t->app, "k", 1, 60, T0 + 55, &retry), 1);
	assert_int_equal(retry, 5);
	assert_int_equal(rate_hit(&t->app, "k", 1, 60, T0 + 60, &retry), 0);
}

static void refund_takes_one_back(void **state)
{
	struct testapp *t = *state;
	long retry = 0;
	int i;

	for (i = 0; i < 3; i++)
		assert_int_equal(rate_hit(&t->app, "k", 3, 60, T0, &retry), 0);
	assert_int_equal(rate_refund(&t->app, "k", 60, T0 + 1), 0);
	assert_int_equal(rate_hit(&t->app, "k", 3, 60, T0 + 2, &retry), 0);
	assert_int_equal(rate_hit(&t->app, "k", 3, 60, T0 + 3, &retry), 1);
}

static void refund_never_goes_negative(void **state)
{
	struct testapp *t = *state;
	long retry = 0;

	assert_int_equal(rate_hit(&t->app, "k", 1, 60, T0, &retry), 0);
	assert_int_equal(rate_refund(&t->app, "k", 60, T0), 0);
	assert_int_equal(rate_refund(&t->app, "k", 60, T0), 0);
	assert_int_equal(rate_refund(&t->app, "k", 60, T0), 0);
	assert_int_equal(rate_hit(&t->app, "k", 1, 60, T0, &retry), 0);
	assert_int_equal(rate_hit(&t->app, "k", 1, 60, T0, &retry), 1);
}

static void refund_in_other_window_does_nothing(void **state)
{
	struct testapp *t = *state;
	long retry = 0;

	assert_int_equal(rate_hit(&t->app, "k", 1, 60, T0, &retry), 0);
	assert_int_equal(rate_refund(&t->app, "k", 60, T0 + 60), 0);
	assert_int_equal(rate_hit(&t->app, "k", 1, 60, T0 + 1, &retry), 1);
}

static void keys_are_separate(void **state)
{
	struct testapp *t = *state;
	long retry = 0;

	assert_int_equal(rate_hit(&t->app, "login-ip:192.0.2.1", 1, 60, T0, &retry), 0);
	assert_int_equal(rate_hit(&t->app, "login-ip:192.0.2.1", 1, 60, T0, &retry), 1);
	assert_int_equal(rate_hit(&t->app, "login-ip:192.0.2.2", 1, 60, T0, &retry), 0);
	assert_int_equal(rate_hit(&t->app, "login-ip:192.0.2.10", 1, 60, T0, &retry), 0);
	/* Same key, other window length: another window. */
	assert_int_equal(rate_hit(&t->app, "login-ip:192.0.2.1", 1, 3600,
	    (T0 / 3600 + 1) * 3600, &retry), 0);
}

static void keys_not_stored_in_clear(void **state)
{
	struct testapp *t = *state;
	long retry = 0;

	assert_int_equal(rate_hit(&t->app, "login-user:192.0.2.1alice", 3, 60,
	    T0, &retry), 0);
	assert_int_equal(testapp_count(t,
	    "SELECT count(*) FROM rate WHERE key LIKE '%alice%'"
	    " OR key LIKE '%192.0.2%'"), 0);
	assert_int_equal(testapp_count(t, "SELECT count(*) FROM rate"), 1);
}

static void prune_deletes_ended_windows(void **state)
{
	struct testapp *t = *state;
	long retry = 0;

	assert_int_equal(rate_hit(&t->app, "a", 5, 60, T0 + 1, &retry), 0);
	assert_int_equal(rate_hit(&t->app, "b", 5, 60, T0 + 2, &retry), 0);
	assert_int_equal(rate_hit(&t->app, "c", 5, 3600, T0 + 3, &retry), 0);
	assert_int_equal(testapp_count(t, "SELECT count(*) FROM rate"), 3);
	assert_int_equal(rate_prune(&t->app, T0 + 59), 0);
	assert_int_equal(testapp_count(t, "SELECT count(*) FROM rate"), 3);
	assert_int_equal(rate_prune(&t->app, T0 + 60), 0);
	assert_int_equal(testapp_count(t, "SELECT count(*) FROM rate"), 1);
	assert_int_equal(rate_prune(&t->app, (T0 / 3600 + 1) * 3600), 0);
	assert_int_equal(testapp_count(t, "SELECT count(*) FROM rate"), 0);
}

static void new_window_prunes_old_ones(void **state)
{
	struct testapp *t = *state;
	long retry = 0;

	assert_int_equal(rate_hit(&t->app, "a", 5, 60, T0, &retry), 0);
	assert_int_equal(rate_hit(&t->app, "b", 5, 60, T0, &retry), 0);
	assert_int_equal(testapp_count(t, "SELECT count(*) FROM rate"), 2);
	/* The first hit of a later window clears the ended ones. */
	assert_int_equal(rate_hit(&t->app, "a", 5, 60, T0 + 120, &retry), 0);
	assert_int_equal(testapp_count(t, "SELECT count(*) FROM rate"), 1);
}

/* The shared count of key what in the window holding now (0: no row). */
static long long shared_n(struct testapp *t, const char *what, time_t now)
{
	char key[APP_KEY_HEX + 1], sql[200];
	long long n;

	app_key(&t->app, "rate", what, key);
	snprintf(sql, sizeof(sql), "SELECT n FROM rate WHERE key = '%s'"
	    " AND win = %lld", key, (long long)now / 60 * 60);
	n = testapp_count(t, sql);
	return n < 0 ? 0 : n;
}

/* A limit of 6,400: batches of 32, the first hit written at once. */
static void batched_writes_in_batches(void **state)
{
	struct testapp *t = *state;
	long retry = -5;
	int i;

	assert_int_equal(rate_hit_batched(&t->app, "b", 6400, 60, T0, &retry), 0);
	assert_int_equal(shared_n(t, "b", T0), 1);
	for (i = 0; i < 31; i++)
		assert_int_equal(rate_hit_batched(&t->app, "b", 6400, 60, T0,
		    &retry), 0);
	assert_int_equal(shared_n(t, "b", T0), 1);
	assert_int_equal(rate_hit_batched(&t->app, "b", 6400, 60, T0, &retry), 0);
	assert_int_equal(shared_n(t, "b", T0), 33);
	assert_int_equal(retry, -5);
}

static void batched_written_at_close(void **state)
{
	struct testapp *t = *state;
	long retry = 0;
	int i;

	for (i = 0; i < 10; i++)
		assert_int_equal(rate_hit_batched(&t->app, "b", 6400, 60, T0,
		    &retry), 0);
	assert_int_equal(shared_n(t, "b", T0), 1);
	rate_cache_close(&t->app);
	assert_int_equal(shared_n(t, "b", T0), 10);
	/* Counting goes on after. */
	assert_int_equal(rate_hit_batched(&t->app, "b", 6400, 60, T0, &retry), 0);
	assert_int_equal(shared_n(t, "b", T0), 11);
}

static void batched_written_once_a_second(void **state)
{
	struct testapp *t = *state;
	long retry = 0;

	assert_int_equal(rate_hit_batched(&t->app, "b", 6400, 60, T0, &retry), 0);
	assert_int_equal(rate_hit_batched(&t->app, "b", 6400, 60, T0, &retry), 0);
	assert_int_equal(shared_n(t, "b", T0), 1);
	assert_int_equal(rate_hit_batched(&t->app, "b", 6400, 60, T0 + 1, &retry), 0);
	assert_int_equal(shared_n(t, "b", T0), 3);
}

/* Past half the limit every hit is written: the limit holds exactly. */
static void batched_exact_at_the_limit(void **state)
{
	struct testapp *t = *state;
	long retry = 0;
	int i;

	for (i = 0; i < 200; i++)
		if (rate_hit_batched(&t->app, "b", 200, 60, T0 + 5, &retry) != 0)
			fail_msg("hit %d of 200 refused", i + 1);
	assert_int_equal(shared_n(t, "b", T0), 200);
	assert_int_equal(rate_hit_batched(&t->app, "b", 200, 60, T0 + 5, &retry), 1);
	assert_int_equal(retry, 55);
	assert_int_equal(shared_n(t, "b", T0), 201);
}

/* A small limit is counted hit by hit, as rate_hit does. */
static void batched_small_limit_every_hit(void **state)
{
	struct testapp *t = *state;
	long retry = 0;
	int i;

	for (i = 0; i < 3; i++) {
		assert_int_equal(rate_hit_batched(&t->app, "b", 100, 60, T0, &retry), 0);
		assert_int_equal(shared_n(t, "b", T0), i + 1);
	}
}

static void batched_new_window_starts_afresh(void **state)
{
	struct testapp *t = *state;
	long retry = 0;
	int i;

	for (i = 0; i < 5; i++)
		assert_int_equal(rate_hit_batched(&t->app, "b", 6400, 60, T0, &retry), 0);
	assert_int_equal(rate_hit_batched(&t->app, "b", 6400, 60, T0 + 60, &retry), 0);
	assert_int_equal(shared_n(t, "b", T0 + 60), 1);
	/* The ended window was pruned by the new one's first write. */
	assert_int_equal(testapp_count(t, "SELECT count(*) FROM rate"), 1);
	rate_cache_close(&t->app);
	assert_int_equal(shared_n(t, "b", T0 + 60), 1);
}

/* Two processes taking turns admit exactly the limit; one that gets most
 * of the hits lets through at most a batch less one beyond it. */
static void batched_two_processes(void **state)
{
	struct testapp *t = *state, t2;
	long retry = 0;
	int i, ok = 0;

	testapp_open_twin(t, &t2);
	for (i = 0; i < 700; i++)
		ok += rate_hit_batched(i % 2 ? &t2.app : &t->app, "turns", 640,
		    60, T0, &retry) == 0;
	assert_int_equal(ok, 640);
	ok = 0;
	for (i = 0; i < 700; i++)
		ok += rate_hit_batched(i % 50 ? &t->app : &t2.app, "skewed", 640,
		    60, T0, &retry) == 0;
	assert_in_range(ok, 640, 640 + 10 - 1);
	testapp_close(&t2);
}

/* rate_add_keys: one hit to each key, the counts after it; a new
 * window from 1. */
static void add_keys_returns_the_counts(void **state)
{
	struct testapp *t = *state;
	const char *const ab[] = { "a", "b" }, *const bc[] = { "b", "c" };
	const char *const four[] = { "w", "x", "y", "z" };
	long long n[4];

	assert_int_equal(rate_add_keys(&t->app, ab, 2, 60, T0, n), 0);
	assert_int_equal(n[0], 1);
	assert_int_equal(n[1], 1);
	assert_int_equal(rate_add_keys(&t->app, bc, 2, 60, T0 + 30, n), 0);
	assert_int_equal(n[0], 2);
	assert_int_equal(n[1], 1);
	assert_int_equal(rate_add_keys(&t->app, ab, 1, 60, T0 + 59, n), 0);
	assert_int_equal(n[0], 2);
	assert_int_equal(shared_n(t, "b", T0), 2);
	assert_int_equal(rate_add_keys(&t->app, four, 4, 60, T0 + 59, n), 0);
	assert_int_equal(n[0] + n[1] + n[2] + n[3], 4);
	assert_int_equal(rate_add_keys(&t->app, ab, 0, 60, T0, n), -1);
	assert_int_equal(rate_add_keys(&t->app, four, 5, 60, T0, n), -1);
	/* The new window's first hit pruned the ended one. */
	assert_int_equal(rate_add_keys(&t->app, bc, 1, 60, T0 + 60, n), 0);
	assert_int_equal(n[0], 1);
	assert_int_equal(testapp_count(t, "SELECT count(*) FROM rate"), 1);
}

/* rate_count_keys reads without counting: 0 for a key never hit, the
 * count of the window holding now, after refunds too. */
static void count_keys_reads_without_counting(void **state)
{
	struct testapp *t = *state;
	const char *const kx[] = { "k", "x" }, *const xk[] = { "x", "k" };
	long long n[2] = { -1, -1 };
	long retry = 0;

	assert_int_equal(rate_count_keys(&t->app, kx, 2, 60, T0, n), 0);
	assert_int_equal(n[0], 0);
	assert_int_equal(n[1], 0);
	assert_int_equal(testapp_count(t, "SELECT count(*) FROM rate"), 0);
	assert_int_equal(rate_hit(&t->app, "k", 5, 60, T0, &retry), 0);
	assert_int_equal(rate_hit(&t->app, "k", 5, 60, T0 + 1, &retry), 0);
	assert_int_equal(rate_count_keys(&t->app, xk, 2, 60, T0 + 2, n), 0);
	assert_int_equal(n[0], 0);
	assert_int_equal(n[1], 2);
	assert_int_equal(rate_count_keys(&t->app, kx, 2, 60, T0 + 2, n), 0);
	assert_int_equal(n[0], 2);
	assert_int_equal(rate_refund(&t->app, "k", 60, T0 + 3), 0);
	assert_int_equal(rate_count_keys(&t->app, kx, 1, 60, T0 + 4, n), 0);
	assert_int_equal(n[0], 1);
	assert_int_equal(rate_count_keys(&t->app, kx, 1, 60, T0 + 60, n), 0);
	assert_int_equal(n[0], 0);
	assert_int_equal(rate_count_keys(&t->app, kx, 1, 3600, T0, n), 0);
	assert_int_equal(n[0], 0);
}

/* rate_refund_keys: one back from each key that has one, never below 0,
 * only in the window holding now. */
static void refund_keys_takes_one_back_each(void **state)
{
	struct testapp *t = *state;
	const char *const abc[] = { "a", "b", "c" };
	long long n[3];

	assert_int_equal(rate_add_keys(&t->app, abc, 2, 60, T0, n), 0);
	assert_int_equal(rate_add_keys(&t->app, abc, 1, 60, T0, n), 0);
	assert_int_equal(rate_refund_keys(&t->app, abc, 3, 60, T0 + 1), 0);
	assert_int_equal(shared_n(t, "a", T0), 1);
	assert_int_equal(shared_n(t, "b", T0), 0);
	assert_int_equal(shared_n(t, "c", T0), 0);
	assert_int_equal(rate_refund_keys(&t->app, abc, 3, 60, T0 + 2), 0);
	assert_int_equal(rate_refund_keys(&t->app, abc, 3, 60, T0 + 2), 0);
	assert_int_equal(shared_n(t, "a", T0), 0);
	assert_int_equal(shared_n(t, "b", T0), 0);
	assert_int_equal(rate_add_keys(&t->app, abc, 1, 60, T0, n), 0);
	assert_int_equal(rate_refund_keys(&t->app, abc, 1, 60, T0 + 60), 0);
	assert_int_equal(shared_n(t, "a", T0), 1);
}

static void window_left_counts_to_the_end(void **state)
{
	(void)state;
	assert_int_equal(rate_window_left(60, T0), 60);
	assert_int_equal(rate_window_left(60, T0 + 1), 59);
	assert_int_equal(rate_window_left(60, T0 + 59), 1);
	assert_int_equal(rate_window_left(60, T0 + 60), 60);
	assert_int_equal(rate_window_left(900, (time_t)1700000100), 900 - 1700000100 % 900);
}

#define T(f) cmocka_unit_test_setup_teardown(f, testapp_setup, testapp_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(first_hits_within_limit_allowed),
		T(hit_past_limit_limited_until_window_end),
		T(new_window_resets),
		T(windows_are_aligned),
		T(refund_takes_one_back),
		T(refund_never_goes_negative),
		T(refund_in_other_window_does_nothing),
		T(keys_are_separate),
		T(keys_not_stored_in_clear),
		T(prune_deletes_ended_windows),
		T(new_window_prunes_old_ones),
		T(batched_writes_in_batches),
		T(batched_written_at_close),
		T(batched_written_once_a_second),
		T(batched_exact_at_the_limit),
		T(batched_small_limit_every_hit),
		T(batched_new_window_starts_afresh),
		T(batched_two_processes),
		T(add_keys_returns_the_counts),
		T(count_keys_reads_without_counting),
		T(refund_keys_takes_one_back_each),
		T(window_left_counts_to_the_end),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
