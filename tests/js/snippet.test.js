// Search snippets as text and marks (www/js/snippet.js): node --test, no browser.
import { test } from "node:test";
import assert from "node:assert/strict";
import { parts, decode, marks } from "../../www/js/snippet.js";

test("marked words and the text around them", () => {
  assert.deepEqual(parts("the <mark>roadmap</mark> for Q4"), [
    { text: "the ", mark: false }, { text: "roadmap", mark: true }, { text: " for Q4", mark: false }]);
  assert.ok(marks("a <mark>b</mark>"));
  assert.ok(!marks("a b"));
  assert.deepEqual(parts(null), []);
  assert.deepEqual(parts(""), []);
});

test("entities are text, never markup", () => {
  assert.deepEqual(parts("&lt;script&gt;alert(1)&lt;/script&gt; <mark>x&amp;y</mark>"), [
    { text: "<script>alert(1)</script> ", mark: false }, { text: "x&y", mark: true }]);
  assert.equal(decode("&#233;t&#xE9; &quot;q&quot; &apos; &bogus; &#0; &#xD800;"), "été \"q\" ' &bogus; \ufffd \ufffd");
});

test("any tag but mark is dropped, whatever its attributes", () => {
  const p = parts('<img src=x onerror=alert(1)><b>bold</b> <MARK>Hit</MARK><mark class="x">no</mark> <script>s</script><mark');
  assert.deepEqual(p, [{ text: "bold ", mark: false }, { text: "Hit", mark: true }, { text: "no s", mark: false }]);
  assert.ok(p.every((x) => !x.text.includes("<")));
});
