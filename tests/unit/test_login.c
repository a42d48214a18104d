/* login_rewrite: a JMAP session document's four URLs become postern's /api
 * paths, and the upstream ones come out pinned. client_net: what
 * the sign-in limits count an address as. login_admit and login_settle:
 * the sign-in limits over a real state database. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cfg.h"
#include "clientnet.h"
#include "js.h"
#include "login.h"
#include "rate.h"
#include "testapp.h"

#define UP "http://127.0.0.1:8080"

#define OUR_API "/api/jmap"
#define OUR_DOWNLOAD "/api/blob/{accountId}/{blobId}/{name}?accept={type}"
#define OUR_UPLOAD "/api/upload/{accountId}"
#define OUR_EVENTS "/api/events?types={types}&closeafter={closeafter}&ping={ping}"

/* As Cyrus sends it: relative URLs, served at /jmap/. */
static const char cyrus_doc[] =
    "{\"capabilities\":{\"urn:ietf:params:jmap:core\":{}},"
    "\"accounts\":{\"alice\":{\"name\":\"alice\"}},"
    "\"username\":\"alice@example.test\","
    "\"apiUrl\":\"/jmap/\","
    "\"downloadUrl\":\"/jmap/download/{accountId}/{blobId}/{name}?accept={type}\","
    "\"uploadUrl\":\"/jmap/upload/{accountId}/\","
    "\"eventSourceUrl\":\"/jmap/eventsource/?types={types}&closeafter={closeafter}&ping={ping}\","
    "\"state\":\"0\"}";

/* As Stalwart sends it: absolute URLs on its public https name. */
static const char stalwart_doc[] =
    "{\"capabilities\":{},\"accounts\":{},"
    "\"username\":\"bob@example.com\","
    "\"apiUrl\":\"https://mail.example.com/jmap/\","
    "\"downloadUrl\":\"https://mail.example.com/jmap/download/{accountId}/{blobId}/{name}?accept={type}\","
    "\"uploadUrl\":\"https://mail.example.com/jmap/upload/{accountId}\","
    "\"eventSourceUrl\":\"https://mail.example.com/jmap/eventsource?types={types}&closeafter={closeafter}&ping={ping}\","
    "\"state\":\"x\"}";

struct fixture {
	struct cfg cfg;
	char *urls[4];
	json_object *doc;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char err[256];

	if (f == NULL)
		return -1;
	cfg_defaults(&f->cfg);
	if (cfg_set(&f->cfg, "upstream", UP, err, sizeof(err)) == -1)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	int i;

	for (i = 0; i < 4; i++)
		free(f->urls[i]);
	json_object_put(f->doc);
	cfg_free(&f->cfg);
	free(f);
	return 0;
}

static json_object *parse(struct fixture *f, const char *text)
{
	f->doc = js_parse(text, strlen(text));
	assert_non_null(f->doc);
	return f->doc;
}

static void assert_ours(json_object *doc)
{
	assert_string_equal(js_str(doc, "apiUrl"), OUR_API);
	assert_string_equal(js_str(doc, "downloadUrl"), OUR_DOWNLOAD);
	assert_string_equal(js_str(doc, "uploadUrl"), OUR_UPLOAD);
	assert_string_equal(js_str(doc, "eventSourceUrl"), OUR_EVENTS);
}

static void cyrus_document_rewritten(void **state)
{
	struct fixture *f = *state;
	json_object *doc = parse(f, cyrus_doc);

	assert_int_equal(login_rewrite(&f->cfg, doc, UP "/jmap/", f->urls), 0);
	assert_ours(doc);
	assert_string_equal(f->urls[0], UP "/jmap/");
	assert_string_equal(f->urls[1],
	    UP "/jmap/download/{accountId}/{blobId}/{name}?accept={type}");
	assert_string_equal(f->urls[2], UP "/jmap/upload/{accountId}/");
	assert_string_equal(f->urls[3], UP "/jmap/eventsource/?types={types}"
	    "&closeafter={closeafter}&ping={ping}");
	/* The rest of the document is left alone. */
	assert_string_equal(js_str(doc, "username"), "alice@example.test");
	assert_string_equal(js_str(doc, "state"), "0");
	assert_non_null(js_obj(js_obj(doc, "capabilities"),
	    "urn:ietf:params:jmap:core"));
}

