#include "cap.h"

#include <arpa/inet.h>
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
	char name[CAP_KEY_MAX + 1];
};

int cap_init(struct cap *c, unsigned per_sess, unsigned per_addr,
    uint64_t replace_after_ms)
{
	memset(c, 0, sizeof(*c));
	c->per_sess = per_sess;
	c->per_addr = per_addr;
	c->replace_after_ms = replace_after_ms;
	return seal_random(c->seed, sizeof(c->seed));
}

static void chain_free(struct cap_key **b)
{
	struct cap_key *k, *next;
	unsigned i;

	for (i = 0; i < CAP_BUCKETS; i++)
		for (k = b[i], b[i] = NULL; k; k = next) {
			next = k->next;
			free(k);
		}
}

void cap_free(struct cap *c)
{
	chain_free(c->sess);
	chain_free(c->addr);
	c->nkeys = 0;
	seal_wipe(c->seed, sizeof(c->seed));
}

/* A keyed hash: an address or id that a client picks cannot be made to
 * share a chain with many others. */
static unsigned bucket(const struct cap *c, const char *name)
{
	unsigned char mac[SEAL_HASH_LEN];
	uint32_t h;

	if (seal_hmac(c->seed, sizeof(c->seed), name, strlen(name), mac) == -1)
		return 0;
	memcpy(&h, mac, sizeof(h));
	return h % CAP_BUCKETS;
}

static struct cap_key *find(const struct cap *c, struct cap_key *const *b,
    const char *name)
{
	struct cap_key *k;

	for (k = b[bucket(c, name)]; k; k = k->next)
		if (!strcmp(k->name, name))
			return k;
	return NULL;
}

/* The key named name (cut to CAP_KEY_MAX), made when missing: NULL out
 * of memory. */
static struct cap_key *hold(struct cap *c, struct cap_key **b, const char *name)
{
	char cut[CAP_KEY_MAX + 1];
	struct cap_key **pp, *k;

	snprintf(cut, sizeof(cut), "%s", name);
	if ((k = find(c, b, cut)) != NULL)
		return k;
	if ((k = calloc(1, sizeof(*k))) == NULL)
		return NULL;
	memcpy(k->name, cut, sizeof(cut));
	pp = &b[bucket(c, cut)];
	k->next = *pp;
	*pp = k;
	c->nkeys++;
	return k;
}

static void release(struct cap *c, struct cap_key **b, struct cap_key *k)
{
	struct cap_key **pp;

	if (--k->n)
		return;
	for (pp = &b[bucket(c, k->name)]; *pp; pp = &(*pp)->next)
		if (*pp == k) {
			*pp = k->next;
			break;
		}
	free(k);
	c->nkeys--;
}

static unsigned count(const struct cap *c, struct cap_key *const *b,
    const char *name)
{
	char cut[CAP_KEY_MAX + 1];
	const struct cap_key *k;

	snprintf(cut, sizeof(cut), "%s", name);
	k = find(c, b, cut);
	return k ? k->n : 0;
}

unsigned cap_session_count(const struct cap *c, const char *sess)
{
	return count(c, c->sess, sess);
}

unsigned cap_address_count(const struct cap *c, const char *addr)
{
	return count(c, c->addr, addr);
}

enum cap_verdict cap_admit(const struct cap *c, const char *sess,
    const char *addr, uint64_t now, struct cap_stream **oldest,
    unsigned *retry_s)
{
	char cut[CAP_KEY_MAX + 1];
	const struct cap_key *k;
	struct cap_stream *old = NULL;
	unsigned in_addr;
	uint64_t age, left;

	*oldest = NULL;
	*retry_s = 0;
	snprintf(cut, sizeof(cut), "%s", sess);
	k = find(c, c->sess, cut);
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
	if ((ks = hold(c, c->sess, sess)) == NULL)
		return -1;
	if ((ka = hold(c, c->addr, addr)) == NULL) {
		ks->n++;
		release(c, c->sess, ks);
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
	release(c, c->sess, ks);
	release(c, c->addr, s->addr);
	memset(s, 0, sizeof(*s));
}

/* Clears the host bits of an IPv6 address past its first prefix bits. */
static void keep_prefix(unsigned char b[16], unsigned prefix)
{
	unsigned i;

	for (i = 0; i < 16; i++) {
		if (prefix >= 8) {
			prefix -= 8;
			continue;
		}
		b[i] &= (unsigned char)(0xff00u >> prefix);
		prefix = 0;
	}
}

int cap_net(const char *ip, unsigned v6prefix, char *out, size_t n)
{
	static const unsigned char mapped[12] = { [10] = 0xff, [11] = 0xff };
	unsigned char b[16];
	char text[INET6_ADDRSTRLEN];
	int len;

	if (v6prefix > 128)
		v6prefix = 128;
	if (inet_pton(AF_INET6, ip, b) == 1) {
		if (!memcmp(b, mapped, sizeof(mapped))) {
			inet_ntop(AF_INET, b + 12, text, sizeof(text));
			len = snprintf(out, n, "%s", text);
		} else {
			keep_prefix(b, v6prefix);
			inet_ntop(AF_INET6, b, text, sizeof(text));
			len = snprintf(out, n, "%s/%u", text, v6prefix);
		}
	} else
		len = snprintf(out, n, "%s", ip);
	return len >= 0 && (size_t)len < n ? 0 : -1;
}
