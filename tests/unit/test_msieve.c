/* msieve: the ManageSieve client over a socketpair. The "server" end is
 * written before the client runs (its whole script of answers) and read
 * afterwards (what the client sent): the greeting and its capabilities,
 * AUTHENTICATE PLAIN's bytes, PUTSCRIPT's literal, a NO with a literal
 * naming the line, a NO with a response code, BYE, garbage, answers cut
 * short, bounds, the TLS policy, the deadline, the capabilities read
 * word by word, a SASL continuation. Then connecting to an IP literal,
 * the parser alone (a line's bound the same whole or cut), and the
 * configuration the routes read. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "cfg.h"
#include "msieve.h"
#include "sieve.h"

#define MAX 4096
#define CYRUS_GREETING \
	"\"IMPLEMENTATION\" \"Cyrus timsieved 3.6.1\"\r\n" \
	"\"SASL\" \"PLAIN LOGIN\"\r\n" \
	"\"SIEVE\" \"fileinto vacation vacation-seconds mailbox\"\r\n" \
	"\"UNAUTHENTICATE\"\r\n" \
	"\"VERSION\" \"1.0\"\r\n" \
	"OK\r\n"
/* base64("\0alice\0secret") */
#define AUTH_LINE "AUTHENTICATE \"PLAIN\" \"AGFsaWNlAHNlY3JldA==\"\r\n"

struct pair {
	struct msieve_opts o;
	struct msieve s;
	int server;
};

/* A client on one end of a socketpair, the server's answers already
 * written to the other (then its write side shut when eof is set). */
static void start(struct pair *p, const char *answers, size_t n, int eof,
    int tls, long timeout)
{
	int sv[2];

	memset(p, 0, sizeof(*p));
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(fcntl(sv[0], F_SETFL, O_NONBLOCK), 0);
	assert_int_equal(write(sv[1], answers, n), (ssize_t)n);
	if (eof)
		shutdown(sv[1], SHUT_WR);
	p->o.host = "localhost";
	p->o.port = "4190";
	p->o.tls = tls;
	p->o.connect_timeout = 1;
	p->o.timeout = timeout;
	p->o.max = MAX;
	msieve_init(&p->s, &p->o);
	p->s.fd = sv[0];
	p->s.loopback = 1;
	p->server = sv[1];
}

#define START(p, answers, eof) \
	start(p, answers, sizeof(answers) - 1, eof, MSIEVE_TLS_AUTO, 5)
/* Signed in to a Cyrus-like server, which then answers answers. */
#define SIGNED_IN(p, answers) do { \
	START(p, CYRUS_GREETING "OK\r\n" answers, 0); \
	assert_int_equal(msieve_login(&(p)->s, "alice", "secret"), MSIEVE_OK); \
} while (0)

static char *finish(struct pair *p);

/* Closes the client and checks that it sent want, no more. */
static void sent_is(struct pair *p, const char *want)
{
	char *sent = finish(p);

	assert_string_equal(sent, want);
	free(sent);
}

/* Closes the client and returns what it sent (caller frees). */
static char *finish(struct pair *p)
{
	char *got = calloc(1, 65536);
	ssize_t k;
	size_t n = 0;

	assert_non_null(got);
	msieve_close(&p->s);
	while (n < 65535 && (k = read(p->server, got + n, 65535 - n)) > 0)
		n += (size_t)k;
	close(p->server);
	return got;
}

static void greeting_and_auth(void **state)
{
	struct pair p;

	(void)state;
	SIGNED_IN(&p, "OK \"bye\"\r\n");
	assert_true(p.s.plain);
	assert_false(p.s.starttls);
	assert_string_equal(p.s.sieve, "fileinto vacation vacation-seconds mailbox");
	/* AUTHENTICATE PLAIN with the initial response, then LOGOUT. */
	sent_is(&p, AUTH_LINE "LOGOUT\r\n");
}

