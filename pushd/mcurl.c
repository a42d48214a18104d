#include "mcurl.h"

#include <stdlib.h>
#include <sys/epoll.h>

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

CURL *mc_easy(struct pushd *pd)
{
	const struct cfg *c = &pd->app.cfg;
	CURL *e = curl_easy_init();

	if (e == NULL)
		return NULL;
	if (curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L) ||
	    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https") ||
	    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT, c->upstream_connect_timeout) ||
	    curl_easy_setopt(e, CURLOPT_TIMEOUT, c->upstream_timeout) ||
	    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L) ||
	    (c->upstream_ca_file &&
	    curl_easy_setopt(e, CURLOPT_CAINFO, c->upstream_ca_file))) {
		curl_easy_cleanup(e);
		return NULL;
	}
	return e;
}

int mc_start(struct pushd *pd, struct mc_job *job)
{
	if (curl_easy_setopt(job->easy, CURLOPT_PRIVATE, (char *)job) ||
	    curl_multi_add_handle(pd->multi, job->easy)) {
		curl_easy_cleanup(job->easy);
		job->easy = NULL;
		return -1;
	}
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
