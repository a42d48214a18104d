/* cfg: defaults, every value type, unknown keys, and cfg_load's file:line
 * errors. */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cfg.h"
#include "log.h"

static char err[512];

/* cfg_set over a fresh default configuration: the result, c kept. */
static int set1(struct cfg *c, const char *key, const char *value)
{
	err[0] = '\0';
	return cfg_set(c, key, value, err, sizeof(err));
}

static void defaults_are_documented_values(void **state)
{
	struct cfg c;

	cfg_defaults(&c);
	assert_string_equal(c.name, "postern");
	assert_null(c.upstream);
	assert_string_equal(c.upstream_session_path, "/.well-known/jmap");
	assert_int_equal(c.upstream_follow_advertised, 0);
	assert_null(c.upstream_ca_file);
	assert_int_equal(c.upstream_connect_timeout, 5);
	assert_int_equal(c.upstream_timeout, 60);
	assert_non_null(c.state_db);
	assert_non_null(c.secret_file);
	assert_int_equal(c.session_idle, 12 * 3600);
	assert_int_equal(c.session_remember_idle, 30 * 86400);
	assert_int_equal(c.session_lifetime, 90 * 86400);
	assert_int_equal(c.session_recheck, 60);
	assert_int_equal(c.cookie_secure, CFG_SECURE_AUTO);
	assert_int_equal(c.login_limit_user, 10);
	assert_int_equal(c.login_limit_ip, 50);
	assert_int_equal(c.login_limit_all, 1000);
	assert_int_equal(c.login_window, 15 * 60);
	assert_int_equal(c.login_ipv6_prefix, 64);
	assert_int_equal(c.push_streams_per_session, 4);
	assert_int_equal(c.push_streams_per_ip, 256);
	assert_int_equal(c.api_budget, 1200);
	assert_int_equal(c.api_budget_window, 60);
	assert_true(c.max_request == 10LL << 20);
	assert_true(c.upload_max == 50LL << 20);
	assert_int_equal(c.compress, 1);
	assert_int_equal(c.image_proxy, 1);
	assert_int_equal(c.n_trusted_proxies, 0);
	assert_int_equal(c.log_level, LOG_INFO);
	assert_int_equal(c.push_mode, CFG_PUSH_AUTO);
	assert_int_equal(c.push_poll_interval, 30);
	assert_int_equal(c.push_poll_visible, 4);
	assert_null(c.push_public_url);
	assert_non_null(c.pushd_socket);
	cfg_free(&c);
}

static void string_replaces_value(void **state)
{
	struct cfg c;

	cfg_defaults(&c);
	assert_int_equal(set1(&c, "name", "Example Mail"), 0);
	assert_string_equal(c.name, "Example Mail");
	assert_int_equal(set1(&c, "name", "Second"), 0);
	assert_string_equal(c.name, "Second");
	assert_int_equal(set1(&c, "upstream_ca_file", "/etc/ssl/ca.pem"), 0);
	assert_string_equal(c.upstream_ca_file, "/etc/ssl/ca.pem");
	/* An empty value unsets an optional string. */
	assert_int_equal(set1(&c, "upstream_ca_file", ""), 0);
	assert_null(c.upstream_ca_file);
	cfg_free(&c);
}

static void url_accepts_http_and_https(void **state)
{
	struct cfg c;

	cfg_defaults(&c);
	assert_int_equal(set1(&c, "upstream", "http://127.0.0.1:8080"), 0);
	assert_string_equal(c.upstream, "http://127.0.0.1:8080");
	assert_int_equal(set1(&c, "upstream", "https://mail.example.com/base"), 0);
	assert_string_equal(c.upstream, "https://mail.example.com/base");
	assert_int_equal(set1(&c, "push_public_url", "https://webmail.example.com"), 0);
	assert_string_equal(c.push_public_url, "https://webmail.example.com");
	cfg_free(&c);
}

static void url_rejects_other_schemes(void **state)
{
	static const char *const bad[] = {
		"ftp://mail.example.com", "file:///etc/passwd", "mail.example.com",
		"//mail.example.com", "http:/mail.example.com", "HTTP://x",
		"javascript:alert(1)", "", "http://", "https://", "http:///path",
	};
	struct cfg c;
	size_t i;

	cfg_defaults(&c);
	assert_int_equal(set1(&c, "upstream", "http://127.0.0.1:8080"), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (set1(&c, "upstream", bad[i]) != -1)
			fail_msg("upstream = \"%s\" was accepted", bad[i]);
		assert_non_null(strstr(err, "upstream"));
	}
	/* A refused value leaves the old one. */
	assert_string_equal(c.upstream, "http://127.0.0.1:8080");
	cfg_free(&c);
}

