// views/toolbar.js: a toolbar that never wraps or scrolls sideways. Each
// button gets an icon beside its label; the buttons that find no room
// fold, in order from the end, into a "More" menu (fit.js decides how
// many stay). It follows the bar's width and any change of its buttons
// (a language, a button shown or hidden).
import { h } from "../dom.js";
import { t } from "../i18n.js";
import { icon } from "../icons.js";
import { fitCount } from "../fit.js";

// The icon of a shell button, by what it does.
const ICON = { reply: "reply", replyAll: "replyAll", forward: "forward", archive: "archive", trash: "trash", junk: "junk",
  read: "read", unread: "unread", flag: "flag", threads: "threads", back: "back", "empty-trash": "trash",
  "folder-new": "folderNew", "folder-rename": "rename", "folder-delete": "trash", "folder-read": "read",
  move: "move", notjunk: "notjunk", "select-loaded": "selectAll" };

// A button's label in a span (translate() then leaves the icon alone).
export function decorate(b, name) {
  name = name || ICON[b.dataset.act || b.dataset.compose || b.id];
  if (!name || b.querySelector(".icon")) return;
  if (b.dataset.i18n) {
    const label = h("span.label", { "data-i18n": b.dataset.i18n }, b.textContent);
    delete b.dataset.i18n;
    b.replaceChildren(label);
  } else if (!b.querySelector(".label")) b.replaceChildren(h("span.label", {}, b.textContent));
  b.prepend(icon(name));
}

// A "More" button and its menu of the given buttons (proxies: choosing
// one clicks the real button). Also used by the reader's messages.
export function moreMenu(items, label = t("action.more")) {
  const menu = h("ul.menu", { role: "menu", hidden: true });
  const btn = h("button.more", { type: "button", "aria-haspopup": "menu", "aria-expanded": "false" }, icon("more"), h("span.label", {}, label));
  const close = (focus) => { menu.hidden = true; btn.setAttribute("aria-expanded", "false"); if (focus) btn.focus(); };
  const open = () => {
    const list = items();
    menu.replaceChildren(...list.map((it) => h("li", { role: "menuitem", tabindex: "-1",
      onclick: () => { close(true); it.run(); },
      onkeydown: (ev) => { if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); ev.stopPropagation(); close(true); it.run(); } } },
    it.icon ? icon(it.icon) : null, h("span", {}, it.label))));
    menu.hidden = false;
    btn.setAttribute("aria-expanded", "true");
    // The menu opens to the side with room.
    const r = btn.getBoundingClientRect();
    menu.classList.toggle("left", r.left < innerWidth / 2);
    menu.querySelector("li")?.focus();
  };
  btn.addEventListener("click", (ev) => { ev.stopPropagation(); if (menu.hidden) open(); else close(); });
  menu.addEventListener("keydown", (ev) => {
    const lis = [...menu.children];
    const i = lis.indexOf(document.activeElement);
    if (ev.key === "Escape") { ev.preventDefault(); ev.stopPropagation(); close(true); }
    else if (ev.key === "ArrowDown") { ev.preventDefault(); lis[(i + 1) % lis.length].focus(); }
    else if (ev.key === "ArrowUp") { ev.preventDefault(); lis[(i - 1 + lis.length) % lis.length].focus(); }
    else if (ev.key === "Tab") close();
  });
  // A click elsewhere closes it; the listener goes with the menu (the
  // reader paints new ones with each repaint).
  const outside = (ev) => {
    if (!btn.isConnected) document.removeEventListener("click", outside);
    else if (!menu.hidden && !menu.contains(ev.target)) close();
  };
  document.addEventListener("click", outside);
  return { button: btn, menu, wrap: h("span.more-wrap", {}, btn, menu) };
}

const foldable = (bar) => [...bar.children].filter((b) => b.tagName === "BUTTON" && !b.hidden);

// Makes bar fold its buttons into "More" when they do not fit.
export function fold(bar) {
  for (const b of bar.querySelectorAll(":scope > button")) { if (b.title) b.dataset.tip = "own"; decorate(b); }
  const more = moreMenu(() => foldable(bar).filter((b) => b.classList.contains("folded")).map((b) => ({
    label: b.querySelector(".label")?.textContent || b.textContent, icon: null, run: () => b.click() })));
  more.button.querySelector(".label").dataset.i18n = "action.more";
  bar.append(more.wrap);
  // Three steps, each only when the one before does not fit: icons with
  // their labels; icons alone (the label stays the button's name and
  // becomes its tooltip); icons alone with the last ones in "More".
  const layout = () => {
    const items = foldable(bar);
    for (const b of items) b.classList.remove("folded");
    more.wrap.hidden = false;
    const cs = getComputedStyle(bar);
    const gap = parseFloat(cs.columnGap) || 0;
    const others = [...bar.children].filter((c) => c !== more.wrap && !items.includes(c) && c.offsetWidth > 0 &&
      getComputedStyle(c).flexBasis !== "100%");
    const avail = bar.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight) -
      others.reduce((s, c) => s + c.offsetWidth + gap, 0) - 1;
    let n;
    for (const compact of [false, true]) {
      bar.classList.toggle("compact", compact);
      const shown = items.filter((b) => b.offsetWidth > 0);
      for (const b of shown) {
        const label = b.querySelector(".icon") && b.querySelector(".label")?.textContent;
        if (compact && label) b.title = label; else if (b.dataset.tip !== "own") b.removeAttribute("title");
      }
      n = fitCount(shown.map((b) => b.offsetWidth), avail, more.wrap.offsetWidth + gap, gap);
      if (n >= shown.length || compact) {
        shown.forEach((b, i) => b.classList.toggle("folded", i >= n));
        more.wrap.hidden = n >= shown.length;
        return;
      }
    }
  };
  new ResizeObserver(() => requestAnimationFrame(layout)).observe(bar);
  new MutationObserver((recs) => { if (recs.some((r) => !more.wrap.contains(r.target))) requestAnimationFrame(layout); }).observe(bar, { subtree: true, childList: true, characterData: true,
    attributes: true, attributeFilter: ["hidden"] });
  return layout;
}
