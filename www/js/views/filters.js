// views/filters.js: the filter screen in its dialog (#filters): the
// vacation reply (views/vacation.js), the rules in order, each on or off;
// the rule builder; and the whole script as Sieve for people who write
// their own, checked by the server with its error shown at its line. A
// view on filters.js's state: every change is stored at once, as one
// script, through filters.update or filters.saveScript.
import { h } from "../dom.js";
import { t } from "../i18n.js";
import * as filters from "../filters.js";
import { FIELDS, OPS, ACTIONS, blankRule, check } from "../sieve.js";
import { state as mail } from "../store.js";
import { folderName, sorted } from "./folders.js";
import * as vacation from "./vacation.js";

let body = null;      // the dialog's body, repainted whole
let mode = "list";    // "list", "rule" (the builder), "raw" (Sieve)
let editing = null;   // the builder's rule (a copy) and its index, -1 for a new one
let raw = null;       // the Sieve editor's text while it is open
let problem = null;   // the last error: {text, line}
let note = null;      // what the vacation's last save said, shown once
const draft = { v: null };  // the vacation form as typed, kept over repaints

const copy = (x) => JSON.parse(JSON.stringify(x));

// Opens the dialog: the list, or the builder with rule (a new rule,
// "filter messages like this").
export async function open(dialog, { rule } = {}) {
  body = dialog.querySelector(".filters-body");
  problem = null;
  mode = rule ? "rule" : "list";
  editing = rule ? { index: -1, rule: copy(rule) } : null;
  if (!dialog.open) dialog.showModal();
  paint();
  // The state's change (if any) repaints through filters.onChange.
  try { await filters.load(); } catch (e) { problem = { text: t("filters.failed", { reason: e.message }) }; paint(); }
}

// Back to the list with nothing kept (sign-out).
export function reset() {
  mode = "list";
  editing = null;
  raw = null;
  problem = null;
  note = null;
  draft.v = null;
}

// Repaints whatever is showing (a language change, the state's change).
export function paint() {
  if (!body) return;
  const head = h("h2", { id: "filters-h" }, t("filters.title"));
  const err = problem ? h("p.error", { role: "alert" }, problem.text) : null;
  let main;
  if (filters.state.available === null) main = [h("p", { role: "status" }, t("filters.loading"))];
  else if (!filters.state.available) main = [h("p.empty", {}, t("filters.none"))];
  else if (mode === "rule") main = builder();
  else if (mode === "raw") main = sieveEditor();
  else main = list();
  // A repaint keeps the focus on the control that had it (data-k).
  const k = document.activeElement?.dataset?.k;
  body.replaceChildren(...[head, err, ...main].filter(Boolean));
  note = null;
  if (k) body.querySelector(`[data-k="${k}"]`)?.focus();
  if (problem?.line && mode === "raw") pickLine(body.querySelector("textarea"), problem.line);
}

// Stores change(model) (filters.update); an error is shown and nothing
// changes. While a store is out the list's controls wait (pending), so
// a second click cannot act on a row the first one moved.
let pending = 0;
async function store(change, after) {
  problem = null;
  pending++;
  // The list's controls wait as they are (a repaint now would show the
  // stored state under the user's click).
  for (const el of body.querySelectorAll("li.rule input, li.rule button")) el.disabled = true;
  let bad;
  try { bad = await filters.update(change); } catch (e) { problem = { text: t("filters.failed", { reason: e.message }) }; } finally { pending--; }
  if (bad) problem = { text: t("filters.refused", { reason: bad.message }), line: bad.line };
  else if (!problem && after) after();
  paint();
  return !problem;
}

const model = () => copy(filters.state.model || { rules: [], vacation: null, before: "", rest: "", requires: [] });

// -- the list --------------------------------------------------------------------

// "From contains erin → Move to Invoices", in words.
function summary(r) {
  const when = r.when.map((c) => t(`filters.field.${c.field}`) + (c.field === "header" ? ` ${c.header}` : "")
    + ` ${t(`filters.op.${c.op}`)} “${c.value}”`).join(r.all ? ` ${t("filters.and")} ` : ` ${t("filters.or")} `);
  const then = r.then.map((a) => t(`filters.act.${a.act}`) + (a.folder ? ` ${a.folder}` : "") + (a.to ? ` ${a.to}` : "")).join(", ");
  return `${when} → ${then}`;
}

