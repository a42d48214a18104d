// views/mailstyle.js: a mail's own CSS, cleaned before the app applies it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { cleanCss } from "../../www/js/views/mailstyle.js";

const keepCid = (u) => (u.startsWith("cid:") ? `blob:${u.slice(4)}` : null);

test("remote urls are dropped, cid: images rewritten", () => {
  assert.equal(cleanCss("p{background:url(http://evil.test/x.png)}", keepCid), "p{background:none}");
  assert.equal(cleanCss("p{background:url('cid:logo')}", keepCid), 'p{background:url("blob:logo")}');
});

test("@import, @font-face, comments and script hooks go", () => {
  assert.equal(cleanCss("@import url(http://x.test/a.css); p{color:red}", keepCid), "p{color:red}");
  assert.equal(cleanCss("@font-face{src:url(http://x.test/f.woff)} b{}", keepCid), "b{}");
  assert.equal(cleanCss("/* url(http://x.test) */p{}", keepCid), "p{}");
  assert.match(cleanCss("p{width:expression(alert(1))}", keepCid), /x-alert/);
  assert.doesNotMatch(cleanCss("p{background:image-set('http://x.test/a.png' 1x)}", keepCid), /image-set/);
});

test("an escape cannot spell url( past the patterns", () => {
  const out = cleanCss("p{background:\\75rl(http://evil.test/x.png)}", keepCid);
  assert.doesNotMatch(out, /\\/);   // the escape is gone: inert text, no url(
  assert.doesNotMatch(out, /url\(/i);
});

test("empty or too large is nothing", () => {
  assert.equal(cleanCss("", keepCid), "");
  assert.equal(cleanCss("a{}".repeat(100000), keepCid), "");
});
