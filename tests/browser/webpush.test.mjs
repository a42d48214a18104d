// Browser tests of the installable app and Web Push's browser side (issue
// 20): the service worker installs and answers the app's own files with
// the network gone, never /api; a push delivered through the DevTools
// protocol shows its notification, and its click (the real handler,
// dispatched in the worker) opens the mail; the manifest is valid and the
// app installable (the DevTools protocol's own checks); the setting
// "Notifications on this device" and its states; sign-out removes the
// subscription; the folders chosen under it (notifyFolders) decide which
// new mail the tab tells of; a new release is offered with Reload and
// taken only then. Controls by role and accessible name.
//   node tests/browser/webpush.test.mjs      (ONLY=text runs some)
//
// What headless Chromium lacks, and what stands in for it:
// - no push service (Debian's Chromium has no key for Google's): the
//   page's PushManager.prototype.subscribe and getSubscription are
//   replaced (an init script) by a fake subscription; the worker's push
//   event is real, through ServiceWorker.deliverPushMessage;
// - no way to click a notification: the worker's own notificationclick
//   handler runs on a NotificationEvent dispatched in the worker (an
//   untrusted event: focus() and openWindow() need a real click, so the
//   new-window path is covered by tests/js/swlogic.test.js alone);
// - no permission prompt: Notification.requestPermission is wrapped to
//   count the asks and to grant the permission as a user's "Allow" would.
// Until postern's server side of Web Push is in the stack, /api/config's
// features.webpush and /api/webpush are stood in for by page.route
// (serverStandIn below); the rest is the real stack.
// A new release: the stack serves a copy of the app
// (POSTERN_STACK_WWW_COPY), which the update test changes on disk as a
// release would (a file, and js/precache.js as scripts/sw-precache.mjs
// writes it); the browser's own update check finds it.
import { createECDH } from "node:crypto";
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { test, assert, until, newPage, signIn, jmapIn, deliver, watched, run, stack, SRC } from "./lib.mjs";

process.env.POSTERN_STACK_WWW_COPY = "1";

// A VAPID public key as the server hands it: 65 bytes, base64url.
const KEY = createECDH("prime256v1").generateKeys().toString("base64url");

// The page's push manager without a push service, and the permission
// asked for counted and granted (see above).
function pushStandIn() {
  self.__asked = 0;
  const real = Notification.requestPermission.bind(Notification);
  Notification.requestPermission = async () => { self.__asked++; await self.__grant(); return real(); };
  let sub = null;
  self.__subscribed = [];
  PushManager.prototype.subscribe = async function (opts) {
    const n = self.__subscribed.length + 1;
    self.__subscribed.push({ userVisibleOnly: opts.userVisibleOnly, key: [...new Uint8Array(opts.applicationServerKey)] });
    const json = { endpoint: `https://push.example.test/sub/${n}`, expirationTime: null, keys: { p256dh: "BP-test-key", auth: "auth-test" } };
    sub = { endpoint: json.endpoint, options: { applicationServerKey: opts.applicationServerKey, userVisibleOnly: true },
      toJSON: () => json, unsubscribe: async () => { sub = null; self.__unsubscribed = (self.__unsubscribed || 0) + 1; return true; } };
    return sub;
  };
  PushManager.prototype.getSubscription = async () => sub;
}

// /api/config's Web Push features and /api/webpush (one subscription per
// session), as the server side will answer them. features: what config
// says ({push, webpush}). Returns what the stand-in was sent.
async function serverStandIn(page, features) {
  const sent = [];
  let held = null;
  await page.route("**/api/config", async (r) => {
    const res = await r.fetch();
    const c = await res.json();
    await r.fulfill({ response: res, json: { ...c, features: { ...c.features, ...features } } });
  });
  await page.route("**/api/webpush", async (r) => {
    const m = r.request().method();
    sent.push({ method: m, body: r.request().postDataJSON?.() ?? null, csrf: r.request().headers()["x-postern-csrf"] });
    if (m === "GET") return r.fulfill({ status: 200, json: { endpoint: held } });
    if (m === "PUT") held = r.request().postDataJSON().endpoint;
    if (m === "DELETE") held = null;
    return r.fulfill({ status: 204 });
  });
  return sent;
}

