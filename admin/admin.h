/* admin: the chores of postern-admin, one function per command, over an
 * opened configuration and state. Reports go to a FILE so that the unit
 * tests read what an operator would see. Nothing here prints a secret: the
 * session list shows an id prefix and an account key prefix, never the
 * cookie's secret half, the sealed credentials or the server secret. */
#ifndef POSTERN_ADMIN_H
#define POSTERN_ADMIN_H

#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include "app.h"
#include "cfg.h"

/* Characters of a session id shown in the list, and fewest accepted when
 * revoking by prefix (a shorter one would match too much by mistake). */
#define ADMIN_ID_SHOWN 8
#define ADMIN_ID_MIN 6
/* Characters of the account key shown. */
#define ADMIN_ACCOUNT_SHOWN 8

/* check.c: what postern-admin check reports. */
struct admin_report {
	FILE *out;
	int errors, warnings;
	int loaded;          /* admin_check read the configuration */
};

void admin_error(struct admin_report *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void admin_warning(struct admin_report *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Checks the configuration at path and the files it names, without
 * creating or changing anything. Fills c (caller frees with cfg_free) and
 * returns the number of errors found. */
int admin_check(const char *path, struct cfg *c, struct admin_report *r);
/* reach.c: asks the JMAP server for the session resource, without
 * credentials, as sign-in would (timeouts, CA file, redirects): an answer
 * of the JMAP server is reported as a line, anything else as an error (a
 * closed port, a status that is not a session's, TLS, a timeout). The
 * number of errors found. */
int admin_check_upstream(const struct cfg *c, struct admin_report *r);
/* A problem with a private file's mode (the secret, the database), or NULL
 * when only the owner can read and write it. */
const char *admin_private_mode(mode_t mode);
/* A warning about the upstream URL's form, or NULL: plain http is fine on
 * loopback or a private network, not across the internet. */
const char *admin_upstream_warning(const char *url);

/* init.c: creates the state folder, the secret and the database (0600),
 * leaving what exists. 0, or -1 with the reason in err. */
int admin_init(const char *path, FILE *out, char *err, size_t errlen);

/* state.c: sessions and push status in the state database. */
/* 1 when s may be a session id or a prefix of one. */
int admin_id_ok(const char *s);
/* Lists live sessions (of login's account when login is not NULL). The
 * count, or -1. */
int admin_sessions(struct app *a, const char *login, time_t now, FILE *out);
/* Ends the one session whose id starts with prefix: 1, 0 when none
 * matches, -1 on error or when the prefix matches more than one (err
 * says which). */
int admin_revoke_id(struct app *a, const char *prefix, char *err, size_t errlen);
/* Ends every session of login's account, or every session: the count,
 * or -1. */
int admin_revoke_login(struct app *a, const char *login);
int admin_revoke_all(struct app *a);
/* Prints pushd's accounts by mode and by whether a tab is open, and its
 * subscriptions. 0 or -1. */
int admin_push(struct app *a, time_t now, FILE *out);

#endif
