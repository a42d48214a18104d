/* pushd's accounts and channels below end to end: acct.c, events.c and
 * the three chan_*.c driven over a fake transport (this file's mc_request
 * and mc_cancel, which record each request and let a test answer it) and
 * a fake clock (the loop's clock is the test's; ev_run_timers runs what
 * is due). The tabs are fakes too: they record what they are sent.
 *
 * Each documented fallback: a subscription not verified in time leaves
 * the event stream in charge; a stream that fails three times leaves the
 * polling in charge without dropping a tab, and takes over again when it
 * answers; a 401 ends the sessions; a refused renewal makes a new
 * subscription; a tab whose queue overflows during a fan-out ends without
 * disturbing the others. And the rules of pushd.h: no transfer is started
 * or cancelled inside a libcurl callback, nothing is left running. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "node.h"
#include "testapp.h"

#include "acct.h"
#include "callback.h"
#include "testcallback.h"
#include "chan.h"
#include "mcurl.h"
#include "pushd.h"
#include "sess.h"
#include "store.h"

#define HASH0 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define DOC "{\"primaryAccounts\":{\"urn:ietf:params:jmap:mail\":\"A1\"}}"
#define EVENT_URL "http://127.0.0.1:9/jmap/event?types={types}" \
	"&closeafter={closeafter}&ping={ping}"
#define STATES(e, m, t) "{\"methodResponses\":[" \
	"[\"Email/get\",{\"state\":\"" e "\",\"list\":[]},\"Email\"]," \
	"[\"Mailbox/get\",{\"state\":\"" m "\",\"list\":[]},\"Mailbox\"]," \
	"[\"Thread/get\",{\"state\":\"" t "\",\"list\":[]},\"Thread\"]]}"
#define CHANGE(e) "event: state\ndata: {\"@type\":\"StateChange\"," \
	"\"changed\":{\"A1\":{\"Email\":\"" e "\"}}}\n\n"
#define SET_ANSWER(body) "{\"methodResponses\":[[\"PushSubscription/set\"," \
	body ",\"p\"]]}"
#define GET_ANSWER(list) "{\"methodResponses\":[[\"PushSubscription/get\"," \
	"{\"list\":" list "},\"p\"]]}"

/* -- the fake transport ---------------------------------------------------- */

struct fake_req {
	struct mc_job *job;
	enum mc_kind kind;
	char *json;                  /* MC_CALL's body */
	curl_write_callback write;
	void *ctx;
	int live;
};

#define FAKE_MAX 256
static struct fake_req fake[FAKE_MAX];
static unsigned nfake;
static struct pushd *fake_pd;
static int fake_refuse;            /* the next requests cannot be made */

/* A copy of json-c's output with "\/" as "/", to be searched. */
static char *unslash(const char *json)
{
	char *out = strdup(json), *w = out;
	const char *p;

	assert_non_null(out);
	for (p = json; *p; p++)
		if (!(p[0] == '\\' && p[1] == '/'))
			*w++ = *p;
	*w = '\0';
	return out;
}

int mc_request(struct pushd *pd, struct mc_job *job, const struct mc_req *rq)
{
	struct fake_req *r;

	/* pushd.h, rule 5: never from inside a libcurl callback. */
	assert_int_equal(pd->in_curl, 0);
	assert_null(job->easy);
	if (fake_refuse)
		return -1;
	assert_true(nfake < FAKE_MAX);
	r = &fake[nfake++];
	r->job = job;
	r->kind = rq->kind;
	r->json = rq->json ? unslash(rq->json) : NULL;
	r->write = rq->write;
	r->ctx = rq->ctx;
	r->live = 1;
	job->easy = (CURL *)r;
	return 0;
}

void mc_cancel(struct pushd *pd, struct mc_job *job)
{
	if (job->easy == NULL)
		return;
	assert_int_equal(pd->in_curl, 0);
	((struct fake_req *)(void *)job->easy)->live = 0;
	job->easy = NULL;
}

