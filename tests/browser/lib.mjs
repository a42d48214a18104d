// Shared by the browser tests (app.test.mjs, compose.test.mjs): the
// stack, Chromium through playwright-core, TAP, and helpers that act as
// a signed-in user. Each test file starts its own stack.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import net from "node:net";

export const SRC = process.env.POSTERN_SRCDIR || join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
export const SHOTS = process.env.SCREENSHOTS ? join(SRC, "docs", "screenshots") : null;

let chromium;
try {
  ({ chromium } = await import("playwright-core"));
} catch {
  console.log("1..0 # SKIP playwright-core is not installed (npm ci)");
  process.exit(0);
}
try { readFileSync(CHROMIUM); } catch {
  console.log(`1..0 # SKIP no Chromium at ${CHROMIUM} (apt-get install chromium)`);
  process.exit(0);
}

// -- TAP -------------------------------------------------------------------------
const tests = [];
export const test = (name, fn, opts = {}) => tests.push({ name, fn, ...opts });
export const diag = (s) => console.log(String(s).split("\n").map((l) => `# ${l}`).join("\n"));
export function assert(cond, msg) { if (!cond) throw new Error(msg || "assertion failed"); }
// Waits for fn() to be truthy (polled), up to ms: its value, else throws what.
export async function until(fn, what, ms = 20000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((res) => setTimeout(res, 200));
  }
}

// -- the stack ---------------------------------------------------------------------
function freePort() {
  return new Promise((res) => { const s = net.createServer(); s.listen(0, "127.0.0.1", () => { const p = s.address().port; s.close(() => res(p)); }); });
}

async function startStack() {
  const root = mkdtempSync(join(tmpdir(), "postern-browser-"));
  const port = await freePort();
  const proc = spawn("python3", [join(SRC, "tests/browser/stack.py"), join(root, "stack"), String(port)],
    { stdio: ["ignore", "pipe", "pipe"], env: process.env });
  let out = "";
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("the stack did not start in 120 s:\n" + out)), 120000);
    const onData = (d) => { out += d; if (out.includes("URL http")) { clearTimeout(timer); resolve(); } };
    proc.stdout.on("data", onData);
    proc.stderr.on("data", (d) => { out += d; });
    proc.on("exit", (c) => { clearTimeout(timer); reject(new Error(`the stack exited (${c}):\n${out}`)); });
  });
  proc.removeAllListeners("exit");
  // The Stalwart-behaviour server's /_control/ (POSTERN_STACK_UPSTREAM).
  const control = (out.match(/^CONTROL (\S+)/m) || [])[1];
  // Cyrus's own doors ({base, lmtp, spool}), where the stack runs Cyrus.
  const cyrus = JSON.parse((out.match(/^CYRUS (.+)$/m) || [])[1] || "null");
  // The copy of the app the web server serves (POSTERN_STACK_WWW_COPY=1).
  const www = (out.match(/^WWW (.+)$/m) || [])[1] || null;
  return { url: `http://127.0.0.1:${port}`, control, cyrus, www, root, stop: () => new Promise((r) => {
    proc.on("exit", () => { rmSync(root, { recursive: true, force: true }); r(); });
    proc.kill("SIGTERM");
    setTimeout(() => proc.kill("SIGKILL"), 15000).unref();
  }) };
}

// -- helpers -------------------------------------------------------------------------
// The running stack ({url, control, cyrus, www}) and browser, set by run().
export let stack;
let browser;
export const USERS = { alice: "alice-demo-pass", bob: "bob-demo-pass", carol: "carol-demo-pass" };
export const metrics = {};
// Every text a toast or the sending bar showed, in every page.
export const toasts = [];
// options go to the browser context: { bypassCSP: true } makes Chromium
// ignore every Content-Security-Policy (CDP Page.setBypassCSP), as a web
// server that drops the headers would.
export async function newPage(viewport = { width: 1280, height: 800 }, options = {}) {
  const ctx = await browser.newContext({ viewport, locale: "en-US", timezoneId: "UTC", ...options });
  // What the toasts say, as they say it (toasts).
  await ctx.exposeBinding("__posternToast", (src, text) => toasts.push(text));
  await ctx.addInitScript(() => addEventListener("DOMContentLoaded", () => {
    for (const id of ["toast", "sending"]) {
      const el = document.getElementById(id);
      if (el) new MutationObserver(() => { if (!el.hidden) self.__posternToast(el.textContent); })
        .observe(el, { childList: true, subtree: true, characterData: true, attributes: true });
    }
  }));
  const page = await ctx.newPage();
  page.errors = [];
  page.dialogs = [];
  page.requests = [];
  page.on("pageerror", (e) => page.errors.push(e.message));
  page.acceptDialogs = false;
  page.on("dialog", (d) => { page.dialogs.push(d.message()); (page.acceptDialogs ? d.accept() : d.dismiss()).catch(() => {}); });
  page.on("request", (r) => page.requests.push(r.url()));
  page.setDefaultTimeout(15000);
  return page;
}

