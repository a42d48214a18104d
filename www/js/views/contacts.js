// views/contacts.js: the contacts screen, a dialog of its own (#contacts,
// made on first use): the address books' people sorted by name, a search
// (name, email, phone, organisation; no case, no accents), a group
// filter, one contact shown, the form to create or edit one, delete
// (confirmed), import of a .vcf file (many cards, 4 at a time, with
// progress) and export (all, or one) as .vcf. Cards are read and written
// by book-store.js; book.js makes contacts of them. After any change
// configure()'s onChanged gets the people, for the composer's suggestions.
import { t, number, getLocale } from "../i18n.js";
import { h } from "../dom.js";
import * as books from "../book-store.js";
import * as book from "../book.js";

const IMPORT_AT_ONCE = 4;
let dlg = null;
let root = null;           // /api/config's carddavPath
let onChanged = () => {};
let selected = null;       // href of the contact shown
let query = "";
let group = "";
let busy = false;
const el = {};

export function configure(opts) {
  root = opts.carddavPath;
  onChanged = opts.onChanged || onChanged;
}
export const isOpen = () => !!dlg?.open;

function build() {
  const field = (key, input) => h("label.field", {}, h("span", {}, t(key)), input);
  el.search = h("input", { type: "search", "aria-label": t("contacts.search"), placeholder: t("contacts.search"), autocomplete: "off",
    value: query, oninput: () => { query = el.search.value; paintList(); } });
  el.group = h("select", { onchange: () => { group = el.group.value; paintList(); } });
  el.file = h("input", { type: "file", accept: ".vcf,text/vcard,text/x-vcard", hidden: true, "aria-label": t("contacts.import"),
    onchange: () => { const f = el.file.files[0]; el.file.value = ""; if (f) importFile(f); } });
  el.status = h("p.contacts-status", { role: "status" });
  el.list = h("ul.contacts-list", { "aria-label": t("contacts.list") });
  el.detail = h("section.contacts-detail", { "aria-label": t("contacts.detail") });
  dlg = h("dialog.contacts", { id: "contacts", "aria-labelledby": "contacts-h" },
    h("div.contacts-head", {},
      h("h2", { id: "contacts-h" }, t("contacts.title")),
      h("button", { type: "button", onclick: () => dlg.close() }, t("contacts.close"))),
    h("div.contacts-tools", { role: "toolbar", "aria-label": t("contacts.tools") },
      el.search, field("contacts.group", el.group),
      h("button", { type: "button", class: "primary", onclick: () => edit(null) }, t("contacts.new")),
      h("button", { type: "button", onclick: () => el.file.click() }, t("contacts.import")), el.file,
      h("button", { type: "button", onclick: () => download(books.cards(), "contacts.vcf") }, t("contacts.exportAll"))),
    el.status,
    h("div.contacts-body", {}, el.list, el.detail));
  dlg.addEventListener("close", () => { onClose?.(); });
  document.body.append(dlg);
}
let onClose = null;

// Opens the screen (sender: a mail's {name, email}, for a new contact's
// form, or their card when the book has the address); resolves once the
// list shows. closed: called on close.
export async function open({ sender = null, closed = null } = {}) {
  // Made again in another language.
  if (dlg && !dlg.open && dlg.lang !== getLocale()) { dlg.remove(); dlg = null; }
  if (!dlg) { build(); dlg.lang = getLocale(); }
  const prefill = sender ? book.fromSender(sender) : null;
  onClose = closed;
  if (!dlg.open) dlg.showModal();
  if (!prefill) { if (!selected) el.detail.replaceChildren(); el.search.focus(); }
  await refresh();
  if (!prefill) return;
  // A sender already in the book opens their card, not a second one.
  const email = String(sender.email || "").toLowerCase();
  const known = books.cards().find((c) => c.contact.emails.some((e) => e.value.toLowerCase() === email));
  if (known) show(known.href); else edit(null, prefill);
}
export function close() { if (dlg?.open) dlg.close(); }
export function forget() { books.forget(); selected = null; query = ""; group = ""; if (dlg) { dlg.remove(); dlg = null; } }

// The books read (first time) or brought up to date (sync-collection).
async function refresh() {
  if (!books.bookList().length) say(t("contacts.loading"));
  try {
    await books.load(root);
    if (!books.bookList().length) { say(t("contacts.noBook")); return; }
    say("");
  } catch (e) {
    if (e instanceof books.Stale) return; // signed out meanwhile
    say(t("contacts.loadFailed", { reason: e.message }));
  }
  paintList();
}

function say(text) { el.status.textContent = text; }

