#include "serve.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sys/socket.h>
#include <sys/time.h>

#include <curl/curl.h>
#include <fcgiapp.h>

#include "clientnet.h"
#include "log.h"
#include "pool.h"
#include "private.h"
#include "rate.h"
#include "seat.h"
#include "sess.h"
#include "upstream.h"
#include "usock.h"

/* A session check waits at most this long for the mail server, and after
 * one that timed out the process tries none for SERVE_CHECK_QUIET: a hung
 * mail server must not hold the responder that serves everyone's
 * settings and sign-ins. */
#define SERVE_CHECK_TIMEOUT 5L
#define SERVE_CHECK_QUIET 30
#define SERVE_CHECK_DOC_MAX (1 << 20)

static int route_matches(const struct route *rt, const char *path)
{
	if (rt->flags & ROUTE_PREFIX)
		return !strncmp(path, rt->path, strlen(rt->path));
	return !strcmp(path, rt->path);
}

/* The route for path and method; *path_known tells a 405 from a 404. */
static const struct route *find_route(const struct route *routes,
    const char *path, const char *method, int *path_known)
{
	const struct route *rt;

	*path_known = 0;
	for (rt = routes; rt->path; rt++) {
		if (!route_matches(rt, path))
			continue;
		*path_known = 1;
		if (!strcmp(rt->method, method))
			return rt;
	}
	return NULL;
}

static void method_not_allowed(struct req *r, const struct route *routes)
{
	const struct route *rt;
	char allow[64] = "";

	for (rt = routes; rt->path; rt++)
		if (route_matches(rt, r->path) && !strstr(allow, rt->method) &&
		    strlen(allow) + strlen(rt->method) + 3 < sizeof(allow)) {
			if (*allow)
				strcat(allow, ", ");
			strcat(allow, rt->method);
		}
	req_header(r, "Allow", allow);
	req_error(r, ERR_METHOD, NULL);
}

/* Browsers say where a request comes from; anything but our own origin or
 * a typed-in address is refused before it can do anything. */
static int cross_site(const struct req *r)
{
	const char *site = req_param(r, "HTTP_SEC_FETCH_SITE");

	return site && strcmp(site, "same-origin") && strcmp(site, "none");
}

void serve_no_session(struct req *r, int rc)
{
	if (rc == -1) {
		serve_store_failed(r);
		return;
	}
	serve_clear_cookie(r);
	req_error(r, ERR_UNAUTHENTICATED, NULL);
}

static int load_session(struct req *r)
{
	char cookie[SESS_COOKIE_LEN + 2];
	int rc;

	if (req_cookie(r, SESS_COOKIE, cookie, sizeof(cookie)) == -1)
		rc = 1;
	else
		rc = sess_lookup(r->app, cookie, r->now, &r->sess);
	if (rc == 0)
		return 0;
	serve_no_session(r, rc);
	return -1;
}

void serve_session_refused(struct req *r)
{
	sess_refused(r->app, r->sess->id);
	r->sess->ended = 1;
	serve_clear_cookie(r);
	req_error(r, ERR_SESSION_REFUSED, NULL);
}

/* Asks the session resource with the session's credentials, the cheapest
 * authenticated request (as sign-in does). The result, with the status
 * in *status. */
static int ask_mail_server(struct req *r, long *status)
{
	const struct cfg *cf = &r->app->cfg;
	struct up_call c;
	char *url;
	int res;

	*status = 0;
	if ((url = upstream_join(cf, cf->upstream_session_path)) == NULL)
		return UP_ERROR;
	memset(&c, 0, sizeof(c));
	c.method = "GET";
	c.url = url;
	c.user = r->sess->user;
	c.pass = r->sess->pass;
	c.follow = 1;
	c.max_body = SERVE_CHECK_DOC_MAX;
	c.timeout = cf->upstream_timeout < SERVE_CHECK_TIMEOUT ?
	    cf->upstream_timeout : SERVE_CHECK_TIMEOUT;
	c.connect_timeout = cf->upstream_connect_timeout < c.timeout ?
	    cf->upstream_connect_timeout : c.timeout;
	res = upstream_call(r->app->up, &c);
	*status = c.status;
	free(url);
	return res;
}

/* A session whose acceptance by the mail server is older than
 * session_recheck is checked before a route that does not ask the mail
 * server acts for it. 1: go on; 0: answered (refused: the session ended;
 * or a change the mail server could not confirm). When the mail server
 * does not answer, reads go on (an outage locks nobody out of their
 * settings) and changes are refused. */
