/* cap: event streams counted per session and per address; over the
 * session's cap the oldest makes way once it has been open a while, over
 * the address's cap a stream is refused; IPv6 clients counted by /64. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cap.h"

#define AGE 10000          /* replace_after_ms */

static struct cap *fresh(unsigned per_sess, unsigned per_addr)
{
	struct cap *c = malloc(sizeof(*c));

	assert_non_null(c);
	assert_int_equal(cap_init(c, per_sess, per_addr, AGE), 0);
	return c;
}

static void done(struct cap *c)
{
	cap_free(c);
	free(c);
}

static void counted_per_key(void **state)
{
	struct cap *c = fresh(4, 256);
	struct cap_stream s[5];

	assert_int_equal(cap_add(c, &s[0], "sessA", "192.0.2.1", 0), 0);
	assert_int_equal(cap_add(c, &s[1], "sessA", "192.0.2.1", 0), 0);
	assert_int_equal(cap_add(c, &s[2], "sessA", "192.0.2.9", 0), 0);
	assert_int_equal(cap_add(c, &s[3], "sessB", "192.0.2.1", 0), 0);
	assert_int_equal(cap_add(c, &s[4], "sessC", "192.0.2.9", 0), 0);
	assert_int_equal(cap_session_count(c, "sessA"), 3);
	assert_int_equal(cap_session_count(c, "sessB"), 1);
	assert_int_equal(cap_session_count(c, "nobody"), 0);
	assert_int_equal(cap_address_count(c, "192.0.2.1"), 3);
	assert_int_equal(cap_address_count(c, "192.0.2.9"), 2);
	assert_int_equal(c->nkeys, 5);
	cap_remove(c, &s[1]);
	cap_remove(c, &s[1]);           /* twice: the second is a no-op */
	assert_int_equal(cap_session_count(c, "sessA"), 2);
	assert_int_equal(cap_address_count(c, "192.0.2.1"), 2);
	cap_remove(c, &s[3]);
	assert_int_equal(cap_session_count(c, "sessB"), 0);
	assert_int_equal(c->nkeys, 4);  /* sessB's key went with its stream */
	cap_remove(c, &s[0]);
	cap_remove(c, &s[2]);
	cap_remove(c, &s[4]);
	assert_int_equal(c->nkeys, 0);
	assert_int_equal(cap_address_count(c, "192.0.2.1"), 0);
	done(c);
}

/* Under both caps: open; the caps are not reached by another session's
 * or address's streams. */
static void under_the_caps_opens(void **state)
{
	struct cap *c = fresh(2, 3);
	struct cap_stream s[2], *old;
	unsigned retry;

	assert_int_equal(cap_admit(c, "sessA", "192.0.2.1", 0, &old, &retry), CAP_OPEN);
	assert_null(old);
	cap_add(c, &s[0], "sessA", "192.0.2.1", 0);
	cap_add(c, &s[1], "sessA", "192.0.2.1", 0);
	assert_int_equal(cap_admit(c, "sessB", "192.0.2.1", 0, &old, &retry), CAP_OPEN);
	assert_int_equal(cap_admit(c, "sessB", "192.0.2.2", 0, &old, &retry), CAP_OPEN);
	cap_remove(c, &s[0]);
	cap_remove(c, &s[1]);
	done(c);
}

/* A session at its cap whose streams are all young (a burst): refused,
 * told to come back when its oldest may be replaced. */
static void young_session_refused(void **state)
{
	struct cap *c = fresh(2, 256);
	struct cap_stream s[2], *old;
	unsigned retry;

	cap_add(c, &s[0], "sessA", "192.0.2.1", 1000);
	cap_add(c, &s[1], "sessA", "192.0.2.1", 1500);
	assert_int_equal(cap_admit(c, "sessA", "192.0.2.1", 1000, &old, &retry),
	    CAP_SESSION_FULL);
	assert_null(old);
	assert_int_equal(retry, 10);
	assert_int_equal(cap_admit(c, "sessA", "192.0.2.1", 2200, &old, &retry),
	    CAP_SESSION_FULL);
	assert_int_equal(retry, 9);     /* 8.8 s left, rounded up */
	assert_int_equal(cap_admit(c, "sessA", "192.0.2.1", 1000 + AGE - 1, &old,
	    &retry), CAP_SESSION_FULL);
	assert_int_equal(retry, 1);
	/* Refusing counts nothing. */
	assert_int_equal(cap_session_count(c, "sessA"), 2);
	cap_remove(c, &s[0]);
	cap_remove(c, &s[1]);
	done(c);
}

