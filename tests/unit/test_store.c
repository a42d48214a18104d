/* The state store's interface, as any implementation must keep it: each
 * call over a fresh store, with what the callers rely on (the order of a
 * list, what a deletion counts, that a walk stops where its callback
 * says, that a refund never goes below zero). Over a SQLite file, or the
 * database POSTERN_TEST_STATE_DB names (emptied before each test). */
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "log.h"
#include "store.h"
#include "store_test.h"

struct fixture {
	char dir[64], path[256];
	struct store *st;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	const char *tmp = getenv("TMPDIR");
	char err[256];

	log_init("unit", LOG_ERR);
	snprintf(f->dir, sizeof(f->dir), "%s/postern-store-XXXXXX",
	    tmp && *tmp && strlen(tmp) < 32 ? tmp : "/tmp");
	assert_non_null(mkdtemp(f->dir));
	if (store_test_db())
		snprintf(f->path, sizeof(f->path), "%s", store_test_db());
	else
		snprintf(f->path, sizeof(f->path), "%s/state.db", f->dir);
	if (store_open(&f->st, f->path, err, sizeof(err)) != 0)
		fail_msg("store_open: %s", err);
	if (store_test_db())
		assert_int_equal(store_test_wipe(f->st), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char p[320];

	store_close(f->st);
	snprintf(p, sizeof(p), "%s-wal", f->path);
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", f->path);
	unlink(p);
	unlink(f->path);
	rmdir(f->dir);
	free(f);
	return 0;
}

static const unsigned char VERIFIER[32] = { 1, 2, 3 };
static const unsigned char SALT[16] = { 4, 5, 6 };

static void insert(struct store *st, const char *id, const char *account,
    long long seen)
{
	struct store_sess_row r = {
		.id = id, .account = account,
		.verifier = VERIFIER, .verifier_len = sizeof(VERIFIER),
		.salt = SALT, .salt_len = sizeof(SALT),
		.sealed = (const unsigned char *)"sealed", .sealed_len = 6,
		.doc = (const unsigned char *)"document", .doc_len = 8,
		.remember = 1, .created = seen, .expires = seen + 1000,
		.api_url = "api", .download_url = "dl", .upload_url = "up",
		.event_url = "ev", .agent = "agent", .ip = "192.0.2.1",
	};

	assert_int_equal(store_sess_insert(st, &r), 0);
}

/* What a callback saw, copied out of the row. */
struct seen {
	int calls, stop_after;
	char ids[8][32];
	char sealed[16], doc[16], account[32], url[16];
	long long created, seen, verified;
};

static int keep(void *ctx, const struct store_sess_row *r)
{
	struct seen *s = ctx;

	if (s->calls < 8 && r->id)
		snprintf(s->ids[s->calls], sizeof(s->ids[0]), "%s", r->id);
	if (r->sealed)
		snprintf(s->sealed, sizeof(s->sealed), "%.*s",
		    (int)r->sealed_len, (const char *)r->sealed);
	if (r->doc)
		snprintf(s->doc, sizeof(s->doc), "%.*s", (int)r->doc_len,
		    (const char *)r->doc);
	if (r->account)
		snprintf(s->account, sizeof(s->account), "%s", r->account);
	if (r->api_url)
		snprintf(s->url, sizeof(s->url), "%s", r->api_url);
	s->created = r->created;
	s->seen = r->seen;
	s->verified = r->verified;
	s->calls++;
	return s->stop_after && s->calls == s->stop_after ? 7 : 0;
}

static void session_row_read_back(void **state)
{
	struct fixture *f = *state;
	struct seen s = { 0 };

	insert(f->st, "id-a", "acct-1", 100);
	assert_int_equal(store_sess_get(f->st, "id-a", keep, &s), 0);
	assert_int_equal(s.calls, 1);
	assert_string_equal(s.sealed, "sealed");
	assert_string_equal(s.account, "acct-1");
	assert_string_equal(s.url, "api");
	assert_int_equal(s.seen, 100);
	assert_int_equal(s.verified, 100);  /* accepted when it was made */
	memset(&s, 0, sizeof(s));
	assert_int_equal(store_sess_doc(f->st, "id-a", keep, &s), 0);
	assert_string_equal(s.doc, "document");
	assert_int_equal(store_sess_get(f->st, "id-none", keep, &s), 1);
	assert_int_equal(store_sess_doc(f->st, "id-none", keep, &s), 1);
}

static void seen_and_confirmed_never_go_back(void **state)
{
	struct fixture *f = *state;
	struct store_sess_row r;

	insert(f->st, "id-a", "acct-1", 100);
	assert_int_equal(store_sess_seen(f->st, "id-a", 200, 150), 0);
	assert_int_equal(store_sess_times(f->st, "id-a", &r), 1);
	assert_int_equal(r.seen, 200);
	assert_int_equal(r.verified, 150);
	assert_int_equal(r.expires, 1100);
	assert_int_equal(r.remember, 1);
	/* an older acceptance does not replace a newer one */
	assert_int_equal(store_sess_seen(f->st, "id-a", 260, 0), 0);
	assert_int_equal(store_sess_times(f->st, "id-a", &r), 1);
	assert_int_equal(r.verified, 150);
	assert_int_equal(store_sess_confirmed(f->st, "id-a", 300), 0);
	assert_int_equal(store_sess_times(f->st, "id-a", &r), 1);
	assert_int_equal(r.verified, 300);
	assert_int_equal(r.seen, 300);
	assert_int_equal(store_sess_confirmed(f->st, "id-a", 250), 0);
	assert_int_equal(store_sess_times(f->st, "id-a", &r), 1);
	assert_int_equal(r.verified, 300);
	assert_int_equal(r.seen, 300);
	assert_int_equal(store_sess_times(f->st, "id-none", &r), 0);
}

static void list_is_last_seen_first_and_stops(void **state)
{
	struct fixture *f = *state;
	struct seen s = { 0 };

	insert(f->st, "id-a", "acct-1", 100);
	insert(f->st, "id-b", "acct-1", 300);
	insert(f->st, "id-c", "acct-2", 200);
	assert_int_equal(store_sess_list(f->st, "acct-1", keep, &s), 0);
	assert_int_equal(s.calls, 2);
	assert_string_equal(s.ids[0], "id-b");
	assert_string_equal(s.ids[1], "id-a");
	memset(&s, 0, sizeof(s));
	assert_int_equal(store_sess_list(f->st, NULL, keep, &s), 0);
	assert_int_equal(s.calls, 3);
	assert_string_equal(s.ids[1], "id-c");
	memset(&s, 0, sizeof(s));
	s.stop_after = 2;
	assert_int_equal(store_sess_list(f->st, NULL, keep, &s), 7);
	assert_int_equal(s.calls, 2);
}

static void deletions_count_what_they_end(void **state)
{
	struct fixture *f = *state;

	insert(f->st, "abc-1", "acct-1", 100);
	insert(f->st, "abc-2", "acct-1", 100);
	insert(f->st, "abd-3", "acct-1", 100);
	insert(f->st, "xyz-4", "acct-2", 100);
	insert(f->st, "xyz-5", "acct-3", 5000);
	assert_int_equal(store_sess_count_prefix(f->st, "ab"), 3);
	assert_int_equal(store_sess_count_prefix(f->st, "abc-1"), 1);
	/* a prefix is matched as text, never as a pattern */
	assert_int_equal(store_sess_count_prefix(f->st, "ab%"), 0);
	assert_int_equal(store_sess_delete_others(f->st, "acct-1", "abc-1"), 2);
	assert_int_equal(store_sess_delete_prefix(f->st, "abc"), 1);
	assert_int_equal(store_sess_delete(f->st, "xyz-4"), 1);
	assert_int_equal(store_sess_delete(f->st, "xyz-4"), 0);
	insert(f->st, "xyz-6", "acct-3", 100);
	assert_int_equal(store_sess_prune(f->st, 1100), 1);   /* xyz-6 */
	assert_int_equal(store_sess_delete_account(f->st, "acct-3"), 1);
	insert(f->st, "id-7", "acct-4", 100);
	assert_int_equal(store_sess_delete_all(f->st), 1);
}

static void rate_counts_add_and_refund(void **state)
{
	struct fixture *f = *state;
	const char *keys[] = { "k1", "k2", "k3" };
	long long n[3];

	assert_int_equal(store_rate_add(f->st, "k1", 60, 120, 2), 2);
	assert_int_equal(store_rate_add(f->st, "k1", 60, 120, 3), 5);
	assert_int_equal(store_rate_add_each(f->st, keys, 3, 60, 120), 0);
	assert_int_equal(store_rate_counts(f->st, keys, 3, 60, n), 0);
	assert_int_equal(n[0], 6);
	assert_int_equal(n[1], 1);
	assert_int_equal(n[2], 1);
	assert_int_equal(store_rate_refund_each(f->st, keys, 2, 60), 0);
	assert_int_equal(store_rate_refund(f->st, "k2", 60), 0);  /* stays 0 */
	assert_int_equal(store_rate_counts(f->st, keys, 3, 60, n), 0);
	assert_int_equal(n[0], 5);
	assert_int_equal(n[1], 0);
	assert_int_equal(n[2], 1);
	/* another window is another count */
	assert_int_equal(store_rate_counts(f->st, keys, 1, 120, n), 0);
	assert_int_equal(n[0], 0);
	assert_int_equal(store_rate_prune(f->st, 120), 0);
	assert_int_equal(store_rate_counts(f->st, keys, 3, 60, n), 0);
	assert_int_equal(n[0] + n[1] + n[2], 0);
	assert_int_equal(store_rate_counts(f->st, keys, 0, 60, n), -1);
	assert_int_equal(store_rate_counts(f->st, keys, STORE_RATE_KEYS_MAX + 1,
	    60, n), -1);
}

/* Sign-ins at once: counts added and refunded over the same keys, given
 * in other orders, by connections of their own. None fails (on
 * PostgreSQL such writes in other orders deadlock, and one of them
 * fails), and every refund is taken off. */
struct hammer {
	const char *path;
	const char *const *keys;
	int failed;
};

static void *hammer(void *p)
{
	struct hammer *h = p;
	struct store *st;
	char err[256];
	int i;

	if (store_open(&st, h->path, err, sizeof(err)) == -1) {
		h->failed = -1;
		return NULL;
	}
	for (i = 0; i < 150; i++) {
		if (store_rate_add_each(st, h->keys, 3, 60, 120) == -1)
			h->failed++;
		if (store_rate_refund_each(st, h->keys, 3, 60) == -1)
			h->failed++;
	}
	store_close(st);
	return NULL;
}

static void rate_writes_at_once_never_fail(void **state)
{
	struct fixture *f = *state;
	static const char *const one[] = { "k1", "k2", "k3" };
	static const char *const other[] = { "k3", "k1", "k2" };
	struct hammer h[4] = {
		{ f->path, one, 0 }, { f->path, other, 0 },
		{ f->path, one, 0 }, { f->path, other, 0 },
	};
	pthread_t th[4];
	long long n[3];
	int i;

	for (i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&th[i], NULL, hammer, &h[i]), 0);
	for (i = 0; i < 4; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);
	for (i = 0; i < 4; i++)
		assert_int_equal(h[i].failed, 0);
	assert_int_equal(store_rate_counts(f->st, one, 3, 60, n), 0);
	assert_int_equal(n[0] + n[1] + n[2], 0);
}

