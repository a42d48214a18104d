/* usock: Unix stream sockets on a path. The listening socket of pushd and
 * of a responder started with -s, mode 0660 so that the web server's group
 * may connect and nobody else; and the check that something accepts on a
 * socket (pushd's: /api/health, /api/config, postern-admin push). */
#ifndef POSTERN_USOCK_H
#define POSTERN_USOCK_H

#include <stddef.h>

/* Removes what is at path, binds a socket there (mode 0660) and listens;
 * flags are added to socket()'s type (SOCK_NONBLOCK). The descriptor,
 * close-on-exec, or -1 with the reason in err. */
int usock_listen(const char *path, int backlog, int flags, char *err,
    size_t errlen);
/* 1 when something listens on the socket at path, else 0. Never blocks:
 * a listener whose backlog is full counts as listening. */
int usock_alive(const char *path);

#endif
