// sw.js: postern's service worker, a module registered by js/sworker.js
// at the app's root. It answers the app's own files from the cache of
// their release (js/precache.js: a new release installs beside the old
// one and waits for the page's Reload), lets every other request (all of
// /api) go to the network untouched, shows Web Push's notifications
// (pushd's payload), opens the mail on a click and keeps the app's badge.
// What it decides is js/swlogic.js's, tested without a browser.
import { VERSION, FILES } from "./js/precache.js";
import { cacheName, PREFS, stale, cacheKey, fetchRelease, notice, clickPlan, keyBytes } from "./js/swlogic.js";
import { translator, pickLanguage } from "./js/i18n.js";

const CACHE = cacheName(VERSION);
const OWN = new Set(Object.keys(FILES));
const scope = () => self.registration.scope;

// The release's files, all or none and each of this release: past the
// HTTP cache (revalidated), and checked against precache.js's sums, so
// that no file of another release slips into this one's cache. A failed
// install leaves the running release as it was; the next check tries again.
self.addEventListener("install", (e) => {
  e.waitUntil((async () => {
    const got = await fetchRelease(FILES, VERSION, (f) => fetch(new Request(f, { cache: "no-cache" })),
      (bytes) => crypto.subtle.digest("SHA-256", bytes));
    const c = await caches.open(CACHE);
    await Promise.all(got.map(([f, r]) => c.put(f, r)));
  })());
});

// Active (the first time, or after the user's Reload): older releases go.
self.addEventListener("activate", (e) => {
  e.waitUntil((async () => {
    await Promise.all(stale(await caches.keys(), VERSION).map((n) => caches.delete(n)));
    await self.clients.claim();
  })());
});

// Not answered here (no respondWith): the network, as without a worker.
self.addEventListener("fetch", (e) => {
  const key = cacheKey(e.request, scope(), OWN);
  if (key) e.respondWith(fromCache(key, e.request));
});

async function fromCache(key, req) {
  const hit = await (await caches.open(CACHE)).match(key);
  // A file the browser evicted: the network (not kept: it may be newer).
  return hit || fetch(req);
}

// The page: its Reload (take over now) and its language (for what
// notifications say).
self.addEventListener("message", (e) => {
  const m = e.data || {};
  if (m.type === "skip-waiting") self.skipWaiting();
  else if (m.type === "prefs") {
    e.waitUntil(caches.open(PREFS).then((c) => c.put("prefs", new Response(JSON.stringify({ lang: String(m.lang || "") }),
      { headers: { "Content-Type": "application/json" } }))));
  }
});

// -- Web Push ------------------------------------------------------------------

self.addEventListener("push", (e) => e.waitUntil(pushed(e.data)));

async function pushed(data) {
  let payload = null;
  try { payload = data ? data.json() : null; } catch { /* not JSON: a plain "New mail" */ }
  const n = notice(payload, await words(), scope());
  await self.registration.showNotification(n.title, { body: n.body, tag: n.tag, renotify: true,
    icon: "icons/icon-192.png", data: { url: n.url } });
  if (n.unread !== null) await badge(n.unread);
}

async function badge(n) {
  if (!("setAppBadge" in navigator)) return;
  await (n > 0 ? navigator.setAppBadge(n) : navigator.clearAppBadge()).catch(() => {});
}

// t() in the language the page last told (else the browser's).
async function words() {
  let lang = "";
  try { lang = (await (await (await caches.open(PREFS)).match("prefs"))?.json())?.lang || ""; } catch { /* none told */ }
  lang = pickLanguage(lang || undefined);
  const [c, f] = await Promise.all([catalogue(lang), lang === "en" ? null : catalogue("en")]);
  return translator(c, f, lang);
}

async function catalogue(lang) {
  const path = `i18n/${lang}.json`;
  const r = (await (await caches.open(CACHE)).match(path)) || (await fetch(path).catch(() => null));
  try { return r?.ok ? await r.json() : {}; } catch { return {}; }
}

self.addEventListener("notificationclick", (e) => {
  e.notification.close();
  const done = open(e.notification.data?.url || scope());
  // A click dispatched through the DevTools protocol (the browser test)
  // is not trusted, and an untrusted event cannot be waited for.
  if (e.isTrusted) e.waitUntil(done);
});

// An open window of the app is brought forward and told the place (it
// opens the mail without a reload); else a new window opens there.
async function open(url) {
  const list = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
  const plan = clickPlan(list, url, scope());
  if (plan.open) return self.clients.openWindow(plan.open);
  // Allowed only inside a real click.
  await plan.client.focus().catch(() => {});
  plan.client.postMessage({ type: "open", hash: plan.hash });
}

// The push service renewed or dropped the subscription: a new one, handed
// to postern (the session's cookie goes with it) if it still takes it.
self.addEventListener("pushsubscriptionchange", (e) => e.waitUntil(renewed(e).catch(() => {})));

async function renewed(e) {
  let sub = e.newSubscription;
  if (!sub) {
    const key = e.oldSubscription?.options?.applicationServerKey || (await serverKey());
    if (!key) return;
    sub = await self.registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key });
  }
  await fetch("/api/webpush", { method: "PUT", credentials: "same-origin", body: JSON.stringify(sub),
    headers: { "Content-Type": "application/json", Accept: "application/json", "X-Postern-CSRF": "1" } });
}

async function serverKey() {
  const r = await fetch("/api/config", { headers: { Accept: "application/json" } });
  const key = r.ok ? (await r.json()).features?.webpush?.key : null;
  return key ? keyBytes(key) : null;
}
