// snippet.js: pure. A SearchSnippet (RFC 8621 §5) is HTML-escaped text
// with the matching words in <mark>…</mark>. It is read here as text and
// marks only: every other tag is dropped, entities are decoded, and the
// view builds text nodes and <mark> elements from the parts, never markup.

const NAMED = { amp: "&", lt: "<", gt: ">", quot: "\"", apos: "'", nbsp: "\u00a0" };

// The entities of s decoded (named ones above, decimal and hex); any
// other "&…;" is left as it is.
export function decode(s) {
  return s.replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z]{2,6});/gi, (m, e) => {
    if (e[0] === "#") {
      const n = e[1] === "x" || e[1] === "X" ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
      return n > 0 && n <= 0x10ffff && !(n >= 0xd800 && n <= 0xdfff) ? String.fromCodePoint(n) : "\ufffd";
    }
    return NAMED[e.toLowerCase()] ?? m;
  });
}

// A snippet as [{text, mark}]: neighbours of the same kind joined, empty
// parts left out. Null or "" gives [].
export function parts(s) {
  if (!s) return [];
  const out = [];
  let mark = false;
  const push = (text) => {
    if (!text) return;
    const last = out[out.length - 1];
    if (last && last.mark === mark) last.text += text; else out.push({ text, mark });
  };
  for (const piece of String(s).split(/(<[^>]*>?)/)) {
    if (piece.startsWith("<")) {
      const tag = piece.toLowerCase().replace(/\s+/g, "");
      if (tag === "<mark>") mark = true;
      else if (tag === "</mark>") mark = false;
      continue;   // any other tag: dropped
    }
    push(decode(piece));
  }
  return out;
}

// Whether a snippet marks anything.
export const marks = (s) => parts(s).some((p) => p.mark);
