/* events: an account's states, the ring of its recent events, and their
 * way to its tabs (the fan-out, and the replay after a Last-Event-ID).
 * Every channel reports here. (Lifetime: pushd.h.) */
#include "acct.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "js.h"
#include "pushd.h"

const char *const acct_type_names[ACCT_NTYPES] = { "Email", "Mailbox", "Thread" };

unsigned acct_type_bit(const char *name, size_t n)
{
	unsigned i;

	for (i = 0; i < ACCT_NTYPES; i++)
		if (strlen(acct_type_names[i]) == n &&
		    !memcmp(acct_type_names[i], name, n))
			return 1u << i;
	return 0;
}

static void ring_clear(struct acct_event *e)
{
	unsigned i;

	for (i = 0; i < ACCT_NTYPES; i++) {
		free(e->states[i]);
		e->states[i] = NULL;
	}
}

/* Adds an event to the ring (taking the strings) and makes it the newest. */
struct acct_event *acct_ring_push(struct acct *a, unsigned mask)
{
	struct acct_event *e = &a->ring[a->ring_head];

	ring_clear(e);
	e->id = pushd_next_id(a->pd);
	e->mask = (uint8_t)mask;
	e->baseline = 0;
	a->ring_head = (a->ring_head + 1) % ACCT_RING;
	if (a->ring_n < ACCT_RING)
		a->ring_n++;
	a->last_id = e->id;
	return e;
}

void acct_mark(struct acct *a)
{
	acct_ring_push(a, 0);
}

void acct_events_free(struct acct *a)
{
	unsigned i;

	for (i = 0; i < ACCT_RING; i++)
		ring_clear(&a->ring[i]);
	for (i = 0; i < ACCT_NTYPES; i++) {
		free(a->states[i]);
		a->states[i] = NULL;
	}
}

/* The states a StateChange's "changed" object names for the account: the
 * mask of types taken into states (strdup'd). */
unsigned acct_changed_states(const struct acct *a, json_object *changed,
    char *states[ACCT_NTYPES])
{
	json_object *mine = changed ? js_obj(changed, a->jmap_id) : NULL;
	const char *st;
	unsigned i, got = 0;

	for (i = 0; mine && i < ACCT_NTYPES; i++)
		if ((st = js_str(mine, acct_type_names[i])) != NULL &&
		    (states[i] = strdup(st)) != NULL)
			got |= 1u << i;
	return got;
}

/* The frame of event e for a tab that wants types: its length, 0 when
 * nothing in e is for the tab, -1 on error. */
static int event_frame(const struct acct *a, const struct acct_event *e,
    unsigned types, struct buf *out)
{
	json_object *o, *changed, *st;
	unsigned i, mask = e->mask & types;
	int rc;

	if (mask == 0)
		return 0;
	o = json_object_new_object();
	changed = json_object_new_object();
	st = json_object_new_object();
	for (i = 0; i < ACCT_NTYPES; i++)
		if (mask & (1u << i))
			json_object_object_add(st, acct_type_names[i],
			    json_object_new_string(e->states[i]));
	json_object_object_add(changed, a->jmap_id, st);
	json_object_object_add(o, "@type", json_object_new_string("StateChange"));
	json_object_object_add(o, "changed", changed);
	buf_reset(out);
	rc = buf_printf(out, "event: state\nid: %llu\ndata: %s\n\n",
	    (unsigned long long)e->id,
	    json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return rc == -1 ? -1 : (int)out->len;
}

/* Whether t is told e. Not the baseline to a tab that ends at its first
 * event: it would come back, find its account gone with it, and meet a
 * new baseline at once, again and again. */
static int tab_told(const struct acct_tab *t, const struct acct_event *e)
{
	return !t->dead && !(e->baseline && t->closeafter);
}

/* Sends e to t; a closeafter=state tab then ends. */
static void event_to_tab(struct acct *a, const struct acct_event *e,
    struct acct_tab *t, struct buf *frame)
{
	if (!tab_told(t, e) || event_frame(a, e, t->types, frame) <= 0)
		return;
	if (t->ops->send(t, frame->data, frame->len) == 0 && t->closeafter)
		t->ops->end(t);
}

void acct_emit(struct acct *a, const struct acct_event *e)
{
	struct buf full, one;
	struct acct_tab *t, *next;

	buf_init(&full, 64 * 1024);
	buf_init(&one, 64 * 1024);
	/* Most tabs want everything: that frame is made once. */
	event_frame(a, e, ACCT_ALL, &full);
	for (t = a->tabs; t; t = next) {
		next = t->next;
		if (!tab_told(t, e))
			continue;
		if ((t->types & e->mask) == e->mask) {
			if (t->ops->send(t, full.data, full.len) == 0 && t->closeafter)
				t->ops->end(t);
		} else
			event_to_tab(a, e, t, &one);
	}
	buf_free(&full);
	buf_free(&one);
}

static int parse_id(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (s == NULL || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

void acct_replay(struct acct *a, struct acct_tab *t, const char *last_event_id)
{
	struct buf frame;
	uint64_t last;
	unsigned i, k, start = (a->ring_head + ACCT_RING - a->ring_n) % ACCT_RING;
	char resync[96];
	int n;

	if (last_event_id == NULL || *last_event_id == '\0')
		return;
	/* Held in the ring: everything after it can be told. */
	i = a->ring_n;
	if (parse_id(last_event_id, &last) == 0)
		for (i = 0; i < a->ring_n; i++)
			if (a->ring[(start + i) % ACCT_RING].id == last)
				break;
	if (i == a->ring_n) {
		n = snprintf(resync, sizeof(resync),
		    "event: resync\nid: %llu\ndata: {}\n\n",
		    (unsigned long long)a->last_id);
		t->ops->send(t, resync, (size_t)n);
		return;
	}
	buf_init(&frame, 64 * 1024);
	for (k = i + 1; k < a->ring_n && !t->dead; k++)
		event_to_tab(a, &a->ring[(start + k) % ACCT_RING], t, &frame);
	buf_free(&frame);
}

void acct_resync(struct acct *a)
{
	struct acct_tab *t, *next;
	char frame[96];
	int n;

	acct_mark(a);
	n = snprintf(frame, sizeof(frame), "event: resync\nid: %llu\ndata: {}\n\n",
	    (unsigned long long)a->last_id);
	for (t = a->tabs; t; t = next) {
		next = t->next;
		if (!t->dead)
			t->ops->send(t, frame, (size_t)n);
	}
}