static void settings_replace_per_account(void **state)
{
	struct fixture *f = *state;
	char *json;

	assert_int_equal(store_settings_get(f->st, "acct-1", &json), 0);
	assert_null(json);
	assert_int_equal(store_settings_put(f->st, "acct-1", "{\"a\":1}", 10), 0);
	assert_int_equal(store_settings_put(f->st, "acct-1", "{\"a\":2}", 20), 0);
	assert_int_equal(store_settings_get(f->st, "acct-1", &json), 0);
	assert_string_equal(json, "{\"a\":2}");
	free(json);
	assert_int_equal(store_settings_get(f->st, "acct-2", &json), 0);
	assert_null(json);
}

static void mode_count(void *ctx, const char *mode, long long accounts,
    long long with_tabs, long long tabs)
{
	char *out = ctx;
	size_t n = strlen(out);

	snprintf(out + n, 256 - n, "%s:%lld/%lld/%lld ", mode, accounts,
	    with_tabs, tabs);
}

static void push_rows_modes_and_subscriptions(void **state)
{
	struct fixture *f = *state;
	char hash[65], modes[256] = "", acct[16], *id;
	long long exp, all, expired, due;
	struct store_push_row r = { .account = "a1", .mode = STORE_PUSH_POLL,
	    .tabs = 2, .updated = 10 };

	memset(hash, 'f', 64);
	hash[64] = '\0';
	assert_int_equal(store_push_put(f->st, &r), 0);
	r.account = "a2";
	r.mode = STORE_PUSH_SUBSCRIPTION;
	r.tabs = 0;
	r.sub_id = "S1";
	r.token_hash = hash;
	r.expires = 1000;
	assert_int_equal(store_push_put(f->st, &r), 0);
	r.account = "a3";
	r.mode = STORE_PUSH_RELAY;
	r.sub_id = r.token_hash = NULL;
	r.tabs = 1;
	assert_int_equal(store_push_put(f->st, &r), 0);
	assert_int_equal(store_push_modes(f->st, mode_count, modes), 0);
	assert_string_equal(modes, "poll:1/1/2 relay:1/1/1 subscription:1/0/0 ");

	assert_int_equal(store_push_held(f->st, "a2", &id, hash, 64, &exp), 1);
	assert_string_equal(id, "S1");
	assert_int_equal(exp, 1000);
	free(id);
	assert_int_equal(store_push_held(f->st, "a1", &id, hash, 64, &exp), 0);
	assert_null(id);
	assert_int_equal(store_push_token_account(f->st, hash, acct,
	    sizeof(acct)), 1);
	assert_string_equal(acct, "a2");
	assert_int_equal(store_push_token_account(f->st, "0", acct,
	    sizeof(acct)), 0);
	assert_int_equal(store_push_subs(f->st, 500, 1500, &all, &expired, &due), 0);
	assert_int_equal(all, 1);
	assert_int_equal(expired, 0);
	assert_int_equal(due, 1);

	/* A channel's row goes with it; a subscription's stays. */
	assert_int_equal(store_push_delete_channel(f->st, "a1"), 0);
	assert_int_equal(store_push_delete_channel(f->st, "a2"), 0);
	modes[0] = '\0';
	assert_int_equal(store_push_modes(f->st, mode_count, modes), 0);
	assert_string_equal(modes, "relay:1/1/1 subscription:1/0/0 ");
	/* At start-up: no channel, no tab, no expired subscription. */
	assert_int_equal(store_push_startup(f->st, 2000), 0);
	modes[0] = '\0';
	assert_int_equal(store_push_modes(f->st, mode_count, modes), 0);
	assert_string_equal(modes, "");
	assert_int_equal(store_push_token_account(f->st, hash, acct,
	    sizeof(acct)), 0);
}

