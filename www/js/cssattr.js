// cssattr.js: CSS in a mail's SVG and MathML attributes. Presentation
// attributes (fill, stroke, mask, clip-path, filter, marker-*, cursor…)
// are parsed by the browser as CSS, so url(http://…) in one of them loads
// from the sender's server, and only the CSP would stop it. cleanAttr
// decides for one attribute value: kept as it is, kept with every url()
// rewritten by the same rule as the mail's CSS (cid: parts, data: images,
// the image proxy after "Show images"; a same-document #id stays), or
// dropped. It reads the value as the browser's CSS tokenizer does (CSS
// Syntax 3: escapes such as \75 rl(, comments, quoted and unquoted url),
// and drops the attribute wherever its reading and a coarser count of
// anything that looks like a fetching function disagree.

// Where a url() means something: paint servers, masks, clips, filters,
// markers and the cursor image. A url() anywhere else drops the attribute.
export const URL_ATTRS = new Set(["fill", "stroke", "mask", "clip-path", "filter", "marker", "marker-start", "marker-mid",
  "marker-end", "cursor"]);
// The only functions left in those attributes (colours and arithmetic);
// any other (image(), image-set(), cross-fade(), element(), paint(), one
// not invented yet) drops the attribute.
const SAFE_FNS = new Set(["rgb", "rgba", "hsl", "hsla", "hwb", "lab", "lch", "oklab", "oklch", "color", "color-mix",
  "light-dark", "calc", "min", "max", "clamp", "var"]);
// A same-document reference (a gradient, clip path, mask, filter or marker
// in the mail itself): no fetch, kept as it is.
const LOCAL = /^#[A-Za-z0-9_.:-]+$/;

const isWs = (c) => c === " " || c === "\t" || c === "\n";
const isHex = (c) => c !== undefined && /[0-9a-fA-F]/.test(c);
const isDigit = (c) => c !== undefined && c >= "0" && c <= "9";
const isNameStart = (c) => c !== undefined && (/[A-Za-z_]/.test(c) || c.charCodeAt(0) >= 0x80);
const isName = (c) => isNameStart(c) || isDigit(c) || c === "-";
const isNonPrintable = (c) => /[\x00-\x08\x0b\x0e-\x1f\x7f]/.test(c);

// The tokens of css (CSS Syntax 3, §4): {type, start, end, value}; type
// is ws, comment, string, bad-string, url, bad-url, function, ident, hash,
// number or delim. Offsets are into the preprocessed text (returned as src).
export function tokenize(text) {
  const s = text.replace(/\r\n?|\f/g, "\n").replace(/\0/g, "\ufffd");
  const n = s.length;
  let i = 0;
  const validEscape = (j) => s[j] === "\\" && s[j + 1] !== "\n";
  const startsIdent = (j) => s[j] === "-" ? isNameStart(s[j + 1]) || s[j + 1] === "-" || validEscape(j + 1)
    : isNameStart(s[j]) || validEscape(j);
  // After the backslash of a valid escape.
  const escape = () => {
    if (i >= n) return "\ufffd";
    if (isHex(s[i])) {
      let h = "";
      while (h.length < 6 && isHex(s[i])) h += s[i++];
      if (isWs(s[i])) i++;
      const cp = parseInt(h, 16);
      return cp === 0 || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff ? "\ufffd" : String.fromCodePoint(cp);
    }
    return s[i++];
  };
  const name = () => {
    let r = "";
    for (;;) {
      if (isName(s[i])) r += s[i++];
      else if (validEscape(i)) { i++; r += escape(); } else return r;
    }
  };
  const badUrl = () => {
    while (i < n && s[i] !== ")") { if (validEscape(i)) { i++; escape(); } else i++; }
    if (i < n) i++;
  };
  const url = () => {   // after "url(", not a quote next
    let v = "";
    while (isWs(s[i])) i++;
    for (;;) {
      const c = s[i];
      if (i >= n) return { type: "url", value: v };
      if (c === ")") { i++; return { type: "url", value: v }; }
      if (isWs(c)) {
        while (isWs(s[i])) i++;
        if (i >= n) return { type: "url", value: v };
        if (s[i] === ")") { i++; return { type: "url", value: v }; }
        badUrl(); return { type: "bad-url" };
      }
      if (c === '"' || c === "'" || c === "(" || isNonPrintable(c)) { badUrl(); return { type: "bad-url" }; }
      if (c === "\\") {
        if (validEscape(i)) { i++; v += escape(); continue; }
        badUrl(); return { type: "bad-url" };
      }
      v += c; i++;
    }
  };
  const identLike = () => {
    const v = name();
    if (v.toLowerCase() === "url" && s[i] === "(") {
      i++;
      let j = i;
      while (isWs(s[j])) j++;
      if (s[j] === '"' || s[j] === "'") return { type: "function", value: v };
      return url();
    }
    if (s[i] === "(") { i++; return { type: "function", value: v }; }
    return { type: "ident", value: v };
  };
  const string = (q) => {   // after the opening quote
    let v = "";
    for (;;) {
      const c = s[i];
      if (i >= n || c === q) { if (i < n) i++; return { type: "string", value: v }; }
      if (c === "\n") return { type: "bad-string" };
      if (c === "\\") {
        if (i + 1 >= n) { i++; continue; }
        if (s[i + 1] === "\n") { i += 2; continue; }
        i++; v += escape(); continue;
      }
      v += c; i++;
    }
  };
  const startsNumber = (j) => isDigit(s[j]) || (s[j] === "." && isDigit(s[j + 1]))
    || ((s[j] === "+" || s[j] === "-") && (isDigit(s[j + 1]) || (s[j + 1] === "." && isDigit(s[j + 2]))));
  const number = () => {
    if (s[i] === "+" || s[i] === "-") i++;
    while (isDigit(s[i])) i++;
    if (s[i] === "." && isDigit(s[i + 1])) { i++; while (isDigit(s[i])) i++; }
    if ((s[i] === "e" || s[i] === "E") && (isDigit(s[i + 1]) || ((s[i + 1] === "+" || s[i + 1] === "-") && isDigit(s[i + 2])))) {
      i += 2; while (isDigit(s[i])) i++;
    }
    if (startsIdent(i)) name();
    else if (s[i] === "%") i++;
    return { type: "number" };
  };
  const out = [];
  while (i < n) {
    const start = i;
    const c = s[i];
    let t;
    if (c === "/" && s[i + 1] === "*") {
      const e = s.indexOf("*/", i + 2);
      i = e < 0 ? n : e + 2;
      t = { type: "comment" };
    } else if (isWs(c)) {
      while (isWs(s[i])) i++;
      t = { type: "ws" };
    } else if (c === '"' || c === "'") {
      i++; t = string(c);
    } else if (c === "#" && (isName(s[i + 1]) || validEscape(i + 1))) {
      i++; t = { type: "hash", value: name() };
    } else if (startsNumber(i)) {
      t = number();
    } else if (startsIdent(i)) {
      t = identLike();
    } else {
      i++; t = { type: "delim", value: c };
    }
    out.push({ ...t, start, end: i });
  }
  return { src: s, tokens: out };
}