function list() {
  const m = model();
  const rules = m.rules.map((r, i) => {
    const name = r.name || t("filters.unnamed");
    const move = (d) => store((x) => { const [it] = x.rules.splice(i, 1); x.rules.splice(i + d, 0, it); });
    return h("li.rule", {},
      h("label.check", {}, h("input", { type: "checkbox", checked: r.on, "aria-label": t("filters.onFor", { name }),
        disabled: pending > 0, onchange: (ev) => { const on = ev.target.checked; store((x) => { x.rules[i].on = on; }); } })),
      h("span.rule-text", {}, h("strong", {}, name), " ", h("span.hint", {}, summary(r))),
      h("span.rule-tools", {},
        h("button.small", { type: "button", "aria-label": t("filters.editFor", { name }), disabled: pending > 0,
          onclick: () => { mode = "rule"; editing = { index: i, rule: copy(r) }; problem = null; paint(); } }, t("filters.edit")),
        h("button.small", { type: "button", "aria-label": t("filters.upFor", { name }), disabled: i === 0 || pending > 0,
          onclick: () => move(-1) }, "↑"),
        h("button.small", { type: "button", "aria-label": t("filters.downFor", { name }), disabled: i === m.rules.length - 1 || pending > 0,
          onclick: () => move(1) }, "↓"),
        h("button.small", { type: "button", "aria-label": t("filters.deleteFor", { name }), disabled: pending > 0, onclick: () => {
          if (!confirm(t("filters.confirmDelete", { name }))) return;
          store((x) => { x.rules.splice(i, 1); });
        } }, t("filters.delete"))));
  });
  return [
    !filters.offers("vacation") ? null : vacation.section(m.vacation, draft, (v) => store((x) => { x.vacation = v; },
      () => { note = t(v.on ? "vacation.savedOn" : "vacation.savedOff"); draft.v = null; }), note),
    h("section", { "aria-labelledby": "rules-h" },
      h("h3", { id: "rules-h" }, t("filters.rules")),
      rules.length ? h("ol.rules", { "aria-labelledby": "rules-h" }, rules) : h("p.empty", {}, t("filters.noRules")),
      (m.before + m.rest).trim() ? h("p.hint", {}, t("filters.handWritten")) : null,
      h("div.actions", {},
        h("button.primary", { type: "button", onclick: () => { mode = "rule"; editing = { index: -1, rule: blankRule() }; problem = null; paint(); } },
          t("filters.new")),
        h("button", { type: "button", onclick: () => { mode = "raw"; raw = filters.state.script; problem = null; paint(); } },
          t("filters.sieve")))),
  ];
}

// -- the builder ------------------------------------------------------------------

// Every folder, as Sieve names it (the value) and as the tree shows it.
function folderOptions(selected) {
  const out = [];
  const walk = (parentId, depth) => {
    for (const m of sorted(parentId)) {
      const path = filters.folderPath(mail.mailboxes, m.id);
      out.push(h("option", { value: path, selected: path === selected }, "\u00a0\u00a0".repeat(depth) + folderName(m)));
      walk(m.id, depth + 1);
    }
  };
  walk(null, 0);
  if (selected && !out.some((o) => o.value === selected)) out.push(h("option", { value: selected, selected: true }, selected));
  if (!selected) out.unshift(h("option", { value: "", selected: true }, t("filters.pickFolder")));
  return out;
}

const select = (label, value, options, onchange, k) => h("label", {}, h("span", {}, label),
  h("select", { "data-k": k, onchange: (ev) => onchange(ev.target.value) },
    options.map(([v, text]) => h("option", { value: v, selected: v === value }, text))));
const input = (label, value, oninput, attrs = {}) => h("label", {}, h("span", {}, label),
  h("input", { value: value || "", ...attrs, oninput: (ev) => oninput(ev.target.value) }));

function condition(c, i, rule) {
  const n = i + 1;
  return h("div.cond", { role: "group", "aria-label": t("filters.condition", { n }) },
    select(t("filters.field"), c.field, FIELDS.map((f) => [f, t(`filters.field.${f}`)]), (v) => {
      c.field = v;
      if (!OPS[v].includes(c.op)) c.op = OPS[v][0];
      paint();
    }, `c${i}f`),
    c.field === "header" ? input(t("filters.headerName"), c.header, (v) => { c.header = v; }) : null,
    select(t("filters.test"), c.op, OPS[c.field].map((o) => [o, t(`filters.op.${o}`)]), (v) => { c.op = v; }),
    input(t("filters.value"), c.value, (v) => { c.value = v; }, c.field === "size" ? { placeholder: "100K" } : {}),
    rule.when.length > 1 ? h("button.small", { type: "button", "aria-label": t("filters.removeCondition", { n }),
      onclick: () => { rule.when.splice(i, 1); paint(); } }, "×") : null);
}

// The actions the server's Sieve takes (redirect, discard and stop are
// in every Sieve; the others are extensions).
const NEEDS = { move: ["fileinto"], copy: ["fileinto", "copy"], read: ["imap4flags"], flag: ["imap4flags"] };
const usable = (act) => (NEEDS[act] || []).every(filters.offers);