static int session_good(struct req *r)
{
	struct app *a = r->app;
	long long verified;
	long status = 0;
	int res = UP_TIMEOUT;

	if (sess_fresh(a, r->sess->verified, r->now))
		return 1;
	/* A row kept in memory (store_sess_keep) does not know of another
	 * node's check: the row itself, before the mail server is asked. */
	if (sess_state(a, r->sess->id, r->now, &verified) == 1 &&
	    sess_fresh(a, verified, r->now)) {
		r->sess->verified = verified;
		return 1;
	}
	if (r->now >= a->check_quiet_until)
		res = ask_mail_server(r, &status);
	if (res == UP_OK && status >= 200 && status < 300) {
		if (sess_confirmed(a, r->sess->id, r->now) == 0)
			r->sess->seen = r->now;
		r->sess->verified = r->now;
		return 1;
	}
	if (res == UP_OK && (status == 401 || status == 403)) {
		serve_session_refused(r);
		return 0;
	}
	if (res == UP_TIMEOUT && r->now >= a->check_quiet_until) {
		a->check_quiet_until = (long long)r->now + SERVE_CHECK_QUIET;
		log_warn("session check: the mail server did not answer in time");
	} else if (res == UP_OK)
		log_warn("session check: the mail server answered %ld", status);
	if (!strcmp(r->method, "GET") || !strcmp(r->method, "HEAD"))
		return 1;
	if (res == UP_TIMEOUT)
		req_error(r, ERR_UPSTREAM_TIMEOUT, "The mail server did not "
		    "answer in time to confirm this sign-in. Please try again.");
	else
		req_error(r, ERR_UPSTREAM, "The mail server could not "
		    "confirm this sign-in. Please try again.");
	return 0;
}

int serve_budget(struct app *a, const char *sess_id, time_t now, long *retry)
{
	char what[64];
	long limit = a->cfg.api_budget, window = a->cfg.api_budget_window;

	*retry = 0;
	if (limit == 0)
		return 0;
	snprintf(what, sizeof(what), "api:%s", sess_id);
	return rate_hit_batched(a, what, limit, window, now, retry);
}

void serve_over_budget(struct req *r, int rc, long retry)
{
	if (rc == 1)
		req_rate_limited(r, retry);
	else
		serve_store_failed(r);
}

static int within_budget(struct req *r)
{
	long retry;
	int rc = serve_budget(r->app, r->sess->id, r->now, &retry);

	if (rc != 0)
		serve_over_budget(r, rc, retry);
	return rc == 0;
}

const struct route *serve_admit(struct req *r, const struct route *routes)
{
	const struct route *rt;
	const char *csrf;
	int known;

	if (cross_site(r)) {
		req_error(r, ERR_CROSS_SITE, NULL);
		return NULL;
	}
	if ((rt = find_route(routes, r->path, r->method, &known)) == NULL) {
		if (known)
			method_not_allowed(r, routes);
		else
			req_error(r, ERR_NOT_FOUND, "No such API endpoint.");
		return NULL;
	}
	if (app_db(r->app) == -1) {
		serve_store_failed(r);
		return NULL;
	}
	csrf = req_param(r, SERVE_CSRF_PARAM);
	if (strcmp(r->method, "GET") && strcmp(r->method, "HEAD") &&
	    (csrf == NULL || *csrf == '\0')) {
		req_error(r, ERR_MISSING_CSRF, NULL);
		return NULL;
	}
	return rt;
}

void serve_dispatch(struct req *r, const struct route *routes)
{
	const struct route *rt;

	if ((rt = serve_admit(r, routes)) == NULL)
		return;
	if ((rt->flags & ROUTE_SESSION) && load_session(r) == -1)
		return;
	if ((rt->flags & ROUTE_BUDGET) && !within_budget(r))
		goto out;
	if ((rt->flags & (ROUTE_SESSION | ROUTE_UPSTREAM)) == ROUTE_SESSION &&
	    !session_good(r))
		goto out;
	rt->handler(r);
	if (!r->head_sent)
		req_end(r);
out:
	sess_touch(r->app, r->sess, r->now);
}

void serve_store_failed(struct req *r)
{
	req_header(r, "Retry-After", SERVE_RETRY_AFTER);
	req_error(r, ERR_UNAVAILABLE, NULL);
}

void serve_upstream_failed(struct req *r, int res)
{
	if (res == UP_TIMEOUT)
		req_error(r, ERR_UPSTREAM_TIMEOUT, NULL);
	else
		req_error(r, ERR_UPSTREAM, "The mail server could not be reached.");
}

void serve_clear_cookie(struct req *r)
{
	char v[160];
	int secure = r->app->cfg.cookie_secure == CFG_SECURE_YES ||
	    (r->app->cfg.cookie_secure == CFG_SECURE_AUTO && r->https);

	snprintf(v, sizeof(v), "%s=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0%s",
	    SESS_COOKIE, secure ? "; Secure" : "");
	req_header(r, "Set-Cookie", v);
}

