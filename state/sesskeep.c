/* sesskeep: the table of kept session rows (sesskeep.h); each row and
 * what it points to in one allocation, so a slot is freed at once. */
#include "sesskeep.h"

#include <stdlib.h>
#include <string.h>

struct sesskeep {
	struct store_sess_row *slot[SESSKEEP_SLOTS];
};

struct sesskeep *sesskeep_new(void)
{
	return calloc(1, sizeof(struct sesskeep));
}

void sesskeep_clear(struct sesskeep *k)
{
	size_t i;

	for (i = 0; i < SESSKEEP_SLOTS; i++) {
		free(k->slot[i]);
		k->slot[i] = NULL;
	}
}

void sesskeep_free(struct sesskeep *k)
{
	if (k == NULL)
		return;
	sesskeep_clear(k);
	free(k);
}

static struct store_sess_row **slot_of(struct sesskeep *k, const char *id)
{
	unsigned int h = 2166136261u;

	for (; *id; id++)
		h = (h ^ (unsigned char)*id) * 16777619u;
	return &k->slot[h % SESSKEEP_SLOTS];
}

const struct store_sess_row *sesskeep_find(struct sesskeep *k, const char *id)
{
	struct store_sess_row *r = *slot_of(k, id);

	return r && !strcmp(r->id, id) ? r : NULL;
}

/* Where a copy is being laid out: the bytes after the row itself. */
struct lay {
	char *p;
};

static size_t str_size(const char *s)
{
	return s ? strlen(s) + 1 : 0;
}

static const char *lay_str(struct lay *l, const char *s)
{
	char *out = l->p;
	size_t n = str_size(s);

	if (s == NULL)
		return NULL;
	memcpy(out, s, n);
	l->p += n;
	return out;
}

static const unsigned char *lay_blob(struct lay *l, const unsigned char *b,
    size_t n)
{
	char *out = l->p;

	if (b == NULL)
		return NULL;
	memcpy(out, b, n);
	l->p += n;
	return (const unsigned char *)out;
}

void sesskeep_put(struct sesskeep *k, const struct store_sess_row *r)
{
	struct store_sess_row **slot, *c;
	struct lay l;
	size_t n = sizeof(*c) + str_size(r->id) + str_size(r->account) +
	    r->verifier_len + r->salt_len + r->sealed_len +
	    str_size(r->api_url) + str_size(r->download_url) +
	    str_size(r->upload_url) + str_size(r->event_url);

	if (r->id == NULL || r->account == NULL)
		return;
	slot = slot_of(k, r->id);
	free(*slot);
	if ((*slot = c = malloc(n)) == NULL)
		return;
	*c = *r;
	c->doc = NULL;
	c->doc_len = 0;
	c->agent = c->ip = NULL;
	l.p = (char *)(c + 1);
	c->id = lay_str(&l, r->id);
	c->account = lay_str(&l, r->account);
	c->verifier = lay_blob(&l, r->verifier, r->verifier_len);
	c->salt = lay_blob(&l, r->salt, r->salt_len);
	c->sealed = lay_blob(&l, r->sealed, r->sealed_len);
	c->api_url = lay_str(&l, r->api_url);
	c->download_url = lay_str(&l, r->download_url);
	c->upload_url = lay_str(&l, r->upload_url);
	c->event_url = lay_str(&l, r->event_url);
}

void sesskeep_drop(struct sesskeep *k, const char *id)
{
	struct store_sess_row **slot = slot_of(k, id);

	if (*slot && !strcmp((*slot)->id, id)) {
		free(*slot);
		*slot = NULL;
	}
}

void sesskeep_drop_account(struct sesskeep *k, const char *account)
{
	size_t i;

	for (i = 0; i < SESSKEEP_SLOTS; i++)
		if (k->slot[i] && !strcmp(k->slot[i]->account, account)) {
			free(k->slot[i]);
			k->slot[i] = NULL;
		}
}

void sesskeep_told(struct sesskeep *k, const char *payload)
{
	if (payload[0] == 's' && payload[1] == ' ')
		sesskeep_drop(k, payload + 2);
	else if (payload[0] == 'a' && payload[1] == ' ')
		sesskeep_drop_account(k, payload + 2);
	else
		sesskeep_clear(k);
}