static void node_seen(void *ctx, const char *name, long long started,
    long long seen)
{
	char *out = ctx;
	size_t n = strlen(out);

	snprintf(out + n, 256 - n, "%s:%lld/%lld ", name, started, seen);
}

static long long tabs_of(struct store *st, const char *account)
{
	char sql[128];

	snprintf(sql, sizeof(sql), "SELECT tabs FROM push_accounts WHERE "
	    "account = '%s'", account);
	return store_test_int(st, sql);
}

/* Two nodes on one state: each one's start-up and stop clean up its own
 * push rows and those of nodes gone, never a live node's. SQLite is one
 * node: its rows are its own whatever name wrote them (a host renamed). */
static void nodes_clean_up_only_their_own_rows(void **state)
{
	struct fixture *f = *state;
	struct store *b;
	struct store_push_row r = { .account = "a1", .mode = STORE_PUSH_POLL,
	    .tabs = 2, .updated = 10 };
	char err[256], seen[256] = "";

	assert_int_equal(store_open(&b, f->path, err, sizeof(err)), 0);
	store_set_node(f->st, "node-a");
	store_set_node(b, "node-b");
	assert_string_equal(store_node(b), "node-b");
	if (!store_shared(f->st)) {
		assert_int_equal(store_push_put(f->st, &r), 0);
		assert_int_equal(store_push_delete_channel(b, "a1"), 0);
		assert_int_equal(tabs_of(b, "a1"), -1);
		assert_int_equal(store_push_put(f->st, &r), 0);
		assert_int_equal(store_push_startup(b, 1000), 0);
		assert_int_equal(tabs_of(b, "a1"), -1);
		store_close(b);
		return;
	}
	assert_int_equal(store_push_startup(f->st, 1000), 0);
	assert_int_equal(store_push_startup(b, 1000), 0);
	assert_int_equal(store_push_put(f->st, &r), 0);       /* A's poll */
	r.account = "a3";
	r.mode = STORE_PUSH_SUBSCRIPTION;
	r.tabs = 1;
	assert_int_equal(store_push_put(f->st, &r), 0);       /* A's subscription */
	r.account = "a2";
	r.mode = STORE_PUSH_RELAY;
	assert_int_equal(store_push_put(b, &r), 0);           /* B's relay */
	/* A row of before version 6, of no node. */
	assert_int_equal(store_test_exec(f->st, "INSERT INTO push_accounts"
	    "(account, mode, updated, tabs) VALUES('a0', 'poll', 1, 1)"), 0);

	/* B restarts while A is alive: only B's row and the nodeless one go. */
	assert_int_equal(store_node_beat(f->st, 1020, 0), 0);
	assert_int_equal(store_push_startup(b, 1030), 0);
	assert_int_equal(tabs_of(b, "a1"), 2);
	assert_int_equal(tabs_of(b, "a3"), 1);
	assert_int_equal(tabs_of(b, "a2"), -1);
	assert_int_equal(tabs_of(b, "a0"), -1);
	/* B does not end A's channel. */
	assert_int_equal(store_push_delete_channel(b, "a1"), 0);
	assert_int_equal(store_push_delete(b, "a3"), 0);
	assert_int_equal(tabs_of(b, "a1"), 2);
	assert_int_equal(tabs_of(b, "a3"), 1);
	assert_int_equal(store_node_list(b, node_seen, seen), 0);
	assert_string_equal(seen, "node-a:1000/1020 node-b:1030/1030 ");

	/* A silent for STORE_NODE_GONE: gone at B's next start, with its poll;
	 * its subscription stays (anyone may take it on), with no tab. */
	assert_int_equal(store_push_startup(b, 1020 + STORE_NODE_GONE + 1), 0);
	assert_int_equal(tabs_of(b, "a1"), -1);
	assert_int_equal(tabs_of(b, "a3"), 0);
	seen[0] = '\0';
	assert_int_equal(store_node_list(b, node_seen, seen), 0);
	assert_string_equal(seen, "node-b:1081/1081 ");

	/* B stops: its row goes, its rows keep no tab. */
	r.account = "a4";
	assert_int_equal(store_push_put(b, &r), 0);
	assert_int_equal(store_node_leave(b), 0);
	assert_int_equal(tabs_of(b, "a4"), 0);
	seen[0] = '\0';
	assert_int_equal(store_node_list(b, node_seen, seen), 0);
	assert_string_equal(seen, "");
	store_close(b);
}

