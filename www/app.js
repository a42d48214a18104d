// app.js: postern's mail client. Wires the modules together: sign-in, the
// three panes (one at a time on a phone), the toolbar, shortcuts, search,
// live updates. Each job lives in its own module under js/.
import * as api from "./js/api.js";
import * as i18n from "./js/i18n.js";
import { t } from "./js/i18n.js";
import * as settings from "./js/settings.js";
import * as store from "./js/store.js";
import * as live from "./js/live.js";
import * as search from "./js/search.js";
import { $, $$, h } from "./js/dom.js";
import * as folders from "./js/views/folders.js";
import * as list from "./js/views/list.js";
import * as reader from "./js/views/reader.js";
import * as composer from "./js/views/composer.js";
import * as folderedit from "./js/views/folderedit.js";
import * as writing from "./js/views/writing.js";
import * as toolbar from "./js/views/toolbar.js";
import * as quotabar from "./js/views/quotabar.js";
import * as contacts from "./js/contacts.js";
import * as identities from "./js/identities.js";
import { futureRelease } from "./js/limits.js";
import { words } from "./js/sendcheck.js";
import * as place from "./js/place.js";
import * as bulk from "./js/bulk.js";
import * as moveto from "./js/views/moveto.js";
import * as menu from "./js/views/menu.js";
import * as alerts from "./js/alerts.js";
import * as sworker from "./js/sworker.js";
import * as webpush from "./js/webpush.js";
import * as notifyView from "./js/views/notify.js";
import { worthTelling, toldIn, notices } from "./js/newmail.js";
import * as filters from "./js/filters.js";
import * as filterview from "./js/views/filters.js";
import * as vacation from "./js/views/vacation.js";
import { likeThis } from "./js/sieve.js";
import { icon } from "./js/icons.js";

const { state } = store;
let config = { name: "postern", uploadMax: 0 };
let openThread = null;     // {id, emails, email}
let showImagesFor = new Set();
let lang = "en";           // the catalogue in use
let attachWords = null;    // compose.attachWords of every catalogue

// -- panes -------------------------------------------------------------------

function show(which) {
  $("#signin").hidden = which !== "signin";
  $("#mail").hidden = which !== "mail";
}
function pane(name) { document.body.dataset.pane = name; }

// -- sign in / out --------------------------------------------------------------

function signinMessage(e) {
  if (e.code === "invalid_credentials") return t("signin.wrong");
  if (e.code === "rate_limited") {
    const n = Math.max(1, Math.ceil((e.retryAfter || 60) / 60));
    return t("signin.rateLimited", { n });
  }
  if (["upstream_error", "upstream_timeout"].includes(e.code)) return t("signin.upstream");
  if (e.code === "network" || e.status >= 500) return t("signin.serverDown");
  return t("signin.failed");
}

async function signIn(ev) {
  ev.preventDefault();
  const f = ev.target;
  const err = $("#signin-error");
  err.hidden = true;
  f.querySelector("button").disabled = true;
  try {
    const s = await api.post("/api/auth/login", { username: f.username.value, password: f.password.value,
      remember: f.remember.checked }, { quiet401: true });
    f.password.value = "";
    await enter(s);
  } catch (e) {
    err.textContent = signinMessage(e);
    err.hidden = false;
    f.password.select();
  } finally {
    f.querySelector("button").disabled = false;
  }
}

async function signOut() {
  live.stop();
  // The device's push subscription first: postern needs the session to drop it.
  await webpush.signOut().catch(() => {});
  try { await api.post("/api/auth/logout"); } catch { /* signed out anyway */ }
  leave();
}

function leave() {
  live.stop();
  contacts.forget();
  contactsView?.forget();
  filters.forget();
  filterview.reset();
  if ($("#filters").open) $("#filters").close();
  settings.forget();
  settings.apply();
  webpush.forget().catch(() => {});
  sworker.badge(0);
  store.setSession(null);
  show("signin");
  document.title = config.name;
  $("#signin-form").username.focus();
}

// -- the mail screen ------------------------------------------------------------

