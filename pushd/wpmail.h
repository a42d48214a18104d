/* wpmail: what a device's notification says. When an account with Web
 * Push watches sees its Email state change, one JMAP call asks what came
 * (Email/changes from the state before, Email/get of what was created,
 * the mailboxes); unread mail new in the Inbox, or in the folders the
 * person chose (the setting notifyFolders), is gathered, and one push
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

/* What a lookup found: the newest new mail's payload (the caller puts
 * it) and how many there were; Email/changes' newState (malloc'd) and
 * whether it had more changes. */
struct wp_found {
	json_object *payload;
	unsigned count;
	char *newstate;
	int more;
};

/* Reads a lookup's answer (root: the response to its three calls): the
 * unread mail new in the folders chosen (folders: an array of mailbox ids,
 * or NULL for the Inbox), not a draft and not from own (the login, or
 * NULL). 0, or -1 when the answer is not one. Pure, for the tests. */
int wp_mail_read(json_object *root, json_object *folders, const char *own,
    struct wp_found *f);

#endif
