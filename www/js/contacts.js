// contacts.js: the people suggested while typing an address. Sources: the
// user's own mail, collected in the background and kept per account in
// IndexedDB, and the address book on the mail server (CardDAV, read once
// per sign-in or reload by loadBook, after the first paint; ranked first),
// or any other source added with addSource(). The ranking is suggest.js's;
// the JMAP and CardDAV reads are the store's.
//
// The first collection reads the newest FIRST_SENT mails of Sent (whom
// the user wrote to: To, Cc, Bcc) and then, folder by folder (the Inbox
// first, then the fullest), the newest of the others but Drafts, Trash
// and Junk (who wrote: From), FIRST_RECEIVED in all; a page at a time
// while the app is idle, each an Email/query by inMailbox only (which
// Cyrus answers without its search index). After that only what
// Email/changes reports as created is read. At most MAX_CONTACTS kept.
import * as store from "./store.js";
import { note, rank, merge, prune, pack, unpack, prepare } from "./suggest.js";

export const MAX_CONTACTS = 5000;
export const FIRST_SENT = 5000;
export const FIRST_RECEIVED = 10000;
const PAGE = 1000;
const VERSION = 2;
const DB = "postern-contacts";
const TO_PROPS = ["to", "cc", "bcc", "receivedAt"];
const FROM_PROPS = ["from", "receivedAt"];
const NEW_PROPS = ["mailboxIds", "keywords", "from", "to", "cc", "bcc", "receivedAt"];

let account = null;
let gen = 0;
let mail = new Map();
let meta = null;
let merged = null;
let running = null;
let saveTimer = null;
const sources = [];
let book = [];
const bookSource = { book: true, contacts: () => book };
// What collecting cost, for the figures: the first collection and each
// update after it (requests, bytes of JSON received, milliseconds).
export const stats = { first: null, updates: [], contacts: 0 };

// state: Email's when the collection began; at: how far each folder was
// read; ended: the folders read to their end; sent, received: counts.
const fresh = () => ({ state: null, at: {}, ended: [], sent: 0, received: 0, done: false, noted: [] });
const idle = (fn) => (self.requestIdleCallback ? requestIdleCallback(fn, { timeout: 2000 }) : setTimeout(fn, 50));
const time = (iso) => Date.parse(iso) || Date.now();

// -- IndexedDB: one record per account ------------------------------------------

function db() {
  return new Promise((resolve, reject) => {
    const r = indexedDB.open(DB, 1);
    r.onupgradeneeded = () => r.result.createObjectStore("accounts", { keyPath: "account" });
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });
}
async function tx(mode, fn) {
  const d = await db();
  try {
    return await new Promise((resolve, reject) => {
      const t = d.transaction("accounts", mode);
      const r = fn(t.objectStore("accounts"));
      t.oncomplete = () => resolve(r?.result);
      t.onerror = () => reject(t.error);
    });
  } finally { d.close(); }
}
function saveSoon() {
  clearTimeout(saveTimer);
  const acc = account;
  saveTimer = setTimeout(() => {
    if (acc !== account) return;
    mail = prune(mail, MAX_CONTACTS);
    tx("readwrite", (s) => s.put({ account: acc, version: VERSION, meta, contacts: pack(mail) })).catch((e) => console.warn("contacts not kept", e));
  }, 1000);
}

// -- the collection -------------------------------------------------------------

function noteEmail(e, kind) {
  const at = time(e.receivedAt);
  if (kind === "to") for (const a of [...(e.to || []), ...(e.cc || []), ...(e.bcc || [])]) note(mail, a, "to", at);
  else for (const a of e.from || []) note(mail, a, "from", at);
}

async function page(mailboxId, position, limit, properties, cost) {
  const r = await store.emailPage({ inMailbox: mailboxId }, position, limit, properties);
  cost.requests++;
  cost.bytes += JSON.stringify(r.list).length;
  return r;
}

// Up to room of the newest mails of one folder, from where the last run
// stopped: how many were read, or null when the account changed.
async function read(my, kind, mailboxId, room, cost) {
  const props = kind === "to" ? TO_PROPS : FROM_PROPS;
  let n = 0;
  while (n < room && !meta.ended.includes(mailboxId)) {
    const pos = meta.at[mailboxId] || 0;
    const r = await page(mailboxId, pos, Math.min(PAGE, room - n), props, cost);
    if (my !== gen) return null;
    if (!meta.state) meta.state = r.state;
    for (const e of r.list) noteEmail(e, kind);
    n += r.list.length;
    meta.at[mailboxId] = pos + r.list.length;
    if (!r.list.length || meta.at[mailboxId] >= r.total) meta.ended.push(mailboxId);
    meta[kind === "to" ? "sent" : "received"] += r.list.length;
    merged = null;
    saveSoon();
    await new Promise(idle);
  }
  return n;
}

