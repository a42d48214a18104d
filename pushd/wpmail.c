#include "wpmail.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <json-c/json.h>

#include "acct.h"
#include "js.h"
#include "log.h"
#include "pushd.h"
#include "settings.h"
#include "store.h"
#include "wpsend.h"
#include "wpwatch.h"

/* A lookup's answer: 50 new mails' heads and the mailboxes fit well. */
#define LOOK_RESP_MAX (1024 * 1024)
#define LOOK_MAX_CHANGES 50
/* A name, address, subject or folder name in a notification, in bytes:
 * what one shows, and four such fields escaped stay far below a push's
 * 3993 bytes (json-c writes a control character as 6). */
#define FIELD_MAX 150

struct wp_mail {
	struct acct *a;
	struct pushd *pd;
	struct mc_job job;             /* the lookup in flight */
	struct buf resp;
	char *since;                   /* the state to look from, or NULL */
	uint8_t again;                 /* a change came while one ran */
	struct ev_timer look;          /* 0 ms: the lookup starts */
	struct ev_timer hold;          /* the window ends: the push goes */
	uint64_t last_sent;            /* ev ms of the account's last push */
	unsigned count;                /* new mails gathered since */
	json_object *newest;           /* the newest one's payload */
};

static void look_start(struct wp_mail *m);

static int mail_alive(const struct wp_mail *m)
{
	return !m->a->dead && m->a->wpm == m;
}

/* -- reading an answer (pure) ---------------------------------------------- */

/* Whether mailbox mb is one that notifies: among folders, or the Inbox
 * when folders is NULL. */
static int chosen(json_object *mb, json_object *folders)
{
	const char *id = js_str(mb, "id"), *role = js_str(mb, "role"), *f;
	size_t i;

	if (id == NULL)
		return 0;
	if (folders == NULL)
		return role && !strcmp(role, "inbox");
	for (i = 0; i < json_object_array_length(folders); i++)
		if ((f = json_object_get_string(json_object_array_get_idx(folders,
		    i))) && !strcmp(id, f))
			return 1;
	return 0;
}

/* The first mailbox that notifies and holds email, or NULL. */
static json_object *notifying(json_object *email, json_object *mailboxes,
    json_object *folders)
{
	json_object *list, *mb, *ids, *v;
	size_t i;

	if (!mailboxes || !json_object_object_get_ex(mailboxes, "list", &list) ||
	    !json_object_is_type(list, json_type_array) ||
	    !json_object_object_get_ex(email, "mailboxIds", &ids))
		return NULL;
	for (i = 0; i < json_object_array_length(list); i++) {
		mb = json_object_array_get_idx(list, i);
		if (chosen(mb, folders) &&
		    json_object_object_get_ex(ids, js_str(mb, "id"), &v) &&
		    json_object_get_boolean(v))
			return mb;
	}
	return NULL;
}

/* The Inbox among the mailboxes (its unread count is the badge), or
 * NULL. */
static json_object *inbox_of(json_object *mailboxes)
{
	json_object *list, *mb;
	const char *role;
	size_t i;

	if (!mailboxes || !json_object_object_get_ex(mailboxes, "list", &list) ||
	    !json_object_is_type(list, json_type_array))
		return NULL;
	for (i = 0; i < json_object_array_length(list); i++) {
		mb = json_object_array_get_idx(list, i);
		if ((role = js_str(mb, "role")) && !strcmp(role, "inbox"))
			return mb;
	}
	return NULL;
}

static int has_keyword(json_object *email, const char *kw)
{
	json_object *k, *v;

	return json_object_object_get_ex(email, "keywords", &k) &&
	    json_object_object_get_ex(k, kw, &v) && json_object_get_boolean(v);
}

/* Whether email is from own: a person's own mail (to themselves, or a
 * list they are on) is not news. */
static int from_own(json_object *email, const char *own)
{
	json_object *list;
	const char *a;
	size_t i;

	if (own == NULL || !json_object_object_get_ex(email, "from", &list) ||
	    !json_object_is_type(list, json_type_array))
		return 0;
	for (i = 0; i < json_object_array_length(list); i++)
		if ((a = js_str(json_object_array_get_idx(list, i), "email")) &&
		    !strcasecmp(a, own))
			return 1;
	return 0;
}