/* The live request of kind whose body holds what (NULL: any). */
static struct fake_req *fake_find(enum mc_kind kind, const char *what)
{
	unsigned i;

	for (i = 0; i < nfake; i++)
		if (fake[i].live && fake[i].kind == kind &&
		    (what == NULL || (fake[i].json && strstr(fake[i].json, what))))
			return &fake[i];
	return NULL;
}

static unsigned fake_live(enum mc_kind kind, const char *what)
{
	unsigned i, n = 0;

	for (i = 0; i < nfake; i++)
		n += fake[i].live && fake[i].kind == kind &&
		    (what == NULL || (fake[i].json && strstr(fake[i].json, what)));
	return n;
}

static void fake_end(struct fake_req *r, CURLcode rc, long status)
{
	assert_true(r->live);
	r->live = 0;
	r->job->easy = NULL;
	r->job->done(r->job, rc, status);
}

/* The transfer's bytes, as libcurl hands them over; a short return ends
 * it (CURLE_WRITE_ERROR), as libcurl does. */
static void fake_bytes(struct fake_req *r, const char *body, long status)
{
	size_t n = strlen(body);
	char *copy = strdup(body);

	if (r->write(copy, 1, n, r->ctx) != n)
		fake_end(r, CURLE_WRITE_ERROR, status);
	free(copy);
}

static void fake_answer(struct fake_req *r, long status, const char *body)
{
	assert_non_null(r);
	if (body)
		fake_bytes(r, body, status);
	if (r->live)
		fake_end(r, CURLE_OK, status);
}

static void fake_reset(void)
{
	unsigned i;

	for (i = 0; i < nfake; i++)
		free(fake[i].json);
	memset(fake, 0, sizeof(fake));
	nfake = 0;
}

/* -- the fake clock -------------------------------------------------------- */

static uint64_t fake_now = 1000000;

static uint64_t fake_clock(void)
{
	return fake_now;
}

/* Time passes, a second at most at a time: what is due runs in order (a
 * timer re-armed for 0 ms, too), the leases' renewals among them (on a
 * shared state), as on a loop that is never frozen. */
static void advance(uint64_t ms)
{
	uint64_t step;
	int i;

	do {
		step = ms > 1000 ? 1000 : ms;
		fake_now += step;
		ms -= step;
		for (i = 0; i < 4; i++)
			ev_run_timers(&fake_pd->ev);
	} while (ms > 0);
}

/* -- the fake tabs --------------------------------------------------------- */

struct ftab {
	struct acct_tab at;
	unsigned frames;
	char last[512];
	int ended;
	int overflow;              /* its queue is full: a send ends it */
};

static void ftab_end(struct acct_tab *at)
{
	struct ftab *f = container_of(at, struct ftab, at);

	if (at->dead)
		return;
	at->dead = 1;
	f->ended = 1;
	acct_detach(at);
}

static int ftab_send(struct acct_tab *at, const char *frame, size_t n)
{
	struct ftab *f = container_of(at, struct ftab, at);

	if (at->dead)
		return -1;
	if (f->overflow) {
		ftab_end(at);       /* as conn.c ends a stream it cannot queue */
		return -1;
	}
	f->frames++;
	snprintf(f->last, sizeof(f->last), "%.*s", (int)n, frame);
	return 0;
}

static const struct acct_tab_ops ftab_ops = { ftab_send, ftab_end };

/* -- the fixture ----------------------------------------------------------- */

static const struct chan *const chans[ACCT_NMODES] = {
	[ACCT_POLL] = &chan_poll,
	[ACCT_RELAY] = &chan_relay,
	[ACCT_SUBSCRIPTION] = &chan_sub,
};

struct fix {
	struct testapp t;
	struct pushd pd;
	struct sess *s;
	struct ftab tabs[4];
};

static void set(struct fix *f, const char *key, const char *value)
{
	char err[256];

	assert_int_equal(cfg_set(&f->t.app.cfg, key, value, err, sizeof(err)), 0);
}

/* A pushd over a fresh state, with push_mode mode (and, for a
 * subscription, a public URL it is never called at here). */
