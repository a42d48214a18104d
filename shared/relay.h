/* relay: the JMAP API relay (/api/jmap). The request body streams from the
 * browser to the JMAP server through an incremental JSON check; the answer
 * streams back, gzip-compressed only for a client that asks. */
#ifndef POSTERN_RELAY_H
#define POSTERN_RELAY_H

#include "serve.h"

extern const struct route relay_routes[];

void relay_handle(struct req *r);

#endif
