// addr.js: addresses as people write and paste them: "Name <a@b>",
// quoted names with commas, "a@b (Name)", mailto: links, lists joined by
// commas, semicolons or new lines (also Outlook's "Last, First <a@b>"),
// or only by spaces where each address is plain or in <angle brackets>.
// Pure: no DOM, no network (unit tests in tests/js/).

const ATEXT = "A-Za-z0-9!#$%&'*+/=?^_`{|}~\\-\\u0080-\\uffff";
const LOCAL = new RegExp(`^(?:[${ATEXT}]+(?:\\.[${ATEXT}]+)*|"(?:[^"\\\\\\r\\n]|\\\\.)+")$`);
const LABEL = /^(?!-)[A-Za-z0-9\u00a1-\uffff-]{1,63}(?<!-)$/;
const IPV4 = /^\[(?:25[0-5]|2[0-4]\d|1?\d?\d)(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3}\]$/;

// Whether s is an address mail can be sent to: a local part (dot-atom or
// quoted) and a domain of at least two labels (or an IPv4 literal).
export function isValidEmail(s) {
  if (typeof s !== "string" || s.length > 254) return false;
  const at = s.lastIndexOf("@");
  if (at < 1 || at === s.length - 1) return false;
  const local = s.slice(0, at);
  const domain = s.slice(at + 1);
  if (local.length > 64 || !LOCAL.test(local)) return false;
  if (IPV4.test(domain)) return true;
  const labels = domain.split(".");
  if (labels.length < 2 || domain.length > 253) return false;
  if (/^\d+$/.test(labels[labels.length - 1])) return false;
  return labels.every((l) => LABEL.test(l));
}

// Walks text, calling at(i, c, angle, paren) for each character outside
// quotes once the bracket counts have taken it in; whether something was
// left open (a quote, an <angle bracket> or a (comment)).
function walk(text, at) {
  let quote = false;
  let angle = 0;
  let paren = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === "\\") i++;
      else if (c === '"') quote = false;
      continue;
    }
    if (c === '"') quote = true;
    else if (c === "<") angle++;
    else if (c === ">") angle = Math.max(0, angle - 1);
    else if (c === "(") paren++;
    else if (c === ")") paren = Math.max(0, paren - 1);
    at(i, c, angle, paren);
  }
  return quote || angle > 0 || paren > 0;
}

// The top-level pieces of text and where each ends: separators inside
// quotes, <angle brackets> or (comments) do not count.
function pieces(text) {
  const out = [];
  let start = 0;
  const open = walk(text, (i, c, angle, paren) => {
    if (!angle && !paren && (c === "," || c === ";" || c === "\n" || c === "\r")) {
      out.push({ text: text.slice(start, i), end: i + 1, closed: true });
      start = i + 1;
    }
  });
  out.push({ text: text.slice(start), end: text.length, closed: false, open });
  return out;
}

const unquote = (s) => {
  s = s.trim();
  if (s.length > 1 && s[0] === '"' && s[s.length - 1] === '"') s = s.slice(1, -1).replace(/\\(.)/g, "$1");
  else if (s.length > 1 && s[0] === "'" && s[s.length - 1] === "'") s = s.slice(1, -1);
  return s.replace(/\s+/g, " ").trim();
};

function stripMailto(s) {
  const m = /^mailto:([^?]*)/i.exec(s);
  if (!m) return s;
  try { return decodeURIComponent(m[1]); } catch { return m[1]; }
}

// One piece as {name, email, valid}; null when it is empty.
export function parseOne(piece) {
  const s = stripMailto(piece.trim());
  if (!s) return null;
  let name = "";
  let email;
  const angle = /^(.*)<([^<>]*)>\s*$/s.exec(s);
  const comment = /^([^\s()<>]+)\s*\((.*)\)\s*$/s.exec(s);
  if (angle) {
    name = angle[1];
    email = stripMailto(angle[2].trim());
  } else if (comment) {
    email = comment[1];
    name = comment[2];
  } else {
    // "Bob Baker bob@example.test" as some programs copy it.
    const words = s.split(/\s+/);
    const i = words.findIndex((w) => w.includes("@"));
    if (words.length > 1 && i === words.length - 1) {
      email = words[i].replace(/^[<"'(]+|[>"')]+$/g, "");
      name = words.slice(0, i).join(" ");
    } else {
      email = s;
    }
  }
  email = email.trim();
  name = unquote(name);
  return { name: name || null, email, valid: isValidEmail(email) };
}

// A piece cut where one address visibly ends and another begins without
// a separator: after a closing ">" or after a word holding "@", when more
// follows that is not a "(comment)". A list pasted one address a line
// into a text field arrives so (the browser turns new lines into spaces).
function words(piece) {
  const out = [];
  let start = 0;
  let word = 0;             // where the current top-level word began
  const cut = (i) => {
    const rest = piece.slice(i).trimStart();
    if (!rest || rest[0] === "(" || rest[0] === "<") return;
    out.push(piece.slice(start, i));
    start = i;
  };
  walk(piece, (i, c, angle, paren) => {
    if (angle || paren) return;
    if (c === ">") cut(i + 1);
    else if (/\s/.test(c)) {
      if (piece.slice(word, i).includes("@") && start <= word) cut(i);
      word = i + 1;
    }
  });
  out.push(piece.slice(start));
  return out;
}

// Outlook's "Baker, Bob <bob@example.test>": a piece without "@" right
// before one with an <address> is the first part of that one's name.
export function parseList(text) {
  const parts = pieces(String(text || "")).flatMap((p) => words(p.text));
  const out = [];
  for (let i = 0; i < parts.length; i++) {
    const a = parseOne(parts[i]);
    if (!a) continue;
    const next = parts[i + 1];
    if (!parts[i].includes("@") && next && /^[^<"]*<[^<>]*@[^<>]*>\s*$/.test(next.trim())) {
      const b = parseOne(next);
      b.name = [unquote(parts[i]), b.name].filter(Boolean).join(", ");
      out.push(b);
      i++;
      continue;
    }
    out.push(a);
  }
  return out;
}

// While typing: the addresses finished by a separator, and the rest to
// keep in the field. A finished piece without "@" stays in the rest (it
// may be the first half of "Last, First <a@b>").
export function splitTyped(text) {
  const ps = pieces(String(text || ""));
  let cut = 0;
  for (const p of ps) {
    if (!p.closed) break;
    if (p.text.trim() && !p.text.includes("@")) break;
    cut = p.end;
  }
  return { done: parseList(text.slice(0, cut)), rest: text.slice(cut).replace(/^\s+/, "") };
}

const SPECIALS = /[()<>[\]:;@\\,."]/;

// An address as it is written: Name <email>, the name quoted when needed.
export function format(a) {
  if (!a) return "";
  if (!a.name) return a.email;
  const name = SPECIALS.test(a.name) ? `"${a.name.replace(/(["\\])/g, "\\$1")}"` : a.name;
  return `${name} <${a.email}>`;
}
export const formatList = (list) => (list || []).map(format).join(", ");

// The list without repeats of an address (the first one stays).
export function dedupe(list) {
  const seen = new Set();
  return list.filter((a) => {
    const k = a.email.toLowerCase();
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
