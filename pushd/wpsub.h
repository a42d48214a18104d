/* wpsub: /api/webpush, a device's Web Push subscription (one per
 * session): GET tells it, PUT stores it (PushSubscription.toJSON()) and
 * starts its watch, DELETE removes both. Session, CSRF and budget rules
 * as on every route. (Lifetime: pushd.h.) */
#ifndef POSTERN_WPSUB_H
#define POSTERN_WPSUB_H

struct req;

/* The route handler (r->sess is set). */
void wpsub_handle(struct req *r);

#endif
