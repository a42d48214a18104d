/* Fuzz target for the address checks the image proxy relies on
 * (shared/addr.c).
 *
 * The input is a URL host. What addr_parse_v4 takes, inet_aton(3) must
 * read as the same address (but for a bare "0x" part), and what addr_parse_v6 takes inet_pton(3)
 * must read the same (and the other way round); a literal host must
 * print and read back as itself; only a public address (or loopback
 * when asked) may be allowed; the class must have a name. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "addr.h"

static void same_as_libc(const char *s)
{
	struct addr a;
	struct in_addr v4;
	struct in6_addr v6;
	int ours, libc;

	/* One known difference: a bare "0x" part is 0 to browsers (and to
	 * us), nothing to inet_aton. Either way the proxy connects only to
	 * the address it checked. */
	if (addr_parse_v4(s, &a) == 0 && (inet_aton(s, &v4) == 0 ?
	    strstr(s, "0x") == NULL && strstr(s, "0X") == NULL :
	    a.family != AF_INET || memcmp(a.b, &v4, 4)))
		abort();
	ours = addr_parse_v6(s, &a) == 0;
	libc = inet_pton(AF_INET6, s, &v6) == 1;
	if (ours != libc || (ours && (a.family != AF_INET6 ||
	    memcmp(a.b, &v6, 16))))
		abort();
}

static void literal(const struct addr *a)
{
	enum addr_class c = addr_classify(a);
	char text[64];
	struct addr b;

	if (addr_class_name(c) == NULL ||
	    addr_allowed(a, 0) != (c == ADDR_PUBLIC) ||
	    addr_allowed(a, 1) != (c == ADDR_PUBLIC || c == ADDR_LOOPBACK))
		abort();
	if (addr_format(a, text, sizeof(text)) != 0 ||
	    addr_parse_host(text, &b) != 1 || !addr_equal(a, &b))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct addr a;
	char *s;
	int rc;

	if ((s = malloc(size + 1)) == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	same_as_libc(s);
	rc = addr_parse_host(s, &a);
	if (rc < -1 || rc > 1)
		abort();
	if (rc == 1)
		literal(&a);
	free(s);
	return 0;
}

#define FUZZ_CORPUS "addr"
#include "replay.h"
