#include "mcurl.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "addr.h"
#include "log.h"
#include "pushd.h"

/* What pushd watches for one of libcurl's sockets. */
struct mc_sock {
	struct ev_io io;
	struct pushd *pd;
};

static void mc_check(struct pushd *pd)
{
	struct mc_job *job;
	CURLMsg *msg;
	CURL *easy;
	CURLcode rc;
	long status = 0;
	int left;

	while ((msg = curl_multi_info_read(pd->multi, &left)) != NULL) {
		if (msg->msg != CURLMSG_DONE)
			continue;
		easy = msg->easy_handle;
		rc = msg->data.result;
		job = NULL;
		curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&job);
		curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
		if (job)
			curl_easy_getinfo(easy, CURLINFO_RETRY_AFTER,
			    &job->retry_after);
		curl_multi_remove_handle(pd->multi, easy);
		curl_easy_cleanup(easy);
		if (job) {
			job->easy = NULL;
			job->done(job, rc, status);
		}
	}
}

static void mc_on_io(struct ev *ev, struct ev_io *io, uint32_t revents)
{
	struct pushd *pd = pushd_of(ev);
	int flags = 0, running;

	if (revents & EPOLLIN)
		flags |= CURL_CSELECT_IN;
	if (revents & EPOLLOUT)
		flags |= CURL_CSELECT_OUT;
	if (revents & (EPOLLERR | EPOLLHUP))
		flags |= CURL_CSELECT_ERR;
	curl_multi_socket_action(pd->multi, io->fd, flags, &running);
	mc_check(pd);
}

