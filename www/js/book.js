// book.js: pure. The address book's contacts: a vCard (3.0 or 4.0, parsed
// and written by ical.js) ↔ the contact the screen shows and edits
//   {uid, fn, n: {family, given}, emails: [{type, value}], phones: [{type, value}],
//    org, title, note, addresses: [{type, street, locality, region, code, country}], groups: []}
// and the list's order, search and groups. Groups are CATEGORIES (see
// DECISIONS.md, "Contacts"). No DOM, no network.
import ICAL from "../vendor/ical.min.js";

// Properties the form owns; every other one of a card is kept as it was.
const OWNED = ["fn", "n", "email", "tel", "org", "title", "note", "adr", "categories"];

const types = (p) => {
  const v = p.getParameter("type");
  return (Array.isArray(v) ? v : v ? [v] : []).map((s) => String(s).toLowerCase())
    .filter((s) => !["internet", "pref", "voice", "x400"].includes(s));
};
// A text value; ical.js leaves "\;" (a semicolon some writers escape) as it is.
const first = (c, name) => {
  const v = c.getFirstPropertyValue(name);
  return (v == null ? "" : Array.isArray(v) ? v.filter(Boolean).join(" ") : String(v)).replace(/\\;/g, ";");
};

// The contact of a parsed vCard component (ICAL.Component).
export function fromComponent(c) {
  const n = c.getFirstPropertyValue("n");
  const parts = Array.isArray(n) ? n : typeof n === "string" ? n.split(";") : [];
  const str = (x) => (Array.isArray(x) ? x.join(" ") : x || "");
  const contact = {
    uid: first(c, "uid"),
    fn: first(c, "fn"),
    n: { family: str(parts[0]), given: str(parts[1]) },
    emails: c.getAllProperties("email").map((p) => ({ type: types(p)[0] || "", value: String(p.getFirstValue() || "").replace(/^mailto:/i, "") }))
      .filter((e) => e.value),
    phones: c.getAllProperties("tel").map((p) => ({ type: types(p)[0] || "", value: String(p.getFirstValue() || "").replace(/^tel:/i, "") }))
      .filter((e) => e.value),
    org: (() => { const v = c.getFirstPropertyValue("org"); return Array.isArray(v) ? v.filter(Boolean).join(", ") : v ? String(v) : ""; })(),
    title: first(c, "title"),
    note: first(c, "note"),
    addresses: c.getAllProperties("adr").map((p) => {
      const v = p.getFirstValue();
      const a = Array.isArray(v) ? v.map(str) : String(v || "").split(";");
      return { type: types(p)[0] || "", street: a[2] || "", locality: a[3] || "", region: a[4] || "", code: a[5] || "", country: a[6] || "" };
    }).filter((a) => a.street || a.locality || a.region || a.code || a.country),
    groups: [...new Set(c.getAllProperties("categories").flatMap((p) => p.getValues().map((g) => String(g).trim())).filter(Boolean))],
  };
  if (!contact.fn) contact.fn = [contact.n.given, contact.n.family].filter(Boolean).join(" ") || contact.org || contact.emails[0]?.value || "";
  return contact;
}

// Every vCard in text (a .vcf file, a CardDAV address-data) as
// {contact, component}; cards that do not parse are skipped (errors counts them).
export function parseCards(text) {
  const out = [];
  let errors = 0;
  // One card at a time: a broken card costs itself, not the file.
  const cards = String(text || "").replace(/\r\n?/g, "\n").match(/^BEGIN:VCARD$[\s\S]*?^END:VCARD$/gim) || [];
  for (const card of cards) {
    try {
      const c = new ICAL.Component(ICAL.parse(card + "\n"));
      if (c.name !== "vcard") { errors++; continue; }
      out.push({ contact: fromComponent(c), component: c });
    } catch { errors++; }
  }
  out.errors = errors;
  return out;
}

// A property of one value or a list (CATEGORIES), with its parameters.
function setList(c, name, values, params) {
  const p = new ICAL.Property(name, c);
  if (values.length > 1) p.setValues(values); else p.setValue(values[0]);
  for (const [k, v] of Object.entries(params || {})) if (v) p.setParameter(k, v);
  c.addProperty(p);
  return p;
}

