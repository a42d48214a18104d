/* login_rewrite: a JMAP session document's four URLs become postern's /api
 * paths, and the upstream ones come out pinned. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cfg.h"
#include "js.h"
#include "login.h"

#define UP "http://127.0.0.1:8080"

#define OUR_API "/api/jmap"
#define OUR_DOWNLOAD "/api/blob/{accountId}/{blobId}/{name}?accept={type}"
#define OUR_UPLOAD "/api/upload/{accountId}"
#define OUR_EVENTS "/api/events?types={types}&closeafter={closeafter}&ping={ping}"

/* As Cyrus sends it: relative URLs, served at /jmap/. */
static const char cyrus_doc[] =
    "{\"capabilities\":{\"urn:ietf:params:jmap:core\":{}},"
    "\"accounts\":{\"alice\":{\"name\":\"alice\"}},"
    "\"username\":\"alice@example.test\","
    "\"apiUrl\":\"/jmap/\","
    "\"downloadUrl\":\"/jmap/download/{accountId}/{blobId}/{name}?accept={type}\","
    "\"uploadUrl\":\"/jmap/upload/{accountId}/\","
    "\"eventSourceUrl\":\"/jmap/eventsource/?types={types}&closeafter={closeafter}&ping={ping}\","
    "\"state\":\"0\"}";

/* As Stalwart sends it: absolute URLs on its public https name. */
static const char stalwart_doc[] =
    "{\"capabilities\":{},\"accounts\":{},"
    "\"username\":\"bob@example.com\","
    "\"apiUrl\":\"https://mail.example.com/jmap/\","
    "\"downloadUrl\":\"https://mail.example.com/jmap/download/{accountId}/{blobId}/{name}?accept={type}\","
    "\"uploadUrl\":\"https://mail.example.com/jmap/upload/{accountId}\","
    "\"eventSourceUrl\":\"https://mail.example.com/jmap/eventsource?types={types}&closeafter={closeafter}&ping={ping}\","
    "\"state\":\"x\"}";

struct fixture {
	struct cfg cfg;
	char *urls[4];
	json_object *doc;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	char err[256];

	if (f == NULL)
		return -1;
	cfg_defaults(&f->cfg);
	if (cfg_set(&f->cfg, "upstream", UP, err, sizeof(err)) == -1)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	int i;

	for (i = 0; i < 4; i++)
		free(f->urls[i]);
	json_object_put(f->doc);
	cfg_free(&f->cfg);
	free(f);
	return 0;
}

static json_object *parse(struct fixture *f, const char *text)
{
	f->doc = js_parse(text, strlen(text));
	assert_non_null(f->doc);
	return f->doc;
}

static void assert_ours(json_object *doc)
{
	assert_string_equal(js_str(doc, "apiUrl"), OUR_API);
	assert_string_equal(js_str(doc, "downloadUrl"), OUR_DOWNLOAD);
	assert_string_equal(js_str(doc, "uploadUrl"), OUR_UPLOAD);
	assert_string_equal(js_str(doc, "eventSourceUrl"), OUR_EVENTS);
}

static void cyrus_document_rewritten(void **state)
{
	struct fixture *f = *state;
	json_object *doc = parse(f, cyrus_doc);

	assert_int_equal(login_rewrite(&f->cfg, doc, UP "/jmap/", f->urls), 0);
	assert_ours(doc);
	assert_string_equal(f->urls[0], UP "/jmap/");
	assert_string_equal(f->urls[1],
	    UP "/jmap/download/{accountId}/{blobId}/{name}?accept={type}");
	assert_string_equal(f->urls[2], UP "/jmap/upload/{accountId}/");
	assert_string_equal(f->urls[3], UP "/jmap/eventsource/?types={types}"
	    "&closeafter={closeafter}&ping={ping}");
	/* The rest of the document is left alone. */
	assert_string_equal(js_str(doc, "username"), "alice@example.test");
	assert_string_equal(js_str(doc, "state"), "0");
	assert_non_null(js_obj(js_obj(doc, "capabilities"),
	    "urn:ietf:params:jmap:core"));
}