static void auth_refused(void **state)
{
	struct pair p;

	(void)state;
	START(&p, CYRUS_GREETING "NO \"Authentication Error\"\r\n", 0);
	assert_int_equal(msieve_login(&p.s, "alice", "secret"), MSIEVE_REFUSED);
	/* A failed connection is not used again: no LOGOUT. */
	sent_is(&p, AUTH_LINE);
}

static void putscript_literal(void **state)
{
	static const char script[] = "require \"fileinto\";\r\nfileinto \"Invoices\";\r\n";
	struct pair p;

	(void)state;
	SIGNED_IN(&p, "OK\r\nOK\r\nOK\r\n");
	assert_int_equal(msieve_putscript(&p.s, "postern", script,
	    sizeof(script) - 1), MSIEVE_OK);
	assert_int_equal(msieve_setactive(&p.s, "postern"), MSIEVE_OK);
	sent_is(&p, AUTH_LINE
	    "PUTSCRIPT \"postern\" {43+}\r\n"
	    "require \"fileinto\";\r\nfileinto \"Invoices\";\r\n\r\n"
	    "SETACTIVE \"postern\"\r\nLOGOUT\r\n");
}

/* Cyrus's refusal of a script: NO with the reason as a literal. */
static void no_with_line(void **state)
{
	struct pair p;

	(void)state;
	SIGNED_IN(&p, "NO {22}\r\nline 4: syntax error\r\n\r\nOK\r\n");
	assert_int_equal(msieve_checkscript(&p.s, "x", 1), MSIEVE_NO);
	assert_string_equal(buf_str(&p.s.resp.text), "line 4: syntax error\r\n");
	assert_int_equal(msieve_error_line(buf_str(&p.s.resp.text)), 4);
	assert_string_equal(p.s.resp.code, "");
	sent_is(&p, AUTH_LINE "CHECKSCRIPT {1+}\r\nx\r\nLOGOUT\r\n");
}

static void no_with_code(void **state)
{
	struct pair p;

	(void)state;
	SIGNED_IN(&p, "NO (QUOTA/MAXSCRIPTS) \"Too many scripts\"\r\nOK\r\n");
	assert_int_equal(msieve_putscript(&p.s, "postern", "keep;", 5), MSIEVE_NO);
	assert_string_equal(p.s.resp.code, "QUOTA/MAXSCRIPTS");
	assert_string_equal(buf_str(&p.s.resp.text), "Too many scripts");
	assert_int_equal(msieve_error_line(buf_str(&p.s.resp.text)), 0);
	sent_is(&p, AUTH_LINE "PUTSCRIPT \"postern\" {5+}\r\nkeep;\r\nLOGOUT\r\n");
}

static void list_and_get(void **state)
{
	struct pair p;

	(void)state;
	SIGNED_IN(&p,
	    "\"other\"\r\n\"post\\\"ern\" ACTIVE\r\nOK\r\n"
	    "{6}\r\nkeep;\n\r\nOK\r\nOK\r\n");
	assert_int_equal(msieve_listscripts(&p.s), MSIEVE_OK);
	assert_int_equal(p.s.resp.n_items, 2);
	assert_string_equal(msieve_key(&p.s.resp, 0), "other");
	assert_string_equal(msieve_val(&p.s.resp, 0), "");
	assert_string_equal(msieve_key(&p.s.resp, 1), "post\"ern");
	assert_string_equal(msieve_val(&p.s.resp, 1), "ACTIVE");
	/* A name the server gave goes back quoted as it came. */
	assert_int_equal(msieve_getscript(&p.s, "post\"ern"), MSIEVE_OK);
	assert_int_equal(p.s.resp.n_items, 1);
	assert_string_equal(msieve_key(&p.s.resp, 0), "keep;\n");
	sent_is(&p, AUTH_LINE "LISTSCRIPTS\r\n"
	    "GETSCRIPT \"post\\\"ern\"\r\nLOGOUT\r\n");
}