static void url_rejects_credentials(void **state)
{
	struct cfg c;

	cfg_defaults(&c);
	assert_int_equal(set1(&c, "upstream", "http://user:pass@127.0.0.1:8080"), -1);
	assert_int_equal(set1(&c, "upstream", "https://user@mail.example.com"), -1);
	assert_null(c.upstream);
	cfg_free(&c);
}

static void url_rejects_fragment(void **state)
{
	struct cfg c;

	cfg_defaults(&c);
	assert_int_equal(set1(&c, "upstream", "http://127.0.0.1:8080/#x"), -1);
	assert_int_equal(set1(&c, "push_public_url", "https://a.example#"), -1);
	assert_null(c.upstream);
	assert_null(c.push_public_url);
	cfg_free(&c);
}

static void url_rejects_white_space_and_quotes(void **state)
{
	struct cfg c;

	cfg_defaults(&c);
	assert_int_equal(set1(&c, "upstream", "http://a.example/ b"), -1);
	assert_int_equal(set1(&c, "upstream", "http://a.example/\"b"), -1);
	assert_int_equal(set1(&c, "upstream", "http://a.example/<b>"), -1);
	cfg_free(&c);
}

static void bool_accepts_six_words(void **state)
{
	static const struct { const char *s; int v; } ok[] = {
		{ "yes", 1 }, { "no", 0 }, { "true", 1 }, { "false", 0 },
		{ "on", 1 }, { "off", 0 },
	};
	struct cfg c;
	size_t i;
	int v;

	cfg_defaults(&c);
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		v = -7;
		assert_int_equal(cfg_parse_bool(ok[i].s, &v), 0);
		assert_int_equal(v, ok[i].v);
		c.compress = !ok[i].v;
		assert_int_equal(set1(&c, "compress", ok[i].s), 0);
		assert_int_equal(c.compress, ok[i].v);
	}
	cfg_free(&c);
}

static void bool_rejects_others(void **state)
{
	static const char *const bad[] = {
		"", "1", "0", "y", "n", "Yes", "TRUE", "enabled", "yes ", " no",
	};
	struct cfg c;
	size_t i;
	int v = 5;

	cfg_defaults(&c);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (cfg_parse_bool(bad[i], &v) != -1)
			fail_msg("bool \"%s\" was accepted", bad[i]);
		assert_int_equal(set1(&c, "image_proxy", bad[i]), -1);
	}
	assert_int_equal(v, 5);
	assert_int_equal(c.image_proxy, 1);
	cfg_free(&c);
}

static void int_bounds_are_inclusive(void **state)
{
	struct cfg c;

	cfg_defaults(&c);
	assert_int_equal(set1(&c, "login_limit_user", "1"), 0);
	assert_int_equal(c.login_limit_user, 1);
	assert_int_equal(set1(&c, "login_limit_user", "1000000"), 0);
	assert_int_equal(c.login_limit_user, 1000000);
	assert_int_equal(set1(&c, "login_limit_user", "0"), -1);
	assert_int_equal(set1(&c, "login_limit_user", "1000001"), -1);
	assert_int_equal(set1(&c, "login_limit_user", "-3"), -1);
	assert_int_equal(c.login_limit_user, 1000000);
	/* A prefix is 1 to 128 bits. */
	assert_int_equal(set1(&c, "login_ipv6_prefix", "56"), 0);
	assert_int_equal(c.login_ipv6_prefix, 56);
	assert_int_equal(set1(&c, "login_ipv6_prefix", "128"), 0);
	assert_int_equal(set1(&c, "login_ipv6_prefix", "0"), -1);
	assert_int_equal(set1(&c, "login_ipv6_prefix", "129"), -1);
	assert_int_equal(c.login_ipv6_prefix, 128);
	/* The stream caps allow 0 (no cap). */
	assert_int_equal(set1(&c, "push_streams_per_session", "0"), 0);
	assert_int_equal(c.push_streams_per_session, 0);
	assert_int_equal(set1(&c, "push_streams_per_ip", "6"), 0);
	assert_int_equal(c.push_streams_per_ip, 6);
	assert_int_equal(set1(&c, "push_streams_per_ip", "-1"), -1);
	assert_int_equal(set1(&c, "push_streams_per_session", "1000001"), -1);
	/* api_budget allows 0 (off). */
	assert_int_equal(set1(&c, "api_budget", "0"), 0);
	assert_int_equal(c.api_budget, 0);
	assert_int_equal(set1(&c, "api_budget", "100000001"), -1);
	assert_int_equal(set1(&c, "api_budget_window", "5m"), 0);
	assert_int_equal(c.api_budget_window, 300);
	assert_int_equal(set1(&c, "api_budget_window", "0"), -1);
	/* session_recheck: 1 s to an hour. */
	assert_int_equal(set1(&c, "session_recheck", "5s"), 0);
	assert_int_equal(c.session_recheck, 5);
	assert_int_equal(set1(&c, "session_recheck", "1h"), 0);
	assert_int_equal(set1(&c, "session_recheck", "61m"), -1);
	assert_int_equal(set1(&c, "session_recheck", "0"), -1);
	cfg_free(&c);
}

