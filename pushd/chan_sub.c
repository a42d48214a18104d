/* chan_sub: a PushSubscription (RFC 8620 7.2). The mail server calls
 * push_public_url/api/push/<token> (callback.c) with each change, and
 * nothing is held open. The steps are calls of PushSubscription/get and
 * /set, in a table: a step is wanted, and the most urgent wanted one
 * runs when no call is in flight; its answer may want others. Until the
 * subscription is verified the next channel carries the changes; a
 * verified one is kept across restarts (its row) and outlives the tabs
 * for push_idle, then is destroyed. (Interface: chan.h; lifetime:
 * pushd.h.) */
#include "chan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "dbq.h"
#include "js.h"
#include "log.h"
#include "pushd.h"
#include "seal.h"
#include "store.h"
#include "subjson.h"

#define SUB_RESP_MAX (256 * 1024)
#define SUB_GRACE_MS 3000      /* the relay overlaps a new subscription */
#define SUB_CHECK_MAX_S 3600L
#define METHOD_GET "PushSubscription/get"
#define METHOD_SET "PushSubscription/set"

/* The steps, most urgent first. */
enum sub_step_id {
	STEP_DESTROY,      /* idle for push_idle: destroy; the account ends */
	STEP_VERIFY,       /* the PushVerification's code, sent back */
	STEP_GET,          /* is ours still there; what are our leftovers */
	STEP_CREATE,       /* a new one (our leftovers destroyed with it) */
	STEP_CLEAN,        /* our leftovers destroyed, ours kept */
	STEP_RENEW,        /* a later expiry */
	STEP_DROP,         /* not verified in time: destroyed, relay on */
	STEP_N
};
#define WANT(step) (1u << (step))

struct sub_step {
	const char *method;
	/* The call's arguments, or NULL: nothing to send now. */
	json_object *(*args)(struct chan_sub *s);
	/* With nothing to send: 1 the step is over (answer runs with NULL),
	 * 0 it waits, wanted still. */
	int over_unsent;
	/* The answer's arguments, NULL when the call failed or was not
	 * made (unmade: it had something to send and could not be started);
	 * NULL for a step whose answer changes nothing. */
	void (*answer)(struct chan_sub *s, json_object *args, int unmade);
};

static void sub_next(struct chan_sub *s);

static int sub_alive(const struct chan_sub *s)
{
	return !s->a->dead && s->a->sub == s;
}

/* push_public_url is an https origin (the JMAP server refuses other
 * callbacks) and push_mode allows subscribing. */
static int sub_enabled(const struct pushd *pd)
{
	const struct cfg *c = &pd->app.cfg;

	return c->push_public_url && !strncmp(c->push_public_url, "https://", 8) &&
	    (c->push_mode == CFG_PUSH_AUTO || c->push_mode == CFG_PUSH_SUBSCRIPTION);
}

/* The deviceClientId of this installation: the same for every account, so
 * that leftovers are recognised as ours, and nobody else's. */
static void sub_device(struct pushd *pd, char out[APP_KEY_HEX + 1])
{
	app_key(&pd->app, "device", "pushd", out);
}

/* A verified subscription from an earlier run, read off the loop (dbq.h):
 * until it is in, the subscription makes no call. */
struct sub_load {
	struct dbq_job j;
	struct chan_sub *s;        /* NULL once the subscription went */
	char account[APP_KEY_HEX + 1];
	char *id;
	char token_hash[ACCT_TOKEN_HEX + 1];
	long long expires;
};

static void load_work(struct dbq_job *j, struct store *st)
{
	struct sub_load *k = container_of(j, struct sub_load, j);

	j->rc = store_push_held(st, k->account, &k->id, k->token_hash,
	    ACCT_TOKEN_HEX, &k->expires);
}

/* What sub_start waited for is in: the channel in charge is chosen (a
 * verified subscription at once, with no stream meanwhile), and the
 * first call checks the subscription. */
static void sub_loaded(struct chan_sub *s)
{
	if (!sub_alive(s))
		return;
	s->want |= WANT(STEP_GET);
	acct_choose(s->a);
	sub_next(s);
}

/* Used when not yet expired; then the first call checks it is still
 * there. */
static void load_done(struct dbq_job *j)
{
	struct sub_load *k = container_of(j, struct sub_load, j);
	struct chan_sub *s = k->s;

	if (s) {
		s->load = NULL;
		if (j->rc == 1 && k->expires > (long long)time(NULL)) {
			s->id = k->id;
			k->id = NULL;
			memcpy(s->token_hash, k->token_hash, sizeof(s->token_hash));
			s->expires = k->expires;
			s->state = SUB_VERIFIED;
		}
		sub_loaded(s);
	}
	free(k->id);
	seal_wipe(k->token_hash, sizeof(k->token_hash));
	free(k);
}