/* Once the oldest has been open AGE, a new stream replaces it; the next
 * one over the cap replaces the next oldest, in opening order. */
static void oldest_replaced_in_order(void **state)
{
	struct cap *c = fresh(3, 256);
	struct cap_stream s[5], *old;
	unsigned retry;

	cap_add(c, &s[0], "sessA", "192.0.2.1", 0);
	cap_add(c, &s[1], "sessA", "192.0.2.1", 100);
	cap_add(c, &s[2], "sessA", "192.0.2.1", 200);
	assert_int_equal(cap_admit(c, "sessA", "192.0.2.1", AGE, &old, &retry),
	    CAP_REPLACE);
	assert_ptr_equal(old, &s[0]);
	cap_add(c, &s[3], "sessA", "192.0.2.1", AGE);
	cap_remove(c, old);
	assert_int_equal(cap_session_count(c, "sessA"), 3);
	assert_int_equal(cap_admit(c, "sessA", "192.0.2.1", AGE + 50, &old, &retry),
	    CAP_SESSION_FULL);
	assert_int_equal(cap_admit(c, "sessA", "192.0.2.1", AGE + 100, &old, &retry),
	    CAP_REPLACE);
	assert_ptr_equal(old, &s[1]);
	/* The oldest is the first one still open, wherever removals fell. */
	cap_remove(c, &s[2]);
	cap_add(c, &s[4], "sessA", "192.0.2.1", AGE + 300);
	assert_int_equal(cap_admit(c, "sessA", "192.0.2.1", 2 * AGE + 300, &old,
	    &retry), CAP_REPLACE);
	assert_ptr_equal(old, &s[1]);
	cap_remove(c, &s[1]);
	assert_int_equal(cap_admit(c, "sessA", "192.0.2.1", 2 * AGE + 300, &old,
	    &retry), CAP_OPEN);
	cap_remove(c, &s[3]);
	cap_remove(c, &s[4]);
	assert_int_equal(c->nkeys, 0);
	done(c);
}

/* An address at its cap refuses every new stream, however old the ones
 * it holds: nobody behind a shared address ends another's stream. */
static void full_address_refused_never_replaced(void **state)
{
	struct cap *c = fresh(4, 3);
	struct cap_stream s[3], *old;
	unsigned retry;

	cap_add(c, &s[0], "sessA", "192.0.2.1", 0);
	cap_add(c, &s[1], "sessB", "192.0.2.1", 0);
	cap_add(c, &s[2], "sessC", "192.0.2.1", 0);
	assert_int_equal(cap_admit(c, "sessD", "192.0.2.1", 100 * AGE, &old, &retry),
	    CAP_ADDRESS_FULL);
	assert_null(old);
	assert_int_equal(retry, 60);
	assert_int_equal(cap_admit(c, "sessA", "192.0.2.1", 100 * AGE, &old, &retry),
	    CAP_ADDRESS_FULL);
	assert_int_equal(cap_admit(c, "sessD", "192.0.2.2", 0, &old, &retry), CAP_OPEN);
	cap_remove(c, &s[1]);
	assert_int_equal(cap_admit(c, "sessD", "192.0.2.1", 0, &old, &retry), CAP_OPEN);
	cap_remove(c, &s[0]);
	cap_remove(c, &s[2]);
	done(c);
}

