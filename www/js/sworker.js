// sworker.js: the page's side of the service worker (sw.js). Registers it
// (a module, at the app's root), offers a new release's reload and never
// reloads by itself, tells the worker the language for its notifications,
// takes a notification's click (the place to open), and sets the app's
// badge where the browser has one.

let reg = null;
let settle;
const registered = new Promise((res) => { settle = res; });
let reloading = false;     // the user asked for the new release

export const supported = () => "serviceWorker" in navigator;

// The registration, or null where there is none (no support, refused).
export const registration = () => (supported() ? registered : Promise.resolve(null));

// onUpdate(): a new release waits; onOpen(hash): a notification's click.
export async function start({ onUpdate, onOpen }) {
  if (!supported()) return;
  const sw = navigator.serviceWorker;
  let controlled = !!sw.controller;
  sw.addEventListener("message", (e) => { if (e.data?.type === "open" && typeof e.data.hash === "string") onOpen(e.data.hash); });
  sw.startMessages();
  // The first worker taking the page over is no new release; another one
  // is (the Reload of another tab): this page then runs the old one's code.
  sw.addEventListener("controllerchange", () => {
    if (reloading) location.reload();
    else if (controlled) onUpdate();
    controlled = true;
  });
  try {
    reg = await sw.register("sw.js", { type: "module", updateViaCache: "none" });
  } catch (e) {
    console.warn("service worker", e);
    settle(null);
    return;
  }
  settle(reg);
  const waiting = () => { if (reg.waiting && sw.controller) onUpdate(); };
  reg.addEventListener("updatefound", () => {
    const w = reg.installing;
    w?.addEventListener("statechange", () => { if (w.state === "installed") waiting(); });
  });
  waiting();
  // A tab left open for days still learns of a release (the browser
  // looks on navigations only).
  setInterval(() => reg.update().catch(() => {}), 3600 * 1000);
}

// The user's Reload: the waiting release takes over, then this page reloads.
export function reload() {
  reloading = true;
  if (reg?.waiting) reg.waiting.postMessage({ type: "skip-waiting" });
  else location.reload();
}

// What the worker needs to know of the page's choices (its language).
export function tell(lang) {
  registration().then((r) => r && navigator.serviceWorker.ready)
    .then((r) => r?.active?.postMessage({ type: "prefs", lang })).catch(() => {});
}

// The Inbox's unread count on the installed app's icon.
let shown = null;
export function badge(n) {
  if (!("setAppBadge" in navigator) || n === shown) return;
  shown = n;
  (n > 0 ? navigator.setAppBadge(n) : navigator.clearAppBadge()).catch(() => {});
}