/* 1 while the read is out (sub_loaded follows), 0 when none is. */
static int sub_load(struct chan_sub *s)
{
	struct sub_load *k = calloc(1, sizeof(*k));

	if (k) {
		memcpy(k->account, s->a->key, sizeof(k->account));
		k->s = s;
		k->j.work = load_work;
		k->j.done = load_done;
		s->load = k;
		if (dbq_push(s->pd, &k->j) == 0)
			return 1;
		s->load = NULL;
		free(k);
	}
	/* None read: a new subscription is made. */
	s->want |= WANT(STEP_GET);
	sub_next(s);
	return 0;
}

/* The next renewal check, or the verification deadline. */
static void sub_arm(struct chan_sub *s)
{
	const struct cfg *c = &s->a->pd->app.cfg;
	long t = c->push_renew / 4;

	if (s->state == SUB_PENDING)
		t = c->push_verify_timeout;
	else if (t > SUB_CHECK_MAX_S)
		t = SUB_CHECK_MAX_S;
	if (t < 1)
		t = 1;
	ev_timer_set(&s->a->pd->ev, &s->timer, (uint64_t)t * 1000);
}

static void sub_clear(struct chan_sub *s, enum chan_sub_state st)
{
	free(s->id);
	s->id = NULL;
	free(s->verify_code);
	s->verify_code = NULL;
	seal_wipe(s->token_hash, sizeof(s->token_hash));
	s->state = (uint8_t)st;
	ev_timer_stop(&s->a->pd->ev, &s->timer);
}

/* Back to the next channel from subscription mode, without a gap. */
static void sub_lost(struct chan_sub *s, const char *why)
{
	struct acct *a = s->a;

	if (a->mode == ACCT_SUBSCRIPTION && a->ntabs)
		acct_fall_back(a, ACCT_SUBSCRIPTION, why);
}

static void sub_done(struct mc_job *job, CURLcode rc, long status);

/* One PushSubscription call of step (args taken): 0, or -1. */
static int sub_call(struct chan_sub *s, enum sub_step_id step,
    const char *method, json_object *args)
{
	json_object *o = subjson_call(method, s->a->jmap_id, args);
	int rc;

	buf_free(&s->resp);
	s->job.done = sub_done;
	s->step = (uint8_t)step;
	rc = acct_call(s->a, &s->job,
	    json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN), &s->resp);
	json_object_put(o);
	return rc;
}

/* -- the steps' arguments --------------------------------------------------- */

static json_object *args_destroy(struct chan_sub *s)
{
	return s->id ? subjson_destroy(s->id) : NULL;
}

static json_object *args_verify(struct chan_sub *s)
{
	if (s->verify_code == NULL || s->id == NULL)
		return NULL;
	return subjson_update(s->id, "verificationCode",
	    json_object_new_string(s->verify_code));
}

static json_object *args_get(struct chan_sub *s)
{
	return subjson_get();
}

/* A new subscription with a new token, our leftovers destroyed with it. */
static json_object *args_create(struct chan_sub *s)
{
	struct pushd *pd = s->a->pd;
	unsigned char rnd[32];
	char dev[APP_KEY_HEX + 1], url[1024], token[44];
	json_object *args;
	size_t n;

	if (s->a->ntabs == 0)
		return NULL;      /* idle meanwhile: none */
	/* The token goes into the URL the JMAP server is given, and only
	 * its hash is kept. */
	seal_random(rnd, sizeof(rnd));
	seal_b64url_encode(rnd, sizeof(rnd), token);
	seal_wipe(rnd, sizeof(rnd));
	sub_token_hash(token, s->token_hash);
	sub_device(pd, dev);
	n = strlen(pd->app.cfg.push_public_url);
	while (n && pd->app.cfg.push_public_url[n - 1] == '/')
		n--;
	snprintf(url, sizeof(url), "%.*s/api/push/%s", (int)n,
	    pd->app.cfg.push_public_url, token);
	seal_wipe(token, sizeof(token));
	s->expires = (long long)time(NULL) + pd->app.cfg.push_expiry;
	args = subjson_create(dev, url, s->expires, s->leftovers);
	seal_wipe(url, sizeof(url));
	s->leftovers = NULL;
	return args;
}