static struct fix *fix_open(const char *mode)
{
	struct fix *f = calloc(1, sizeof(*f));
	char cookie[SESS_COOKIE_LEN + 1];
	struct sess_new n = {
		.user = "alice", .pass = "secret", .doc = DOC,
		.api_url = "http://127.0.0.1:9/jmap/",
		.download_url = "http://127.0.0.1:9/d/{accountId}/{blobId}/{name}",
		.upload_url = "http://127.0.0.1:9/u/{accountId}/",
		.event_url = EVENT_URL, .agent = "test", .ip = "192.0.2.7",
	};

	assert_non_null(f);
	fake_reset();
	fake_refuse = 0;
	testapp_init(&f->t);
	set(f, "push_mode", mode);
	set(f, "push_public_url", "https://push.example.test");
	set(f, "push_poll_interval", "60");
	set(f, "push_verify_timeout", "10");
	set(f, "push_idle", "30");
	testapp_start(&f->t);
	f->pd.app = f->t.app;
	assert_int_equal(ev_init(&f->pd.ev), 0);
	f->pd.ev.clock = fake_clock;
	f->pd.ev.now = fake_now;
	f->pd.chans = chans;
	f->pd.next_id = 1;
	fake_pd = &f->pd;
	acct_startup(&f->pd);
	/* As pushd: on a shared state (POSTERN_TEST_STATE_DB, PostgreSQL),
	 * this one node holds every lease and renews it on the loop. */
	node_start(&f->pd);
	assert_int_equal(sess_create(&f->pd.app, &n, time(NULL), cookie), 0);
	assert_int_equal(sess_lookup(&f->pd.app, cookie, time(NULL), &f->s), 0);
	return f;
}

static struct acct *attach(struct fix *f, unsigned i)
{
	struct ftab *t = &f->tabs[i];

	memset(t, 0, sizeof(*t));
	t->at.ops = &ftab_ops;
	t->at.types = ACCT_ALL;
	memcpy(t->at.sess_id, f->s->id, sizeof(t->at.sess_id));
	assert_int_equal(acct_attach(&f->pd, f->s, "A1", &t->at), 0);
	/* The database's answers (a lease on a shared state, a subscription
	 * from an earlier run) come after the batch in hand (dbq.h): here at
	 * once, and the channels start. */
	ev_flush_deferred(&f->pd.ev);
	return t->at.acct;
}

/* Everything ends; nothing is left running or allocated. */
static void fix_close(struct fix *f)
{
	unsigned i;

	for (i = 0; i < 4; i++)
		if (f->tabs[i].at.ops && !f->tabs[i].at.dead)
			ftab_end(&f->tabs[i].at);
	f->pd.stopping = 1;
	acct_shutdown(&f->pd);
	node_stop(&f->pd);
	ev_free(&f->pd.ev);
	for (i = 0; i < nfake; i++)
		assert_false(fake[i].live);
	assert_int_equal(f->pd.naccts, 0);
	sess_free(f->s);
	f->t.app = f->pd.app;
	testapp_close(&f->t);
	fake_reset();
	free(f);
}

/* The stream opens and its baseline call is answered. */
static void stream_up(struct fix *f, const char *email)
{
	char body[1024];

	fake_find(MC_STREAM, NULL)->job->head(fake_find(MC_STREAM, NULL)->job,
	    200, "text/event-stream");
	advance(0);
	snprintf(body, sizeof(body), STATES("%s", "m1", "t1"), email);
	fake_answer(fake_find(MC_CALL, "Email/get"), 200, body);
}

/* -- the event stream and the polling ------------------------------------- */

/* A stream that fails three times in a row leaves the polling in charge,
 * every tab kept; when it answers again it takes over, and the polling
 * stops. */