export async function signIn(page, who) {
  await page.goto(stack.url + "/");
  await page.fill("input[name=username]", `${who}@example.test`);
  await page.fill("input[name=password]", USERS[who]);
  const t0 = Date.now();
  await page.click("#signin-form button[type=submit]");
  await page.waitForSelector("#list .row[data-id]");
  return Date.now() - t0;
}

// Replaces some of the page's user's settings (PUT takes the whole set).
export async function putSettings(page, changes) {
  const now = await (await page.request.get(stack.url + "/api/auth/settings")).json();
  const r = await page.request.put(stack.url + "/api/auth/settings", { data: { ...now, ...changes }, headers: { "X-Postern-CSRF": "1" } });
  assert(r.status() === 200, `settings stored: ${r.status()} ${await r.text()}`);
  return r.json();
}

// An init script (page.addInitScript(watched)) for a page that is hidden
// when the test says and records its notifications. Headless Chromium
// keeps every page visible, so document.visibilityState and
// document.hidden become getters that self.__setHidden(bool) switches,
// followed by the visibilitychange event the browser would send; the
// page's Notification is wrapped to record what the app shows
// (self.__notes, each with .shown: its title and options; headless
// Chromium draws none) and the permissions asked (self.__asked). The
// permission itself is the context's (grantPermissions).
export function watched() {
  let hidden = false;
  Object.defineProperty(Document.prototype, "visibilityState", { configurable: true, get: () => (hidden ? "hidden" : "visible") });
  Object.defineProperty(Document.prototype, "hidden", { configurable: true, get: () => hidden });
  self.__setHidden = (h) => { hidden = h; document.dispatchEvent(new Event("visibilitychange")); };
  self.__notes = [];
  self.__asked = 0;
  const Real = self.Notification;
  if (!Real) return;
  class Recorded extends Real {
    constructor(title, opts) { super(title, opts); self.__notes.push(this); this.shown = { title, ...opts }; }
    static requestPermission(...a) { self.__asked++; return Real.requestPermission(...a); }
    static get permission() { return Real.permission; }
  }
  self.Notification = Recorded;
}

export const row = (page, text) => page.locator("#list .row[data-id]", { hasText: text }).first();
// Opens the row's mail: clicked again while no message shows (a live
// update that redraws the list under the click loses it; on a loaded
// machine the mail may also take long), up to ms.
export async function openRow(page, text, ms = 30000) {
  await until(async () => {
    await row(page, text).click();
    return page.locator("#reader-body .msg").first().waitFor({ timeout: 5000 }).then(() => true, () => false);
  }, `the mail "${text}" open`, ms);
}
export async function shot(page, name) { if (SHOTS) await page.screenshot({ path: join(SHOTS, `${name}.png`) }); }

// JMAP calls as the page's signed-in user; "$ACC" stands for the account id.
export async function jmapIn(page, calls) {
  return page.evaluate(async (calls) => {
    const s = await (await fetch("/api/auth/session")).json();
    const acc = s.primaryAccounts["urn:ietf:params:jmap:mail"];
    const body = JSON.stringify({ using: ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:mail", "urn:ietf:params:jmap:submission"],
      methodCalls: calls }).replaceAll('"$ACC"', JSON.stringify(acc));
    const r = await fetch("/api/jmap", { method: "POST", headers: { "Content-Type": "application/json", "X-Postern-CSRF": "1" }, body });
    return (await r.json()).methodResponses;
  }, calls);
}

// Waits until the server's search finds n emails for filter: Cyrus's
// rolling squatter indexes new mail within a second or so, and a search
// (any filter beyond inMailbox) before that finds nothing.
export async function searchable(page, filter, n = 1, ms = 30000) {
  await until(async () => {
    const [[, q]] = await jmapIn(page, [["Email/query", { accountId: "$ACC", filter, calculateTotal: true, limit: 1 }, "q"]]);
    return q.total >= n;
  }, `indexed: ${JSON.stringify(filter)}`, ms);
}

// Sends a plain mail as the page's user, straight through JMAP; extra
// goes into the Email (inReplyTo, references for a reply).
export async function sendAs(page, to, subject, text, extra = {}) {
  const [[, ids], [, boxes]] = await jmapIn(page, [["Identity/get", { accountId: "$ACC" }, "i"],
    ["Mailbox/get", { accountId: "$ACC", properties: ["role"] }, "m"]]);
  const drafts = boxes.list.find((m) => m.role === "drafts").id;
  const me = ids.list[0];
  const r = await jmapIn(page, [
    ["Email/set", { accountId: "$ACC", create: { m: { mailboxIds: { [drafts]: true }, from: [{ email: me.email }], to: [{ email: to }],
      subject, bodyValues: { b: { value: text } }, textBody: [{ partId: "b", type: "text/plain" }], ...extra } } }, "e"],
    ["EmailSubmission/set", { accountId: "$ACC", create: { s: { identityId: me.id, emailId: "#m" } } }, "s"]]);
  assert(r[1][0] === "EmailSubmission/set" && r[1][1].created?.s, `sent: ${JSON.stringify(r).slice(0, 300)}`);
}

