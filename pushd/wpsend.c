#include "wpsend.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "acct.h"
#include "dbq.h"
#include "log.h"
#include "pushd.h"
#include "sess.h"
#include "store.h"
#include "vapid.h"
#include "webpush.h"
#include "wpwatch.h"

#define BODY_MAX (WEBPUSH_HEADER_LEN + WEBPUSH_RECORD_SIZE)
#define ANSWER_MAX 4096         /* what a push service says is read, and dropped */
#define HEADER_MAX 2048

struct wp_push {
	struct mc_job job;
	struct pushd *pd;
	struct wp_push *next, *prev;     /* pd->wp_pushes */
	char sess_id[SESS_ID_LEN + 1];
	char account[APP_KEY_HEX + 1];
	char *endpoint;
	struct curl_slist *headers;
	size_t answered;
};

/* -- the key ------------------------------------------------------------- */

/* The key file's key, made first when there is none (O_EXCL: when
 * postern-admin init or another pushd makes it meanwhile, that one is
 * read). */
static EVP_PKEY *load_key(const char *path)
{
	EVP_PKEY *key = vapid_key_read(path), *made;

	if (key || access(path, F_OK) == 0)
		return key;
	if ((made = vapid_key_new()) == NULL)
		return NULL;
	if (vapid_key_write(made, path) == 0)
		log_info("webpush: made a VAPID key pair in %s", path);
	EVP_PKEY_free(made);
	return vapid_key_read(path);
}

int wp_init(struct pushd *pd)
{
	const struct cfg *c = &pd->app.cfg;
	char host[256], sub[300];

	if (!c->webpush)
		return 0;
	if ((pd->wp_key = load_key(c->webpush_key_file)) == NULL) {
		log_err("webpush: %s: no VAPID key (%s): Web Push is off",
		    c->webpush_key_file, strerror(errno));
		return -1;
	}
	if (c->webpush_allow_loopback_for_tests)
		log_warn("webpush_allow_loopback_for_tests is on: never on a "
		    "real server");
	/* RFC 8292 section 2.1: a contact for the push service's operator. */
	if (gethostname(host, sizeof(host)) == -1)
		strcpy(host, "localhost");
	host[sizeof(host) - 1] = '\0';
	snprintf(sub, sizeof(sub), "mailto:postmaster@%s", host);
	pd->wp_subject = strdup(c->webpush_subject ? c->webpush_subject : sub);
	return pd->wp_subject ? 0 : -1;
}

static void wp_drain(struct pushd *pd);

static void push_free(struct wp_push *p)
{
	struct pushd *pd = p->pd;

	if (p->prev)
		p->prev->next = p->next;
	else
		pd->wp_pushes = p->next;
	if (p->next)
		p->next->prev = p->prev;
	pd->wp_out--;
	mc_cancel(pd, &p->job);
	curl_slist_free_all(p->headers);
	free(p->endpoint);
	free(p);
	wp_drain(pd);
}

void wp_free(struct pushd *pd)
{
	while (pd->wp_pushes)
		push_free(pd->wp_pushes);
	EVP_PKEY_free(pd->wp_key);
	pd->wp_key = NULL;
	free(pd->wp_subject);
	pd->wp_subject = NULL;
}

/* -- one push -------------------------------------------------------------- */

/* A failure: the subscription waits, twice as long as the last time (or
 * as long as the push service asked, when longer). */
static void push_wait(struct pushd *pd, struct wp_watch *w, long retry_after)
{
	uint32_t s = w->backoff_s ? w->backoff_s * 2 : WP_BACKOFF_MIN;

	if (s > WP_BACKOFF_MAX)
		s = WP_BACKOFF_MAX;
	if (retry_after > (long)s && retry_after <= WP_BACKOFF_MAX)
		s = (uint32_t)retry_after;
	w->backoff_s = s;
	w->backoff_until = pd->ev.now + (uint64_t)s * 1000;
}

