// views/notify.js: the settings' "Notifications on this device": a switch
// that acts at once (it is this device's, not one of the account's
// settings that Save stores) and a line under it saying what this device
// gets, from webpush.js's state; under them the folders whose new mail
// notifies ("Notify me about new mail in"), an account setting
// (notifyFolders) that Save stores with the others.
import { h } from "../dom.js";
import { t } from "../i18n.js";
import * as webpush from "../webpush.js";
import * as settings from "../settings.js";
import { roleBox } from "../store.js";
import { toldIn, folderSetting } from "../newmail.js";
import { folderName, sorted } from "./folders.js";

let box = null;    // the checkbox
let line = null;   // the status line
let list = null;   // the folders' fieldset
let shown = false; // the folders' checkboxes were drawn from the account's folders

export function mount(checkbox, status, folders) {
  box = checkbox;
  line = status;
  list = folders;
  box.addEventListener("change", () => { webpush.turn(box.checked).catch((e) => console.warn("notifications", e)); });
  webpush.onChange(paint);
}

export function paint() {
  if (!box) return;
  const s = webpush.state;
  box.checked = s.on;
  box.disabled = !s.notifications;
  const st = webpush.status(s);
  line.hidden = !st;
  line.textContent = st ? t(st.key, st.vars) : "";
}

// The folders as the tree orders them, each a checkbox named by the
// folder; ticked: the setting's (null, the Inbox).
function paintFolders() {
  const told = toldIn(settings.get("notifyFolders"), roleBox("inbox")?.id);
  const out = [];
  const walk = (parentId, depth) => {
    for (const m of sorted(parentId)) {
      const label = h("label.check", {}, h("input", { type: "checkbox", name: "notifyFolder", value: m.id, checked: told.has(m.id) }),
        " ", h("span", {}, folderName(m)));
      label.style.setProperty("--depth", depth);
      out.push(label);
      walk(m.id, depth + 1);
    }
  };
  walk(null, 0);
  shown = out.length > 0;
  list.querySelector(".folders").replaceChildren(...out);
}

// The settings opened: as things are now, then as the browser says.
export function open() {
  paint();
  if (list) paintFolders();
  webpush.refresh().catch((e) => console.warn("notifications", e));
}

// What Save stores: {notifyFolders} as ticked, or {} while no folder was
// shown (the folders not loaded yet: the stored choice stays).
export function read() {
  if (!list || !shown) return {};
  const ids = [...list.querySelectorAll("input[name=notifyFolder]")].filter((c) => c.checked).map((c) => c.value);
  return { notifyFolders: folderSetting(ids, roleBox("inbox")?.id) };
}
