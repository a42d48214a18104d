// vcard.js: names and addresses out of vCards; hrefs under /api/dav/.
import { test } from "node:test";
import assert from "node:assert/strict";
import { people, apiPath } from "../../www/js/vcard.js";

test("a vCard 3.0 and a 4.0: each address with the card's name", () => {
  const text = "BEGIN:VCARD\r\nVERSION:3.0\r\nN:Example;Erin;;;\r\nFN:Erin Example\r\n" +
    "EMAIL;TYPE=INTERNET,WORK:erin@example.test\r\nitem1.EMAIL:erin.home@example.test\r\nEND:VCARD\r\n" +
    "BEGIN:VCARD\nVERSION:4.0\nFN:Zed\nEMAIL;PREF=1:mailto:zed@example.test\nEND:VCARD\n";
  assert.deepEqual(people(text), [
    { email: "erin@example.test", name: "Erin Example" },
    { email: "erin.home@example.test", name: "Erin Example" },
    { email: "zed@example.test", name: "Zed" }]);
});

test("folded lines, escapes, quoted parameters with a colon", () => {
  const text = "BEGIN:VCARD\r\nFN:Chen\\, Carol\r\n  (Accounts)\r\nEMAIL;X-LABEL=\"a:b\":carol@\r\n example.test\r\nEND:VCARD\r\n";
  assert.deepEqual(people(text), [{ email: "carol@example.test", name: "Chen, Carol (Accounts)" }]);
});

test("no FN: the name is empty; not an address: left out; nothing outside a card", () => {
  const text = "EMAIL:stray@example.test\nBEGIN:VCARD\nEMAIL:noname@example.test\nEMAIL:not an address\nEND:VCARD\n";
  assert.deepEqual(people(text), [{ email: "noname@example.test", name: "" }]);
  assert.deepEqual(people(""), []);
  assert.deepEqual(people(null), []);
});

test("an href under the DAV tree maps under /api/dav/; any other is null", () => {
  assert.equal(apiPath("/dav/addressbooks/user/a@b/Default/", "/dav/"), "/api/dav/addressbooks/user/a@b/Default/");
  assert.equal(apiPath("https://mail.example.test/dav/principals/user/a/", "/dav/"), "/api/dav/principals/user/a/");
  assert.equal(apiPath("/other/x", "/dav/"), null);
  assert.equal(apiPath("/dav/x", null), null);
  assert.equal(apiPath("", "/dav/"), null);
});