static void stream_refused_three_times_polls_and_back(void **state)
{
	struct fix *f = fix_open("relay");
	struct acct *a = attach(f, 0);
	unsigned i;

	assert_int_equal(a->mode, ACCT_RELAY);
	assert_null(fake_find(MC_CALL, "PushSubscription"));
	stream_up(f, "e1");
	/* The baseline is told to the tab open before it. */
	assert_int_equal(f->tabs[0].frames, 1);
	assert_non_null(strstr(f->tabs[0].last, "\"e1\""));
	fake_answer(fake_find(MC_STREAM, NULL), 200, CHANGE("e2"));
	assert_int_equal(f->tabs[0].frames, 2);
	assert_non_null(strstr(f->tabs[0].last, "\"e2\""));
	/* The stream ends (it had worked): again after the backoff, not a
	 * failure. Then three refusals in a row. */
	for (i = 0; i < 3; i++) {
		advance(60000);
		assert_int_equal(a->mode, ACCT_RELAY);
		fake_end(fake_find(MC_STREAM, NULL), CURLE_COULDNT_CONNECT, 0);
	}
	assert_int_equal(a->mode, ACCT_POLL);
	assert_false(f->tabs[0].ended);
	advance(0);
	fake_answer(fake_find(MC_CALL, "Email/get"), 200, STATES("e3", "m1", "t1"));
	assert_int_equal(f->tabs[0].frames, 3);
	/* Polling every interval meanwhile; the stream tried on its backoff. */
	advance(60000);
	assert_non_null(fake_find(MC_CALL, "Email/get"));
	fake_answer(fake_find(MC_CALL, "Email/get"), 200, STATES("e3", "m1", "t1"));
	assert_non_null(fake_find(MC_STREAM, NULL));
	stream_up(f, "e3");
	assert_int_equal(a->mode, ACCT_RELAY);
	advance(120000);
	assert_null(fake_find(MC_CALL, "Email/get"));   /* no polling now */
	assert_int_equal(f->tabs[0].frames, 3);
	fix_close(f);
}

/* The first states pushd knows of an account are told to the tabs open
 * before them (what came between their own look and that call would be
 * told to nobody), but not to a tab that ends at its first event: it
 * would come back to a new account and a new baseline, again and again.
 * The change after it reaches both. */
static void baseline_told_but_not_to_closeafter(void **state)
{
	struct fix *f = fix_open("relay");

	attach(f, 0);
	attach(f, 1);
	f->tabs[1].at.closeafter = 1;
	stream_up(f, "e1");
	assert_int_equal(f->tabs[0].frames, 1);
	assert_int_equal(f->tabs[1].frames, 0);
	assert_false(f->tabs[1].ended);
	fake_answer(fake_find(MC_STREAM, NULL), 200, CHANGE("e2"));
	assert_int_equal(f->tabs[0].frames, 2);
	assert_int_equal(f->tabs[1].frames, 1);
	assert_true(f->tabs[1].ended);
	fix_close(f);
}

/* A server that answers event_url without a stream (Cyrus: 204) is
 * polled for good, and the stream is not tried again. */
static void no_stream_polls_for_good(void **state)
{
	struct fix *f = fix_open("auto");
	struct acct *a = attach(f, 0);

	/* push_public_url is https, so a subscription is looked for first;
	 * this server has none. */
	fake_answer(fake_find(MC_CALL, "PushSubscription/get"), 200,
	    "{\"methodResponses\":[[\"error\",{\"type\":\"unknownMethod\"},\"p\"]]}");
	assert_null(a->sub);
	fake_answer(fake_find(MC_STREAM, NULL), 204, NULL);
	assert_int_equal(a->mode, ACCT_POLL);
	assert_null(a->relay);
	advance(0);
	fake_answer(fake_find(MC_CALL, "Email/get"), 200, STATES("e1", "m1", "t1"));
	advance(10 * 60000);
	assert_int_equal(fake_live(MC_STREAM, NULL), 0);
	assert_int_equal(fake_live(MC_CALL, "Email/get"), 1);
	fix_close(f);
}

/* 401 from the stream, or from a poll: the account's sessions end (the
 * app signs in again) and every tab's stream with them. */
