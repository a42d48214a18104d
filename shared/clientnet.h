/* clientnet: one client as the limits count it. An IPv6 client can use
 * every address of its /64 (or whatever its provider routes to it), so
 * counting by whole addresses would let one of them count as 2^64. */
#ifndef POSTERN_CLIENTNET_H
#define POSTERN_CLIENTNET_H

#include <stddef.h>

/* What a client address counts as: an IPv4 address (also written as
 * IPv4-mapped IPv6) as itself, an IPv6 address as its /v6prefix
 * ("2001:db8:1:2::/64"), anything else as it is. Into out (n bytes): 0,
 * or -1 when it does not fit. */
int client_net(const char *ip, long v6prefix, char *out, size_t n);

#endif
