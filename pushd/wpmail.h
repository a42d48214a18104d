/* wpmail: what a device's notification says. When an account with Web
 * Push watches sees its Email state change, one JMAP call asks what came
 * (Email/changes from the state before, Email/get of what was created,
 * the mailboxes); unread mail new in the Inbox is gathered, and one push
 * per coalescing window (webpush_coalesce) goes to each subscription of
 * the account whose browser has no tab in view. Everything runs from
 * timers on pushd's loop. (Lifetime: pushd.h.) */
#ifndef POSTERN_WPMAIL_H
#define POSTERN_WPMAIL_H

#include <json-c/json_types.h>

struct acct;

/* The account's Email state changed from since (NULL: not known). */
void wp_mail_changed(struct acct *a, const char *since);
/* The account ends: the lookup stops, its state goes after the batch. */
void wp_mail_end(struct acct *a);

/* The notification's payload from a lookup's answer, for the tests:
 * unread new mail in the Inbox of root (a JMAP response to the lookup's
 * three calls) into *payload (the newest; the caller puts it) and *count.
 * 0, or -1 when the answer is not one. newstate: Email/changes' newState
 * (malloc'd) or NULL; *more: it had more changes. */
int wp_mail_read(json_object *root, json_object **payload, unsigned *count,
    char **newstate, int *more);

#endif
