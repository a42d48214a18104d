/* fault: what went wrong during a transfer of the relay, blobs, the
 * image proxy or the address book, recorded where it happened and
 * answered once the transfer ends: one mapping from upstream failures to
 * answers for all four (the codes and statuses are err.h's). */
#ifndef POSTERN_FAULT_H
#define POSTERN_FAULT_H

#include "err.h"
#include "req.h"

struct fault {
	enum err err;        /* ERR_NONE: nothing went wrong */
	const char *msg;     /* static text; NULL: the table's message */
	/* the mail server's status when it decided (logged with a 502;
	 * dav_refused's own), 0 otherwise */
	long status;
};

/* Records e with msg (NULL: the table's). */
void fault_set(struct fault *f, enum err e, const char *msg);
/* A failed read of the browser's body (got, as req_read_max returned):
 * too_msg when it passed the limit, else 400. */
void fault_read(struct fault *f, long got, const char *too_msg);
/* Answers the transfer: the fault, or else the upstream call's result
 * res (enum up_result) when it did not end with an answer. Nothing when
 * all went well or the answer is already under way. */
void fault_finish(struct req *r, const struct fault *f, int res);

#endif