async function enter(session) {
  window.__postern_t0 = performance.now();
  const fetched = settings.fetch().catch((e) => { console.warn("settings", e); });
  store.setSession(session);
  identities.reset();
  $("#who").textContent = session.username;
  $("#contacts-open").hidden = !hasBook();
  show("mail");
  pane("list");
  await Promise.all([store.loadMailboxes(), store.loadIdentities(), fetched]);
  await applySettings();
  // The place of the URL (a reload, a pasted link, signing in again), else the Inbox.
  await goTo(place.parse(location.hash), true);
  // Focus in the list, where the keys work (unless the user moved it).
  if (!document.activeElement || document.activeElement === document.body || $("#signin").contains(document.activeElement)) list.focusRow();
  live.start(() => { store.refresh(); contacts.refresh(); }, () => { store.resync(); contacts.refresh(); },
    config.features?.push !== false);
  document.body.dataset.ready = "1";
  // This device's Web Push subscription as its setting says (none asked for).
  webpush.refresh().catch((e) => console.warn("notifications", e));
  store.loadQuota().catch((e) => console.warn("quota", e));
  // Whether there are filters here, and a vacation reply to show.
  // (None asked where the operator turned them off.)
  if (config.features?.filters === false) filters.none();
  else filters.load().catch((e) => console.warn("filters", e));
  // After the first paint: the people to suggest, the address book's first.
  contacts.start(state.accountId);
  if (config.features?.contacts && config.carddavPath) contacts.loadBook(config.carddavPath);
}

function paintFolders() {
  folders.render($("#folders"), { onOpen: (id) => openFolder(id), onDrop: (id) => act("move", id), onMenu: folderMenu });
  folderedit.paintTools();
  quotabar.paint($("#quota"), state.quota);
  updateTitle();
}

// -- places: the URL's fragment (place.js) ------------------------------------------

// The place shown: the folder or search, the thread open in it.
function here() {
  const p = {};
  const m = state.mailboxes.get(state.current);
  if (state.filter) p.search = state.query;
  else if (m?.role && place.ROLES.includes(m.role)) p.role = m.role;
  else if (m) p.folderId = m.id;
  if (openThread) { p.thread = openThread.id; if (openThread.email) p.email = openThread.email; }
  return p;
}

// A new place in the history (Back returns to the one before), or the
// current entry rewritten (replace).
function record(replace = false) {
  const f = place.format(here());
  if (f === location.hash) return;
  history[replace ? "replaceState" : "pushState"](null, "", f);
}

// Shows place p (from the URL): its list, its thread, the settings. What
// cannot be found (a folder gone, another account's thread) falls back to
// the Inbox or the list, and the URL says where the user is. A later
// goTo (Back then Forward at once) supersedes one still loading: that
// one then neither opens its thread nor rewrites the URL.
let goSeq = 0;
async function goTo(p, initial = false) {
  const seq = ++goSeq;
  if (p.contacts) {
    if (initial || !state.current) await goTo({}, initial);
    openContacts(false);
    return;
  }
  if (p.settings || p.filters) {
    if (initial || !state.current) await goTo({}, initial);
    if (p.settings) openSettings(false); else openFilters(false);
    return;
  }
  if ($("#settings").open) $("#settings").close();
  if ($("#filters").open) $("#filters").close();
  contactsView?.close();
  if (p.search) {
    if (!state.filter || state.query !== p.search) { $("#search").value = p.search; await runSearch(p.search, false); }
  } else {
    const id = (p.role && store.roleBox(p.role)?.id) || (p.folderId && state.mailboxes.has(p.folderId) && p.folderId)
      || store.roleBox("inbox")?.id || state.mailboxes.keys().next().value;
    if (initial || state.filter || state.current !== id) await openFolder(id, false);
  }
  if (seq !== goSeq) return;
  if (p.thread) {
    if (openThread?.id !== p.thread) await showThread(p.thread, p.email, false, () => seq !== goSeq).catch(() => {});
    if (seq !== goSeq) return;
  } else if (openThread) { closeReader(); pane("list"); list.focusRow(); }
  record(true);
}

// -- settings -------------------------------------------------------------------

// Brings the screen in line with the settings (after sign-in or a save).
async function applySettings() {
  settings.apply();
  store.setThreads(settings.get("threads"));
  if (i18n.pickLanguage(settings.get("language")) !== lang) {
    lang = await i18n.init(settings.get("language"));
    sworker.tell(lang);
    i18n.translate();
    helpSheet();
    if (state.session) { paintFolders(); paintToolbar(); paintReader(); list.paint(); paintFilters(); notifyView.paint(); }
    else updateTitle();
  }
}

let settingsPushed = false;   // the settings' place was pushed by opening them
function openSettings(nav = true) {
  const f = $("#settings-form");
  const v = settings.all();
  for (const k of ["theme", "density", "language", "compose", "afterAction"]) f.elements[k].value = v[k];
  f.elements.threads.checked = !!v.threads;
  f.elements.showImages.checked = !!v.showImages;
  notifyView.open();
  writing.paint($("#settings-writing"));
  $("#settings-error").hidden = true;
  if (!$("#settings").open) $("#settings").showModal();
  if (nav && location.hash !== "#/settings") { history.pushState(null, "", place.format({ settings: true })); settingsPushed = true; }
}