static void renewed(void *ctx, const char *account)
{
	char *out = ctx;
	size_t n = strlen(out);

	snprintf(out + n, 256 - n, "%s ", account);
}

/* One holder per account's lease: taken when free, this node's own or
 * lapsed, with the row's last states; renewed only while held; given up
 * for another to take. SQLite is one node: every lease is its own. */
static void leases_one_holder(void **state)
{
	struct fixture *f = *state;
	struct store_push_row r = { .account = "a1", .mode = STORE_PUSH_POLL,
	    .states = "{\"Email\":\"e7\"}", .tabs = 1, .updated = 10 };
	struct store *b;
	char err[256], got[256] = "", *states;

	const char *both[] = { "a1", "a2" };

	store_set_node(f->st, "node-a");
	if (!store_shared(f->st)) {
		assert_int_equal(store_lease_take(f->st, "a1", "poll", 10, &states), 1);
		assert_null(states);
		assert_int_equal(store_lease_renew(f->st, renewed, got), 0);
		assert_string_equal(got, "");
		assert_int_equal(store_lease_free(f->st, both, 2, renewed, got), 0);
		assert_string_equal(got, "a1 a2 ");
		assert_int_equal(store_lease_release(f->st, "a1"), 0);
		return;
	}
	assert_int_equal(store_open(&b, f->path, err, sizeof(err)), 0);
	store_set_node(b, "node-b");
	assert_int_equal(store_lease_take(f->st, "a1", "poll", 10, &states), 1);
	assert_null(states);
	assert_int_equal(store_push_put(f->st, &r), 0);
	assert_int_equal(store_lease_take(b, "a1", "poll", 10, &states), 0);
	assert_int_equal(store_lease_take(f->st, "a1", "poll", 10, &states), 1);
	free(states);
	assert_int_equal(store_lease_renew(f->st, renewed, got), 0);
	assert_string_equal(got, "a1 ");
	got[0] = '\0';
	assert_int_equal(store_lease_renew(b, renewed, got), 0);
	assert_string_equal(got, "");
	/* Which B could take, in one statement: a2 (no row), not A's a1;
	 * A could take its own. */
	assert_int_equal(store_lease_free(b, both, 2, renewed, got), 0);
	assert_string_equal(got, "a2 ");
	got[0] = '\0';
	assert_int_equal(store_lease_free(f->st, both, 2, renewed, got), 0);
	assert_string_equal(got, "a1 a2 ");
	got[0] = '\0';
	/* B's write does not take A's row. */
	assert_int_equal(store_push_put(b, &r), 0);
	assert_int_equal(store_test_int(b, "SELECT count(*) FROM push_accounts"
	    " WHERE node = 'node-a'"), 1);
	/* Given up: not renewed; B takes it, with the states A wrote. */
	assert_int_equal(store_lease_release(f->st, "a1"), 0);
	assert_int_equal(store_lease_renew(f->st, renewed, got), 0);
	assert_string_equal(got, "");
	assert_int_equal(store_lease_take(b, "a1", "poll", 10, &states), 1);
	assert_non_null(states);
	assert_non_null(strstr(states, "e7"));
	free(states);
	assert_int_equal(store_lease_take(f->st, "a1", "poll", 10, &states), 0);
	/* Lapsed (its holder silent past the lease): free to A, which takes
	 * it over. */
	assert_int_equal(store_test_exec(b, "UPDATE push_accounts SET"
	    " lease_until = 1"), 0);
	assert_int_equal(store_lease_free(f->st, both, 1, renewed, got), 0);
	assert_string_equal(got, "a1 ");
	got[0] = '\0';
	assert_int_equal(store_lease_take(f->st, "a1", "poll", 10, &states), 1);
	free(states);
	assert_int_equal(store_lease_renew(b, renewed, got), 0);
	assert_string_equal(got, "");
	store_close(b);
}