/* The server ends the session: a BYE instead of an answer. */
static void bye(void **state)
{
	struct pair p;

	(void)state;
	SIGNED_IN(&p, "BYE \"Too many errors\"\r\n");
	assert_int_equal(msieve_listscripts(&p.s), MSIEVE_PROTOCOL);
	sent_is(&p, AUTH_LINE "LISTSCRIPTS\r\n");
	/* A BYE for a greeting: no ManageSieve to be had there. */
	START(&p, "BYE \"Server shutting down\"\r\n", 1);
	assert_int_equal(msieve_login(&p.s, "alice", "secret"), MSIEVE_UNAVAILABLE);
	sent_is(&p, "");
}

static void garbage(void **state)
{
	struct pair p;

	(void)state;
	/* Not a ManageSieve greeting (an HTTP server, an SMTP banner). */
	START(&p, "220 mail.example.test ESMTP\r\n", 0);
	assert_int_equal(msieve_login(&p.s, "alice", "secret"), MSIEVE_UNAVAILABLE);
	sent_is(&p, "");
	/* An OK without the capabilities of one (no SIEVE). */
	START(&p, "\"IMPLEMENTATION\" \"x\"\r\n\"SASL\" \"PLAIN\"\r\nOK\r\nOK\r\n", 0);
	assert_int_equal(msieve_login(&p.s, "alice", "secret"), MSIEVE_UNAVAILABLE);
	sent_is(&p, "");
	/* Garbage after a good greeting is the server's error. */
	SIGNED_IN(&p, "* 42 EXISTS\r\n");
	assert_int_equal(msieve_listscripts(&p.s), MSIEVE_PROTOCOL);
	free(finish(&p));
}

static void truncated(void **state)
{
	struct pair p;

	(void)state;
	/* The connection closes in the middle of the greeting. */
	START(&p, "\"IMPLEMENTATION\" \"Cyrus\"\r\n\"SIEVE\" \"filein", 1);
	assert_int_equal(msieve_login(&p.s, "alice", "secret"), MSIEVE_UNAVAILABLE);
	free(finish(&p));
	/* ... or in a literal after it. */
	START(&p, CYRUS_GREETING "OK\r\n{60}\r\nrequire", 1);  /* then EOF */
	assert_int_equal(msieve_login(&p.s, "alice", "secret"), MSIEVE_OK);
	assert_int_equal(msieve_getscript(&p.s, "postern"), MSIEVE_PROTOCOL);
	free(finish(&p));
}

/* A greeting that never comes: the deadline, not a hang. */
static void deadline(void **state)
{
	struct pair p;

	(void)state;
	start(&p, "", 0, 0, MSIEVE_TLS_AUTO, 1);
	assert_int_equal(msieve_login(&p.s, "alice", "secret"), MSIEVE_TIMEOUT);
	free(finish(&p));
}

/* LOGOUT's answer is awaited a second, not the whole deadline (30 s
 * here): half of it tells the two apart on any machine. */
static void logout_bounded(void **state)
{
	struct timespec a, b;
	struct pair p;
	char *sent;

	(void)state;
	start(&p, CYRUS_GREETING "OK\r\n", sizeof(CYRUS_GREETING "OK\r\n") - 1, 0,
	    MSIEVE_TLS_AUTO, 30);
	assert_int_equal(msieve_login(&p.s, "alice", "secret"), MSIEVE_OK);
	clock_gettime(CLOCK_MONOTONIC, &a);
	sent = finish(&p);
	clock_gettime(CLOCK_MONOTONIC, &b);
	assert_true(b.tv_sec - a.tv_sec < 15);
	assert_string_equal(sent, AUTH_LINE "LOGOUT\r\n");
	free(sent);
}