// Closing the settings leaves their place: Back if opening them pushed it.
function settingsClosed() {
  if (location.hash !== "#/settings") return;
  if (settingsPushed) history.back(); else record(true);
  settingsPushed = false;
}

// -- filters and the vacation reply ------------------------------------------------------

let filtersPushed = false;    // as settingsPushed, for #/filters
function openFilters(nav = true, rule = null) {
  filterview.open($("#filters"), { rule }).catch(warn);
  if (nav && location.hash !== "#/filters") { history.pushState(null, "", place.format({ filters: true })); filtersPushed = true; }
}
function filtersClosed() {
  if (location.hash !== "#/filters") return;
  if (filtersPushed) history.back(); else record(true);
  filtersPushed = false;
}

// The top bar's entry shows where the server has filters; the banner
// while a vacation reply answers.
function paintFilters() {
  const f = filters.state;
  $("#filters-open").hidden = f.available === false;
  vacation.banner($("#vacation-banner"), f.model?.vacation, {
    onEdit: () => openFilters(),
    onOff: async () => {
      try {
        const bad = await filters.update((m) => { if (m.vacation) m.vacation.on = false; });
        toast(bad ? t("filters.refused", { reason: bad.message }) : t("vacation.savedOff"));
      } catch (e) { warn(e); }
    },
  });
  filterview.paint();
}

// -- contacts (views/contacts.js) ---------------------------------------------------

let contactsView = null;      // the module, loaded on first use (with ical.js)
let contactsPushed = false;   // as settingsPushed, for #/contacts
const hasBook = () => !!(config.features?.contacts && config.carddavPath);
// The contacts screen; prefill: a sender {name, email} for a new contact's form.
function openContacts(nav = true, prefill = null) {
  if (!hasBook()) return;
  import("./js/views/contacts.js").then((v) => {
    contactsView = v;
    v.configure({ carddavPath: config.carddavPath, onChanged: contacts.setBook });
    return v.open({ sender: prefill, closed: contactsClosed });
  }).catch(warn);
  if (location.hash !== "#/contacts") {
    if (nav) { history.pushState(null, "", place.format({ contacts: true })); contactsPushed = true; }
    else history.replaceState(null, "", place.format({ contacts: true }));
  }
}
function contactsClosed() {
  if (location.hash !== "#/contacts") return;
  if (contactsPushed) history.back(); else record(true);
  contactsPushed = false;
}

async function saveSettings(ev) {
  if (ev.submitter?.value === "cancel") return;
  ev.preventDefault();
  const f = ev.target.elements;
  const before = settings.all();
  const v = { theme: f.theme.value, density: f.density.value, language: f.language.value, compose: f.compose.value,
    threads: f.threads.checked, showImages: f.showImages.checked, afterAction: f.afterAction.value, ...notifyView.read() };
  $("#settings-save").disabled = true;
  try {
    const w = await writing.read($("#settings-writing"));
    if (w.error) throw new Error(w.error);
    await settings.save({ ...v, ...w.changes });
  } catch (e) {
    $("#settings-error").textContent = t("settings.failed", { reason: e.message });
    $("#settings-error").hidden = false;
    return;
  } finally { $("#settings-save").disabled = false; }
  $("#settings").close();
  await applySettings();
  if (before.threads !== v.threads) { list.reset(); store.openList(undefined, state.filter); paintToolbar(); }
  else list.paint();
  if (before.showImages !== v.showImages) paintReader();
  toast(t("settings.saved"));
}

function updateTitle() {
  const inbox = store.roleBox("inbox");
  const n = inbox ? inbox.unreadEmails : 0;
  const cur = state.mailboxes.get(state.current);
  const where = state.filter ? t("search.results") : cur ? folders.folderName(cur) : "";
  document.title = (n ? `(${i18n.number(n)}) ` : "") + [where, config.name].filter(Boolean).join(" – ");
  alerts.favicon(n);
  sworker.badge(n);
}

// New mail while none of the browser's tabs is in view: the tab holding
// the event stream tells it (one notification, not one per tab).
function arrived(emails) {
  // A browser with a Web Push subscription hears of it from pushd instead.
  if (!alerts.enabled() || !live.holder() || live.anyInView() || webpush.state.subscribed) return;
  const inboxId = store.roleBox("inbox")?.id;
  const fresh = worthTelling(emails, { inboxId, folders: settings.get("notifyFolders"),
    own: state.identities.map((i) => i.email) });
  if (fresh.length) alerts.show(notices(fresh, t), openArrived);
}

