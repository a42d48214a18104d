#include "gz.h"

#include <string.h>

int gz_start(struct gz *g)
{
	memset(g, 0, sizeof(*g));
	/* 15 + 16: a gzip wrapper; level 5 and memLevel 8 keep the cost per
	 * response small while still taking 4-5x off JSON. */
	if (deflateInit2(&g->z, 5, Z_DEFLATED, 15 + 16, 8,
	    Z_DEFAULT_STRATEGY) != Z_OK)
		return -1;
	g->on = 1;
	return 0;
}

int gz_write(struct gz *g, struct req *r, const char *p, size_t n, int finish)
{
	unsigned char out[16384];
	int rc;

	g->z.next_in = (unsigned char *)(uintptr_t)p;
	g->z.avail_in = (uInt)n;
	do {
		g->z.next_out = out;
		g->z.avail_out = sizeof(out);
		rc = deflate(&g->z, finish ? Z_FINISH : Z_NO_FLUSH);
		if (rc == Z_STREAM_ERROR)
			return -1;
		if (sizeof(out) - g->z.avail_out &&
		    req_write(r, out, sizeof(out) - g->z.avail_out) == -1)
			return -1;
	} while (g->z.avail_out == 0 || (finish && rc != Z_STREAM_END));
	return 0;
}

void gz_end(struct gz *g)
{
	if (g->on)
		deflateEnd(&g->z);
	g->on = 0;
}
