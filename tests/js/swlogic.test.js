// The service worker's decisions (www/js/swlogic.js): which requests its
// cache answers (never /api), which caches go, what a push says and where
// its click goes; and webpush.js's status line. node --test, no browser.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { cacheName, PREFS, stale, cacheKey, fetchRelease, mailHash, notice, clickPlan, keyBytes, sameKey } from "../../www/js/swlogic.js";
import { translator } from "../../www/js/i18n.js";
import { status } from "../../www/js/webpush.js";

const SCOPE = "https://mail.example.test/";
const FILES = new Set(["index.html", "app.js", "js/store.js", "i18n/de.json", "vendor/purify.es.js"]);
const get = (url, method = "GET") => ({ method, url });
const cat = (lang) => JSON.parse(readFileSync(new URL(`../../www/i18n/${lang}.json`, import.meta.url), "utf8"));
const en = translator(cat("en"), null, "en");

test("the app's own files come from the cache, the root as index.html", () => {
  assert.equal(cacheKey(get(SCOPE), SCOPE, FILES), "index.html");
  assert.equal(cacheKey(get(SCOPE + "index.html"), SCOPE, FILES), "index.html");
  assert.equal(cacheKey(get(SCOPE + "js/store.js"), SCOPE, FILES), "js/store.js");
  assert.equal(cacheKey(get(SCOPE + "i18n/de.json"), SCOPE, FILES), "i18n/de.json");
  // a fragment is not part of the request
  assert.equal(cacheKey(get(SCOPE + "#/inbox/thread/T/M"), SCOPE, FILES), "index.html");
});

test("never /api, nor anything the list does not hold, another origin, a query or a write", () => {
  for (const u of ["api/jmap", "api/config", "api/events?visible=1", "api/blob/a/b/c", "api", "api/"]) {
    assert.equal(cacheKey(get(SCOPE + u), SCOPE, new Set([...FILES, u])), null, u);
  }
  assert.equal(cacheKey(get(SCOPE + "js/nope.js"), SCOPE, FILES), null);
  assert.equal(cacheKey(get(SCOPE + "app.js?v=2"), SCOPE, FILES), null);
  assert.equal(cacheKey(get("https://elsewhere.test/app.js"), SCOPE, FILES), null);
  assert.equal(cacheKey(get(SCOPE + "app.js", "POST"), SCOPE, FILES), null);
  assert.equal(cacheKey(get("not a url"), SCOPE, FILES), null);
  // a scope below the root: its own files only, /api still never
  const sub = "https://h.test/mail/";
  assert.equal(cacheKey(get("https://h.test/mail/app.js"), sub, FILES), "app.js");
  assert.equal(cacheKey(get("https://h.test/app.js"), sub, FILES), null);
  assert.equal(cacheKey(get("https://h.test/api/config"), sub, new Set(["../api/config"])), null);
});

test("a release's cache, and the older ones that go when it is active", () => {
  assert.equal(cacheName("abc"), "postern-abc");
  assert.deepEqual(stale(["postern-old", "postern-abc", PREFS, "someone-else"], "abc"), ["postern-old"]);
});

test("a push: the sender and subject, one tag per folder, the mail's place, the badge", () => {
  const p = { v: 1, from: { name: "Bob", email: "bob@example.test" }, subject: "Lunch?", folder: "Inbox", role: "inbox",
    mailboxId: "M1", emailId: "E1", threadId: "T1", count: 1, unread: 5 };
  assert.deepEqual(notice(p, en, SCOPE), { title: "Bob", body: "Lunch?", tag: "postern-push-inbox",
    url: SCOPE + "#/inbox/thread/T1/E1", unread: 5 });
  // another folder: by its id, named in the title
  const f = notice({ ...p, role: null, folder: "Lists", mailboxId: "M 2" }, en, SCOPE);
  assert.equal(f.title, "Bob in Lists");
  assert.equal(f.tag, "postern-push-M 2");
  assert.equal(f.url, SCOPE + "#/folder/M%202/thread/T1/E1");
  // several at once: counted, the newest told
  const many = notice({ ...p, count: 3, unread: null }, en, SCOPE);
  assert.equal(many.title, "3 new messages");
  assert.equal(many.body, "Bob: Lunch?");
  assert.equal(many.unread, null);
  // no name, no subject
  const bare = notice({ ...p, from: { email: "x@y.test" }, subject: "" }, en, SCOPE);
  assert.equal(bare.title, "x@y.test");
  assert.equal(bare.body, "(no subject)");
  assert.equal(notice({ ...p, from: null }, en, SCOPE).title, "New message");
});

test("a payload that does not parse: New mail, opening the Inbox", () => {
  for (const bad of [null, "text", 42, { v: 2, subject: "x" }, {}]) {
    assert.deepEqual(notice(bad, en, SCOPE), { title: "New mail", body: "", tag: "postern-push-inbox", url: SCOPE + "#/inbox", unread: null });
  }
});

test("a push in the language the page told, its plurals", () => {
  const ru = translator(cat("ru"), cat("en"), "ru");
  const p = { v: 1, from: { name: "Боб" }, subject: "Обед", role: "inbox", mailboxId: "M1", count: 5 };
  assert.equal(notice(p, ru, SCOPE).title, "5 новых писем");
  const de = translator(cat("de"), cat("en"), "de");
  assert.equal(notice({ v: "x" }, de, SCOPE).title, "Neue Mail");
});