static json_object *args_clean(struct chan_sub *s)
{
	json_object *args = s->leftovers ? subjson_destroy_all(s->leftovers) : NULL;

	s->leftovers = NULL;
	return args;
}

static json_object *args_renew(struct chan_sub *s)
{
	if (s->id == NULL)
		return NULL;
	return subjson_update(s->id, "expires", subjson_utc((long long)time(NULL) +
	    s->a->pd->app.cfg.push_expiry));
}

/* -- the steps' answers ---------------------------------------------------- */

static void on_destroyed(struct chan_sub *s, json_object *args, int unmade)
{
	struct acct *a = s->a;

	/* A call that could not be made leaves the subscription, and so its
	 * row, for the next run; anything else, answered or with nothing to
	 * destroy, removes the row. */
	if (!(unmade && s->id))
		acct_release(a->pd, a->key, ACCT_ROW_ANY);
	sub_clear(s, SUB_NONE);
	acct_end(a);
}

/* Verified: subscription mode. */
static void on_verified(struct chan_sub *s, json_object *args, int unmade)
{
	/* Too late: its deadline passed while the call was out (the drop
	 * step destroys it). */
	if (s->state != SUB_PENDING)
		return;
	if (!subjson_updated(args, s->id, NULL)) {
		log_warn("pushd: the push verification was not accepted");
		return;
	}
	s->state = SUB_VERIFIED;
	free(s->verify_code);
	s->verify_code = NULL;
	sub_arm(s);
	acct_set_mode(s->a, ACCT_SUBSCRIPTION, "a push subscription is verified");
}

static void on_list(struct chan_sub *s, json_object *args, int unmade)
{
	char dev[APP_KEY_HEX + 1];
	json_object *list = NULL;
	int held;

	if (args == NULL) {
		/* No PushSubscription here (unknownMethod), or it failed: the
		 * next channel it is. */
		log_info("pushd: no push subscriptions on this server; "
		    "relay or poll");
		sub_clear(s, SUB_FAILED);
		sub_lost(s, "the server has no push subscriptions");
		return;
	}
	json_object_object_get_ex(args, "list", &list);
	json_object_put(s->leftovers);
	s->leftovers = NULL;
	sub_device(s->a->pd, dev);
	held = subjson_ours(list, dev, s->id, &s->leftovers);
	if (s->state == SUB_VERIFIED && !held) {
		/* The server no longer has it (expired, or removed). */
		log_info("pushd: the stored push subscription is gone; a new one");
		sub_clear(s, SUB_NONE);
		sub_lost(s, "the push subscription is gone");
	}
	s->want |= held ? WANT(STEP_CLEAN) : WANT(STEP_CREATE);
}

static void on_created(struct chan_sub *s, json_object *args, int unmade)
{
	json_object *o = args ? js_obj(args, "created") : NULL;
	const char *id;

	o = o ? js_obj(o, "c") : NULL;
	if (o && (id = js_str(o, "id")) != NULL && (s->id = strdup(id)) != NULL) {
		s->expires = subjson_expires(o, s->expires);
		s->state = SUB_PENDING;
		/* Its token's hash in the row now: the verification may
		 * reach another node (callback.c). */
		acct_dirty_now(s->a);
		sub_arm(s);
		log_debug("pushd: push subscription %s created", id);
	} else if (s->a->ntabs) {
		log_warn("pushd: the mail server did not create the push "
		    "subscription; relay or poll");
		sub_clear(s, SUB_FAILED);
	}
}

static void on_renewed(struct chan_sub *s, json_object *args, int unmade)
{
	json_object *patch;

	if (subjson_updated(args, s->id, &patch)) {
		s->expires = subjson_expires(patch, (long long)time(NULL) +
		    s->a->pd->app.cfg.push_expiry);
		acct_dirty(s->a);
		log_debug("pushd: push subscription renewed");
	} else if (args) {
		/* notUpdated: gone. A new one. */
		sub_clear(s, SUB_NONE);
		sub_lost(s, "the push subscription was not renewed");
		s->want |= WANT(STEP_GET);
	}
	if (s->state == SUB_VERIFIED)
		sub_arm(s);
}

static void on_dropped(struct chan_sub *s, json_object *args, int unmade)
{
	sub_clear(s, SUB_FAILED);
}