/* The two transports behind struct req_io. */
static int fcgx_read(void *ctx, char *p, int n)
{
	return FCGX_GetStr(p, n, ((FCGX_Request *)ctx)->in);
}

/* A write to the web server: libfcgi's buffer (8 KiB) is filled, and
 * emptied only once the connection has room (seat_wait_writable), so
 * that a pool sees which answers their readers stopped taking. */
static int fcgx_write(void *ctx, const char *p, int n)
{
	FCGX_Request *rq = ctx;
	int k;

	while (n > 0) {
		/* A stream libfcgi closed keeps its buffer full and flushes as
		 * a no-op: stop here. */
		if (rq->out->isClosed || FCGX_GetError(rq->out))
			return -1;
		if ((k = (int)(rq->out->stop - rq->out->wrNext)) <= 0) {
			if (seat_wait_writable(rq->ipcFd, REQ_SEND_IDLE * 1000L) == -1 ||
			    FCGX_FFlush(rq->out) == -1)
				return -1;
			continue;
		}
		k = k < n ? k : n;
		if (FCGX_PutStr(p, k, rq->out) != k)
			return -1;
		p += k;
		n -= k;
	}
	return 0;
}

static int fcgx_flush(void *ctx)
{
	FCGX_Request *rq = ctx;

	if (seat_wait_writable(rq->ipcFd, REQ_SEND_IDLE * 1000L) == -1)
		return -1;
	return FCGX_FFlush(rq->out);
}

static const char *fcgx_param(void *ctx, const char *name)
{
	return FCGX_GetParam(name, ((FCGX_Request *)ctx)->envp);
}

/* On the connection from the web server: a read or write that waits
 * longer fails, and libfcgi reports the error. */
static int fcgx_timeouts(void *ctx, long recv_ms, long send_ms)
{
	int fd = ((FCGX_Request *)ctx)->ipcFd;
	struct timeval in = { recv_ms / 1000, (recv_ms % 1000) * 1000 };
	struct timeval out = { send_ms / 1000, (send_ms % 1000) * 1000 };

	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &in, sizeof(in)) == -1 ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &out, sizeof(out)) == -1)
		return -1;
	return 0;
}

static int cgi_read(void *ctx, char *p, int n)
{
	size_t got = fread(p, 1, (size_t)n, stdin);

	return got == 0 && ferror(stdin) ? -1 : (int)got;
}

static int cgi_write(void *ctx, const char *p, int n)
{
	return fwrite(p, 1, (size_t)n, stdout) == (size_t)n ? 0 : -1;
}

static int cgi_flush(void *ctx)
{
	return fflush(stdout) == 0 ? 0 : -1;
}

static const char *cgi_param(void *ctx, const char *name)
{
	return getenv(name);
}

/* A client refused a pool's last free process (seat.h) is told to come
 * back then: by then its stalled answers are given up, or done. */
#define SEAT_RETRY 5

/* This process's seat for r's client: 0, or -1 with the 429 sent.
 * Outside a pool (lighttpd's processes, CGI) nothing to do. */
static int take_seat(struct req *r)
{
	char client[REQ_IP_MAX + 8];

	if (!seat_pooled())
		return 0;
	client_net(r->ip, r->app->cfg.login_ipv6_prefix, client, sizeof(client));
	if (seat_take(client) == 0)
		return 0;
	req_rate_limited(r, SEAT_RETRY);
	return -1;
}

/* One request over io, with the transport's deadlines (or NULL); then,
 * when it was valid, after (or NULL). */
static void serve_one(struct app *a, const struct req_io *io,
    req_timeouts_fn timeouts, const struct route *routes,
    void (*after)(struct req *))
{
	struct req r;

	if (req_init(&r, a, io) == 0) {
		if (timeouts)
			req_deadlines(&r, timeouts);
		if (take_seat(&r) == 0)
			serve_dispatch(&r, routes);
		if (after)
			after(&r);
	}
	req_free(&r);
}

/* Under Apache's mod_cgid stdin and stdout are one socket: a program that
 * exits with part of the body unread resets it, and the answer it wrote
 * is lost. So the rest of a body that was answered without being read
 * (a refusal) is read and dropped: up to its declared length, which the
 * web server bounds (Apache's LimitRequestBody, 1 GiB unless set), or for
 * a chunked body up to the end the server marks, at most 64 MiB (the
 * largest body the shipped configurations take). */
#define CGI_DRAIN_CHUNKED (64LL << 20)

static int cgi_body_left(const struct req *r)
{
	if (r->content_length >= 0)
		return r->body_read < r->content_length;
	return req_param(r, "HTTP_TRANSFER_ENCODING") != NULL;
}

