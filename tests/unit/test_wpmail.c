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
	json_object *p, *v;
	unsigned n;
	char *st;
	int more;

	(void)state;
	assert_int_equal(wp_mail_read(root, &p, &n, &st, &more), 0);
	assert_int_equal(n, 2);
	assert_string_equal(st, "s9");
	assert_int_equal(more, 0);
	assert_non_null(p);
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
	free(st);
	json_object_put(root);
}

static void nothing_new_no_payload(void **state)
{
	json_object *root = answer(
	    "{\"id\":\"e3\",\"mailboxIds\":{\"m1\":true},"
	    "\"keywords\":{\"$seen\":true},\"subject\":\"Read\"}",
	    "[\"Email/changes\",{\"newState\":\"s10\",\"hasMoreChanges\":true},\"c\"]");
	json_object *p;
	unsigned n;
	char *st;
	int more;

	(void)state;
	assert_int_equal(wp_mail_read(root, &p, &n, &st, &more), 0);
	assert_null(p);
	assert_int_equal(n, 0);
	assert_string_equal(st, "s10");
	assert_int_equal(more, 1);
	free(st);
	json_object_put(root);
}

/* cannotCalculateChanges, or no answer to the lookup: -1, no state. */
static void error_answer(void **state)
{
	json_object *root = answer("", "[\"error\",{\"type\":"
	    "\"cannotCalculateChanges\"},\"c\"]");
	json_object *p;
	unsigned n;
	char *st;
	int more;

	(void)state;
	assert_int_equal(wp_mail_read(root, &p, &n, &st, &more), -1);
	assert_null(p);
	assert_null(st);
	json_object_put(root);
}

/* A subject longer than a notification shows is cut on a character. */
static void long_subject_cut(void **state)
{
	char emails[1024], subj[400];
	json_object *root, *p;
	const char *got;
	unsigned n;
	char *st;
	int more, i;

	(void)state;
	for (i = 0; i < 150; i++)
		memcpy(subj + 2 * i, "\xc3\xa9", 2);   /* é, 300 bytes */
	subj[300] = '\0';
	snprintf(emails, sizeof(emails), "{\"id\":\"e1\",\"mailboxIds\":"
	    "{\"m1\":true},\"subject\":\"%s\"}", subj);
	root = answer(emails, NULL);
	assert_int_equal(wp_mail_read(root, &p, &n, &st, &more), 0);
	got = js_str(p, "subject");
	assert_true(strlen(got) <= 200 && strlen(got) % 2 == 0);
	assert_memory_equal(got, subj, strlen(got));
	json_object_put(p);
	free(st);
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
		cmocka_unit_test(hosts_allowed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
