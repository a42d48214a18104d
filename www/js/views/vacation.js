// views/vacation.js: the vacation reply's form (in the filter screen) and
// the banner over the mail while it answers. The reply is the Sieve
// vacation extension in the user's one script (sieve.js writes it).
import { h } from "../dom.js";
import { t, dayDate } from "../i18n.js";
import { blankVacation, checkVacation } from "../sieve.js";
import { vacationActive, day } from "../filters.js";

// The form for v (null: none yet). draft.v holds what was typed and not
// stored, so a repaint (a rule toggled meanwhile, a language change)
// keeps it; onSave(vacation) stores one the model accepts; note: what
// the last save said, announced once the new form is in place (a live
// region filled as it is made is not read out).
export function section(v, draft, onSave, note) {
  const x = { ...blankVacation(), ...(v || {}), ...(draft.v || {}) };
  const field = (label, name, attrs = {}) => h("label", {}, h("span", {}, label),
    h("input", { name, value: x[name] == null ? "" : String(x[name]), ...attrs }));
  const values = (f) => ({ on: f.on.checked, from: f.from.value, until: f.until.value, subject: f.subject.value.trim(),
    text: f.text.value, addresses: f.addresses.value.split(/[\s,;]+/).filter(Boolean), days: Number(f.days.value) });
  const error = h("p.error", { role: "alert", hidden: true });
  const form = h("form.vacation", { "aria-labelledby": "vacation-h", novalidate: true,
    oninput: (ev) => { draft.v = values(ev.currentTarget.elements); },
    onchange: (ev) => { draft.v = values(ev.currentTarget.elements); },
    onsubmit: async (ev) => {
      ev.preventDefault();
      const out = values(ev.target.elements);
      const bad = out.on ? checkVacation(out) : null;
      error.hidden = !bad;
      error.textContent = bad ? t(bad) : "";
      if (!bad) await onSave(out);
    } },
  h("h3", { id: "vacation-h" }, t("vacation.title")),
  h("label.check", {}, h("input", { type: "checkbox", name: "on", checked: x.on }), h("span", {}, t("vacation.on"))),
  h("div.dates", {}, field(t("vacation.from"), "from", { type: "date" }), field(t("vacation.until"), "until", { type: "date" })),
  field(t("vacation.subject"), "subject", { maxlength: "200" }),
  h("label", {}, h("span", {}, t("vacation.text")), h("textarea", { name: "text", rows: "5", dir: "auto" }, x.text)),
  field(t("vacation.addresses"), "addresses", { value: (x.addresses || []).join(", "), autocomplete: "off" }),
  field(t("vacation.days"), "days", { type: "number", min: "1", max: "365", step: "1" }),
  error,
  h("p.vacation-status", { role: "status" }),
  h("div.actions", {}, h("button.primary", { type: "submit" }, t("vacation.save"))));
  if (note) setTimeout(() => { form.querySelector(".vacation-status").textContent = note; }, 50);
  return form;
}

// A last day as the user's locale writes it (as stored if it is no date).
function until(d) {
  try { return dayDate(d); } catch { return d; }
}

// The banner (el, hidden unless v answers today): what it says and two
// buttons, to change it or to turn it off.
export function banner(el, v, { onEdit, onOff }) {
  const on = vacationActive(v, day());
  el.hidden = !on;
  if (!on) { el.replaceChildren(); return; }
  el.replaceChildren(
    h("span", {}, v.until ? t("vacation.bannerUntil", { date: until(v.until) }) : t("vacation.banner")),
    h("button.small", { type: "button", onclick: onEdit }, t("vacation.change")),
    h("button.small", { type: "button", onclick: onOff }, t("vacation.turnOff")));
}
