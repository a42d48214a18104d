#include "wpwatch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "bus.h"
#include "dbq.h"
#include "log.h"
#include "pushd.h"
#include "seal.h"
#include "sess.h"
#include "store.h"

#define SEAL_INFO "postern webpush v1"
#define SEALED_MAX 8192

/* The sealing key of session id's row: the server secret's, apart for
 * each session. */
static int wp_key(const struct app *a, const char *sess_id,
    unsigned char key[SEAL_KEY_LEN])
{
	return seal_hkdf(a->secret, APP_SECRET_LEN, sess_id,
	    strlen(sess_id), SEAL_INFO, strlen(SEAL_INFO), key, SEAL_KEY_LEN);
}

/* The sealed part: the fields NUL-separated, so that they can be wiped
 * (a password is among them). */
enum { F_USER, F_PASS, F_JMAP, F_API, F_EVENT, F_CREATED, NFIELDS };

int wp_seal(const struct app *a, const struct sess *s, const char *jmap_id,
    struct buf *out)
{
	unsigned char key[SEAL_KEY_LEN];
	struct buf plain;
	int rc = -1;

	buf_init(&plain, SEALED_MAX);
	if (buf_puts(&plain, s->user) == 0 && buf_putc(&plain, '\0') == 0 &&
	    buf_puts(&plain, s->pass) == 0 && buf_putc(&plain, '\0') == 0 &&
	    buf_puts(&plain, jmap_id) == 0 && buf_putc(&plain, '\0') == 0 &&
	    buf_puts(&plain, s->api_url) == 0 && buf_putc(&plain, '\0') == 0 &&
	    buf_puts(&plain, s->event_url) == 0 && buf_putc(&plain, '\0') == 0 &&
	    buf_printf(&plain, "%lld", s->created) == 0 &&
	    wp_key(a, s->id, key) == 0)
		rc = seal_encrypt(key, s->account, strlen(s->account), plain.data,
		    plain.len, out);
	seal_wipe(key, sizeof(key));
	buf_wipe_free(&plain);
	return rc;
}

/* The row's sealed part opened into plain, its fields into f: 0 or -1. */
static int wp_unseal(struct pushd *pd, const struct store_webpush_row *row,
    struct buf *plain, char *f[NFIELDS])
{
	unsigned char key[SEAL_KEY_LEN];
	char *p, *end;
	int i, rc = -1;

	if (wp_key(&pd->app, row->session, key) == 0 && seal_decrypt(key,
	    row->account, strlen(row->account), row->sealed, row->sealed_len,
	    plain) == 0 && buf_putc(plain, '\0') == 0) {
		p = plain->data;
		end = plain->data + plain->len - 1;
		for (i = 0; i < NFIELDS && p < end; i++, p += strlen(p) + 1)
			f[i] = p;
		rc = i == NFIELDS ? 0 : -1;
	}
	seal_wipe(key, sizeof(key));
	return rc;
}

/* -- the watch as a tab ---------------------------------------------------- */

/* A watch has no stream: the account's events pass it by. */
static int watch_send(struct acct_tab *t, const char *frame, size_t n)
{
	(void)t;
	(void)frame;
	(void)n;
	return 0;
}

int wp_row_copy(struct wp_row *r, const struct store_webpush_row *row)
{
	memset(r, 0, sizeof(*r));
	if (strlen(row->session) != SESS_ID_LEN ||
	    strlen(row->account) != APP_KEY_HEX ||
	    row->p256dh_len > sizeof(r->p256dh) ||
	    row->auth_len > sizeof(r->auth) ||
	    (r->endpoint = strdup(row->endpoint)) == NULL)
		return -1;
	memcpy(r->session, row->session, sizeof(r->session));
	memcpy(r->account, row->account, sizeof(r->account));
	memcpy(r->p256dh, row->p256dh, row->p256dh_len);
	memcpy(r->auth, row->auth, row->auth_len);
	r->p256dh_len = row->p256dh_len;
	r->auth_len = row->auth_len;
	return 0;
}

void wp_row_view(const struct wp_row *r, struct store_webpush_row *row)
{
	memset(row, 0, sizeof(*row));
	row->session = r->session;
	row->account = r->account;
	row->endpoint = r->endpoint;
	row->p256dh = r->p256dh;
	row->p256dh_len = r->p256dh_len;
	row->auth = r->auth;
	row->auth_len = r->auth_len;
}

void wp_row_free(struct wp_row *r)
{
	if (r) {
		free(r->endpoint);
		free(r);
	}
}

