// search.js: the search box's language into a JMAP FilterCondition.
import { test } from "node:test";
import assert from "node:assert/strict";
import { parse, tokens, hasMailbox } from "../../www/js/search.js";

const boxes = { inbox: "m1", archive: "m2" };
const find = (name) => boxes[name.toLowerCase()] ?? null;

test("words, quoted phrases and operators come apart", () => {
  assert.deepEqual(tokens('from:ana "big news" subject:"q3 plan" rest'), [
    { op: "from", value: "ana" }, { op: "", value: "big news" },
    { op: "subject", value: "q3 plan" }, { op: "", value: "rest" }]);
});

test("one condition stays alone; several are ANDed", () => {
  assert.deepEqual(parse("from:ana", find), { from: "ana" });
  assert.deepEqual(parse("from:ana is:unread has:attachment in:archive", find), {
    operator: "AND", conditions: [{ from: "ana" }, { notKeyword: "$seen" },
      { hasAttachment: true }, { inMailbox: "m2" }] });
  assert.equal(parse("   ", find), null);
});

test("flags, dates, and what it does not know becomes text", () => {
  assert.deepEqual(parse("is:starred", find), { hasKeyword: "$flagged" });
  assert.deepEqual(parse("is:read", find), { hasKeyword: "$seen" });
  assert.deepEqual(parse("before:2026-01-31", find), { before: "2026-01-31T00:00:00Z" });
  assert.deepEqual(parse("after:someday", find), { text: "after:someday" });
  assert.deepEqual(parse("in:nowhere lunch", find), { text: "in:nowhere lunch" });
  assert.deepEqual(parse("is:maybe", find), { text: "is:maybe" });
});

test("a filter names a folder or not", () => {
  assert.equal(hasMailbox(parse("in:inbox", find)), true);
  assert.equal(hasMailbox(parse("from:ana", find)), false);
  assert.equal(hasMailbox(null), false);
});
