/* upstream: pinning the URLs a JMAP server advertises to the configured
 * upstream (no network: upstream_pin and upstream_join only). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cfg.h"
#include "upstream.h"

#define UP "http://127.0.0.1:8080"
#define CYRUS_BASE UP "/jmap/"

static struct cfg *cfg_with(const char *upstream, int follow)
{
	struct cfg *c = malloc(sizeof(*c));
	char err[256];

	assert_non_null(c);
	cfg_defaults(c);
	assert_int_equal(cfg_set(c, "upstream", upstream, err, sizeof(err)), 0);
	c->upstream_follow_advertised = follow;
	return c;
}

static void cfg_gone(struct cfg *c)
{
	cfg_free(c);
	free(c);
}

/* upstream_pin(c, base, adv) equals want (NULL: fails). */
static void pins_to(const struct cfg *c, const char *base, const char *adv,
    const char *want)
{
	char *got = upstream_pin(c, base, adv);

	if (want == NULL && got != NULL) {
		char copy[512];

		snprintf(copy, sizeof(copy), "%s", got);
		free(got);
		fail_msg("\"%s\" pinned to \"%s\", expected failure", adv, copy);
	}
	if (want != NULL && got == NULL)
		fail_msg("\"%s\" did not pin, expected \"%s\"", adv, want);
	if (got) {
		if (strcmp(got, want)) {
			char copy[512];

			snprintf(copy, sizeof(copy), "%s", got);
			free(got);
			fail_msg("\"%s\" pinned to \"%s\", expected \"%s\"", adv,
			    copy, want);
		}
		free(got);
	}
}

static void cyrus_relative_api_url(void **state)
{
	struct cfg *c = cfg_with(UP, 0);

	pins_to(c, CYRUS_BASE, "/jmap/", UP "/jmap/");
	cfg_gone(c);
}

static void cyrus_relative_download_keeps_template(void **state)
{
	struct cfg *c = cfg_with(UP, 0);

	pins_to(c, CYRUS_BASE,
	    "/jmap/download/{accountId}/{blobId}/{name}?accept={type}",
	    UP "/jmap/download/{accountId}/{blobId}/{name}?accept={type}");
	pins_to(c, CYRUS_BASE, "/jmap/upload/{accountId}/",
	    UP "/jmap/upload/{accountId}/");
	pins_to(c, CYRUS_BASE,
	    "/jmap/eventsource/?types={types}&closeafter={closeafter}&ping={ping}",
	    UP "/jmap/eventsource/?types={types}&closeafter={closeafter}"
	    "&ping={ping}");
	cfg_gone(c);
}

static void path_relative_url_resolves_against_base(void **state)
{
	struct cfg *c = cfg_with(UP, 0);

	pins_to(c, CYRUS_BASE, "api/", UP "/jmap/api/");
	pins_to(c, CYRUS_BASE, "../other/", UP "/other/");
	cfg_gone(c);
}

static void stalwart_absolute_url_pinned(void **state)
{
	struct cfg *c = cfg_with(UP, 0);

	pins_to(c, UP "/.well-known/jmap",
	    "https://mail.example.com/jmap/eventsource/?types={types}"
	    "&closeafter={closeafter}&ping={ping}",
	    UP "/jmap/eventsource/?types={types}&closeafter={closeafter}"
	    "&ping={ping}");
	pins_to(c, UP "/.well-known/jmap", "https://mail.example.com/jmap/",
	    UP "/jmap/");
	pins_to(c, UP "/.well-known/jmap",
	    "https://mail.example.com/jmap/download/{accountId}/{blobId}/"
	    "{name}?accept={type}",
	    UP "/jmap/download/{accountId}/{blobId}/{name}?accept={type}");
	cfg_gone(c);
}

static void scheme_relative_url_pinned(void **state)
{
	struct cfg *c = cfg_with(UP, 0);

	pins_to(c, CYRUS_BASE, "//evil.example.net/jmap/?x=1", UP "/jmap/?x=1");
	cfg_gone(c);
}

static void other_host_and_port_pinned(void **state)
{
	struct cfg *c = cfg_with(UP, 0);

	pins_to(c, CYRUS_BASE, "http://127.0.0.1:9999/jmap/", UP "/jmap/");
	pins_to(c, CYRUS_BASE, "http://169.254.169.254/latest/meta-data/",
	    UP "/latest/meta-data/");
	cfg_gone(c);
}