static void watch_free(void *p)
{
	struct wp_watch *w = p;

	free(w->queued);
	wp_row_free(w->queued_row);
	free(w);
}

/* A watch's session that expired but is still there takes its
 * subscription with it (one that is gone took it already); a row that
 * does not open goes whatever its session: off the loop. */
struct drop_job {
	struct dbq_job j;
	char sess_id[SESS_ID_LEN + 1];
	time_t now;
	int expired_only;
};

static void drop_work(struct dbq_job *j, struct store *st)
{
	struct drop_job *e = container_of(j, struct drop_job, j);
	struct store_sess_row r;
	int rc = e->expired_only ? store_sess_times(st, e->sess_id, &r) : 1;

	j->rc = 0;
	if (rc == 1 && (!e->expired_only || !sess_row_alive(j->app, &r,
	    e->now)) && store_webpush_delete(st, e->sess_id, NULL) == -1)
		j->rc = -1;
}

static void drop_done(struct dbq_job *j)
{
	if (j->rc == -1)
		log_warn("webpush: a subscription to drop was not deleted");
	free(container_of(j, struct drop_job, j));
}

static void watch_drop(struct pushd *pd, const char *sess_id,
    int expired_only)
{
	struct drop_job *e = calloc(1, sizeof(*e));

	if (e == NULL)
		return;
	snprintf(e->sess_id, sizeof(e->sess_id), "%s", sess_id);
	e->now = time(NULL);
	e->expired_only = expired_only;
	e->j.work = drop_work;
	e->j.done = drop_done;
	if (dbq_push(pd, &e->j) == -1)
		free(e);
}

static void watch_unlink(struct pushd *pd, struct wp_watch *w)
{
	if (w->prev)
		w->prev->next = w->next;
	else
		pd->watches = w->next;
	if (w->next)
		w->next->prev = w->prev;
}

/* The account ends it: its session ended (signed out, expired, revoked,
 * refused), or nothing vouches for it. A session that is gone takes its
 * subscription with it (the database does, when the row goes; an expired
 * one that is still there is deleted here). */
static void watch_end(struct acct_tab *t)
{
	struct wp_watch *w = container_of(t, struct wp_watch, at);
	struct pushd *pd = t->acct->pd;

	if (t->dead)
		return;
	t->dead = 1;
	watch_unlink(pd, w);
	if (w->queued)
		pd->wp_queued--;
	if (!pd->stopping)
		watch_drop(pd, t->sess_id, 1);
	acct_detach(t);
	ev_defer(&pd->ev, watch_free, w);
}

static const struct acct_tab_ops watch_ops = { watch_send, watch_end };

/* -- making one from a row ------------------------------------------------- */

/* The session the row stands for, from its opened fields. */
static int watch_sess(const struct store_webpush_row *row, char *f[NFIELDS],
    struct sess *s)
{
	memset(s, 0, sizeof(*s));
	if (strlen(row->session) != SESS_ID_LEN ||
	    strlen(row->account) != APP_KEY_HEX)
		return -1;
	memcpy(s->id, row->session, SESS_ID_LEN + 1);
	memcpy(s->account, row->account, APP_KEY_HEX + 1);
	s->user = f[F_USER];
	s->pass = f[F_PASS];
	s->api_url = f[F_API];
	s->event_url = f[F_EVENT];
	s->created = strtoll(f[F_CREATED], NULL, 10);
	return 0;
}

static int watch_start(struct pushd *pd, const struct store_webpush_row *row,
    char *f[NFIELDS])
{
	struct wp_watch *w;
	struct sess s;

	if (watch_sess(row, f, &s) == -1 || (w = calloc(1, sizeof(*w))) == NULL)
		return -1;
	w->at.ops = &watch_ops;
	w->at.watch = 1;
	w->at.types = 1u << ACCT_EMAIL;
	memcpy(w->at.sess_id, s.id, sizeof(w->at.sess_id));
	if (acct_attach(pd, &s, f[F_JMAP], &w->at) == -1) {
		free(w);
		return -1;
	}
	w->next = pd->watches;
	if (w->next)
		w->next->prev = w;
	pd->watches = w;
	return 0;
}