static void stalwart_document_rewritten_and_pinned(void **state)
{
	struct fixture *f = *state;
	json_object *doc = parse(f, stalwart_doc);

	assert_int_equal(login_rewrite(&f->cfg, doc, UP "/.well-known/jmap",
	    f->urls), 0);
	assert_ours(doc);
	assert_string_equal(f->urls[0], UP "/jmap/");
	assert_string_equal(f->urls[1],
	    UP "/jmap/download/{accountId}/{blobId}/{name}?accept={type}");
	assert_string_equal(f->urls[2], UP "/jmap/upload/{accountId}");
	assert_string_equal(f->urls[3], UP "/jmap/eventsource?types={types}"
	    "&closeafter={closeafter}&ping={ping}");
	assert_string_equal(js_str(doc, "username"), "bob@example.com");
}

static void stalwart_followed_when_configured(void **state)
{
	struct fixture *f = *state;
	json_object *doc = parse(f, stalwart_doc);

	f->cfg.upstream_follow_advertised = 1;
	assert_int_equal(login_rewrite(&f->cfg, doc, UP "/.well-known/jmap",
	    f->urls), 0);
	assert_ours(doc);
	assert_string_equal(f->urls[0], "https://mail.example.com/jmap/");
	assert_string_equal(f->urls[2],
	    "https://mail.example.com/jmap/upload/{accountId}");
}

static void missing_api_url_fails(void **state)
{
	struct fixture *f = *state;
	json_object *doc = parse(f, cyrus_doc);
	int i;

	json_object_object_del(doc, "apiUrl");
	assert_int_equal(login_rewrite(&f->cfg, doc, UP "/jmap/", f->urls), -1);
	for (i = 0; i < 4; i++)
		assert_null(f->urls[i]);
}

static void missing_download_or_upload_url_fails(void **state)
{
	struct fixture *f = *state;
	json_object *doc = parse(f, cyrus_doc);
	int i;

	/* The earlier URLs were already pinned: they are freed (valgrind). */
	json_object_object_del(doc, "uploadUrl");
	assert_int_equal(login_rewrite(&f->cfg, doc, UP "/jmap/", f->urls), -1);
	for (i = 0; i < 4; i++)
		assert_null(f->urls[i]);
}

static void non_string_api_url_fails(void **state)
{
	struct fixture *f = *state;
	json_object *doc = parse(f, cyrus_doc);

	json_object_object_add(doc, "apiUrl", json_object_new_int(5));
	assert_int_equal(login_rewrite(&f->cfg, doc, UP "/jmap/", f->urls), -1);
	assert_null(f->urls[0]);
}

static void unparsable_url_fails(void **state)
{
	struct fixture *f = *state;
	json_object *doc = parse(f, cyrus_doc);
	int i;

	json_object_object_add(doc, "downloadUrl",
	    json_object_new_string("http://"));
	assert_int_equal(login_rewrite(&f->cfg, doc, UP "/jmap/", f->urls), -1);
	for (i = 0; i < 4; i++)
		assert_null(f->urls[i]);
}

static void missing_event_source_url_gives_empty(void **state)
{
	struct fixture *f = *state;
	json_object *doc = parse(f, cyrus_doc);

	json_object_object_del(doc, "eventSourceUrl");
	assert_int_equal(login_rewrite(&f->cfg, doc, UP "/jmap/", f->urls), 0);
	assert_non_null(f->urls[3]);
	assert_string_equal(f->urls[3], "");
	assert_string_equal(f->urls[0], UP "/jmap/");
	assert_string_equal(js_str(doc, "apiUrl"), OUR_API);
}

static void non_string_event_source_url_gives_empty(void **state)
{
	struct fixture *f = *state;
	json_object *doc = parse(f, cyrus_doc);

	json_object_object_add(doc, "eventSourceUrl", json_object_new_boolean(1));
	assert_int_equal(login_rewrite(&f->cfg, doc, UP "/jmap/", f->urls), 0);
	assert_string_equal(f->urls[3], "");
}

struct net_case {
	const char *ip;
	long prefix;
	const char *want;
};

static void client_nets(const struct net_case *c, size_t n)
{
	char out[REQ_IP_MAX + 8];
	size_t i;

	for (i = 0; i < n; i++) {
		assert_int_equal(client_net(c[i].ip, c[i].prefix, out,
		    sizeof(out)), 0);
		if (strcmp(out, c[i].want))
			fail_msg("\"%s\" /%ld is \"%s\", want \"%s\"", c[i].ip,
			    c[i].prefix, out, c[i].want);
	}
}

