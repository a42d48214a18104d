// alerts.js: new mail outside the page: desktop notifications (a choice
// kept per browser, since the permission it needs is the browser's) and
// the unread count drawn on the favicon. What to say comes from newmail.js.
import { badge } from "./newmail.js";

const KEY = "postern.notify";
export const supported = () => "Notification" in self;
export const enabled = () => supported() && Notification.permission === "granted" && localStorage.getItem(KEY) === "1";

// The browser's permission, asked for only now (from the user's click on
// the setting, never on load): true when allowed.
export async function ask() {
  if (!supported()) return false;
  return (Notification.permission === "granted" ? "granted" : await Notification.requestPermission()) === "granted";
}
// The choice, stored when the settings are saved.
export function turn(on) {
  if (on && supported() && Notification.permission === "granted") localStorage.setItem(KEY, "1");
  else localStorage.removeItem(KEY);
}

// Shows each notice; a click brings this tab forward and opens the mail.
export function show(list, onOpen) {
  for (const n of list) {
    const note = new Notification(n.title, { body: n.body, tag: n.tag, icon: icon(0) });
    note.onclick = () => { self.focus(); note.close(); onOpen(n.email); };
  }
}

// The favicon: postern's envelope, with the unread count on a red disc.
// A PNG data URL: the CSP's img-src allows data:, and nothing is fetched.
let drawn = null;
export function favicon(n) {
  const text = badge(n);
  if (text === drawn) return;
  drawn = text;
  const link = document.querySelector("link[rel=icon]");
  if (link) link.href = icon(text);
}

function icon(text) {
  const c = document.createElement("canvas");
  c.width = c.height = 32;
  const g = c.getContext("2d");
  if (!g) return "data:,";
  g.fillStyle = "#1a5fb4";
  g.fillRect(2, 7, 28, 19);
  g.strokeStyle = "#fff";
  g.lineWidth = 2;
  g.beginPath();
  g.moveTo(3, 8); g.lineTo(16, 18); g.lineTo(29, 8);
  g.stroke();
  if (text) {
    g.fillStyle = "#c01c28";
    g.beginPath();
    g.arc(22, 11, text.length > 2 ? 10 : 9, 0, 2 * Math.PI);
    g.fill();
    g.fillStyle = "#fff";
    g.font = `bold ${text.length > 1 ? 11 : 14}px sans-serif`;
    g.textAlign = "center";
    g.textBaseline = "middle";
    g.fillText(text, 22, 12);
  }
  return c.toDataURL("image/png");
}