static void follow_advertised_keeps_origin(void **state)
{
	struct cfg *c = cfg_with(UP, 1);

	pins_to(c, UP "/.well-known/jmap",
	    "https://mail.example.com/jmap/eventsource/?types={types}"
	    "&closeafter={closeafter}&ping={ping}",
	    "https://mail.example.com/jmap/eventsource/?types={types}"
	    "&closeafter={closeafter}&ping={ping}");
	pins_to(c, UP "/.well-known/jmap", "https://mail.example.com:8443/jmap/",
	    "https://mail.example.com:8443/jmap/");
	/* Relative ones still resolve against the base. */
	pins_to(c, CYRUS_BASE, "/jmap/upload/{accountId}/",
	    UP "/jmap/upload/{accountId}/");
	cfg_gone(c);
}

static void nondefault_upstream_port_replaces_default(void **state)
{
	struct cfg *c = cfg_with("https://mail.example.com:8443", 0);

	pins_to(c, "https://mail.example.com:8443/.well-known/jmap",
	    "https://mail.example.com/jmap/?a=1",
	    "https://mail.example.com:8443/jmap/?a=1");
	cfg_gone(c);
}

static void default_upstream_port_drops_advertised_port(void **state)
{
	struct cfg *c = cfg_with("https://mail.example.com", 0);

	pins_to(c, "https://mail.example.com/.well-known/jmap",
	    "https://mail.example.com:8443/jmap/",
	    "https://mail.example.com/jmap/");
	/* The scheme is the upstream's too. */
	pins_to(c, "https://mail.example.com/.well-known/jmap",
	    "http://mail.example.com/jmap/", "https://mail.example.com/jmap/");
	cfg_gone(c);
}

static void credentials_and_fragment_dropped(void **state)
{
	struct cfg *pin = cfg_with(UP, 0), *follow = cfg_with(UP, 1);

	pins_to(pin, CYRUS_BASE, "https://user:pass@mail.example.com/jmap/?q=1#frag",
	    UP "/jmap/?q=1");
	pins_to(follow, CYRUS_BASE,
	    "https://user:pass@mail.example.com/jmap/?q=1#frag",
	    "https://mail.example.com/jmap/?q=1");
	pins_to(follow, CYRUS_BASE, "https://user@mail.example.com/jmap/",
	    "https://mail.example.com/jmap/");
	pins_to(pin, CYRUS_BASE, "/jmap/#top", UP "/jmap/");
	cfg_gone(pin);
	cfg_gone(follow);
}

static void garbage_returns_null(void **state)
{
	struct cfg *c = cfg_with(UP, 0);

	pins_to(c, "not a url", "also not", NULL);
	pins_to(c, "", "", NULL);
	pins_to(c, CYRUS_BASE, "http://", NULL);
	pins_to(c, CYRUS_BASE, "https://[::1/jmap/", NULL);
	pins_to(c, CYRUS_BASE, "http://exa mple.com/", NULL);
	cfg_gone(c);
}

static void join_makes_session_url(void **state)
{
	struct cfg *c = cfg_with(UP, 0);
	char *u;

	assert_non_null(u = upstream_join(c, "/.well-known/jmap"));
	assert_string_equal(u, UP "/.well-known/jmap");
	free(u);
	assert_non_null(u = upstream_join(c, "/jmap/"));
	assert_string_equal(u, UP "/jmap/");
	free(u);
	cfg_gone(c);
}

static void join_with_https_upstream(void **state)
{
	struct cfg *c = cfg_with("https://mail.example.com:8443", 0);
	char *u;

	assert_non_null(u = upstream_join(c, "/.well-known/jmap"));
	assert_string_equal(u, "https://mail.example.com:8443/.well-known/jmap");
	free(u);
	cfg_gone(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cyrus_relative_api_url),
		cmocka_unit_test(cyrus_relative_download_keeps_template),
		cmocka_unit_test(path_relative_url_resolves_against_base),
		cmocka_unit_test(stalwart_absolute_url_pinned),
		cmocka_unit_test(scheme_relative_url_pinned),
		cmocka_unit_test(other_host_and_port_pinned),
		cmocka_unit_test(follow_advertised_keeps_origin),
		cmocka_unit_test(nondefault_upstream_port_replaces_default),
		cmocka_unit_test(default_upstream_port_drops_advertised_port),
		cmocka_unit_test(credentials_and_fragment_dropped),
		cmocka_unit_test(garbage_returns_null),
		cmocka_unit_test(join_makes_session_url),
		cmocka_unit_test(join_with_https_upstream),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