static const struct sub_step sub_steps[STEP_N] = {
	[STEP_DESTROY] = { METHOD_SET, args_destroy, 1, on_destroyed },
	[STEP_VERIFY] = { METHOD_SET, args_verify, 0, on_verified },
	[STEP_GET] = { METHOD_GET, args_get, 0, on_list },
	[STEP_CREATE] = { METHOD_SET, args_create, 1, on_created },
	[STEP_CLEAN] = { METHOD_SET, args_clean, 1, NULL },
	[STEP_RENEW] = { METHOD_SET, args_renew, 0, on_renewed },
	[STEP_DROP] = { METHOD_SET, args_destroy, 1, on_dropped },
};

/* -- running the steps ----------------------------------------------------- */

static void sub_stop(struct acct *a);

/* The most urgent wanted step that can run, its arguments in *args (NULL:
 * it is over unsent); -1 when none can. */
static int sub_pick(struct chan_sub *s, json_object **args)
{
	int i;

	for (i = 0; i < STEP_N; i++) {
		if (!(s->want & WANT(i)))
			continue;
		*args = sub_steps[i].args(s);
		if (*args || sub_steps[i].over_unsent) {
			s->want &= ~WANT(i);
			return i;
		}
	}
	return -1;
}

/* Runs wanted steps until one is in flight or none is left; a call that
 * cannot be made is answered as a failed one. A failed subscription of
 * an account with tabs then goes; an idle account's ends with its idle
 * timer. */
static void sub_next(struct chan_sub *s)
{
	struct acct *a = s->a;
	json_object *args;
	int i;

	while (sub_alive(s) && s->job.easy == NULL && !s->load &&
	    !a->pd->in_curl && (i = sub_pick(s, &args)) >= 0) {
		if (args && sub_call(s, i, sub_steps[i].method, args) == 0)
			return;
		if (args)
			log_warn("pushd: cannot make a PushSubscription call");
		if (sub_steps[i].answer)
			sub_steps[i].answer(s, NULL, args != NULL);
	}
	if (sub_alive(s) && s->state == SUB_FAILED && s->want == 0 &&
	    s->job.easy == NULL && a->ntabs)
		sub_stop(a);
}

static void sub_done(struct mc_job *job, CURLcode rc, long status)
{
	struct chan_sub *s = container_of(job, struct chan_sub, job);
	const struct sub_step *st = &sub_steps[s->step];
	struct acct *a = s->a;
	json_object *root = NULL, *args;

	if (!sub_alive(s))
		return;
	if (rc == CURLE_OK)
		acct_accepted(a, status);
	args = rc == CURLE_OK && status == 200 ?
	    subjson_answer(s->resp.data, s->resp.len, st->method, &root) : NULL;
	buf_free(&s->resp);
	if (rc == CURLE_OK && status == 401) {
		json_object_put(root);
		acct_check_tabs(a, 1);
		if (!a->dead && a->ntabs == 0)
			acct_end(a);
		return;
	}
	if (st->answer)
		st->answer(s, args, 0);
	json_object_put(root);
	sub_next(s);
}

/* Renewal check (verified) or verification deadline (pending). */
static void sub_on_timer(struct ev *ev, struct ev_timer *t)
{
	struct chan_sub *s = container_of(t, struct chan_sub, timer);
	const struct cfg *c = &s->a->pd->app.cfg;

	if (s->state == SUB_PENDING) {
		log_warn("pushd: the push subscription was not verified in time; "
		    "relay or poll");
		s->state = SUB_FAILED;
		s->want |= WANT(STEP_DROP);
		sub_next(s);
		return;
	}
	if (s->state != SUB_VERIFIED)
		return;
	if (s->expires - (long long)time(NULL) < c->push_renew) {
		s->want |= WANT(STEP_RENEW);
		sub_next(s);
	}
	if (sub_alive(s))
		sub_arm(s);
}

static void sub_on_idle(struct ev *ev, struct ev_timer *t)
{
	struct chan_sub *s = container_of(t, struct chan_sub, idle_timer);

	if (s->a->ntabs)
		return;
	s->want |= WANT(STEP_DESTROY);
	sub_next(s);
}

/* The relay overlapped a new subscription for a grace, so that an event
 * the upstream stream still held back is not lost (the same state from
 * both is told once). */
static void sub_on_grace(struct ev *ev, struct ev_timer *t)
{
	struct chan_sub *s = container_of(t, struct chan_sub, grace_timer);
	struct acct *a = s->a;

	if (a->mode == ACCT_SUBSCRIPTION) {
		a->pd->chans[ACCT_RELAY]->stop(a);
		poll_rest(a);
	}
}

/* -- the channel ----------------------------------------------------------- */

