// CSS in a mail's SVG/MathML attributes (www/js/cssattr.js): node --test,
// no browser. The rewrite stands in for the reader's image rule: http(s)
// blocked (null) before "Show images", through the proxy after; cid: and
// data: images as the reader treats them.
import { test } from "node:test";
import assert from "node:assert/strict";
import { cleanAttr, tokenize, looseCount, URL_ATTRS } from "../../www/js/cssattr.js";

const seen = [];
const blocked = (u) => { seen.push(u); return /^data:image\//i.test(u) ? u : /^cid:/i.test(u) ? "https://app/api/blob/x?inline=1" : null; };
const shown = (u) => { seen.push(u); return /^https?:/i.test(u) ? `https://app/api/image?url=${encodeURIComponent(u)}` : blocked(u); };
const REMOTE = "http://tracker.example/p.png";

// Every attribute the issue names, and the others where a url() means something.
const NAMED = ["fill", "stroke", "mask", "clip-path", "filter", "marker-start", "marker-mid", "marker-end",
  "flood-color", "lighting-color", "stop-color", "color-profile", "cursor", "marker"];

test("a remote url() in any presentation attribute is dropped before Show images", () => {
  for (const a of NAMED) {
    for (const v of [`url(${REMOTE})`, `url("${REMOTE}")`, `url('${REMOTE}')`, `url( ${REMOTE} ) red`, `red url(${REMOTE})`]) {
      assert.equal(cleanAttr(a, v, blocked), null, `${a}="${v}"`);
    }
  }
});

test("after Show images it goes through the proxy where a url() belongs, dropped elsewhere", () => {
  for (const a of URL_ATTRS) {
    assert.equal(cleanAttr(a, `url(${REMOTE}) red`, shown), `url("https://app/api/image?url=${encodeURIComponent(REMOTE)}") red`, a);
  }
  // A colour cannot be a url(): nothing to proxy, the attribute goes.
  for (const a of ["flood-color", "lighting-color", "stop-color", "color-profile", "values", "by", "d", "title"]) {
    assert.equal(cleanAttr(a, `url(${REMOTE})`, shown), null, a);
  }
});

test("case, whitespace, comments, escapes and quoting are all read as the browser reads them", () => {
  const forms = [
    `URL(${REMOTE})`, `Url(  "${REMOTE}"  )`, `u\\rl(${REMOTE})`, `\\75 rl(${REMOTE})`, `\\75rl(${REMOTE})`,
    `\\000075rl(${REMOTE})`, `\\55 RL(${REMOTE})`, `u\\72 l(${REMOTE})`, `url(\\68 ttp://tracker.example/p.png)`,
    `url("\\68ttp://tracker.example/p.png")`, `url(${REMOTE}`, `url("${REMOTE}"`, `/**/url(${REMOTE})`,
    `url(/* x */"${REMOTE}")`, `url(\n${REMOTE}\n)`, `url(\t'${REMOTE}'\t)`, `src("${REMOTE}")`,
    `url(${REMOTE}\r\n)`, `rgb(1 2 3) url(${REMOTE})`, `color-mix(in srgb, url(${REMOTE}) 50%, red)`,
  ];
  for (const v of forms) {
    seen.length = 0;
    assert.equal(cleanAttr("fill", v, blocked), null, `fill="${v}"`);
  }
  // What the rewrite was asked about is the URL, decoded.
  seen.length = 0;
  cleanAttr("fill", "url(\\68ttp://tracker.example/p.png)", shown);
  assert.deepEqual(seen, [REMOTE]);
});

test("what the browser would not read as url() but looks like one still drops the attribute", () => {
  for (const v of [`URL (${REMOTE})`, `url/**/(${REMOTE})`, `url(${REMOTE} x)`, `url(a"b)`, `url(a(b)`,
    `image-set("${REMOTE}" 1x)`, `-webkit-image-set(url(${REMOTE}) 1x)`, `image("${REMOTE}")`,
    `cross-fade(url(${REMOTE}), red)`, `element(#x)`, `paint(x)`, `unknownfn(1)`, `url("a\nb")`,
    `url("${REMOTE}" x)`, `url("#ok" "${REMOTE}")`]) {
    assert.equal(cleanAttr("fill", v, shown), null, `fill="${v}"`);
  }
  // url( in an attribute that is not a presentation attribute: any form goes.
  for (const v of [`url(#a)`, `0;url(${REMOTE})`, `\\75 rl(x)`]) assert.equal(cleanAttr("values", v, shown), null, v);
});

test("same-document references, plain colours and other values are kept as they are", () => {
  seen.length = 0;
  for (const [a, v] of [["fill", "url(#grad1)"], ["fill", "url('#g') red"], ["stroke", "#ff0000"], ["fill", "rgb(10, 20, 30)"],
    ["mask", "url(#m)"], ["clip-path", "url(#clip)"], ["filter", "url(#f)"], ["marker-end", "url(#arrow)"],
    ["stop-color", "hsl(120 50% 50%)"], ["transform", "rotate(45) translate(1 2)"], ["d", "M0 0L10 10"],
    ["fill", "none"], ["fill", "var(--brand)"], ["font-family", "'Helvetica Neue', sans-serif"], ["id", "a-url"]]) {
    const want = /url\(/.test(v) ? v.replace(/url\('?(#\w+)'?\)/, 'url("$1")') : v;
    assert.equal(cleanAttr(a, v, blocked), want, `${a}="${v}"`);
  }
  assert.deepEqual(seen, [], "a #id is never handed to the image rule");
});

test("cid: and data: images follow the image rule; other schemes and relative URLs go", () => {
  assert.equal(cleanAttr("mask", "url(cid:m@x)", blocked), 'url("https://app/api/blob/x?inline=1")');
  assert.equal(cleanAttr("cursor", "url(data:image/png;base64,AAAA), auto", blocked), 'url("data:image/png;base64,AAAA"), auto');
  for (const v of ["url(/api/image?url=x)", "url(x.png)", "url(javascript:alert(1))", "url(//tracker.example/p)",
    "url(ftp://tracker.example/p)", "url(data:text/html,x)"]) {
    assert.equal(cleanAttr("fill", v, shown), null, v);
  }
});

test("a quote or backslash in a rewritten URL cannot break out of the url()", () => {
  const r = cleanAttr("fill", `url("data:image/png,a\\"b\\\\c")`, blocked);
  assert.equal(r, 'url("data:image/png,a%22b%5Cc")');
});

test("the tokenizer reads escapes, strings and bad urls as CSS Syntax 3 does", () => {
  const types = (s) => tokenize(s).tokens.map((t) => t.type + (t.value !== undefined ? `:${t.value}` : ""));
  assert.deepEqual(types("\\75 rl(x)"), ["url:x"]);
  assert.deepEqual(types("url( 'x' )"), ["function:url", "ws", "string:x", "ws", "delim:)"]);
  assert.deepEqual(types("url(a b)"), ["bad-url"]);
  assert.deepEqual(types("1url(x)"), ["number", "delim:(", "ident:x", "delim:)"]);
  assert.deepEqual(types("#a"), ["hash:a"]);
  assert.equal(looseCount("U\\52 L  (x) /* url( */ image-set("), 2);
});
