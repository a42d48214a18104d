/* login: checks credentials against the JMAP server's session resource,
 * under the sign-in rate limits, and turns the answer into a session. */
#ifndef POSTERN_LOGIN_H
#define POSTERN_LOGIN_H

#include <stddef.h>

#include <json-c/json.h>

#include "req.h"

void login_handle(struct req *r);

/* The sign-in limits (docs/SECURITY.md, "Brute force"). Each attempt is
 * counted under its client's address and user (login_limit_user), its
 * address (login_limit_ip) and all clients (login_limit_all) while the
 * mail server is asked; a wrong password stays counted and is also
 * recorded as a failure of the address, anything else is taken back.
 * Past login_limit_all, only an address with no failure in the window
 * (and no other attempt under way) is let through. */
#define LOGIN_KEYS 4
#define LOGIN_KEY_MAX (REQ_IP_MAX + APP_KEY_HEX + 32)
struct login_attempt {
	time_t now;
	int counted;                  /* the first three keys hold it */
	char keys[LOGIN_KEYS][LOGIN_KEY_MAX];
};
/* Judges and counts an attempt from client address ip for user at now:
 * 0 when it may ask the mail server, 1 when it is refused (*wait set to
 * the seconds to wait; the attempt counted nowhere), -1 on a database
 * error (nothing counted). */
int login_admit(struct app *a, struct login_attempt *t, const char *ip,
    const char *user, time_t now, long *wait);
/* What the mail server said to an admitted attempt: wrong (a wrong
 * password) keeps it counted; otherwise (a success, or no answer) it is
 * taken back. */
void login_settle(struct app *a, struct login_attempt *t, int wrong);
/* Rewrites a session document's URLs to postern's /api paths and pins the
 * upstream ones (into urls[4]: api, download, upload, event source;
 * malloc'd). base is the URL the document came from. 0 or -1. */
int login_rewrite(const struct cfg *c, json_object *doc, const char *base,
    char *urls[4]);

#endif