/* A database of version 5 (before nodes) is brought to the current one,
 * its rows kept, on either engine. */
static void version_5_is_upgraded(void **state)
{
	struct fixture *f = *state;
	struct store_push_row r = { .account = "a1", .mode = STORE_PUSH_POLL,
	    .tabs = 2, .updated = 10 };
	char err[256];
	int pg = store_is_url(f->path);

	assert_int_equal(store_push_put(f->st, &r), 0);
	assert_int_equal(store_test_exec(f->st, "DROP TABLE nodes;"
	    " ALTER TABLE push_accounts DROP COLUMN node;"
	    " ALTER TABLE push_accounts DROP COLUMN lease_until"), 0);
	assert_int_equal(store_test_exec(f->st, pg ?
	    "UPDATE postern_schema SET version = 5" : "PRAGMA user_version = 5"), 0);
	store_close(f->st);
	assert_int_equal(store_open(&f->st, f->path, err, sizeof(err)), 0);
	assert_int_equal(store_test_int(f->st, pg ?
	    "SELECT version FROM postern_schema" : "PRAGMA user_version"),
	    STORE_SCHEMA_VERSION);
	assert_int_equal(tabs_of(f->st, "a1"), 2);
	assert_int_equal(store_test_int(f->st,
	    "SELECT count(*) FROM push_accounts WHERE node = ''"), 1);
	assert_int_equal(store_node_beat(f->st, 5, 1), 0);
}

