// vcard.js: the people in an address book's vCards (3.0 and 4.0), their
// names and addresses, which is what the composer's suggestions need;
// and where a CardDAV href is under /api/dav/. Pure: no DOM, no network.

// Folded lines joined (RFC 6350 3.2: a line break and one space or tab).
const unfold = (text) => text.replace(/\r?\n[ \t]/g, "");

// The first ':' outside a quoted parameter value.
function colon(line) {
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    if (line[i] === '"') quoted = !quoted;
    else if (line[i] === ":" && !quoted) return i;
  }
  return -1;
}

const unescape = (v) => v.replace(/\\([\\,;nN])/g, (_, c) => (c === "n" || c === "N" ? " " : c));

// [{email, name}] for every EMAIL of every card in text, the card's FN
// as the name ("" without one).
export function people(text) {
  const out = [];
  let name = "", emails = [];
  for (const line of unfold(String(text || "")).split(/\r?\n/)) {
    const i = colon(line);
    if (i < 0) continue;
    // "item1.EMAIL;TYPE=work" → EMAIL
    const prop = line.slice(0, i).split(";")[0].replace(/^[^.]*\./, "").toUpperCase();
    const value = unescape(line.slice(i + 1)).trim();
    if (prop === "BEGIN" && value.toUpperCase() === "VCARD") { name = ""; emails = []; }
    else if (prop === "FN") name = value;
    else if (prop === "EMAIL") {
      const email = value.replace(/^mailto:/i, "");
      if (/^[^\s@]+@[^\s@]+$/.test(email)) emails.push(email);
    } else if (prop === "END" && value.toUpperCase() === "VCARD") {
      for (const email of emails) out.push({ email, name });
      emails = [];
    }
  }
  return out;
}

// The /api/dav/ path of an href the server gave (an absolute path or
// URL), root being postern's carddav_path ("/dav/"); null when it is
// outside that tree.
export function apiPath(href, root) {
  let path = String(href || "").trim();
  try { path = new URL(path, "http://x").pathname; } catch { return null; }
  return root && path.startsWith(root) ? "/api/dav/" + path.slice(root.length) : null;
}
