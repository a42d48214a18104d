// Unit tests of www/js/fit.js: the toolbar's fold into "More", and
// which attachments can be previewed.
import { test } from "node:test";
import assert from "node:assert/strict";
import { fitCount, previewKind } from "../../www/js/fit.js";

test("everything that fits stays, without a More button", () => {
  assert.equal(fitCount([50, 50, 50], 150, 40), 3);
  assert.equal(fitCount([50, 50, 50], 160, 40, 5), 3);
  assert.equal(fitCount([], 0, 40), 0);
});

test("what does not fit leaves room for More", () => {
  assert.equal(fitCount([50, 50, 50], 149, 40), 2);
  assert.equal(fitCount([50, 50, 50], 100, 40), 1);
  assert.equal(fitCount([50, 50, 50], 89, 40), 0);
  // gaps count too: 40 + (50+4)*2 = 148
  assert.equal(fitCount([50, 50, 50, 50], 150, 40, 4), 2);
});

test("previews: raster images, text as text, PDF pages, nothing active", () => {
  for (const t of ["image/png", "IMAGE/JPEG", "image/gif; name=x", "image/webp"]) assert.equal(previewKind(t), "image", t);
  for (const t of ["image/svg+xml", "text/html", "text/xml", "application/xhtml+xml", "application/javascript", "", undefined])
    assert.equal(previewKind(t) === "image" || previewKind(t) === "text" ? previewKind(t) : null, null, String(t));
  assert.equal(previewKind("text/plain; charset=utf-8"), "text");
  assert.equal(previewKind("text/csv"), "text");
  assert.equal(previewKind("application/json"), "text");
  assert.equal(previewKind("application/pdf"), "pdf");
  assert.equal(previewKind("application/octet-stream"), null);
});