/* What a listener heard, one "channel|payload" line each. */
static void heard(void *ctx, const char *channel, const char *payload)
{
	char *out = ctx;
	size_t n = strlen(out);

	snprintf(out + n, 512 - n, "%s|%s\n", channel, payload);
}

/* Drives l as an event loop would, for up to 5 s: until it listens
 * (want_ready), or until something is heard. */
static void drive(struct store_listen *l, char *out, int want_ready)
{
	int i, rc;

	for (i = 0; i < 500; i++) {
		struct pollfd p = { .fd = store_listen_fd(l),
		    .events = store_listen_events(l) };

		assert_true(p.fd >= 0);
		poll(&p, 1, 10);
		rc = store_listen_step(l, heard, out);
		assert_int_not_equal(rc, -1);
		if (want_ready ? store_listen_ready(l) : out[0] != '\0')
			return;
	}
	fail_msg("the listener did not %s", want_ready ? "connect" : "hear");
}

/* A deletion of sessions is told to the other nodes (PostgreSQL): by id,
 * by account, or all; nothing when nothing was deleted. On SQLite there
 * is nobody to tell. */
static void session_deletions_are_told(void **state)
{
	const char *const chans[] = { STORE_CHAN_SESSIONS, NULL };
	struct fixture *f = *state;
	struct store_listen *l = store_listen_new(f->path, chans);
	char out[512] = "";

	if (!store_is_url(f->path)) {
		assert_null(l);
		assert_int_equal(store_notify(f->st, STORE_CHAN_SESSIONS, "*"), 0);
		return;
	}
	assert_non_null(l);
	drive(l, out, 1);
	insert(f->st, "s1", "acct-1", 100);
	insert(f->st, "s2", "acct-2", 100);
	insert(f->st, "s3", "acct-2", 100);
	insert(f->st, "s4", "acct-3", 100);
	assert_int_equal(store_sess_delete(f->st, "nope"), 0);
	assert_int_equal(store_sess_delete(f->st, "s1"), 1);
	drive(l, out, 0);
	assert_string_equal(out, STORE_CHAN_SESSIONS "|s s1\n");
	out[0] = '\0';
	assert_int_equal(store_sess_delete_others(f->st, "acct-2", "s3"), 1);
	drive(l, out, 0);
	assert_string_equal(out, STORE_CHAN_SESSIONS "|a acct-2\n");
	out[0] = '\0';
	assert_int_equal(store_sess_delete_all(f->st), 2);
	drive(l, out, 0);
	assert_string_equal(out, STORE_CHAN_SESSIONS "|*\n");
	out[0] = '\0';
	/* Its connection gone (the server closed it): -1, then it connects
	 * and listens again. */
	assert_int_equal(store_test_exec(f->st, "SELECT pg_terminate_backend(pid)"
	    " FROM pg_stat_activity WHERE application_name = 'postern-listen'"), 0);
	{
		struct pollfd p = { .fd = store_listen_fd(l), .events = POLLIN };
		int rc = 0, i;

		for (i = 0; i < 500 && rc != -1; i++) {
			poll(&p, 1, 10);
			rc = store_listen_step(l, heard, out);
		}
		assert_int_equal(rc, -1);
	}
	assert_false(store_listen_ready(l));
	assert_int_equal(store_listen_restart(l), 0);
	drive(l, out, 1);
	insert(f->st, "s5", "acct-5", 100);
	assert_int_equal(store_sess_delete_account(f->st, "acct-5"), 1);
	drive(l, out, 0);
	assert_string_equal(out, STORE_CHAN_SESSIONS "|a acct-5\n");
	store_listen_free(l);
}

