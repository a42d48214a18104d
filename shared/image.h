/* image: the remote-image privacy proxy, GET /api/image?url=. The browser
 * never contacts a sender's server; postern does, and only ever a public
 * address: the host is resolved here, every address checked (addr.h),
 * and libcurl pinned to the checked one, which is checked again as the
 * socket opens. Redirects (at most three) are followed here, each checked
 * the same way. Only raster images pass (never SVG), within a size and a
 * time cap; no cookie, credential or referrer is ever sent. */
#ifndef POSTERN_IMAGE_H
#define POSTERN_IMAGE_H

#include "serve.h"

void image_handle(struct req *r);

/* The image proxy alone: the postern-image responder, a pool of its own
 * so that senders' slow servers hold no process that serves attachments
 * (postern-blob still answers /api/image where it runs as CGI, which
 * has no pool to hold). */
extern const struct route image_routes[];

#endif
