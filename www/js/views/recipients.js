// views/recipients.js: To, Cc and Bcc as addresses, not text. What is
// typed or pasted becomes a chip per address once a comma, semicolon,
// Enter or Tab ends it (or the field is left); a chip is removed with its
// ✕ and edited by clicking it (or Backspace in the empty field); an
// invalid address is marked on its chip. While typing, a listbox of
// suggestions: arrow keys, Enter or Tab to take one, Esc to close.
import { h } from "../dom.js";
import { t } from "../i18n.js";
import { parseList, splitTyped, format, dedupe } from "../addr.js";

let seq = 0;

// opts: {name, label, value: [{name, email}], suggest(text, exclude) →
// [{name, email}], exclude() → folded addresses to leave out, onChange()}.
export function field({ name, label, value = [], suggest = () => [], exclude = () => new Set(), onChange = () => {} }) {
  const id = `rcpt-${name}-${++seq}`;
  let list = dedupe(value.map((a) => ({ name: a.name || null, email: a.email, valid: true })));
  const refused = new Set();
  let options = [];
  let active = -1;
  const chips = h("ul.chips", { "aria-label": t("compose.recipientsOf", { field: label }) });
  const input = h("input", { id, name, type: "text", autocomplete: "off", spellcheck: "false", role: "combobox",
    "aria-autocomplete": "list", "aria-expanded": "false", "aria-controls": `${id}-list` });
  const box = h("ul.suggestions", { id: `${id}-list`, role: "listbox", "aria-label": t("compose.suggestions"), hidden: true });
  const el = h("div.field.recipients", { "data-field": name }, h("label", { for: id }, label),
    h("div.chipbox", { onclick: (ev) => { if (ev.target === ev.currentTarget) input.focus(); } }, chips, input, box));

  const bad = (a) => !a.valid || refused.has(a.email.toLowerCase());
  function paint() {
    chips.replaceChildren(...list.map((a, i) => {
      const text = format(a);
      const why = !a.valid ? t("compose.invalidAddress") : refused.has(a.email.toLowerCase()) ? t("compose.refusedAddress") : "";
      return h(`li.chip${why ? ".invalid" : ""}`, {},
        h("button.chip-edit", { type: "button", title: text, "aria-label": why ? `${text}, ${why}` : text,
          onclick: () => edit(i) }, why ? "⚠ " : null, a.name || a.email),
        h("button.chip-remove", { type: "button", "aria-label": t("compose.removeRecipient", { address: text }),
          onclick: () => { list.splice(i, 1); paint(); onChange(); input.focus(); } }, "✕"));
    }));
  }

  function add(found) {
    if (!found.length) return;
    const seen = new Set(list.map((a) => a.email.toLowerCase()));
    for (const a of found) if (!seen.has(a.email.toLowerCase())) { list.push(a); seen.add(a.email.toLowerCase()); }
    paint();
    onChange();
  }

  // An address back into the field, to be corrected.
  function edit(i) {
    commit();
    const [a] = list.splice(i, 1);
    paint();
    input.value = format(a);
    input.focus();
    input.select();
    onChange();
  }

  // Everything typed becomes chips (on leaving the field, on send).
  function commit() {
    const text = input.value;
    if (!text.trim()) { input.value = ""; return; }
    input.value = "";
    add(parseList(text));
    close();
  }

  function close() {
    options = [];
    active = -1;
    box.hidden = true;
    box.replaceChildren();
    input.setAttribute("aria-expanded", "false");
    input.removeAttribute("aria-activedescendant");
  }

  function show() {
    const text = input.value.trim();
    const ex = exclude();
    for (const a of list) ex.add(a.email.toLowerCase());
    options = text ? suggest(text, ex) : [];
    active = options.length ? 0 : -1;
    if (!options.length) { close(); return; }
    box.replaceChildren(...options.map((c, i) => h("li.option", { id: `${id}-o${i}`, role: "option", "aria-selected": String(i === active),
      onmousedown: (ev) => ev.preventDefault(), onclick: () => take(i) },
    // The space keeps name and address apart in the option's name.
    c.name ? h("span.name", {}, c.name) : null, c.name ? " " : null, h("span.email", {}, c.email))));
    box.hidden = false;
    input.setAttribute("aria-expanded", "true");
    mark();
  }

  function mark() {
    [...box.children].forEach((li, i) => li.setAttribute("aria-selected", String(i === active)));
    if (active >= 0) input.setAttribute("aria-activedescendant", `${id}-o${active}`);
    box.children[active]?.scrollIntoView?.({ block: "nearest" });
  }

  function take(i) {
    const c = options[i];
    input.value = "";
    close();
    add([{ name: c.name || null, email: c.email, valid: true }]);
    input.focus();
  }

  input.addEventListener("input", () => {
    const { done, rest } = splitTyped(input.value);
    if (done.length) { input.value = rest; add(done); }
    show();
  });
  input.addEventListener("keydown", (ev) => {
    const open = !box.hidden && options.length;
    if (open && (ev.key === "ArrowDown" || ev.key === "ArrowUp")) {
      ev.preventDefault();
      active = (active + (ev.key === "ArrowDown" ? 1 : -1) + options.length) % options.length;
      mark();
    } else if (open && (ev.key === "Enter" || ev.key === "Tab") && active >= 0) {
      ev.preventDefault();
      take(active);
    } else if (ev.key === "Enter") {
      // Ctrl/⌘+Enter goes on to the composer, which sends.
      if (!ev.ctrlKey && !ev.metaKey) ev.preventDefault();
      commit();
    } else if (ev.key === "Escape" && open) {
      ev.preventDefault();
      ev.stopPropagation();
      close();
    } else if (ev.key === "Backspace" && !input.value && list.length) {
      ev.preventDefault();
      edit(list.length - 1);
    }
  });
  input.addEventListener("blur", () => { commit(); });
  paint();

  return {
    el, input,
    // The addresses, what is still typed made into chips first.
    value() { commit(); return list.map(({ name: n, email }) => ({ name: n, email })); },
    // The same without touching the field (for saving a draft while the
    // user types).
    peek() { return [...list, ...parseList(input.value)].map(({ name: n, email }) => ({ name: n, email })); },
    invalid() { commit(); return list.filter(bad).map((a) => a.email); },
    // Addresses the server refused, marked until they change.
    refuse(emails) { for (const e of emails) refused.add(e.toLowerCase()); paint(); },
    focus() { input.focus(); },
  };
}