/* A string cut to at most max bytes on a UTF-8 boundary. */
static json_object *cut(const char *s, size_t max)
{
	size_t n = strlen(s);

	if (n <= max)
		return json_object_new_string(s);
	while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80)
		max--;
	return json_object_new_string_len(s, (int)max);
}

/* The notification of email, found in mailbox mb. */
static json_object *payload_of(json_object *email, json_object *mb)
{
	json_object *p = json_object_new_object(), *from = json_object_new_object();
	json_object *list, *first = NULL;
	const char *v;

	if (json_object_object_get_ex(email, "from", &list) &&
	    json_object_is_type(list, json_type_array) &&
	    json_object_array_length(list) > 0)
		first = json_object_array_get_idx(list, 0);
	json_object_object_add(from, "name", cut((v = js_str(first, "name")) ? v : "", FIELD_MAX));
	json_object_object_add(from, "email", cut((v = js_str(first, "email")) ? v : "", FIELD_MAX));
	json_object_object_add(p, "v", json_object_new_int(1));
	json_object_object_add(p, "from", from);
	json_object_object_add(p, "subject", cut((v = js_str(email, "subject")) ? v : "", FIELD_MAX));
	json_object_object_add(p, "folder", cut((v = js_str(mb, "name")) ? v : "", FIELD_MAX));
	json_object_object_add(p, "role", (v = js_str(mb, "role")) ?
	    json_object_new_string(v) : NULL);
	json_object_object_add(p, "mailboxId", json_object_new_string(js_str(mb, "id")));
	json_object_object_add(p, "emailId", json_object_new_string((v = js_str(email, "id")) ? v : ""));
	json_object_object_add(p, "threadId", json_object_new_string((v = js_str(email, "threadId")) ? v : ""));
	return p;
}

/* The unread count of the Inbox, or NULL when it is not given. */
static json_object *unread_of(json_object *inbox)
{
	json_object *v;

	return json_object_object_get_ex(inbox, "unreadEmails", &v) &&
	    json_object_is_type(v, json_type_int) ?
	    json_object_new_int64(json_object_get_int64(v)) : NULL;
}

int wp_mail_read(json_object *root, json_object *folders, const char *own,
    struct wp_found *f)
{
	json_object *changes = js_response(root, "c", "Email/changes");
	json_object *got = js_response(root, "g", "Email/get");
	json_object *mailboxes = js_response(root, "m", "Mailbox/get");
	json_object *list, *e, *mb, *v;
	const char *st, *when, *newest_when = NULL;
	size_t i;

	memset(f, 0, sizeof(*f));
	if (changes == NULL || (st = js_str(changes, "newState")) == NULL)
		return -1;
	f->newstate = strdup(st);
	f->more = json_object_object_get_ex(changes, "hasMoreChanges", &v) &&
	    json_object_get_boolean(v);
	if (got == NULL || !json_object_object_get_ex(got, "list", &list) ||
	    !json_object_is_type(list, json_type_array))
		return 0;
	for (i = 0; i < json_object_array_length(list); i++) {
		e = json_object_array_get_idx(list, i);
		if (has_keyword(e, "$seen") || has_keyword(e, "$draft") ||
		    from_own(e, own) ||
		    (mb = notifying(e, mailboxes, folders)) == NULL)
			continue;
		f->count++;
		when = js_str(e, "receivedAt");
		if (f->payload == NULL || (when && newest_when &&
		    strcmp(when, newest_when) > 0)) {
			json_object_put(f->payload);
			f->payload = payload_of(e, mb);
			newest_when = when;
		}
	}
	if (f->payload)
		json_object_object_add(f->payload, "unread",
		    unread_of(inbox_of(mailboxes)));
	return 0;
}

/* -- the lookup ------------------------------------------------------------ */

static json_object *call(const char *name, json_object *args, const char *tag)
{
	json_object *c = json_object_new_array();

	json_object_array_add(c, json_object_new_string(name));
	json_object_array_add(c, args);
	json_object_array_add(c, json_object_new_string(tag));
	return c;
}

