/* addr: every address class the image proxy refuses, in every spelling a
 * URL host may use (decimal, octal, hex and short IPv4, bracketed IPv6,
 * v4-mapped, NAT64, ...), and public addresses that pass. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cmocka.h>

#include "addr.h"

#define NAME 0          /* addr_parse_host: a host name */
#define BAD (-1)        /* addr_parse_host: not a host */

struct host_case {
	const char *host;
	int parse;                 /* 1 literal, NAME, BAD */
	enum addr_class class;     /* for literals */
};

static const struct host_case cases[] = {
	/* loopback, every IPv4 spelling */
	{ "127.0.0.1", 1, ADDR_LOOPBACK },
	{ "127.1", 1, ADDR_LOOPBACK },
	{ "127.0.1", 1, ADDR_LOOPBACK },
	{ "2130706433", 1, ADDR_LOOPBACK },
	{ "0177.0.0.1", 1, ADDR_LOOPBACK },
	{ "0177.1", 1, ADDR_LOOPBACK },
	{ "0x7f.0.0.1", 1, ADDR_LOOPBACK },
	{ "0X7F.1", 1, ADDR_LOOPBACK },
	{ "0x7f000001", 1, ADDR_LOOPBACK },
	{ "017700000001", 1, ADDR_LOOPBACK },
	{ "127.0.0.1.", 1, ADDR_LOOPBACK },
	{ "127.255.255.254", 1, ADDR_LOOPBACK },
	{ "[::1]", 1, ADDR_LOOPBACK },
	{ "[0:0:0:0:0:0:0:1]", 1, ADDR_LOOPBACK },
	/* private */
	{ "10.0.0.1", 1, ADDR_PRIVATE },
	{ "012.0.0.1", 1, ADDR_PRIVATE },
	{ "0xa.0.0.1", 1, ADDR_PRIVATE },
	{ "0x0a000001", 1, ADDR_PRIVATE },
	{ "167772161", 1, ADDR_PRIVATE },
	{ "10.1", 1, ADDR_PRIVATE },
	{ "172.16.0.1", 1, ADDR_PRIVATE },
	{ "172.31.255.255", 1, ADDR_PRIVATE },
	{ "192.168.1.1", 1, ADDR_PRIVATE },
	{ "0xc0.0xa8.1.1", 1, ADDR_PRIVATE },
	{ "0300.0250.1.1", 1, ADDR_PRIVATE },
	/* link-local, the cloud metadata address first */
	{ "169.254.169.254", 1, ADDR_LINK_LOCAL },
	{ "2852039166", 1, ADDR_LINK_LOCAL },
	{ "0xa9.0xfe.0xa9.0xfe", 1, ADDR_LINK_LOCAL },
	{ "[fe80::1]", 1, ADDR_LINK_LOCAL },
	{ "[febf:ffff::1]", 1, ADDR_LINK_LOCAL },
	/* CGNAT */
	{ "100.64.0.1", 1, ADDR_CGNAT },
	{ "100.127.255.255", 1, ADDR_CGNAT },
	{ "0144.0100.0.1", 1, ADDR_CGNAT },
	/* this network, unspecified, broadcast */
	{ "0.0.0.0", 1, ADDR_UNSPECIFIED },
	{ "0", 1, ADDR_UNSPECIFIED },
	{ "0x0", 1, ADDR_UNSPECIFIED },
	{ "[::]", 1, ADDR_UNSPECIFIED },
	{ "0.1.2.3", 1, ADDR_THIS_NETWORK },
	{ "255.255.255.255", 1, ADDR_BROADCAST },
	{ "4294967295", 1, ADDR_BROADCAST },
	{ "0xffffffff", 1, ADDR_BROADCAST },
	/* multicast */
	{ "224.0.0.1", 1, ADDR_MULTICAST },
	{ "239.255.255.250", 1, ADDR_MULTICAST },
	{ "0xe0000001", 1, ADDR_MULTICAST },
	{ "[ff02::1]", 1, ADDR_MULTICAST },
	{ "[ff0e::1234]", 1, ADDR_MULTICAST },
	/* documentation and benchmarking */
	{ "192.0.2.1", 1, ADDR_DOCUMENTATION },
	{ "198.51.100.7", 1, ADDR_DOCUMENTATION },
	{ "203.0.113.9", 1, ADDR_DOCUMENTATION },
	{ "[2001:db8::1]", 1, ADDR_DOCUMENTATION },
	{ "[3fff::1]", 1, ADDR_DOCUMENTATION },
	{ "198.18.0.1", 1, ADDR_BENCHMARK },
	{ "198.19.255.255", 1, ADDR_BENCHMARK },
	/* reserved */
	{ "240.0.0.1", 1, ADDR_RESERVED },
	{ "254.1.2.3", 1, ADDR_RESERVED },
	{ "192.0.0.170", 1, ADDR_RESERVED },
	{ "192.88.99.1", 1, ADDR_RESERVED },
	{ "[::127.0.0.1]", 1, ADDR_RESERVED },
	{ "[fec0::1]", 1, ADDR_RESERVED },
	{ "[100::1]", 1, ADDR_RESERVED },
	{ "[2001:2::1]", 1, ADDR_RESERVED },
	/* IPv6 that carries IPv4 */
	{ "[::ffff:127.0.0.1]", 1, ADDR_V4MAPPED },
	{ "[::ffff:7f00:1]", 1, ADDR_V4MAPPED },
	{ "[::ffff:10.0.0.1]", 1, ADDR_V4MAPPED },
	{ "[::ffff:169.254.169.254]", 1, ADDR_V4MAPPED },
	{ "[::ffff:8.8.8.8]", 1, ADDR_V4MAPPED },
	{ "[0:0:0:0:0:ffff:7f00:0001]", 1, ADDR_V4MAPPED },
	{ "[64:ff9b::7f00:1]", 1, ADDR_NAT64 },
	{ "[64:ff9b::10.0.0.1]", 1, ADDR_NAT64 },
	{ "[64:ff9b::8.8.8.8]", 1, ADDR_NAT64 },
	{ "[64:ff9b:1::a00:1]", 1, ADDR_NAT64 },
	{ "[64:ff9b:1:ffff::1]", 1, ADDR_NAT64 },
	{ "[2002:7f00:1::1]", 1, ADDR_TUNNEL },
	{ "[2002:808:808::1]", 1, ADDR_TUNNEL },
	{ "[2001::1]", 1, ADDR_TUNNEL },
	/* unique local */
	{ "[fc00::1]", 1, ADDR_ULA },
	{ "[fd12:3456:789a::1]", 1, ADDR_ULA },
	{ "[fdff:ffff::1]", 1, ADDR_ULA },
	/* public, right next to the refused blocks too */
	{ "1.1.1.1", 1, ADDR_PUBLIC },
	{ "8.8.8.8", 1, ADDR_PUBLIC },
	{ "134744072", 1, ADDR_PUBLIC },
	{ "0x08080808", 1, ADDR_PUBLIC },
	{ "010.010.010.010", 1, ADDR_PUBLIC },      /* octal: 8.8.8.8 */
	{ "93.184.216.34", 1, ADDR_PUBLIC },
	{ "9.255.255.255", 1, ADDR_PUBLIC },
	{ "11.0.0.0", 1, ADDR_PUBLIC },
	{ "100.63.255.255", 1, ADDR_PUBLIC },
	{ "100.128.0.1", 1, ADDR_PUBLIC },
	{ "126.255.255.255", 1, ADDR_PUBLIC },
	{ "128.0.0.1", 1, ADDR_PUBLIC },
	{ "169.253.1.1", 1, ADDR_PUBLIC },
	{ "172.15.255.255", 1, ADDR_PUBLIC },
	{ "172.32.0.1", 1, ADDR_PUBLIC },
	{ "192.167.255.255", 1, ADDR_PUBLIC },
	{ "198.17.255.255", 1, ADDR_PUBLIC },
	{ "198.20.0.1", 1, ADDR_PUBLIC },
	{ "223.255.255.255", 1, ADDR_PUBLIC },
	{ "[2606:4700:4700::1111]", 1, ADDR_PUBLIC },
	{ "[2001:4860:4860::8888]", 1, ADDR_PUBLIC },
	{ "[2a00:1450:4001:80b::200e]", 1, ADDR_PUBLIC },
	{ "[2001:200::1]", 1, ADDR_PUBLIC },
	{ "[3ffe::1]", 1, ADDR_PUBLIC },
	/* names */
	{ "example.com", NAME, 0 },
	{ "localhost", NAME, 0 },
	{ "images.example.org.", NAME, 0 },
	{ "127.0.0.1.nip.example", NAME, 0 },
	{ "0x7g.example", NAME, 0 },
	{ "deadbeef", NAME, 0 },
	{ "xn--bcher-kva.example", NAME, 0 },
	/* neither */
	{ "", BAD, 0 },
	{ ".", BAD, 0 },
	{ "1.2.3.4.5", BAD, 0 },
	{ "256.1.1.1", BAD, 0 },
	{ "1.256.1.1", BAD, 0 },
	{ "1.2.3.256", BAD, 0 },
	{ "1.2.65536", BAD, 0 },
	{ "1.16777216", BAD, 0 },
	{ "4294967296", BAD, 0 },
	{ "99999999999999999999999", BAD, 0 },
	{ "08.0.0.1", BAD, 0 },
	{ "0x100.0.0.1", BAD, 0 },
	{ "1..2", BAD, 0 },
	{ "1.2.3.4..", BAD, 0 },
	{ "example.123", BAD, 0 },
	{ "exa mple.com", BAD, 0 },
	{ "ex%61mple.com", BAD, 0 },
	{ "b\xc3\xbc" "cher.example", BAD, 0 },
	{ "::1", BAD, 0 },
	{ "[::1", BAD, 0 },
	{ "[]", BAD, 0 },
	{ "[::1%25eth0]", BAD, 0 },
	{ "[fe80::1%eth0]", BAD, 0 },
	{ "[1.2.3.4]", BAD, 0 },
	{ "[::ffff:127.0.0.1]x", BAD, 0 },
};

