/* pool: several processes of one responder on one listening socket (-s
 * with -n), as lighttpd's max-procs or mod_fcgid give the others. Each
 * child accepts on the shared descriptor, so a connection goes to a
 * process that is free: one held by a slow mail server or client holds
 * only itself, and one client cannot hold them all (seat.h). The parent
 * only starts them, starts a dead one again, and
 * stops them all on SIGTERM or SIGINT. */
#ifndef POSTERN_POOL_H
#define POSTERN_POOL_H

#define POOL_MAX 64

/* Runs n (1 to POOL_MAX) children, each run(arg) and exit with its
 * status. Returns, in the parent, 0 after a stop signal or 1 when
 * children die faster than they can serve (more than 10 in a minute). */
int pool_run(int n, int (*run)(void *arg), void *arg);

#endif