int wp_watch_row(struct pushd *pd, const struct store_webpush_row *row)
{
	char *f[NFIELDS];
	struct buf plain;
	int rc = -1;

	wp_watch_end(pd, row->account, row->session);
	buf_init(&plain, SEALED_MAX);
	if (wp_unseal(pd, row, &plain, f) == -1) {
		log_warn("webpush: a subscription that does not open under this "
		    "secret (dropped)");
		watch_drop(pd, row->session, 0);
	} else if ((rc = watch_start(pd, row, f)) == -1)
		log_warn("webpush: cannot follow a subscription's account");
	buf_wipe_free(&plain);
	return rc;
}

/* -- what the other nodes store ------------------------------------------- */

/* Every node watches every stored subscription (start-up reads them all),
 * so that whichever node holds the account's lease pushes. One stored or
 * removed on another node is told (bus.c), and read here off the loop. */
struct told_job {
	struct dbq_job j;
	char sess_id[SESS_ID_LEN + 1];
	char account[APP_KEY_HEX + 1];
	int found;
	struct wp_row row;
	unsigned char *sealed;
	size_t sealed_len;
	long long created;
};

static int told_row(void *ctx, const struct store_webpush_row *row)
{
	struct told_job *k = ctx;

	if (row->sealed_len > SEALED_MAX || wp_row_copy(&k->row, row) == -1 ||
	    (k->sealed = malloc(row->sealed_len + 1)) == NULL)
		return -1;
	memcpy(k->sealed, row->sealed, row->sealed_len);
	k->sealed_len = row->sealed_len;
	k->created = row->created;
	k->found = 1;
	return 0;
}

static void told_work(struct dbq_job *j, struct store *st)
{
	struct told_job *k = container_of(j, struct told_job, j);

	j->rc = store_webpush_get(st, k->sess_id, told_row, k);
}

static void told_done(struct dbq_job *j)
{
	struct told_job *k = container_of(j, struct told_job, j);
	struct store_webpush_row view;

	/* The row as it is now decides, whatever the message said: the
	 * reads run in order, so the last one is the last word. A watch the
	 * session has here already stays (its credentials are the
	 * session's; pushes read the endpoint and keys anew). */
	if (j->rc == -1)
		log_warn("webpush: a subscription stored on another node was "
		    "not read");
	else if (j->pd->stopping || !j->pd->wp_key)
		;
	else if (!k->found)
		wp_watch_end(j->pd, k->account, k->sess_id);
	else if (!wp_watch_find(j->pd, k->account, k->sess_id)) {
		wp_row_view(&k->row, &view);
		view.sealed = k->sealed;
		view.sealed_len = k->sealed_len;
		view.created = k->created;
		wp_watch_row(j->pd, &view);
	}
	free(k->row.endpoint);
	free(k->sealed);
	free(k);
}

void wp_watch_told(struct pushd *pd, const char *account, const char *sess_id)
{
	struct told_job *k;

	if (pd->wp_key == NULL || strlen(sess_id) != SESS_ID_LEN ||
	    strlen(account) != APP_KEY_HEX)
		return;
	if ((k = calloc(1, sizeof(*k))) == NULL)
		return;
	memcpy(k->sess_id, sess_id, sizeof(k->sess_id));
	memcpy(k->account, account, sizeof(k->account));
	k->j.work = told_work;
	k->j.done = told_done;
	if (dbq_push(pd, &k->j) == -1)
		free(k);
}

void wp_watch_tell(struct pushd *pd, const char *account, const char *sess_id)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "a", json_object_new_string(account));
	json_object_object_add(o, "w", json_object_new_string(sess_id));
	json_object_object_add(o, "n",
	    json_object_new_string(pd->app.cfg.node_name));
	bus_tell(pd, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
}

/* The sessions of the stored subscriptions, gathered first: a row that
 * does not open is deleted, which is not done inside the walk. */
struct ids {
	char (*id)[SESS_ID_LEN + 1];
	size_t n, cap;
};

static int startup_id(void *ctx, const struct store_webpush_row *row)
{
	struct ids *x = ctx;
	void *more;

	if (strlen(row->session) != SESS_ID_LEN)
		return 0;
	if (x->n == x->cap) {
		x->cap = x->cap ? 2 * x->cap : 64;
		if ((more = realloc(x->id, x->cap * sizeof(*x->id))) == NULL)
			return -1;
		x->id = more;
	}
	memcpy(x->id[x->n++], row->session, SESS_ID_LEN + 1);
	return 0;
}

static int startup_row(void *ctx, const struct store_webpush_row *row)
{
	wp_watch_row(ctx, row);
	return 0;
}