static void ipv4_counted_per_address(void **state)
{
	static const struct net_case cases[] = {
		{ "192.0.2.1", 64, "192.0.2.1" },
		{ "203.0.113.254", 64, "203.0.113.254" },
		/* Written as IPv4-mapped IPv6 (a dual-stack socket), the same. */
		{ "::ffff:192.0.2.1", 64, "192.0.2.1" },
		{ "::FFFF:192.0.2.1", 128, "192.0.2.1" },
		{ "::ffff:c000:201", 64, "192.0.2.1" },
	};

	(void)state;
	client_nets(cases, sizeof(cases) / sizeof(cases[0]));
}

static void ipv6_counted_per_prefix(void **state)
{
	static const struct net_case cases[] = {
		{ "2001:db8:1:2:3:4:5:6", 64, "2001:db8:1:2::/64" },
		{ "2001:DB8:1:2::9", 64, "2001:db8:1:2::/64" },
		{ "2001:0db8:0001:0002:ffff:ffff:ffff:ffff", 64, "2001:db8:1:2::/64" },
		{ "2001:db8:1:2:3:4:5:6", 48, "2001:db8:1::/48" },
		{ "2001:db8:1:2ff::1", 56, "2001:db8:1:200::/56" },
		{ "2001:db8:1:2ff::1", 60, "2001:db8:1:2f0::/60" },
		{ "2001:db8:1:2ff::1", 63, "2001:db8:1:2fe::/63" },
		{ "2001:db8:1:2:3:4:5:6", 128, "2001:db8:1:2:3:4:5:6/128" },
		{ "2001:db8:1:2:3:4:5:6", 1, "::/1" },
		{ "::1", 64, "::/64" },
	};

	(void)state;
	client_nets(cases, sizeof(cases) / sizeof(cases[0]));
}

static void other_client_names_kept(void **state)
{
	static const struct net_case cases[] = {
		{ "", 64, "" },
		{ "not-an-address", 64, "not-an-address" },
		{ "fe80::1%eth0", 64, "fe80::1%eth0" },
	};
	char out[8];

	(void)state;
	client_nets(cases, sizeof(cases) / sizeof(cases[0]));
	assert_int_equal(client_net("2001:db8::1", 64, out, sizeof(out)), -1);
	assert_int_equal(client_net("192.0.2.1", 64, out, sizeof(out)), -1);
	assert_int_equal(client_net("192.0.2", 64, out, sizeof(out)), 0);
}

/* The limits: 3 per address and user, 5 per address, 10 in all, a
 * window of 900 s starting at W0. */
#define WINDOW 900
#define W0 ((time_t)1700000100)
#define RIGHT 0
#define WRONG 1
#define A "192.0.2.1"
#define B "192.0.2.2"

static int limits_setup(void **state)
{
	struct testapp *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return -1;
	testapp_init(t);
	t->app.cfg.login_limit_user = 3;
	t->app.cfg.login_limit_ip = 5;
	t->app.cfg.login_limit_all = 10;
	t->app.cfg.login_window = WINDOW;
	testapp_start(t);
	*state = t;
	return 0;
}

/* One attempt from ip for user at now, settled as the mail server said
 * (right or wrong): 0 when it was let through, else the seconds it was
 * told to wait. */
static long attempt(struct testapp *t, const char *ip, const char *user,
    int wrong, time_t now)
{
	struct login_attempt at;
	long wait = -1;
	int rc = login_admit(&t->app, &at, ip, user, now, &wait);

	assert_int_not_equal(rc, -1);
	if (rc == 1) {
		assert_true(wait > 0);
		return wait;
	}
	assert_int_equal(wait, 0);
	login_settle(&t->app, &at, wrong);
	return 0;
}

static long long counted(struct testapp *t, const char *what)
{
	long long n = -1;

	assert_int_equal(rate_count_keys(&t->app, &what, 1, WINDOW, W0, &n), 0);
	return n;
}

/* n wrong passwords from ip, each for another user: all let through. */
static void spray(struct testapp *t, const char *ip, int n)
{
	char user[64];
	int i;

	for (i = 0; i < n; i++) {
		snprintf(user, sizeof(user), "%s-%d@example.test", ip, i);
		assert_int_equal(attempt(t, ip, user, WRONG, W0 + 1), 0);
	}
}

