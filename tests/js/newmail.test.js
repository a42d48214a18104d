// What new mail says outside the page (www/js/newmail.js).
import { test } from "node:test";
import assert from "node:assert/strict";
import { worthTelling, toldIn, folderSetting, notices, badge, MAX } from "../../www/js/newmail.js";

const t = (k, v = {}) => (k === "notify.many" ? `${v.n} new` : k);
const mail = (id, extra = {}) => ({ id, mailboxIds: { inbox: true }, keywords: {}, from: [{ name: `N${id}`, email: `${id}@x.test` }],
  subject: `S${id}`, receivedAt: `2026-12-03T10:0${id}:00Z`, ...extra });

test("unread mail in the Inbox from others is told; drafts, read, own and other folders are not", () => {
  const list = [mail(1), mail(2, { keywords: { $seen: true } }), mail(3, { keywords: { $draft: true } }),
    mail(4, { mailboxIds: { archive: true } }), mail(5, { from: [{ email: "Me@X.test" }] })];
  assert.deepEqual(worthTelling(list, { inboxId: "inbox", own: ["me@x.test"] }).map((e) => e.id), [1]);
  assert.deepEqual(worthTelling(list, { inboxId: null }), []);
});

test("the folders chosen (notifyFolders): null is the Inbox, else exactly those, [] none", () => {
  const list = [mail(1), mail(2, { mailboxIds: { lists: true } }), mail(3, { mailboxIds: { archive: true } }),
    mail(4, { mailboxIds: { lists: true, inbox: true } }), mail(5, { mailboxIds: { lists: true }, keywords: { $seen: true } }),
    mail(6, { mailboxIds: { lists: false } })];
  const told = (folders) => worthTelling(list, { inboxId: "inbox", folders }).map((e) => e.id);
  assert.deepEqual(told(null), [1, 4]);
  assert.deepEqual(told(undefined), [1, 4]);
  assert.deepEqual(told(["lists"]), [2, 4]);
  assert.deepEqual(told(["inbox", "lists"]), [1, 2, 4]);
  assert.deepEqual(told([]), []);
  // Chosen folders need no Inbox to be known.
  assert.deepEqual(worthTelling(list, { inboxId: null, folders: ["archive"] }).map((e) => e.id), [3]);
});

test("the folders ticked as the setting: the Inbox alone is the default (null)", () => {
  assert.equal(folderSetting(["inbox"], "inbox"), null);
  assert.deepEqual(folderSetting(["inbox", "lists"], "inbox"), ["inbox", "lists"]);
  assert.deepEqual(folderSetting(["lists"], "inbox"), ["lists"]);
  assert.deepEqual(folderSetting([], "inbox"), []);
  assert.deepEqual([...toldIn(null, "inbox")], ["inbox"]);
  assert.deepEqual([...toldIn(null, undefined)], []);
  assert.deepEqual([...toldIn(["a", "b"], "inbox")], ["a", "b"]);
});

test("one notice a mail, newest first: sender and subject, tagged by the mail", () => {
  const n = notices([mail(1), mail(2, { subject: "", from: [{ email: "b@x.test" }] })], t);
  assert.deepEqual(n.map(({ title, body, tag }) => ({ title, body, tag })), [
    { title: "b@x.test", body: "list.noSubject", tag: "postern-2" },
    { title: "N1", body: "S1", tag: "postern-1" }]);
  assert.equal(n[1].email.id, 1);
});

test(`more than ${MAX} at once become one summary`, () => {
  const n = notices([1, 2, 3, 4, 5].map((i) => mail(i)), t);
  assert.equal(n.length, 1);
  assert.equal(n[0].title, "5 new");
  assert.equal(n[0].body, "N5, N4, N3");
  assert.equal(n[0].email, null);
});

test("the favicon badge", () => {
  assert.equal(badge(0), "");
  assert.equal(badge(7), "7");
  assert.equal(badge(99), "99");
  assert.equal(badge(100), "99+");
});
