// swlogic.js: pure. The service worker's decisions (sw.js only wires the
// events): which requests it answers from its cache (the app's own
// files, never /api), the cache of a release and which older ones go,
// and what a push says (pushd's payload, API.md) and which tab its click
// brings forward.
import { format } from "./place.js";

const PREFIX = "postern-";
export const cacheName = (version) => `${PREFIX}${version}`;
// The choices the page hands the worker (its language), kept over releases.
export const PREFS = `${PREFIX}prefs`;

// The caches of other releases: postern's own, but this one's and the prefs'.
export const stale = (names, version) =>
  names.filter((n) => n.startsWith(PREFIX) && n !== cacheName(version) && n !== PREFS);

// A release's files, fetched (get(path) → Response) and each checked
// against the list it came with (files: path → the start of its SHA-256
// in hex; "" for precache.js itself, which must name version): the
// [path, response] pairs to keep, or a rejection naming the first file of
// another release. A server being upgraded serves old and new files side
// by side for a while; what is installed then must be one release, never
// a mix, and the next check for a release tries again. sha256(bytes) →
// the digest's bytes (crypto.subtle's).
export async function fetchRelease(files, version, get, sha256) {
  return Promise.all(Object.entries(files).map(async ([path, want]) => {
    const r = await get(path);
    if (!r.ok) throw new Error(`${path}: HTTP ${r.status}`);
    const bytes = new Uint8Array(await r.clone().arrayBuffer());
    const mine = want ? hex(await sha256(bytes)).slice(0, 16) === want
      : new TextDecoder().decode(bytes).includes(`VERSION = "${version}";`);
    if (!mine) throw new Error(`${path} is not of release ${version}`);
    return [path, r];
  }));
}

export const hex = (buf) => [...new Uint8Array(buf)].map((b) => b.toString(16).padStart(2, "0")).join("");

// The cached file that answers req ({method, url}) under scope, or null:
// the request then goes to the network untouched. files: a Set of the
// app's files, relative to the scope. A query makes it another resource.
export function cacheKey(req, scope, files) {
  if (req.method !== "GET") return null;
  let u;
  try { u = new URL(req.url); } catch { return null; }
  const base = new URL(scope);
  if (u.origin !== base.origin || !u.pathname.startsWith(base.pathname) || u.search) return null;
  // Never an API answer, whatever the list holds.
  if (/^\/api(\/|$)/.test(u.pathname)) return null;
  const path = u.pathname.slice(base.pathname.length);
  if (path === "") return "index.html";
  return files.has(path) ? path : null;
}

// The place of the mail a push tells of (place.js's fragments): the
// Inbox by its role, any other folder by its id.
export function mailHash(p) {
  const at = p.role === "inbox" || !p.mailboxId ? { role: "inbox" } : { folderId: p.mailboxId };
  if (p.threadId) {
    at.thread = p.threadId;
    if (p.emailId) at.email = p.emailId;
  }
  return format(at);
}

const str = (v) => (typeof v === "string" ? v : "");
const valid = (p) => !!p && typeof p === "object" && p.v === 1;

// What a push shows: {title, body, tag, url, unread} (unread: the Inbox's
// count for the app's badge, or null). payload: the parsed JSON, or null
// when it did not parse, which shows a plain "New mail" opening the Inbox.
// One tag per folder, so that a newer push replaces the older one.
export function notice(payload, t, scope) {
  if (!valid(payload)) {
    return { title: t("push.generic"), body: "", tag: `${PREFIX}push-inbox`, url: scope + format({ role: "inbox" }), unread: null };
  }
  const p = payload;
  const who = str(p.from?.name) || str(p.from?.email) || t("notify.someone");
  const subject = str(p.subject) || t("list.noSubject");
  const inbox = p.role === "inbox" || !p.mailboxId;
  const count = Number.isInteger(p.count) && p.count > 1 ? p.count : 1;
  let title = inbox || !str(p.folder) ? who : t("push.inFolder", { from: who, folder: p.folder });
  let body = subject;
  if (count > 1) {
    title = t("notify.many", { n: count });
    body = t("push.body", { from: who, subject });
  }
  return { title, body, tag: `${PREFIX}push-${inbox ? "inbox" : p.mailboxId}`, url: scope + mailHash(p),
    unread: Number.isInteger(p.unread) && p.unread >= 0 ? p.unread : null };
}

// Where a notification's click goes: a window of the app (the focused one,
// else one in view, else any), told the place by a message; else a new
// window at url. clients: the worker's window clients.
export function clickPlan(clients, url, scope) {
  const ours = clients.filter((c) => c.url.startsWith(scope) && c.frameType !== "nested");
  const pick = ours.find((c) => c.focused) || ours.find((c) => c.visibilityState === "visible") || ours[0];
  return pick ? { client: pick, hash: new URL(url).hash } : { open: url };
}

// The server's VAPID public key (base64url, unpadded) as the bytes
// pushManager.subscribe wants; null when it is not one (65 bytes, 0x04 first).
export function keyBytes(b64url) {
  if (typeof b64url !== "string" || !/^[A-Za-z0-9_-]+$/.test(b64url)) return null;
  const b64 = b64url.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((b64url.length + 3) % 4);
  let bin;
  try { bin = atob(b64); } catch { return null; }
  const out = Uint8Array.from(bin, (c) => c.charCodeAt(0));
  return out.length === 65 && out[0] === 4 ? out : null;
}

// Whether a subscription was made with this key (bytes, or an ArrayBuffer
// as PushSubscription.options gives it): another key (the operator made
// a new pair) needs a new subscription.
export function sameKey(a, b) {
  if (!a || !b) return false;
  const x = new Uint8Array(a), y = new Uint8Array(b);
  return x.length === y.length && x.every((v, i) => v === y[i]);
}
