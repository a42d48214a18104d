// Acting on many (www/js/bulk.js): node --test, no browser.
import { test } from "node:test";
import assert from "node:assert/strict";
import { empty, isSelected, isEmpty, count, merge, without, missing, rowIds, batches, inverse, patchFor, nextAfter, progressGate } from "../../www/js/bulk.js";

const sparse = (n, loaded) => { const a = []; for (const i of loaded) a[i] = `r${i}`; a.length = n; return a; };

test("a Shift range counts every row in it, loaded or not", () => {
  const ids = sparse(2500, [0, 1, 2, 2499]);
  const sel = { ...empty(), ranges: [[0, 2000]] };
  assert.equal(count(sel, 2500, ids), 2001);
  assert.ok(isSelected(sel, 1500, undefined));
  assert.ok(!isSelected(sel, 2001, "r2001"));
  // a row ticked inside the range is not counted twice, one outside is
  sel.ids.add("r1").add("r2499");
  assert.equal(count(sel, 2500, ids), 2002);
  assert.equal(count({ ...empty(), all: true }, 2500), 2500);
  assert.ok(isEmpty(empty()) && !isEmpty(sel));
});

test("the windows still to query, and the row ids once loaded", () => {
  const ids = sparse(300, [...Array(60).keys()]);
  assert.deepEqual(missing([[10, 200]], ids), [[60, 141]]);
  assert.deepEqual(missing([[0, 59]], ids), []);
  assert.deepEqual(missing([[250, 260], [50, 70], [65, 80]], ids), [[60, 21], [250, 11]]);
  const all = sparse(300, [...Array(300).keys()]);
  assert.equal(rowIds({ ...empty(), ranges: [[10, 200]] }, all).length, 191);
});

test("ranges merge, and a row leaves a range", () => {
  assert.deepEqual(merge([[5, 9], [0, 3], [4, 4], [20, 30], [25, 26]]), [[0, 9], [20, 30]]);
  assert.deepEqual(without([[0, 9]], 0), [[1, 9]]);
  assert.deepEqual(without([[0, 9]], 4), [[0, 3], [5, 9]]);
  assert.deepEqual(without([[0, 0], [3, 5]], 0), [[3, 5]]);
});

test("batches of what the server allows", () => {
  const ids = [...Array(2500).keys()];
  const b = batches(ids, 500);
  assert.equal(b.length, 5);
  assert.ok(b.every((x) => x.length === 500));
  assert.deepEqual(batches([1, 2, 3], 2), [[1, 2], [3]]);
  assert.deepEqual(batches([1, 2], 0), [[1], [2]]);
});

test("the inverse of a patch undoes it", () => {
  const e = { mailboxIds: { J: true }, keywords: { $seen: true, $junk: true } };
  const p = patchFor("notjunk", { inbox: "I" });
  assert.deepEqual(p, { mailboxIds: { I: true }, "keywords/$junk": null, "keywords/$notjunk": true });
  assert.deepEqual(inverse(p, e), { mailboxIds: { J: true }, "keywords/$junk": true, "keywords/$notjunk": null });
  assert.deepEqual(inverse(patchFor("read"), { keywords: {} }), { "keywords/$seen": null });
  assert.deepEqual(inverse(patchFor("read"), { keywords: { $seen: true } }), { "keywords/$seen": true });
  assert.deepEqual(patchFor("junk", { to: "J" }), { mailboxIds: { J: true }, "keywords/$junk": true, "keywords/$notjunk": null });
  assert.deepEqual(patchFor("archive", { to: "A" }), { mailboxIds: { A: true } });
});

test("the next message after the open one left", () => {
  const ids = ["a", "b", "c", "d"];
  assert.equal(nextAfter(ids, new Set(["b"]), 1, "next"), "c");
  assert.equal(nextAfter(ids, new Set(["b"]), 1, "previous"), "a");
  assert.equal(nextAfter(ids, new Set(["b"]), 1, "list"), null);
  // the last one: next falls back to the one above; the first: previous to below
  assert.equal(nextAfter(ids, new Set(["d"]), 3, "next"), "c");
  assert.equal(nextAfter(ids, new Set(["a"]), 0, "previous"), "b");
  // several gone at once, holes skipped
  assert.equal(nextAfter(["a", undefined, "b", "c", "d"], new Set(["b", "c"]), 2, "next"), "d");
  assert.equal(nextAfter(["a"], new Set(["a"]), 0, "next"), null);
});

test("a long action's progress shows only while nothing newer is shown", () => {
  let count = 0;
  const said = [];
  const show = (done, total) => { said.push(`${done}/${total}`); return ++count; };
  const now = () => count;
  assert.equal(progressGate(200, show, now), null);     // short: none
  const p = progressGate(600, show, now);
  p(0, 600);
  p(300, 600);
  assert.deepEqual(said, ["0/600", "300/600"]);
  count++;                                             // a newer message (the result, another action)
  p(600, 600);                                         // the action's undo reports on: not shown
  assert.deepEqual(said, ["0/600", "300/600"]);
  assert.equal(count, 3);
});