static void mc_on_timer(struct ev *ev, struct ev_timer *t)
{
	struct pushd *pd = pushd_of(ev);
	int running;

	curl_multi_socket_action(pd->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	mc_check(pd);
}

static int mc_socket_cb(CURL *easy, curl_socket_t s, int what, void *userp,
    void *socketp)
{
	struct pushd *pd = userp;
	struct mc_sock *ms = socketp;
	uint32_t events = (what & CURL_POLL_IN ? EPOLLIN : 0) |
	    (what & CURL_POLL_OUT ? EPOLLOUT : 0);

	if (what == CURL_POLL_REMOVE) {
		if (ms) {
			ev_io_del(&pd->ev, &ms->io);
			curl_multi_assign(pd->multi, s, NULL);
			ev_defer(&pd->ev, free, ms);
		}
		return 0;
	}
	if (ms)
		return ev_io_mod(&pd->ev, &ms->io, events);
	if ((ms = calloc(1, sizeof(*ms))) == NULL)
		return -1;
	ms->pd = pd;
	if (ev_io_add(&pd->ev, &ms->io, s, events, mc_on_io) == -1) {
		free(ms);
		return -1;
	}
	curl_multi_assign(pd->multi, s, ms);
	return 0;
}

/* libcurl asks for one timer; it is never run from inside this call. */
static int mc_timer_cb(CURLM *multi, long timeout_ms, void *userp)
{
	struct pushd *pd = userp;

	if (timeout_ms < 0)
		ev_timer_stop(&pd->ev, &pd->curl_timer);
	else
		ev_timer_set(&pd->ev, &pd->curl_timer, (uint64_t)timeout_ms);
	return 0;
}

int mc_init(struct pushd *pd)
{
	struct curl_slist *h;

	ev_timer_init(&pd->curl_timer, mc_on_timer);
	/* The mail server's logs tell which node calls (several nodes). */
	snprintf(pd->user_agent, sizeof(pd->user_agent), "postern-pushd (node %s)",
	    pd->app.cfg.node_name ? pd->app.cfg.node_name : "");
	if ((pd->multi = curl_multi_init()) == NULL)
		return -1;
	if (curl_multi_setopt(pd->multi, CURLMOPT_SOCKETFUNCTION, mc_socket_cb) ||
	    curl_multi_setopt(pd->multi, CURLMOPT_SOCKETDATA, pd) ||
	    curl_multi_setopt(pd->multi, CURLMOPT_TIMERFUNCTION, mc_timer_cb) ||
	    curl_multi_setopt(pd->multi, CURLMOPT_TIMERDATA, pd))
		return -1;
	h = curl_slist_append(NULL, "Content-Type: application/json");
	if (h == NULL)
		return -1;
	pd->json_headers = h;
	h = curl_slist_append(h, "Accept: application/json");
	if (h == NULL)
		return -1;
	pd->sse_headers = curl_slist_append(NULL, "Accept: text/event-stream");
	return pd->sse_headers ? 0 : -1;
}

void mc_free(struct pushd *pd)
{
	if (pd->multi)
		curl_multi_cleanup(pd->multi);
	pd->multi = NULL;
	curl_slist_free_all(pd->json_headers);
	curl_slist_free_all(pd->sse_headers);
	pd->json_headers = pd->sse_headers = NULL;
	ev_timer_stop(&pd->ev, &pd->curl_timer);
}

#define STREAM_STALL_S 120L    /* no byte (not even a ping) for this long */
#define SESSION_DOC_MAX (1 << 20)

/* libcurl is about to connect a push: only to a public address (or
 * loopback for the tests' own push service). */
static curl_socket_t push_socket(void *ctx, curlsocktype purpose,
    struct curl_sockaddr *sa)
{
	const struct pushd *pd = ctx;
	struct addr a;

	if (purpose != CURLSOCKTYPE_IPCXN || addr_from_sockaddr(&sa->addr,
	    sa->addrlen, &a) == -1 || !addr_allowed(&a,
	    pd->app.cfg.webpush_allow_loopback_for_tests)) {
		log_info("webpush: refused a push service at an address that is "
		    "not public");
		return CURL_SOCKET_BAD;
	}
	return socket(sa->family, sa->socktype | SOCK_CLOEXEC, sa->protocol);
}

/* A push: to a browser's push service, not the mail server. */
static CURL *mc_push_easy(struct pushd *pd, const struct mc_req *rq)
{
	const struct cfg *c = &pd->app.cfg;
	CURL *e = curl_easy_init();

	if (e == NULL)
		return NULL;
	if (curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L) ||
	    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "https") ||
	    curl_easy_setopt(e, CURLOPT_PROXY, "") ||
	    /* A connection of its own: one kept from a JMAP call would skip
	     * push_socket's check of the address. */
	    curl_easy_setopt(e, CURLOPT_FRESH_CONNECT, 1L) ||
	    curl_easy_setopt(e, CURLOPT_FORBID_REUSE, 1L) ||
	    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT, c->webpush_timeout) ||
	    curl_easy_setopt(e, CURLOPT_TIMEOUT, c->webpush_timeout) ||
	    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L) ||
	    (c->webpush_ca_file &&
	    curl_easy_setopt(e, CURLOPT_CAINFO, c->webpush_ca_file)) ||
	    curl_easy_setopt(e, CURLOPT_OPENSOCKETFUNCTION, push_socket) ||
	    curl_easy_setopt(e, CURLOPT_OPENSOCKETDATA, pd) ||
	    curl_easy_setopt(e, CURLOPT_URL, rq->url) ||
	    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long)rq->body_len) ||
	    curl_easy_setopt(e, CURLOPT_COPYPOSTFIELDS, rq->body) ||
	    curl_easy_setopt(e, CURLOPT_HTTPHEADER, rq->headers)) {
		curl_easy_cleanup(e);
		return NULL;
	}
	return e;
}

/* A new easy handle with pushd's defaults (protocols, timeouts, CA,
 * no signals) and the credentials, or NULL. */