// The vCard text of contact: over base (the card it was read from, an
// ICAL.Component, whose other properties are kept) or a new vCard 3.0.
export function toVcard(contact, base = null) {
  const c = base ? new ICAL.Component(JSON.parse(JSON.stringify(base.toJSON()))) : new ICAL.Component("vcard");
  if (!base) c.addPropertyWithValue("version", "3.0");
  const v4 = c.getFirstPropertyValue("version") === "4.0";
  for (const name of OWNED) c.removeAllProperties(name);
  if (!c.getFirstPropertyValue("uid") && contact.uid) { c.removeAllProperties("uid"); c.addPropertyWithValue("uid", contact.uid); }
  const fn = contact.fn || [contact.n?.given, contact.n?.family].filter(Boolean).join(" ") || contact.org || contact.emails?.[0]?.value || "";
  c.addPropertyWithValue("fn", fn);
  const n = new ICAL.Property("n", c);
  n.setValue([contact.n?.family || "", contact.n?.given || "", "", "", ""]);
  c.addProperty(n);
  for (const e of contact.emails || []) if (e.value) setList(c, "email", [e.value], { type: e.type || (v4 ? "" : "internet") });
  for (const p of contact.phones || []) if (p.value) setList(c, "tel", [p.value], { type: p.type || "" });
  if (contact.org) { const o = new ICAL.Property("org", c); o.setValue(contact.org); c.addProperty(o); }
  if (contact.title) c.addPropertyWithValue("title", contact.title);
  if (contact.note) c.addPropertyWithValue("note", contact.note);
  for (const a of contact.addresses || []) {
    if (!(a.street || a.locality || a.region || a.code || a.country)) continue;
    const p = new ICAL.Property("adr", c);
    p.setValue(["", "", a.street || "", a.locality || "", a.region || "", a.code || "", a.country || ""]);
    if (a.type) p.setParameter("type", a.type);
    c.addProperty(p);
  }
  const groups = [...new Set((contact.groups || []).map((g) => g.trim()).filter(Boolean))];
  if (groups.length) setList(c, "categories", groups);
  return c.toString().replace(/\r?\n/g, "\r\n") + "\r\n";
}

// A new contact's UID, and the name of its resource in the book: the UID
// itself when it is made of safe characters, else a fresh one.
export function resourceName(uid, random) {
  return /^[A-Za-z0-9][A-Za-z0-9._-]{0,100}$/.test(uid || "") ? `${uid}.vcf` : `${random()}.vcf`;
}

// Text folded for matching: no case, no accents.
export const fold = (s) => String(s || "").normalize("NFD").replace(/\p{M}+/gu, "").toLowerCase();

// Sorted by name (the locale's collation; accents and case second).
export function sort(contacts, locale) {
  const coll = new Intl.Collator(locale || undefined, { sensitivity: "base", numeric: true });
  return [...contacts].sort((a, b) => coll.compare(a.fn || "", b.fn || "") || coll.compare(a.emails[0]?.value || "", b.emails[0]?.value || ""));
}

// Whether contact matches every word of query: name, emails, phones
// (digits alone as well), organisation, title, groups.
export function matches(contact, query) {
  const words = fold(query).split(/\s+/).filter(Boolean);
  if (!words.length) return true;
  const hay = fold([contact.fn, contact.n?.given, contact.n?.family, contact.org, contact.title,
    ...contact.emails.map((e) => e.value), ...contact.phones.map((p) => p.value), ...(contact.groups || [])].join(" "));
  const digits = contact.phones.map((p) => p.value.replace(/\D/g, "")).join(" ");
  return words.every((w) => hay.includes(w) || (/^\+?[\d\s()./-]{3,}$/.test(w) && digits.includes(w.replace(/\D/g, ""))));
}

// The contacts shown: query matched, in group (null: all), sorted.
export const filter = (contacts, query, group, locale) =>
  sort(contacts.filter((c) => (!group || c.groups.includes(group)) && matches(c, query)), locale);

// Every group used, sorted.
export const groupsOf = (contacts, locale) =>
  [...new Set(contacts.flatMap((c) => c.groups))].sort(new Intl.Collator(locale || undefined).compare);

// The people for the composer's suggestions: [{email, name}].
export const people = (contacts) => contacts.flatMap((c) => c.emails.map((e) => ({ email: e.value, name: c.fn })));

// A contact prefilled from a mail's sender {name, email}.
export function fromSender(sender) {
  const name = String(sender?.name || "").trim();
  const parts = name.split(/\s+/).filter(Boolean);
  return blank({ fn: name, n: { given: parts.length > 1 ? parts.slice(0, -1).join(" ") : parts[0] || "", family: parts.length > 1 ? parts.at(-1) : "" },
    emails: sender?.email ? [{ type: "", value: sender.email }] : [] });
}

// An empty contact, with fields from over.
export const blank = (over = {}) => ({ uid: "", fn: "", n: { family: "", given: "" }, emails: [], phones: [], org: "", title: "",
  note: "", addresses: [], groups: [], ...over });