// A notification's click: the mail's folder that notified (the Inbox for
// the summary), and the mail in it.
async function openArrived(email) {
  const inbox = store.roleBox("inbox")?.id;
  const told = toldIn(settings.get("notifyFolders"), inbox);
  const box = Object.keys(email?.mailboxIds || {}).find((id) => told.has(id)) || inbox;
  if (box && (state.current !== box || state.filter)) await openFolder(box);
  if (email) await openMessage(email.id);
}

// A Web Push notification's click (sw.js): its place, as a link would open it.
function openPlace(hash) {
  if (location.hash !== hash) history.pushState(null, "", hash);
  if (state.session && state.mailboxes.size) goTo(place.parse(hash)).catch(warn);
}

// A new release waits (sw.js): offered, never forced.
function offerUpdate() { $("#update").hidden = false; }

async function openFolder(id, nav = true) {
  $("#search").value = "";
  store.setQuery("");
  list.reset();
  closeReader();
  const p = store.openList(id, null);
  paintFolders();
  paintToolbar();
  pane("list");
  if (nav) record();
  await p;
}

function paintToolbar() {
  const role = state.mailboxes.get(state.current)?.role;
  $("#empty-trash").hidden = !(role === "trash" || role === "junk") || !!state.filter;
  $("#list-title").textContent = state.filter ? t("search.resultsFor", { q: state.query })
    : state.mailboxes.get(state.current) ? folders.folderName(state.mailboxes.get(state.current)) : "";
  $("#threads").setAttribute("aria-pressed", String(state.threads));
  // In Junk, Spam becomes Not spam.
  const junk = role === "junk" && !state.filter;
  for (const b of $$('#list-pane [data-act="junk"]')) b.hidden = junk;
  for (const b of $$('[data-act="notjunk"]')) b.hidden = !junk;
  paintSelection();
}

// Under the toolbar while rows are selected: how many, and the offer of
// the whole folder or search once every loaded row is.
function paintSelection() {
  const bar = $("#select-bar");
  const n = list.selectedCount();
  const loaded = state.ids.filter(Boolean).length;
  if (n < 2) { bar.hidden = true; return; }
  const where = state.filter ? t("search.results") : folders.folderName(state.mailboxes.get(state.current) || { name: "" });
  const kids = [h("span", {}, list.allSelected() ? t("select.allOf", { n: state.total, where }) : t("select.some", { n }))];
  if (!list.allSelected() && n >= loaded && state.total > n) {
    kids.push(h("button.link", { type: "button", onclick: () => list.selectAll() }, t("select.all", { n: state.total, where })));
  }
  kids.push(h("button.link", { type: "button", onclick: () => list.clearSelection() }, t("select.clear")));
  bar.replaceChildren(...kids);
  bar.hidden = false;
}

async function openMessage(id) {
  const e = state.emails.get(id);
  if (!e) return;
  // A draft opens in the composer, to be finished.
  if (e.keywords?.$draft && store.roleBox("drafts")?.id === state.current) {
    const [full] = (await store.loadThread(e.threadId)).filter((m) => m.id === id);
    if (full) composer.open($("#composer"), "draft", full, composerOpts());
    return;
  }
  await showThread(e.threadId, id, true);
}

// Opens a thread in the reader (at one of its messages, emailId), unless
// stale() says the user went elsewhere while it loaded.
async function showThread(threadId, emailId, nav = false, stale = () => false) {
  pane("reader");
  const t0 = performance.now();
  const emails = await store.loadThread(threadId);
  if (stale()) { if (!openThread) pane("list"); return; }
  // A thread that is not there (deleted, or another account's link): the list.
  if (!emails.length) { closeReader(); pane("list"); return; }
  openThread = { id: threadId, emails, email: emailId && emails.some((m) => m.id === emailId) ? emailId : null };
  if (nav) record();
  paintReader();
  window.__postern_open_ms = performance.now() - t0;
  const unread = emails.filter((m) => !m.keywords?.$seen).map((m) => m.id);
  if (unread.length) store.update(store.keywordPatch(unread, "$seen", true)).then(() => store.loadMailboxes()).catch(warn);
  $("#reader-body h2").focus({ preventScroll: true });
  // A link to one message of the thread shows that message.
  if (openThread.email && !nav) $(`#reader-body .msg[data-id="${CSS.escape(openThread.email)}"]`)?.scrollIntoView({ block: "start" });
}

function paintReader() {
  const root = $("#reader-body");
  if (!openThread) { root.replaceChildren(h("p.empty", {}, t("reader.none"))); $("#reader-actions").hidden = true; return; }
  $("#reader-actions").hidden = false;
  reader.render(root, openThread.emails, {
    focus: openThread.email,
    showImages: showImagesFor.has(openThread.id) || settings.get("showImages"),
    onShowImages: () => { showImagesFor.add(openThread.id); paintReader(); },
    onCompose: (mode, e) => compose(mode, e),
    onFilter: filters.state.available === false ? null : (e) => openFilters(true, likeThis(e)),
    onAddContact: hasBook() ? (sender) => openContacts(true, sender) : null,
  });
}