/* No password in clear where TLS is wanted and not offered. */
static void tls_policy(void **state)
{
	struct pair p;
	char *sent;

	(void)state;
	start(&p, CYRUS_GREETING, sizeof(CYRUS_GREETING) - 1, 0,
	    MSIEVE_TLS_STARTTLS, 5);
	assert_int_equal(msieve_login(&p.s, "alice", "secret"), MSIEVE_UNAVAILABLE);
	sent_is(&p, "");
	/* auto: refused away from loopback ... */
	START(&p, CYRUS_GREETING, 0);
	p.s.loopback = 0;
	assert_int_equal(msieve_login(&p.s, "alice", "secret"), MSIEVE_UNAVAILABLE);
	sent_is(&p, "");
	/* ... and "no" sends it anyway, as the operator asked. */
	start(&p, CYRUS_GREETING "OK\r\n", sizeof(CYRUS_GREETING "OK\r\n") - 1, 0,
	    MSIEVE_TLS_NO, 5);
	p.s.loopback = 0;
	assert_int_equal(msieve_login(&p.s, "alice", "secret"), MSIEVE_OK);
	p.s.failed = 1;
	sent_is(&p, AUTH_LINE);
	/* Offered: STARTTLS goes first; bytes sent in clear after its OK
	 * would pass for answers under TLS: refused. */
	START(&p, "\"IMPLEMENTATION\" \"x\"\r\n\"SIEVE\" \"fileinto\"\r\n"
	    "\"STARTTLS\"\r\n\"SASL\" \"\"\r\nOK\r\nOK\r\nOK\r\n", 1);
	assert_int_equal(msieve_login(&p.s, "alice", "secret"), MSIEVE_PROTOCOL);
	sent_is(&p, "STARTTLS\r\n");
	/* A handshake with no TLS server behind it. */
	START(&p, "\"IMPLEMENTATION\" \"x\"\r\n\"SIEVE\" \"fileinto\"\r\n"
	    "\"STARTTLS\"\r\n\"SASL\" \"PLAIN\"\r\nOK\r\nOK\r\n", 1);
	assert_int_equal(msieve_login(&p.s, "alice", "secret"), MSIEVE_UNAVAILABLE);
	sent = finish(&p);
	assert_memory_equal(sent, "STARTTLS\r\n\x16\x03", 12);
	free(sent);
}

/* SASL's mechanisms are words: PLAIN is not in XPLAINED. */
static void sasl_words(void **state)
{
	struct pair p;

	(void)state;
	START(&p, "\"IMPLEMENTATION\" \"x\"\r\n\"SASL\" \"XPLAINED LOGIN\"\r\n"
	    "\"SIEVE\" \"fileinto\"\r\nOK\r\nOK\r\n", 0);
	assert_int_equal(msieve_login(&p.s, "alice", "secret"), MSIEVE_UNAVAILABLE);
	assert_false(p.s.plain);
	sent_is(&p, "");
	START(&p, "\"IMPLEMENTATION\" \"x\"\r\n\"SASL\" \"LOGIN plain\"\r\n"
	    "\"SIEVE\" \"fileinto\"\r\nOK\r\nOK\r\n", 0);
	assert_int_equal(msieve_login(&p.s, "alice", "secret"), MSIEVE_OK);
	assert_true(p.s.plain);
	p.s.failed = 1;
	sent_is(&p, AUTH_LINE);
}

/* A SIEVE capability longer than s->sieve is cut after a whole word. */
static void sieve_cut(void **state)
{
	char greeting[4096], exts[2048], *v;
	struct pair p;
	size_t n = 0, k;
	int i, len;

	(void)state;
	for (i = 0; n < 1200; i++)
		n += (size_t)snprintf(exts + n, sizeof(exts) - n, "%sext-%d",
		    i ? " " : "", i * 7);
	len = snprintf(greeting, sizeof(greeting), "\"IMPLEMENTATION\" \"x\"\r\n"
	    "\"SASL\" \"PLAIN\"\r\n\"SIEVE\" \"%s\"\r\nOK\r\nOK\r\n", exts);
	start(&p, greeting, (size_t)len, 0, MSIEVE_TLS_AUTO, 5);
	assert_int_equal(msieve_login(&p.s, "alice", "secret"), MSIEVE_OK);
	v = p.s.sieve;
	k = strlen(v);
	assert_true(k > 900 && k < sizeof(p.s.sieve));
	assert_memory_equal(v, exts, k);
	assert_int_equal(exts[k], ' ');
	p.s.failed = 1;
	free(finish(&p));
}

/* AUTHENTICATE answered with a continuation (a string line, the server
 * asking for another step): cancelled with "*" and refused at once, not
 * awaited until the deadline. */
