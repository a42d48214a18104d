/* visible: POST /api/events?visible=0|1, the browser telling pushd that
 * one of its tabs came into view or that none is any more.
 * (Lifetime: pushd.h.) */
#ifndef POSTERN_VISIBLE_H
#define POSTERN_VISIBLE_H

struct req;

/* A route handler (r->sess is set): 200 {"streams": n}, the number of
 * the session's streams marked; 400 without a valid visible. */
void visible_handle(struct req *r);

#endif