static void stalwart_document_rewritten_and_pinned(void **state)
{
	struct fixture *f = *state;
	json_object *doc = parse(f, stalwart_doc);

	assert_int_equal(login_rewrite(&f->cfg, doc, UP "/.well-known/jmap",
	    f->urls), 0);
	assert_ours(doc);
	assert_string_equal(f->urls[0], UP "/jmap/");
	assert_string_equal(f->urls[1],
	    UP "/jmap/download/{accountId}/{blobId}/{name}?accept={type}");
	assert_string_equal(f->urls[2], UP "/jmap/upload/{accountId}");
	assert_string_equal(f->urls[3], UP "/jmap/eventsource?types={types}"
	    "&closeafter={closeafter}&ping={ping}");
	assert_string_equal(js_str(doc, "username"), "bob@example.com");
}

static void stalwart_followed_when_configured(void **state)
{
	struct fixture *f = *state;
	json_object *doc = parse(f, stalwart_doc);

	f->cfg.upstream_follow_advertised = 1;
	assert_int_equal(login_rewrite(&f->cfg, doc, UP "/.well-known/jmap",
	    f->urls), 0);
	assert_ours(doc);
	assert_string_equal(f->urls[0], "https://mail.example.com/jmap/");
	assert_string_equal(f->urls[2],
	    "https://mail.example.com/jmap/upload/{accountId}");
}

static void missing_api_url_fails(void **state)
{
	struct fixture *f = *state;
	json_object *doc = parse(f, cyrus_doc);
	int i;

	json_object_object_del(doc, "apiUrl");
	assert_int_equal(login_rewrite(&f->cfg, doc, UP "/jmap/", f->urls), -1);
	for (i = 0; i < 4; i++)
		assert_null(f->urls[i]);
}

static void missing_download_or_upload_url_fails(void **state)
{
	struct fixture *f = *state;
	json_object *doc = parse(f, cyrus_doc);
	int i;

	/* The earlier URLs were already pinned: they are freed (valgrind). */
	json_object_object_del(doc, "uploadUrl");
	assert_int_equal(login_rewrite(&f->cfg, doc, UP "/jmap/", f->urls), -1);
	for (i = 0; i < 4; i++)
		assert_null(f->urls[i]);
}

static void non_string_api_url_fails(void **state)
{
	struct fixture *f = *state;
	json_object *doc = parse(f, cyrus_doc);

	json_object_object_add(doc, "apiUrl", json_object_new_int(5));
	assert_int_equal(login_rewrite(&f->cfg, doc, UP "/jmap/", f->urls), -1);
	assert_null(f->urls[0]);
}

static void unparsable_url_fails(void **state)
{
	struct fixture *f = *state;
	json_object *doc = parse(f, cyrus_doc);
	int i;

	json_object_object_add(doc, "downloadUrl",
	    json_object_new_string("http://"));
	assert_int_equal(login_rewrite(&f->cfg, doc, UP "/jmap/", f->urls), -1);
	for (i = 0; i < 4; i++)
		assert_null(f->urls[i]);
}

static void missing_event_source_url_gives_empty(void **state)
{
	struct fixture *f = *state;
	json_object *doc = parse(f, cyrus_doc);

	json_object_object_del(doc, "eventSourceUrl");
	assert_int_equal(login_rewrite(&f->cfg, doc, UP "/jmap/", f->urls), 0);
	assert_non_null(f->urls[3]);
	assert_string_equal(f->urls[3], "");
	assert_string_equal(f->urls[0], UP "/jmap/");
	assert_string_equal(js_str(doc, "apiUrl"), OUR_API);
}

static void non_string_event_source_url_gives_empty(void **state)
{
	struct fixture *f = *state;
	json_object *doc = parse(f, cyrus_doc);

	json_object_object_add(doc, "eventSourceUrl", json_object_new_boolean(1));
	assert_int_equal(login_rewrite(&f->cfg, doc, UP "/jmap/", f->urls), 0);
	assert_string_equal(f->urls[3], "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(cyrus_document_rewritten, setup, teardown),
		cmocka_unit_test_setup_teardown(stalwart_document_rewritten_and_pinned, setup, teardown),
		cmocka_unit_test_setup_teardown(stalwart_followed_when_configured, setup, teardown),
		cmocka_unit_test_setup_teardown(missing_api_url_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(missing_download_or_upload_url_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(non_string_api_url_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(unparsable_url_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(missing_event_source_url_gives_empty, setup, teardown),
		cmocka_unit_test_setup_teardown(non_string_event_source_url_gives_empty, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