function closeReader() {
  openThread = null;
  paintReader();
}

// -- actions ----------------------------------------------------------------------

function warn(e) { console.warn(e); toast(t("error.actionFailed")); }

let toastTimer, toastMs = 0, toastCount = 0;
// A short message; with undo, an Undo button for 10 s. Only what is
// given is shown (replaceChildren would write a null as "null"). The time
// stops while the pointer or the focus is on it, and starts again when
// they leave (WCAG 2.2.1: a time limit the user can extend). "Undone"
// comes when the undo is through, which may be after a newer action's
// toast: then it is not shown, so that it never takes that toast's place
// (and its Undo) away.
function toast(text, undo) {
  const el = $("#toast");
  clearTimeout(toastTimer);
  toastCount++;
  const kids = [h("span", {}, text)];
  if (undo) {
    kids.push(h("button", { type: "button", onclick: async () => {
      el.hidden = true;
      const asked = toastCount;
      try {
        await undo();
        if (toastCount === asked) toast(t("toast.undone"));
      } catch (e) { warn(e); }
    } }, t("toast.undo")));
  }
  el.replaceChildren(...kids);
  el.hidden = false;
  toastMs = undo ? 10000 : 4000;
  toastLater();
}

function toastLater() {
  const el = $("#toast");
  clearTimeout(toastTimer);
  if (el.matches(":hover, :focus-within")) return;
  toastTimer = setTimeout(() => { el.hidden = true; }, toastMs);
}

for (const type of ["pointerenter", "focusin"]) $("#toast").addEventListener(type, () => clearTimeout(toastTimer));
for (const type of ["pointerleave", "focusout"]) {
  $("#toast").addEventListener(type, () => { if (!$("#toast").hidden) toastLater(); });
}

// The target rows: the list's (selection, else focus), else the open thread.
function targetsNow() {
  const ids = list.targets();
  if (ids.length) return ids;
  return openThread ? [openThread.emails[openThread.emails.length - 1].id] : [];
}

// The email ids an action applies to: the whole query, the rows of the
// selection (those not loaded named by the server), with their threads.
async function targetEmails(rows, onProgress) {
  if (list.allSelected()) return store.queryIds(undefined, onProgress);
  if (list.needsQuery()) return store.expandMany(await store.selectionRows(list.selection()));
  return rows.length > 20 ? store.expandMany(rows) : store.expand(rows);
}

// "Working… 1,000 of 2,500" while a large action runs.
const progressFor = (n) => bulk.progressGate(n, (done, total) => {
  toast(t("toast.working", { done: i18n.number(done), total: i18n.number(total) }));
  return toastCount;
}, () => toastCount);

const MOVES = { archive: "archive", trash: "trash", junk: "junk", notjunk: "inbox", move: null };

async function act(kind, arg) {
  if (kind === "move" && !arg) { openMove(); return; }
  const rows = targetsNow();
  const many = list.needsQuery();
  if (!rows.length && !many) return;
  const n = many ? list.selectedCount() : rows.length;
  const progress = progressFor(n);
  try {
    let to = arg, kw = kind;
    if (kind in MOVES) {
      const role = MOVES[kind];
      if (role) {
        const box = store.roleBox(role);
        if (!box) { toast(t("toast.noFolder", { name: t(`folder.${role}`) })); return; }
        to = box.id;
      }
      if (!to || to === state.current && !state.filter) return;
    } else if (kind === "flag") {
      kw = rows.every((id) => state.emails.get(id)?.keywords?.$flagged) && rows.length ? "unflag" : "flag";
    }
    const patch = bulk.patchFor(kw, { to, inbox: to });
    if (progress) progress(0, n);
    const ids = await targetEmails(rows, progress);
    if (kind in MOVES) leaveRows(rows, ids);
    list.clearSelection();
    const r = await store.bulkUpdate(ids, () => patch, progress);
    const name = folders.folderName(state.mailboxes.get(to) || { name: "" });
    const msg = {
      trash: "toast.deleted", junk: "toast.junk", notjunk: "toast.notJunk", archive: "toast.archived", read: "toast.read",
      unread: "toast.unread", flag: "toast.flagged", unflag: "toast.unflagged" }[kw] || "toast.moved";
    toast(t(msg, { n, name }) + (r.failed ? " " + t("toast.failedSome", { n: r.failed }) : ""), async () => {
      await store.bulkRestore(r.undo, progress);
      await store.refresh();
      await store.loadMailboxes();
    });
    if (openThread) { for (const e of openThread.emails) { const c = state.emails.get(e.id); if (c) e.keywords = c.keywords; } }
    await store.refresh();
    if (!(kind in MOVES)) await store.loadMailboxes();
  } catch (e) { warn(e); }
}