static void int_rejects_non_numbers(void **state)
{
	static const char *const bad[] = {
		"", "ten", "10x", "1.5", "0x10", "10 ", "99999999999999999999",
	};
	struct cfg c;
	size_t i;

	cfg_defaults(&c);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (set1(&c, "login_limit_ip", bad[i]) != -1)
			fail_msg("login_limit_ip = \"%s\" was accepted", bad[i]);
	assert_int_equal(c.login_limit_ip, 50);
	cfg_free(&c);
}

static void duration_units(void **state)
{
	long v;

	assert_int_equal(cfg_parse_duration("90", &v), 0);
	assert_int_equal(v, 90);
	assert_int_equal(cfg_parse_duration("45s", &v), 0);
	assert_int_equal(v, 45);
	assert_int_equal(cfg_parse_duration("15m", &v), 0);
	assert_int_equal(v, 15 * 60);
	assert_int_equal(cfg_parse_duration("12h", &v), 0);
	assert_int_equal(v, 12 * 3600);
	assert_int_equal(cfg_parse_duration("30d", &v), 0);
	assert_int_equal(v, 30 * 86400);
	assert_int_equal(cfg_parse_duration("0", &v), 0);
	assert_int_equal(v, 0);
}

static void duration_rejects_bad_forms(void **state)
{
	static const char *const bad[] = {
		"-1", "1x", "1mm", "", "m", " 5", "5 ", "+5", "1.5h", "1M", "1D",
		"99999999999999999999", "9223372036854775807d",
		"106751991167301d", "153722867280912931m",
	};
	size_t i;
	long v = 77;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (cfg_parse_duration(bad[i], &v) != -1)
			fail_msg("duration \"%s\" was accepted (%ld)", bad[i], v);
	assert_int_equal(v, 77);
}

static void duration_key_checks_bounds(void **state)
{
	struct cfg c;

	cfg_defaults(&c);
	assert_int_equal(set1(&c, "session_idle", "1m"), 0);
	assert_int_equal(c.session_idle, 60);
	assert_int_equal(set1(&c, "session_idle", "59"), -1);
	assert_int_equal(set1(&c, "session_idle", "366d"), -1);
	assert_int_equal(set1(&c, "upstream_timeout", "2h"), -1);
	assert_int_equal(set1(&c, "upstream_timeout", "1h"), 0);
	assert_int_equal(c.upstream_timeout, 3600);
	assert_int_equal(set1(&c, "upstream_connect_timeout", "0"), -1);
	assert_int_equal(c.session_idle, 60);
	cfg_free(&c);
}

static void size_units(void **state)
{
	long long v;

	assert_int_equal(cfg_parse_size("10M", &v), 0);
	assert_true(v == 10LL << 20);
	assert_int_equal(cfg_parse_size("1G", &v), 0);
	assert_true(v == 1LL << 30);
	assert_int_equal(cfg_parse_size("512K", &v), 0);
	assert_true(v == 512LL << 10);
	assert_int_equal(cfg_parse_size("4096", &v), 0);
	assert_true(v == 4096);
}