// A coarse count of what looks like a fetching function in css, after
// taking comments out and decoding escapes, with space allowed before the
// parenthesis ("URL (", which CSS itself does not read as url).
export function looseCount(css) {
  const s = css.replace(/\/\*[\s\S]*?(?:\*\/|$)/g, "")
    .replace(/\\([0-9a-fA-F]{1,6})[ \t\r\n\f]?|\\([\s\S])/g, (m, h, c) => {
      if (c !== undefined) return c;
      const cp = parseInt(h, 16);
      return cp === 0 || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff ? "\ufffd" : String.fromCodePoint(cp);
    })
    .replace(/\\/g, "");
  return (s.match(/(?:url|src|image-set|image|cross-fade|element|paint)[\s\u0000]*\(/gi) || []).length;
}

// The references in css: {refs: [{start, end, url}], unsure, functions}
// (functions: the lower-cased names of all other functions).
function references(css) {
  const { src, tokens } = tokenize(css);
  const refs = [];
  const functions = [];
  let unsure = false;
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k];
    if (t.type === "url") refs.push({ start: t.start, end: t.end, url: t.value });
    else if (t.type === "bad-url" || t.type === "bad-string") unsure = true;
    else if (t.type === "function") {
      const f = t.value.toLowerCase();
      if (f !== "url" && f !== "src") { functions.push(f); continue; }
      // url( "…" ) or src( "…" ): a string, then ")", nothing else.
      let j = k + 1;
      const skip = () => { while (j < tokens.length && (tokens[j].type === "ws" || tokens[j].type === "comment")) j++; };
      skip();
      const str = tokens[j];
      if (!str || str.type !== "string") { unsure = true; continue; }
      j++; skip();
      const close = tokens[j];
      if (close && !(close.type === "delim" && close.value === ")")) { unsure = true; continue; }
      refs.push({ start: t.start, end: close ? close.end : src.length, url: str.value });
      k = close ? j : j - 1;
    }
  }
  return { src, refs, unsure, functions };
}

// What to do with one attribute (name, value) of a mail's SVG or MathML
// element: the value to keep (the same string when nothing in it could
// fetch), or null to drop the attribute. rewrite(url) gives the URL the
// frame may load (the rule for images and the mail's CSS) or null.
export function cleanAttr(name, value, rewrite) {
  const lname = name.toLowerCase();
  const loose = looseCount(value);
  const { src, refs, unsure, functions } = references(value);
  const urlAttr = URL_ATTRS.has(lname);
  const odd = urlAttr && functions.some((f) => !SAFE_FNS.has(f));
  if (!loose && !refs.length && !odd) return value;
  // A url() where none belongs, or a reading in doubt: the attribute goes.
  if (!urlAttr || odd || unsure || refs.length !== loose) return null;
  let out = "";
  let at = 0;
  for (const r of refs) {
    const u = r.url.trim();
    let to;
    if (LOCAL.test(u)) to = u;
    else {
      to = rewrite(u);
      if (!to) return null;
    }
    out += src.slice(at, r.start) + `url("${to.replace(/["\\\n]/g, encodeURIComponent)}")`;
    at = r.end;
  }
  return out + src.slice(at);
}
