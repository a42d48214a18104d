// views/moveto.js: "Move to…" (a button, or the v key): a dialog with a
// filter over the folder names; arrows move through the folders left,
// Enter or a click picks one. It renders the folders and hands the pick
// to the app (onPick); nothing here writes.
import { h } from "../dom.js";
import { t } from "../i18n.js";
import { state } from "../store.js";
import { folderName } from "./folders.js";

let dlg = null;

// The folders whose name (or path) holds text, without case or accents.
const fold = (s) => s.normalize("NFD").replace(/[\u0300-\u036f]/g, "").toLowerCase();
function pathOf(m) {
  const names = [];
  for (let x = m, n = 0; x && n < 20; x = state.mailboxes.get(x.parentId), n++) names.unshift(folderName(x));
  return names.join(" / ");
}

export const isOpen = () => !!dlg?.open;

export function open({ current, onPick }) {
  if (!dlg) { dlg = h("dialog.small", { id: "move-dialog", "aria-labelledby": "move-h" }); document.body.append(dlg); }
  const boxes = [...state.mailboxes.values()].filter((m) => m.id !== current && m.myRights?.mayAddItems !== false)
    .map((m) => ({ id: m.id, name: pathOf(m) })).sort((a, b) => a.name.localeCompare(b.name));
  const input = h("input", { type: "search", autocomplete: "off", "aria-label": t("move.filter"), placeholder: t("move.filter") });
  const ul = h("ul.move-list", { role: "listbox", "aria-label": t("nav.folders") });
  let shown = [], at = 0;
  const pick = (id) => { dlg.close(); onPick(id); };
  const paint = () => {
    const q = fold(input.value.trim());
    shown = boxes.filter((b) => fold(b.name).includes(q));
    at = Math.min(at, Math.max(0, shown.length - 1));
    ul.replaceChildren(...shown.map((b, i) => h("li", { role: "option", id: `move-${i}`, "aria-selected": i === at ? "true" : "false",
      class: i === at ? "on" : null, onclick: () => pick(b.id) }, b.name)));
    if (shown.length) input.setAttribute("aria-activedescendant", `move-${at}`); else input.removeAttribute("aria-activedescendant");
  };
  input.addEventListener("input", () => { at = 0; paint(); });
  input.addEventListener("keydown", (ev) => {
    if (ev.key === "ArrowDown" || ev.key === "ArrowUp") { ev.preventDefault(); at = Math.max(0, Math.min(shown.length - 1, at + (ev.key === "ArrowDown" ? 1 : -1))); paint(); }
    else if (ev.key === "Enter") { ev.preventDefault(); if (shown[at]) pick(shown[at].id); }
  });
  dlg.replaceChildren(h("form", { method: "dialog" },
    h("h2", { id: "move-h" }, t("move.title")), input, ul,
    h("div.actions", {}, h("button", { type: "submit", value: "cancel" }, t("settings.cancel")))));
  paint();
  dlg.showModal();
  input.focus();
}
