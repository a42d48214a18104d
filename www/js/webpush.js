// webpush.js: "Notifications on this device". The browser's permission
// and the tab's own notifications are alerts.js's; this adds new mail
// with every tab closed: a subscription at the browser's push service
// (pushManager, with the server's VAPID key from /api/config) handed to
// postern (PUT /api/webpush: one per session), for pushd to send to.
// State and intents here, the setting's view in views/notify.js; status()
// is pure.
import * as api from "./api.js";
import * as alerts from "./alerts.js";
import { registration } from "./sworker.js";
import { keyBytes, sameKey } from "./swlogic.js";

const PATH = "/api/webpush";
// features: /api/config's; on: the device's choice (alerts.js keeps it);
// subscribed: postern holds this browser's subscription; error: {key, vars}.
export const state = { features: {}, notifications: false, permission: "default", pushSupported: false,
  on: false, subscribed: false, error: null };
const listeners = new Set();
export function onChange(fn) { listeners.add(fn); }
const emit = () => { for (const fn of listeners) fn(state); };

// What the setting says under its switch ({key, vars} of the catalogues),
// or null when there is nothing to add to it being on or off.
export function status(s) {
  if (!s.notifications) return { key: "settings.notifyNone" };
  if (s.permission === "denied") return { key: "settings.notifyBlocked" };
  if (s.features?.push === false) return { key: "settings.notifyNoPushd" };
  if (!s.features?.webpush?.key) return { key: "settings.notifyOperatorOff" };
  if (!s.pushSupported) return { key: "settings.notifyUnsupported" };
  if (s.error) return s.error;
  return s.on && s.subscribed ? { key: "settings.notifyPush" } : null;
}

// Whether Web Push can be asked for here (server, operator and browser).
const offered = (s) => s.features?.push !== false && !!keyBytes(s.features?.webpush?.key) && s.pushSupported;

export function configure(features) {
  state.features = features || {};
  look();
}

// What the browser says now, without asking it anything.
function look() {
  state.notifications = alerts.supported();
  state.permission = state.notifications ? Notification.permission : "denied";
  state.on = alerts.enabled();
  if (!state.pushSupported) state.pushSupported = "PushManager" in self && "serviceWorker" in navigator;
}

// The worker's push manager once a worker is active (subscribe needs one).
async function pushManager() {
  const reg = await registration();
  if (!reg?.pushManager) return null;
  await navigator.serviceWorker.ready;
  return reg.pushManager;
}

// Brings this device in line with its choice (after sign-in, when the
// settings open): subscribed and known to postern when on, else not
// (told: postern is told to drop it too, as when the user turns it off).
export async function refresh(told = false) {
  look();
  const pm = await pushManager();
  state.pushSupported = !!pm;
  if (offered(state) && state.on) await ensure(pm);
  else if (pm) await drop(pm, told);
  emit();
}

// The user's switch: on asks the browser's permission now (never on load).
export async function turn(on) {
  state.error = null;
  state.on = on;
  emit();
  if (on && !(await alerts.ask())) on = false;
  alerts.turn(on);
  await refresh(true);
}

// This session's subscription (a new one where the key changed), handed
// to postern unless it holds it already.
async function ensure(pm) {
  const key = keyBytes(state.features.webpush.key);
  try {
    let sub = await pm.getSubscription();
    if (sub && !sameKey(sub.options?.applicationServerKey, key)) { await sub.unsubscribe(); sub = null; }
    if (!sub) sub = await pm.subscribe({ userVisibleOnly: true, applicationServerKey: key });
    const held = await api.get(PATH).catch(() => null);
    if (held?.endpoint !== sub.endpoint) await api.request("PUT", PATH, sub.toJSON());
    state.subscribed = true;
    state.error = null;
  } catch (e) {
    state.subscribed = false;
    state.error = e.code === "webpush_endpoint" ? { key: "settings.notifyRefused" }
      : { key: "settings.notifyFailed", vars: { reason: e.message } };
  }
}

// No subscription: postern's removed (tell: DELETE, when there is a
// session to say it in) and the browser's.
async function drop(pm, tell = true) {
  const sub = await pm.getSubscription().catch(() => null);
  if (tell && (sub || state.subscribed)) await api.request("DELETE", PATH).catch(() => {});
  if (sub) await sub.unsubscribe().catch(() => {});
  state.subscribed = false;
}

// Signing out: the device's subscription goes, before the session does.
export async function signOut() {
  const pm = await pushManager();
  if (pm) await drop(pm, true);
  else if (state.subscribed) await api.request("DELETE", PATH).catch(() => {});
  state.subscribed = false;
}

// The session ended without us (expired): the browser's subscription goes.
export async function forget() {
  const pm = await pushManager();
  if (pm) await drop(pm, false);
}
