/* Fuzz target for the query of GET /api/events (pushd/tab.c, included
 * here for its static parser): types, closeafter, ping and visible.
 *
 * The input is the query string. A taken query gives types within the
 * ones pushd reports, closeafter 0 or 1, a ping interval within its
 * bounds and visible 0 or 1; reading it again gives the same (field by
 * field: the struct's padding is not part of it). */
#include "../../pushd/tab.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tab_opts o, p;
	char *q;

	if ((q = malloc(size + 1)) == NULL)
		return 0;
	memcpy(q, data, size);
	q[size] = '\0';
	if (parse_query(q, &o) == 0) {
		if ((o.types & ~ACCT_ALL) || (o.closeafter != 0 && o.closeafter != 1) ||
		    o.ping < TAB_PING_MIN || o.ping > TAB_PING_MAX ||
		    (o.visible != 0 && o.visible != 1))
			abort();
		if (parse_query(q, &p) != 0 || o.types != p.types ||
		    o.closeafter != p.closeafter || o.ping != p.ping ||
		    o.visible != p.visible)
			abort();
	}
	free(q);
	return 0;
}

#define FUZZ_CORPUS "events"
#include "replay.h"
