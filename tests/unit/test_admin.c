/* admin: postern-admin's commands over a real state database: what they
 * list, what they end, what check finds (of the JMAP server too, a tiny
 * HTTP server here on loopback), and that init is idempotent. */
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "admin.h"
#include "sess.h"
#include "testapp.h"

#define NOW ((time_t)1700000000)

/* A report written to memory. */
struct mem {
	char *text;
	size_t len;
	FILE *f;
};

static void mem_open(struct mem *m)
{
	memset(m, 0, sizeof(*m));
	assert_non_null(m->f = open_memstream(&m->text, &m->len));
}

static const char *mem_text(struct mem *m)
{
	fflush(m->f);
	return m->text;
}

static void mem_close(struct mem *m)
{
	fclose(m->f);
	free(m->text);
}

static void make(struct testapp *t, const char *user, int remember,
    time_t now, char cookie[SESS_COOKIE_LEN + 1])
{
	struct sess_new n;

	memset(&n, 0, sizeof(n));
	n.user = user;
	n.pass = "Jabberwock-Vorpal-7431";
	n.remember = remember;
	n.doc = "{}";
	n.api_url = n.download_url = n.upload_url = "http://127.0.0.1:9/";
	n.event_url = "";
	assert_int_equal(sess_create(&t->app, &n, now, cookie), 0);
}

static int lookup(struct testapp *t, const char *cookie, time_t now)
{
	struct sess *s = NULL;
	int rc = sess_lookup(&t->app, cookie, now, &s);

	sess_free(s);
	return rc;
}

static void exec(struct testapp *t, const char *sql)
{
	assert_int_equal(store_test_exec(t->app.store, sql), 0);
}

static void test_private_mode(void **state)
{
	assert_null(admin_private_mode(0100600));
	assert_null(admin_private_mode(0100400));
	assert_non_null(admin_private_mode(0100640));
	assert_non_null(admin_private_mode(0100604));
	assert_non_null(admin_private_mode(0100666));
}

static void test_upstream_warning(void **state)
{
	assert_null(admin_upstream_warning("https://mail.example.com"));
	assert_null(admin_upstream_warning("http://127.0.0.1:8080"));
	assert_null(admin_upstream_warning("http://localhost:8080/jmap"));
	assert_null(admin_upstream_warning("http://10.1.2.3"));
	assert_null(admin_upstream_warning("http://192.168.1.9:80"));
	assert_null(admin_upstream_warning("http://[::1]:8080"));
	assert_non_null(admin_upstream_warning("http://mail.example.com"));
	assert_non_null(admin_upstream_warning("http://192.0.2.1:8080"));
	assert_non_null(admin_upstream_warning("http://[2001:db8::1]"));
}

static void test_id_ok(void **state)
{
	assert_true(admin_id_ok("AbCd-_"));
	assert_true(admin_id_ok("AAAAAAAAAAAAAAAAAAAAAA"));
	assert_false(admin_id_ok("AbCd"));
	assert_false(admin_id_ok("AAAAAAAAAAAAAAAAAAAAAAA"));
	assert_false(admin_id_ok("abc%def"));
	assert_false(admin_id_ok("abc def"));
	assert_false(admin_id_ok(""));
}

/* The list shows live sessions, an id prefix and no secret. */
static void test_sessions(void **state)
{
	struct testapp *t = *state;
	char a1[SESS_COOKIE_LEN + 1], a2[SESS_COOKIE_LEN + 1], b[SESS_COOKIE_LEN + 1];
	char prefix[ADMIN_ID_SHOWN + 1];
	struct mem m;

	make(t, "alice@example.test", 1, NOW, a1);
	make(t, "alice@example.test", 0, NOW, a2);
	make(t, "bob@example.test", 0, NOW, b);
	mem_open(&m);
	assert_int_equal(admin_sessions(&t->app, NULL, NOW + 60, m.f), 3);
	memcpy(prefix, a1, ADMIN_ID_SHOWN);
	prefix[ADMIN_ID_SHOWN] = '\0';
	assert_non_null(strstr(mem_text(&m), prefix));
	assert_null(strstr(mem_text(&m), a1 + SESS_ID_LEN + 1));
	assert_null(strstr(mem_text(&m), "Jabberwock"));
	assert_non_null(strstr(mem_text(&m), "2023-11-14 22:13"));
	mem_close(&m);

	/* Logins are matched as sign-in does: case does not matter. */
	mem_open(&m);
	assert_int_equal(admin_sessions(&t->app, "ALICE@example.test", NOW, m.f), 2);
	assert_null(strstr(mem_text(&m), b));
	mem_close(&m);
	mem_open(&m);
	assert_int_equal(admin_sessions(&t->app, "nobody@example.test", NOW, m.f), 0);
	mem_close(&m);

	/* Past the idle time only the remembered one is live. */
	mem_open(&m);
	assert_int_equal(admin_sessions(&t->app, NULL,
	    NOW + t->app.cfg.session_idle + 1, m.f), 1);
	mem_close(&m);
}