static void every_spelling_classified(void **state)
{
	struct addr a;
	size_t i;
	int rc;
	char msg[160];

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&a, 0xaa, sizeof(a));
		rc = addr_parse_host(cases[i].host, &a);
		if (rc != cases[i].parse) {
			snprintf(msg, sizeof(msg), "%s: parse %d, want %d",
			    cases[i].host, rc, cases[i].parse);
			fail_msg("%s", msg);
		}
		if (rc == 1 && addr_classify(&a) != cases[i].class)
			fail_msg("%s: class %s, want %s", cases[i].host,
			    addr_class_name(addr_classify(&a)),
			    addr_class_name(cases[i].class));
	}
}

/* Only public addresses pass; loopback too only when the test switch is
 * on, and nothing else with it, not even loopback spelled as v4-mapped. */
static void only_public_allowed(void **state)
{
	struct addr a;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (cases[i].parse != 1)
			continue;
		assert_int_equal(addr_parse_host(cases[i].host, &a), 1);
		assert_int_equal(addr_allowed(&a, 0), cases[i].class == ADDR_PUBLIC);
		assert_int_equal(addr_allowed(&a, 1),
		    cases[i].class == ADDR_PUBLIC || cases[i].class == ADDR_LOOPBACK);
	}
	assert_int_equal(addr_parse_host("[::ffff:127.0.0.1]", &a), 1);
	assert_false(addr_allowed(&a, 1));
	assert_int_equal(addr_parse_host("10.0.0.1", &a), 1);
	assert_false(addr_allowed(&a, 1));
}