// Rows leave the list at once (the server confirms with the refresh);
// when the open thread was among them, the next one opens (the setting
// afterAction: next, previous, or back to the list).
function leaveRows(rows, ids) {
  const gone = new Set(rows);
  const pos = openThread ? state.ids.findIndex((id) => id && state.emails.get(id)?.threadId === openThread.id) : -1;
  const hit = openThread && (ids.some((id) => openThread.emails.some((e) => e.id === id)) || (pos >= 0 && gone.has(state.ids[pos])));
  const next = hit ? bulk.nextAfter(state.ids, gone, pos, settings.get("afterAction")) : null;
  const fpos = next ? state.ids.indexOf(next) : list.focusIndex();
  store.dropFromList(rows);
  if (hit && next) {
    // The next one replaces the place: Back does not return to what left.
    showThread(state.emails.get(next).threadId, next).then(() => record(true), warn);
    list.setFocus(state.ids.indexOf(next), { select: true });
  } else {
    if (hit) { closeReader(); pane("list"); record(); }
    list.setFocus(Math.min(Math.max(fpos, 0), state.total - 1), { select: true });
  }
}

// Move to…: the folder picked in the dialog.
function openMove() {
  if (!targetsNow().length && !list.needsQuery()) return;
  moveto.open({ current: state.filter ? null : state.current, onPick: (id) => act("move", id) });
}

// A folder's context menu, and a row's (on the selection).
function folderMenu(id) {
  const m = state.mailboxes.get(id);
  const items = [{ label: t("folders.markRead"), onSelect: () => markAllRead(id) }];
  if (!m?.role) {
    items.push({ label: t("folders.rename"), onSelect: () => openFolder(id).then(() => folderedit.rename()) });
  }
  return items;
}
function rowMenu() {
  const junk = state.mailboxes.get(state.current)?.role === "junk" && !state.filter;
  return [["move", "action.move"], ["archive", "action.archive"], ["trash", "action.delete"], [junk ? "notjunk" : "junk", junk ? "action.notJunk" : "action.junk"],
    ["read", "action.read"], ["unread", "action.unread"], ["flag", "action.flag"]].map(([k, l]) => ({ label: t(l), onSelect: () => act(k) }));
}

// Mark all read: every unread email of a folder (the open one), on the server.
async function markAllRead(id = state.current) {
  const box = state.mailboxes.get(id);
  if (!box) return;
  try {
    const ids = await store.queryIds({ inMailbox: id, notKeyword: "$seen" });
    if (!ids.length) return;
    const progress = progressFor(ids.length);
    const r = await store.bulkUpdate(ids, () => bulk.patchFor("read"), progress);
    toast(t("toast.allRead", { n: r.done, name: folders.folderName(box) }), async () => {
      await store.bulkRestore(r.undo, progress);
      await store.refresh();
      await store.loadMailboxes();
    });
    await store.refresh();
    await store.loadMailboxes();
  } catch (e) { warn(e); }
}

async function emptyTrash() {
  if (!confirm(t("confirm.empty"))) return;
  try {
    const n = await store.emptyFolder(state.current);
    toast(t("toast.emptied", { n }));
  } catch (e) { warn(e); }
  // Also after a refusal: what the server did destroy leaves the list.
  await store.refresh().catch(warn);
}

// The composer's state and intents.
function composerOpts() {
  // The words that ask about a missing attachment, of every catalogue
  // (fetched once, when first writing).
  if (!attachWords) {
    attachWords = words(t("compose.attachWords"));
    i18n.fromAll("compose.attachWords").then((ws) => { attachWords = ws.flatMap(words); }, () => {});
  }
  return {
    identities: identities.list(), uploadMax: config.uploadMax, compose: settings.get("compose"),
    sendDelay: Number(settings.get("sendDelay") ?? 10), futureRelease: !!futureRelease(state.session, state.accountId),
    templates: () => settings.get("templates") || [],
    attachWords: () => attachWords,
    learned: () => store.learned.maxSize,
    suggest: (text, exclude) => contacts.suggest(text, exclude),
    toast,
    saveTemplate: (tp) => settings.save({ templates: [...(settings.get("templates") || []).filter((x) => x.name !== tp.name), tp] }),
    onClose: (how) => {
      if (how === "discarded") toast(t("toast.discarded"));
      store.refresh();
      list.focusRow();
    },
    onSending: sending,
  };
}