/* The stream a new one replaces frees a place at its own address only. */
static void replaced_frees_its_own_address(void **state)
{
	struct cap *c = fresh(1, 2);
	struct cap_stream s[4], *old;
	unsigned retry;
	int i;

	cap_add(c, &s[0], "sessA", "192.0.2.1", 0);
	cap_add(c, &s[1], "sessB", "192.0.2.1", 0);
	cap_add(c, &s[2], "sessC", "192.0.2.2", 0);
	cap_add(c, &s[3], "sessD", "192.0.2.2", 0);
	/* From the same full address: its place is taken over. */
	assert_int_equal(cap_admit(c, "sessA", "192.0.2.1", AGE, &old, &retry),
	    CAP_REPLACE);
	assert_ptr_equal(old, &s[0]);
	/* From another full address (a phone that changed networks): no. */
	assert_int_equal(cap_admit(c, "sessA", "192.0.2.2", AGE, &old, &retry),
	    CAP_ADDRESS_FULL);
	assert_null(old);
	/* From an address with room: yes. */
	assert_int_equal(cap_admit(c, "sessA", "192.0.2.3", AGE, &old, &retry),
	    CAP_REPLACE);
	assert_ptr_equal(old, &s[0]);
	for (i = 0; i < 4; i++)
		cap_remove(c, &s[i]);
	done(c);
}

static void zero_is_no_cap(void **state)
{
	struct cap *c = fresh(0, 0);
	struct cap_stream s[50], *old;
	unsigned retry;
	int i;

	for (i = 0; i < 50; i++)
		assert_int_equal(cap_add(c, &s[i], "sessA", "192.0.2.1", 0), 0);
	assert_int_equal(cap_admit(c, "sessA", "192.0.2.1", 0, &old, &retry), CAP_OPEN);
	assert_int_equal(cap_session_count(c, "sessA"), 50);
	for (i = 0; i < 50; i++)
		cap_remove(c, &s[i]);
	done(c);
}

/* Thousands of keys, removed in another order than added: the tables
 * grow, every count stays right, nothing is left (ASan sees what would
 * leak). */
static void many_keys(void **state)
{
	enum { N = 6000 };
	struct cap *c = fresh(4, 256);
	struct cap_stream *s = calloc(N, sizeof(*s));
	char sess[32], addr[48];
	int i;

	assert_non_null(s);
	for (i = 0; i < N; i++) {
		snprintf(sess, sizeof(sess), "s%d", i / 2);
		snprintf(addr, sizeof(addr), "2001:db8:%x::/64", i % 1500);
		assert_int_equal(cap_add(c, &s[i], sess, addr, (uint64_t)i), 0);
	}
	assert_int_equal(c->nkeys, N / 2 + 1500);
	/* The tables grew with their keys: chains stay short. */
	assert_true(c->sess.nb > CAP_BUCKETS_MIN);
	assert_true(c->sess.n <= CAP_LOAD * c->sess.nb);
	assert_true(c->addr.n <= CAP_LOAD * c->addr.nb);
	assert_int_equal(cap_session_count(c, "s17"), 2);
	assert_int_equal(cap_address_count(c, "2001:db8:5dc::/64"), 0);
	assert_int_equal(cap_address_count(c, "2001:db8:5db::/64"), 4);
	for (i = N - 1; i >= 0; i -= 2)
		cap_remove(c, &s[i]);
	for (i = 0; i < N; i += 2)
		cap_remove(c, &s[i]);
	assert_int_equal(c->nkeys, 0);
	free(s);
	done(c);
}

/* Keys past CAP_KEY_MAX are cut alike, so that adding and counting
 * agree. */
static void long_keys_cut(void **state)
{
	struct cap *c = fresh(4, 256);
	struct cap_stream s;
	char longer[200];

	memset(longer, 'x', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	assert_int_equal(cap_add(c, &s, longer, longer, 0), 0);
	assert_int_equal(cap_session_count(c, longer), 1);
	longer[150] = 'y';              /* past the cut: the same key */
	assert_int_equal(cap_address_count(c, longer), 1);
	cap_remove(c, &s);
	assert_int_equal(c->nkeys, 0);
	done(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(counted_per_key),
		cmocka_unit_test(under_the_caps_opens),
		cmocka_unit_test(young_session_refused),
		cmocka_unit_test(oldest_replaced_in_order),
		cmocka_unit_test(full_address_refused_never_replaced),
		cmocka_unit_test(replaced_frees_its_own_address),
		cmocka_unit_test(zero_is_no_cap),
		cmocka_unit_test(many_keys),
		cmocka_unit_test(long_keys_cut),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