/* The subscription goes, off the loop; a device that subscribed anew
 * meanwhile keeps its row and its watch. */
struct gone_job {
	struct dbq_job j;
	char sess_id[SESS_ID_LEN + 1];
	char account[APP_KEY_HEX + 1];
	char endpoint[];
};

static void gone_work(struct dbq_job *j, struct store *st)
{
	struct gone_job *g = container_of(j, struct gone_job, j);

	j->rc = store_webpush_delete(st, g->sess_id, g->endpoint);
}

static void gone_done(struct dbq_job *j)
{
	struct gone_job *g = container_of(j, struct gone_job, j);

	if (j->rc > 0 && !j->pd->stopping) {
		wp_watch_end(j->pd, g->account, g->sess_id);
		wp_watch_tell(j->pd, g->account, g->sess_id);
	}
	free(g);
}

static void push_gone(struct pushd *pd, const struct wp_push *p)
{
	size_t n = strlen(p->endpoint) + 1;
	struct gone_job *g = calloc(1, sizeof(*g) + n);

	if (g == NULL)
		return;
	memcpy(g->sess_id, p->sess_id, sizeof(g->sess_id));
	memcpy(g->account, p->account, sizeof(g->account));
	memcpy(g->endpoint, p->endpoint, n);
	g->j.work = gone_work;
	g->j.done = gone_done;
	if (dbq_push(pd, &g->j) == -1)
		free(g);
}

static void push_done(struct mc_job *job, CURLcode rc, long status)
{
	struct wp_push *p = container_of(job, struct wp_push, job);
	struct pushd *pd = p->pd;
	struct wp_watch *w = wp_watch_find(pd, p->account, p->sess_id);

	if (w)
		w->in_flight = 0;
	if (rc == CURLE_OK && status >= 200 && status < 300) {
		if (w)
			w->backoff_s = 0;
	} else if (rc == CURLE_OK && (status == 404 || status == 410)) {
		/* RFC 8030 section 7.3: the subscription is gone for good. */
		log_info("webpush: the push service says a subscription is gone "
		    "(HTTP %ld): deleted", status);
		push_gone(pd, p);
	} else {
		log_info("webpush: a push failed (%s, HTTP %ld)", rc == CURLE_OK ?
		    "answered" : curl_easy_strerror(rc), status);
		if (w && (rc != CURLE_OK || status == 429 || status >= 500))
			push_wait(pd, w, rc == CURLE_OK ? (long)job->retry_after : 0);
	}
	push_free(p);
}

/* The push service's answer is not needed: read and dropped, bounded. */
static size_t push_answer(char *d, size_t size, size_t n, void *ctx)
{
	struct wp_push *p = ctx;

	(void)d;
	p->answered += n;
	return p->answered > ANSWER_MAX ? 0 : n;
}

static int add_header(struct curl_slist **h, const char *name,
    const char *value)
{
	char line[HEADER_MAX];
	struct curl_slist *next;

	snprintf(line, sizeof(line), "%s:%s%s", name, *value ? " " : "", value);
	if ((next = curl_slist_append(*h, line)) == NULL)
		return -1;
	*h = next;
	return 0;
}

/* The request's headers: RFC 8030's TTL and Urgency, RFC 8188's coding,
 * RFC 8292's Authorization; no Expect (the body is one small record). */
static int push_headers(struct wp_push *p, const char *vapid)
{
	char ttl[24];

	snprintf(ttl, sizeof(ttl), "%ld", p->pd->app.cfg.webpush_ttl);
	return add_header(&p->headers, "Content-Type", "application/octet-stream") ||
	    add_header(&p->headers, "Content-Encoding", "aes128gcm") ||
	    add_header(&p->headers, "TTL", ttl) ||
	    add_header(&p->headers, "Urgency", "normal") ||
	    add_header(&p->headers, "Authorization", vapid) ||
	    add_header(&p->headers, "Expect", "") ? -1 : 0;
}