// The page's user's newest email with this subject (full bodies), waiting up to ms for it.
export async function findEmail(page, subject, ms = 20000) {
  const end = Date.now() + ms;
  for (;;) {
    const r = await jmapIn(page, [
      ["Email/query", { accountId: "$ACC", filter: { subject }, sort: [{ property: "receivedAt", isAscending: false }], limit: 1 }, "q"],
      ["Email/get", { accountId: "$ACC", "#ids": { resultOf: "q", name: "Email/query", path: "/ids" },
        properties: ["from", "subject", "bodyStructure", "textBody", "htmlBody", "bodyValues"], fetchAllBodyValues: true }, "g"]]);
    const e = r[1][1].list?.[0];
    if (e) return e;
    if (Date.now() > end) throw new Error(`no email "${subject}"`);
    await new Promise((res) => setTimeout(res, 500));
  }
}

// Delivers raw (an RFC 5322 message) to rcpt over Cyrus's LMTP socket, as
// an MTA would: resolves when lmtpd has answered DATA (Sieve has run).
export function deliver(rcpt, raw, sender = "postmaster@example.test") {
  const steps = [`LHLO test\r\n`, `MAIL FROM:<${sender}>\r\n`, `RCPT TO:<${rcpt}>\r\n`, "DATA\r\n",
    raw.replace(/\r?\n/g, "\r\n").replace(/^\./gm, "..") + "\r\n.\r\n", "QUIT\r\n"];
  return new Promise((resolve, reject) => {
    const s = net.connect(stack.cyrus.lmtp);
    let buf = "", step = -1;
    s.setTimeout(30000, () => { s.destroy(); reject(new Error("LMTP timed out")); });
    s.on("error", reject);
    s.on("data", (d) => {
      buf += d;
      // One whole answer (its last line "NNN text"), then the next step.
      const lines = buf.split("\r\n");
      if (!/^\d{3} /.test(lines[lines.length - 2] || "")) return;
      const code = Number(lines[lines.length - 2].slice(0, 3));
      buf = "";
      if (code >= 400) { s.destroy(); reject(new Error(`LMTP: ${lines.join(" | ")}`)); return; }
      if (++step === steps.length) { s.end(); resolve(); return; }
      s.write(steps[step]);
    });
  });
}

// What left through the SMTP sink: [{from, to: [], text}] (Cyrus's
// vacation replies, redirects, and the users' own mail).
export function sunk() {
  const dir = stack.cyrus.spool;
  let names;
  try { names = readdirSync(dir).filter((n) => n.endsWith(".json")).sort(); } catch { return []; }
  return names.map((n) => {
    const env = JSON.parse(readFileSync(join(dir, n), "utf8"));
    return { ...env, text: readFileSync(join(dir, n.replace(/\.json$/, ".eml")), "latin1") };
  });
}

export const PNG_1X1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

// -- run -----------------------------------------------------------------------------
// Runs the tests registered with test(): the stack, Chromium, TAP, the
// metrics as a comment (and to METRICS_OUT); exits with the result.
export async function run() {
  console.log(`1..${tests.length}`);
  let failed = 0;
  try {
    stack = await startStack();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu",
      "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"] });
    if (SHOTS) mkdirSync(SHOTS, { recursive: true });
  } catch (e) {
    diag(e.stack || e);
    tests.forEach((t, i) => console.log(`not ok ${i + 1} - ${t.name}`));
    if (stack) await stack.stop();
    process.exit(1);
  }
  for (const [i, t] of tests.entries()) {
    // ONLY=text runs just the tests whose names hold it (while working on them).
    if (process.env.ONLY && !t.name.includes(process.env.ONLY)) t.skip = "not selected by ONLY";
    if (t.skip) { console.log(`ok ${i + 1} - ${t.name} # SKIP ${t.skip}`); continue; }
    try {
      await t.fn();
      console.log(`ok ${i + 1} - ${t.name}`);
    } catch (e) {
      failed++;
      console.log(`not ok ${i + 1} - ${t.name}`);
      diag(e.stack || e);
    }
  }
  diag(`metrics: ${JSON.stringify(metrics)}`);
  if (process.env.METRICS_OUT) writeFileSync(process.env.METRICS_OUT, JSON.stringify(metrics, null, 1));
  await browser.close();
  await stack.stop();
  process.exit(failed ? 1 : 0);
}