static void size_rejects_bad_forms(void **state)
{
	static const char *const bad[] = {
		"10MB", "10m", "1k", "10 M", "", "M", "-1M", "1T",
		"99999999999999999G", "8589934592G",
	};
	size_t i;
	long long v = 77;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (cfg_parse_size(bad[i], &v) != -1)
			fail_msg("size \"%s\" was accepted (%lld)", bad[i], v);
	assert_true(v == 77);
}

static void size_key_checks_bounds(void **state)
{
	struct cfg c;

	cfg_defaults(&c);
	assert_int_equal(set1(&c, "max_request", "1K"), 0);
	assert_true(c.max_request == 1024);
	assert_int_equal(set1(&c, "max_request", "1023"), -1);
	assert_int_equal(set1(&c, "max_request", "2G"), -1);
	assert_int_equal(set1(&c, "upload_max", "1024G"), 0);
	assert_true(c.upload_max == 1LL << 40);
	assert_int_equal(set1(&c, "upload_max", "1025G"), -1);
	assert_true(c.max_request == 1024);
	cfg_free(&c);
}

static void enum_cookie_secure(void **state)
{
	struct cfg c;

	cfg_defaults(&c);
	assert_int_equal(set1(&c, "cookie_secure", "yes"), 0);
	assert_int_equal(c.cookie_secure, CFG_SECURE_YES);
	assert_int_equal(set1(&c, "cookie_secure", "no"), 0);
	assert_int_equal(c.cookie_secure, CFG_SECURE_NO);
	assert_int_equal(set1(&c, "cookie_secure", "auto"), 0);
	assert_int_equal(c.cookie_secure, CFG_SECURE_AUTO);
	assert_int_equal(set1(&c, "cookie_secure", "true"), -1);
	assert_int_equal(set1(&c, "cookie_secure", ""), -1);
	assert_int_equal(c.cookie_secure, CFG_SECURE_AUTO);
	cfg_free(&c);
}

static void enum_log_level(void **state)
{
	struct cfg c;

	cfg_defaults(&c);
	assert_int_equal(set1(&c, "log_level", "error"), 0);
	assert_int_equal(c.log_level, LOG_ERR);
	assert_int_equal(set1(&c, "log_level", "warning"), 0);
	assert_int_equal(c.log_level, LOG_WARN);
	assert_int_equal(set1(&c, "log_level", "debug"), 0);
	assert_int_equal(c.log_level, LOG_DEBUG);
	assert_int_equal(set1(&c, "log_level", "info"), 0);
	assert_int_equal(c.log_level, LOG_INFO);
	assert_int_equal(set1(&c, "log_level", "warn"), -1);
	assert_int_equal(set1(&c, "log_level", "INFO"), -1);
	assert_int_equal(c.log_level, LOG_INFO);
	cfg_free(&c);
}

static void push_mode_choices(void **state)
{
	static const char *const ok[] = {
		"auto", "subscription", "relay", "poll", "off",
	};
	struct cfg c;
	size_t i;

	cfg_defaults(&c);
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(set1(&c, "push_mode", ok[i]), 0);
		assert_string_equal(cfg_push_modes[c.push_mode], ok[i]);
	}
	assert_int_equal(set1(&c, "push_mode", "websocket"), -1);
	assert_int_equal(set1(&c, "push_mode", ""), -1);
	assert_int_equal(set1(&c, "push_mode", "Poll"), -1);
	assert_int_equal(c.push_mode, CFG_PUSH_OFF);
	cfg_free(&c);
}

static void trusted_proxies_list(void **state)
{
	struct cfg c;

	cfg_defaults(&c);
	assert_int_equal(set1(&c, "trusted_proxies", "127.0.0.1, ::1\t10.0.0.2"), 0);
	assert_int_equal(c.n_trusted_proxies, 3);
	assert_string_equal(c.trusted_proxies[0], "127.0.0.1");
	assert_string_equal(c.trusted_proxies[1], "::1");
	assert_string_equal(c.trusted_proxies[2], "10.0.0.2");
	/* A second assignment replaces the list. */
	assert_int_equal(set1(&c, "trusted_proxies", "192.0.2.1"), 0);
	assert_int_equal(c.n_trusted_proxies, 1);
	assert_string_equal(c.trusted_proxies[0], "192.0.2.1");
	assert_int_equal(set1(&c, "trusted_proxies", ""), 0);
	assert_int_equal(c.n_trusted_proxies, 0);
	cfg_free(&c);
}

