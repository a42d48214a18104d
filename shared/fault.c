#include "fault.h"

#include <stdio.h>

#include "log.h"
#include "serve.h"
#include "upstream.h"

void fault_set(struct fault *f, enum err e, const char *msg)
{
	f->err = e;
	f->msg = msg;
}

size_t fault_read_body(struct req *r, struct fault *f, char *p, size_t n,
    long long max, const char *too_msg)
{
	long got = req_read_max(r, p, n, max);

	if (got >= 0)
		return (size_t)got;
	if (got == REQ_TOO_LARGE)
		fault_set(f, ERR_TOO_LARGE, too_msg);
	else
		fault_set(f, ERR_BAD_REQUEST, "The request body could not be read.");
	return (size_t)-1;
}

/* The address book server's own 4xx, its status named in the message. */
static void dav_refused(struct req *r, const struct fault *f)
{
	char msg[96];

	snprintf(msg, sizeof(msg), "The address book server refused the "
	    "request (%ld).", f->status);
	req_error_status(r, f->err, (int)f->status, f->msg ? f->msg : msg);
}

void fault_finish(struct req *r, const struct fault *f, int res)
{
	switch (f->err) {
	case ERR_NONE:
		if (res != UP_OK && !r->client_gone)
			serve_upstream_failed(r, res);
		return;
	case ERR_SESSION_REFUSED:
		serve_session_refused(r);
		return;
	case ERR_DAV_REFUSED:
		dav_refused(r, f);
		return;
	case ERR_UPSTREAM:
		if (f->status)
			log_warn("%s: the server answered %ld", r->path, f->status);
		break;
	default:
		break;
	}
	req_error(r, f->err, f->msg);
}