/* store_sess_keep (PostgreSQL): a second lookup is answered from the row
 * kept (a change made elsewhere untold is not seen); a result other than
 * 0 for a kept row is asked of the row itself; a deletion another node
 * tells, by id or by account, ends the kept row; a row this process
 * changes is read anew; so is one past STORE_SESS_KEPT_MS without a
 * statement, and every one once the connection is made again. On SQLite
 * nothing is kept: every lookup reads. */
static void kept_session_rows(void **state)
{
	struct fixture *f = *state;
	struct store *other;
	struct seen s = { 0 };
	char err[256], sql[128];
	long long pid;

	if (!store_is_url(f->path)) {
		assert_int_equal(store_sess_keep(f->st), -1);
		return;
	}
	assert_int_equal(store_open(&other, f->path, err, sizeof(err)), 0);
	assert_int_equal(store_sess_keep(f->st), 0);
	insert(other, "k1", "acct-1", 100);
	insert(other, "k2", "acct-2", 100);
	assert_int_equal(store_sess_get(f->st, "k1", keep, &s), 0);
	assert_int_equal(store_sess_seen(other, "k1", 150, 0), 0);
	memset(&s, 0, sizeof(s));
	assert_int_equal(store_sess_get(f->st, "k1", keep, &s), 0);
	assert_int_equal(s.calls, 1);
	assert_int_equal(s.seen, 100);               /* kept */
	memset(&s, 0, sizeof(s));
	s.stop_after = 1;                            /* refuses the first */
	assert_int_equal(store_sess_get(f->st, "k1", keep, &s), 0);
	assert_int_equal(s.calls, 2);
	assert_int_equal(s.seen, 150);               /* then the row's */
	assert_int_equal(store_sess_delete(other, "k1"), 1);
	usleep(20000);
	assert_int_equal(store_sess_get(f->st, "k1", keep, &s), 1);
	/* This process's own write: read anew. */
	assert_int_equal(store_sess_get(f->st, "k2", keep, &s), 0);
	assert_int_equal(store_sess_seen(f->st, "k2", 160, 0), 0);
	assert_int_equal(store_sess_seen(other, "k2", 170, 0), 0);
	memset(&s, 0, sizeof(s));
	assert_int_equal(store_sess_get(f->st, "k2", keep, &s), 0);
	assert_int_equal(s.seen, 170);
	/* A revoke elsewhere, told by account. */
	assert_int_equal(store_sess_delete_others(other, "acct-2", "none"), 1);
	usleep(20000);
	assert_int_equal(store_sess_get(f->st, "k2", keep, &s), 1);
	/* No statement for longer than STORE_SESS_KEPT_MS: read. */
	insert(other, "k3", "acct-3", 100);
	assert_int_equal(store_sess_get(f->st, "k3", keep, &s), 0);
	assert_int_equal(store_sess_seen(other, "k3", 200, 0), 0);
	usleep((STORE_SESS_KEPT_MS + 50) * 1000);
	memset(&s, 0, sizeof(s));
	assert_int_equal(store_sess_get(f->st, "k3", keep, &s), 0);
	assert_int_equal(s.seen, 200);
	/* The connection made again (what was told meanwhile is lost). */
	assert_int_equal(store_sess_get(f->st, "k3", keep, &s), 0);
	assert_int_equal(store_sess_seen(other, "k3", 300, 0), 0);
	pid = store_test_int(f->st, "SELECT pg_backend_pid()");
	snprintf(sql, sizeof(sql), "SELECT pg_terminate_backend(%lld)", pid);
	assert_int_equal(store_test_exec(other, sql), 0);
	usleep(50000);
	memset(&s, 0, sizeof(s));
	assert_int_equal(store_sess_get(f->st, "k3", keep, &s), 0);
	assert_int_equal(s.seen, 300);
	/* ... then, on the connection made again, it listens and keeps. */
	assert_int_equal(store_sess_seen(other, "k3", 400, 0), 0);
	assert_int_equal(store_sess_get(f->st, "k3", keep, &s), 0);
	assert_int_equal(store_sess_seen(other, "k3", 500, 0), 0);
	memset(&s, 0, sizeof(s));
	assert_int_equal(store_sess_get(f->st, "k3", keep, &s), 0);
	assert_int_equal(s.seen, 400);
	assert_int_equal(store_sess_delete(other, "k3"), 1);
	usleep(20000);
	assert_int_equal(store_sess_get(f->st, "k3", keep, &s), 1);
	store_close(other);
}