static void sasl_continuation(void **state)
{
	struct pair p;

	(void)state;
	start(&p, CYRUS_GREETING "\"\"\r\n", sizeof(CYRUS_GREETING "\"\"\r\n") - 1,
	    0, MSIEVE_TLS_AUTO, 2);
	assert_int_equal(msieve_login(&p.s, "alice", "secret"), MSIEVE_REFUSED);
	sent_is(&p, AUTH_LINE "*\r\n");
	start(&p, CYRUS_GREETING "{4}\r\nYWJj\r\n",
	    sizeof(CYRUS_GREETING "{4}\r\nYWJj\r\n") - 1, 0, MSIEVE_TLS_AUTO, 2);
	assert_int_equal(msieve_login(&p.s, "alice", "secret"), MSIEVE_REFUSED);
	sent_is(&p, AUTH_LINE "*\r\n");
}

/* An IP literal is connected to without a lookup, and judged loopback
 * by its address. */
static void connect_ip(void **state)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	struct msieve_opts o;
	struct msieve s;
	char port[8];
	int l;

	(void)state;
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true((l = socket(AF_INET, SOCK_STREAM, 0)) != -1);
	assert_int_equal(bind(l, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(listen(l, 1), 0);
	assert_int_equal(getsockname(l, (struct sockaddr *)&sin, &len), 0);
	snprintf(port, sizeof(port), "%u", ntohs(sin.sin_port));
	memset(&o, 0, sizeof(o));
	o.host = "127.0.0.1";
	o.port = port;
	o.connect_timeout = 2;
	o.timeout = 2;
	o.max = MAX;
	msieve_init(&s, &o);
	assert_int_equal(msieve_connect(&s), MSIEVE_OK);
	assert_true(s.loopback);
	s.failed = 1;
	msieve_close(&s);
	close(l);
}

static int parse(const char *s, struct msieve_resp *m, size_t *used)
{
	return msieve_parse(s, strlen(s), m, used);
}

static void parser(void **state)
{
	struct msieve_resp m;
	size_t used = 0;
	char *big;

	(void)state;
	msieve_resp_init(&m, MAX);
	assert_int_equal(parse("OK (WARNINGS) \"line 2: odd\"\r\nrest", &m, &used),
	    MSIEVE_PARSED);
	assert_int_equal(used, 29);
	assert_int_equal(m.status, MSIEVE_ST_OK);
	assert_string_equal(m.code, "WARNINGS");
	assert_string_equal(buf_str(&m.text), "line 2: odd");
	/* Cut anywhere, it asks for more; a literal, for all of itself. */
	assert_int_equal(parse("\"SIEVE\" \"file", &m, &used), MSIEVE_MORE);
	assert_int_equal(parse("{10}\r\nabc", &m, &used), MSIEVE_MORE);
	assert_int_equal(used, 16);
	assert_int_equal(parse("ok", &m, &used), MSIEVE_MORE);
	assert_int_equal(parse("ok\r\n", &m, &used), MSIEVE_PARSED);
	assert_int_equal(parse("NO \"x\"", &m, &used), MSIEVE_MORE);
	/* Not ManageSieve. */
	assert_int_equal(parse("MAYBE\r\n", &m, &used), MSIEVE_BAD);
	assert_int_equal(parse("OK\n", &m, &used), MSIEVE_BAD);
	assert_int_equal(parse("\"a\\x\"\r\nOK\r\n", &m, &used), MSIEVE_BAD);
	assert_int_equal(parse("{}\r\n\r\nOK\r\n", &m, &used), MSIEVE_BAD);
	assert_int_equal(msieve_parse("{3}\r\na\0b\r\nOK\r\n", 14, &m, &used),
	    MSIEVE_BAD);
	/* A literal over the bound is refused before its bytes come. */
	assert_int_equal(parse("{4097}\r\n", &m, &used), MSIEVE_BAD);
	assert_int_equal(parse("{4096}\r\n", &m, &used), MSIEVE_MORE);
	assert_int_equal(parse("NO {99999999999999999999}\r\n", &m, &used), MSIEVE_BAD);
	/* A line over the bound is refused before it ends. */
	big = malloc(MSIEVE_LINE_MAX + 16);
	assert_non_null(big);
	memset(big, 'a', MSIEVE_LINE_MAX + 15);
	big[0] = '"';
	big[MSIEVE_LINE_MAX + 15] = '\0';
	assert_int_equal(parse(big, &m, &used), MSIEVE_BAD);
	big[MSIEVE_LINE_MAX - 10] = '\0';
	assert_int_equal(parse(big, &m, &used), MSIEVE_MORE);
	free(big);
	msieve_resp_free(&m);
}

/* Whole, cut past the bound, or cut before it: an over-long line is
 * refused the same; one within it parses whole and asks for more cut. */
static void line_bound(void **state)
{
	struct msieve_resp m;
	size_t used, n, i;
	char *s = malloc(65536);

	(void)state;
	assert_non_null(s);
	msieve_resp_init(&m, MAX);
	/* A data line of 20000 atoms: 40 KB. */
	memcpy(s, "\"a\"", 3);
	for (n = 3, i = 0; i < 20000; i++, n += 2)
		memcpy(s + n, " b", 2);
	memcpy(s + n, "\r\nOK\r\n", 6);
	n += 6;
	assert_int_equal(msieve_parse(s, n, &m, &used), MSIEVE_BAD);
	assert_int_equal(msieve_parse(s, n / 2, &m, &used), MSIEVE_BAD);
	assert_int_equal(msieve_parse(s, 100, &m, &used), MSIEVE_MORE);
	/* A literal's length with 10000 leading zeros. */
	s[0] = '{';
	memset(s + 1, '0', 10000);
	memcpy(s + 10001, "5}\r\nhello\r\nOK\r\n", 15);
	n = 10016;
	assert_int_equal(msieve_parse(s, n, &m, &used), MSIEVE_BAD);
	assert_int_equal(msieve_parse(s, n / 2, &m, &used), MSIEVE_BAD);
	assert_int_equal(msieve_parse(s, 100, &m, &used), MSIEVE_MORE);
	/* 4096 bytes and CRLF: parsed, every prefix asks for more... */
	memcpy(s, "\"ab\"", 4);
	for (n = 4; n < MSIEVE_LINE_MAX; n += 2)
		memcpy(s + n, " b", 2);
	memcpy(s + n, "\r\nOK\r\n", 6);
	n += 6;
	assert_int_equal(msieve_parse(s, n, &m, &used), MSIEVE_PARSED);
	assert_int_equal(used, n);
	assert_int_equal(m.n_items, 1);
	for (i = 0; i < n; i++)
		assert_int_equal(msieve_parse(s, i, &m, &used), MSIEVE_MORE);
	/* ... and a byte more is refused. */
	memmove(s + 2, s + 1, n++ - 1);
	s[1] = 'a';
	assert_int_equal(msieve_parse(s, n, &m, &used), MSIEVE_BAD);
	msieve_resp_free(&m);
	free(s);
}

static void too_many_lines(void **state)
{
	struct msieve_resp m;
	char *s = malloc((MSIEVE_ITEMS_MAX + 1) * 6 + 8);
	size_t used, i;

	(void)state;
	assert_non_null(s);
	msieve_resp_init(&m, MAX);
	for (i = 0; i < MSIEVE_ITEMS_MAX + 1; i++)
		memcpy(s + i * 6, "\"ab\"\r\n", 6);
	strcpy(s + (MSIEVE_ITEMS_MAX + 1) * 6, "OK\r\n");
	assert_int_equal(parse(s, &m, &used), MSIEVE_BAD);
	/* One fewer is fine. */
	assert_int_equal(parse(s + 6, &m, &used), MSIEVE_PARSED);
	assert_int_equal(m.n_items, MSIEVE_ITEMS_MAX);
	msieve_resp_free(&m);
	free(s);
}

static void error_lines(void **state)
{
	(void)state;
	assert_int_equal(msieve_error_line("line 4: syntax error"), 4);
	assert_int_equal(msieve_error_line("script.sieve: line 12, col 3: x"), 12);
	assert_int_equal(msieve_error_line("Too many scripts"), 0);
	assert_int_equal(msieve_error_line("line x: y"), 0);
	assert_int_equal(msieve_error_line("line 0: y"), 0);
	assert_int_equal(msieve_error_line("line 1: y"), 1);
}

static void names(void **state)
{
	(void)state;
	assert_true(msieve_name_ok("postern"));
	assert_true(msieve_name_ok("My filters 2.0_a-b"));
	assert_false(msieve_name_ok(""));
	assert_false(msieve_name_ok("a\"b"));
	assert_false(msieve_name_ok("a\\b"));
	assert_false(msieve_name_ok("a/b"));
	assert_false(msieve_name_ok("caf\xc3\xa9"));
	assert_true(msieve_name_ok("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
	assert_false(msieve_name_ok("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
}

/* The host the routes connect to, and the keys that choose it. */
static void config(void **state)
{
	struct cfg c;
	char host[256], err[256];

	(void)state;
	cfg_defaults(&c);
	assert_int_equal(cfg_set(&c, "upstream", "http://mail.example.test:8080",
	    err, sizeof(err)), 0);
	assert_true(cfg_sieve_on(&c));
	assert_int_equal(c.sieve_port, 4190);
	assert_int_equal(c.sieve_tls, CFG_SIEVE_TLS_AUTO);
	assert_int_equal(sieve_host(&c, host, sizeof(host)), 0);
	assert_string_equal(host, "mail.example.test");
	assert_int_equal(cfg_set(&c, "upstream", "http://[::1]:8080", err,
	    sizeof(err)), 0);
	assert_int_equal(sieve_host(&c, host, sizeof(host)), 0);
	assert_string_equal(host, "::1");
	assert_int_equal(cfg_set(&c, "sieve_host", "sieve.example.test", err,
	    sizeof(err)), 0);
	assert_int_equal(sieve_host(&c, host, sizeof(host)), 0);
	assert_string_equal(host, "sieve.example.test");
	assert_int_equal(cfg_set(&c, "sieve_tls", "starttls", err, sizeof(err)), 0);
	assert_int_equal(c.sieve_tls, CFG_SIEVE_TLS_STARTTLS);
	assert_int_equal(cfg_set(&c, "sieve_tls", "maybe", err, sizeof(err)), -1);
	assert_int_equal(cfg_set(&c, "sieve_port", "0", err, sizeof(err)), -1);
	assert_int_equal(cfg_set(&c, "sieve_port", "65536", err, sizeof(err)), -1);
	assert_int_equal(cfg_set(&c, "sieve_host", "a b", err, sizeof(err)), 0);
	assert_int_equal(cfg_check(&c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "sieve_host"));
	assert_int_equal(cfg_set(&c, "sieve_host", "off", err, sizeof(err)), 0);
	assert_false(cfg_sieve_on(&c));
	assert_int_equal(cfg_check(&c, err, sizeof(err)), 0);
	cfg_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(greeting_and_auth),
		cmocka_unit_test(auth_refused),
		cmocka_unit_test(putscript_literal),
		cmocka_unit_test(no_with_line),
		cmocka_unit_test(no_with_code),
		cmocka_unit_test(list_and_get),
		cmocka_unit_test(bye),
		cmocka_unit_test(garbage),
		cmocka_unit_test(truncated),
		cmocka_unit_test(deadline),
		cmocka_unit_test(logout_bounded),
		cmocka_unit_test(tls_policy),
		cmocka_unit_test(sasl_words),
		cmocka_unit_test(sieve_cut),
		cmocka_unit_test(sasl_continuation),
		cmocka_unit_test(connect_ip),
		cmocka_unit_test(parser),
		cmocka_unit_test(line_bound),
		cmocka_unit_test(too_many_lines),
		cmocka_unit_test(error_lines),
		cmocka_unit_test(names),
		cmocka_unit_test(config),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
