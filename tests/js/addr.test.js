// The address parser (www/js/addr.js): node --test, no browser.
import { test } from "node:test";
import assert from "node:assert/strict";
import { isValidEmail, parseList, splitTyped, format, formatList, dedupe } from "../../www/js/addr.js";

const pairs = (list) => list.map((a) => [a.name, a.email, a.valid]);

test("valid and invalid addresses", () => {
  for (const ok of ["bob@example.test", "a.b+tag@sub.example.org", "\"odd name\"@example.test", "x@[192.0.2.1]",
    "jörg@bücher.example", "o'neil@example.ie"]) assert.ok(isValidEmail(ok), ok);
  for (const bad of ["bob@", "@example.test", "bob", "not an address", "bob@@example.test", "bob@example", "bob@.example.test",
    "bob@example..test", "bob@-example.test", "a..b@example.test", ".a@example.test", "bob@example.123", "b ob@example.test",
    "x".repeat(65) + "@example.test", "", null]) assert.ok(!isValidEmail(bad), String(bad));
});

test("names and addresses the way people paste them", () => {
  assert.deepEqual(pairs(parseList("Bob Baker <bob@example.test>")), [["Bob Baker", "bob@example.test", true]]);
  assert.deepEqual(pairs(parseList('"Baker, Bob" <bob@example.test>, carol@example.test')),
    [["Baker, Bob", "bob@example.test", true], [null, "carol@example.test", true]]);
  assert.deepEqual(pairs(parseList("a@example.test; b@example.test\nc@example.test\r\n,, ;")),
    [[null, "a@example.test", true], [null, "b@example.test", true], [null, "c@example.test", true]]);
  assert.deepEqual(pairs(parseList("bob@example.test (Bob Baker)")), [["Bob Baker", "bob@example.test", true]]);
  assert.deepEqual(pairs(parseList("mailto:bob@example.test?subject=hi")), [[null, "bob@example.test", true]]);
  assert.deepEqual(pairs(parseList("<mailto:bob@example.test>")), [[null, "bob@example.test", true]]);
  assert.deepEqual(pairs(parseList("Bob Baker bob@example.test")), [["Bob Baker", "bob@example.test", true]]);
  assert.deepEqual(pairs(parseList('"Quote \\" inside" <q@example.test>')), [['Quote " inside', "q@example.test", true]]);
  assert.deepEqual(pairs(parseList("  <bob@example.test>  ")), [[null, "bob@example.test", true]]);
  assert.deepEqual(pairs(parseList("'Bob'  <bob@example.test>")), [["Bob", "bob@example.test", true]]);
});

test("Outlook's Last, First <address> keeps the name whole", () => {
  assert.deepEqual(pairs(parseList("Baker, Bob <bob@example.test>; Chen, Carol <carol@example.test>")),
    [["Baker, Bob", "bob@example.test", true], ["Chen, Carol", "carol@example.test", true]]);
});

test("a list whose new lines became spaces (pasted into a text field) is still a list", () => {
  assert.deepEqual(pairs(parseList("a@example.test b@example.test")),
    [[null, "a@example.test", true], [null, "b@example.test", true]]);
  assert.deepEqual(pairs(parseList("Bob Baker <bob@example.test> Carol Chen <carol@example.test>")),
    [["Bob Baker", "bob@example.test", true], ["Carol Chen", "carol@example.test", true]]);
  assert.deepEqual(pairs(parseList("Baker, Bob <bob@example.test> Chen, Carol <carol@example.test>")),
    [["Baker, Bob", "bob@example.test", true], ["Chen, Carol", "carol@example.test", true]]);
  assert.deepEqual(pairs(parseList("a@example.test Carol Chen <carol@example.test>")),
    [[null, "a@example.test", true], ["Carol Chen", "carol@example.test", true]]);
  // and what is one address stays one
  assert.equal(parseList("bob@example.test (Bob Baker)").length, 1);
  assert.equal(parseList("bob@example.test <bob@example.test>").length, 1);
  assert.equal(parseList('"Baker bob@x" <bob@example.test>').length, 1);
});

test("invalid pieces stay, marked, so that they can be corrected", () => {
  assert.deepEqual(pairs(parseList("bob@, not an address, bob@@example.test")),
    [[null, "bob@", false], [null, "not an address", false], [null, "bob@@example.test", false]]);
  assert.deepEqual(pairs(parseList("Bob <bob@>")), [["Bob", "bob@", false]]);
});

test("separators inside quotes and brackets do not split", () => {
  assert.equal(parseList('"a, b; c" <x@example.test>').length, 1);
  assert.equal(parseList("x@example.test (Smith, John)").length, 1);
});

test("while typing: finished addresses and the rest", () => {
  assert.deepEqual(splitTyped("bob@example.test, car"), { done: [{ name: null, email: "bob@example.test", valid: true }], rest: "car" });
  assert.deepEqual(splitTyped("bob@exa").done, []);
  assert.equal(splitTyped("bob@exa").rest, "bob@exa");
  // "Baker," may be the start of "Baker, Bob <...>": kept.
  assert.deepEqual(splitTyped("Baker, Bo"), { done: [], rest: "Baker, Bo" });
  assert.deepEqual(splitTyped('"Baker, Bob" <bob@example.test>;').done.map((a) => a.name), ["Baker, Bob"]);
  assert.equal(splitTyped('"Baker, Bo').rest, '"Baker, Bo');
});

test("written back: names quoted when they need it; no repeats", () => {
  assert.equal(format({ name: "Bob Baker", email: "bob@example.test" }), "Bob Baker <bob@example.test>");
  assert.equal(format({ name: "Baker, Bob", email: "bob@example.test" }), '"Baker, Bob" <bob@example.test>');
  assert.equal(format({ name: 'Say "hi"', email: "h@example.test" }), '"Say \\"hi\\"" <h@example.test>');
  assert.equal(format({ name: null, email: "bob@example.test" }), "bob@example.test");
  const round = [{ name: "Baker, Bob", email: "bob@example.test" }, { name: null, email: "c@example.test" }];
  assert.deepEqual(parseList(formatList(round)).map(({ name, email }) => ({ name, email })), round);
  assert.deepEqual(dedupe(parseList("a@example.test, A@Example.test, b@example.test")).map((a) => a.email), ["a@example.test", "b@example.test"]);
});