static void inspect_reads_without_changing(void **state)
{
	struct fixture *f = *state;
	long long v = -1, n = -1;
	char err[128], empty[160];
	struct stat sb;

	assert_int_equal(store_inspect(f->path, &v, &n, err, sizeof(err)), 0);
	assert_int_equal(v, STORE_SCHEMA_VERSION);
	assert_true(n > 0);
	snprintf(empty, sizeof(empty), "%s/none.db", f->dir);
	assert_int_equal(store_inspect(empty, &v, &n, err, sizeof(err)), -1);
	assert_int_equal(stat(empty, &sb), -1);   /* not created */
	assert_int_equal(store_ping(f->st), 0);
	assert_int_equal(store_ping(NULL), -1);
}

static void a_batch_is_one_write(void **state)
{
	struct fixture *f = *state;
	struct store_push_row r = { .account = "a1", .mode = STORE_PUSH_POLL };

	assert_int_equal(store_begin(f->st), 0);
	assert_int_equal(store_begin(f->st), -1);    /* not one within it */
	assert_int_equal(store_push_put(f->st, &r), 0);
	r.account = "a2";
	assert_int_equal(store_push_put(f->st, &r), 0);
	assert_int_equal(store_commit(f->st), 0);
	assert_int_equal(store_test_int(f->st,
	    "SELECT count(*) FROM push_accounts"), 2);
	assert_int_equal(store_commit(f->st), -1);   /* none open */
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

/* What postern-admin shows of state_db: no password. */
static void shown_without_password(void **state)
{
	char out[256];

	(void)state;
	store_shown("/var/lib/postern/state.db", out, sizeof(out));
	assert_string_equal(out, "/var/lib/postern/state.db");
	store_shown("postgresql://postern:s3cret@db.example.org:5432/postern",
	    out, sizeof(out));
	assert_string_equal(out, "postgresql://db.example.org:5432/postern");
	store_shown("postgres:///postern?host=/run/pg&password=s3cret&sslmode=off",
	    out, sizeof(out));
	assert_string_equal(out, "postgres:///postern?host=/run/pg&sslmode=off");
	store_shown("postgresql://u@h/d?password=x", out, sizeof(out));
	assert_null(strstr(out, "password"));
	store_shown("postgresql://u:p@h/d", out, 8);
	assert_int_equal(strlen(out), 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(shown_without_password),
		T(session_row_read_back),
		T(seen_and_confirmed_never_go_back),
		T(list_is_last_seen_first_and_stops),
		T(deletions_count_what_they_end),
		T(rate_counts_add_and_refund),
		T(settings_replace_per_account),
		T(push_rows_modes_and_subscriptions),
		T(nodes_clean_up_only_their_own_rows),
		T(version_5_is_upgraded),
		T(session_deletions_are_told),
		T(kept_session_rows),
		T(leases_one_holder),
		T(rate_writes_at_once_never_fail),
		T(inspect_reads_without_changing),
		T(a_batch_is_one_write),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