function action(a, i, rule) {
  const n = i + 1;
  return h("div.act", { role: "group", "aria-label": t("filters.action", { n }) },
    select(t("filters.do"), a.act, ACTIONS.filter((x) => x === a.act || usable(x)).map((x) => [x, t(`filters.act.${x}`)]), (v) => {
      a.act = v;
      if (v !== "move" && v !== "copy") delete a.folder; else a.folder = a.folder || "";
      if (v !== "forward") delete a.to; else a.to = a.to || "";
      paint();
    }, `a${i}a`),
    a.act === "move" || a.act === "copy" ? h("label", {}, h("span", {}, t("filters.folder")),
      h("select", { onchange: (ev) => { a.folder = ev.target.value; } }, folderOptions(a.folder))) : null,
    a.act === "forward" ? input(t("filters.forwardTo"), a.to, (v) => { a.to = v.trim(); }, { type: "email" }) : null,
    rule.then.length > 1 ? h("button.small", { type: "button", "aria-label": t("filters.removeAction", { n }),
      onclick: () => { rule.then.splice(i, 1); paint(); } }, "×") : null);
}

function builder() {
  const r = editing.rule;
  const save = async (ev) => {
    ev.preventDefault();
    const bad = check(r);
    if (bad) { problem = { text: t(bad) }; paint(); return; }
    const at = editing.index;
    await store((x) => { if (at < 0) x.rules.push(r); else x.rules[at] = r; }, () => { mode = "list"; editing = null; });
  };
  return [h("form.rule-form", { onsubmit: save },
    h("h3", {}, editing.index < 0 ? t("filters.new") : t("filters.editing")),
    input(t("filters.name"), r.name, (v) => { r.name = v; }, { maxlength: "100" }),
    h("label.check", {}, h("input", { type: "checkbox", checked: r.on, onchange: (ev) => { r.on = ev.target.checked; } }),
      h("span", {}, t("filters.on"))),
    select(t("filters.match"), r.all ? "all" : "any", [["all", t("filters.matchAll")], ["any", t("filters.matchAny")]],
      (v) => { r.all = v === "all"; }),
    h("fieldset", {}, h("legend", {}, t("filters.when")), r.when.map((c, i) => condition(c, i, r)),
      h("button.small", { type: "button", onclick: () => { r.when.push({ field: "from", op: "contains", value: "" }); paint(); } },
        t("filters.addCondition"))),
    h("fieldset", {}, h("legend", {}, t("filters.then")), r.then.map((a, i) => action(a, i, r)),
      h("button.small", { type: "button", onclick: () => { r.then.push({ act: "read" }); paint(); } }, t("filters.addAction"))),
    h("div.actions", {},
      h("button.primary", { type: "submit" }, t("filters.save")),
      h("button", { type: "button", onclick: () => { mode = "list"; editing = null; problem = null; paint(); } }, t("settings.cancel"))))];
}

// -- the script as Sieve ---------------------------------------------------------------

// Selects line n (from 1) of a textarea and scrolls it into view.
function pickLine(area, n) {
  if (!area) return;
  const lines = area.value.split("\n");
  const start = lines.slice(0, n - 1).reduce((s, l) => s + l.length + 1, 0);
  area.focus();
  area.setSelectionRange(start, start + (lines[n - 1] || "").length);
  const lh = parseFloat(getComputedStyle(area).lineHeight) || 18;
  area.scrollTop = Math.max(0, (n - 3) * lh);
}

function sieveEditor() {
  const area = h("textarea.sieve", { rows: "18", spellcheck: "false", autocomplete: "off", dir: "ltr",
    "aria-describedby": "sieve-hint", oninput: (ev) => { raw = ev.target.value; } });
  area.value = raw;
  const said = (bad) => { problem = bad ? { text: t("filters.refused", { reason: bad.message }), line: bad.line } : null; };
  let status = null;
  const checkIt = async () => {
    try { const bad = await filters.check(raw); said(bad); status = bad ? null : t("filters.checked"); } catch (e) {
      problem = { text: t("filters.failed", { reason: e.message }) };
    }
    paint();
    const el = status && body.querySelector(".sieve-status");
    if (el) el.textContent = status;
  };
  const saveIt = async () => {
    let bad;
    try { bad = await filters.saveScript(raw); } catch (e) { problem = { text: t("filters.failed", { reason: e.message }) }; paint(); return; }
    said(bad);
    if (!bad) { mode = "list"; raw = null; }
    paint();
  };
  return [h("h3", {}, t("filters.sieve")),
    h("p.hint", { id: "sieve-hint" }, t("filters.sieveHint")),
    h("label.sieve-label", {}, h("span", {}, t("filters.script")), area),
    h("p.sieve-status", { role: "status" }),
    h("div.actions", {},
      h("button", { type: "button", onclick: checkIt }, t("filters.check")),
      h("button.primary", { type: "button", onclick: saveIt }, t("filters.saveScript")),
      h("button", { type: "button", onclick: () => { mode = "list"; raw = null; problem = null; paint(); } }, t("filters.back")))];
}
