/* check: a tab's own credentials, asked of the mail server (its session
 * resource, as sign-in does) when nothing vouches for its session. The
 * answer records the acceptance, or ends the session and, through the
 * set's refused callback, its streams (the session's row is written on
 * the database thread). One question at a time per session. (Lifetime:
 * pushd.h.) */
#ifndef POSTERN_CHECK_H
#define POSTERN_CHECK_H

#include <stdint.h>

#include "sess.h"

struct pushd;
struct check;

/* The questions of one account. */
struct check_set {
	struct pushd *pd;
	struct check *head;
	/* The mail server refused sess_id's credentials (the session is
	 * ended already): its streams end. */
	void (*refused)(struct check_set *set, const char *sess_id);
	uint8_t stopped;
};

/* Asks with s's credentials, in the loop. When it cannot be asked, the
 * tab stands on its session's record. */
void check_start(struct check_set *set, const struct sess *s);
/* The account ends: the questions in flight stop (not inside libcurl's
 * callback: then they are only ignored), and go with check_free_all
 * after the batch. */
void check_stop_all(struct check_set *set);
void check_free_all(struct check_set *set);
/* Records the mail server's verdict on session sess_id, off the loop
 * (dbq.h): accepted now, or refused (the session ends). */
void check_verdict(struct pushd *pd, const char *sess_id, int refused);

#endif