// A mail on its way (outbox.js): with a delay, the bar with Undo for that
// long; then "Message sent", or the composer back with the reason.
let sendingTimer;
function sending(s, writer) {
  const bar = $("#sending");
  const sent = (r) => {
    if (!r) return;
    contacts.noteSent(s.message, r.emailId);
    toast(s.mode === "later" ? t("toast.scheduled", { date: i18n.longDate(r.sendAt) }) : t("toast.sent"));
    store.refresh();
  };
  const failed = (e) => { bar.hidden = true; writer.resume(null, e); };
  list.focusRow();
  if (s.mode === "now" || s.mode === "later") { sent(s.result); return; }
  clearTimeout(sendingTimer);
  bar.querySelector("span").textContent = t("toast.sendingIn", { n: s.delay });
  bar.querySelector("button").onclick = async () => {
    bar.hidden = true;
    clearTimeout(sendingTimer);
    if (await s.undo()) { writer.resume(t("compose.unsent")); store.refresh(); } else toast(t("toast.tooLate"));
  };
  bar.hidden = false;
  store.refresh();
  if (s.mode === "server") {
    sendingTimer = setTimeout(() => { if (!s.stopped) { bar.hidden = true; sent(s.result); } }, s.delay * 1000);
  } else {
    s.done.then((r) => { if (r) { bar.hidden = true; sent(r); } }, failed);
  }
}

// mode: new, reply, replyAll, forward; of: the message answered (the
// thread's last when not given).
async function compose(mode, of) {
  if (mode !== "new" && !of && !openThread && list.focused()) await openMessage(list.focused());
  const src = mode === "new" ? null : of || (openThread && openThread.emails[openThread.emails.length - 1]);
  if (mode !== "new" && !src) return;
  composer.open($("#composer"), mode, src, composerOpts());
}

// -- search ----------------------------------------------------------------------

async function runSearch(q, nav = true) {
  q = q.trim();
  if (!q) return openFolder(state.current, nav);
  const filter = search.parse(q, store.findMailbox);
  store.setQuery(q);
  list.reset();
  closeReader();
  // Without an in: the search covers every folder but Trash and Junk.
  let f = filter;
  if (!search.hasMailbox(filter)) {
    const skip = ["trash", "junk"].map((r) => store.roleBox(r)?.id).filter(Boolean);
    if (skip.length) f = { operator: "AND", conditions: [filter, { inMailboxOtherThan: skip }] };
  }
  const p = store.openList(undefined, f);
  paintFolders();
  paintToolbar();
  pane("list");
  if (nav) record();
  await p;
}

// -- keyboard ---------------------------------------------------------------------

const KEYS = {
  j: () => list.move(1), k: () => list.move(-1),
  o: () => list.focused() && openMessage(list.focused()), Enter: () => list.focused() && openMessage(list.focused()),
  c: () => compose("new"), r: () => compose("reply"), a: () => compose("replyAll"), f: () => compose("forward"),
  e: () => act("archive"), "#": () => act("trash"), Delete: () => act("trash"), "!": () => act("junk"),
  s: () => act("flag"), u: () => { pane("list"); list.focusRow(); }, v: () => act("move"),
  "/": () => { $("#search").focus(); $("#search").select(); },
  "?": () => $("#help").showModal(),
};

