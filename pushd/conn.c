#include "conn.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fcgirec.h"
#include "log.h"
#include "pushd.h"
#include "req.h"

#define READ_CHUNK 16384

static void conn_on_io(struct ev *ev, struct ev_io *io, uint32_t revents);
static void conn_on_timer(struct ev *ev, struct ev_timer *t);

static void head_free(struct preq_head *h)
{
	if (h == NULL)
		return;
	buf_free(&h->params);
	buf_free(&h->body);
	free(h);
}

/* Frees a request; its tab (if any) must already be gone. */
static void preq_free(struct preq *q)
{
	head_free(q->head);
	free(q);
}

static void preq_unlink(struct preq *q)
{
	struct preq **pp;

	for (pp = &q->c->reqs; *pp; pp = &(*pp)->next)
		if (*pp == q) {
			*pp = q->next;
			q->c->nreqs--;
			return;
		}
}

static struct preq *preq_find(struct conn *c, uint16_t id)
{
	struct preq *q;

	for (q = c->reqs; q; q = q->next)
		if (q->id == id)
			return q;
	return NULL;
}

/* The timer a connection needs now: a head to read, or idleness. */
static void conn_arm(struct conn *c)
{
	struct preq *q;

	for (q = c->reqs; q; q = q->next)
		if (q->state != PQ_ANSWERED) {
			if (!ev_timer_armed(&c->timer))
				ev_timer_set(&c->pd->ev, &c->timer, PUSHD_HEAD_TIMEOUT_MS);
			return;
		}
	if (c->reqs)
		ev_timer_stop(&c->pd->ev, &c->timer);
	else
		ev_timer_set(&c->pd->ev, &c->timer, PUSHD_IDLE_TIMEOUT_MS);
}

int conn_new(struct pushd *pd, int fd)
{
	struct conn *c = calloc(1, sizeof(*c));

	if (c == NULL) {
		close(fd);
		return -1;
	}
	c->pd = pd;
	buf_init(&c->in, FCGI_MAX_RECORD + READ_CHUNK);
	buf_init(&c->out, PUSHD_QUEUE_MAX);
	ev_timer_init(&c->timer, conn_on_timer);
	if (ev_io_add(&pd->ev, &c->io, fd, EPOLLIN | EPOLLRDHUP, conn_on_io) == -1) {
		close(fd);
		free(c);
		return -1;
	}
	c->next = pd->conns;
	if (pd->conns)
		pd->conns->prev = c;
	pd->conns = c;
	pd->nconns++;
	ev_timer_set(&pd->ev, &c->timer, PUSHD_HEAD_TIMEOUT_MS);
	return 0;
}

static void conn_free(void *p)
{
	struct conn *c = p;
	struct preq *q;

	while ((q = c->reqs) != NULL) {
		c->reqs = q->next;
		preq_free(q);
	}
	buf_free(&c->in);
	buf_free(&c->out);
	free(c);
}

void conn_close(struct conn *c)
{
	struct pushd *pd = c->pd;
	struct preq *q;

	if (c->dead)
		return;
	c->dead = 1;
	/* Tabs first: they unlink from their accounts and stop their timers. */
	for (q = c->reqs; q; q = q->next)
		if (q->stream.owner)
			q->stream.gone(q->stream.owner);
	ev_timer_stop(&pd->ev, &c->timer);
	if (c->io.fd >= 0) {
		close(c->io.fd);
		ev_io_del(&pd->ev, &c->io);
	}
	if (c->prev)
		c->prev->next = c->next;
	else
		pd->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	pd->nconns--;
	ev_defer(&pd->ev, conn_free, c);
}

/* -- output -------------------------------------------------------------- */