function paintList() {
  const all = books.cards();
  const groups = book.groupsOf(all.map((c) => c.contact), getLocale());
  el.group.replaceChildren(h("option", { value: "" }, t("contacts.allGroups")), ...groups.map((g) => h("option", { value: g }, g)));
  if (group && !groups.includes(group)) group = "";
  el.group.value = group;
  const byContact = new Map(all.map((c) => [c.contact, c]));
  const shown = book.filter(all.map((c) => c.contact), query, group || null, getLocale()).map((c) => byContact.get(c));
  el.list.replaceChildren(...shown.map((c) => h("li", {},
    h("button.contact-row", { type: "button", "aria-current": c.href === selected ? "true" : null, "data-href": c.href,
      onclick: () => show(c.href) },
    h("span.contact-name", {}, c.contact.fn || c.contact.emails[0]?.value || "—"),
    c.contact.emails[0] ? h("span.contact-email", {}, c.contact.emails[0].value) : null))));
  el.list.dataset.count = String(shown.length);
  el.list.setAttribute("aria-description", t("contacts.count", { n: shown.length }));
  if (!shown.length) el.list.append(h("li.empty", {}, all.length ? t("contacts.noMatch") : t("contacts.empty")));
}

// One contact, read.
function show(href) {
  const c = books.cards().find((x) => x.href === href);
  selected = c ? href : null;
  paintList();
  if (!c) { el.detail.replaceChildren(); return; }
  const k = c.contact;
  const row = (key, ...v) => (v.flat().filter(Boolean).length ? [h("dt", {}, t(key)), ...v.flat().filter(Boolean).map((x) => h("dd", {}, x))] : []);
  const adr = (a) => [a.street, [a.code, a.locality].filter(Boolean).join(" "), a.region, a.country].filter(Boolean).join(", ");
  el.detail.replaceChildren(
    h("h3", {}, k.fn),
    h("dl", {},
      row("contacts.email", k.emails.map((e) => h("a", { href: `mailto:${e.value}`, dir: "ltr" }, e.value))),
      row("contacts.phone", k.phones.map((p) => h("span", { dir: "ltr" }, p.value))),
      row("contacts.org", k.org), row("contacts.jobTitle", k.title),
      row("contacts.address", k.addresses.map(adr)),
      row("contacts.groups", k.groups.join(", ")),
      row("contacts.note", k.note)),
    h("div.actions", {},
      h("button", { type: "button", onclick: () => edit(href) }, t("contacts.edit")),
      h("button", { type: "button", onclick: () => download([c], `${(k.fn || "contact").replace(/[^\p{L}\p{N} ._-]+/gu, "_")}.vcf`) }, t("contacts.export")),
      h("button", { type: "button", class: "danger", onclick: () => remove(href) }, t("contacts.delete"))));
}

// The form for a contact: href null for a new one (prefilled from prefill).
function edit(href, prefill = null) {
  const c = href ? books.cards().find((x) => x.href === href) : null;
  const k = c ? c.contact : prefill || book.blank();
  const inp = (name, value, key, type = "text") => h("label.field", {}, h("span", {}, t(key)),
    h("input", { name, type, value: value || "", autocomplete: "off" }));
  const many = (name, list, key, addKey, type) => {
    const box = h("div.many", { "data-name": name });
    const add = (v = "", kind = "") => box.append(h("label.field", {}, h("span", {}, t(key)),
      h("input", { name, type, value: v, autocomplete: "off", "data-type": kind })));
    for (const x of list) add(x.value, x.type);
    if (!list.length) add();
    return [box, h("button.small", { type: "button", onclick: () => { add(); box.lastChild.querySelector("input").focus(); } }, t(addKey))];
  };
  const a = k.addresses[0] || {};
  const err = h("p.error", { role: "alert", hidden: true });
  const form = h("form.contact-form", { "aria-label": href ? t("contacts.editTitle", { name: k.fn }) : t("contacts.new"), novalidate: true },
    h("h3", {}, href ? t("contacts.editTitle", { name: k.fn }) : t("contacts.new")),
    inp("fn", k.fn, "contacts.name"), inp("given", k.n.given, "contacts.given"), inp("family", k.n.family, "contacts.family"),
    ...many("email", k.emails, "contacts.email", "contacts.addEmail", "email"),
    ...many("phone", k.phones, "contacts.phone", "contacts.addPhone", "tel"),
    inp("org", k.org, "contacts.org"), inp("title", k.title, "contacts.jobTitle"),
    h("fieldset", {}, h("legend", {}, t("contacts.address")),
      inp("street", a.street, "contacts.street"), inp("code", a.code, "contacts.code"), inp("locality", a.locality, "contacts.city"),
      inp("region", a.region, "contacts.region"), inp("country", a.country, "contacts.country")),
    inp("groups", k.groups.join(", "), "contacts.groups"),
    h("label.field", {}, h("span", {}, t("contacts.note")), h("textarea", { name: "note", rows: 3 }, k.note || "")),
    err,
    h("div.actions", {},
      h("button", { type: "submit", class: "primary" }, t("contacts.save")),
      h("button", { type: "button", onclick: () => (href ? show(href) : el.detail.replaceChildren()) }, t("contacts.cancel"))));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    if (busy) return;
    const f = form.elements;
    const vals = (name) => [...form.querySelectorAll(`.many[data-name=${name}] input`)].map((i) => ({ type: i.dataset.type || "", value: i.value.trim() })).filter((x) => x.value);
    const next = { ...k, fn: f.fn.value.trim(), n: { given: f.given.value.trim(), family: f.family.value.trim() },
      emails: vals("email"), phones: vals("phone"), org: f.org.value.trim(), title: f.title.value.trim(), note: f.note.value.trim(),
      addresses: [{ ...a, street: f.street.value.trim(), code: f.code.value.trim(), locality: f.locality.value.trim(),
        region: f.region.value.trim(), country: f.country.value.trim() }, ...k.addresses.slice(1)],
      groups: f.groups.value.split(",").map((g) => g.trim()).filter(Boolean) };
    if (!next.fn && !next.n.given && !next.n.family && !next.emails.length && !next.org) { err.textContent = t("contacts.needName"); err.hidden = false; return; }
    busy = true;
    try {
      let at;
      if (c) at = await books.put(book.toVcard(next, c.component), { href: c.href, etag: c.etag });
      else {
        next.uid = crypto.randomUUID();
        const target = books.bookList()[0];
        if (!target) throw new Error(t("contacts.noBook"));
        at = await books.put(book.toVcard(next), { bookPath: target.path, name: book.resourceName(next.uid, () => crypto.randomUUID()) });
      }
      say(t("contacts.saved"));
      changed();
      show(at);
    } catch (e) {
      if (e instanceof books.Conflict && c) {
        const now = await books.reread(c.href).catch(() => null);
        paintList();
        if (now) { edit(c.href); say(t("contacts.conflict")); } else { el.detail.replaceChildren(); say(t("contacts.gone")); }
        return;
      }
      err.textContent = t("contacts.failed", { reason: e.message });
      err.hidden = false;
    } finally { busy = false; }
  });
  el.detail.replaceChildren(form);
  form.elements.fn.focus();
}