test("the mail's place: without a thread the folder, without an email the thread", () => {
  assert.equal(mailHash({ role: "inbox", mailboxId: "M" }), "#/inbox");
  assert.equal(mailHash({ role: "archive", mailboxId: "A", threadId: "T" }), "#/folder/A/thread/T");
  assert.equal(mailHash({ threadId: "T", emailId: "E" }), "#/inbox/thread/T/E");
});

test("a click: the app's focused window, else one in view, else any, else a new one", () => {
  const url = SCOPE + "#/inbox/thread/T/E";
  const w = (u, extra = {}) => ({ url: u, visibilityState: "hidden", focused: false, frameType: "top-level", ...extra });
  const a = w(SCOPE + "#/inbox"), b = w(SCOPE + "#/sent", { visibilityState: "visible" }), c = w(SCOPE, { focused: true, visibilityState: "visible" });
  assert.equal(clickPlan([a, b, c], url, SCOPE).client, c);
  assert.equal(clickPlan([a, b], url, SCOPE).client, b);
  assert.deepEqual(clickPlan([a], url, SCOPE), { client: a, hash: "#/inbox/thread/T/E" });
  // another site's window, or a frame, is not the app
  assert.deepEqual(clickPlan([w("https://elsewhere.test/"), w(SCOPE, { frameType: "nested" })], url, SCOPE), { open: url });
  assert.deepEqual(clickPlan([], url, SCOPE), { open: url });
});

test("the server's VAPID key: 65 bytes of an uncompressed P-256 point, base64url", () => {
  const raw = Uint8Array.from({ length: 65 }, (_, i) => (i ? (i * 37) & 255 : 4));
  const b64 = Buffer.from(raw).toString("base64url");
  assert.deepEqual(keyBytes(b64), raw);
  assert.ok(sameKey(keyBytes(b64).buffer, raw));
  assert.ok(!sameKey(raw.slice(1), raw));
  assert.ok(!sameKey(null, raw));
  for (const bad of [undefined, "", "abc", Buffer.from(raw.slice(1)).toString("base64url"), b64 + "=", "a+b/"]) {
    assert.equal(keyBytes(bad), null, String(bad));
  }
});

// A server's files (path → text) as fetch would answer them.
const server = (files) => async (path) => (path in files ? new Response(files[path], { status: 200 })
  : new Response("no", { status: 404 }));
const sha256 = async (bytes) => createHash("sha256").update(bytes).digest();
const sum = (text) => createHash("sha256").update(text).digest("hex").slice(0, 16);

test("a release installs only when every file is of it: a mix (an upgrade under way) is refused", async () => {
  const old = { "app.js": "app 1", "js/dates.js": "dates 1", "js/precache.js": 'export const VERSION = "v1";' };
  const list = { "app.js": sum("app 1"), "js/dates.js": sum("dates 1"), "js/precache.js": "" };
  const got = await fetchRelease(list, "v1", server(old), sha256);
  assert.deepEqual(got.map(([p]) => p), ["app.js", "js/dates.js", "js/precache.js"]);
  assert.equal(await got[1][1].text(), "dates 1", "the response itself, unread, to keep");
  // dates.js already of the next release
  await assert.rejects(fetchRelease(list, "v1", server({ ...old, "js/dates.js": "dates 2" }), sha256),
    /js\/dates\.js is not of release v1/);
  // precache.js already of the next release (it names another version)
  await assert.rejects(fetchRelease(list, "v1", server({ ...old, "js/precache.js": 'export const VERSION = "v2";' }), sha256),
    /js\/precache\.js is not of release v1/);
  // a file gone, or an error
  await assert.rejects(fetchRelease({ ...list, "gone.js": sum("x") }, "v1", server(old), sha256), /gone\.js: HTTP 404/);
});

test("the setting's line: what this device gets, and why not", () => {
  const on = { notifications: true, permission: "granted", pushSupported: true, on: true, subscribed: true, error: null,
    features: { push: true, webpush: { key: "k" } } };
  assert.deepEqual(status(on), { key: "settings.notifyPush" });
  assert.equal(status({ ...on, on: false, subscribed: false }), null);
  assert.deepEqual(status({ ...on, notifications: false }), { key: "settings.notifyNone" });
  assert.deepEqual(status({ ...on, permission: "denied" }), { key: "settings.notifyBlocked" });
  assert.deepEqual(status({ ...on, features: { push: false, webpush: false } }), { key: "settings.notifyNoPushd" });
  assert.deepEqual(status({ ...on, features: { push: true, webpush: false } }), { key: "settings.notifyOperatorOff" });
  assert.deepEqual(status({ ...on, features: { push: true } }), { key: "settings.notifyOperatorOff" });
  assert.deepEqual(status({ ...on, pushSupported: false }), { key: "settings.notifyUnsupported" });
  const err = { key: "settings.notifyFailed", vars: { reason: "x" } };
  assert.deepEqual(status({ ...on, subscribed: false, error: err }), err);
  // every line it can say is in the catalogue
  for (const k of ["Push", "None", "Blocked", "NoPushd", "OperatorOff", "Unsupported", "Refused", "Failed"]) {
    assert.ok(cat("en")[`settings.notify${k}`], k);
  }
});