static void sub_free(void *v)
{
	struct chan_sub *s = v;

	mc_cancel(s->pd, &s->job);
	if (s->load)
		s->load->s = NULL;
	buf_free(&s->resp);
	free(s->id);
	free(s->verify_code);
	json_object_put(s->leftovers);
	seal_wipe(s->token_hash, sizeof(s->token_hash));
	free(s);
}

static void sub_stop(struct acct *a)
{
	struct chan_sub *s = a->sub;
	struct ev *ev = &a->pd->ev;

	if (s == NULL)
		return;
	a->sub = NULL;
	ev_timer_stop(ev, &s->timer);
	ev_timer_stop(ev, &s->idle_timer);
	ev_timer_stop(ev, &s->grace_timer);
	if (!a->pd->in_curl)
		mc_cancel(a->pd, &s->job);
	ev_defer(ev, sub_free, s);
}

/* A tab is there: back from idle, the subscription carries on; for a new
 * account, one is looked for (a verified one from an earlier run is used
 * at once: the channel in charge is chosen once it is read; the first
 * call checks it is still there and clears our leftovers). */
static int sub_start(struct acct *a)
{
	struct chan_sub *s = a->sub;

	if (s) {
		ev_timer_stop(&a->pd->ev, &s->idle_timer);
		return s->load != NULL;
	}
	if (!sub_enabled(a->pd))
		return 0;
	if ((s = calloc(1, sizeof(*s))) == NULL) {
		log_err("pushd: out of memory for a push subscription");
		return 0;
	}
	s->a = a;
	s->pd = a->pd;
	buf_init(&s->resp, SUB_RESP_MAX);
	ev_timer_init(&s->timer, sub_on_timer);
	ev_timer_init(&s->idle_timer, sub_on_idle);
	ev_timer_init(&s->grace_timer, sub_on_grace);
	a->sub = s;
	return sub_load(s);
}

static int sub_usable(const struct acct *a)
{
	return a->sub && a->sub->state == SUB_VERIFIED;
}

/* In charge: a relay still open goes on for a grace; the tabs are
 * watched; the renewal check stays where it is (a tab back after idle
 * must not put it off). */
static void sub_enter(struct acct *a)
{
	struct chan_sub *s = a->sub;

	if (a->relay)
		ev_timer_set(&a->pd->ev, &s->grace_timer, SUB_GRACE_MS);
	if (a->ntabs)
		poll_watch(a);
	if (!ev_timer_armed(&s->timer))
		sub_arm(s);
}

/* A subscription outlives the tabs for push_idle (with the credentials,
 * to destroy it then). */
static int sub_idle(struct acct *a)
{
	struct chan_sub *s = a->sub;

	if (s == NULL || a->pd->stopping ||
	    (s->state != SUB_PENDING && s->state != SUB_VERIFIED))
		return 0;
	ev_timer_stop(&a->pd->ev, &s->grace_timer);
	ev_timer_set(&a->pd->ev, &s->idle_timer,
	    (uint64_t)a->pd->app.cfg.push_idle * 1000);
	return 1;
}

/* A subscription's identity is written once it is verified: only a
 * verified one is worth reusing after a restart. */
static void sub_row(const struct acct *a, struct store_push_row *row)
{
	const struct chan_sub *s = a->sub;

	/* Awaiting its verification, only the token's hash: the callback
	 * may reach another node, which passes it on (callback.c); a pushd
	 * restarted reuses only a verified one (store_push_held). */
	if (s && s->id && s->token_hash[0] &&
	    (s->state == SUB_PENDING || s->state == SUB_VERIFIED))
		row->token_hash = s->token_hash;
	if (s && s->id && s->state == SUB_VERIFIED) {
		row->sub_id = s->id;
		row->expires = s->expires;
	}
}

const struct chan chan_sub = {
	.name = "a push subscription",
	.start = sub_start,
	.usable = sub_usable,
	.enter = sub_enter,
	.stop = sub_stop,
	.idle = sub_idle,
	.row = sub_row,
};

void sub_token_hash(const char *token, char out[ACCT_TOKEN_HEX + 1])
{
	unsigned char h[SEAL_HASH_LEN];

	seal_sha256(token, strlen(token), h);
	seal_hex(h, sizeof(h), out);
}

int sub_verification(struct acct *a, const char *id, const char *code)
{
	struct chan_sub *s = a->sub;

	if (s == NULL || s->state != SUB_PENDING || s->id == NULL ||
	    strcmp(id, s->id))
		return 403;
	free(s->verify_code);
	s->verify_code = strdup(code);
	s->want |= WANT(STEP_VERIFY);
	sub_next(s);
	return 202;
}