static json_object *strings(const char *const *v, size_t n)
{
	json_object *a = json_object_new_array();
	size_t i;

	for (i = 0; i < n; i++)
		json_object_array_add(a, json_object_new_string(v[i]));
	return a;
}

/* The lookup: what Email/changes names as created since the state, its
 * heads, and the mailboxes (the Inbox's id, name and unread count). */
static char *look_body(const struct acct *a, const char *since)
{
	static const char *const using[] = { "urn:ietf:params:jmap:core",
	    "urn:ietf:params:jmap:mail" };
	static const char *const props[] = { "id", "threadId", "mailboxIds",
	    "keywords", "from", "subject", "receivedAt" };
	static const char *const mprops[] = { "id", "name", "role",
	    "unreadEmails" };
	json_object *o = json_object_new_object(), *calls, *args, *ids;
	char *out;

	json_object_object_add(o, "using", strings(using, 2));
	calls = json_object_new_array();
	args = json_object_new_object();
	json_object_object_add(args, "accountId", json_object_new_string(a->jmap_id));
	json_object_object_add(args, "sinceState", json_object_new_string(since));
	json_object_object_add(args, "maxChanges", json_object_new_int(LOOK_MAX_CHANGES));
	json_object_array_add(calls, call("Email/changes", args, "c"));
	args = json_object_new_object();
	ids = json_object_new_object();
	json_object_object_add(ids, "resultOf", json_object_new_string("c"));
	json_object_object_add(ids, "name", json_object_new_string("Email/changes"));
	json_object_object_add(ids, "path", json_object_new_string("/created"));
	json_object_object_add(args, "accountId", json_object_new_string(a->jmap_id));
	json_object_object_add(args, "#ids", ids);
	json_object_object_add(args, "properties", strings(props, 7));
	json_object_array_add(calls, call("Email/get", args, "g"));
	args = json_object_new_object();
	json_object_object_add(args, "accountId", json_object_new_string(a->jmap_id));
	json_object_object_add(args, "properties", strings(mprops, 4));
	json_object_array_add(calls, call("Mailbox/get", args, "m"));
	json_object_object_add(o, "methodCalls", calls);
	out = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return out;
}

/* The push of what was gathered, to each subscription of the account
 * whose browser has no tab in view. */
static void mail_flush(struct wp_mail *m)
{
	json_object *p = m->newest;
	const char *text;

	m->newest = NULL;
	json_object_object_add(p, "count", json_object_new_int((int)m->count));
	m->count = 0;
	m->last_sent = m->pd->ev.now;
	text = json_object_to_json_string_ext(p, JSON_C_TO_STRING_PLAIN);
	if (text)
		wp_send_account(m->a, text);
	json_object_put(p);
}

static void mail_on_hold(struct ev *ev, struct ev_timer *t)
{
	struct wp_mail *m = container_of(t, struct wp_mail, hold);

	if (m->newest)
		mail_flush(m);
}

/* New mail gathered: it goes at once when the window since the last push
 * has passed, else when it does. */
static void mail_gather(struct wp_mail *m, json_object *payload, unsigned n)
{
	uint64_t window = (uint64_t)m->pd->app.cfg.webpush_coalesce * 1000;
	uint64_t now = m->pd->ev.now;

	json_object_put(m->newest);
	m->newest = payload;
	m->count += n;
	if (ev_timer_armed(&m->hold))
		return;
	ev_timer_set(&m->pd->ev, &m->hold, m->last_sent == 0 ||
	    now >= m->last_sent + window ? 0 : m->last_sent + window - now);
}

/* Whether the lookup's Email/changes names created mail. */
static int created(json_object *root)
{
	json_object *c = js_response(root, "c", "Email/changes"), *v;

	return c && json_object_object_get_ex(c, "created", &v) &&
	    json_object_is_type(v, json_type_array) &&
	    json_object_array_length(v) > 0;
}