static void parse_v4_bytes(void **state)
{
	static const unsigned char want[4] = { 127, 0, 0, 1 };
	static const unsigned char want2[4] = { 1, 2, 0, 3 };
	struct addr a;

	assert_int_equal(addr_parse_v4("0x7f.1", &a), 0);
	assert_int_equal(a.family, AF_INET);
	assert_memory_equal(a.b, want, 4);
	assert_int_equal(addr_parse_v4("1.2.3", &a), 0);
	assert_memory_equal(a.b, want2, 4);
	assert_int_equal(addr_parse_v4("1.2.3 ", &a), -1);
	assert_int_equal(addr_parse_v4(" 1.2.3.4", &a), -1);
	assert_int_equal(addr_parse_v4("1.2.3.4x", &a), -1);
	assert_int_equal(addr_parse_v4("+1.2.3.4", &a), -1);
	assert_int_equal(addr_parse_v4("-1", &a), -1);
	assert_int_equal(addr_parse_v6("::1%1", &a), -1);
}

/* What libcurl hands the socket callback is read back exactly. */
static void sockaddr_round_trip(void **state)
{
	struct sockaddr_in in4;
	struct sockaddr_in6 in6;
	struct addr a, b;
	char text[64];

	memset(&in4, 0, sizeof(in4));
	in4.sin_family = AF_INET;
	in4.sin_addr.s_addr = htonl(0x7f000001);
	assert_int_equal(addr_from_sockaddr((struct sockaddr *)&in4, sizeof(in4), &a), 0);
	assert_int_equal(addr_parse_host("2130706433", &b), 1);
	assert_true(addr_equal(&a, &b));
	assert_int_equal(addr_format(&a, text, sizeof(text)), 0);
	assert_string_equal(text, "127.0.0.1");
	assert_int_equal(addr_from_sockaddr((struct sockaddr *)&in4, 4, &a), -1);

	memset(&in6, 0, sizeof(in6));
	in6.sin6_family = AF_INET6;
	assert_int_equal(inet_pton(AF_INET6, "2001:db8::5", &in6.sin6_addr), 1);
	assert_int_equal(addr_from_sockaddr((struct sockaddr *)&in6, sizeof(in6), &a), 0);
	assert_int_equal(addr_format(&a, text, sizeof(text)), 0);
	assert_string_equal(text, "[2001:db8::5]");
	assert_int_equal(addr_parse_host("[2001:db8::6]", &b), 1);
	assert_false(addr_equal(&a, &b));
	assert_int_equal(addr_parse_host("127.0.0.1", &b), 1);
	assert_false(addr_equal(&a, &b));
	assert_int_equal(addr_format(&a, text, 8), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_spelling_classified),
		cmocka_unit_test(only_public_allowed),
		cmocka_unit_test(parse_v4_bytes),
		cmocka_unit_test(sockaddr_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
