#include "cap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seal.h"

/* An address at its cap frees a place only when somebody behind it
 * closes the app, which nobody can foresee: a minute is a fair guess. */
#define ADDRESS_RETRY_S 60

struct cap_key {
	struct cap_key *next;               /* hash chain */
	struct cap_stream *first, *last;    /* a session's streams */
	unsigned n;
	uint32_t h;                         /* hash(name): its chain */
	char name[CAP_KEY_MAX + 1];
};

static int table_init(struct cap_table *t)
{
	t->nb = CAP_BUCKETS_MIN;
	t->n = 0;
	t->b = calloc(t->nb, sizeof(*t->b));
	return t->b ? 0 : -1;
}

static void table_free(struct cap_table *t)
{
	struct cap_key *k, *next;
	unsigned i;

	for (i = 0; t->b && i < t->nb; i++)
		for (k = t->b[i]; k; k = next) {
			next = k->next;
			free(k);
		}
	free(t->b);
	t->b = NULL;
	t->n = 0;
}

int cap_init(struct cap *c, unsigned per_sess, unsigned per_addr,
    uint64_t replace_after_ms)
{
	memset(c, 0, sizeof(*c));
	c->per_sess = per_sess;
	c->per_addr = per_addr;
	c->replace_after_ms = replace_after_ms;
	if (seal_random(c->seed, sizeof(c->seed)) == -1 ||
	    table_init(&c->sess) == -1 || table_init(&c->addr) == -1) {
		cap_free(c);
		return -1;
	}
	return 0;
}

void cap_free(struct cap *c)
{
	table_free(&c->sess);
	table_free(&c->addr);
	c->nkeys = 0;
	seal_wipe(c->seed, sizeof(c->seed));
}

/* A keyed hash: an address or id that a client picks cannot be made to
 * share a chain with many others. */
static uint32_t hash(const struct cap *c, const char *name)
{
	unsigned char mac[SEAL_HASH_LEN];
	uint32_t h;

	if (seal_hmac(c->seed, sizeof(c->seed), name, strlen(name), mac) == -1)
		return 0;
	memcpy(&h, mac, sizeof(h));
	return h;
}

static struct cap_key **chain(const struct cap_table *t, uint32_t h)
{
	return &t->b[h & (t->nb - 1)];
}

static struct cap_key *find(const struct cap_table *t, uint32_t h,
    const char *name)
{
	struct cap_key *k;

	if (t->b == NULL)               /* never set up, or freed */
		return NULL;
	for (k = *chain(t, h); k; k = k->next)
		if (k->h == h && !strcmp(k->name, name))
			return k;
	return NULL;
}

/* Twice the chains once there are more keys than CAP_LOAD a chain, so
 * that a lookup stays a short walk however many streams are held. Out of
 * memory it stays as it is, slower and still right. */
static void grow(struct cap_table *t)
{
	struct cap_key **old = t->b, *k, *next;
	unsigned i, nb = t->nb;

	if (t->n <= CAP_LOAD * nb || nb > UINT32_MAX / 4)
		return;
	if ((t->b = calloc(2 * (size_t)nb, sizeof(*t->b))) == NULL) {
		t->b = old;
		return;
	}
	t->nb = 2 * nb;
	for (i = 0; i < nb; i++)
		for (k = old[i]; k; k = next) {
			next = k->next;
			k->next = *chain(t, k->h);
			*chain(t, k->h) = k;
		}
	free(old);
}

/* The key named name (cut to CAP_KEY_MAX), made when missing: NULL out
 * of memory. */
static struct cap_key *hold(struct cap *c, struct cap_table *t, const char *name)
{
	char cut[CAP_KEY_MAX + 1];
	struct cap_key *k, **pp;
	uint32_t h;