static void unauthorized_ends_sessions(void **state)
{
	struct fix *f = fix_open("relay");
	struct acct *a = attach(f, 0);
	long long verified;

	attach(f, 1);
	assert_int_equal(a->ntabs, 2);
	fake_end(fake_find(MC_STREAM, NULL), CURLE_OK, 401);
	/* The session's end is written off the loop (here at once), and its
	 * tabs end once it is: after the batch. */
	assert_false(f->tabs[0].ended);
	ev_flush_deferred(&f->pd.ev);
	assert_true(f->tabs[0].ended);
	assert_true(f->tabs[1].ended);
	assert_int_equal(sess_state(&f->pd.app, f->s->id, time(NULL), &verified), 0);
	assert_int_equal(f->pd.naccts, 0);
	fix_close(f);

	f = fix_open("poll");
	a = attach(f, 0);
	assert_int_equal(a->mode, ACCT_POLL);
	advance(0);
	fake_answer(fake_find(MC_CALL, "Email/get"), 401, "");
	ev_flush_deferred(&f->pd.ev);
	assert_true(f->tabs[0].ended);
	assert_int_equal(sess_state(&f->pd.app, f->s->id, time(NULL), &verified), 0);
	fix_close(f);
}

/* -- the subscription ------------------------------------------------------ */

/* A verified subscription S0 of an earlier run, expiring in an hour, and
 * renewals due two hours before expiry: the renewal check, every
 * push_renew / 4 = 30 min, finds it due. */
static void stored_subscription(struct fix *f)
{
	struct store_push_row row = {
		.account = f->s->account, .mode = STORE_PUSH_SUBSCRIPTION,
		.sub_id = "S0", .token_hash = HASH0,
		.expires = (long long)time(NULL) + 3600,
	};

	f->pd.app.cfg.push_renew = 7200;
	assert_int_equal(store_push_put(f->pd.app.store, &row), 0);
}

/* Answers the first PushSubscription/get: S0 is ours and held. */
static void list_holds_s0(struct fix *f)
{
	char dev[APP_KEY_HEX + 1], list[512];

	app_key(&f->pd.app, "device", "pushd", dev);
	snprintf(list, sizeof(list), GET_ANSWER("[{\"id\":\"S0\","
	    "\"deviceClientId\":\"%s\",\"verificationCode\":\"V0\"}]"), dev);
	fake_answer(fake_find(MC_CALL, "PushSubscription/get"), 200, list);
}

/* The stream opens, no subscription is there, S1 is created: the token
 * in its callback URL into token. */
static void created_s1(struct fix *f, char token[64])
{
	const char *json, *tok;

	stream_up(f, "e1");
	fake_answer(fake_find(MC_CALL, "PushSubscription/get"), 200,
	    GET_ANSWER("[]"));
	json = fake_find(MC_CALL, "PushSubscription/set")->json;
	tok = strstr(json, "/api/push/") + 10;
	snprintf(token, 64, "%.*s", (int)strcspn(tok, "\""), tok);
	fake_answer(fake_find(MC_CALL, "PushSubscription/set"), 200,
	    SET_ANSWER("{\"created\":{\"c\":{\"id\":\"S1\"}}}"));
}

#define VERIFICATION "{\"@type\":\"PushVerification\"," \
	"\"pushSubscriptionId\":\"S1\",\"verificationCode\":\"V1\"}"

/* Created, then not verified in time: it is destroyed, and the event
 * stream, in charge all along, goes on. Verified instead: it takes over,
 * and the stream closes after the grace. */
