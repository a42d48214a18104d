// Unit tests of www/js/pdfpreview.js: which PDFs are previewed, how many
// pages are laid out, and what the parent takes from the PDF frame.
import { test } from "node:test";
import assert from "node:assert/strict";
import { PDF_PREVIEW_MAX, PDF_PAGES_MAX, pdfFits, frameMessage, pagesShown } from "../../www/js/pdfpreview.js";

test("a PDF up to 20 MiB is previewed, a larger one is not; an unknown size is checked when fetched", () => {
  assert.equal(PDF_PREVIEW_MAX, 20 * 1024 * 1024);
  assert.equal(pdfFits(0), true);
  assert.equal(pdfFits(1234), true);
  assert.equal(pdfFits(PDF_PREVIEW_MAX), true);
  assert.equal(pdfFits(PDF_PREVIEW_MAX + 1), false);
  assert.equal(pdfFits(50 * 1024 * 1024), false);
  for (const unknown of [undefined, null, NaN, "big"]) assert.equal(pdfFits(unknown), true, String(unknown));
});

test("the pages note: none up to the cap, else how many of how many", () => {
  assert.equal(pagesShown(1), null);
  assert.equal(pagesShown(PDF_PAGES_MAX), null);
  assert.deepEqual(pagesShown(PDF_PAGES_MAX + 1), { max: PDF_PAGES_MAX, n: PDF_PAGES_MAX + 1 });
  assert.deepEqual(pagesShown(100000), { max: PDF_PAGES_MAX, n: 100000 });
});

test("the frame's messages are taken only from an opaque origin", () => {
  for (const origin of ["http://127.0.0.1:8080", "https://mail.example.org", "", undefined, "NULL"])
    assert.equal(frameMessage(origin, { type: "ready" }), null, String(origin));
  assert.deepEqual(frameMessage("null", { type: "ready" }), { type: "ready" });
  assert.deepEqual(frameMessage("null", { type: "close" }), { type: "close" });
});

test("a page count is a positive whole number", () => {
  assert.deepEqual(frameMessage("null", { type: "pages", n: 3 }), { type: "pages", n: 3 });
  for (const n of [0, -1, 1.5, NaN, Infinity, "3", null, 2 ** 60])
    assert.equal(frameMessage("null", { type: "pages", n }), null, String(n));
});

test("an error's reason is one of the known ones, else failed; nothing else passes", () => {
  assert.deepEqual(frameMessage("null", { type: "error", reason: "password" }), { type: "error", reason: "password" });
  assert.deepEqual(frameMessage("null", { type: "error", reason: "failed" }), { type: "error", reason: "failed" });
  assert.deepEqual(frameMessage("null", { type: "error", reason: "<img src=x onerror=alert(1)>" }), { type: "error", reason: "failed" });
  for (const data of [null, undefined, "ready", 42, [], {}, { type: "pdf" }, { type: "navigate", url: "https://evil.example" },
    { type: "__proto__" }, { type: "toString" }])
    assert.equal(frameMessage("null", data), null, JSON.stringify(data));
  // Only the known fields come through.
  assert.deepEqual(frameMessage("null", { type: "pages", n: 2, html: "<b>x</b>" }), { type: "pages", n: 2 });
});
