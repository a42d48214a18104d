#include "app.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "log.h"
#include "seal.h"
#include "store.h"
#include "upstream.h"

const char *app_conf_path(void)
{
	const char *p = getenv("POSTERN_CONF");

	return p && *p ? p : SYSCONFDIR "/postern/postern.conf";
}

static int parse_secret(const char *text, size_t n, unsigned char *out)
{
	size_t i;
	unsigned int v;

	while (n && (text[n - 1] == '\n' || text[n - 1] == '\r'))
		n--;
	/* Hex digits only: sscanf alone would take signs and spaces. */
	if (n != 2 * APP_SECRET_LEN ||
	    strspn(text, "0123456789abcdefABCDEF") != 2 * APP_SECRET_LEN)
		return -1;
	for (i = 0; i < APP_SECRET_LEN; i++) {
		if (sscanf(text + 2 * i, "%2x", &v) != 1)
			return -1;
		out[i] = (unsigned char)v;
	}
	return 0;
}

int app_read_secret(const char *path, unsigned char *out)
{
	char text[2 * APP_SECRET_LEN + 8];
	ssize_t n;
	int fd, rc;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n < 0)
		return -1;
	text[n] = '\0';
	rc = parse_secret(text, (size_t)n, out);
	seal_wipe(text, sizeof(text));
	if (rc == -1)
		errno = EINVAL;
	return rc;
}

/* Writes a new secret to a private temporary file, then links it into
 * place: link() fails if another process won the race, and no reader can
 * ever see a half-written secret. The loser reads the winner's. Returns 0
 * when it created the secret, 1 when it read another's, -1 on error. */
static int create_secret(const char *path, unsigned char *out)
{
	char hex[2 * APP_SECRET_LEN + 2], tmp[4096];
	int fd, rc = -1;
	ssize_t n;

	if (snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid()) >=
	    (int)sizeof(tmp))
		return -1;
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd == -1)
		return -1;
	if (seal_random(out, APP_SECRET_LEN) == 0) {
		seal_hex(out, APP_SECRET_LEN, hex);
		strcat(hex, "\n");
		n = write(fd, hex, strlen(hex));
		if (n == 2 * APP_SECRET_LEN + 1 && fsync(fd) == 0)
			rc = 0;
		seal_wipe(hex, sizeof(hex));
	}
	if (close(fd) == -1)
		rc = -1;
	if (rc == 0 && link(tmp, path) == -1)
		rc = errno == EEXIST && app_read_secret(path, out) == 0 ? 1 : -1;
	unlink(tmp);
	return rc;
}

static int load_secret(struct app *a, char *err, size_t errlen)
{
	const char *path = a->cfg.secret_file;
	int rc;

	if (app_read_secret(path, a->secret) == 0)
		return 0;
	if (errno == ENOENT && (rc = create_secret(path, a->secret)) >= 0) {
		if (rc == 0)
			log_info("created a new server secret in %s", path);
		return 0;
	}
	snprintf(err, errlen, "secret_file %s: %s", path,
	    errno == EINVAL ? "not 64 hex digits" : strerror(errno));
	return -1;
}

/* The store, named after this node (node_name). */
static int open_store(struct app *a, char *err, size_t errlen)
{
	if (store_open(&a->store, a->cfg.state_db, err, errlen) == -1)
		return -1;
	store_set_node(a->store, a->cfg.node_name);
	if (a->keep_sessions)
		store_sess_keep(a->store);  /* -1 on SQLite: read each time */
	return 0;
}

int app_open_cfg(struct app *a, char *err, size_t errlen)
{
	a->up = NULL;
	a->rate_cache = NULL;
	a->sess_cache = NULL;
	a->n_closers = 0;
	if (load_secret(a, err, errlen) == -1)
		return -1;
	if (open_store(a, err, errlen) == -1) {
		if (!a->db_later)
			return -1;
		log_err("%s (answering 503 until it opens)", err);
	}
	if ((a->up = upstream_new(&a->cfg)) == NULL) {
		snprintf(err, errlen, "cannot set up the upstream client");
		store_close(a->store);
		a->store = NULL;
		return -1;
	}
	return 0;
}

int app_load_cfg(struct app *a, const char *path, char *err, size_t errlen)
{
	memset(a, 0, sizeof(*a));
	cfg_defaults(&a->cfg);
	if (cfg_load(&a->cfg, path ? path : app_conf_path(), err, errlen) == -1) {
		cfg_free(&a->cfg);
		return -1;
	}
	return 0;
}

static int open_flags(struct app *a, const char *path, int later, char *err,
    size_t errlen)
{
	if (app_load_cfg(a, path, err, errlen) == -1)
		return -1;
	a->db_later = later;
	if (app_open_cfg(a, err, errlen) == -1) {
		cfg_free(&a->cfg);
		return -1;
	}
	return 0;
}

int app_open(struct app *a, const char *path, char *err, size_t errlen)
{
	return open_flags(a, path, 0, err, errlen);
}

int app_open_serving(struct app *a, char *err, size_t errlen)
{
	return open_flags(a, NULL, 1, err, errlen);
}

void app_keep_sessions(struct app *a)
{
	a->keep_sessions = 1;
	if (a->store)
		store_sess_keep(a->store);
}

int app_db(struct app *a)
{
	char err[512];

	if (a->store)
		return 0;
	if (open_store(a, err, sizeof(err)) == 0) {
		log_info("the state database is open again");
		return 0;
	}
	log_err("%s", err);
	return -1;
}

void app_close_caches(struct app *a)
{
	int i;

	for (i = 0; i < a->n_closers; i++)
		a->closers[i](a);
	a->n_closers = 0;
}

void app_close(struct app *a)
{
	app_close_caches(a);
	upstream_free(a->up);
	a->up = NULL;
	store_close(a->store);
	a->store = NULL;
	cfg_free(&a->cfg);
	seal_wipe(a->secret, sizeof(a->secret));
}

void app_on_close(struct app *a, void (*fn)(struct app *a))
{
	int i;

	for (i = 0; i < a->n_closers; i++)
		if (a->closers[i] == fn)
			return;
	if (a->n_closers < APP_CLOSERS)
		a->closers[a->n_closers++] = fn;
	else
		log_err("app: more than %d caches to close; raise APP_CLOSERS",
		    APP_CLOSERS);
}

void app_key(const struct app *a, const char *purpose, const char *s,
    char out[APP_KEY_HEX + 1])
{
	unsigned char mac[SEAL_HASH_LEN];
	struct buf b;

	buf_init(&b, 1 << 16);
	if (buf_printf(&b, "%s\n%s", purpose, s) == -1 ||
	    seal_hmac(a->secret, APP_SECRET_LEN, b.data, b.len, mac) == -1)
		memset(mac, 0, sizeof(mac));
	buf_wipe_free(&b);
	seal_hex(mac, APP_KEY_HEX / 2, out);
}