static void trusted_proxies_more_than_16_refused(void **state)
{
	char list[512] = "";
	struct cfg c;
	int i;

	for (i = 1; i <= CFG_MAX_PROXIES; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list),
		    "10.0.0.%d ", i);
	cfg_defaults(&c);
	assert_int_equal(set1(&c, "trusted_proxies", list), 0);
	assert_int_equal(c.n_trusted_proxies, CFG_MAX_PROXIES);
	assert_string_equal(c.trusted_proxies[CFG_MAX_PROXIES - 1], "10.0.0.16");
	strcat(list, "10.0.0.17");
	assert_int_equal(set1(&c, "trusted_proxies", list), -1);
	assert_non_null(strstr(err, "trusted_proxies"));
	cfg_free(&c);
}

static void unknown_key_is_named(void **state)
{
	struct cfg c;

	cfg_defaults(&c);
	assert_int_equal(set1(&c, "upstream_url", "http://x"), -1);
	assert_non_null(strstr(err, "unknown key"));
	assert_non_null(strstr(err, "upstream_url"));
	assert_int_equal(set1(&c, "", "x"), -1);
	assert_int_equal(set1(&c, "Name", "x"), -1);
	assert_string_equal(c.name, "postern");
	cfg_free(&c);
}

static void bad_value_is_named(void **state)
{
	struct cfg c;

	cfg_defaults(&c);
	assert_int_equal(set1(&c, "session_idle", "soon"), -1);
	assert_non_null(strstr(err, "bad value"));
	assert_non_null(strstr(err, "session_idle"));
	cfg_free(&c);
}