static void subscription_not_verified_stream_goes_on(void **state)
{
	struct fix *f = fix_open("auto");
	struct acct *a = attach(f, 0);

	assert_int_equal(a->mode, ACCT_RELAY);
	stream_up(f, "e1");
	fake_answer(fake_find(MC_CALL, "PushSubscription/get"), 200,
	    GET_ANSWER("[]"));
	assert_non_null(strstr(fake_find(MC_CALL, "PushSubscription/set")->json,
	    "\"url\":\"https://push.example.test/api/push/"));
	fake_answer(fake_find(MC_CALL, "PushSubscription/set"), 200,
	    SET_ANSWER("{\"created\":{\"c\":{\"id\":\"S1\"}}}"));
	assert_int_equal(a->sub->state, SUB_PENDING);
	advance(10000);                     /* push_verify_timeout */
	assert_non_null(fake_find(MC_CALL, "\"destroy\":[\"S1\"]"));
	fake_answer(fake_find(MC_CALL, "\"destroy\":[\"S1\"]"), 200,
	    SET_ANSWER("{\"destroyed\":[\"S1\"]}"));
	assert_null(a->sub);                /* its state went with it */
	assert_int_equal(a->mode, ACCT_RELAY);
	fake_bytes(fake_find(MC_STREAM, NULL), CHANGE("e2"), 200);
	assert_int_equal(f->tabs[0].frames, 2);
	fix_close(f);
}

/* The PushVerification arrives: the code goes back, the subscription is
 * in charge, the stream closes after the grace, a StateChange reaches the
 * tabs. */
static void subscription_verified_takes_over(void **state)
{
	struct fix *f = fix_open("auto");
	struct acct *a = attach(f, 0);
	char hash[ACCT_TOKEN_HEX + 1];
	char token[64];
	const char *change = "{\"@type\":\"StateChange\",\"changed\":"
	    "{\"A1\":{\"Email\":\"e9\"}}}";
	const char *verification = VERIFICATION;

	created_s1(f, token);
	sub_token_hash(token, hash);
	assert_string_equal(a->sub->token_hash, hash);    /* only the hash kept */
	assert_int_equal(tc_callback(&f->pd, token, change), 403); /* not verified yet */
	assert_int_equal(tc_callback(&f->pd, token, verification), 202);
	fake_answer(fake_find(MC_CALL, "\"verificationCode\":\"V1\""), 200,
	    SET_ANSWER("{\"updated\":{\"S1\":null}}"));
	assert_int_equal(a->mode, ACCT_SUBSCRIPTION);
	assert_non_null(a->relay);
	advance(3000);                      /* the grace */
	assert_null(a->relay);
	assert_int_equal(fake_live(MC_STREAM, NULL), 0);
	assert_int_equal(tc_callback(&f->pd, token, change), 202);
	assert_int_equal(f->tabs[0].frames, 2);
	assert_non_null(strstr(f->tabs[0].last, "\"e9\""));
	fix_close(f);
}

/* A callback that reached another node, passed on to the holder (bus.c):
 * taken as if it had come here, but only with the hash of this
 * subscription's token. */
static void passed_on_callback_taken(void **state)
{
	struct fix *f = fix_open("auto");
	struct acct *a = attach(f, 0);
	char hash[ACCT_TOKEN_HEX + 1], token[64], text[512];
	json_object *o;

	created_s1(f, token);
	sub_token_hash(token, hash);
	/* Another hash: nothing is taken. */
	o = json_tokener_parse("{\"a\":\"k\",\"h\":\"00\",\"b\":"
	    VERIFICATION "}");
	callback_passed(a, o);
	json_object_put(o);
	assert_null(fake_find(MC_CALL, "\"verificationCode\":\"V1\""));
	snprintf(text, sizeof(text), "{\"a\":\"k\",\"h\":\"%s\",\"b\":%s}",
	    hash, VERIFICATION);
	o = json_tokener_parse(text);
	callback_passed(a, o);
	json_object_put(o);
	fake_answer(fake_find(MC_CALL, "\"verificationCode\":\"V1\""), 200,
	    SET_ANSWER("{\"updated\":{\"S1\":null}}"));
	assert_int_equal(a->mode, ACCT_SUBSCRIPTION);
	snprintf(text, sizeof(text), "{\"a\":\"k\",\"h\":\"%s\",\"b\":"
	    "{\"@type\":\"StateChange\",\"changed\":"
	    "{\"A1\":{\"Email\":\"e9\"}}}}", hash);
	o = json_tokener_parse(text);
	callback_passed(a, o);
	json_object_put(o);
	assert_int_equal(f->tabs[0].frames, 2);
	assert_non_null(strstr(f->tabs[0].last, "\"e9\""));
	fix_close(f);
}