// A page whose worker is active and controls it.
async function controlled(page) {
  await page.evaluate(() => navigator.serviceWorker.ready);
  if (!(await page.evaluate(() => !!navigator.serviceWorker.controller))) await page.reload();
  await until(() => page.evaluate(() => !!navigator.serviceWorker.controller), "the worker controls the page");
}

// The worker's registration id, for the DevTools protocol's ServiceWorker domain.
async function registrationId(page) {
  const cdp = await page.context().newCDPSession(page);
  const regs = [];
  cdp.on("ServiceWorker.workerRegistrationUpdated", (e) => regs.push(...e.registrations));
  await cdp.send("ServiceWorker.enable");
  const reg = await until(() => regs.find((r) => r.scopeURL === stack.url + "/" && !r.isDeleted), "the registration");
  return { cdp, id: reg.registrationId };
}

// What the worker shows now: [{title, body, tag, data}].
const notifications = (page) => page.evaluate(async () => (await (await navigator.serviceWorker.ready).getNotifications())
  .map((n) => ({ title: n.title, body: n.body, tag: n.tag, data: n.data })));

const cachedUrls = (page) => page.evaluate(async () => {
  const out = [];
  for (const n of await caches.keys()) for (const r of await (await caches.open(n)).keys()) out.push(r.url);
  return out;
});

test("offline: the worker installs and serves the app's own files without a network, never /api", async () => {
  const page = await newPage();
  await signIn(page, "alice");
  await controlled(page);
  await page.waitForSelector("#list .row[data-id]");
  // Online: the app's files come from the worker's cache, /api from the server.
  const answers = [];
  page.on("response", (r) => answers.push({ url: r.url(), sw: r.fromServiceWorker() }));
  await page.reload();
  await page.waitForSelector("#list .row[data-id]");
  const app = answers.find((a) => a.url.endsWith("/app.js"));
  assert(app?.sw, `app.js from the worker: ${JSON.stringify(app)}`);
  const apis = answers.filter((a) => new URL(a.url).pathname.startsWith("/api/"));
  assert(apis.length && apis.every((a) => !a.sw), `no /api answer from the worker: ${JSON.stringify(apis.slice(0, 3))}`);

  await page.context().setOffline(true);
  await page.reload();
  // The shell: the sign-in form (the session cannot be asked), saying the server is out of reach.
  await page.getByRole("button", { name: "Sign in" }).waitFor();
  await page.getByRole("alert").filter({ hasText: "postern cannot be reached" }).waitFor();
  // A module not loaded yet comes from the cache too.
  assert(await page.evaluate(async () => typeof (await import("./js/views/viewer.js")).showOriginal === "function"), "a later module offline");
  const api = await page.evaluate(async () => { try { await fetch("/api/config"); return "answered"; } catch { return "failed"; } });
  assert(api === "failed", `a request to /api while offline fails: ${api}`);
  const urls = await cachedUrls(page);
  assert(urls.some((u) => u.endsWith("/js/store.js")) && urls.some((u) => u.endsWith("/i18n/ar.json")), "the app's files are cached");
  const leaked = urls.filter((u) => new URL(u).pathname.startsWith("/api"));
  assert(!leaked.length, `no /api answer in the Cache Storage: ${leaked}`);
  await page.context().setOffline(false);
  await page.context().close();
});

