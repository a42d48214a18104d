// suggest.js: the people suggested while typing an address, and the
// bookkeeping behind them. Pure: no DOM, no network (tests/js/).
//
// A contact is {email, name, book, to: {n, w, last}, from: {n, w, last}}:
// book when an address book has it; to counts the mails the user wrote to
// the address, from those the address wrote; w weighs them by age (each
// mail counts 2^(age/HALF_LIFE) less, kept as a base-2 logarithm so that
// it grows by addition and never overflows); last is the newest (ms).
// Ranked: address book first, then people written to, then people
// written from; within each, how well the text matches, then the weight.

export const HALF_LIFE = 30 * 24 * 3600 * 1000;   // a month
const EPOCH = Date.UTC(2000, 0, 1);

const log2add = (a, b) => {                       // log2(2^a + 2^b)
  if (a === -Infinity) return b;
  if (b === -Infinity) return a;
  const hi = Math.max(a, b);
  return hi + Math.log2(1 + 2 ** (Math.min(a, b) - hi));
};

// Lower case without accents ("Jörg" finds "jorg"); ASCII stays as it is
// but for the case (and stays a fast one-byte string).
export function fold(s) {
  const t = String(s || "").toLowerCase();
  return /[^\x00-\x7f]/.test(t) ? t.normalize("NFD").replace(/\p{M}/gu, "") : t;
}
const empty = () => ({ n: 0, w: -Infinity, last: 0 });

// Counts one mail: kind "to" (the user wrote to a) or "from" (a wrote),
// at time ms. contacts: a Map from the folded address. Returns the contact.
export function note(contacts, a, kind, time) {
  if (!a || !a.email) return null;
  const key = fold(a.email);
  let c = contacts.get(key);
  if (!c) {
    c = { email: a.email, name: a.name || null, nameAt: a.name ? time : 0, to: empty(), from: empty() };
    contacts.set(key, c);
  } else if (a.name && time >= (c.nameAt || 0)) {
    c.name = a.name;
    c.nameAt = time;
  }
  const k = c[kind];
  k.n++;
  k.w = log2add(k.w, (time - EPOCH) / HALF_LIFE);
  k.last = Math.max(k.last, time);
  return c;
}

const tier = (c) => (c.book ? 0 : c.to && c.to.n ? 1 : 2);
const weight = (c) => (c.to && c.to.n ? c.to.w : c.from ? c.from.w : -Infinity);

// What is matched of a contact, folded once (kept beside the object).
const keys = new WeakMap();
function keyOf(c) {
  let k = keys.get(c);
  if (!k) {
    const email = fold(c.email);
    const name = fold(c.name);
    const words = [...name.split(/[\s,."'()-]+/), ...email.split(/[@._+-]+/)].filter(Boolean);
    k = { email, name, words: `\n${words.join("\n")}` };
    keys.set(c, k);
  }
  return k;
}
// Folds every contact's text ahead of the first key press.
export function prepare(contacts) { for (const c of contacts) keyOf(c); }

// How well q (folded) matches c: 0 the address or name begins with it, 1
// a word of the name or a part of the address does, -1 not at all.
export function match(c, q) {
  const k = keyOf(c);
  if (k.email.startsWith(q) || (k.name && k.name.startsWith(q))) return 0;
  return k.words.includes(`\n${q}`) ? 1 : -1;
}

// The best `limit` contacts for the typed text, leaving out the folded
// addresses in `exclude` (the user's own, those already in the field).
export function rank(contacts, text, { limit = 8, exclude = new Set() } = {}) {
  const q = fold(text).trim();
  if (!q) return [];
  // The best limit kept in order as they come (no sort of every hit).
  const top = [];
  for (const c of contacts) {
    const m = match(c, q);
    if (m < 0) continue;
    const t = tier(c);
    const w = weight(c);
    if (top.length === limit && !before(t, m, w, c, top[limit - 1])) continue;
    if (exclude.has(keyOf(c).email)) continue;
    let i = top.length;
    while (i > 0 && before(t, m, w, c, top[i - 1])) i--;
    top.splice(i, 0, { c, m, t, w });
    if (top.length > limit) top.pop();
  }
  return top.map((h) => h.c);
}
// Whether a contact (its tier, match and weight) ranks before hit h.
const before = (t, m, w, c, h) => (t - h.t || m - h.m || h.w - w || c.email.localeCompare(h.c.email)) < 0;

// Several sources as one list: an address found in more than one is one
// contact, its name from the first source that has one (list sources
// address book first), marked book when any source is an address book.
export function merge(sources) {
  const byKey = new Map();
  for (const { book, contacts } of sources) {
    for (const c of contacts) {
      const key = fold(c.email);
      const had = byKey.get(key);
      if (!had) byKey.set(key, { ...c, book: !!(book || c.book) });
      else {
        if (!had.name && c.name) had.name = c.name;
        if (book) had.book = true;
        if (!had.to && c.to) had.to = c.to;
        if (!had.from && c.from) had.from = c.from;
      }
    }
  }
  return [...byKey.values()];
}

// At most max contacts: the least useful go first (the lowest tier, then
// the least weight).
export function prune(contacts, max) {
  if (contacts.size <= max) return contacts;
  const order = [...contacts.entries()].sort(([, a], [, b]) => tier(a) - tier(b) || weight(b) - weight(a));
  return new Map(order.slice(0, max));
}

// JSON cannot hold -Infinity: a weight of a side never seen is dropped.
export const pack = (contacts) => [...contacts.values()].map((c) => ({ ...c,
  to: c.to.n ? c.to : undefined, from: c.from.n ? c.from : undefined }));
export const unpack = (list) => new Map((list || []).map((c) => [fold(c.email),
  { ...c, to: c.to || empty(), from: c.from || empty() }]));
