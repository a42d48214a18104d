/* testapp: a struct app for unit tests, over a fresh temporary directory.
 * Include after <cmocka.h>. The upstream is http://127.0.0.1:9 (discard),
 * where nothing listens: the session checks of test_req.c meet a mail
 * server that does not answer there, and no other unit test calls it.
 *
 *   struct testapp t;
 *   testapp_open(&t);        (or testapp_init, change t.app.cfg, testapp_start)
 *   ... t.app ...
 *   testapp_close(&t);
 *
 * With POSTERN_TEST_STATE_DB set (a PostgreSQL URI: tests/integration/
 * test_store_pg.py), the store is that database instead of a file,
 * emptied when the first app of the process opens; the tests that read
 * the SQLite file itself skip (testapp_sqlite_only).
 */
#ifndef POSTERN_TESTAPP_H
#define POSTERN_TESTAPP_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include "app.h"
#include "cfg.h"
#include "log.h"
#include "store_test.h"

#define TESTAPP_UPSTREAM "http://127.0.0.1:9"

struct testapp {
	struct app app;
	char dir[64];
	char db_path[256];
	char secret_path[128];
	int open;
};

/* Fills the configuration; nothing is opened yet. */
static inline void testapp_init(struct testapp *t)
{
	char err[256];
	const char *tmp = getenv("TMPDIR");

	memset(t, 0, sizeof(*t));
	log_init("unit", LOG_ERR);
	snprintf(t->dir, sizeof(t->dir), "%s/postern-unit-XXXXXX",
	    tmp && *tmp && strlen(tmp) < 32 ? tmp : "/tmp");
	assert_non_null(mkdtemp(t->dir));
	if (store_test_db())
		snprintf(t->db_path, sizeof(t->db_path), "%s", store_test_db());
	else
		snprintf(t->db_path, sizeof(t->db_path), "%s/state.db", t->dir);
	snprintf(t->secret_path, sizeof(t->secret_path), "%s/secret", t->dir);
	cfg_defaults(&t->app.cfg);
	assert_int_equal(cfg_set(&t->app.cfg, "upstream", TESTAPP_UPSTREAM,
	    err, sizeof(err)), 0);
	assert_int_equal(cfg_set(&t->app.cfg, "state_db", t->db_path,
	    err, sizeof(err)), 0);
	assert_int_equal(cfg_set(&t->app.cfg, "secret_file", t->secret_path,
	    err, sizeof(err)), 0);
}

/* The apps open in this process: a shared database is emptied when the
 * first one opens, not under another. */
static int testapp_live;

/* Opens the app over the configuration (creates secret and database). */
static inline void testapp_start(struct testapp *t)
{
	char err[512] = "";

	assert_int_equal(curl_global_init(CURL_GLOBAL_DEFAULT), CURLE_OK);
	if (app_open_cfg(&t->app, err, sizeof(err)) != 0)
		fail_msg("app_open_cfg: %s", err);
	t->open = 1;
	if (testapp_live++ == 0 && store_test_db() && t->app.store)
		assert_int_equal(store_test_wipe(t->app.store), 0);
}

/* Skips a test that reads or rewrites the SQLite file itself. */
static inline void testapp_sqlite_only(void)
{
	if (store_test_db())
		skip();
}

static inline void testapp_open(struct testapp *t)
{
	testapp_init(t);
	testapp_start(t);
}

/* A second app over t's database and secret file: another process of
 * the same installation. */
static inline void testapp_open_twin(struct testapp *t, struct testapp *t2)
{
	char err[256];

	testapp_init(t2);
	assert_int_equal(cfg_set(&t2->app.cfg, "state_db", t->db_path, err,
	    sizeof(err)), 0);
	assert_int_equal(cfg_set(&t2->app.cfg, "secret_file", t->secret_path,
	    err, sizeof(err)), 0);
	testapp_start(t2);
}

/* Closes the app and removes the directory with everything in it. */
static inline void testapp_close(struct testapp *t)
{
	char path[512];
	struct dirent *e;
	DIR *d;

	if (t->open) {
		app_close(&t->app);
		curl_global_cleanup();
		t->open = 0;
		testapp_live--;
	} else
		cfg_free(&t->app.cfg);
	if (t->dir[0] == '\0' || (d = opendir(t->dir)) == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", t->dir, e->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(t->dir);
	t->dir[0] = '\0';
}

/* cmocka setup/teardown over a heap testapp in *state. */
static inline int testapp_setup(void **state)
{
	struct testapp *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return -1;
	testapp_open(t);
	*state = t;
	return 0;
}

static inline int testapp_teardown(void **state)
{
	struct testapp *t = *state;

	if (t) {
		testapp_close(t);
		free(t);
	}
	*state = NULL;
	return 0;
}

/* One integer from a query on the app's store (e.g. a count). */
static inline long long testapp_count(struct testapp *t, const char *sql)
{
	long long n = store_test_int(t->app.store, sql);

	assert_true(n != -3);    /* the query is valid */
	return n == -2 ? 0 : n;  /* NULL reads as 0 */
}

#endif
