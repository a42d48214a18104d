// views/folders.js: the folder tree with roles, nesting and unread counts;
// a drop target for dragged messages.
import { h } from "../dom.js";
import { t, number } from "../i18n.js";
import { state } from "../store.js";
import * as menu from "./menu.js";

const ROLE_ORDER = ["inbox", "drafts", "sent", "archive", "junk", "trash"];

export function folderName(m) {
  return m.role && ROLE_ORDER.includes(m.role) ? t(`folder.${m.role}`) : m.name;
}

// A folder's children as the tree shows them (the filters' folder list too).
export function sorted(parentId) {
  return [...state.mailboxes.values()].filter((m) => (m.parentId || null) === parentId)
    .sort((a, b) => ((ROLE_ORDER.indexOf(a.role) + 1 || 99) - (ROLE_ORDER.indexOf(b.role) + 1 || 99))
      || (a.sortOrder || 0) - (b.sortOrder || 0) || a.name.localeCompare(b.name));
}

// onMenu(id): the items of a folder's context menu (menu.js).
export function render(root, { onOpen, onDrop, onMenu }) {
  const build = (parentId, depth) => {
    const items = [];
    for (const m of sorted(parentId)) {
      const unread = m.unreadEmails || 0;
      const btn = h("button.folder", { type: "button", "data-id": m.id, "data-role": m.role || "",
        "aria-current": m.id === state.current && !state.filter ? "page" : null,
        onclick: () => onOpen(m.id) },
      h("span.name", {}, folderName(m)),
      // The name is what it shows ("Inbox 3 unread"), as the visible
      // text must be part of it.
      unread ? h("span.count", {}, number(unread), h("span.sr-only", {}, ` ${t("folder.unread", { n: unread })}`)) : null);
      btn.style.setProperty("--depth", depth);
      if (onMenu) menu.attach(btn, () => onMenu(m.id), () => folderName(m));
      btn.addEventListener("dragover", (ev) => { ev.preventDefault(); btn.classList.add("drop"); });
      btn.addEventListener("dragleave", () => btn.classList.remove("drop"));
      btn.addEventListener("drop", (ev) => { ev.preventDefault(); btn.classList.remove("drop"); onDrop(m.id); });
      items.push(h("li", {}, btn));
      const kids = build(m.id, depth + 1);
      if (kids.length) items.push(h("li", {}, h("ul", { role: "group" }, kids)));
    }
    return items;
  };
  root.replaceChildren(h("ul", {}, build(null, 0)));
}
