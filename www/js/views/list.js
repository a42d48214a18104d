// views/list.js: the message list, virtualised: only the rows in view (and
// a few more) are in the DOM; the pages behind them are fetched as needed.
import { h } from "../dom.js";
import { t, shortDate } from "../i18n.js";
import * as store from "../store.js";
import * as bulk from "../bulk.js";
import { parts } from "../snippet.js";
import * as menu from "./menu.js";
const { state } = store;

const OVERSCAN = 8;
let root, inner, rowH = 68, measured = false;
let focus = -1;
export const selected = new Set();   // rows picked one by one
// Shift ranges (positions, loaded or not) and the whole query.
let ranges = [];
let all = false;
let handlers = {};
let anchor = -1;

export function mount(el, opts) {
  root = el;
  handlers = opts;
  inner = h("div.rows", { role: "presentation" });
  root.replaceChildren(inner);
  let queued = false;
  root.addEventListener("scroll", () => {
    if (queued) return;
    queued = true;
    requestAnimationFrame(() => { queued = false; paint(false); });
  }, { passive: true });
  new ResizeObserver(() => paint()).observe(root);
  // The row height changes only with the density (on <html>, see
  // settings.apply): measured again then, not on every scroll.
  new MutationObserver((recs) => {
    if (recs.every((r) => r.oldValue === document.documentElement.dataset.density)) return;
    measured = false;
    paint();
  }).observe(document.documentElement, { attributes: true, attributeOldValue: true, attributeFilter: ["data-density"] });
  root.addEventListener("keydown", (ev) => { if (ev.key === "Enter" && focus >= 0) handlers.onOpen(state.ids[focus]); });
}

export function reset() {
  focus = -1; anchor = -1;
  clearSelection(false);
  if (root) root.scrollTop = 0;
  paint();
}

export function focused() { return focus >= 0 ? state.ids[focus] : null; }
export function focusIndex() { return focus; }

// The loaded rows the toolbar acts on: the selection's, else the focused row.
export function targets() {
  if (!bulk.isEmpty(selection())) return bulk.rowIds(selection(), state.ids);
  const f = focused();
  return f ? [f] : [];
}

// The selection (bulk.js): rows, ranges by position, or the whole query.
export function selection() { return { ids: selected, ranges, all }; }
// Whether acting on it needs the server to name the rows (some not loaded).
export function needsQuery() {
  return all || bulk.missing(ranges, state.ids).length > 0;
}
export function selectedCount() { return bulk.count(selection(), state.total, state.ids); }
const changed = () => handlers.onSelect && handlers.onSelect();
export function clearSelection(repaint = true) {
  selected.clear(); ranges = []; all = false;
  if (repaint) { paint(); changed(); }
}
// Every loaded row; then, asked again, the whole query.
export function selectLoaded() {
  all = false; ranges = [];
  for (const id of state.ids) if (id) selected.add(id);
  paint(); changed();
}
export function selectAll() { all = true; paint(); changed(); }
export const allSelected = () => all;

export function setFocus(i, { select = false, extend = false, toggle = false } = {}) {
  if (!state.total) return;
  i = Math.max(0, Math.min(state.total - 1, i));
  const prev = focus >= 0 ? state.ids[focus] : null;
  focus = i;
  const id = state.ids[i];
  if (extend && anchor >= 0) {
    // Every row between, loaded or not: the range is kept by position.
    selected.clear(); all = false;
    ranges = [[Math.min(anchor, i), Math.max(anchor, i)]];
  } else if (toggle && id) {
    // Ctrl-click after a plain click: the row that was focused joins in.
    if (bulk.isEmpty(selection()) && prev && prev !== id) selected.add(prev);
    if (bulk.isSelected(selection(), i, id)) {
      if (all) { all = false; for (const x of state.ids) if (x) selected.add(x); }
      selected.delete(id); ranges = bulk.without(ranges, i);
    } else selected.add(id);
    anchor = i;
  } else if (select) {
    selected.clear(); ranges = []; all = false;
    anchor = i;
  }
  const top = i * rowH;
  if (top < root.scrollTop) root.scrollTop = top;
  else if (top + rowH > root.scrollTop + root.clientHeight) root.scrollTop = top + rowH - root.clientHeight;
  paint();
  const row = inner.querySelector(`[data-pos="${i}"]`);
  if (row && root.contains(document.activeElement)) row.focus({ preventScroll: true });
  handlers.onSelect && handlers.onSelect();
}
export function move(d) { setFocus((focus < 0 ? -1 : focus) + d, { select: true }); focusRow(); }
export function focusRow() {
  const row = inner.querySelector(`[data-pos="${Math.max(focus, 0)}"]`);
  if (row) row.focus({ preventScroll: true });
}

function who(e) {
  const sentLike = ["sent", "drafts"].includes(state.mailboxes.get(state.current)?.role) && !state.filter;
  const list = (sentLike ? e.to : e.from) || [];
  const names = list.map((a) => a.name || a.email).join(", ");
  return sentLike ? t("list.to", { names }) : names || t("list.unknownSender");
}

