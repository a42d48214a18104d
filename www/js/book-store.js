// book-store.js: the store's address-book part for the contacts screen:
// every CardDAV call of it, through /api/dav/ (the relay: docs/API.md).
// The books are found as a CardDAV client finds them (principal, home,
// Depth 1); each is read whole once (its sync-token, then one
// addressbook-query) and afterwards by sync-collection (only what
// changed), read whole again when the server refuses the token. Cards are
// kept as text with their ETag; book.js makes contacts of them.
import { apiPath } from "./vcard.js";
import { parseCards } from "./book.js";
import { CARD, DAV, addressBooks, davDocument, davResponses, davUnauthenticated, propfind } from "./store.js";

const XML = '<?xml version="1.0" encoding="utf-8"?>';
const NS = `xmlns:d="DAV:" xmlns:c="${CARD}"`;
const QUERY = `${XML}<c:addressbook-query ${NS}><d:prop><d:getetag/><c:address-data/></d:prop></c:addressbook-query>`;
const sync = (token) => `${XML}<d:sync-collection ${NS}><d:sync-token>${esc(token)}</d:sync-token><d:sync-level>1</d:sync-level><d:prop><d:getetag/><c:address-data/></d:prop></d:sync-collection>`;
const multiget = (hrefs) => `${XML}<c:addressbook-multiget ${NS}><d:prop><d:getetag/><c:address-data/></d:prop>${hrefs.map((h) => `<d:href>${esc(h)}</d:href>`).join("")}</c:addressbook-multiget>`;
const esc = (s) => String(s).replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

// A write the server refused because the card changed (or appeared) meanwhile.
export class Conflict extends Error {
  constructor() { super("conflict"); this.name = "Conflict"; }
}
// A call begun before forget() (sign-out): its answer is dropped.
export class Stale extends Error {
  constructor() { super("stale"); this.name = "Stale"; }
}

// What reading cost, for the figures: {full: {bytes, requests}, sync: {bytes, requests}} of the last of each.
export const stats = { full: null, sync: null };
let counting = null;

// books: [{path, name, token, cards: Map(href → {etag, text, contact, component})}]
let root = null;
let books = null;
let loading = null;
// One more at each forget(): what was begun before it is not kept.
let generation = 0;

// gen: the generation the call belongs to (a load's), now's by default.
async function call(method, path, { body, depth, headers = {}, type = "application/xml; charset=utf-8", gen = generation } = {}) {
  if (gen !== generation) throw new Stale();
  const h = { ...headers };
  if (method !== "GET") h["X-Postern-CSRF"] = "1";
  if (body != null) h["Content-Type"] = type;
  if (depth != null) h.Depth = depth;
  const r = await fetch(path, { method, credentials: "same-origin", body, headers: h });
  const text = await r.text();
  if (gen !== generation) throw new Stale();
  if (r.status === 401) throw davUnauthenticated(text);
  if (counting) { counting.bytes += new TextEncoder().encode(text).length; counting.requests++; }
  return { status: r.status, etag: r.headers.get("ETag"), text };
}

async function multistatus(method, path, body, depth, gen) {
  const r = await call(method, path, { body, depth, gen });
  if (r.status !== 207) { const e = new Error(`CardDAV ${method}: ${r.status}`); e.status = r.status; throw e; }
  return davDocument(method, r.text);
}
const textOf = (doc, ns, name) => doc.getElementsByTagNameNS(ns, name)[0]?.textContent ?? null;
// A response's href as its /api/dav/ path; null (the response is left)
// when it is not under the server's CardDAV root: the key of a card is
// what PUT, DELETE and GET later ask, never another origin or route.
const pathOf = (r) => apiPath(r.href, root);

function keep(book, href, etag, text) {
  const [card] = parseCards(text);
  if (!card) { book.cards.delete(href); return; }
  book.cards.set(href, { href, etag, text, contact: card.contact, component: card.component, book: book.path });
}

async function discover(gen) {
  const found = await addressBooks(root, "<d:displayname/>", (m, p, body, depth) => multistatus(m, p, body, depth, gen));
  return found.map(({ path, response }) => ({ path, name: response.first(DAV, "displayname") || "", token: null, cards: new Map() }));
}