/* A verified subscription from an earlier run is in charge at once; its
 * renewal refused (notUpdated: the server no longer has it), the stream
 * takes over without a gap and a new subscription is made. */
static void renewal_refused_new_subscription(void **state)
{
	struct fix *f = fix_open("auto");
	struct acct *a;

	stored_subscription(f);
	a = attach(f, 0);
	assert_int_equal(a->mode, ACCT_SUBSCRIPTION);
	assert_null(fake_find(MC_STREAM, NULL));
	/* The server lists S0 under another device: it is not ours any
	 * more, so the stream takes over and a new one is made; S7, nobody's,
	 * is never touched. */
	fake_answer(fake_find(MC_CALL, "PushSubscription/get"), 200,
	    GET_ANSWER("[{\"id\":\"S0\",\"deviceClientId\":\"x\","
	    "\"verificationCode\":\"V0\"},{\"id\":\"S7\"}]"));
	assert_int_equal(a->mode, ACCT_RELAY);
	assert_non_null(fake_find(MC_STREAM, NULL));
	assert_non_null(fake_find(MC_CALL, "\"create\""));
	/* Quoted: the call also carries random tokens, which may hold "S7". */
	assert_null(strstr(fake_find(MC_CALL, "\"create\"")->json, "\"S7\""));
	fix_close(f);

	f = fix_open("auto");
	stored_subscription(f);
	a = attach(f, 0);
	list_holds_s0(f);
	assert_int_equal(a->mode, ACCT_SUBSCRIPTION);
	assert_null(fake_find(MC_CALL, "PushSubscription"));
	advance(1800 * 1000);               /* push_renew / 4 */
	fake_answer(fake_find(MC_CALL, "\"expires\""), 200,
	    SET_ANSWER("{\"notUpdated\":{\"S0\":{\"type\":\"notFound\"}}}"));
	assert_int_equal(a->mode, ACCT_RELAY);
	assert_non_null(fake_find(MC_STREAM, NULL));
	assert_false(f->tabs[0].ended);
	fake_answer(fake_find(MC_CALL, "PushSubscription/get"), 200,
	    GET_ANSWER("[]"));
	assert_non_null(fake_find(MC_CALL, "\"create\""));
	fix_close(f);
}

/* The last tab closes: a pending subscription keeps the account for
 * push_idle, then destroys it, and the account ends. */
static void idle_subscription_destroyed(void **state)
{
	struct fix *f = fix_open("auto");
	struct acct *a;
	char token[64];

	f->pd.app.cfg.push_verify_timeout = 3600;
	a = attach(f, 0);
	created_s1(f, token);
	ftab_end(&f->tabs[0].at);
	assert_int_equal(f->pd.naccts, 1);
	assert_null(a->relay);
	assert_null(a->poll);
	advance(30000);                     /* push_idle */
	fake_answer(fake_find(MC_CALL, "\"destroy\":[\"S1\"]"), 200,
	    SET_ANSWER("{\"destroyed\":[\"S1\"]}"));
	assert_int_equal(f->pd.naccts, 0);
	fix_close(f);
}

/* A tab back after idle leaves the renewal check where it was: a tab that
 * comes and goes more often than the check must not put it off. */
static void tab_back_keeps_renewal_check(void **state)
{
	struct fix *f = fix_open("auto");
	struct acct *a;

	stored_subscription(f);
	a = attach(f, 0);
	list_holds_s0(f);
	assert_int_equal(a->mode, ACCT_SUBSCRIPTION);
	advance(1000 * 1000);
	ftab_end(&f->tabs[0].at);
	assert_int_equal(f->pd.naccts, 1);          /* kept for push_idle */
	f->pd.app.cfg.push_idle = 3600;
	assert_ptr_equal(attach(f, 0), a);
	assert_int_equal(a->mode, ACCT_SUBSCRIPTION);
	advance(800 * 1000);                        /* 30 min from the first */
	assert_non_null(fake_find(MC_CALL, "\"expires\""));
	fix_close(f);
}