static CURL *mc_easy(struct pushd *pd, const struct mc_req *rq)
{
	const struct cfg *c = &pd->app.cfg;
	CURL *e;

	if (rq->kind == MC_PUSH)
		return mc_push_easy(pd, rq);
	if ((e = curl_easy_init()) == NULL)
		return NULL;
	if (curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L) ||
	    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https") ||
	    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT, c->upstream_connect_timeout) ||
	    curl_easy_setopt(e, CURLOPT_TIMEOUT, c->upstream_timeout) ||
	    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L) ||
	    (c->upstream_ca_file &&
	    curl_easy_setopt(e, CURLOPT_CAINFO, c->upstream_ca_file)) ||
	    curl_easy_setopt(e, CURLOPT_URL, rq->url) ||
	    curl_easy_setopt(e, CURLOPT_USERAGENT, pd->user_agent) ||
	    curl_easy_setopt(e, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC) ||
	    curl_easy_setopt(e, CURLOPT_USERNAME, rq->user) ||
	    curl_easy_setopt(e, CURLOPT_PASSWORD, rq->pass)) {
		curl_easy_cleanup(e);
		return NULL;
	}
	return e;
}

static size_t discard(char *p, size_t size, size_t n, void *ctx)
{
	return n;
}

/* The end of a stream's response head: the job hears of it. No libcurl
 * call there but getinfo. */
static size_t stream_header(char *p, size_t size, size_t n, void *ctx)
{
	struct mc_job *job = ctx;
	const char *type = NULL;
	long status = 0;

	if (n > 2 || (n == 2 && p[0] != '\r') || (n == 1 && p[0] != '\n'))
		return n;
	curl_easy_getinfo(job->easy, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_getinfo(job->easy, CURLINFO_CONTENT_TYPE, &type);
	job->head(job, status, type);
	return n;
}

/* What each kind adds to the defaults: 0, or non-zero. */
static int mc_kind_opts(struct pushd *pd, CURL *e, struct mc_job *job,
    const struct mc_req *rq)
{
	switch (rq->kind) {
	case MC_CALL:
		return curl_easy_setopt(e, CURLOPT_COPYPOSTFIELDS, rq->json) ||
		    curl_easy_setopt(e, CURLOPT_HTTPHEADER, pd->json_headers);
	case MC_STREAM:
		return curl_easy_setopt(e, CURLOPT_HTTPHEADER, pd->sse_headers) ||
		    curl_easy_setopt(e, CURLOPT_TIMEOUT, 0L) ||
		    curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L) ||
		    curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, STREAM_STALL_S) ||
		    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, stream_header) ||
		    curl_easy_setopt(e, CURLOPT_HEADERDATA, job);
	case MC_SESSION:
		return curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 1L) ||
		    curl_easy_setopt(e, CURLOPT_MAXREDIRS, 3L) ||
		    curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https") ||
		    curl_easy_setopt(e, CURLOPT_MAXFILESIZE_LARGE,
		    (curl_off_t)SESSION_DOC_MAX) ||
		    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, discard);
	case MC_PUSH:
		return 0;
	}
	return -1;
}

int mc_request(struct pushd *pd, struct mc_job *job, const struct mc_req *rq)
{
	CURL *e = mc_easy(pd, rq);

	if (e == NULL || mc_kind_opts(pd, e, job, rq) ||
	    (rq->kind != MC_SESSION &&
	    (curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, rq->write) ||
	    curl_easy_setopt(e, CURLOPT_WRITEDATA, rq->ctx))) ||
	    curl_easy_setopt(e, CURLOPT_PRIVATE, (char *)job) ||
	    curl_multi_add_handle(pd->multi, e)) {
		curl_easy_cleanup(e);
		return -1;
	}
	job->easy = e;
	return 0;
}

void mc_cancel(struct pushd *pd, struct mc_job *job)
{
	if (job->easy == NULL)
		return;
	curl_multi_remove_handle(pd->multi, job->easy);
	curl_easy_cleanup(job->easy);
	job->easy = NULL;
}