// A book read whole: its token first (what changes after it is read again by the next sync).
async function full(book, gen) {
  const t = await multistatus("PROPFIND", book.path, propfind("<d:sync-token/>"), "0", gen);
  const token = textOf(t, DAV, "sync-token");
  const doc = await multistatus("REPORT", book.path, QUERY, "1", gen);
  book.token = token;
  book.cards = new Map();
  for (const r of davResponses(doc)) {
    const href = pathOf(r);
    if (href && r.data) keep(book, href, r.etag, r.data);
  }
}

// Only what changed since the book's token; a refused token reads it whole.
async function incremental(book, gen) {
  let doc;
  try { doc = await multistatus("REPORT", book.path, sync(book.token), "0", gen); } catch (e) {
    if (e.status >= 400 && e.status < 500) return full(book, gen);
    throw e;
  }
  const missing = [];
  for (const r of davResponses(doc)) {
    const href = pathOf(r);
    if (!href || href === book.path) continue;
    if (/\s404\s/.test(r.status) || (!r.ok && !r.data)) book.cards.delete(href);
    else if (r.data) keep(book, href, r.etag, r.data);
    else if (book.cards.get(href)?.etag !== r.etag) missing.push(href);
  }
  if (missing.length) {
    for (const r of davResponses(await multistatus("REPORT", book.path, multiget(missing), "0", gen))) {
      const href = pathOf(r);
      if (href && r.data) keep(book, href, r.etag, r.data);
    }
  }
  book.token = textOf(doc, DAV, "sync-token") || book.token;
}

// The user's books, read (first call) or brought up to date (later ones):
// [{path, name, cards: Map}]. carddavPath: /api/config's.
export function load(carddavPath) {
  if (loading) return loading;
  const gen = generation;
  const p = (async () => {
    const first = !books || root !== carddavPath;
    const count = { bytes: 0, requests: 0 };
    counting = count;
    try {
      if (first) {
        root = carddavPath;
        const found = await discover(gen);
        if (gen !== generation) throw new Stale();
        books = found;
      }
      for (const b of books) {
        try { await (b.token && !first ? incremental(b, gen) : full(b, gen)); } catch (e) {
          if (e instanceof Stale || gen !== generation) throw e;
          console.warn("address book", b.path, e);
        }
      }
      stats[first ? "full" : "sync"] = count;
      return books;
    } finally {
      if (gen === generation) { counting = null; loading = null; }
    }
  })();
  loading = p;
  return p;
}

// Every card of every book: [{href, etag, text, contact, component, book}].
export const cards = () => (books || []).flatMap((b) => [...b.cards.values()]);
export const bookList = () => books || [];

// Forgets everything (sign-out): a load or write under way is dropped
// (rejects with Stale), and the next load starts afresh.
export function forget() { generation++; books = null; root = null; loading = null; counting = null; }

// Writes a card's text: a new one (no etag: If-None-Match: *) at
// bookPath + name, else over href with If-Match. Rejects with Conflict
// when the card changed or exists; resolves to its href.
export async function put(text, { href, etag, bookPath, name }) {
  const path = href || bookPath + name;
  const r = await call("PUT", path, { body: text, type: "text/vcard; charset=utf-8",
    headers: href ? (etag ? { "If-Match": etag } : {}) : { "If-None-Match": "*" } });
  if (r.status === 412) throw new Conflict();
  if (r.status < 200 || r.status > 299) throw new Error(`CardDAV PUT: ${r.status}`);
  const book = books?.find((b) => path.startsWith(b.path));
  if (book) keep(book, path, r.etag, text);
  return path;
}

// Deletes a card with If-Match; Conflict when it changed meanwhile.
export async function remove(href, etag) {
  const r = await call("DELETE", href, { headers: etag ? { "If-Match": etag } : {} });
  if (r.status === 412) throw new Conflict();
  if ((r.status < 200 || r.status > 299) && r.status !== 404) throw new Error(`CardDAV DELETE: ${r.status}`);
  for (const b of books || []) b.cards.delete(href);
}

// One card as the server has it now (after a conflict): null when gone.
export async function reread(href) {
  const r = await call("GET", href, { headers: { Accept: "text/vcard" } });
  const book = books?.find((b) => href.startsWith(b.path));
  if (r.status === 404) { book?.cards.delete(href); return null; }
  if (r.status !== 200) throw new Error(`CardDAV GET: ${r.status}`);
  if (book) keep(book, href, r.etag, r.text);
  return book?.cards.get(href) || null;
}