static void cgi_drain(struct req *r)
{
	char chunk[16384];
	long long left = r->content_length >= 0 ? r->content_length : CGI_DRAIN_CHUNKED;
	long n;

	if (!cgi_body_left(r) || fflush(stdout) != 0)
		return;
	while (left > 0 && (n = req_read(r, chunk, sizeof(chunk))) > 0)
		left -= n;
}

static int serve_cgi(struct app *a, const struct route *routes)
{
	static const struct req_io io = { NULL, cgi_read, cgi_write, cgi_flush,
	    cgi_param };

	serve_one(a, &io, NULL, routes, cgi_drain);
	return fflush(stdout) == 0 ? 0 : 1;
}

/* The listening socket: fd 0 as the web server or spawn-fcgi hands it
 * over, or a Unix socket path given with -s, made 0660 like pushd's so
 * that the web server's group may connect; -n N after it runs N
 * processes on it (*procs, else 1). */
static int listen_fd(int argc, char **argv, int *procs)
{
	char err[512], *end = "";
	long n = 1;
	int fd;

	*procs = 1;
	if (argc < 3 || strcmp(argv[1], "-s"))
		return 0;
	if (argv[2][0] != '/') {
		log_err("-s takes an absolute Unix socket path");
		return -1;
	}
	if (argc == 5 && !strcmp(argv[3], "-n"))
		n = strtol(argv[4], &end, 10);
	else if (argc != 3)
		end = "x";
	if (*end || n < 1 || n > POOL_MAX) {
		log_err("usage: -s SOCKET [-n PROCESSES, 1 to %d]", POOL_MAX);
		return -1;
	}
	*procs = (int)n;
	if ((fd = usock_listen(argv[2], 128, 0, err, sizeof(err))) == -1)
		log_err("-s %s", err);
	return fd;
}

static int serve_fcgi(struct app *a, const struct route *routes, int fd)
{
	static const struct req_io fcgx_io = { NULL, fcgx_read, fcgx_write,
	    fcgx_flush, fcgx_param };
	struct req_io io = fcgx_io;
	FCGX_Request rq;

	if (FCGX_InitRequest(&rq, fd, 0) != 0) {
		log_err("cannot set up the FastCGI request");
		return 1;
	}
	io.ctx = &rq;
	seat_listen(fd);
	while (FCGX_Accept_r(&rq) >= 0) {
		seat_busy();
		serve_one(a, &io, fcgx_timeouts, routes, NULL);
		seat_wait_writable(rq.ipcFd, REQ_SEND_IDLE * 1000L);
		FCGX_Finish_r(&rq);
		seat_leave();
	}
	FCGX_Free(&rq, 1);
	return 0;
}

/* A CGI process that cannot start still owes the browser an answer; a
 * FastCGI one dies and the web server reports it. */
static void cgi_startup_failed(void)
{
	fputs("Status: 500 Internal Server Error\r\n"
	    "Content-Type: application/json; charset=utf-8\r\n"
	    "Cache-Control: no-store\r\n\r\n"
	    "{\"error\":\"internal_error\",\"message\":"
	    "\"postern is not configured correctly; see the server log.\"}", stdout);
	fflush(stdout);
}

/* What one serving process needs; each process of a pool opens its own
 * state (SQLite and libcurl handles are not shared across a fork). */
struct serving {
	const char *prog;
	const struct route *routes;
	int fd, cgi;
};

static int serve_process(void *arg)
{
	const struct serving *sv = arg;
	struct app a;
	char err[512];
	int rc;

	if (app_open_serving(&a, err, sizeof(err)) == -1) {
		log_err("%s", err);
		if (sv->cgi)
			cgi_startup_failed();
		return 1;
	}
	log_init(sv->prog, (enum log_level)a.cfg.log_level);
	if (!sv->cgi)
		app_keep_sessions(&a);  /* a CGI process serves one request */
	rc = sv->cgi ? serve_cgi(&a, sv->routes) : serve_fcgi(&a, sv->routes, sv->fd);
	app_close(&a);
	return rc;
}

int serve_main(int argc, char **argv, const char *prog,
    const struct route *routes)
{
	struct serving sv = { prog, routes, 0, 0 };
	int rc, procs = 1;

	log_init(prog, LOG_INFO);
	private_memory();
	signal(SIGPIPE, SIG_IGN);
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		log_err("libcurl failed to start");
		return 1;
	}
	if (FCGX_Init() != 0 || (sv.fd = listen_fd(argc, argv, &procs)) < 0) {
		log_err("FastCGI failed to start");
		return 1;
	}
	sv.cgi = sv.fd == 0 && FCGX_IsCGI();
	rc = procs > 1 ? pool_run(procs, serve_process, &sv) : serve_process(&sv);
	curl_global_cleanup();
	return rc;
}
