/* init: postern-admin init. Creates what the programs would create on
 * first use (the secret, the database with its schema, the VAPID key
 * pair of Web Push), so that an
 * operator can make them before the web server runs, as the right user,
 * and see that it worked. Running it again changes nothing. */
#include "admin.h"
#include "store.h"

#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "vapid.h"

/* The folder of path, made 0700 when missing (its parent must exist:
 * make install creates the usual one). */
static int make_folder(const char *path, FILE *out, char *err, size_t errlen)
{
	char *copy = strdup(path);
	const char *dir;
	int rc = 0;

	if (copy == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	dir = dirname(copy);
	if (mkdir(dir, 0700) == 0)
		fprintf(out, "created folder %s\n", dir);
	else if (errno != EEXIST) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		rc = -1;
	}
	free(copy);
	return rc;
}

static void said(FILE *out, const char *what, const char *path, int existed)
{
	fprintf(out, "%s %s: %s\n", what, path, existed ? "kept" : "created");
}

/* The VAPID key pair, made when missing (mode 0600): 1 when it was there,
 * 0 when made, -1 on error. A key that is there but unreadable is an
 * error: pushd could not sign with it. */
static int make_vapid_key(const char *path, char *err, size_t errlen)
{
	EVP_PKEY *key;
	int rc = 1;

	if (access(path, F_OK) == 0) {
		if ((key = vapid_key_read(path)) == NULL) {
			snprintf(err, errlen, "webpush_key_file %s: not a P-256 "
			    "private key in PEM", path);
			return -1;
		}
		EVP_PKEY_free(key);
		return 1;
	}
	key = vapid_key_new();
	if (key == NULL || vapid_key_write(key, path) == -1) {
		snprintf(err, errlen, "webpush_key_file %s: %s", path,
		    key ? strerror(errno) : "cannot make a key");
		rc = -1;
	} else
		rc = 0;
	EVP_PKEY_free(key);
	return rc;
}

/* Whether the state database is there already: a file, or a PostgreSQL
 * database that holds the schema (PostgreSQL's server, role and database
 * are the operator's to make: INSTALL.md). */
static int db_exists(const char *db)
{
	long long v = 0, n = 0;
	char err[256];

	if (!store_is_url(db))
		return access(db, F_OK) == 0;
	return store_inspect(db, &v, &n, err, sizeof(err)) == 0 && v > 0;
}

int admin_init(const char *path, FILE *out, char *err, size_t errlen)
{
	struct app a;
	int had_secret, had_db, had_key;
	char shown[1024];

	if (app_load_cfg(&a, path, err, errlen) == -1)
		return -1;
	if ((!store_is_url(a.cfg.state_db) &&
	    make_folder(a.cfg.state_db, out, err, errlen) == -1) ||
	    make_folder(a.cfg.secret_file, out, err, errlen) == -1) {
		cfg_free(&a.cfg);
		return -1;
	}
	had_secret = access(a.cfg.secret_file, F_OK) == 0;
	had_db = db_exists(a.cfg.state_db);
	/* This creates both 0600 when missing, and migrates the schema. */
	if (app_open_cfg(&a, err, errlen) == -1) {
		cfg_free(&a.cfg);
		return -1;
	}
	said(out, "secret_file", a.cfg.secret_file, had_secret);
	store_shown(a.cfg.state_db, shown, sizeof(shown));
	said(out, "state_db", shown, had_db);
	had_key = 1;
	if (a.cfg.webpush && (make_folder(a.cfg.webpush_key_file, out, err,
	    errlen) == -1 || (had_key = make_vapid_key(a.cfg.webpush_key_file,
	    err, errlen)) == -1)) {
		app_close(&a);
		return -1;
	}
	if (a.cfg.webpush)
		said(out, "webpush_key_file", a.cfg.webpush_key_file, had_key);
	if (geteuid() == 0 && (!had_secret || !had_db || !had_key))
		fprintf(out, "note: these belong to root; the responders and "
		    "pushd must own them (chown them, or run init as their "
		    "user)\n");
	app_close(&a);
	return 0;
}
