/* The session rows a process keeps (state/sesskeep.c): copies, one per
 * slot, forgotten by id, by account or all, as the other nodes tell. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sesskeep.h"

static void put(struct sesskeep *k, const char *id, const char *account,
    long long seen)
{
	char url[32], sealed[8];
	struct store_sess_row r = {
		.id = id, .account = account,
		.verifier = (const unsigned char *)"vvvv", .verifier_len = 4,
		.salt = (const unsigned char *)"ss", .salt_len = 2,
		.sealed = (const unsigned char *)sealed, .sealed_len = 6,
		.seen = seen, .remember = 1,
		.api_url = url, .download_url = "dl", .upload_url = "up",
		.event_url = "ev",
		.doc = (const unsigned char *)"doc", .doc_len = 3,
	};

	snprintf(url, sizeof(url), "api-%s", id);
	memcpy(sealed, "sealed", 6);
	sesskeep_put(k, &r);
	/* The caller's buffers are its own again. */
	memset(url, 'x', sizeof(url) - 1);
	memset(sealed, 'x', sizeof(sealed));
}

static void keeps_a_copy(void **state)
{
	struct sesskeep *k = sesskeep_new();
	const struct store_sess_row *r;

	(void)state;
	put(k, "id-1", "acct", 5);
	assert_non_null(r = sesskeep_find(k, "id-1"));
	assert_string_equal(r->id, "id-1");
	assert_string_equal(r->account, "acct");
	assert_string_equal(r->api_url, "api-id-1");
	assert_string_equal(r->event_url, "ev");
	assert_int_equal(r->sealed_len, 6);
	assert_memory_equal(r->sealed, "sealed", 6);
	assert_memory_equal(r->verifier, "vvvv", 4);
	assert_int_equal(r->seen, 5);
	assert_null(r->doc);                 /* never the document */
	assert_null(sesskeep_find(k, "id-2"));
	put(k, "id-1", "acct", 9);           /* replaced */
	assert_int_equal(sesskeep_find(k, "id-1")->seen, 9);
	sesskeep_free(k);
}

static void forgets_as_told(void **state)
{
	struct sesskeep *k = sesskeep_new();
	char id[16];
	int i, left;

	(void)state;
	for (i = 0; i < 40; i++) {
		snprintf(id, sizeof(id), "id-%d", i);
		put(k, id, i % 2 ? "odd" : "even", i);
	}
	sesskeep_told(k, "s id-4");
	assert_null(sesskeep_find(k, "id-4"));
	assert_non_null(sesskeep_find(k, "id-6"));
	sesskeep_told(k, "a odd");
	for (i = 0, left = 0; i < 40; i++) {
		snprintf(id, sizeof(id), "id-%d", i);
		if (sesskeep_find(k, id)) {
			assert_true(i % 2 == 0);
			left++;
		}
	}
	assert_true(left > 0);
	sesskeep_told(k, "something new");   /* not understood: all */
	assert_null(sesskeep_find(k, "id-6"));
	put(k, "id-7", "odd", 1);
	sesskeep_told(k, "*");
	assert_null(sesskeep_find(k, "id-7"));
	sesskeep_drop(k, "absent");
	sesskeep_free(k);
	sesskeep_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(keeps_a_copy),
		cmocka_unit_test(forgets_as_told),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
