// The suggestion ranking (www/js/suggest.js): node --test, no browser.
import { test } from "node:test";
import assert from "node:assert/strict";
import { note, rank, merge, prune, pack, unpack, match, fold, prepare, HALF_LIFE } from "../../www/js/suggest.js";

const DAY = 24 * 3600 * 1000;
const NOW = Date.UTC(2026, 11, 1);
const emails = (list) => list.map((c) => c.email);

function book(entries) {
  const m = new Map();
  for (const [email, name, kind, ...ages] of entries) for (const d of ages) note(m, { email, name }, kind, NOW - d * DAY);
  return m;
}

test("people written to come before people who only wrote", () => {
  const m = book([["bob@example.test", "Bob Baker", "from", 0, 0, 0, 1, 1, 2], ["bo@example.test", "Bo Ng", "to", 300]]);
  assert.deepEqual(emails(rank(m.values(), "bo")), ["bo@example.test", "bob@example.test"]);
});

test("within a tier, how often and how recently", () => {
  const often = book([["a@x.test", "Bob A", "to", 10, 11, 12, 13, 14], ["b@x.test", "Bob B", "to", 10], ["c@x.test", "Bob C", "to", 1]]);
  // five mails ten days ago outweigh one yesterday; one yesterday outweighs one ten days ago
  assert.deepEqual(emails(rank(often.values(), "bob")), ["a@x.test", "c@x.test", "b@x.test"]);
  // an old habit fades: twenty mails a year ago count less than two this week
  const old = book([["old@x.test", "Bob Old", "to", ...Array(20).fill(365)], ["new@x.test", "Bob New", "to", 2, 3]]);
  assert.deepEqual(emails(rank(old.values(), "bob")), ["new@x.test", "old@x.test"]);
  assert.ok(HALF_LIFE > 7 * DAY && HALF_LIFE < 365 * DAY);
});

test("what matches: the start of the address, the name or any word of them, without accents or case", () => {
  const c = { email: "jorg.muller@example.test", name: "Jörg Müller" };
  assert.equal(match(c, fold("jö")), 0);
  assert.equal(match(c, fold("MÜL")), 1);
  assert.equal(match(c, "example"), 1);
  assert.equal(match(c, "rg"), -1);
  const m = book([["bob@example.test", "Bob Baker", "to", 1], ["robert@example.test", "Robert Bobson", "to", 1], ["alice@example.test", "Alice", "to", 0]]);
  assert.deepEqual(emails(rank(m.values(), "bo")), ["bob@example.test", "robert@example.test"]);
  assert.deepEqual(rank(m.values(), "  "), []);
  assert.deepEqual(rank(m.values(), "zz"), []);
});

test("the user's own addresses and those already chosen are left out; at most limit", () => {
  const m = book([["bob@example.test", "Bob", "to", 1], ["bobby@example.test", "Bobby", "to", 2], ["me@example.test", "Bob Me", "to", 0]]);
  assert.deepEqual(emails(rank(m.values(), "bob", { exclude: new Set(["me@example.test", "bob@example.test"]) })), ["bobby@example.test"]);
  assert.equal(rank(m.values(), "bob", { limit: 1 }).length, 1);
});

test("the newest name wins; the address keeps its first spelling", () => {
  const m = new Map();
  note(m, { email: "Bob@Example.test", name: "bob" }, "from", NOW - 10 * DAY);
  note(m, { email: "bob@example.test", name: "Bob Baker" }, "from", NOW - 1 * DAY);
  note(m, { email: "bob@example.test", name: "B." }, "to", NOW - 5 * DAY);
  note(m, { email: "bob@example.test" }, "to", NOW);
  assert.equal(m.size, 1);
  const [c] = m.values();
  assert.equal(c.name, "Bob Baker");
  assert.equal(c.email, "Bob@Example.test");
  assert.equal(c.to.n, 2);
  assert.equal(c.from.n, 2);
  assert.equal(c.to.last, NOW);
});

test("an address book ranks first and its names win, merged with mail", () => {
  const mail = book([["bob@example.test", "bob", "to", 0, 0, 0], ["bea@example.test", "Bea", "to", 0]]);
  const all = merge([{ book: true, contacts: [{ email: "BEA@example.test", name: "Beatrix Book" }, { email: "bo@example.test", name: "Bo" }] },
    { contacts: [...mail.values()] }]);
  const r = rank(all, "b");
  // both from the book; the one also written to first
  assert.deepEqual(emails(r), ["BEA@example.test", "bo@example.test", "bob@example.test"]);
  assert.equal(r[0].name, "Beatrix Book");
  assert.equal(r[0].to.n, 1);
});

test("bounded: the least useful go first; packed for storage and back", () => {
  const m = book([["a@x.test", "A", "to", 1], ["b@x.test", "B", "from", 0], ["c@x.test", "C", "to", 50], ["d@x.test", "D", "from", 9]]);
  assert.deepEqual([...prune(m, 3).keys()], ["a@x.test", "c@x.test", "b@x.test"]);
  assert.equal(prune(m, 10), m);
  const back = unpack(JSON.parse(JSON.stringify(pack(m))));
  assert.deepEqual(emails(rank(back.values(), "x.test")), emails(rank(m.values(), "x.test")));
  assert.equal(back.get("b@x.test").to.n, 0);
  note(back, { email: "b@x.test" }, "to", NOW);
  assert.equal(back.get("b@x.test").to.n, 1);
});

test("ranking 5,000 contacts takes well under a frame", (t) => {
  const m = new Map();
  for (let i = 0; i < 5000; i++) note(m, { email: `person${i}@example${i % 50}.test`, name: `Person ${i} Bobson` }, i % 3 ? "from" : "to", NOW - i * 3600000);
  const list = [...m.values()];
  let t0 = process.hrtime.bigint();
  prepare(list);
  const prep = Number(process.hrtime.bigint() - t0) / 1e6;
  assert.ok(prep < 200, `${prep} ms to prepare`);
  t0 = process.hrtime.bigint();
  for (let i = 0; i < 20; i++) rank(list, "bob");
  const ms = Number(process.hrtime.bigint() - t0) / 1e6 / 20;
  t.diagnostic(`5,000 contacts: ${prep.toFixed(1)} ms to prepare, ${ms.toFixed(2)} ms a ranking`);
  // A frame is 16 ms; the bound leaves room for a busy test machine.
  assert.ok(ms < 50, `${ms} ms a ranking`);
});
