// views/notify.js: the settings' "Notifications on this device": a switch
// that acts at once (it is this device's, not one of the account's
// settings that Save stores) and a line under it saying what this device
// gets, from webpush.js's state.
import { t } from "../i18n.js";
import * as webpush from "../webpush.js";

let box = null;    // the checkbox
let line = null;   // the status line

export function mount(checkbox, status) {
  box = checkbox;
  line = status;
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

// The settings opened: as things are now, then as the browser says.
export function open() {
  paint();
  webpush.refresh().catch((e) => console.warn("notifications", e));
}