/* The verification's answer arrives after its deadline has passed: the
 * subscription is dropped, and the event stream stays in charge. */
static void late_verification_is_dropped(void **state)
{
	struct fix *f = fix_open("auto");
	struct acct *a = attach(f, 0);
	const char *verification = VERIFICATION;
	char token[64];

	created_s1(f, token);
	assert_int_equal(tc_callback(&f->pd, token, verification), 202);
	advance(10000);                     /* the deadline, the call still out */
	fake_answer(fake_find(MC_CALL, "\"verificationCode\":\"V1\""), 200,
	    SET_ANSWER("{\"updated\":{\"S1\":null}}"));
	assert_int_equal(a->mode, ACCT_RELAY);
	fake_answer(fake_find(MC_CALL, "\"destroy\":[\"S1\"]"), 200,
	    SET_ANSWER("{\"destroyed\":[\"S1\"]}"));
	assert_null(a->sub);
	advance(3000);
	assert_non_null(a->relay);
	fix_close(f);
}

/* A call that cannot be made counts as failed; an idle subscription
 * that cannot be destroyed keeps its row (the next run uses it or
 * destroys it), and the account ends. */
static void destroy_that_cannot_be_made_keeps_row(void **state)
{
	struct fix *f = fix_open("auto");
	long long expires;
	char *id = NULL, hash[ACCT_TOKEN_HEX + 1];

	stored_subscription(f);
	attach(f, 0);
	list_holds_s0(f);
	ftab_end(&f->tabs[0].at);
	fake_refuse = 1;
	advance(30000);                     /* push_idle */
	assert_int_equal(f->pd.naccts, 0);
	assert_int_equal(store_push_held(f->pd.app.store, f->s->account, &id,
	    hash, ACCT_TOKEN_HEX, &expires), 1);
	assert_string_equal(id, "S0");
	free(id);
	fix_close(f);
}

/* -- the fan-out ----------------------------------------------------------- */

/* During a fan-out (inside libcurl's callback), a tab whose queue is
 * full ends; the tabs after it still get the event. When every tab ends
 * so, the account ends with them, its stream stopped from the loop, not
 * from inside the callback. */
static void tab_overflow_during_fanout(void **state)
{
	struct fix *f = fix_open("relay");
	struct acct *a = attach(f, 0);

	attach(f, 1);
	attach(f, 2);
	stream_up(f, "e1");
	f->tabs[1].overflow = 1;
	fake_bytes(fake_find(MC_STREAM, NULL), CHANGE("e2"), 200);
	assert_int_equal(f->tabs[0].frames, 2);
	assert_true(f->tabs[1].ended);
	assert_int_equal(f->tabs[2].frames, 2);
	assert_int_equal(a->ntabs, 2);
	f->tabs[0].overflow = f->tabs[2].overflow = 1;
	fake_bytes(fake_find(MC_STREAM, NULL), CHANGE("e3"), 200);
	assert_true(f->tabs[0].ended && f->tabs[2].ended);
	/* The stream was ended by libcurl (the short write), not cancelled
	 * from inside its callback: the fake's mc_cancel fails on that. */
	assert_int_equal(f->pd.naccts, 0);
	fix_close(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stream_refused_three_times_polls_and_back),
		cmocka_unit_test(baseline_told_but_not_to_closeafter),
		cmocka_unit_test(no_stream_polls_for_good),
		cmocka_unit_test(unauthorized_ends_sessions),
		cmocka_unit_test(subscription_not_verified_stream_goes_on),
		cmocka_unit_test(subscription_verified_takes_over),
		cmocka_unit_test(passed_on_callback_taken),
		cmocka_unit_test(renewal_refused_new_subscription),
		cmocka_unit_test(idle_subscription_destroyed),
		cmocka_unit_test(tab_back_keeps_renewal_check),
		cmocka_unit_test(late_verification_is_dropped),
		cmocka_unit_test(destroy_that_cannot_be_made_keeps_row),
		cmocka_unit_test(tab_overflow_during_fanout),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