test("push: a notification with the sender and subject; its click opens the mail; the badge", async () => {
  const page = await newPage();
  await page.context().grantPermissions(["notifications"], { origin: stack.url });
  // The Badging API, recorded (headless Chromium may not offer it; the
  // app sets the badge wherever navigator.setAppBadge exists).
  await page.addInitScript(() => {
    self.__badges = [];
    navigator.setAppBadge = async (n) => { self.__badges.push(n); };
    navigator.clearAppBadge = async () => { self.__badges.push(0); };
  });
  await signIn(page, "alice");
  await controlled(page);
  await page.waitForSelector("#list .row[data-id]");
  // The Inbox's unread count as the app's badge, from the page.
  const [[, boxes]] = await jmapIn(page, [["Mailbox/get", { accountId: "$ACC", properties: ["role", "unreadEmails"] }, "m"]]);
  const inbox = boxes.list.find((b) => b.role === "inbox");
  assert(inbox.unreadEmails > 0, `alice's Inbox has unread mail: ${inbox.unreadEmails}`);
  await until(() => page.evaluate((n) => self.__badges.includes(n), inbox.unreadEmails), "the badge");
  // The newest mail of the Inbox, as pushd would describe it.
  const [, [, got]] = await jmapIn(page, [
    ["Email/query", { accountId: "$ACC", filter: { inMailbox: inbox.id }, sort: [{ property: "receivedAt", isAscending: false }], limit: 1 }, "q"],
    ["Email/get", { accountId: "$ACC", "#ids": { resultOf: "q", name: "Email/query", path: "/ids" }, properties: ["threadId", "subject"] }, "g"]]);
  const mail = got.list[0];
  const payload = { v: 1, from: { name: "Bob Builder", email: "bob@example.test" }, subject: mail.subject, folder: "Inbox",
    role: "inbox", mailboxId: inbox.id, emailId: mail.id, threadId: mail.threadId, count: 1, unread: 7 };
  // Elsewhere first, so that the click has somewhere to take the page.
  await page.goto(stack.url + "/#/sent");
  await page.waitForSelector("#list .row[data-id], #list-empty:not([hidden])");

  const { cdp, id } = await registrationId(page);
  await cdp.send("ServiceWorker.deliverPushMessage", { origin: stack.url, registrationId: id, data: JSON.stringify(payload) });
  const [shown] = await until(async () => { const l = await notifications(page); return l.length ? l : null; }, "the notification");
  assert(shown.title === "Bob Builder", `the sender: ${shown.title}`);
  assert(shown.body === mail.subject, `the subject: ${shown.body}`);
  assert(shown.tag === "postern-push-inbox", `one tag per folder: ${shown.tag}`);
  assert(shown.data.url === `${stack.url}/#/inbox/thread/${encodeURIComponent(mail.threadId)}/${encodeURIComponent(mail.id)}`,
    `the mail's place: ${shown.data.url}`);

  // The click: the worker's own handler, on an event dispatched in it.
  const worker = await until(() => page.context().serviceWorkers().find((w) => w.url().endsWith("/sw.js")), "the worker");
  await worker.evaluate(async () => {
    const [n] = await self.registration.getNotifications();
    self.dispatchEvent(new self.NotificationEvent("notificationclick", { notification: n }));
  });
  await page.getByRole("heading", { name: mail.subject }).first().waitFor({ timeout: 10000 });
  assert(page.url().endsWith(shown.data.url.slice(stack.url.length)), `the URL is the mail's: ${page.url()}`);
  assert((await notifications(page)).length === 0, "the clicked notification closed");

  // Several together, then one that does not parse: the same tag, replaced.
  await cdp.send("ServiceWorker.deliverPushMessage", { origin: stack.url, registrationId: id, data: JSON.stringify({ ...payload, count: 3 }) });
  await until(async () => (await notifications(page)).some((n) => n.title === "3 new messages" && n.body === `Bob Builder: ${mail.subject}`), "the summary");
  await cdp.send("ServiceWorker.deliverPushMessage", { origin: stack.url, registrationId: id, data: "not json" });
  await until(async () => { const l = await notifications(page); return l.length === 1 && l[0].title === "New mail" && l[0].data.url === stack.url + "/#/inbox"; },
    "a plain New mail replacing it");
  await page.context().close();
});

