// The address book's contacts (www/js/book.js): vCard 3.0 and 4.0 ↔ the
// contact, groups, search and order. node --test, no browser.
import { test } from "node:test";
import assert from "node:assert/strict";
import { parseCards, toVcard, fromSender, blank, filter, matches, sort, groupsOf, people, resourceName, fold } from "../../www/js/book.js";

const V3 = ["BEGIN:VCARD", "VERSION:3.0", "UID:ada-1", "FN:Ada Lovelace", "N:Lovelace;Ada;;;",
  "EMAIL;TYPE=INTERNET,WORK:ada@example.test", "EMAIL;TYPE=HOME:ada@home.test", "TEL;TYPE=CELL:+44 20 7946 0001",
  "ORG:Analytical Engines\\, Ltd.", "TITLE:Programmer", "ADR;TYPE=HOME:;;12 St James's Sq;London;;SW1Y 4JH;UK",
  "NOTE:First line\\nsecond\\; with\\, marks", "CATEGORIES:Friends,Science", "PHOTO;VALUE=URI:https://example.test/ada.png",
  "X-CUSTOM;X-PARAM=1:kept", "END:VCARD"].join("\r\n") + "\r\n";
const V4 = ["BEGIN:VCARD", "VERSION:4.0", "UID:urn:uuid:4f7c-1", "FN:Émile Zola", "N:Zola;Émile;;;",
  "EMAIL;TYPE=work;PREF=1:emile@example.test", "TEL;VALUE=uri;TYPE=voice:tel:+33-1-23-45-67-89",
  "ORG:Le Figaro;Rédaction", "CATEGORIES:Writers", "END:VCARD"].join("\r\n") + "\r\n";

test("vCard 3.0: every field the screen shows", () => {
  const [{ contact: c }] = parseCards(V3);
  assert.equal(c.uid, "ada-1");
  assert.equal(c.fn, "Ada Lovelace");
  assert.deepEqual(c.n, { family: "Lovelace", given: "Ada" });
  assert.deepEqual(c.emails, [{ type: "work", value: "ada@example.test" }, { type: "home", value: "ada@home.test" }]);
  assert.deepEqual(c.phones, [{ type: "cell", value: "+44 20 7946 0001" }]);
  assert.equal(c.org, "Analytical Engines, Ltd.");
  assert.equal(c.title, "Programmer");
  assert.deepEqual(c.addresses, [{ type: "home", street: "12 St James's Sq", locality: "London", region: "", code: "SW1Y 4JH", country: "UK" }]);
  assert.equal(c.note, "First line\nsecond; with, marks");
  assert.deepEqual(c.groups, ["Friends", "Science"]);
});

test("vCard 4.0: URIs, PREF, structured ORG, accents", () => {
  const [{ contact: c }] = parseCards(V4);
  assert.equal(c.uid, "urn:uuid:4f7c-1");
  assert.equal(c.fn, "Émile Zola");
  assert.deepEqual(c.emails, [{ type: "work", value: "emile@example.test" }]);
  assert.deepEqual(c.phones, [{ type: "", value: "+33-1-23-45-67-89" }]);
  assert.equal(c.org, "Le Figaro, Rédaction", "ORG's units joined");
  assert.deepEqual(c.groups, ["Writers"]);
});

test("many cards in one file, folded lines, LF endings, a broken card skipped", () => {
  const text = V3 + V4.replace(/\r\n/g, "\n") + "BEGIN:VCARD\nVERSION:3.0\nFN:Long\n  Name\nEMAIL:long@x.test\nEND:VCARD\n"
    + "BEGIN:VCARD\nthis is not a vcard line\nEND:VCARD\n";
  const cards = parseCards(text);
  assert.equal(cards.length, 3);
  assert.equal(cards.errors, 1);
  assert.equal(cards[2].contact.fn, "Long Name");
});

test("round trip: parse → edit → write → parse keeps what was changed and what the form does not own", () => {
  const [{ contact, component }] = parseCards(V3);
  const edited = { ...contact, fn: "Ada King", note: "a;b,c\\d\nnext", groups: ["Friends", "Semi;colon, comma"],
    emails: [...contact.emails, { type: "", value: "countess@example.test" }] };
  const text = toVcard(edited, component);
  assert.match(text, /^BEGIN:VCARD\r\nVERSION:3\.0\r\n/);
  assert.ok(text.endsWith("END:VCARD\r\n"));
  assert.ok(!/[^\r]\n/.test(text), "CRLF line ends only");
  assert.match(text, /\r\nPHOTO;VALUE=URI:https:\/\/example\.test\/ada\.png\r\n/, "PHOTO kept");
  assert.match(text, /\r\nX-CUSTOM;X-PARAM=1:kept\r\n/, "an X- property kept");
  assert.match(text, /\r\nUID:ada-1\r\n/, "the UID kept");
  assert.match(text, /\r\nNOTE:a;b\\,c\\\\d\\nnext\r\n/, "text escaped");
  const [{ contact: again }] = parseCards(text);
  assert.deepEqual(again, { ...edited, emails: edited.emails.map((e) => ({ ...e, type: e.type })) });
});

