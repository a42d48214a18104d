// views/menu.js: a context menu (role=menu) of a folder or a message row:
// opened by a right-click, a long press, the ContextMenu key or
// Shift+F10; arrows, Home/End, Enter and Esc; it closes on a pick, Esc, a
// click elsewhere or Tab, and gives the focus back. Items are
// {label, onSelect}; what they do is the app's.
import { h } from "../dom.js";

let open = null;   // {el, back}

export function close(focusBack = true) {
  if (!open) return;
  const { el, back } = open;
  open = null;
  el.remove();
  document.removeEventListener("pointerdown", outside, true);
  if (focusBack && back?.isConnected) back.focus({ preventScroll: true });
}
function outside(ev) { if (open && !open.el.contains(ev.target)) close(false); }

export const isOpen = () => !!open;

// Shows items at (x, y) in the viewport, for the element back (focused again on close).
export function show(items, { x, y, back, label }) {
  close(false);
  const el = h("div.ctxmenu", { role: "menu", "aria-label": label || null, tabindex: "-1" },
    items.map((it) => h("button", { type: "button", role: "menuitem", tabindex: "-1",
      onclick: () => { close(); it.onSelect(); } }, it.label)));
  el.style.left = `${Math.max(0, Math.min(x, innerWidth - 220))}px`;
  el.style.top = `${Math.max(0, Math.min(y, innerHeight - items.length * 36 - 8))}px`;
  document.body.append(el);
  const btns = [...el.querySelectorAll("[role=menuitem]")];
  const go = (i) => btns[(i + btns.length) % btns.length].focus();
  el.addEventListener("keydown", (ev) => {
    const i = btns.indexOf(document.activeElement);
    const keys = { ArrowDown: () => go(i + 1), ArrowUp: () => go(i - 1), Home: () => go(0), End: () => go(-1),
      Escape: () => close(), Tab: () => close() };
    if (keys[ev.key]) { ev.preventDefault(); ev.stopPropagation(); keys[ev.key](); }
  });
  open = { el, back };
  document.addEventListener("pointerdown", outside, true);
  go(0);
}

// Wires el's context menu: items() gives the items when it opens.
export function attach(el, items, label) {
  const at = (x, y) => show(items(), { x, y, back: el, label: label && label() });
  el.addEventListener("contextmenu", (ev) => { ev.preventDefault(); at(ev.clientX, ev.clientY); });
  el.addEventListener("keydown", (ev) => {
    if (ev.key === "ContextMenu" || (ev.key === "F10" && ev.shiftKey)) {
      ev.preventDefault();
      const r = el.getBoundingClientRect();
      at(r.left + 16, r.bottom);
    }
  });
}
