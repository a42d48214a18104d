// fit.js (pure): how a toolbar folds when room runs out, and which
// attachments can be previewed.

// How many of the items (their widths in px, in order) stay in a bar
// avail px wide; the rest go into a "More" menu moreWidth px wide, which
// is only needed when not all fit. gap: the space between two items.
export function fitCount(widths, avail, moreWidth, gap = 0) {
  const total = widths.reduce((s, w) => s + w, 0) + gap * Math.max(0, widths.length - 1);
  if (total <= avail) return widths.length;
  let used = moreWidth;
  for (let i = 0; i < widths.length; i++) {
    used += widths[i] + gap;
    if (used > avail) return i;
  }
  return widths.length;
}

// The types /api/blob serves inline (shared/dispo.c): raster images only;
// never SVG, which could carry script.
const IMAGES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp", "image/avif", "image/bmp"]);
const TEXTS = /^(text\/(?!html|xml)|application\/(json|x-yaml|yaml|x-sh|toml)$)/;
export const TEXT_PREVIEW_MAX = 256 * 1024;

// What a preview of the attachment can be: "image" (a thumbnail and the
// viewer, from /api/blob inline), "text" (its first TEXT_PREVIEW_MAX
// bytes shown as text, never rendered), "pdf" (its pages drawn by
// pdf.js in a sandboxed frame, views/viewer.js), or null.
export function previewKind(type) {
  const base = String(type || "").split(";")[0].trim().toLowerCase();
  if (IMAGES.has(base)) return "image";
  if (base === "application/pdf") return "pdf";
  if (TEXTS.test(base)) return "text";
  return null;
}
