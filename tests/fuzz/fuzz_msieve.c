/* Fuzz target for the ManageSieve answer parser (shared/msieve_resp.c): what
 * a ManageSieve server, or anything listening on its port, sends.
 *
 * The input is the server's bytes, as they come. Beyond no crash: a
 * parsed answer used no byte past the input, holds at most
 * MSIEVE_ITEMS_MAX lines whose strings lie inside its data, each
 * NUL-terminated, and parses again the same from exactly the bytes it
 * used; every shorter prefix of it asks for more, never fails (an answer
 * arriving in pieces is never refused); an answer asking for more names
 * a length past the input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "msieve_resp.h"

/* Strings are bounded to this, as a small max_request would. */
#define FUZZ_MAX 65536

static void check_items(const struct msieve_resp *m)
{
	const struct msieve_item *it;
	int i;

	if (m->n_items < 0 || m->n_items > MSIEVE_ITEMS_MAX)
		abort();
	for (i = 0; i < m->n_items; i++) {
		it = &m->items[i];
		if (it->key + it->key_len >= m->data.len + 1 ||
		    m->data.data[it->key + it->key_len] != '\0')
			abort();
		if (it->has_val && (it->val + it->val_len >= m->data.len + 1 ||
		    m->data.data[it->val + it->val_len] != '\0'))
			abort();
	}
}

static void prefixes(const char *p, size_t used, struct msieve_resp *m)
{
	size_t cut[] = { used - 1, used / 2, 1 }, need, i;

	for (i = 0; i < sizeof(cut) / sizeof(cut[0]); i++)
		if (cut[i] < used && msieve_parse(p, cut[i], m, &need) != MSIEVE_MORE)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data;
	struct msieve_resp m;
	size_t used = 0, again = 0;
	int rc, status, n;

	msieve_resp_init(&m, FUZZ_MAX);
	rc = msieve_parse(p, size, &m, &used);
	if (rc == MSIEVE_MORE && used <= size)
		abort();
	if (rc == MSIEVE_PARSED) {
		if (used == 0 || used > size)
			abort();
		check_items(&m);
		(void)msieve_error_line(buf_str(&m.text));
		status = m.status;
		n = m.n_items;
		if (msieve_parse(p, used, &m, &again) != MSIEVE_PARSED ||
		    again != used || m.status != status || m.n_items != n)
			abort();
		prefixes(p, used, &m);
	}
	msieve_resp_free(&m);
	return 0;
}

#define FUZZ_CORPUS "msieve"
#include "replay.h"
