// pdfpreview.js (pure): the PDF preview's limits and what the parent
// (views/viewer.js) takes from the frame that renders the PDF
// (pdfview.html, an opaque origin). docs/DECISIONS.md, issue 17.

// The largest PDF previewed, in bytes. The tab reads the whole file
// (pdf.js needs it all, and parses on the frame's one thread: no Worker
// in an opaque origin). A 19.3 MB PDF of 200 image pages showed its count
// and first page within 1.0 s (docs/APP.md); mail can carry far larger
// files, which a download serves better. Past it the viewer says so.
export const PDF_PREVIEW_MAX = 20 * 1024 * 1024;

// The most pages the frame lays out. Only the pages within a screen of
// the view are drawn (and dropped again once scrolled away), so this
// bounds the page slots and pdf.js's parsed pages, not the pixels: a
// small file can declare 100,000 empty pages. 200 holds any document one
// reads in a preview; the note says how many more the download has.
export const PDF_PAGES_MAX = 200;

// Whether an attachment of this size (bytes, from the Email; unknown is
// checked again when fetched) is previewed.
export function pdfFits(size) {
  return !(Number.isFinite(size) && size > PDF_PREVIEW_MAX);
}

const REASONS = new Set(["password", "failed"]);

// A message from the frame, validated: {type: "ready"} (pdf.js loaded,
// send the bytes), {type: "pages", n} (the document opened), {type:
// "error", reason: "password"|"failed"}, {type: "close"} (Esc inside the
// frame), or null for anything else. origin must be "null": the frame is
// sandboxed without allow-same-origin; the caller also checks that the
// message came from that frame's window.
export function frameMessage(origin, data) {
  if (origin !== "null" || !data || typeof data !== "object") return null;
  switch (data.type) {
    case "ready":
    case "close":
      return { type: data.type };
    case "pages":
      return Number.isSafeInteger(data.n) && data.n > 0 ? { type: "pages", n: data.n } : null;
    case "error":
      return { type: "error", reason: REASONS.has(data.reason) ? data.reason : "failed" };
    default:
      return null;
  }
}

// The pages note: null when every page is shown, else how many are.
export function pagesShown(n) {
  return n > PDF_PAGES_MAX ? { max: PDF_PAGES_MAX, n } : null;
}