async function remove(href) {
  const c = books.cards().find((x) => x.href === href);
  if (!c || !confirm(t("contacts.confirmDelete", { name: c.contact.fn }))) return;
  try {
    await books.remove(c.href, c.etag);
    selected = null;
    el.detail.replaceChildren();
    say(t("contacts.deleted", { name: c.contact.fn }));
    changed();
  } catch (e) {
    if (e instanceof books.Conflict) {
      const now = await books.reread(c.href).catch(() => null);
      paintList();
      if (now) { show(c.href); say(t("contacts.conflict")); } else { el.detail.replaceChildren(); say(t("contacts.gone")); }
      return;
    }
    say(t("contacts.failed", { reason: e.message }));
  }
}

function changed() {
  paintList();
  onChanged(book.people(books.cards().map((c) => c.contact)));
}

// A .vcf file's cards into the first book, IMPORT_AT_ONCE at a time.
// Cards without a UID get one; one whose resource exists already is left.
async function importFile(file) {
  const cards = book.parseCards(await file.text());
  const target = books.bookList()[0];
  if (!cards.length || !target) { say(cards.length ? t("contacts.noBook") : t("contacts.importNone")); return; }
  let done = 0, failed = 0, next = 0;
  const total = cards.length;
  say(t("contacts.importing", { done: number(0), total: number(total) }));
  const one = async ({ contact, component }) => {
    const uid = contact.uid || crypto.randomUUID();
    if (!contact.uid) component.addPropertyWithValue("uid", uid);
    const text = component.toString().replace(/\r?\n/g, "\r\n") + "\r\n";
    await books.put(text, { bookPath: target.path, name: book.resourceName(uid, () => crypto.randomUUID()) });
  };
  const worker = async () => {
    while (next < total) {
      const c = cards[next++];
      try { await one(c); } catch (e) { failed++; console.warn("import", e); }
      done++;
      say(t("contacts.importing", { done: number(done), total: number(total) }));
    }
  };
  await Promise.all(Array.from({ length: Math.min(IMPORT_AT_ONCE, total) }, worker));
  say(t("contacts.imported", { n: total - failed }) + (failed || cards.errors ? " " + t("contacts.importFailed", { n: failed + cards.errors }) : ""));
  changed();
}

// cards as one .vcf file, downloaded.
function download(cards, name) {
  const text = cards.map((c) => c.text.replace(/\r?\n/g, "\r\n").replace(/(\r\n)*$/, "\r\n")).join("");
  const url = URL.createObjectURL(new Blob([text], { type: "text/vcard;charset=utf-8" }));
  const a = h("a", { href: url, download: name, hidden: true });
  dlg.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}
