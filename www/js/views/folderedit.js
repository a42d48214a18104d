// views/folderedit.js: create, rename and delete folders (Mailbox/set). Role
// folders are never deleted or renamed from here; a delete is confirmed
// first; the server's refusals are shown in words.
import { $, h } from "../dom.js";
import { t } from "../i18n.js";
import * as store from "../store.js";
import { folderName } from "./folders.js";

const { state } = store;
let toast = () => {};
export function configure(opts) { toast = opts.toast || toast; }

// The server's refusal as a sentence.
export function errorText(e) {
  const key = `folders.err.${e.type}`;
  const s = t(key);
  if (s !== key) return s;
  return t("folders.err.other", { reason: e.description || e.type || e.message });
}

// Folders in tree order with their depth, for the parent choice.
function tree(parentId = null, depth = 0, out = []) {
  const kids = [...state.mailboxes.values()].filter((m) => (m.parentId || null) === parentId)
    .sort((a, b) => folderName(a).localeCompare(folderName(b)));
  for (const m of kids) { out.push([m, depth]); tree(m.id, depth + 1, out); }
  return out;
}

// Opens the dialog; run(name, parent) does the work and may throw.
function dialog(title, { name = "", parent = null, withParent = false }, run) {
  const dlg = $("#folder-dialog");
  const form = $("#folder-form");
  const err = $("#folder-error");
  $("#folder-dialog-h").textContent = title;
  form.elements.name.value = name;
  $("#folder-parent-field").hidden = !withParent;
  form.elements.parent.replaceChildren(h("option", { value: "" }, t("folders.top")),
    ...tree().map(([m, d]) => h("option", { value: m.id }, `${"\u00a0\u00a0".repeat(d)}${folderName(m)}`)));
  form.elements.parent.value = parent || "";
  err.hidden = true;
  form.onsubmit = async (ev) => {
    if (ev.submitter?.value === "cancel") return;
    ev.preventDefault();
    const n = form.elements.name.value.trim();
    if (!n || /[/\\]/.test(n)) { err.textContent = t("folders.badName"); err.hidden = false; return; }
    const ok = $("#folder-ok");
    ok.disabled = true;
    try {
      await run(n, form.elements.parent.value || null);
      dlg.close();
    } catch (e) {
      err.textContent = errorText(e);
      err.hidden = false;
    } finally { ok.disabled = false; }
  };
  dlg.showModal();
  form.elements.name.select();
}

export function create() {
  const cur = state.mailboxes.get(state.current);
  dialog(t("folders.new"), { withParent: true, parent: cur && !cur.role ? cur.id : null }, async (name, parent) => {
    await store.createMailbox(name, parent);
    toast(t("folders.created", { name }));
  });
}

export function rename() {
  const m = state.mailboxes.get(state.current);
  if (!m) return;
  if (m.role) { toast(t("folders.err.role")); return; }
  dialog(t("folders.renameTitle", { name: m.name }), { name: m.name }, async (name) => {
    await store.renameMailbox(m.id, name);
    toast(t("folders.renamed", { name }));
  });
}

// Returns true when the folder is gone (the caller opens another).
export async function remove() {
  const m = state.mailboxes.get(state.current);
  if (!m) return false;
  if (m.role) { toast(t("folders.err.role")); return false; }
  if (!confirm(t("folders.confirmDelete", { name: m.name }))) return false;
  try {
    await store.destroyMailbox(m.id);
    toast(t("folders.deleted", { name: m.name }));
    return true;
  } catch (e) {
    toast(errorText(e));
    return false;
  }
}

// Rename and delete only make sense for the user's own folders.
export function paintTools() {
  const m = state.mailboxes.get(state.current);
  const own = !!m && !m.role && !state.filter;
  $("#folder-rename").disabled = !own;
  $("#folder-delete").disabled = !own;
}
