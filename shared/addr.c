#include "addr.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#define ADDR_HOST_MAX 253

/* A prefix and what an address under it is. */
struct addr_range {
	unsigned char p[16];
	int bits;
	enum addr_class class;
};

/* Checked in order: the first match wins. */
static const struct addr_range v4_ranges[] = {
	{ { 0, 0, 0, 0 }, 32, ADDR_UNSPECIFIED },
	{ { 255, 255, 255, 255 }, 32, ADDR_BROADCAST },
	{ { 0 }, 8, ADDR_THIS_NETWORK },
	{ { 10 }, 8, ADDR_PRIVATE },
	{ { 100, 64 }, 10, ADDR_CGNAT },
	{ { 127 }, 8, ADDR_LOOPBACK },
	{ { 169, 254 }, 16, ADDR_LINK_LOCAL },
	{ { 172, 16 }, 12, ADDR_PRIVATE },
	{ { 192, 0, 0 }, 24, ADDR_RESERVED },       /* IETF protocol assignments */
	{ { 192, 0, 2 }, 24, ADDR_DOCUMENTATION },
	{ { 192, 88, 99 }, 24, ADDR_RESERVED },     /* 6to4 relay anycast */
	{ { 192, 168 }, 16, ADDR_PRIVATE },
	{ { 198, 18 }, 15, ADDR_BENCHMARK },
	{ { 198, 51, 100 }, 24, ADDR_DOCUMENTATION },
	{ { 203, 0, 113 }, 24, ADDR_DOCUMENTATION },
	{ { 224 }, 4, ADDR_MULTICAST },
	{ { 240 }, 4, ADDR_RESERVED },
};

/* IPv6 is the other way round: only global unicast (2000::/3) can be
 * public, less the special blocks inside it. */
static const struct addr_range v6_ranges[] = {
	{ { 0 }, 128, ADDR_UNSPECIFIED },
	{ { [15] = 1 }, 128, ADDR_LOOPBACK },
	{ { [10] = 0xff, [11] = 0xff }, 96, ADDR_V4MAPPED },
	{ { 0x00, 0x64, 0xff, 0x9b }, 96, ADDR_NAT64 },
	{ { 0x00, 0x64, 0xff, 0x9b, 0x00, 0x01 }, 48, ADDR_NAT64 },
	{ { 0xfe, 0x80 }, 10, ADDR_LINK_LOCAL },
	{ { 0xfc }, 7, ADDR_ULA },
	{ { 0xff }, 8, ADDR_MULTICAST },
	{ { 0x20, 0x01, 0x0d, 0xb8 }, 32, ADDR_DOCUMENTATION },
	{ { 0x3f, 0xff }, 20, ADDR_DOCUMENTATION },
	{ { 0x20, 0x01, 0x00, 0x00 }, 32, ADDR_TUNNEL },   /* Teredo */
	{ { 0x20, 0x02 }, 16, ADDR_TUNNEL },               /* 6to4 */
	{ { 0x20, 0x01 }, 23, ADDR_RESERVED },             /* IETF protocol */
	{ { 0x20 }, 3, ADDR_PUBLIC },
	{ { 0 }, 0, ADDR_RESERVED },                       /* all the rest */
};

static const char *const class_names[] = {
	"public", "unspecified", "this-network", "loopback", "private",
	"shared (CGNAT)", "link-local", "multicast", "broadcast",
	"documentation", "benchmarking", "reserved", "IPv4-mapped", "NAT64",
	"unique local", "tunnel (6to4/Teredo)"
};

static int in_range(const unsigned char *b, const struct addr_range *r)
{
	int full = r->bits / 8, rest = r->bits % 8;
	unsigned char mask;

	if (memcmp(b, r->p, (size_t)full) != 0)
		return 0;
	if (rest == 0)
		return 1;
	mask = (unsigned char)(0xff << (8 - rest));
	return (b[full] & mask) == (r->p[full] & mask);
}

static enum addr_class lookup(const unsigned char *b,
    const struct addr_range *r, size_t n, enum addr_class dflt)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (in_range(b, &r[i]))
			return r[i].class;
	return dflt;
}

enum addr_class addr_classify(const struct addr *a)
{
	if (a->family == AF_INET)
		return lookup(a->b, v4_ranges,
		    sizeof(v4_ranges) / sizeof(v4_ranges[0]), ADDR_PUBLIC);
	if (a->family == AF_INET6)
		return lookup(a->b, v6_ranges,
		    sizeof(v6_ranges) / sizeof(v6_ranges[0]), ADDR_RESERVED);
	return ADDR_RESERVED;
}

const char *addr_class_name(enum addr_class c)
{
	if ((size_t)c >= sizeof(class_names) / sizeof(class_names[0]))
		return "unknown";
	return class_names[c];
}

int addr_allowed(const struct addr *a, int allow_loopback)
{
	enum addr_class c = addr_classify(a);

	return c == ADDR_PUBLIC || (allow_loopback && c == ADDR_LOOPBACK);
}

