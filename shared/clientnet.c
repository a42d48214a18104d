#include "clientnet.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

/* Clears the bits of an IPv6 address past its first `bits`. */
static void keep_prefix(unsigned char b[16], long bits)
{
	long left;
	int i;

	for (i = 0; i < 16; i++) {
		left = bits - 8 * i;
		b[i] &= left >= 8 ? 0xff : left <= 0 ? 0 :
		    (unsigned char)(0xff << (8 - left));
	}
}

int client_net(const char *ip, long v6prefix, char *out, size_t n)
{
	static const unsigned char mapped[12] = { [10] = 0xff, [11] = 0xff };
	unsigned char b[16];
	char text[INET6_ADDRSTRLEN] = "";
	int v6 = 0, len;

	if (inet_pton(AF_INET, ip, b) == 1)
		inet_ntop(AF_INET, b, text, sizeof(text));
	else if (inet_pton(AF_INET6, ip, b) == 1) {
		if (!memcmp(b, mapped, sizeof(mapped)))
			inet_ntop(AF_INET, b + 12, text, sizeof(text));
		else {
			v6 = 1;
			keep_prefix(b, v6prefix);
			inet_ntop(AF_INET6, b, text, sizeof(text));
		}
	}
	if (v6)
		len = snprintf(out, n, "%s/%ld", text, v6prefix);
	else
		len = snprintf(out, n, "%s", *text ? text : ip);
	return len >= 0 && (size_t)len < n ? 0 : -1;
}
