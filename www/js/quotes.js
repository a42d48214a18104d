// quotes.js (pure): where the quoted part of a reply begins, so that the
// reader can fold it behind a toggle. Plain text: the trailing block of
// "> " lines with the line that introduces it ("On … wrote:", "Am …
// schrieb …:", "Le … a écrit :"), or an "Original Message" divider and
// everything after it. HTML: Gmail's gmail_quote, Apple's and
// Thunderbird's <blockquote type="cite">, Yahoo's yahoo_quoted, Outlook's
// divRplyFwdMsg/appendonsend and its "border-top" header block, or a plain
// <blockquote> at the end. Only what nothing of the writer's own follows
// is folded: quotes between the answers of an inline reply stay shown.
// No DOM needed: the HTML part walks any tree with nodeType, tagName,
// getAttribute, childNodes, parentNode and textContent.

const ATTRIBUTION = /(\bwrote|\bschrieb|a écrit|\bescribió|\bha scritto|\bschreef|\bnapisał)\b[^\n]{0,120}:\s*$/i;
const DIVIDER = /^\s*-{2,}\s*(original message|ursprüngliche nachricht|message d'origine|message original|originalnachricht)\s*-{2,}\s*$/i;
const HEADER = /^\s*(from|von|de)\s*:/i;
const quoted = (l) => /^\s*>/.test(l);
const blank = (l) => !l.trim();

// The start of the lines to fold (an index into lines), or -1.
function foldLine(lines) {
  for (let i = 0; i < lines.length; i++) {
    if (DIVIDER.test(lines[i])) return i;
    // Outlook's plain text: a line of underscores, then "From:".
    if (/^\s*_{20,}\s*$/.test(lines[i]) && HEADER.test(lines[i + 1] || "")) return i;
  }
  // The last quoted line; after it only blank lines or a signature.
  let last = -1;
  for (let i = lines.length - 1; i >= 0; i--) if (quoted(lines[i])) { last = i; break; }
  if (last < 0) return -1;
  for (let i = last + 1; i < lines.length && !/^-- ?$/.test(lines[i]); i++) if (!blank(lines[i])) return -1;
  let start = last;
  while (start > 0 && (quoted(lines[start - 1]) || (blank(lines[start - 1]) && quoted(lines[start - 2] || "")))) start--;
  // The line (or two, as Gmail wraps it) that introduces the quote.
  let j = start - 1;
  while (j >= 0 && blank(lines[j])) j--;
  if (j >= 0 && ATTRIBUTION.test(lines[j])) {
    start = j;
    if (/^\s*\S+\s*:\s*$/.test(lines[j]) && j > 0 && !blank(lines[j - 1])) start = j - 1;
  }
  return start;
}

// Splits a plain-text body: {shown, folded}; folded is "" when there is
// nothing to fold (or folding would leave nothing shown).
export function splitText(text) {
  const lines = String(text || "").split("\n");
  const at = foldLine(lines);
  if (at < 0) return { shown: text || "", folded: "" };
  const shown = lines.slice(0, at).join("\n").replace(/\s+$/, "");
  if (!shown.trim()) return { shown: text, folded: "" };
  return { shown, folded: lines.slice(at).join("\n") };
}

// -- HTML --------------------------------------------------------------------------

const attr = (n, a) => (n.getAttribute && n.getAttribute(a)) || "";
const tag = (n) => (n.tagName || "").toLowerCase();
const classes = (n) => attr(n, "class").split(/\s+/);
const isEl = (n) => n && n.nodeType === 1;

// "rest": the quote runs to the end of the mail (a divider); "block":
// this element is the quote; null: neither.
export function quoteKind(n) {
  if (!isEl(n)) return null;
  const id = attr(n, "id");
  if (["divRplyFwdMsg", "appendonsend", "mail-editor-reference-message-container"].includes(id)) return "rest";
  const css = (attr(n, "style") + ";" + attr(n, "data-pstyle")).toLowerCase();
  if (tag(n) === "div" && /border-top\s*:\s*solid/.test(css) && HEADER.test(n.textContent || "")) return "rest";
  const cls = classes(n);
  if (cls.includes("gmail_quote") || cls.includes("yahoo_quoted") || cls.includes("protonmail_quote")) return "block";
  if (tag(n) === "blockquote") return attr(n, "type").toLowerCase() === "cite" ? "block" : "plain";
  return null;
}

function* walk(n) {
  for (const c of n.childNodes || []) {
    yield c;
    if (isEl(c) && !quoteKind(c)) yield* walk(c);
  }
}

// Whether anything the writer wrote (text, an image) follows node n.
function ownAfter(n, root) {
  for (let cur = n; cur && cur !== root; cur = cur.parentNode) {
    const sibs = cur.parentNode ? [...cur.parentNode.childNodes] : [];
    for (const s of sibs.slice(sibs.indexOf(cur) + 1)) {
      if (isEl(s) && (quoteKind(s) || /^--\s?$/.test((s.textContent || "").trim().split("\n")[0]))) continue;
      if (s.nodeType === 3 ? (s.textContent || "").trim() : isEl(s) && ((s.textContent || "").trim() || /^(img|video)$/.test(tag(s)))) return true;
    }
  }
  return false;
}

function prevElement(n) {
  let p = n.parentNode ? [...n.parentNode.childNodes] : [];
  p = p.slice(0, p.indexOf(n)).reverse();
  for (const s of p) {
    if (s.nodeType === 3 && !(s.textContent || "").trim()) continue;
    return s;
  }
  return null;
}

// The node where the folded part of an HTML mail begins (it and every
// node after it are folded), or null. root is the mail's <body>.
export function htmlFold(root) {
  for (const n of walk(root)) {
    const kind = quoteKind(n);
    if (!kind) continue;
    if (kind !== "rest" && ownAfter(n, root)) continue;
    let start = n;
    const p = prevElement(n);
    if (isEl(p) && (tag(p) === "hr" || classes(p).includes("moz-cite-prefix") || classes(p).includes("gmail_attr") ||
        ((p.textContent || "").length < 300 && ATTRIBUTION.test((p.textContent || "").trim())))) start = p;
    else if (p && p.nodeType === 3 && ATTRIBUTION.test(p.textContent.trim())) start = p;
    return start;
  }
  return null;
}

// Removes start and everything after it up to root; returns whether
// anything of the writer's own is left (else the caller keeps it whole).
export function cutFrom(start, root) {
  for (let cur = start; cur && cur !== root; cur = cur.parentNode) {
    const sibs = [...cur.parentNode.childNodes];
    for (const s of sibs.slice(sibs.indexOf(cur) + 1)) cur.parentNode.removeChild(s);
  }
  start.parentNode.removeChild(start);
  return !!((root.textContent || "").trim() || (root.querySelector && root.querySelector("img")));
}
