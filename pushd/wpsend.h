/* wpsend: one Web Push message to one device's push service (RFC 8030),
 * encrypted to its keys (RFC 8291) and signed with the server's VAPID key
 * (RFC 8292), on pushd's loop. A subscription the push service says is
 * gone (404, 410) is deleted; one that is throttled or failing (429, 5xx,
 * no answer) waits, longer each time; at most WP_OUT_MAX pushes are out at
 * once. (Lifetime: pushd.h.) */
#ifndef POSTERN_WPSEND_H
#define POSTERN_WPSEND_H

struct acct;
struct pushd;

#define WP_OUT_MAX 256
#define WP_BACKOFF_MIN 30      /* seconds after a first failure */
#define WP_BACKOFF_MAX 3600

/* The VAPID key from webpush_key_file (made when missing) and the
 * contact: 0, or -1 when Web Push cannot work here (logged; pushd runs
 * on without it, and the responders then do not offer it). */
int wp_init(struct pushd *pd);
/* Cancels the pushes out, frees the key (at shutdown). */
void wp_free(struct pushd *pd);
/* Sends payload (JSON text) to each subscription of the account whose
 * browser has no tab in view, unless it waits or has one out. */
void wp_send_account(struct acct *a, const char *payload);

#endif