void wp_watch_startup(struct pushd *pd)
{
	struct ids x = { NULL, 0, 0 };
	long long verified;
	size_t i;

	if (pd->wp_key == NULL)
		return;
	if (store_webpush_list(pd->app.store, NULL, startup_id, &x) == -1)
		log_err("webpush: cannot read all the stored subscriptions");
	for (i = 0; i < x.n; i++) {
		/* A session that ended while pushd was down: its row goes,
		 * and its credentials are not used. */
		if (sess_state(&pd->app, x.id[i], time(NULL), &verified) == 0)
			store_webpush_delete(pd->app.store, x.id[i], NULL);
		else
			store_webpush_get(pd->app.store, x.id[i], startup_row, pd);
	}
	free(x.id);
}

/* -- after a lost listening connection ------------------------------------- */

/* The stored subscriptions' sessions and accounts, sorted by session. */
struct pair {
	char sess_id[SESS_ID_LEN + 1];
	char account[APP_KEY_HEX + 1];
};

struct pairs_job {
	struct dbq_job j;
	struct pair *p;
	size_t n, cap;
};

static int pair_row(void *ctx, const struct store_webpush_row *row)
{
	struct pairs_job *k = ctx;
	void *more;

	if (strlen(row->session) != SESS_ID_LEN ||
	    strlen(row->account) != APP_KEY_HEX)
		return 0;
	if (k->n == k->cap) {
		k->cap = k->cap ? 2 * k->cap : 64;
		if ((more = realloc(k->p, k->cap * sizeof(*k->p))) == NULL)
			return -1;
		k->p = more;
	}
	memcpy(k->p[k->n].sess_id, row->session, SESS_ID_LEN + 1);
	memcpy(k->p[k->n++].account, row->account, APP_KEY_HEX + 1);
	return 0;
}

static int pair_cmp(const void *a, const void *b)
{
	return strcmp(((const struct pair *)a)->sess_id,
	    ((const struct pair *)b)->sess_id);
}

static void pairs_work(struct dbq_job *j, struct store *st)
{
	struct pairs_job *k = container_of(j, struct pairs_job, j);

	j->rc = store_webpush_list(st, NULL, pair_row, k);
	if (j->rc != -1 && k->n)
		qsort(k->p, k->n, sizeof(*k->p), pair_cmp);
}

/* The rows decide, as a told row does: a watch whose row went ends, a
 * row without a watch is read as if told. The reads and the writes run
 * in order, so a watch this node makes after the list never meets it. */
static void pairs_done(struct dbq_job *j)
{
	struct pairs_job *k = container_of(j, struct pairs_job, j);
	struct pushd *pd = j->pd;
	struct wp_watch *w, *next;
	struct pair key, *p;
	size_t i;

	if (j->rc == -1)
		log_warn("webpush: the stored subscriptions were not read again");
	else if (!pd->stopping && pd->wp_key) {
		for (w = pd->watches; w; w = next) {
			next = w->next;
			memcpy(key.sess_id, w->at.sess_id, sizeof(key.sess_id));
			p = k->n ? bsearch(&key, k->p, k->n, sizeof(*k->p),
			    pair_cmp) : NULL;
			if (p == NULL || strcmp(p->account, w->at.acct->key))
				watch_end(&w->at);
		}
		for (i = 0; i < k->n; i++)
			if (!wp_watch_find(pd, k->p[i].account, k->p[i].sess_id))
				wp_watch_told(pd, k->p[i].account, k->p[i].sess_id);
	}
	free(k->p);
	free(k);
}

void wp_watch_recheck(struct pushd *pd)
{
	struct pairs_job *k;

	if (pd->wp_key == NULL || (k = calloc(1, sizeof(*k))) == NULL)
		return;
	k->j.work = pairs_work;
	k->j.done = pairs_done;
	if (dbq_push(pd, &k->j) == -1)
		free(k);
}

struct wp_watch *wp_watch_find(struct pushd *pd, const char *account,
    const char *sess_id)
{
	struct acct *a = acct_lookup(pd, account);
	struct acct_tab *t;

	for (t = a ? a->tabs : NULL; t; t = t->next)
		if (t->watch && !t->dead && !strcmp(t->sess_id, sess_id))
			return container_of(t, struct wp_watch, at);
	return NULL;
}

void wp_watch_end(struct pushd *pd, const char *account, const char *sess_id)
{
	struct wp_watch *w = wp_watch_find(pd, account, sess_id);

	if (w)
		watch_end(&w->at);
}

void wp_watch_shutdown(struct pushd *pd)
{
	while (pd->watches)
		watch_end(&pd->watches->at);
}
