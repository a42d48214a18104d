/* addr: what kind of IP address something is, and the IPv4 and IPv6
 * literals a URL host may spell. The image proxy asks here before it
 * connects anywhere: only a public address passes. Pure functions (no I/O,
 * no allocation), so that they are easy to test and to fuzz. */
#ifndef POSTERN_ADDR_H
#define POSTERN_ADDR_H

#include <stddef.h>

#include <sys/socket.h>

/* An IPv4 or IPv6 address in network byte order (IPv4 in b[0..3]). */
struct addr {
	int family;              /* AF_INET or AF_INET6 */
	unsigned char b[16];
};

enum addr_class {
	ADDR_PUBLIC,
	ADDR_UNSPECIFIED,        /* 0.0.0.0, :: */
	ADDR_THIS_NETWORK,       /* 0/8 */
	ADDR_LOOPBACK,           /* 127/8, ::1 */
	ADDR_PRIVATE,            /* 10/8, 172.16/12, 192.168/16 */
	ADDR_CGNAT,              /* 100.64/10 */
	ADDR_LINK_LOCAL,         /* 169.254/16, fe80::/10 */
	ADDR_MULTICAST,          /* 224/4, ff00::/8 */
	ADDR_BROADCAST,          /* 255.255.255.255 */
	ADDR_DOCUMENTATION,      /* 192.0.2/24, 198.51.100/24, 203.0.113/24,
	                            2001:db8::/32, 3fff::/20 */
	ADDR_BENCHMARK,          /* 198.18/15 */
	ADDR_RESERVED,           /* 240/4, 192.0.0/24, 192.88.99/24; IPv6
	                            outside 2000::/3, and 2001::/23 */
	ADDR_V4MAPPED,           /* ::ffff:0:0/96 */
	ADDR_NAT64,              /* 64:ff9b::/96, 64:ff9b:1::/48 */
	ADDR_ULA,                /* fc00::/7 */
	ADDR_TUNNEL              /* 2002::/16 (6to4), 2001::/32 (Teredo) */
};

enum addr_class addr_classify(const struct addr *a);
/* A short name for a class ("loopback"), for logs and messages. */
const char *addr_class_name(enum addr_class c);
/* 1 when the image proxy may connect to a: a public address, or loopback
 * when allow_loopback (the tests' own origin) is set. */
int addr_allowed(const struct addr *a, int allow_loopback);

/* An IPv4 literal read the way inet_aton(3) and browsers read it: one to
 * four parts, each decimal, octal (leading 0) or hex (0x), the last one
 * filling the bytes that remain ("127.1", "0x7f.1", "2130706433"). The
 * whole string must be used. 0, or -1 when it is not one. */
int addr_parse_v4(const char *s, struct addr *out);
/* An IPv6 literal without brackets and without a zone. 0 or -1. */
int addr_parse_v6(const char *s, struct addr *out);
/* A URL's host: "[v6]", an IPv4 spelling (a host whose last label is a
 * number is one, as in the WHATWG URL standard), or a name. Returns 1 for
 * a literal (out set), 0 for a well-formed host name, -1 for anything else
 * (a number that is not an address, a zone, characters no name has). */
int addr_parse_host(const char *host, struct addr *out);

/* The address of a socket address. 0, or -1 for another family. */
int addr_from_sockaddr(const struct sockaddr *sa, size_t len, struct addr *out);
int addr_equal(const struct addr *a, const struct addr *b);
/* The address as a URL host: "192.0.2.1" or "[2001:db8::1]". 0 or -1. */
int addr_format(const struct addr *a, char *out, size_t n);

#endif