/* Writes text to a new temporary file; path gets its name. */
static void write_conf(char *path, size_t n, const char *text)
{
	FILE *f;
	int fd;

	snprintf(path, n, "/tmp/postern-cfg-XXXXXX");
	assert_true((fd = mkstemp(path)) >= 0);
	assert_non_null(f = fdopen(fd, "w"));
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

/* Loads text; the cfg_load result, c left for the caller to check/free. */
static int load_text(struct cfg *c, const char *text, char *path, size_t n)
{
	int rc;

	write_conf(path, n, text);
	cfg_defaults(c);
	err[0] = '\0';
	rc = cfg_load(c, path, err, sizeof(err));
	unlink(path);
	return rc;
}

static void load_reads_keys_comments_and_blanks(void **state)
{
	char path[64];
	struct cfg c;

	assert_int_equal(load_text(&c,
	    "# postern.conf\n"
	    "\n"
	    "   # an indented comment = not a key\n"
	    "upstream = http://127.0.0.1:8080\n"
	    "name=Example   \n"
	    "  session_idle   =   15m  \n"
	    "\t\n"
	    "upstream_session_path = /jmap/a=b\r\n"
	    "compress = off", path, sizeof(path)), 0);
	assert_string_equal(c.upstream, "http://127.0.0.1:8080");
	assert_string_equal(c.name, "Example");
	assert_int_equal(c.session_idle, 900);
	assert_string_equal(c.upstream_session_path, "/jmap/a=b");
	assert_int_equal(c.compress, 0);
	cfg_free(&c);
}

/* node_name: the host name by default (what a name may not hold made
 * "-"), or one of 1 to 63 plain characters. */
static void node_name_default_and_checked(void **state)
{
	char path[64], host[256] = "", *p;
	struct cfg c;

	(void)state;
	assert_int_equal(load_text(&c, "upstream = http://127.0.0.1:8080\n",
	    path, sizeof(path)), 0);
	assert_int_equal(gethostname(host, sizeof(host) - 1), 0);
	host[63] = '\0';
	for (p = host; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr(".-_", *p))
			*p = '-';
	assert_string_equal(c.node_name, host);
	cfg_free(&c);
	assert_int_equal(load_text(&c, "upstream = http://127.0.0.1:8080\n"
	    "node_name = mail-2.example_1\n", path, sizeof(path)), 0);
	assert_string_equal(c.node_name, "mail-2.example_1");
	cfg_free(&c);
	assert_int_equal(load_text(&c, "upstream = http://127.0.0.1:8080\n"
	    "node_name = mail 2\n", path, sizeof(path)), -1);
	assert_non_null(strstr(err, "node_name is 1 to 63"));
	cfg_free(&c);
	assert_int_equal(load_text(&c, "upstream = http://127.0.0.1:8080\n"
	    "node_name = a234567890123456789012345678901234567890123456789012345678901234\n",
	    path, sizeof(path)), -1);
	cfg_free(&c);
}

static void load_hash_later_in_line_is_value(void **state)
{
	char path[64];
	struct cfg c;

	assert_int_equal(load_text(&c,
	    "upstream = http://127.0.0.1:8080\n"
	    "name = Mail # of Example\n", path, sizeof(path)), 0);
	assert_string_equal(c.name, "Mail # of Example");
	cfg_free(&c);
}

/* The message starts with "path:line: " for the bad line. */
static void assert_err_at(const char *path, int line, const char *what)
{
	char want[128];

	snprintf(want, sizeof(want), "%s:%d: ", path, line);
	if (strncmp(err, want, strlen(want)))
		fail_msg("error \"%s\" does not start with \"%s\"", err, want);
	if (what && strstr(err, what) == NULL)
		fail_msg("error \"%s\" does not mention \"%s\"", err, what);
}

static void load_unknown_key_names_line(void **state)
{
	char path[64];
	struct cfg c;

	assert_int_equal(load_text(&c,
	    "# comment\n"
	    "\n"
	    "upstream = http://127.0.0.1:8080\n"
	    "   # another\n"
	    "\n"
	    "sesion_idle = 1h\n"
	    "name = never reached\n", path, sizeof(path)), -1);
	assert_err_at(path, 6, "sesion_idle");
	assert_string_equal(c.name, "postern");
	cfg_free(&c);
}

static void load_bad_value_names_line(void **state)
{
	char path[64];
	struct cfg c;

	assert_int_equal(load_text(&c,
	    "upstream = http://127.0.0.1:8080\n"
	    "session_idle = 12h\n"
	    "max_request = 10MB\n", path, sizeof(path)), -1);
	assert_err_at(path, 3, "max_request");
	cfg_free(&c);
}

static void load_line_without_equals_names_line(void **state)
{
	char path[64];
	struct cfg c;

	assert_int_equal(load_text(&c,
	    "upstream = http://127.0.0.1:8080\n"
	    "\n"
	    "compress\n", path, sizeof(path)), -1);
	assert_err_at(path, 3, "key = value");
	cfg_free(&c);
}

static void load_bad_url_on_first_line(void **state)
{
	char path[64];
	struct cfg c;

	assert_int_equal(load_text(&c,
	    "upstream = http://u:p@127.0.0.1:8080\n", path, sizeof(path)), -1);
	assert_err_at(path, 1, "upstream");
	assert_null(c.upstream);
	cfg_free(&c);
}

static void load_too_long_line_names_line(void **state)
{
	char path[64], *text;
	struct cfg c;
	size_t n = 6000;

	assert_non_null(text = malloc(n + 64));
	strcpy(text, "upstream = http://127.0.0.1:8080\nname = ");
	memset(text + strlen(text), 'x', n);
	text[strlen("upstream = http://127.0.0.1:8080\nname = ") + n] = '\0';
	strcat(text, "\n");
	assert_int_equal(load_text(&c, text, path, sizeof(path)), -1);
	free(text);
	assert_err_at(path, 2, "too long");
	cfg_free(&c);
}

static void load_missing_upstream_fails_check(void **state)
{
	char path[64];
	struct cfg c;

	assert_int_equal(load_text(&c,
	    "# no upstream\n"
	    "name = Example\n", path, sizeof(path)), -1);
	assert_non_null(strstr(err, "upstream"));
	assert_int_equal(cfg_check(&c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "upstream is not set"));
	cfg_free(&c);
}

static void check_needs_state_paths(void **state)
{
	struct cfg c;

	cfg_defaults(&c);
	assert_int_equal(set1(&c, "upstream", "http://127.0.0.1:8080"), 0);
	assert_int_equal(cfg_check(&c, err, sizeof(err)), 0);
	assert_int_equal(set1(&c, "state_db", ""), 0);
	assert_int_equal(cfg_check(&c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "state_db"));
	cfg_free(&c);
}

static void carddav_path_checked(void **state)
{
	static const char *const bad[] = { "/", "dav/", "/dav", "//evil/", "/a/../b/",
	    "/a/./b/", "/a?b/", "/a%2e/", "/a b/" };
	struct cfg c;
	size_t i;

	cfg_defaults(&c);
	assert_int_equal(set1(&c, "upstream", "http://127.0.0.1:8080"), 0);
	assert_true(cfg_carddav_on(&c));
	assert_int_equal(cfg_check(&c, err, sizeof(err)), 0);
	assert_int_equal(set1(&c, "carddav_path", "/dav/card/"), 0);
	assert_int_equal(cfg_check(&c, err, sizeof(err)), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(set1(&c, "carddav_path", bad[i]), 0);
		assert_int_equal(cfg_check(&c, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "carddav_path"));
	}
	/* off, or empty: no address book. */
	assert_int_equal(set1(&c, "carddav_path", "off"), 0);
	assert_false(cfg_carddav_on(&c));
	assert_int_equal(cfg_check(&c, err, sizeof(err)), 0);
	assert_int_equal(set1(&c, "carddav_path", ""), 0);
	assert_false(cfg_carddav_on(&c));
	assert_int_equal(cfg_check(&c, err, sizeof(err)), 0);
	cfg_free(&c);
}

static void load_missing_file_names_path(void **state)
{
	struct cfg c;

	cfg_defaults(&c);
	assert_int_equal(cfg_load(&c, "/nonexistent/postern.conf", err,
	    sizeof(err)), -1);
	assert_non_null(strstr(err, "/nonexistent/postern.conf"));
	cfg_free(&c);
}

static void free_clears_everything(void **state)
{
	struct cfg c;
	int i;

	cfg_defaults(&c);
	assert_int_equal(set1(&c, "upstream", "http://127.0.0.1:8080"), 0);
	assert_int_equal(set1(&c, "upstream_ca_file", "/x"), 0);
	assert_int_equal(set1(&c, "push_public_url", "https://a.example"), 0);
	assert_int_equal(set1(&c, "trusted_proxies", "1.1.1.1 2.2.2.2"), 0);
	cfg_free(&c);
	/* Everything freed (valgrind checks) and zeroed. */
	assert_null(c.name);
	assert_null(c.upstream);
	assert_int_equal(c.n_trusted_proxies, 0);
	for (i = 0; i < CFG_MAX_PROXIES; i++)
		assert_null(c.trusted_proxies[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defaults_are_documented_values),
		cmocka_unit_test(string_replaces_value),
		cmocka_unit_test(url_accepts_http_and_https),
		cmocka_unit_test(url_rejects_other_schemes),
		cmocka_unit_test(url_rejects_credentials),
		cmocka_unit_test(url_rejects_fragment),
		cmocka_unit_test(url_rejects_white_space_and_quotes),
		cmocka_unit_test(bool_accepts_six_words),
		cmocka_unit_test(bool_rejects_others),
		cmocka_unit_test(int_bounds_are_inclusive),
		cmocka_unit_test(int_rejects_non_numbers),
		cmocka_unit_test(duration_units),
		cmocka_unit_test(duration_rejects_bad_forms),
		cmocka_unit_test(duration_key_checks_bounds),
		cmocka_unit_test(size_units),
		cmocka_unit_test(size_rejects_bad_forms),
		cmocka_unit_test(size_key_checks_bounds),
		cmocka_unit_test(enum_cookie_secure),
		cmocka_unit_test(enum_log_level),
		cmocka_unit_test(push_mode_choices),
		cmocka_unit_test(trusted_proxies_list),
		cmocka_unit_test(trusted_proxies_more_than_16_refused),
		cmocka_unit_test(unknown_key_is_named),
		cmocka_unit_test(bad_value_is_named),
		cmocka_unit_test(load_reads_keys_comments_and_blanks),
		cmocka_unit_test(node_name_default_and_checked),
		cmocka_unit_test(load_hash_later_in_line_is_value),
		cmocka_unit_test(load_unknown_key_names_line),
		cmocka_unit_test(load_bad_value_names_line),
		cmocka_unit_test(load_line_without_equals_names_line),
		cmocka_unit_test(load_bad_url_on_first_line),
		cmocka_unit_test(load_too_long_line_names_line),
		cmocka_unit_test(load_missing_upstream_fails_check),
		cmocka_unit_test(check_needs_state_paths),
		cmocka_unit_test(carddav_path_checked),
		cmocka_unit_test(load_missing_file_names_path),
		cmocka_unit_test(free_clears_everything),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