/* Sends what is queued; watches for writability while some remains. */
static void conn_flush(struct conn *c)
{
	ssize_t n;

	while (c->out_off < c->out.len) {
		n = send(c->io.fd, c->out.data + c->out_off,
		    c->out.len - c->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0) {
			c->out_off += (size_t)n;
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			ev_io_mod(&c->pd->ev, &c->io, EPOLLIN | EPOLLRDHUP | EPOLLOUT);
			return;
		}
		conn_close(c);
		return;
	}
	/* Drained: give the memory back; an idle stream holds no buffer. */
	buf_free(&c->out);
	c->out_off = 0;
	if (c->closing) {
		conn_close(c);
		return;
	}
	ev_io_mod(&c->pd->ev, &c->io, EPOLLIN | EPOLLRDHUP);
}

/* Makes room by dropping what was sent, before the cap is judged. */
static void conn_compact(struct conn *c)
{
	if (c->out_off == 0)
		return;
	memmove(c->out.data, c->out.data + c->out_off, c->out.len - c->out_off);
	c->out.len -= c->out_off;
	c->out.data[c->out.len] = '\0';
	c->out_off = 0;
}

/* The cap grows with the requests sharing the connection, so that each
 * stream may queue PUSHD_QUEUE_MAX; past it the reader is not reading and
 * is dropped rather than buffered for. */
static void conn_set_cap(struct conn *c)
{
	c->out.max = (size_t)PUSHD_QUEUE_MAX * (c->nreqs ? c->nreqs : 1);
}

/* Appends records made by put (one of fcgirec's writers) and sends. */
static int conn_queue_done(struct conn *c, int rc)
{
	if (rc < 0) {
		log_info("pushd: a stream stopped reading; dropped");
		conn_close(c);
		return -1;
	}
	if (!(c->io.events & EPOLLOUT))
		conn_flush(c);
	return c->dead ? -1 : 0;
}

int conn_send(struct preq *q, const void *p, size_t n)
{
	struct conn *c = q->c;

	if (c->dead)
		return -1;
	conn_compact(c);
	conn_set_cap(c);
	return conn_queue_done(c, fcgirec_put_stream(&c->out, FCGI_STDOUT,
	    q->id, p, n));
}

void conn_finish(struct preq *q)
{
	struct conn *c = q->c;
	int rc;

	preq_unlink(q);
	if (!q->keep_conn)
		c->closing = 1;
	if (!c->dead) {
		conn_compact(c);
		conn_set_cap(c);
		/* The end records always fit: they are not stream bytes. */
		c->out.max += 64;
		rc = fcgirec_put_stream(&c->out, FCGI_STDOUT, q->id, NULL, 0);
		if (rc == 0)
			rc = fcgirec_put_end(&c->out, q->id, 0, FCGI_REQUEST_COMPLETE);
		if (conn_queue_done(c, rc) == 0)
			conn_arm(c);
	}
	preq_free(q);
}

void conn_wait(struct preq *q)
{
	conn_arm(q->c);
}

void conn_head_done(struct preq *q)
{
	head_free(q->head);
	q->head = NULL;
	conn_arm(q->c);
}

const char *conn_param(const struct preq *q, const char *name)
{
	const char *p, *end;

	if (q->head == NULL || q->head->params.data == NULL)
		return NULL;
	p = q->head->params.data;
	end = p + q->head->params.len;
	while (p < end) {
		if (!strcmp(p, name))
			return p + strlen(p) + 1;
		p += strlen(p) + 1;
		p += strlen(p) + 1;
	}
	return NULL;
}

/* -- input --------------------------------------------------------------- */

/* Answers a management record (request id 0). */
static int conn_management(struct conn *c, const struct fcgi_rec *r)
{
	struct pushd *pd = c->pd;
	int rc;

	conn_compact(c);
	conn_set_cap(c);
	if (r->type == FCGI_GET_VALUES) {
		rc = fcgirec_put_values(&c->out, r, pd->max_conns, PUSHD_CONN_REQS);
		if (rc == -1)
			return -1;      /* malformed: a protocol error */
	} else
		rc = fcgirec_put_unknown(&c->out, r->type);
	return conn_queue_done(c, rc);
}