function onKey(ev) {
  if (ev.defaultPrevented || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  const tag = ev.target.tagName;
  if (tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || ev.target.isContentEditable) {
    if (ev.key === "Escape" && ev.target.id === "search") { ev.target.blur(); list.focusRow(); }
    return;
  }
  if (!$("#composer").hidden || $("#mail").hidden || $("#help").open || $("#settings").open || $("#filters").open || $("#folder-dialog").open || moveto.isOpen() || menu.isOpen() || contactsView?.isOpen()) return;
  if (ev.key === "Escape") { if (document.body.dataset.pane === "reader") { pane("list"); list.focusRow(); } return; }
  if (ev.key === "Enter" && ev.target.tagName === "BUTTON") return;
  const fn = KEYS[ev.key];
  if (fn) { ev.preventDefault(); fn(); }
}

function helpSheet() {
  const rows = [["j / k", "help.nextPrev"], ["o, Enter", "help.open"], ["u, Esc", "help.back"], ["c", "help.compose"],
    ["r", "help.reply"], ["a", "help.replyAll"], ["f", "help.forward"], ["e", "help.archive"], ["v", "help.move"], ["#", "help.delete"],
    ["!", "help.junk"], ["s", "help.flag"], ["/", "help.search"], ["?", "help.help"]];
  $("#help-keys").replaceChildren(...rows.map(([k, d]) => h("div", {}, h("dt", {}, h("kbd", {}, k)), h("dd", {}, t(d)))));
}

// -- start ------------------------------------------------------------------------

function wire() {
  $("#signin-form").addEventListener("submit", signIn);
  $("#signout").addEventListener("click", signOut);
  $("#compose").addEventListener("click", () => compose("new"));
  $("#compose-fab").addEventListener("click", () => compose("new"));
  toolbar.decorate($("#compose-fab"), "compose");
  toolbar.fold($("#list-pane .toolbar"));
  toolbar.fold($("#reader-actions"));
  toolbar.fold($("#folder-tools"));
  $("#search-form").addEventListener("submit", (ev) => { ev.preventDefault(); runSearch($("#search").value); });
  $("#threads").addEventListener("click", () => {
    settings.set("threads", !state.threads).catch(warn);
    store.setThreads(!state.threads);
    list.reset();
    store.openList(undefined, state.filter);
    paintToolbar();
  });
  $("#empty-trash").addEventListener("click", emptyTrash);
  $("#back").addEventListener("click", () => { pane("list"); list.focusRow(); });
  $("#menu").addEventListener("click", () => pane(document.body.dataset.pane === "folders" ? "list" : "folders"));
  for (const b of $$("[data-act]")) b.addEventListener("click", () => act(b.dataset.act));
  for (const b of $$("[data-compose]")) b.addEventListener("click", () => compose(b.dataset.compose));
  $("#settings-open").addEventListener("click", openSettings);
  $("#settings-form").addEventListener("submit", saveSettings);
  $("#settings").addEventListener("close", settingsClosed);
  // The top bar's two pages: an icon beside the word, the icon alone on a phone.
  $("#filters-open").prepend(icon("filter"));
  $("#contacts-open").prepend(icon("contacts"));
  $("#filters-open").addEventListener("click", () => openFilters());
  $("#contacts-open").addEventListener("click", () => openContacts());
  $("#filters").addEventListener("close", filtersClosed);
  filters.onChange(paintFilters);
  $("#select-loaded").addEventListener("click", () => (list.selectedCount() >= state.ids.filter(Boolean).length && state.ids.length
    ? list.clearSelection() : list.selectLoaded()));
  $("#folder-read").addEventListener("click", () => markAllRead());
  addEventListener("popstate", () => { if (state.session && state.mailboxes.size) goTo(place.parse(location.hash)).catch(warn); });
  notifyView.mount($("#settings-form").elements.notify, $("#notify-status"), $("#notify-folders"));
  $("#update button").addEventListener("click", () => sworker.reload());
  $("#folder-new").addEventListener("click", () => folderedit.create());
  $("#folder-rename").addEventListener("click", () => folderedit.rename());
  $("#folder-delete").addEventListener("click", async () => {
    if (await folderedit.remove()) openFolder(store.roleBox("inbox")?.id || state.mailboxes.keys().next().value);
  });
  folderedit.configure({ toast });
  $("#help-open").addEventListener("click", () => $("#help").showModal());
  $("#help-close").addEventListener("click", () => $("#help").close());
  document.addEventListener("keydown", onKey);
  list.mount($("#list"), { onOpen: openMessage, onError: warn, onSelect: paintSelection, onMenu: rowMenu });
  store.on("mailboxes", paintFolders);
  store.on("quota", () => quotabar.paint($("#quota"), state.quota));
  store.on("arrived", arrived);
  store.on("list", () => { list.paint(); paintSelection(); $("#list-empty").hidden = state.total > 0 || state.ids.length === 0 && state.total === 0 && !state.queryState; });
  store.on("list-reset", () => list.paint());
  api.setUnauthenticatedHandler(() => { if (state.session) { leave(); const err = $("#signin-error"); err.textContent = t("signin.expired"); err.hidden = false; } });
}

async function start() {
  settings.load();
  settings.apply();
  lang = await i18n.init(settings.get("language"));
  i18n.translate();
  helpSheet();
  wire();
  try {
    config = { ...config, ...(await api.get("/api/config")) };
  } catch { /* shown when signing in fails */ }
  $("#site-name").textContent = config.name;
  document.title = config.name;
  webpush.configure(config.features);
  // The worker after the page's own files: its copies compete with nothing.
  const worker = () => { sworker.start({ onUpdate: offerUpdate, onOpen: openPlace }); sworker.tell(lang); };
  if (document.readyState === "complete") worker(); else addEventListener("load", worker, { once: true });
  try {
    const s = await api.get("/api/auth/session", { quiet401: true });
    await enter(s);
  } catch (e) {
    show("signin");
    if (e.code !== "unauthenticated" && e.status !== 401) { $("#signin-error").textContent = signinMessage(e); $("#signin-error").hidden = false; }
    $("#signin-form").username.focus();
  }
}

start();