/* Encrypts and signs for the row and starts the request: 0 or -1. */
static int push_start(struct pushd *pd, struct wp_push *p,
    const struct store_webpush_row *row, const char *payload)
{
	struct buf body, vapid;
	struct mc_req rq = { .kind = MC_PUSH, .write = push_answer, .ctx = p };
	int rc = -1;

	buf_init(&body, BODY_MAX);
	buf_init(&vapid, HEADER_MAX);
	if (webpush_encrypt(row->p256dh, row->p256dh_len, row->auth,
	    row->auth_len, payload, strlen(payload), &body) == 0 &&
	    webpush_vapid(pd->wp_key, row->endpoint, pd->wp_subject,
	    (long long)time(NULL), WEBPUSH_VAPID_LIFETIME, &vapid) == 0 &&
	    buf_putc(&vapid, '\0') == 0 && push_headers(p, vapid.data) == 0) {
		rq.url = p->endpoint;
		rq.body = body.data;
		rq.body_len = body.len;
		rq.headers = p->headers;
		p->job.done = push_done;
		rc = mc_request(pd, &p->job, &rq);
	}
	buf_free(&body);
	buf_free(&vapid);
	return rc;
}

/* Whether the row's endpoint may be pushed to now: its host on the
 * operator's list (which may have changed since it was stored). */
static int endpoint_allowed(const struct cfg *c, const char *endpoint)
{
	char origin[WEBPUSH_ORIGIN_MAX], *host, *end;

	if (webpush_origin(endpoint, origin, sizeof(origin)) == -1)
		return 0;
	host = origin + strlen("https://");
	if (*host == '[')
		end = strchr(host, ']') ? strchr(host, ']') + 1 : NULL;
	else
		end = strchr(host, ':');
	if (end)
		*end = '\0';
	return cfg_webpush_host_allowed(c, host);
}

static void push_one(struct pushd *pd, struct wp_watch *w,
    const struct store_webpush_row *row, const char *payload)
{
	struct wp_push *p = NULL;

	if (!endpoint_allowed(&pd->app.cfg, row->endpoint)) {
		log_info("webpush: a push service not on webpush_hosts: skipped");
		return;
	}
	if ((p = calloc(1, sizeof(*p))) == NULL ||
	    (p->endpoint = strdup(row->endpoint)) == NULL) {
		log_err("webpush: out of memory for a push");
		free(p);
		return;
	}
	p->pd = pd;
	memcpy(p->sess_id, row->session, sizeof(p->sess_id));
	snprintf(p->account, sizeof(p->account), "%s", row->account);
	p->next = pd->wp_pushes;
	if (p->next)
		p->next->prev = p;
	pd->wp_pushes = p;
	pd->wp_out++;
	if (push_start(pd, p, row, payload) == -1) {
		log_err("webpush: cannot send a push");
		push_free(p);
		return;
	}
	w->in_flight = 1;
}

/* The payload waits for the subscription's push out, or for a free slot:
 * a newer one takes the place of an older (it says more). */
static void push_queue(struct pushd *pd, struct wp_watch *w,
    const char *payload, struct wp_row *row)
{
	char *q = strdup(payload);

	if (q == NULL) {
		wp_row_free(row);
		return;
	}
	if (w->queued)
		free(w->queued);
	else
		pd->wp_queued++;
	wp_row_free(w->queued_row);
	w->queued = q;
	w->queued_row = row;
}

