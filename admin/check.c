/* check: postern-admin check. Reads the configuration the way the
 * programs do, then looks at the files it names: only looks, so that it is
 * safe to run as any user at any time. */
#include "admin.h"

#include <errno.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


#include "addr.h"
#include "seal.h"
#include "store.h"

static void report(struct admin_report *r, const char *what, const char *fmt,
    va_list ap)
{
	fprintf(r->out, "%s: ", what);
	vfprintf(r->out, fmt, ap);
	fputc('\n', r->out);
}

void admin_error(struct admin_report *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report(r, "error", fmt, ap);
	va_end(ap);
	r->errors++;
}

void admin_warning(struct admin_report *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report(r, "warning", fmt, ap);
	va_end(ap);
	r->warnings++;
}

const char *admin_private_mode(mode_t mode)
{
	if (mode & 0007)
		return "others may read or write it";
	if (mode & 0070)
		return "its group may read or write it";
	return NULL;
}

/* The host of an http(s) URL that cfg already accepted, into host. */
static void url_host(const char *url, char *host, size_t n)
{
	const char *p = strstr(url, "://") + 3, *end;

	if (*p == '[')
		end = strchr(p, ']') ? strchr(p, ']') + 1 : p + strlen(p);
	else
		end = p + strcspn(p, ":/?");
	snprintf(host, n, "%.*s", (int)(end - p), p);
}

const char *admin_upstream_warning(const char *url)
{
	struct addr a;
	char host[256];
	enum addr_class k;

	if (strncmp(url, "http://", 7))
		return NULL;
	url_host(url, host, sizeof(host));
	if (!strcmp(host, "localhost"))
		return NULL;
	if (addr_parse_host(host, &a) == 1) {
		k = addr_classify(&a);
		if (k == ADDR_LOOPBACK || k == ADDR_PRIVATE || k == ADDR_ULA)
			return NULL;
	}
	return "upstream is plain http to a host that is not loopback or a "
	    "private address: passwords would cross the network in clear; "
	    "use https";
}

/* A private file: there, a regular file, readable, mode 0600. */
static int check_private(struct admin_report *r, const char *key,
    const char *path)
{
	struct stat st;
	const char *why;

	if (stat(path, &st) == -1) {
		admin_error(r, "%s %s: %s%s", key, path, strerror(errno),
		    errno == ENOENT ? " (postern-admin init creates it)" : "");
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		admin_error(r, "%s %s: not a regular file", key, path);
		return -1;
	}
	if ((why = admin_private_mode(st.st_mode)) != NULL)
		admin_error(r, "%s %s: mode %04o, %s (chmod 600)", key, path,
		    (unsigned)(st.st_mode & 07777), why);
	return 0;
}

/* The secret, read as the programs read it. */
static void check_secret(struct admin_report *r, const char *path)
{
	unsigned char key[APP_SECRET_LEN];

	if (check_private(r, "secret_file", path) == -1)
		return;
	if (app_read_secret(path, key) == -1)
		admin_error(r, "secret_file %s: %s", path,
		    errno == EINVAL ? "not 64 hex digits" : strerror(errno));
	seal_wipe(key, sizeof(key));
}

/* The folder of the state: others must not be able to replace files. */
static void check_folder(struct admin_report *r, const char *path)
{
	char *copy = strdup(path);
	struct stat st;

	if (copy == NULL)
		return;
	if (stat(dirname(copy), &st) == 0 && (st.st_mode & 0002) &&
	    !(st.st_mode & S_ISVTX))
		admin_error(r, "the folder of %s is writable by everyone", path);
	free(copy);
}

/* Opens without creating, reads the schema version; never migrates. */
static void check_db(struct admin_report *r, const char *state_db)
{
	long long v = -1, n = 0;
	char err[256], path[1024];

	/* A file's mode and folder; PostgreSQL guards its own. */
	if (!store_is_url(state_db) && check_private(r, "state_db", state_db) == -1)
		return;
	/* As shown: a URI without its password. */
	store_shown(state_db, path, sizeof(path));
	if (store_inspect(state_db, &v, &n, err, sizeof(err)) == -1) {
		admin_error(r, "state_db %s: %s", path, err);
	} else if (v == 0 && n == 0) {
		admin_error(r, "state_db %s: empty (postern-admin init fills it)",
		    path);
	} else if (v <= 0) {
		admin_error(r, "state_db %s: not a postern database", path);
	} else if (v > STORE_SCHEMA_VERSION) {
		admin_error(r, "state_db %s: schema %lld is newer than this "
		    "program (%d)", path, v, STORE_SCHEMA_VERSION);
	} else if (v < STORE_SCHEMA_VERSION) {
		admin_warning(r, "state_db %s: schema %lld, upgraded to %d when "
		    "a program opens it", path, v, STORE_SCHEMA_VERSION);
	}
	if (!store_is_url(state_db))
		check_folder(r, state_db);
}

static void check_files(struct admin_report *r, const struct cfg *c)
{
	const char *w;

	if ((w = admin_upstream_warning(c->upstream)) != NULL)
		admin_warning(r, "%s", w);
	if (c->upstream_ca_file && access(c->upstream_ca_file, R_OK) == -1)
		admin_error(r, "upstream_ca_file %s: %s", c->upstream_ca_file,
		    strerror(errno));
	if (c->push_public_url && strncmp(c->push_public_url, "https://", 8))
		admin_warning(r, "push_public_url is not https: JMAP servers "
		    "call back only over https");
	if (c->image_proxy_allow_loopback_for_tests)
		admin_error(r, "image_proxy_allow_loopback_for_tests is on: it "
		    "is for postern's test suite only");
	if (c->webpush_allow_loopback_for_tests)
		admin_error(r, "webpush_allow_loopback_for_tests is on: it is "
		    "for postern's test suite only");
	check_secret(r, c->secret_file);
	check_db(r, c->state_db);
	check_folder(r, c->secret_file);
}

int admin_check(const char *path, struct cfg *c, struct admin_report *r)
{
	char err[1024];

	cfg_defaults(c);
	if (cfg_load(c, path, err, sizeof(err)) == -1) {
		/* cfg_check's messages name no file: add it. */
		if (strncmp(err, path, strlen(path)))
			admin_error(r, "%s: %s", path, err);
		else
			admin_error(r, "%s", err);
		return r->errors;
	}
	fprintf(r->out, "configuration %s: read\n", path);
	r->loaded = 1;
	check_files(r, c);
	return r->errors;
}