test("round trip of a vCard 4.0 card stays 4.0", () => {
  const [{ contact, component }] = parseCards(V4);
  const text = toVcard({ ...contact, title: "Novelist" }, component);
  assert.match(text, /\r\nVERSION:4\.0\r\n/);
  const [{ contact: again }] = parseCards(text);
  assert.equal(again.title, "Novelist");
  assert.deepEqual(again.groups, ["Writers"]);
  assert.equal(again.fn, "Émile Zola");
});

test("a new card: vCard 3.0 with UID, FN, N, and no empty properties", () => {
  const text = toVcard(blank({ uid: "u-1", n: { given: "Grace", family: "Hopper" }, emails: [{ type: "", value: "grace@example.test" }] }));
  assert.match(text, /VERSION:3\.0\r\n/);
  assert.match(text, /\r\nUID:u-1\r\n/);
  assert.match(text, /\r\nFN:Grace Hopper\r\n/, "FN from the name parts");
  assert.match(text, /\r\nN:Hopper;Grace;;;\r\n/);
  assert.match(text, /\r\nEMAIL;TYPE=internet:grace@example\.test\r\n/);
  for (const p of ["TEL", "ORG", "TITLE", "NOTE", "ADR", "CATEGORIES"]) assert.ok(!text.includes(`\r\n${p}`), p);
  const [{ contact }] = parseCards(text);
  assert.equal(contact.fn, "Grace Hopper");
  // a group removed is gone from the card
  const grouped = toVcard({ ...contact, groups: ["Navy"] }, parseCards(text)[0].component);
  assert.match(grouped, /\r\nCATEGORIES:Navy\r\n/);
  assert.ok(!toVcard({ ...contact, groups: [] }, parseCards(grouped)[0].component).includes("CATEGORIES"));
});

const list = () => parseCards(V3 + V4 + toVcard(blank({ uid: "z", fn: "zoë ångström", emails: [{ value: "zoe@lab.test" }], phones: [{ value: "06 12 34 56 78" }], groups: ["Science"] }))
  + toVcard(blank({ uid: "b", fn: "Bob", org: "ACME Corp" }))).map((c) => c.contact);

test("search: name, email, phone, organisation; no case, no accents; every word", () => {
  const l = list();
  const names = (q) => filter(l, q, null, "en").map((c) => c.fn);
  assert.deepEqual(names("emile"), ["Émile Zola"]);
  assert.deepEqual(names("ZOE"), ["zoë ångström"]);
  assert.deepEqual(names("angstrom"), ["zoë ångström"]);
  assert.deepEqual(names("ada@home"), ["Ada Lovelace"]);
  assert.deepEqual(names("acme"), ["Bob"]);
  assert.deepEqual(names("figaro"), ["Émile Zola"]);
  assert.deepEqual(names("0612345678"), ["zoë ångström"], "digits without the spaces");
  assert.deepEqual(names("7946 0001"), ["Ada Lovelace"]);
  assert.deepEqual(names("ada lovelace"), ["Ada Lovelace"]);
  assert.deepEqual(names("ada zola"), []);
  assert.equal(names("").length, 4);
  assert.ok(matches(l[0], "  "));
  assert.equal(fold("ÉÀÇ"), "eac");
});

test("order: by name in the locale, accents and case aside", () => {
  assert.deepEqual(sort(list(), "en").map((c) => c.fn), ["Ada Lovelace", "Bob", "Émile Zola", "zoë ångström"]);
  // Swedish puts å after z
  assert.deepEqual(sort([blank({ fn: "Åsa" }), blank({ fn: "Zed" })], "sv").map((c) => c.fn), ["Zed", "Åsa"]);
});

test("groups: the list of groups, and the filter by one", () => {
  const l = list();
  assert.deepEqual(groupsOf(l, "en"), ["Friends", "Science", "Writers"]);
  assert.deepEqual(filter(l, "", "Science", "en").map((c) => c.fn), ["Ada Lovelace", "zoë ångström"]);
  assert.deepEqual(filter(l, "zoe", "Science", "en").map((c) => c.fn), ["zoë ångström"]);
  assert.deepEqual(filter(l, "", "Nobody", "en"), []);
});

test("people for the suggestions, a sender as a new contact, resource names", () => {
  assert.deepEqual(people(list()).filter((p) => p.name === "Ada Lovelace"),
    [{ email: "ada@example.test", name: "Ada Lovelace" }, { email: "ada@home.test", name: "Ada Lovelace" }]);
  const s = fromSender({ name: "Carol Ann Smith", email: "carol@example.test" });
  assert.equal(s.fn, "Carol Ann Smith");
  assert.deepEqual(s.n, { given: "Carol Ann", family: "Smith" });
  assert.deepEqual(s.emails, [{ type: "", value: "carol@example.test" }]);
  assert.deepEqual(fromSender({ email: "x@y.test" }).emails, [{ type: "", value: "x@y.test" }]);
  assert.equal(resourceName("ada-1", () => "R"), "ada-1.vcf");
  assert.equal(resourceName("urn:uuid:4f7c-1", () => "R"), "R.vcf", "a UID with unsafe characters gets a fresh name");
  assert.equal(resourceName("../x", () => "R"), "R.vcf");
  assert.equal(resourceName("", () => "R"), "R.vcf");
});
