/* check: a tab's own credentials, asked of the mail server (its session
 * resource, as sign-in does) when nothing vouches for its session. The
 * answer goes to the set's verdict callback, which records the
 * acceptance, or ends the session and its streams. One question at a
 * time per session. (Lifetime: pushd.h.) */
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
	/* The mail server accepted sess_id's credentials (refused 0), or
	 * refused them (1): the session is to end, and its streams. */
	void (*verdict)(struct check_set *set, const char *sess_id,
	    int refused);
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

#endif
