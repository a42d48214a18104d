/* What a device's notification says (pushd/wpmail.c's wp_mail_read):
 * the newest unread mail new in the Inbox and how many came, from the
 * lookup's answer; and which push services an operator allows
 * (cfg_webpush_host_allowed). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <json-c/json.h>

#include "cfg.h"
#include "js.h"
#include "wpmail.h"

#define MAILBOXES "[\"Mailbox/get\",{\"list\":[" \
	"{\"id\":\"m1\",\"name\":\"Inbox\",\"role\":\"inbox\",\"unreadEmails\":7}," \
	"{\"id\":\"m2\",\"name\":\"Lists\",\"role\":null}]},\"m\"]"

static json_object *answer(const char *emails, const char *changes)
{
	char text[4096];
	json_object *o;

	snprintf(text, sizeof(text), "{\"methodResponses\":[%s,"
	    "[\"Email/get\",{\"list\":[%s]},\"g\"]," MAILBOXES "]}",
	    changes ? changes : "[\"Email/changes\",{\"newState\":\"s9\","
	    "\"hasMoreChanges\":false,\"created\":[]},\"c\"]", emails);
	o = js_parse(text, strlen(text));
	assert_non_null(o);
	return o;
}

static const char *sub(json_object *p, const char *a, const char *b)
{
	return js_str(b ? js_obj(p, a) : p, b ? b : a);
}

static void newest_unread_in_inbox(void **state)
{
	json_object *root = answer(
	    "{\"id\":\"e1\",\"threadId\":\"t1\",\"mailboxIds\":{\"m1\":true},"
	    "\"keywords\":{},\"from\":[{\"name\":\"Erin\",\"email\":\"erin@x.test\"}],"
	    "\"subject\":\"Older\",\"receivedAt\":\"2026-12-05T10:00:00Z\"},"
	    "{\"id\":\"e2\",\"threadId\":\"t2\",\"mailboxIds\":{\"m1\":true},"
	    "\"keywords\":{},\"from\":[{\"name\":\"Bob\",\"email\":\"bob@x.test\"}],"
	    "\"subject\":\"Newer\",\"receivedAt\":\"2026-12-05T10:05:00Z\"},"
	    "{\"id\":\"e3\",\"threadId\":\"t3\",\"mailboxIds\":{\"m1\":true},"
	    "\"keywords\":{\"$seen\":true},\"from\":[],\"subject\":\"Read\","
	    "\"receivedAt\":\"2026-12-05T11:00:00Z\"},"
	    "{\"id\":\"e4\",\"threadId\":\"t4\",\"mailboxIds\":{\"m2\":true},"
	    "\"keywords\":{},\"from\":[],\"subject\":\"A list\","
	    "\"receivedAt\":\"2026-12-05T12:00:00Z\"}", NULL);
	struct wp_found f;
	json_object *p, *v;

	(void)state;
	assert_int_equal(wp_mail_read(root, NULL, NULL, &f), 0);
	assert_int_equal(f.count, 2);
	assert_string_equal(f.newstate, "s9");
	assert_int_equal(f.more, 0);
	assert_non_null(p = f.payload);
	assert_string_equal(sub(p, "subject", NULL), "Newer");
	assert_string_equal(sub(p, "from", "name"), "Bob");
	assert_string_equal(sub(p, "from", "email"), "bob@x.test");
	assert_string_equal(sub(p, "folder", NULL), "Inbox");
	assert_string_equal(sub(p, "role", NULL), "inbox");
	assert_string_equal(sub(p, "mailboxId", NULL), "m1");
	assert_string_equal(sub(p, "emailId", NULL), "e2");
	assert_string_equal(sub(p, "threadId", NULL), "t2");
	assert_true(json_object_object_get_ex(p, "unread", &v));
	assert_int_equal(json_object_get_int(v), 7);
	json_object_put(p);
	free(f.newstate);
	json_object_put(root);
}

static void nothing_new_no_payload(void **state)
{
	json_object *root = answer(
	    "{\"id\":\"e3\",\"mailboxIds\":{\"m1\":true},"
	    "\"keywords\":{\"$seen\":true},\"subject\":\"Read\"}",
	    "[\"Email/changes\",{\"newState\":\"s10\",\"hasMoreChanges\":true},\"c\"]");
	struct wp_found f;

	(void)state;
	assert_int_equal(wp_mail_read(root, NULL, NULL, &f), 0);
	assert_null(f.payload);
	assert_int_equal(f.count, 0);
	assert_string_equal(f.newstate, "s10");
	assert_int_equal(f.more, 1);
	free(f.newstate);
	json_object_put(root);
}

/* cannotCalculateChanges, or no answer to the lookup: -1, no state. */
static void error_answer(void **state)
{
	json_object *root = answer("", "[\"error\",{\"type\":"
	    "\"cannotCalculateChanges\"},\"c\"]");
	struct wp_found f;

	(void)state;
	assert_int_equal(wp_mail_read(root, NULL, NULL, &f), -1);
	assert_null(f.payload);
	assert_null(f.newstate);
	json_object_put(root);
}

