/* gz: streaming gzip of a response body, for clients that ask for it when
 * the JMAP server did not compress. */
#ifndef POSTERN_GZ_H
#define POSTERN_GZ_H

#include <stddef.h>

#include <zlib.h>

#include "req.h"

struct gz {
	z_stream z;
	int on;
};

int gz_start(struct gz *g);
/* Compresses n bytes to r; with finish set, ends the stream. 0 or -1. */
int gz_write(struct gz *g, struct req *r, const char *p, size_t n, int finish);
void gz_end(struct gz *g);

#endif