static void wrong_passwords_limited_per_address_and_user(void **state)
{
	struct testapp *t = *state;
	int i;

	for (i = 0; i < 3; i++)
		assert_int_equal(attempt(t, A, "alice", WRONG, W0 + 10), 0);
	assert_int_equal(attempt(t, A, "alice", WRONG, W0 + 10), WINDOW - 10);
	/* The right password waits too: it would be one more guess. */
	assert_int_equal(attempt(t, A, "alice", RIGHT, W0 + 100), WINDOW - 100);
	/* The login is compared as the account is: case aside. */
	assert_int_equal(attempt(t, A, "ALICE", RIGHT, W0 + 100), WINDOW - 100);
	assert_int_equal(attempt(t, A, "bob", RIGHT, W0 + 100), 0);
	assert_int_equal(attempt(t, B, "alice", RIGHT, W0 + 100), 0);
	/* A new window starts afresh. */
	assert_int_equal(attempt(t, A, "alice", RIGHT, W0 + WINDOW), 0);
}

static void wrong_passwords_limited_per_address(void **state)
{
	struct testapp *t = *state;

	spray(t, A, 5);
	assert_int_equal(attempt(t, A, "someone-else", WRONG, W0 + 1), WINDOW - 1);
	assert_int_equal(attempt(t, A, "alice", RIGHT, W0 + 1), WINDOW - 1);
	assert_int_equal(attempt(t, B, "alice", RIGHT, W0 + 1), 0);
}

/* Refused attempts are counted under no key: one address's flood does
 * not fill the ceiling every other address shares. */
static void refused_attempts_count_nowhere(void **state)
{
	struct testapp *t = *state;
	int i;

	spray(t, A, 5);
	for (i = 0; i < 100; i++)
		assert_int_equal(attempt(t, A, "alice", WRONG, W0 + 1), WINDOW - 1);
	assert_int_equal(counted(t, "login-ip:" A), 5);
	assert_int_equal(counted(t, "login-all"), 5);
	assert_int_equal(counted(t, "login-fail:" A), 5);
	assert_int_equal(attempt(t, B, "alice", RIGHT, W0 + 1), 0);
}

/* A school behind one address: people who sign in right are never
 * limited, and their typos still are. */
static void successes_count_nowhere(void **state)
{
	struct testapp *t = *state;
	static const char *const users[] = { "alice", "bob", "carol" };
	int i;

	for (i = 0; i < 100; i++)
		assert_int_equal(attempt(t, A, users[i % 3], RIGHT, W0 + 1), 0);
	assert_int_equal(counted(t, "login-ip:" A), 0);
	assert_int_equal(counted(t, "login-all"), 0);
	for (i = 0; i < 3; i++)
		assert_int_equal(attempt(t, A, "alice", WRONG, W0 + 2), 0);
	assert_int_equal(attempt(t, A, "alice", RIGHT, W0 + 2), WINDOW - 2);
	assert_int_equal(attempt(t, A, "bob", RIGHT, W0 + 2), 0);
}

/* An attempt the mail server did not answer is taken back under every
 * key: an outage locks nobody out. */
static void unanswered_attempts_count_nowhere(void **state)
{
	struct testapp *t = *state;
	struct login_attempt at;
	long wait;
	int i;

	for (i = 0; i < 20; i++) {
		assert_int_equal(login_admit(&t->app, &at, A, "alice", W0, &wait), 0);
		login_settle(&t->app, &at, 0);
		login_settle(&t->app, &at, 0);   /* twice: nothing more */
	}
	assert_int_equal(counted(t, "login-ip:" A), 0);
	assert_int_equal(counted(t, "login-all"), 0);
	assert_int_equal(attempt(t, A, "alice", WRONG, W0), 0);
}

/* Past the ceiling only addresses with a failure in the window wait: a
 * new address is let through, once wrong and as often as it is right. */
static void ceiling_refuses_addresses_with_failures(void **state)
{
	struct testapp *t = *state;
	int i;

	spray(t, "192.0.2.11", 2);
	spray(t, "192.0.2.12", 4);
	spray(t, "192.0.2.13", 4);
	assert_int_equal(counted(t, "login-all"), 10);
	assert_int_equal(attempt(t, "192.0.2.11", "alice", RIGHT, W0 + 5), WINDOW - 5);
	for (i = 0; i < 20; i++)
		assert_int_equal(attempt(t, A, "alice", RIGHT, W0 + 5), 0);
	assert_int_equal(attempt(t, B, "bob", WRONG, W0 + 5), 0);
	assert_int_equal(attempt(t, B, "bob", RIGHT, W0 + 5), WINDOW - 5);
	assert_int_equal(counted(t, "login-all"), 11);
	/* The next window starts below the ceiling again. */
	assert_int_equal(attempt(t, "192.0.2.11", "alice", RIGHT, W0 + WINDOW), 0);
}

