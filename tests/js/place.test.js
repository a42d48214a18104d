// A place ↔ the URL's fragment (www/js/place.js): node --test, no browser.
import { test } from "node:test";
import assert from "node:assert/strict";
import { format, parse, same, listOf } from "../../www/js/place.js";

test("folders by role, others by id", () => {
  assert.equal(format({ role: "inbox" }), "#/inbox");
  assert.equal(format({ role: "archive" }), "#/archive");
  assert.equal(format({ folderId: "Mab12" }), "#/folder/Mab12");
  assert.deepEqual(parse("#/archive"), { role: "archive" });
  assert.deepEqual(parse("#/folder/Mab12"), { folderId: "Mab12" });
  // an unknown role is not a role
  assert.equal(format({ role: "outbox", folderId: "X" }), "#/folder/X");
});

test("a search keeps its text, spaces, slashes, quotes and all", () => {
  const q = 'from:erin "Q4 roadmap" a/b #1 ü?&';
  const f = format({ search: q });
  assert.ok(f.startsWith("#/search/"));
  assert.ok(!f.slice(9).includes("/") && !f.slice(1).includes("#"), f);
  assert.deepEqual(parse(f), { search: q });
});

test("a thread, and a message of it, open in a folder or a search", () => {
  assert.equal(format({ role: "archive", thread: "T1" }), "#/archive/thread/T1");
  assert.equal(format({ role: "inbox", thread: "T1", email: "M2" }), "#/inbox/thread/T1/M2");
  assert.deepEqual(parse("#/inbox/thread/T1/M2"), { role: "inbox", thread: "T1", email: "M2" });
  assert.deepEqual(parse(format({ search: "x y", thread: "T/9" })), { search: "x y", thread: "T/9" });
  assert.deepEqual(parse(format({ folderId: "a b", thread: "T" })), { folderId: "a b", thread: "T" });
  assert.deepEqual(listOf({ role: "inbox", thread: "T1", email: "M2" }), { role: "inbox" });
});

test("settings", () => {
  assert.equal(format({ settings: true, role: "inbox" }), "#/settings");
  assert.deepEqual(parse("#/settings"), { settings: true });
  assert.equal(format({ filters: true, role: "inbox" }), "#/filters");
  assert.deepEqual(parse("#/filters"), { filters: true });
  assert.deepEqual(parse("#/filters/x"), {});
});

test("the contacts screen", () => {
  assert.equal(format({ contacts: true, role: "inbox" }), "#/contacts");
  assert.deepEqual(parse("#/contacts"), { contacts: true });
  assert.deepEqual(parse("#/contacts/x"), {});
  assert.ok(same({ contacts: true }, parse("#/contacts")));
});

test("the default place and anything malformed read as {}", () => {
  for (const h of ["", "#", "#/", "inbox", "#inbox", "#/nowhere", "#/folder", "#/folder/", "#/search/",
    "#/inbox/thread", "#/inbox/thread/", "#/inbox/thread/a/b/c", "#/inbox/flag/x", "#/folder/%E0%A4%A",
    "#/settings/x", "#/inbox/thread/%ZZ"]) {
    assert.deepEqual(parse(h), {}, h);
  }
  assert.equal(format(null), "#/");
  assert.equal(format({}), "#/");
});

test("round trip and sameness", () => {
  for (const p of [{ role: "trash" }, { folderId: "M-1" }, { search: "is:unread" }, { role: "junk", thread: "T", email: "E" },
    { search: "in:archive hello", thread: "T2" }, { settings: true }]) {
    assert.deepEqual(parse(format(p)), p);
    assert.ok(same(p, parse(format(p))));
  }
  assert.ok(!same({ role: "inbox" }, { role: "inbox", thread: "T" }));
});