async function collect(my) {
  const t0 = performance.now();
  const cost = { requests: 0, bytes: 0, ms: 0 };
  const sent = store.roleBox("sent")?.id;
  if (sent && (await read(my, "to", sent, FIRST_SENT - meta.sent, cost)) === null) return;
  const skip = new Set(["sent", "drafts", "trash", "junk"]);
  const boxes = [...store.state.mailboxes.values()].filter((m) => !skip.has(m.role))
    .sort((a, b) => (b.role === "inbox") - (a.role === "inbox") || (b.totalEmails || 0) - (a.totalEmails || 0));
  for (const m of boxes) {
    if (meta.received >= FIRST_RECEIVED) break;
    if ((await read(my, "from", m.id, FIRST_RECEIVED - meta.received, cost)) === null) return;
  }
  meta.done = true;
  cost.ms = Math.round(performance.now() - t0);
  stats.contacts = mail.size;
  stats.first = cost;
  saveSoon();
}

// What was created since the last look (Email/changes).
async function update(my) {
  const t0 = performance.now();
  const cost = { requests: 0, bytes: 0, ms: 0 };
  const box = (role) => store.roleBox(role)?.id;
  const [sent, drafts, trash, junk] = ["sent", "drafts", "trash", "junk"].map(box);
  for (let round = 0; round < 20; round++) {
    let r;
    try {
      r = await store.createdSince(meta.state, NEW_PROPS);
    } catch (e) {
      if (my !== gen) return;
      if (e.type !== "cannotCalculateChanges") throw e;
      // Too old to tell: collected again, from nothing.
      mail = new Map();
      meta = fresh();
      merged = null;
      return collect(my);
    }
    cost.requests++;
    cost.bytes += JSON.stringify(r.list).length;
    if (my !== gen) return;
    for (const e of r.list) {
      if (meta.noted.includes(e.id) || e.keywords?.$draft || e.mailboxIds?.[drafts]) continue;
      if (sent && e.mailboxIds?.[sent]) noteEmail(e, "to");
      else if (!(trash && e.mailboxIds?.[trash]) && !(junk && e.mailboxIds?.[junk])) noteEmail(e, "from");
    }
    meta.state = r.newState;
    if (r.list.length) merged = null;
    if (!r.more) break;
  }
  cost.ms = Math.round(performance.now() - t0);
  stats.updates.push(cost);
  saveSoon();
}

// One run at a time: a first collection, else an update.
function run(my) {
  if (running || my !== gen || !meta) return running;
  running = (meta.done ? update(my) : collect(my).then(() => meta?.done && my === gen && update(my)))
    .catch((e) => console.warn("contacts", e))
    .finally(() => { running = null; stats.contacts = mail.size; if (my === gen) idle(warm); });
  return running;
}

// -- the interface ------------------------------------------------------------------

// After sign-in: what is kept for the account, then (when idle) the
// collection or its update. Never waits for the network.
export async function start(accountId) {
  const my = ++gen;
  account = accountId;
  mail = new Map();
  meta = fresh();
  merged = null;
  let rec = null;
  try { rec = await tx("readonly", (s) => s.get(accountId)); } catch { /* no IndexedDB: kept in memory only */ }
  if (my !== gen) return;
  if (rec && rec.version === VERSION) { mail = unpack(rec.contacts); meta = rec.meta; }
  idle(() => run(my));
}

// A live change (or poll): what is new. Resolves when read.
export const refresh = () => run(gen);

// Sign-out: nothing kept of this account in this browser.
export async function forget() {
  const acc = account;
  gen++;
  book = [];
  account = null;
  mail = new Map();
  meta = null;
  merged = null;
  clearTimeout(saveTimer);
  if (acc) await tx("readwrite", (s) => s.delete(acc)).catch(() => {});
}

// The composer sent a mail: its recipients count now, and its email is
// not counted again when Email/changes reports it.
export function noteSent(message, emailId) {
  if (!meta) return;
  const now = Date.now();
  for (const a of [...message.to, ...(message.cc || []), ...(message.bcc || [])]) note(mail, a, "to", now);
  if (emailId) meta.noted = [...meta.noted, emailId].slice(-100);
  merged = null;
  saveSoon();
}

// The people of the user's address books (root: /api/config's
// carddavPath), read in the background; they rank first. A book that
// cannot be read leaves the suggestions to the mail's people.
export function loadBook(root) {
  const my = gen;
  idle(async () => {
    try {
      const list = await store.addressBookPeople(root);
      if (my === gen) setBook(list);
    } catch (e) { console.warn("address book", e); }
  });
}

// The address book's people as the contacts screen has them now (after
// it read, created, changed, deleted or imported cards): [{email, name}].
export function setBook(list) {
  book = list;
  if (!sources.includes(bookSource)) sources.push(bookSource);
  changed();
}

// Another source of people, e.g. an address book: {book: true,
// contacts() → [{email, name}]}. Call changed() when it has new ones.
export function addSource(source) { sources.push(source); merged = null; }
export function changed() { merged = null; idle(warm); }

function all() {
  if (!merged) {
    merged = sources.length ? merge([...sources.map((s) => ({ book: s.book, contacts: s.contacts() })), { contacts: mail.values() }])
      : [...mail.values()];
  }
  return merged;
}
// Folds the names ahead of the first key press.
function warm() { prepare(all()); }

// The best matches for text, without the folded addresses in exclude.
export const suggest = (text, exclude) => rank(all(), text, { exclude });