/* Past the ceiling an address with an attempt under way waits a second
 * for it (a burst from a new address would otherwise all get through
 * before its first failure is known); below it, nothing of the kind. */
static void ceiling_holds_back_attempts_under_way(void **state)
{
	struct testapp *t = *state;
	struct login_attempt first, second, third;
	long wait;

	assert_int_equal(login_admit(&t->app, &first, A, "alice", W0, &wait), 0);
	assert_int_equal(login_admit(&t->app, &second, A, "bob", W0, &wait), 0);
	login_settle(&t->app, &first, RIGHT);
	login_settle(&t->app, &second, RIGHT);
	spray(t, "192.0.2.11", 5);
	spray(t, "192.0.2.12", 5);
	assert_int_equal(login_admit(&t->app, &first, A, "alice", W0 + 1, &wait), 0);
	assert_int_equal(login_admit(&t->app, &second, A, "bob", W0 + 1, &wait), 1);
	assert_int_equal(wait, 1);
	login_settle(&t->app, &first, RIGHT);
	assert_int_equal(login_admit(&t->app, &third, A, "bob", W0 + 1, &wait), 0);
	login_settle(&t->app, &third, RIGHT);
}

/* Five wrong passwords from five addresses "<prefix>1" to "<prefix>5". */
static void spray_from(struct testapp *t, const char *prefix)
{
	char ip[64];
	int i;

	for (i = 0; i < 5; i++) {
		snprintf(ip, sizeof(ip), "%s%x", prefix, i + 1);
		assert_int_equal(attempt(t, ip, ip, WRONG, W0), 0);
	}
}

static void ipv6_limited_per_prefix(void **state)
{
	struct testapp *t = *state;

	t->app.cfg.login_limit_all = 1000;  /* 15 failures in all, below */
	spray_from(t, "2001:db8:1:2::");
	assert_int_equal(attempt(t, "2001:db8:1:2:ffff::", "alice", RIGHT, W0),
	    WINDOW);
	assert_int_equal(attempt(t, "2001:db8:1:3::1", "alice", RIGHT, W0), 0);
	/* A shorter prefix takes the neighbours in. */
	t->app.cfg.login_ipv6_prefix = 48;
	spray_from(t, "2001:db8:5:1::");
	assert_int_equal(attempt(t, "2001:db8:5:2::1", "alice", RIGHT, W0), WINDOW);
	assert_int_equal(attempt(t, "2001:db8:6::1", "alice", RIGHT, W0), 0);
	/* /128: each address on its own. */
	t->app.cfg.login_ipv6_prefix = 128;
	spray_from(t, "2001:db8:7::");
	assert_int_equal(attempt(t, "2001:db8:7::5", "alice", RIGHT, W0), 0);
	assert_int_equal(attempt(t, "2001:db8:7::6", "alice", RIGHT, W0), 0);
}

static void mapped_ipv4_is_the_same_client(void **state)
{
	struct testapp *t = *state;

	spray(t, A, 5);
	assert_int_equal(attempt(t, "::ffff:" A, "alice", RIGHT, W0 + 1), WINDOW - 1);
}

#define L(f) cmocka_unit_test_setup_teardown(f, limits_setup, testapp_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(cyrus_document_rewritten, setup, teardown),
		cmocka_unit_test_setup_teardown(stalwart_document_rewritten_and_pinned, setup, teardown),
		cmocka_unit_test_setup_teardown(stalwart_followed_when_configured, setup, teardown),
		cmocka_unit_test_setup_teardown(missing_api_url_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(missing_download_or_upload_url_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(non_string_api_url_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(unparsable_url_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(missing_event_source_url_gives_empty, setup, teardown),
		cmocka_unit_test_setup_teardown(non_string_event_source_url_gives_empty, setup, teardown),
		cmocka_unit_test(ipv4_counted_per_address),
		cmocka_unit_test(ipv6_counted_per_prefix),
		cmocka_unit_test(other_client_names_kept),
		L(wrong_passwords_limited_per_address_and_user),
		L(wrong_passwords_limited_per_address),
		L(refused_attempts_count_nowhere),
		L(successes_count_nowhere),
		L(unanswered_attempts_count_nowhere),
		L(ceiling_refuses_addresses_with_failures),
		L(ceiling_holds_back_attempts_under_way),
		L(ipv6_limited_per_prefix),
		L(mapped_ipv4_is_the_same_client),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