/* A field longer than a notification shows is cut on a character. */
static void long_subject_cut(void **state)
{
	char emails[1024], subj[400];
	json_object *root;
	struct wp_found f;
	const char *got;
	int i;

	(void)state;
	for (i = 0; i < 150; i++)
		memcpy(subj + 2 * i, "\xc3\xa9", 2);   /* é, 300 bytes */
	subj[300] = '\0';
	snprintf(emails, sizeof(emails), "{\"id\":\"e1\",\"mailboxIds\":"
	    "{\"m1\":true},\"subject\":\"%s\"}", subj);
	root = answer(emails, NULL);
	assert_int_equal(wp_mail_read(root, NULL, NULL, &f), 0);
	got = js_str(f.payload, "subject");
	assert_true(strlen(got) <= 150 && strlen(got) % 2 == 0);
	assert_memory_equal(got, subj, strlen(got));
	json_object_put(f.payload);
	free(f.newstate);
	json_object_put(root);
}

#define THREE \
	"{\"id\":\"e1\",\"mailboxIds\":{\"m1\":true},\"keywords\":{\"$draft\":true}," \
	"\"from\":[{\"email\":\"erin@x.test\"}],\"subject\":\"Draft\"}," \
	"{\"id\":\"e2\",\"mailboxIds\":{\"m1\":true},\"keywords\":{}," \
	"\"from\":[{\"email\":\"Alice@X.test\"}],\"subject\":\"Mine\"}," \
	"{\"id\":\"e3\",\"mailboxIds\":{\"m2\":true},\"keywords\":{}," \
	"\"from\":[{\"email\":\"list@x.test\"}],\"subject\":\"On the list\"}"

/* Drafts and the person's own mail are not news; the folders chosen
 * replace the Inbox; none chosen, nothing notifies. */
static void folders_drafts_and_own(void **state)
{
	json_object *root = answer(THREE, NULL), *folders;
	struct wp_found f;
	const char *t = "[\"m2\"]";

	(void)state;
	assert_int_equal(wp_mail_read(root, NULL, "alice@x.test", &f), 0);
	assert_int_equal(f.count, 0);
	free(f.newstate);
	folders = json_tokener_parse(t);
	assert_non_null(folders);
	assert_int_equal(wp_mail_read(root, folders, "alice@x.test", &f), 0);
	assert_int_equal(f.count, 1);
	assert_string_equal(js_str(f.payload, "subject"), "On the list");
	assert_string_equal(js_str(f.payload, "folder"), "Lists");
	assert_string_equal(js_str(f.payload, "mailboxId"), "m2");
	assert_null(js_str(f.payload, "role"));
	json_object_put(f.payload);
	free(f.newstate);
	json_object_put(folders);
	folders = json_object_new_array();
	assert_int_equal(wp_mail_read(root, folders, NULL, &f), 0);
	assert_int_equal(f.count, 0);
	free(f.newstate);
	json_object_put(folders);
	json_object_put(root);
}

static void hosts_allowed(void **state)
{
	struct cfg c;
	char err[128];

	(void)state;
	cfg_defaults(&c);
	assert_int_equal(cfg_webpush_host_allowed(&c, "fcm.googleapis.com"), 1);
	assert_int_equal(cfg_set(&c, "webpush_hosts",
	    "fcm.googleapis.com, updates.push.services.mozilla.com",
	    err, sizeof(err)), 0);
	assert_int_equal(cfg_webpush_host_allowed(&c, "FCM.googleapis.com"), 1);
	assert_int_equal(cfg_webpush_host_allowed(&c, "updates.push.services.mozilla.com"), 1);
	assert_int_equal(cfg_webpush_host_allowed(&c, "googleapis.com"), 0);
	assert_int_equal(cfg_webpush_host_allowed(&c, "fcm.googleapis.com.evil.test"), 0);
	assert_int_equal(cfg_webpush_host_allowed(&c, ""), 0);
	assert_int_equal(cfg_set(&c, "upstream", "http://127.0.0.1:9", err, sizeof(err)), 0);
	assert_int_equal(cfg_set(&c, "webpush_subject", "ftp://x", err, sizeof(err)), 0);
	assert_int_equal(cfg_check(&c, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "webpush_subject"));
	cfg_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(newest_unread_in_inbox),
		cmocka_unit_test(nothing_new_no_payload),
		cmocka_unit_test(error_answer),
		cmocka_unit_test(long_subject_cut),
		cmocka_unit_test(folders_drafts_and_own),
		cmocka_unit_test(hosts_allowed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