static void test_revoke_id(void **state)
{
	struct testapp *t = *state;
	char a[SESS_COOKIE_LEN + 1], b[SESS_COOKIE_LEN + 1], prefix[16];
	char err[256] = "";

	make(t, "alice@example.test", 0, NOW, a);
	make(t, "bob@example.test", 0, NOW, b);
	snprintf(prefix, sizeof(prefix), "%.8s", a);
	assert_int_equal(admin_revoke_id(&t->app, prefix, err, sizeof(err)), 1);
	assert_int_equal(lookup(t, a, NOW), 1);
	assert_int_equal(lookup(t, b, NOW), 0);
	/* Gone now: nothing matches. */
	assert_int_equal(admin_revoke_id(&t->app, prefix, err, sizeof(err)), 0);
}

/* A prefix that matches two sessions ends neither. */
static void test_revoke_ambiguous(void **state)
{
	struct testapp *t = *state;
	char a[SESS_COOKIE_LEN + 1], b[SESS_COOKIE_LEN + 1], err[256] = "";

	make(t, "alice@example.test", 0, NOW, a);
	make(t, "bob@example.test", 0, NOW, b);
	exec(t, "UPDATE sessions SET id = 'Zz_-Zz_-' || substr(id, 9)");
	assert_int_equal(admin_revoke_id(&t->app, "Zz_-Zz", err, sizeof(err)), -1);
	assert_non_null(strstr(err, "matches 2"));
	assert_int_equal(testapp_count(t, "SELECT count(*) FROM sessions"), 2);
	/* '_' is no wildcard here: as LIKE would, "Z__" would match both. */
	assert_int_equal(admin_revoke_id(&t->app, "Z__-Zz", err, sizeof(err)), 0);
	assert_int_equal(testapp_count(t, "SELECT count(*) FROM sessions"), 2);
}

static void test_revoke_login_all(void **state)
{
	struct testapp *t = *state;
	char a1[SESS_COOKIE_LEN + 1], a2[SESS_COOKIE_LEN + 1], b[SESS_COOKIE_LEN + 1];

	make(t, "alice@example.test", 0, NOW, a1);
	make(t, "alice@example.test", 1, NOW, a2);
	make(t, "bob@example.test", 0, NOW, b);
	assert_int_equal(admin_revoke_login(&t->app, "Alice@Example.test"), 2);
	assert_int_equal(lookup(t, a1, NOW), 1);
	assert_int_equal(lookup(t, a2, NOW), 1);
	assert_int_equal(lookup(t, b, NOW), 0);
	assert_int_equal(admin_revoke_login(&t->app, "alice@example.test"), 0);
	assert_int_equal(admin_revoke_all(&t->app), 1);
	assert_int_equal(lookup(t, b, NOW), 1);
}

