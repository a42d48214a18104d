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
	/* the mail server's status (logged with a 502; dav_refused's own;
	 * an upload's answer passes it on), 0 when it has not answered */
	long status;
};

/* Records e with msg (NULL: the table's). */
void fault_set(struct fault *f, enum err e, const char *msg);
/* Reads up to n bytes of the browser's body for libcurl, at most max in
 * all: the count, or (size_t)-1 with the fault recorded (too_msg when it
 * passed max, else 400), which stops the transfer. */
size_t fault_read_body(struct req *r, struct fault *f, char *p, size_t n,
    long long max, const char *too_msg);
/* Answers the transfer: the fault, or else the upstream call's result
 * res (enum up_result) when it did not end with an answer. Nothing when
 * all went well or the answer is already under way. */
void fault_finish(struct req *r, const struct fault *f, int res);

#endif
