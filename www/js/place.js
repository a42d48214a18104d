// place.js: pure. Where the user is (a folder or a search, a thread open in
// it, a message of that thread, the settings) ↔ the URL's fragment, so
// that Back and Forward walk the places and a reload or a pasted link
// opens the same one. A fragment needs no web-server rule on any install
// path (see DECISIONS.md).
//   #/inbox                       a folder with a role, by its role
//   #/folder/<id>                 any other folder, by its id
//   #/search/<query>              a search (over every folder, or in: …)
//   …/thread/<threadId>[/<emailId>]  a thread open there (at a message)
//   #/settings                    the settings, over the last place
//   #/contacts                    the contacts screen, over the last place
//   #/filters                     the filters and vacation reply, likewise
// Ids and the query are percent-encoded; anything else reads as {}.

export const ROLES = ["inbox", "drafts", "sent", "archive", "junk", "trash"];

const enc = (s) => encodeURIComponent(s);
function dec(s) {
  try { return decodeURIComponent(s); } catch { return null; }
}

// A place as a fragment ("#/…"). place: {role} or {folderId} or {search},
// with thread and email optional; {settings: true}, {contacts: true} or
// {filters: true} alone.
export function format(p) {
  if (!p) return "#/";
  if (p.settings) return "#/settings";
  if (p.contacts) return "#/contacts";
  if (p.filters) return "#/filters";
  let s;
  if (p.search != null && p.search !== "") s = `#/search/${enc(p.search)}`;
  else if (p.role && ROLES.includes(p.role)) s = `#/${p.role}`;
  else if (p.folderId) s = `#/folder/${enc(p.folderId)}`;
  else s = "#";
  if (p.thread) s += `/thread/${enc(p.thread)}` + (p.email ? `/${enc(p.email)}` : "");
  return s === "#" ? "#/" : s;
}

// A fragment (with or without the "#") as a place; {} for the default
// place (the Inbox) and for anything that does not parse.
export function parse(hash) {
  const parts = String(hash || "").replace(/^#/, "").split("/");
  if (parts[0] !== "") return {};
  parts.shift();
  if (parts.length === 1 && parts[0] === "settings") return { settings: true };
  if (parts.length === 1 && parts[0] === "contacts") return { contacts: true };
  if (parts.length === 1 && parts[0] === "filters") return { filters: true };
  const out = {};
  const head = parts.shift();
  if (head === undefined || head === "") return {};
  if (ROLES.includes(head)) out.role = head;
  else if (head === "folder" || head === "search") {
    const v = parts.length ? dec(parts.shift()) : null;
    if (!v) return {};
    out[head === "folder" ? "folderId" : "search"] = v;
  } else return {};
  if (!parts.length) return out;
  if (parts[0] !== "thread" || parts.length < 2 || parts.length > 3) return {};
  const thread = dec(parts[1]);
  if (!thread) return {};
  out.thread = thread;
  if (parts.length === 3) {
    const email = dec(parts[2]);
    if (!email) return {};
    out.email = email;
  }
  return out;
}

// Whether two places are the same (ignoring how they were written).
export const same = (a, b) => format(a) === format(b);

// The place without its thread: the list it was opened from.
export function listOf(p) {
  const rest = { ...(p || {}) };
  delete rest.thread;
  delete rest.email;
  return rest;
}