static void test_push(void **state)
{
	struct testapp *t = *state;
	struct mem m;
	char sql[512];

	snprintf(sql, sizeof(sql), "INSERT INTO push_accounts(account, mode,"
	    " sub_id, token_hash, expires, updated, tabs) VALUES"
	    " ('a1', 'subscription', 's1', 't', %lld, 0, 2),"
	    " ('a2', 'subscription', 's2', 't', %lld, 0, 0),"
	    " ('a3', 'subscription', 's3', 't', %lld, 0, 0),"
	    " ('a4', 'relay', NULL, NULL, NULL, 0, 1),"
	    " ('a5', 'poll', NULL, NULL, NULL, 0, 3)",
	    (long long)NOW + 5 * 86400, (long long)NOW + 3600,
	    (long long)NOW - 1);
	exec(t, sql);
	snprintf(sql, sizeof(sql), "INSERT INTO nodes(name, started, seen) VALUES"
	    " ('mail1', 0, %lld), ('mail2', 0, %lld)", (long long)NOW - 4,
	    (long long)NOW - 61);
	exec(t, sql);
	mem_open(&m);
	assert_int_equal(admin_push(&t->app, NOW, m.f), 0);
	assert_non_null(strstr(mem_text(&m), "not running"));
	assert_non_null(strstr(mem_text(&m), "node mail1: seen 4 s ago\n"
	    "node mail2: seen 61 s ago (gone)\n"));
	assert_non_null(strstr(mem_text(&m),
	    "subscription           3          1       2\n"));
	assert_non_null(strstr(mem_text(&m),
	    "relay                  1          1       1\n"));
	assert_non_null(strstr(mem_text(&m),
	    "poll                   1          1       3\n"));
	assert_non_null(strstr(mem_text(&m),
	    "subscriptions: 3 (expired 1, due for renewal 1)"));
	mem_close(&m);
}

static void test_push_empty(void **state)
{
	struct testapp *t = *state;
	struct mem m;

	mem_open(&m);
	assert_int_equal(admin_push(&t->app, NOW, m.f), 0);
	assert_non_null(strstr(mem_text(&m), "no account is followed"));
	assert_non_null(strstr(mem_text(&m), "subscriptions: 0"));
	mem_close(&m);
}

/* Writes the test app's configuration, plus extra, to dir/postern.conf. */
static void write_conf(struct testapp *t, const char *extra, char *path,
    size_t n)
{
	FILE *f;

	snprintf(path, n, "%s/postern.conf", t->dir);
	assert_non_null(f = fopen(path, "w"));
	fprintf(f, "# test\nupstream = http://127.0.0.1:9\nstate_db = %s\n"
	    "secret_file = %s\n%s", t->db_path, t->secret_path, extra);
	fclose(f);
}

/* Breaks the secret file (its first digit becomes a sign, which sscanf
 * alone would take), or mends it. */
static void secret_break(struct testapp *t, int broken)
{
	static char saved;
	FILE *f;

	assert_non_null(f = fopen(t->secret_path, "r+"));
	if (broken)
		assert_int_equal(fread(&saved, 1, 1, f), 1);
	rewind(f);
	assert_int_equal(fputc(broken ? '+' : saved, f), broken ? '+' : saved);
	fclose(f);
}

static int check(const char *path, struct mem *m)
{
	struct admin_report r;
	struct cfg c;
	int n;

	mem_open(m);
	r.out = m->f;
	r.errors = r.warnings = r.loaded = 0;
	n = admin_check(path, &c, &r);
	cfg_free(&c);
	return n;
}

