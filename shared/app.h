/* app: what a process opens once at start-up and every request uses: the
 * configuration, the state database, the server secret and the upstream
 * client. Nothing in it changes from one user's request to the next. */
#ifndef POSTERN_APP_H
#define POSTERN_APP_H

#include <stddef.h>

#include "cfg.h"

#define APP_SECRET_LEN 32
#define APP_KEY_HEX 32
#define APP_CLOSERS 4

struct store;
struct upstream;
struct rate_cache;
struct sess_cache;

struct app {
	struct cfg cfg;
	struct store *store;   /* NULL while it will not open */
	unsigned char secret[APP_SECRET_LEN];
	struct upstream *up;
	/* Per-process caches of the data path (rate.c, sess.c); NULL until
	 * first used. The module that fills one registers with app_on_close
	 * how to write it back and free it, so app.c knows none of them. */
	struct rate_cache *rate_cache;
	struct sess_cache *sess_cache;
	void (*closers[APP_CLOSERS])(struct app *a);
	int n_closers;
	int db_later;          /* a database that will not open is retried */
	/* A long-lived responder: session rows are kept between requests
	 * where the engine allows (store_sess_keep). */
	int keep_sessions;
	/* serve.c: a session check timed out; until then no other is tried
	 * (about the mail server, not about any user). */
	long long check_quiet_until;
};

/* Reads a server secret file (64 hex digits, a final newline allowed)
 * into out: 0, or -1 with errno (EINVAL: the file holds no secret). */
int app_read_secret(const char *path, unsigned char *out);
/* Reads the configuration at path (or POSTERN_CONF, or the installed
 * default when path is NULL), opens the database, reads or creates the
 * secret. 0, or -1 with the reason in err. */
int app_open(struct app *a, const char *path, char *err, size_t errlen);
/* Only the first step of app_open: a zeroed app with the configuration
 * read (path as there). 0, or -1 with the reason in err. */
int app_load_cfg(struct app *a, const char *path, char *err, size_t errlen);
/* The rest of app_open over a configuration already filled in (the tests,
 * postern-admin once it checked the paths); the caller frees the
 * configuration when this fails. */
int app_open_cfg(struct app *a, char *err, size_t errlen);
/* As app_open for a responder: a state database that cannot be opened
 * (read-only, locked, its disk gone) is logged and not an error; app_db
 * opens it at a later request, so the process answers 503 meanwhile and
 * recovers without a restart. */
int app_open_serving(struct app *a, char *err, size_t errlen);
/* Keeps session rows from now on (keep_sessions), in the store open now
 * and in any opened later. */
void app_keep_sessions(struct app *a);
/* 0 when the state store is open (opening it now if it was not), else -1. */
int app_db(struct app *a);
/* Runs the closers registered (each once, in order): the caches are
 * written back and freed; the rest stays open. */
void app_close_caches(struct app *a);
/* app_close_caches, then closes the upstream client, the store and the
 * configuration. */
void app_close(struct app *a);
/* Registers fn for app_close (once, however often it is asked). */
void app_on_close(struct app *a, void (*fn)(struct app *a));
/* A stable opaque name for s under the server secret (32 hex digits),
 * purpose keeping the name spaces apart. */
void app_key(const struct app *a, const char *purpose, const char *s,
    char out[APP_KEY_HEX + 1]);
/* The configuration file to read when none is given. */
const char *app_conf_path(void);

#endif