/* The folders the person chose (NULL: the Inbox; the caller puts it). */
static json_object *chosen_folders(struct wp_mail *m)
{
	json_object *o, *v, *out = NULL;

	if (settings_load(&m->pd->app, m->a->key, &o) == -1)
		return NULL;
	if (json_object_object_get_ex(o, "notifyFolders", &v) &&
	    json_object_is_type(v, json_type_array))
		out = json_object_get(v);
	json_object_put(o);
	return out;
}

static void look_done(struct mc_job *job, CURLcode rc, long status)
{
	struct wp_mail *m = container_of(job, struct wp_mail, job);
	json_object *root = NULL, *folders;
	struct wp_found f = { 0 };
	char *since;

	if (!mail_alive(m))
		return;
	if (rc == CURLE_OK && status == 200 && m->resp.len &&
	    (root = js_parse(m->resp.data, m->resp.len)) != NULL) {
		/* The settings are read only when mail was created (most
		 * changes are flags and moves). */
		folders = created(root) ? chosen_folders(m) : NULL;
		wp_mail_read(root, folders, acct_user(m->a), &f);
		json_object_put(folders);
	}
	json_object_put(root);
	buf_free(&m->resp);
	since = m->since;
	/* Without a new state (an error, cannotCalculateChanges) the next
	 * change looks from its own state before: nothing is sent twice. */
	m->since = f.newstate;
	if (f.payload)
		mail_gather(m, f.payload, f.count);
	else if (rc != CURLE_OK || status != 200)
		log_info("webpush: a new-mail lookup failed (HTTP %ld)", status);
	/* A server that names the same state with more changes would loop. */
	if ((m->again || f.more) && m->since && !(f.more && !m->again &&
	    since && !strcmp(since, m->since)))
		ev_timer_set(&m->pd->ev, &m->look, 0);
	free(since);
	m->again = 0;
}

static void look_start(struct wp_mail *m)
{
	char *body;

	/* Not while this node's lease may have passed on (node.c): the
	 * holder's pushd sends the push. */
	if (m->since == NULL || m->job.easy || !acct_leased(m->a))
		return;
	body = look_body(m->a, m->since);
	m->job.done = look_done;
	buf_reset(&m->resp);
	if (body == NULL || acct_call(m->a, &m->job, body, &m->resp) == -1)
		log_err("webpush: cannot ask for new mail");
	free(body);
}

static void look_on_timer(struct ev *ev, struct ev_timer *t)
{
	look_start(container_of(t, struct wp_mail, look));
}

static struct wp_mail *mail_get(struct acct *a)
{
	struct wp_mail *m = a->wpm;

	if (m == NULL && (m = calloc(1, sizeof(*m))) != NULL) {
		m->a = a;
		m->pd = a->pd;
		ev_timer_init(&m->look, look_on_timer);
		ev_timer_init(&m->hold, mail_on_hold);
		buf_init(&m->resp, LOOK_RESP_MAX);
		a->wpm = m;
	}
	return m;
}

void wp_mail_changed(struct acct *a, const char *since)
{
	struct wp_mail *m;

	if (since == NULL || (m = mail_get(a)) == NULL)
		return;
	if (m->job.easy)
		m->again = 1;
	if (m->since == NULL && (m->since = strdup(since)) == NULL)
		return;
	/* From the loop: this may run inside a libcurl callback (a relayed
	 * event stream's bytes), where no transfer may start. */
	if (!m->job.easy)
		ev_timer_set(&m->pd->ev, &m->look, 0);
}

static void mail_free(void *v)
{
	struct wp_mail *m = v;

	mc_cancel(m->pd, &m->job);
	buf_free(&m->resp);
	free(m->since);
	json_object_put(m->newest);
	free(m);
}

void wp_mail_end(struct acct *a)
{
	struct wp_mail *m = a->wpm;

	if (m == NULL)
		return;
	a->wpm = NULL;
	ev_timer_stop(&m->pd->ev, &m->look);
	ev_timer_stop(&m->pd->ev, &m->hold);
	if (!m->pd->in_curl)
		mc_cancel(m->pd, &m->job);
	ev_defer(&m->pd->ev, mail_free, m);
}