/* To one subscription, as read; row is this call's to keep or free. */
static void send_row(struct acct *a, struct wp_row *row, const char *payload)
{
	struct pushd *pd = a->pd;
	struct wp_watch *w = wp_watch_find(pd, a->key, row->session);
	struct store_webpush_row view;

	/* A browser with a tab in view shows the mail there itself; a
	 * throttled or failing push service is left alone until its wait
	 * ends. */
	if (w == NULL || pd->ev.now < w->backoff_until ||
	    acct_sess_visible(a, row->session)) {
		wp_row_free(row);
		return;
	}
	if (w->in_flight || pd->wp_out >= WP_OUT_MAX) {
		push_queue(pd, w, payload, row);
		return;
	}
	if (w->queued) {
		/* This one says more than what waited. */
		free(w->queued);
		wp_row_free(w->queued_row);
		w->queued = NULL;
		w->queued_row = NULL;
		pd->wp_queued--;
	}
	wp_row_view(row, &view);
	push_one(pd, w, &view, payload);
	wp_row_free(row);
}

/* A slot is free: the payloads that wait for one (or for their
 * subscription's last push) go, as many as fit, each to the row it was
 * read with. */
static void wp_drain(struct pushd *pd)
{
	struct wp_watch *w, *next;
	struct store_webpush_row view;

	for (w = pd->watches; w && pd->wp_queued && !pd->stopping &&
	    pd->wp_out < WP_OUT_MAX; w = next) {
		next = w->next;
		if (!w->queued || w->in_flight || pd->ev.now < w->backoff_until)
			continue;
		if (w->queued_row && !acct_sess_visible(w->at.acct,
		    w->queued_row->session)) {
			wp_row_view(w->queued_row, &view);
			push_one(pd, w, &view, w->queued);
		}
		free(w->queued);
		wp_row_free(w->queued_row);
		w->queued = NULL;
		w->queued_row = NULL;
		pd->wp_queued--;
	}
}

/* The account's subscriptions, read off the loop (dbq.h), then sent to. */
struct send_job {
	struct dbq_job j;
	char account[APP_KEY_HEX + 1];
	char *payload;
	struct wp_row **rows;
	size_t n, cap;
};

static int copy_row(void *ctx, const struct store_webpush_row *row)
{
	struct send_job *x = ctx;
	struct wp_row *r;
	void *more;

	if (x->n == x->cap) {
		x->cap = x->cap ? 2 * x->cap : 8;
		if ((more = realloc(x->rows, x->cap * sizeof(*x->rows))) == NULL)
			return -1;
		x->rows = more;
	}
	if ((r = malloc(sizeof(*r))) == NULL)
		return -1;
	if (wp_row_copy(r, row) == -1) {
		wp_row_free(r);
		return 0;           /* not one a push can go to: passed by */
	}
	x->rows[x->n++] = r;
	return 0;
}

static void send_work(struct dbq_job *j, struct store *st)
{
	struct send_job *x = container_of(j, struct send_job, j);

	j->rc = store_webpush_list(st, x->account, copy_row, x);
}

static void send_done(struct dbq_job *j)
{
	struct send_job *x = container_of(j, struct send_job, j);
	struct pushd *pd = j->pd;
	struct acct *a = acct_lookup(pd, x->account);
	size_t i;

	if (j->rc != 0)
		log_warn("webpush: the account's subscriptions were not read "
		    "whole");
	for (i = 0; i < x->n; i++) {
		if (a && !a->dead && !pd->stopping)
			send_row(a, x->rows[i], x->payload);
		else
			wp_row_free(x->rows[i]);
	}
	free(x->rows);
	free(x->payload);
	free(x);
}

void wp_send_account(struct acct *a, const char *payload)
{
	struct send_job *x;

	if (!a->pd->wp_key || (x = calloc(1, sizeof(*x))) == NULL)
		return;
	memcpy(x->account, a->key, sizeof(x->account));
	x->j.work = send_work;
	x->j.done = send_done;
	if ((x->payload = strdup(payload)) == NULL ||
	    dbq_push(a->pd, &x->j) == -1) {
		log_warn("webpush: a push was dropped (no memory, or the "
		    "database is behind)");
		free(x->payload);
		free(x);
	}
}