static void test_check(void **state)
{
	struct testapp *t = *state;
	char path[256], want[300];
	struct mem m;

	write_conf(t, "", path, sizeof(path));
	assert_int_equal(check(path, &m), 0);
	mem_close(&m);

	/* An unknown key: file and line. */
	write_conf(t, "colour = blue\n", path, sizeof(path));
	assert_int_equal(check(path, &m), 1);
	snprintf(want, sizeof(want), "error: %s:5: unknown key colour", path);
	assert_non_null(strstr(mem_text(&m), want));
	mem_close(&m);

	/* A secret others can read. */
	write_conf(t, "", path, sizeof(path));
	assert_int_equal(chmod(t->secret_path, 0644), 0);
	assert_int_equal(check(path, &m), 1);
	assert_non_null(strstr(mem_text(&m), "mode 0644"));
	mem_close(&m);
	assert_int_equal(chmod(t->secret_path, 0600), 0);

	/* A secret file that holds no secret. */
	secret_break(t, 1);
	assert_int_equal(check(path, &m), 1);
	assert_non_null(strstr(mem_text(&m), "not 64 hex digits"));
	mem_close(&m);
	secret_break(t, 0);

	/* A database from a newer postern. */
	exec(t, "PRAGMA user_version = 99");
	assert_int_equal(check(path, &m), 1);
	assert_non_null(strstr(mem_text(&m), "schema 99 is newer"));
	mem_close(&m);
	/* An older one: the programs migrate it, check only says so. */
	exec(t, "PRAGMA user_version = 1");
	assert_int_equal(check(path, &m), 0);
	assert_non_null(strstr(mem_text(&m), "warning: state_db"));
	snprintf(want, sizeof(want), "schema 1, upgraded to %d", STORE_SCHEMA_VERSION);
	assert_non_null(strstr(mem_text(&m), want));
	mem_close(&m);
	snprintf(want, sizeof(want), "PRAGMA user_version = %d", STORE_SCHEMA_VERSION);
	exec(t, want);

	/* A state folder anyone may write to, unless sticky. */
	assert_int_equal(chmod(t->dir, 0777), 0);
	assert_int_equal(check(path, &m), 2);
	assert_non_null(strstr(mem_text(&m), "writable by everyone"));
	mem_close(&m);
	assert_int_equal(chmod(t->dir, 01777), 0);
	assert_int_equal(check(path, &m), 0);
	mem_close(&m);
	assert_int_equal(chmod(t->dir, 0700), 0);

	/* The tests' loopback switch, and a CA file that is not there. */
	write_conf(t, "image_proxy_allow_loopback_for_tests = yes\n"
	    "upstream_ca_file = /nonexistent/ca.pem\n", path, sizeof(path));
	assert_int_equal(check(path, &m), 2);
	assert_non_null(strstr(mem_text(&m), "for postern's test suite only"));
	assert_non_null(strstr(mem_text(&m), "upstream_ca_file /nonexistent"));
	mem_close(&m);

	/* Plain http across the internet: a warning, not an error. */
	write_conf(t, "upstream = http://mail.example.com\n", path, sizeof(path));
	assert_int_equal(check(path, &m), 0);
	assert_non_null(strstr(mem_text(&m), "warning: upstream is plain http"));
	mem_close(&m);
}

static void test_check_missing(void **state)
{
	struct testapp *t = *state;
	char path[256], conf[512];
	struct mem m;
	FILE *f;

	snprintf(path, sizeof(path), "%s/postern.conf", t->dir);
	assert_non_null(f = fopen(path, "w"));
	snprintf(conf, sizeof(conf), "upstream = http://127.0.0.1:9\n"
	    "state_db = %s/none.db\nsecret_file = %s/none\n", t->dir, t->dir);
	fputs(conf, f);
	fclose(f);
	assert_int_equal(check(path, &m), 2);
	assert_non_null(strstr(mem_text(&m), "postern-admin init creates it"));
	mem_close(&m);
	snprintf(conf, sizeof(conf), "%s/none.db", t->dir);
	assert_int_equal(access(conf, F_OK), -1);

	/* No upstream: cfg's own check, with the file named. */
	assert_non_null(f = fopen(path, "w"));
	fclose(f);
	assert_int_equal(check(path, &m), 1);
	assert_non_null(strstr(mem_text(&m), "upstream is not set"));
	assert_non_null(strstr(mem_text(&m), path));
	mem_close(&m);
}