function row(i) {
  const id = state.ids[i];
  const e = id && state.emails.get(id);
  if (!e) {
    const on = bulk.isSelected(selection(), i, null);
    const l = h(`div.row.loading${on ? ".selected" : ""}`, { "data-pos": i, role: "option", "aria-busy": "true", "aria-selected": on ? "true" : "false" }, h("span.from", {}, t("list.loading")));
    l.style.top = `${i * rowH}px`;
    return l;
  }
  const unread = !e.keywords?.$seen;
  const flagged = !!e.keywords?.$flagged;
  const n = state.threads ? store.threadSize.get(e.threadId) || 1 : 1;
  const sel = bulk.isSelected(selection(), i, id);
  const snip = state.snippets.get(id);
  const el = h(`div.row${unread ? ".unread" : ""}${i === focus ? ".focus" : ""}${sel ? ".selected" : ""}`, {
    "data-pos": i, "data-id": id, role: "option", tabindex: i === Math.max(focus, 0) ? "0" : "-1",
    "aria-selected": sel || i === focus ? "true" : "false", draggable: "true",
  },
  // The option's name is its text (what it shows, with its state first).
  unread || flagged ? h("span.sr-only", {}, [unread ? t("list.unread") : "", flagged ? t("list.flagged") : ""].filter(Boolean).join(", ") + ", ") : null,
  // A box to tick, drawn: a checkbox inside an option would be a control
  // nested in a control; the option's aria-selected tells the state.
  h("span.pick", { "aria-hidden": "true" }),
  h("span.from", {}, who(e), n > 1 ? h("span.n", {}, ` ${n}`) : null),
  h("span.date", {}, shortDate(e.receivedAt)),
  snip?.subject ? h("span.subject", {}, marked(snip.subject)) : h("span.subject", {}, e.subject || t("list.noSubject")),
  // The preview is text: Cyrus's preview of an HTML-only mail is raw HTML,
  // so it goes in as a text node, never as markup. A search's snippet is
  // text with <mark>s, built as such (snippet.js).
  snip?.preview ? h("span.preview", {}, marked(snip.preview)) : h("span.preview", {}, (e.preview || "").replace(/<(style|script)\b[^>]*>[\s\S]*?(<\/\1\s*>|$)/gi, " ").replace(/<[^>]*>?/g, " ").replace(/\s+/g, " ").trim()),
  h("span.marks", {},
    e.hasAttachment ? h("span.att", { title: t("list.attachment"), "aria-hidden": "true" }) : null,
    flagged ? h("span.flag", { title: t("list.flagged"), "aria-hidden": "true" }, "★") : null));
  el.style.top = `${i * rowH}px`;
  el.addEventListener("click", (ev) => {
    if (ev.target.classList.contains("pick")) { setFocus(i, { toggle: true }); return; }
    if (ev.shiftKey) { setFocus(i, { extend: true }); return; }
    if (ev.ctrlKey || ev.metaKey) { setFocus(i, { toggle: true }); return; }
    setFocus(i, { select: true });
    handlers.onOpen(id);
  });
  // The context menu acts on the selection; a row outside it is selected first.
  if (handlers.onMenu) menu.attach(el, () => { if (!sel) setFocus(i, { select: true }); return handlers.onMenu(); });
  el.addEventListener("dragstart", (ev) => {
    if (!sel) { clearSelection(false); selected.add(id); }
    ev.dataTransfer.setData("text/plain", targets().join(","));
    ev.dataTransfer.effectAllowed = "move";
  });
  return el;
}

// A snippet's parts as text nodes and <mark> elements.
const marked = (s) => parts(s).map((p) => (p.mark ? h("mark", {}, p.text) : p.text));

// --row-h from the style sheet; tried again on the next paint while the
// sheet has not set it.
function measure() {
  const v = parseFloat(getComputedStyle(root).getPropertyValue("--row-h"));
  if (v) { rowH = v; measured = true; }
}

let painted = "";
// paint(false) (on scroll) skips the work when the same rows are in view.
export function paint(force = true) {
  if (!root) return;
  if (!measured) measure();
  inner.style.height = `${state.total * rowH}px`;
  const from = Math.max(0, Math.floor(root.scrollTop / rowH) - OVERSCAN);
  const to = Math.min(state.total, Math.ceil((root.scrollTop + root.clientHeight) / rowH) + OVERSCAN);
  store.setView(from, to);
  const key = `${from}:${to}:${state.total}`;
  if (!force && key === painted) return;
  painted = key;
  const had = root.contains(document.activeElement);
  const kids = [];
  for (let i = from; i < to; i++) kids.push(row(i));
  inner.replaceChildren(...kids);
  if (had) focusRow();
  let missing = false;
  for (let i = from; i < to; i++) if (!state.ids[i]) { missing = true; break; }
  if (missing) store.ensureRange(from, to).catch((e) => handlers.onError && handlers.onError(e));
  root.setAttribute("aria-busy", missing ? "true" : "false");
  handlers.onPaint && handlers.onPaint();
}