static int conn_begin(struct conn *c, const struct fcgi_rec *r)
{
	struct preq *q;
	uint16_t role;
	uint8_t flags;
	int rc;

	if (fcgirec_begin(r, &role, &flags) == -1 || preq_find(c, r->id))
		return -1;
	if (role != FCGI_RESPONDER || c->nreqs >= PUSHD_CONN_REQS) {
		conn_compact(c);
		conn_set_cap(c);
		rc = fcgirec_put_end(&c->out, r->id, 0, role != FCGI_RESPONDER ?
		    FCGI_UNKNOWN_ROLE : FCGI_OVERLOADED);
		return conn_queue_done(c, rc);
	}
	if ((q = calloc(1, sizeof(*q))) == NULL ||
	    (q->head = calloc(1, sizeof(*q->head))) == NULL) {
		free(q);
		return -1;
	}
	buf_init(&q->head->params, PUSHD_PARAMS_MAX);
	buf_init(&q->head->body, PUSHD_BODY_MAX);
	q->c = c;
	q->id = r->id;
	q->keep_conn = flags & FCGI_KEEP_CONN;
	q->next = c->reqs;
	c->reqs = q;
	c->nreqs++;
	conn_arm(c);
	return 0;
}

/* Turns the raw pairs into "name\0value\0..." for conn_param: 0, or -1
 * when they are malformed or hold a NUL (a protocol error). */
static int params_index(struct preq_head *h)
{
	struct buf idx;
	const uint8_t *name, *val;
	size_t off = 0, nlen, vlen;
	int rc;

	buf_init(&idx, PUSHD_PARAMS_MAX + 4096);
	while ((rc = fcgirec_nv_next((const uint8_t *)h->params.data,
	    h->params.len, &off, &name, &nlen, &val, &vlen)) == 1) {
		if (memchr(name, 0, nlen) || memchr(val, 0, vlen) ||
		    buf_append(&idx, name, nlen) || buf_putc(&idx, 0) ||
		    buf_append(&idx, val, vlen) || buf_putc(&idx, 0)) {
			rc = -1;
			break;
		}
	}
	buf_free(&h->params);
	h->params = idx;
	if (rc == -1)
		buf_free(&h->params);
	return rc;
}

static int conn_params(struct preq *q, const struct fcgi_rec *r)
{
	struct preq_head *h = q->head;

	if (q->state != PQ_PARAMS)
		return -1;
	if (r->len == 0) {
		q->state = PQ_STDIN;
		return h->too_large ? 0 : params_index(h);
	}
	if (!h->too_large && buf_append(&h->params, r->body, r->len) == -1) {
		h->too_large = 1;
		buf_free(&h->params);
	}
	return 0;
}

static int conn_stdin(struct preq *q, const struct fcgi_rec *r)
{
	struct preq_head *h = q->head;

	if (q->state != PQ_STDIN)
		return -1;
	if (r->len) {
		if (!h->too_large && buf_append(&h->body, r->body, r->len) == -1) {
			h->too_large = 1;
			buf_free(&h->body);
		}
		return 0;
	}
	q->state = PQ_ANSWERED;
	q->c->pd->route(q);
	return 0;
}

/* The web server gave up on a request (its client left). */
static int conn_abort(struct preq *q)
{
	if (q->stream.owner)
		q->stream.gone(q->stream.owner);
	q->stream.owner = NULL;
	conn_finish(q);
	return 0;
}

/* One record: 0, or -1 for a protocol error (the connection is closed). */
static int conn_record(struct conn *c, const struct fcgi_rec *r)
{
	struct preq *q;

	if (r->id == 0)
		return conn_management(c, r);
	if (r->type == FCGI_BEGIN_REQUEST)
		return conn_begin(c, r);
	q = preq_find(c, r->id);
	switch (r->type) {
	case FCGI_ABORT_REQUEST:
		return q ? conn_abort(q) : 0;
	case FCGI_PARAMS:
		/* Records of a request already ended are ignored (the spec). */
		return q ? conn_params(q, r) : 0;
	case FCGI_STDIN:
		return q ? conn_stdin(q, r) : 0;
	default:
		return -1;
	}
}