static void test_init(void **state)
{
	struct testapp *t = *state;
	char path[256], conf[512], db[256], err[512] = "";
	struct mem m;
	struct stat st;
	FILE *f;

	snprintf(path, sizeof(path), "%s/postern.conf", t->dir);
	assert_non_null(f = fopen(path, "w"));
	snprintf(conf, sizeof(conf), "upstream = http://127.0.0.1:9\n"
	    "state_db = %s/lib/state.db\nsecret_file = %s/lib/secret\n"
	    "webpush_key_file = %s/lib/vapid.pem\n", t->dir, t->dir, t->dir);
	fputs(conf, f);
	fclose(f);
	mem_open(&m);
	assert_int_equal(admin_init(path, m.f, err, sizeof(err)), 0);
	assert_non_null(strstr(mem_text(&m), "created folder"));
	assert_non_null(strstr(mem_text(&m), "secret: created"));
	assert_non_null(strstr(mem_text(&m), "vapid.pem: created"));
	mem_close(&m);
	/* The VAPID key pair: private to its owner, like the secret. */
	snprintf(db, sizeof(db), "%s/lib/vapid.pem", t->dir);
	assert_int_equal(stat(db, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	snprintf(db, sizeof(db), "%s/lib", t->dir);
	assert_int_equal(stat(db, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	snprintf(db, sizeof(db), "%s/lib/state.db", t->dir);
	assert_int_equal(stat(db, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	snprintf(db, sizeof(db), "%s/lib/secret", t->dir);
	assert_int_equal(stat(db, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);

	mem_open(&m);
	assert_int_equal(admin_init(path, m.f, err, sizeof(err)), 0);
	assert_non_null(strstr(mem_text(&m), "secret: kept"));
	assert_non_null(strstr(mem_text(&m), "state.db: kept"));
	mem_close(&m);
	assert_int_equal(check(path, &m), 0);
	mem_close(&m);

	/* Clean up what testapp_close does not know about. */
	snprintf(db, sizeof(db), "rm -rf '%s/lib'", t->dir);
	assert_int_equal(system(db), 0);
}

/* ---- check asks the JMAP server ---- */

/* A tiny HTTP server on loopback: each connection gets the answer of its
 * request's path, then is closed. */
struct server {
	int fd, port;
	pthread_t thread;
};

/* The port /away redirects to: another origin. */
static int other_port;

static const struct {
	const char *path;
	const char *answer;   /* NULL: never answered */
} answers[] = {
	{ "/.well-known/jmap", "HTTP/1.1 401 Unauthorized\r\n"
	    "WWW-Authenticate: Basic realm=\"mail\"\r\nContent-Length: 0\r\n"
	    "Connection: close\r\n\r\n" },
	{ "/session", "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
	    "Connection: close\r\n\r\n{\"capabilities\": "
	    "{\"urn:ietf:params:jmap:core\": {}}, \"apiUrl\": \"/jmap/\"}" },
	{ "/bare401", "HTTP/1.1 401 Unauthorized\r\nConnection: close\r\n\r\n" },
	{ "/missing", "HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\n"
	    "Connection: close\r\n\r\n<html>nothing here</html>" },
	{ "/page", "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
	    "Connection: close\r\n\r\n<html>welcome</html>" },
	{ "/moved", "HTTP/1.1 302 Found\r\nLocation: /session\r\n"
	    "Connection: close\r\n\r\n" },
	{ "/away", "" },      /* a redirect to other_port, made below */
	{ "/slow", NULL },
};

static void answer_one(int fd)
{
	char req[4096], path[256], out[512];
	const char *a = "HTTP/1.1 500 Unknown Path\r\nConnection: close\r\n\r\n";
	size_t n = 0, i;
	ssize_t k;

	while (n < sizeof(req) - 1 &&
	    (k = read(fd, req + n, sizeof(req) - 1 - n)) > 0) {
		n += (size_t)k;
		req[n] = '\0';
		if (strstr(req, "\r\n\r\n"))
			break;
	}
	req[n] = '\0';
	if (sscanf(req, "GET %255s ", path) != 1)
		return;
	for (i = 0; i < sizeof(answers) / sizeof(answers[0]); i++)
		if (!strcmp(path, answers[i].path))
			a = answers[i].answer;
	if (a == NULL) {
		/* Held until the client gives up. */
		while (read(fd, req, sizeof(req)) > 0)
			;
		return;
	}
	if (!strcmp(path, "/away")) {
		snprintf(out, sizeof(out), "HTTP/1.1 302 Found\r\nLocation: "
		    "http://127.0.0.1:%d/session\r\nConnection: close\r\n\r\n",
		    other_port);
		a = out;
	}
	if (write(fd, a, strlen(a)) < 0)
		return;
}

static void *serve(void *arg)
{
	struct server *s = arg;
	int fd;

	while ((fd = accept(s->fd, NULL, NULL)) >= 0) {
		answer_one(fd);
		close(fd);
	}
	return NULL;
}

/* A loopback port: listened on when s is not NULL, else closed again
 * (nothing listens there: connections are refused). */
static int loopback(struct server *s)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	if (s == NULL) {
		close(fd);
		return ntohs(sa.sin_port);
	}
	assert_int_equal(listen(fd, 8), 0);
	s->fd = fd;
	s->port = ntohs(sa.sin_port);
	assert_int_equal(pthread_create(&s->thread, NULL, serve, s), 0);
	return s->port;
}

static void server_stop(struct server *s)
{
	shutdown(s->fd, SHUT_RDWR);
	pthread_join(s->thread, NULL);
	close(s->fd);
}

/* Runs the check against upstream http://127.0.0.1:port with path as the
 * session resource; its report into m and r. */
static void reach(int port, const char *path, struct mem *m,
    struct admin_report *r)
{
	char url[64], err[256];
	struct cfg c;

	cfg_defaults(&c);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	assert_int_equal(cfg_set(&c, "upstream", url, err, sizeof(err)), 0);
	assert_int_equal(cfg_set(&c, "upstream_session_path", path, err,
	    sizeof(err)), 0);
	assert_int_equal(cfg_set(&c, "upstream_timeout", "1s", err,
	    sizeof(err)), 0);
	mem_open(m);
	r->out = m->f;
	r->errors = r->warnings = 0;
	admin_check_upstream(&c, r);
	cfg_free(&c);
}

/* Expects errors and warnings, and want in the report. */
static void expect(int port, const char *path, int errors, int warnings,
    const char *want)
{
	struct admin_report r;
	struct mem m;

	reach(port, path, &m, &r);
	if (r.errors != errors || r.warnings != warnings ||
	    !strstr(mem_text(&m), want))
		fail_msg("%s: %d errors, %d warnings, not %d, %d with \"%s\":\n%s",
		    path, r.errors, r.warnings, errors, warnings, want,
		    mem_text(&m));
	mem_close(&m);
}

static void test_check_upstream(void **state)
{
	struct server s, other;
	int port = loopback(&s), closed = loopback(NULL);
	char want[128];

	other_port = loopback(&other);
	expect(port, "/.well-known/jmap", 0, 0, "the JMAP server answers (401");
	expect(port, "/session", 0, 0, "the JMAP server answers (200");
	expect(port, "/moved", 0, 0, "/session: the JMAP server answers (200");
	expect(port, "/bare401", 0, 1, "401 without WWW-Authenticate");
	snprintf(want, sizeof(want), "http://127.0.0.1:%d/missing answers HTTP "
	    "404", port);
	expect(port, "/missing", 1, 0, want);
	expect(port, "/page", 1, 0, "not with a JMAP session document "
	    "(Content-Type text/html)");
	expect(port, "/away", 0, 1, "another origin than upstream");
	expect(port, "/slow", 1, 0, "no answer in time");
	snprintf(want, sizeof(want), "cannot connect to 127.0.0.1:%d", closed);
	expect(closed, "/.well-known/jmap", 1, 0, want);
	server_stop(&s);
	server_stop(&other);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_private_mode),
		cmocka_unit_test(test_upstream_warning),
		cmocka_unit_test(test_id_ok),
		cmocka_unit_test_setup_teardown(test_sessions, testapp_setup, testapp_teardown),
		cmocka_unit_test_setup_teardown(test_revoke_id, testapp_setup, testapp_teardown),
		cmocka_unit_test_setup_teardown(test_revoke_ambiguous, testapp_setup, testapp_teardown),
		cmocka_unit_test_setup_teardown(test_revoke_login_all, testapp_setup, testapp_teardown),
		cmocka_unit_test_setup_teardown(test_push, testapp_setup, testapp_teardown),
		cmocka_unit_test_setup_teardown(test_push_empty, testapp_setup, testapp_teardown),
		cmocka_unit_test_setup_teardown(test_check, testapp_setup, testapp_teardown),
		cmocka_unit_test_setup_teardown(test_check_missing, testapp_setup, testapp_teardown),
		cmocka_unit_test_setup_teardown(test_init, testapp_setup, testapp_teardown),
		cmocka_unit_test(test_check_upstream),
	};
	int rc;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	curl_global_cleanup();
	return rc;
}