	snprintf(cut, sizeof(cut), "%s", name);
	h = hash(c, cut);
	if ((k = find(t, h, cut)) != NULL)
		return k;
	if (t->b == NULL || (k = calloc(1, sizeof(*k))) == NULL)
		return NULL;
	memcpy(k->name, cut, sizeof(cut));
	k->h = h;
	pp = chain(t, h);
	k->next = *pp;
	*pp = k;
	t->n++;
	c->nkeys++;
	grow(t);
	return k;
}

static void release(struct cap *c, struct cap_table *t, struct cap_key *k)
{
	struct cap_key **pp;

	if (--k->n)
		return;
	for (pp = chain(t, k->h); *pp; pp = &(*pp)->next)
		if (*pp == k) {
			*pp = k->next;
			break;
		}
	free(k);
	t->n--;
	c->nkeys--;
}

/* The key named name (cut to CAP_KEY_MAX), or NULL. */
static const struct cap_key *lookup(const struct cap *c,
    const struct cap_table *t, const char *name)
{
	char cut[CAP_KEY_MAX + 1];

	snprintf(cut, sizeof(cut), "%s", name);
	return find(t, hash(c, cut), cut);
}

static unsigned count(const struct cap *c, const struct cap_table *t,
    const char *name)
{
	const struct cap_key *k = lookup(c, t, name);

	return k ? k->n : 0;
}

unsigned cap_session_count(const struct cap *c, const char *sess)
{
	return count(c, &c->sess, sess);
}

unsigned cap_address_count(const struct cap *c, const char *addr)
{
	return count(c, &c->addr, addr);
}

enum cap_verdict cap_admit(const struct cap *c, const char *sess,
    const char *addr, uint64_t now, struct cap_stream **oldest,
    unsigned *retry_s)
{
	const struct cap_key *k = lookup(c, &c->sess, sess);
	struct cap_stream *old = NULL;
	unsigned in_addr;
	uint64_t age, left;

	*oldest = NULL;
	*retry_s = 0;
	if (c->per_sess && k && k->n >= c->per_sess) {
		old = k->first;
		age = now > old->since ? now - old->since : 0;
		if (age < c->replace_after_ms) {
			left = c->replace_after_ms - age;
			*retry_s = (unsigned)((left + 999) / 1000);
			return CAP_SESSION_FULL;
		}
	}
	/* The stream replaced frees a place at this address only when it
	 * came from it too. */
	in_addr = cap_address_count(c, addr);
	if (old && old->addr && !strncmp(old->addr->name, addr, CAP_KEY_MAX))
		in_addr--;
	if (c->per_addr && in_addr >= c->per_addr) {
		*retry_s = ADDRESS_RETRY_S;
		return CAP_ADDRESS_FULL;
	}
	*oldest = old;
	return old ? CAP_REPLACE : CAP_OPEN;
}

int cap_add(struct cap *c, struct cap_stream *s, const char *sess,
    const char *addr, uint64_t now)
{
	struct cap_key *ks, *ka;

	memset(s, 0, sizeof(*s));
	if ((ks = hold(c, &c->sess, sess)) == NULL)
		return -1;
	if ((ka = hold(c, &c->addr, addr)) == NULL) {
		ks->n++;
		release(c, &c->sess, ks);
		return -1;
	}
	ks->n++;
	ka->n++;
	s->sess = ks;
	s->addr = ka;
	s->since = now;
	s->prev = ks->last;
	if (ks->last)
		ks->last->next = s;
	else
		ks->first = s;
	ks->last = s;
	return 0;
}

void cap_remove(struct cap *c, struct cap_stream *s)
{
	struct cap_key *ks = s->sess;

	if (ks == NULL)
		return;
	if (s->prev)
		s->prev->next = s->next;
	else
		ks->first = s->next;
	if (s->next)
		s->next->prev = s->prev;
	else
		ks->last = s->prev;
	release(c, &c->sess, ks);
	release(c, &c->addr, s->addr);
	memset(s, 0, sizeof(*s));
}