/* Reads the records in p; returns the bytes used, or -1 on an error. */
static long conn_parse(struct conn *c, const uint8_t *p, size_t n)
{
	struct fcgi_rec r;
	size_t off = 0;
	long k;

	while (!c->dead && off < n) {
		k = fcgirec_parse(p + off, n - off, FCGI_MAX_CONTENT, &r);
		if (k == 0)
			break;
		if (k == -1 || conn_record(c, &r) == -1) {
			/* Dead already: dropped for not reading, not an error. */
			if (!c->dead)
				log_warn("pushd: FastCGI protocol error; "
				    "connection closed");
			return -1;
		}
		off += (size_t)k;
	}
	return (long)off;
}

/* Keeps an incomplete record for the next read. */
static int conn_keep(struct conn *c, const char *p, size_t n)
{
	if (c->in.len == 0)
		return n ? buf_append(&c->in, p, n) : 0;
	memmove(c->in.data, c->in.data + c->in.len - n, n);
	c->in.len = n;
	c->in.data[n] = '\0';
	if (n == 0)
		buf_free(&c->in);
	return 0;
}

static void conn_read(struct conn *c)
{
	char tmp[READ_CHUNK];
	const char *p;
	ssize_t n;
	long used;
	size_t len;

	n = recv(c->io.fd, tmp, sizeof(tmp), 0);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		conn_close(c);
		return;
	}
	p = tmp;
	len = (size_t)n;
	if (c->in.len) {
		if (buf_append(&c->in, tmp, len) == -1) {
			conn_close(c);
			return;
		}
		p = c->in.data;
		len = c->in.len;
	}
	used = conn_parse(c, (const uint8_t *)p, len);
	if (c->dead)
		return;
	if (used == -1 || conn_keep(c, p + used, len - (size_t)used) == -1)
		conn_close(c);
}

static void conn_on_io(struct ev *ev, struct ev_io *io, uint32_t revents)
{
	struct conn *c = container_of(io, struct conn, io);

	if (revents & EPOLLOUT)
		conn_flush(c);
	if (!c->dead && (revents & (EPOLLIN | EPOLLHUP | EPOLLERR | EPOLLRDHUP)))
		conn_read(c);
}

static void conn_on_timer(struct ev *ev, struct ev_timer *t)
{
	struct conn *c = container_of(t, struct conn, timer);

	log_debug("pushd: connection timed out");
	conn_close(c);
}

static int conn_req_read(void *ctx, char *p, int n)
{
	struct conn_req_ctx *x = ctx;
	const struct buf *b = &x->q->head->body;
	size_t k = b->len - x->body_off;

	if (k > (size_t)n)
		k = (size_t)n;
	memcpy(p, b->data + x->body_off, k);
	x->body_off += k;
	return (int)k;
}

static int conn_req_write(void *ctx, const char *p, int n)
{
	return conn_send(((struct conn_req_ctx *)ctx)->q, p, (size_t)n);
}

static const char *conn_req_param(void *ctx, const char *name)
{
	return conn_param(((struct conn_req_ctx *)ctx)->q, name);
}

void conn_req_io(struct preq *q, struct conn_req_ctx *ctx, struct req_io *io)
{
	ctx->q = q;
	ctx->body_off = 0;
	memset(io, 0, sizeof(*io));
	io->ctx = ctx;
	io->read = conn_req_read;
	io->write = conn_req_write;
	io->param = conn_req_param;
}

struct preq *conn_preq(const struct req *r)
{
	return ((struct conn_req_ctx *)r->io.ctx)->q;
}