/* One part of an IPv4 spelling, up to end: its value, or -1. */
static long long v4_part(const char *s, const char *end)
{
	unsigned long long v = 0;
	int base = 10, d;

	if (s == end)
		return -1;
	if (*s == '0' && end - s >= 2 && (s[1] == 'x' || s[1] == 'X'))
		base = 16, s += 2;      /* "0x" alone is 0, as browsers have it */
	else if (*s == '0' && end - s >= 2)
		base = 8, s++;
	for (; s < end; s++) {
		if (base == 16 && isxdigit((unsigned char)*s))
			d = isdigit((unsigned char)*s) ? *s - '0' :
			    tolower((unsigned char)*s) - 'a' + 10;
		else if (isdigit((unsigned char)*s) && *s - '0' < base)
			d = *s - '0';
		else
			return -1;
		v = v * (unsigned)base + (unsigned)d;
		if (v > 0xffffffffULL)
			return -1;
	}
	return (long long)v;
}

int addr_parse_v4(const char *s, struct addr *out)
{
	long long part[4];
	const char *p = s, *dot;
	int n = 0, i;
	uint32_t v = 0;

	for (;;) {
		if (n == 4)
			return -1;
		dot = strchr(p, '.');
		if ((part[n] = v4_part(p, dot ? dot : p + strlen(p))) == -1)
			return -1;
		n++;
		if (dot == NULL)
			break;
		p = dot + 1;
	}
	/* Every part but the last is one byte; the last fills the rest. */
	for (i = 0; i < n - 1; i++) {
		if (part[i] > 255)
			return -1;
		v |= (uint32_t)part[i] << (24 - 8 * i);
	}
	if (n < 4 && part[n - 1] >= 1LL << (8 * (5 - n)))
		return -1;
	if (n == 4 && part[3] > 255)
		return -1;
	v |= (uint32_t)part[n - 1];
	memset(out, 0, sizeof(*out));
	out->family = AF_INET;
	out->b[0] = (unsigned char)(v >> 24);
	out->b[1] = (unsigned char)(v >> 16);
	out->b[2] = (unsigned char)(v >> 8);
	out->b[3] = (unsigned char)v;
	return 0;
}

int addr_parse_v6(const char *s, struct addr *out)
{
	memset(out, 0, sizeof(*out));
	if (strchr(s, '%') != NULL || inet_pton(AF_INET6, s, out->b) != 1)
		return -1;
	out->family = AF_INET6;
	return 0;
}

/* Whether a label is a number (decimal, or 0x and hex digits): a host
 * ending in one must be an IPv4 address or nothing. */
static int label_is_number(const char *s, size_t n)
{
	size_t i = 0;

	if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		for (i = 2; i < n; i++)
			if (!isxdigit((unsigned char)s[i]))
				return 0;
		return 1;
	}
	for (; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return 0;
	return n > 0;
}

static int parse_bracketed(const char *host, size_t n, struct addr *out)
{
	char inner[64];

	if (n < 3 || host[n - 1] != ']' || n - 2 >= sizeof(inner))
		return -1;
	memcpy(inner, host + 1, n - 2);
	inner[n - 2] = '\0';
	return addr_parse_v6(inner, out) == 0 ? 1 : -1;
}

int addr_parse_host(const char *host, struct addr *out)
{
	char h[ADDR_HOST_MAX + 2];
	const char *last;
	size_t n = strlen(host);

	if (n == 0 || n > ADDR_HOST_MAX + 1)
		return -1;
	if (host[0] == '[')
		return parse_bracketed(host, n, out);
	memcpy(h, host, n + 1);
	if (h[n - 1] == '.')        /* "127.0.0.1." is still 127.0.0.1 */
		h[--n] = '\0';
	if (n == 0 || strspn(h, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_") != n || strstr(h, "..") ||
	    h[0] == '.' || h[n - 1] == '.')
		return -1;
	last = strrchr(h, '.');
	last = last ? last + 1 : h;
	if (!label_is_number(last, strlen(last)))
		return 0;
	return addr_parse_v4(h, out) == 0 ? 1 : -1;
}

int addr_from_sockaddr(const struct sockaddr *sa, size_t len, struct addr *out)
{
	const struct sockaddr_in *in4;
	const struct sockaddr_in6 *in6;

	memset(out, 0, sizeof(*out));
	if (sa->sa_family == AF_INET && len >= sizeof(*in4)) {
		in4 = (const struct sockaddr_in *)(const void *)sa;
		out->family = AF_INET;
		memcpy(out->b, &in4->sin_addr, 4);
		return 0;
	}
	if (sa->sa_family == AF_INET6 && len >= sizeof(*in6)) {
		in6 = (const struct sockaddr_in6 *)(const void *)sa;
		out->family = AF_INET6;
		memcpy(out->b, &in6->sin6_addr, 16);
		return 0;
	}
	return -1;
}

int addr_equal(const struct addr *a, const struct addr *b)
{
	size_t n = a->family == AF_INET ? 4 : 16;

	return a->family == b->family && memcmp(a->b, b->b, n) == 0;
}

int addr_format(const struct addr *a, char *out, size_t n)
{
	char text[INET6_ADDRSTRLEN];
	int k;

	if (inet_ntop(a->family, a->b, text, sizeof(text)) == NULL)
		return -1;
	k = snprintf(out, n, a->family == AF_INET6 ? "[%s]" : "%s", text);
	return k < 0 || (size_t)k >= n ? -1 : 0;
}