// A browser profile of its own: Chromium installs no app from an
// incognito profile, which every newPage() context is.
async function profilePage() {
  const { chromium } = await import("playwright-core");
  const dir = mkdtempSync(join(tmpdir(), "postern-profile-"));
  const ctx = await chromium.launchPersistentContext(dir, { executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync", "--disable-component-update"] });
  const page = ctx.pages()[0] || await ctx.newPage();
  page.done = async () => { await ctx.close(); rmSync(dir, { recursive: true, force: true }); };
  return page;
}

test("installable: the manifest parses without errors and Chromium finds nothing against installing", async () => {
  const page = await profilePage();
  await page.goto(stack.url + "/");
  await controlled(page);
  const cdp = await page.context().newCDPSession(page);
  const m = await cdp.send("Page.getAppManifest");
  assert(m.url === stack.url + "/manifest.json", `the manifest linked: ${m.url}`);
  assert(!m.errors.length, `manifest errors: ${JSON.stringify(m.errors)}`);
  const parsed = JSON.parse(m.data);
  assert(parsed.display === "standalone" && parsed.icons.length === 3, "its fields");
  const inst = await until(async () => {
    const r = await cdp.send("Page.getInstallabilityErrors");
    return r.installabilityErrors;
  }, "the installability check");
  assert(!inst.length, `installability errors: ${JSON.stringify(inst)}`);
  // Its icons are served as PNG.
  for (const i of parsed.icons) {
    const r = await page.request.get(`${stack.url}/${i.src}`);
    assert(r.ok() && r.headers()["content-type"] === "image/png", `${i.src}: ${r.status()} ${r.headers()["content-type"]}`);
  }
  const sw = await page.request.get(stack.url + "/sw.js");
  assert(/no-cache/.test(sw.headers()["cache-control"] || ""), `sw.js is revalidated: ${sw.headers()["cache-control"]}`);
  await page.done();
});

async function openSettings(page) {
  await page.getByRole("button", { name: "Settings", exact: true }).click();
  return page.getByRole("dialog");
}

test("setting: without pushd the setting says it needs the push daemon; turned off by the operator says so", async () => {
  const page = await newPage();
  await serverStandIn(page, { push: false, webpush: false });
  await signIn(page, "bob");
  const dlg = await openSettings(page);
  await dlg.getByRole("checkbox", { name: "Notifications on this device" }).waitFor();
  await dlg.getByText("Notifications with every tab closed need the push daemon (pushd), which this server does not run", { exact: false }).waitFor();
  await page.context().close();

  const other = await newPage();
  await serverStandIn(other, { push: true, webpush: false });
  await signIn(other, "bob");
  const d2 = await openSettings(other);
  await d2.getByText("turned off by the operator of this server", { exact: false }).waitFor();
  await other.context().close();
});

test("setting: on asks the permission then and hands postern the subscription; off and sign-out remove it", async () => {
  const page = await newPage();
  const ctx = page.context();
  await ctx.exposeBinding("__grant", () => ctx.grantPermissions(["notifications"], { origin: stack.url }));
  await page.addInitScript(pushStandIn);
  const sent = await serverStandIn(page, { push: true, webpush: { key: KEY } });
  await signIn(page, "carol");
  await controlled(page);
  await page.waitForSelector("#list .row[data-id]");
  assert(await page.evaluate(() => self.__asked === 0 && self.__subscribed.length === 0), "nothing asked or subscribed on load");

  const dlg = await openSettings(page);
  const box = dlg.getByRole("checkbox", { name: "Notifications on this device" });
  assert(!(await box.isChecked()), "off at first");
  await box.check();
  await dlg.getByText("New mail is shown here even with every postern tab closed.").waitFor();
  assert(await page.evaluate(() => self.__asked) === 1, "the permission was asked on the click");
  const sub = await page.evaluate(() => self.__subscribed[0]);
  assert(sub.userVisibleOnly === true, "userVisibleOnly");
  assert(Buffer.from(sub.key).toString("base64url") === KEY, "subscribed with the server's key");
  const put = await until(() => sent.find((s) => s.method === "PUT"), "the PUT");
  assert(put.body.endpoint === "https://push.example.test/sub/1" && put.body.keys.p256dh && put.body.keys.auth,
    `the subscription as PushSubscription.toJSON: ${JSON.stringify(put.body)}`);
  assert(put.csrf === "1", "with the CSRF header");

  // Off: DELETE and the browser's subscription dropped.
  await box.uncheck();
  await until(() => sent.some((s) => s.method === "DELETE"), "the DELETE");
  await until(() => page.evaluate(() => self.__unsubscribed === 1), "unsubscribed");
  assert(!(await dlg.getByText("New mail is shown here even with every postern tab closed.").isVisible()), "the line went");

  // On again, then signing out: DELETE before the session ends.
  await box.check();
  await until(() => sent.filter((s) => s.method === "PUT").length === 2, "the second PUT");
  await dlg.getByRole("button", { name: "Cancel" }).click();
  const order = [];
  page.on("request", (r) => {
    const u = new URL(r.url()).pathname;
    if (u === "/api/webpush" || u === "/api/auth/logout") order.push(`${r.method()} ${u}`);
  });
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.getByRole("button", { name: "Sign in" }).waitFor();
  assert(order[0] === "DELETE /api/webpush" && order.includes("POST /api/auth/logout"), `DELETE, then the sign-out: ${order}`);
  assert(await page.evaluate(() => self.__unsubscribed) === 2, "the browser's subscription dropped too");
  await page.context().close();
});

test("folders: one chosen under the switch is stored (notifyFolders); its new mail notifies the tab, a folder not chosen does not", async () => {
  const page = await newPage();
  await page.context().grantPermissions(["notifications"], { origin: stack.url });
  await page.addInitScript(watched);
  // No Web Push here: the tab itself tells of new mail.
  await serverStandIn(page, { push: true, webpush: false });
  await signIn(page, "bob");
  // Two folders of bob's, and a Sieve script filing mail into them (a
  // mailing list's folder, as people have them).
  const [[, made], [, boxes]] = await jmapIn(page, [
    ["Mailbox/set", { accountId: "$ACC", create: { l: { name: "Lists", parentId: null }, o: { name: "Elsewhere", parentId: null } } }, "s"],
    ["Mailbox/get", { accountId: "$ACC", properties: ["role"] }, "m"]]);
  const lists = made.created?.l?.id, other = made.created?.o?.id;
  assert(lists && other, `the folders: ${JSON.stringify(made)}`);
  const inbox = boxes.list.find((b) => b.role === "inbox").id;
  const script = 'require ["fileinto"];\nif header :contains "subject" "[lists]" { fileinto "Lists"; }\n' +
    'elsif header :contains "subject" "[other]" { fileinto "Elsewhere"; }\n';
  const stored = await page.evaluate(async (script) => (await fetch("/api/sieve", { method: "PUT",
    headers: { "Content-Type": "application/json", "X-Postern-CSRF": "1" }, body: JSON.stringify({ script }) })).status, script);
  assert(stored === 200, `the script stored: ${stored}`);
  await page.reload();
  await page.waitForSelector("#list .row[data-id]");

  // The default: the Inbox alone, every folder offered in the tree's order.
  let dlg = await openSettings(page);
  let where = dlg.getByRole("group", { name: "Notify me about new mail in" });
  const names = await where.getByRole("checkbox").evaluateAll((l) => l.map((c) => c.labels[0].textContent.trim()));
  const tree = await page.locator("#folders button.folder .name").allTextContents();
  assert(JSON.stringify(names) === JSON.stringify(tree), `the folders as the tree has them: ${names} / ${tree}`);
  assert(await where.getByRole("checkbox", { name: "Inbox", exact: true }).isChecked(), "the Inbox ticked by default");
  assert(!(await where.getByRole("checkbox", { name: "Lists", exact: true }).isChecked()), "Lists not ticked at first");
  await dlg.getByRole("checkbox", { name: "Notifications on this device" }).check();
  await where.getByRole("checkbox", { name: "Lists", exact: true }).check();
  const put = page.waitForRequest((r) => r.method() === "PUT" && new URL(r.url()).pathname === "/api/auth/settings");
  await dlg.getByRole("button", { name: "Save" }).click();
  const sentFolders = (await put).postDataJSON().notifyFolders;
  assert(JSON.stringify(sentFolders) === JSON.stringify([inbox, lists]), `Save sends the folders: ${JSON.stringify(sentFolders)}`);
  const back = await (await page.request.get(stack.url + "/api/auth/settings")).json();
  assert(JSON.stringify(back.notifyFolders) === JSON.stringify([inbox, lists]), `the server keeps them: ${JSON.stringify(back.notifyFolders)}`);
  await until(async () => !(await page.locator("#settings").evaluate((d) => d.open)), "the settings closed");
  dlg = await openSettings(page);
  where = dlg.getByRole("group", { name: "Notify me about new mail in" });
  assert(await where.getByRole("checkbox", { name: "Lists", exact: true }).isChecked(), "Lists ticked when the settings open again");
  await dlg.getByRole("button", { name: "Cancel" }).click();

  // Hidden; a mail filed into Elsewhere, then one into Lists: a refresh
  // that sees the second has seen the first.
  const hidden = page.waitForRequest((r) => r.method() === "POST" && r.url().includes("/api/events?visible=0"), { timeout: 10000 });
  await page.evaluate(() => self.__setHidden(true));
  await hidden;
  const at = Date.now();
  const raw = (subject) => `From: Erin <erin@example.test>\nTo: bob@example.test\nSubject: ${subject}\n` +
    `Message-ID: <${at}.${subject.length}@example.test>\nDate: ${new Date().toUTCString()}\n\nHello.\n`;
  const quiet = `[other] Not told ${at}`, told = `[lists] Told ${at}`;
  await deliver("bob@example.test", raw(quiet), "erin@example.test");
  await deliver("bob@example.test", raw(told), "erin@example.test");
  const shown = await until(() => page.evaluate((s) => self.__notes.map((n) => n.shown).find((n) => n.body === s), told),
    "the notification of the mail in Lists", 30000);
  assert(/Erin/.test(shown.title), `the sender: ${shown.title}`);
  const [[, q]] = await jmapIn(page, [["Email/query", { accountId: "$ACC", filter: { inMailbox: other } }, "q"]]);
  assert(q.ids.length === 1, `the other mail was filed into Elsewhere: ${JSON.stringify(q)}`);
  const notes = await page.evaluate(() => self.__notes.map((n) => n.shown.body));
  assert(!notes.includes(quiet), `no notification for the folder not chosen: ${notes}`);

  // Its click opens the mail in Lists.
  await page.evaluate(() => self.__setHidden(false));
  await page.evaluate((s) => self.__notes.find((n) => n.shown.body === s).onclick(), told);
  await page.getByRole("heading", { name: told }).waitFor({ timeout: 10000 });
  assert(await page.locator(`#folders button.folder[data-id="${lists}"]`).getAttribute("aria-current") === "page", "Lists is open");
  assert(page.errors.length === 0, page.errors.join("\n"));
  await page.context().close();
});

// Last: it leaves the copy of the app a release ahead.
test("update: a half-done upgrade is not installed; a new release is offered (Reload), nothing reloads by itself; Reload moves the page onto it, the old cache goes", async () => {
  assert(stack.www, "the stack serves a copy of the app");
  const page = await newPage();
  await signIn(page, "alice");
  await controlled(page);
  const old = await page.evaluate(async () => (await import("./js/precache.js")).VERSION);
  await until(async () => (await page.evaluate(() => caches.keys())).includes(`postern-${old}`), "the release's cache");

  // What the browser does on a navigation, and the app every hour: a
  // check for a release; then what came of it ("installed", "redundant":
  // its install failed, "none": nothing new).
  const check = () => page.evaluate(async () => {
    const r = await navigator.serviceWorker.getRegistration();
    await r.update().catch(() => {});
    const w = r.installing;
    if (!w) return r.waiting ? "installed" : "none";
    return w.state !== "installing" ? w.state
      : new Promise((res) => w.addEventListener("statechange", () => { if (w.state !== "installing") res(w.state); }));
  });
  // lighttpd keeps a file's stat for a second: what it serves is asked
  // from here (the page's fetch would be the worker's answer).
  const served = async (path, text) => (await (await fetch(new URL(path, stack.url))).text()).includes(text);
  const cached = () => page.evaluate(async () => (await fetch("js/dates.js")).text());

  let loads = 0;
  page.on("framenavigated", (f) => { if (f === page.mainFrame()) loads++; });
  await page.evaluate(() => { self.__before = true; });
  const offer = page.getByRole("status").filter({ hasText: "A new version of postern is ready." });

  // An upgrade half done on the server: a file of the new release beside
  // the old precache.js. Its check finds the change, and its install fails.
  const mark = `// release ${Date.now()}`;
  appendFileSync(join(stack.www, "js/dates.js"), `${mark}\n`);
  await until(() => served("js/dates.js", mark), "the web server serving the changed file", 10000);
  await until(async () => (await check()) === "redundant", "a check that finds the half-done release", 30000);
  assert(await check() !== "installed", "nothing of it waits");
  assert(JSON.stringify((await page.evaluate(() => caches.keys())).filter((k) => k !== "postern-prefs")) ===
    JSON.stringify([`postern-${old}`]), "no other cache");
  assert(!(await cached()).includes(mark), "the running release's cache still holds its own file");
  assert(!(await offer.isVisible()), "no offer");

  // The upgrade done: precache.js as the build writes it.
  const precache = await import(pathToFileURL(join(SRC, "scripts/sw-precache.mjs")).href);
  writeFileSync(join(stack.www, "js/precache.js"), precache.text(stack.www));
  const fresh = precache.version(stack.www);
  assert(fresh !== old, "a new version");
  await until(() => served("js/precache.js", fresh), "the web server serving the new release", 10000);
  await until(async () => (await check()) === "installed", "the new release installed", 30000);
  await offer.waitFor({ timeout: 10000 });
  // It waits for the user: the same page, the new worker waiting, both caches kept.
  await page.waitForTimeout(2000);
  assert(loads === 0 && await page.evaluate(() => self.__before === true), "nothing reloaded by itself");
  assert(await page.evaluate(async () => !!(await navigator.serviceWorker.getRegistration()).waiting), "the new release waits");
  const both = await page.evaluate(() => caches.keys());
  assert(both.includes(`postern-${old}`) && both.includes(`postern-${fresh}`), `both caches while it waits: ${both}`);

  await offer.getByRole("button", { name: "Reload" }).click();
  await until(() => loads > 0, "the reload", 15000);
  await page.waitForSelector("#list .row[data-id]");
  assert(await page.evaluate(() => self.__before === undefined), "a new page");
  assert(await page.evaluate(async () => (await import("./js/precache.js")).VERSION) === fresh, "the page runs the new release");
  const dates = await page.evaluate(async () => (await fetch("js/dates.js")).text());
  assert(dates.includes(mark), "the changed file, from the new release");
  await until(async () => { const k = await page.evaluate(() => caches.keys()); return k.includes(`postern-${fresh}`) && !k.includes(`postern-${old}`); },
    "the new cache kept, the old one gone", 10000);
  assert(!(await offer.isVisible()), "no offer after the reload");
  assert(page.errors.length === 0, page.errors.join("\n"));
  await page.context().close();
});

run();
