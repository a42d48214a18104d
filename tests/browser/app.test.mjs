// Browser tests of the mail app in www/: Debian's Chromium driven by
// playwright-core against the real stack (Cyrus with the demo mail,
// lighttpd, the responders, pushd). Prints TAP for automake's tap-driver.
//   node tests/browser/app.test.mjs          (SCREENSHOTS=1 also writes docs/screenshots/)
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import net from "node:net";

const SRC = process.env.POSTERN_SRCDIR || join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const SHOTS = process.env.SCREENSHOTS ? join(SRC, "docs", "screenshots") : null;

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
const test = (name, fn, opts = {}) => tests.push({ name, fn, ...opts });
const diag = (s) => console.log(String(s).split("\n").map((l) => `# ${l}`).join("\n"));
function assert(cond, msg) { if (!cond) throw new Error(msg || "assertion failed"); }

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
  return { url: `http://127.0.0.1:${port}`, root, stop: () => new Promise((r) => {
    proc.on("exit", () => { rmSync(root, { recursive: true, force: true }); r(); });
    proc.kill("SIGTERM");
    setTimeout(() => proc.kill("SIGKILL"), 15000).unref();
  }) };
}

// -- helpers -------------------------------------------------------------------------
let stack, browser;
const USERS = { alice: "alice-demo-pass", bob: "bob-demo-pass", carol: "carol-demo-pass" };
const metrics = {};

async function newPage(viewport = { width: 1280, height: 800 }) {
  const ctx = await browser.newContext({ viewport, locale: "en-US", timezoneId: "UTC" });
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

async function signIn(page, who) {
  await page.goto(stack.url + "/");
  await page.fill("input[name=username]", `${who}@example.test`);
  await page.fill("input[name=password]", USERS[who]);
  const t0 = Date.now();
  await page.click("#signin-form button[type=submit]");
  await page.waitForSelector("#list .row[data-id]");
  return Date.now() - t0;
}

const row = (page, text) => page.locator("#list .row[data-id]", { hasText: text }).first();
async function shot(page, name) { if (SHOTS) await page.screenshot({ path: join(SHOTS, `${name}.png`) }); }

// -- the tests --------------------------------------------------------------------------

test("catalogues: every key exists in every language", async () => {
  const dir = join(SRC, "www", "i18n");
  const cats = Object.fromEntries(readdirSync(dir).filter((f) => f.endsWith(".json"))
    .map((f) => [f.replace(".json", ""), JSON.parse(readFileSync(join(dir, f), "utf8"))]));
  assert(cats.en && cats.de && cats.fr, "en, de and fr exist");
  const all = new Set(Object.values(cats).flatMap((c) => Object.keys(c)));
  for (const [lang, c] of Object.entries(cats)) {
    const missing = [...all].filter((k) => !(k in c));
    assert(!missing.length, `${lang} lacks ${missing.join(", ")}`);
  }
  // Every key the code uses is in the English catalogue.
  const code = [join(SRC, "www", "app.js"), join(SRC, "www", "index.html"),
    ...["js", "js/views"].flatMap((d) => readdirSync(join(SRC, "www", d)).filter((f) => f.endsWith(".js") && f !== "i18n.js").map((f) => join(SRC, "www", d, f)))]
    .map((f) => readFileSync(f, "utf8")).join("\n");
  const used = [...code.matchAll(/\bt\("([a-zA-Z.]+)"|data-i18n(?:-label|-title|-placeholder)?="([a-zA-Z.]+)"/g)].map((m) => m[1] || m[2]);
  const lacking = used.filter((k) => !(k in cats.en) && !(`${k}.one` in cats.en));
  assert(!lacking.length, `en lacks ${lacking.join(", ")}`);
});

test("sign in: a wrong password is named, then alice signs in and sees her inbox", async () => {
  const page = await newPage();
  await page.goto(stack.url + "/");
  await page.fill("input[name=username]", "alice@example.test");
  await page.fill("input[name=password]", "wrong");
  await page.click("#signin-form button[type=submit]");
  await page.waitForSelector("#signin-error:not([hidden])");
  assert((await page.textContent("#signin-error")).includes("Wrong email address or password"), "wrong password message");
  await shot(page, "signin");
  // rate limited: the wait from Retry-After; the server down: said so
  await page.route("**/api/auth/login", (r) => r.fulfill({ status: 429, headers: { "Retry-After": "150", "Content-Type": "application/json" },
    body: JSON.stringify({ error: "rate_limited", message: "slow down" }) }));
  await page.click("#signin-form button[type=submit]");
  await page.waitForFunction(() => /wait 3 minutes/.test(document.querySelector("#signin-error").textContent));
  await page.unroute("**/api/auth/login");
  await page.route("**/api/auth/login", (r) => r.abort("connectionrefused"));
  await page.click("#signin-form button[type=submit]");
  await page.waitForFunction(() => /cannot be reached/.test(document.querySelector("#signin-error").textContent));
  await page.unroute("**/api/auth/login");
  const ms = await signIn(page, "alice");
  metrics.signinToInbox = ms;
  assert(await page.locator("#folders .folder[data-role=inbox][aria-current]").count() === 1, "inbox is current");
  assert(/Inbox/.test(await page.textContent("#folders")), "folder names");
  assert(/^\(\d+\) /.test(await page.title()), `unread count in the title: ${await page.title()}`);
  assert(page.errors.length === 0, page.errors.join("; "));
  await page.context().close();
});

test("reading: a thread opens whole, marked read, attachments listed", async () => {
  const page = await newPage();
  await signIn(page, "alice");
  await page.fill("#search", "subject:roadmap");
  await page.press("#search", "Enter");
  await row(page, "Q4 roadmap review").waitFor();
  const t0 = Date.now();
  await row(page, "Q4 roadmap review").click();
  await page.waitForSelector("#reader-body .msg");
  metrics.openMessage = Date.now() - t0;
  const n = await page.locator("#reader-body .msg").count();
  assert(n >= 3, `the whole thread is shown (${n})`);
  const att = page.locator(".attachments a", { hasText: "q4-roadmap.pdf" });
  assert(await att.count() === 1, "the attachment is listed");
  const href = await att.getAttribute("href");
  assert(/^\/api\/blob\/[^/]+\/[^/]+\/q4-roadmap\.pdf\?accept=application%2Fpdf/.test(href), href);
  const r = await page.request.get(stack.url + href);
  assert(r.status() === 200 && (await r.body()).subarray(0, 4).toString() === "%PDF", "the attachment downloads");
  await shot(page, "reader");
  await page.context().close();
});

test("hostile HTML: no script or handler runs, remote images only after asking, via /api/image", async () => {
  const page = await newPage();
  await signIn(page, "alice");
  await row(page, "Action required").click();
  const frame = page.locator("#reader-body iframe.mailframe");
  await frame.waitFor();
  const sandbox = await frame.getAttribute("sandbox");
  assert(!sandbox.includes("allow-scripts"), `sandbox without scripts: ${sandbox}`);
  await page.waitForTimeout(800);
  const doc = await frame.getAttribute("srcdoc");
  assert(!/<script|onerror|javascript:/i.test(doc), "script, handler and javascript: link removed");
  const fr = page.frameLocator("#reader-body iframe.mailframe");
  assert(/needs attention/.test(await fr.locator("body").innerText()), "the mail is shown");
  // The frame stayed where it was (the script would have navigated it away).
  const f = page.frames().find((x) => x !== page.mainFrame());
  assert(f && f.url() === "about:srcdoc", `frame not navigated: ${f && f.url()}`);
  assert(page.dialogs.length === 0, `no alert: ${page.dialogs}`);
  assert(!page.requests.some((u) => /example\.invalid/.test(u)), "nothing fetched from the mail's hosts");
  assert(!page.requests.some((u) => u.includes("/api/image")), "no image before asking");
  await shot(page, "html-mail");
  await page.click("button.show-images");
  await page.waitForFunction(() => performance.getEntriesByType("resource").some((e) => e.name.includes("/api/image?url=")) || true);
  await page.waitForTimeout(800);
  const img = page.requests.filter((u) => u.includes("/api/image?url="));
  assert(img.some((u) => decodeURIComponent(u).includes("http://images.example.invalid/x.png")), `image via the proxy: ${img}`);
  assert(!page.requests.some((u) => u.startsWith("http://images.example.invalid")), "never fetched directly");
  assert(page.dialogs.length === 0, "still no alert");
  assert(!(await page.evaluate(() => document.cookie.includes("postern"))), "session cookie is HttpOnly");
  await page.context().close();
});

test("search with operators: from:, is:flagged, has:attachment, in:", async () => {
  const page = await newPage();
  await signIn(page, "alice");
  const search = async (q) => {
    await page.fill("#search", q);
    await page.press("#search", "Enter");
    await page.waitForFunction((q) => document.querySelector("#list-title").textContent.includes(q), q);
    await page.waitForFunction(() => !document.querySelector("#list .row.loading"));
    await page.waitForTimeout(300);
    return page.locator("#list .row[data-id] .subject").allTextContents();
  };
  let s = await search("has:attachment from:erin");
  assert(s.length === 1 && s[0] === "Invoice 2026-118", `has:attachment from:erin → ${s}`);
  s = await search("is:flagged");
  assert(s.includes("Hello from Zürich") && s.includes("Invoice 2026-118") && !s.includes("Lunch on Thursday?"), `is:flagged → ${s}`);
  s = await search("in:junk prize");
  assert(s.length === 1 && /WON a prize/.test(s[0]), `in:junk → ${s}`);
  s = await search("from:erin before:2000-01-01");
  assert(s.length === 0 && await page.isVisible("#list-empty"), `before: → ${s}`);
  s = await search("from:erin after:2000-01-01 in:inbox");
  assert(s.includes("Invoice 2026-118") && !s.includes("Tax documents 2025"), `after: in: → ${s}`);
  s = await search("subject:\"Tax documents\"");
  assert(s.length === 1, `quoted subject across folders → ${s}`);
  await shot(page, "search");
  await page.context().close();
});

test("acting: flag, move by drag and drop, delete, each with undo", async () => {
  const page = await newPage();
  await signIn(page, "alice");
  // flag
  await row(page, "Planned maintenance").click();
  await page.click("[data-act=flag]");
  await page.waitForSelector("#toast:not([hidden])");
  await page.waitForFunction(() => [...document.querySelectorAll("#list .row")].some((r) => /Planned maintenance/.test(r.textContent) && r.querySelector(".flag")));
  await page.click("#toast button");
  await page.waitForFunction(() => [...document.querySelectorAll("#list .row")].some((r) => /Planned maintenance/.test(r.textContent) && !r.querySelector(".flag")));
  // delete with undo
  await row(page, "Planned maintenance").click();
  await page.click("[data-act=trash]");
  await page.waitForSelector("#toast:not([hidden]) >> text=Moved to Trash");
  await page.waitForFunction(() => ![...document.querySelectorAll("#list .row")].some((r) => /Planned maintenance/.test(r.textContent)));
  await page.click("#toast button");
  await row(page, "Planned maintenance").waitFor();
  // move by drag and drop into Archive, then undo
  await row(page, "Planned maintenance").dragTo(page.locator(".folder[data-role=archive]"));
  await page.waitForSelector("#toast:not([hidden]) >> text=Moved to Archive");
  await page.waitForFunction(() => ![...document.querySelectorAll("#list .row")].some((r) => /Planned maintenance/.test(r.textContent)));
  await page.click("#toast button");
  await row(page, "Planned maintenance").waitFor();
  // archive with the e key, find it in Archive, drag it back to the Inbox
  await row(page, "Planned maintenance").click();
  await page.locator("#list").focus();
  await page.keyboard.press("e");
  await page.waitForSelector("#toast:not([hidden]) >> text=Archived");
  await page.click(".folder[data-role=archive]");
  await row(page, "Planned maintenance").dragTo(page.locator(".folder[data-role=inbox]"));
  await page.waitForSelector("#toast:not([hidden]) >> text=Moved to Inbox");
  await page.click(".folder[data-role=inbox]");
  await row(page, "Planned maintenance").waitFor();
  // spam with the ! key, then undo
  await row(page, "Planned maintenance").click();
  await page.locator("#list").focus();
  await page.keyboard.press("!");
  await page.waitForSelector("#toast:not([hidden]) >> text=Marked as spam");
  await page.click(".folder[data-role=junk]");
  await row(page, "Planned maintenance").waitFor();
  await page.click(".folder[data-role=inbox]");
  await page.click("#toast button");
  await row(page, "Planned maintenance").waitFor();
  // several at once: Ctrl-click two rows, archive both, undo
  await row(page, "Planned maintenance").click();
  await row(page, "Holiday schedule").click({ modifiers: ["Control"] });
  assert(await page.locator("#list .row.selected").count() === 2, "two selected");
  await page.click("[data-act=archive]");
  await page.waitForSelector("#toast:not([hidden]) >> text=2 archived");
  await page.click("#toast button");
  await row(page, "Planned maintenance").waitFor();
  await row(page, "Holiday schedule").waitFor();
  // delete, then empty the Trash (asks first; no undo)
  await row(page, "Reminder: dentist").click();
  await page.keyboard.press("#");
  await page.waitForSelector("#toast:not([hidden]) >> text=Moved to Trash");
  await page.click(".folder[data-role=trash]");
  await row(page, "Reminder: dentist").waitFor();
  page.acceptDialogs = true;
  await page.click("#empty-trash");
  await page.waitForSelector("#toast:not([hidden]) >> text=deleted for good");
  await page.waitForSelector("#list-empty:not([hidden])");
  await page.context().close();
});

test("keyboard: j/k move, o opens, ? shows the help sheet", async () => {
  const page = await newPage();
  await signIn(page, "alice");
  await page.locator("#list").focus();
  await page.keyboard.press("j");
  await page.keyboard.press("j");
  await page.keyboard.press("k");
  const pos = await page.getAttribute("#list .row.focus", "data-pos");
  assert(pos === "0", `focus on the first row after j j k (${pos})`);
  await page.keyboard.press("j");
  const subject = await page.textContent("#list .row.focus .subject");
  await page.keyboard.press("o");
  await page.waitForSelector("#reader-body h2.subject");
  assert((await page.textContent("#reader-body h2.subject")).length > 0, "opened");
  assert((await page.textContent("#reader-body")).includes(subject.replace(/^Re: /, "")), `opened ${subject}`);
  await page.keyboard.press("?");
  await page.waitForSelector("#help[open]");
  assert((await page.textContent("#help")).includes("Next / previous message"), "help sheet");
  await shot(page, "help");
  await page.keyboard.press("Escape");
  await page.context().close();
});

test("sending: alice mails bob with an attachment; it arrives live in bob's open inbox", async () => {
  const bob = await newPage();
  await signIn(bob, "bob");
  await bob.waitForTimeout(1000);   // the event stream is open
  const alice = await newPage();
  await signIn(alice, "alice");
  await alice.keyboard.press("c");
  await alice.waitForSelector(".composer");
  await alice.fill(".composer input[name=to]", "bob@example.test");
  await alice.fill(".composer input[name=subject]", "Browser test with attachment");
  await alice.fill(".composer textarea[name=body]", "Hello Bob,\nhere is the file.\nAlice");
  await alice.setInputFiles(".composer input[type=file]", { name: "notes.txt", mimeType: "text/plain", buffer: Buffer.from("some notes\n") });
  await alice.waitForSelector(".att-list li:not(:has(progress))");
  await shot(alice, "composer");
  await alice.click(".composer button.primary");
  await alice.waitForSelector("#toast:not([hidden]) >> text=Message sent", { timeout: 20000 });
  const t0 = Date.now();
  await row(bob, "Browser test with attachment").waitFor({ timeout: 60000 });
  metrics.liveArrival = Date.now() - t0;
  assert(await row(bob, "Browser test with attachment").locator(".att").count() === 1, "attachment mark");
  assert(/^\(\d+\)/.test(await bob.title()), "bob's title counts unread");
  await row(bob, "Browser test with attachment").click();
  await bob.waitForSelector(".attachments a >> text=notes.txt");
  // alice's sent copy is in Sent, not in Drafts
  await alice.click(".folder[data-role=sent]");
  await row(alice, "Browser test with attachment").waitFor();
  await alice.click(".folder[data-role=drafts]");
  await alice.waitForTimeout(800);
  assert(await row(alice, "Browser test with attachment").count() === 0, "no draft left behind");
  await bob.context().close();
  await alice.context().close();
});

test("writing: reply is prefilled, drafts are saved as you type, discard removes them", async () => {
  const page = await newPage();
  await signIn(page, "alice");
  await row(page, "Hello from Zürich").click();
  await page.waitForSelector("#reader-body .msg");
  await page.keyboard.press("r");
  await page.waitForSelector(".composer");
  assert((await page.inputValue(".composer input[name=to]")).includes("dave@"), "reply goes to the sender");
  assert(await page.inputValue(".composer input[name=subject]") === "Re: Hello from Zürich", "Re: once");
  assert((await page.inputValue(".composer textarea")).includes("> Will do. Two bars, dark."), "quoted");
  await page.fill(".composer textarea", "Draft typed in the browser test");
  await page.waitForSelector(".composer .status >> text=Draft saved", { timeout: 10000 });
  await page.click(".composer button:has-text('Close')");
  await page.click(".folder[data-role=drafts]");
  await row(page, "Re: Hello from Zürich").waitFor();
  await row(page, "Re: Hello from Zürich").click();
  await page.waitForSelector(".composer");
  assert((await page.inputValue(".composer textarea")).startsWith("Draft typed in the browser test"), "the draft reopens in the composer");
  await page.click(".composer button:has-text('Discard')");
  await page.waitForSelector("#toast:not([hidden]) >> text=Draft discarded");
  await page.waitForFunction(() => ![...document.querySelectorAll("#list .row")].some((r) => /Hello from Zürich/.test(r.textContent)), null, { timeout: 10000 });
  await page.click(".folder[data-role=inbox]");
  await row(page, "Hello from Zürich").click();
  await page.waitForSelector("#reader-body .msg");
  await page.keyboard.press("f");
  await page.waitForSelector(".composer");
  assert(await page.inputValue(".composer input[name=subject]") === "Fwd: Re: Hello from Zürich", "forward subject");
  await page.click(".composer button:has-text('Discard')");
  await page.context().close();
});

test("writing: the upload cap of /api/config is enforced before uploading", async () => {
  const page = await newPage();
  await page.route("**/api/config", async (r) => {
    const res = await r.fetch();
    r.fulfill({ response: res, json: { ...(await res.json()), uploadMax: 1000 } });
  });
  await signIn(page, "alice");
  await page.click("#compose");
  await page.waitForSelector(".composer");
  await page.setInputFiles(".composer input[type=file]", { name: "big.bin", mimeType: "application/octet-stream", buffer: Buffer.alloc(5000) });
  await page.waitForSelector("#toast:not([hidden]) >> text=big.bin is too large");
  assert(!page.requests.some((u) => u.includes("/api/upload/")), "nothing uploaded");
  assert(await page.locator(".att-list li").count() === 0, "not attached");
  await page.click(".composer button:has-text('Discard')");
  await page.context().close();
});

test("live: one tab holds the event stream and shares it with the others", async () => {
  const a = await newPage();
  await signIn(a, "carol");
  const b = await a.context().newPage();
  const reqs = [];
  b.on("request", (r) => reqs.push(r.url()));
  await b.goto(stack.url + "/");
  await b.waitForSelector("#list .row[data-id]");
  await b.waitForTimeout(1500);
  assert(!reqs.some((u) => u.includes("/api/events")), "the second tab opened no stream of its own");
  assert(a.requests.some((u) => u.includes("/api/events")), "the first tab holds it");
  await a.context().close();
});

test("folders: a new nested folder appears live, indented under its parent", async () => {
  const page = await newPage();
  await signIn(page, "carol");
  await page.evaluate(async () => {
    const post = async (calls) => (await fetch("/api/jmap", { method: "POST", headers: { "Content-Type": "application/json", "X-Postern-CSRF": "1" },
      body: JSON.stringify({ using: ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:mail"], methodCalls: calls }) })).json();
    const s = await (await fetch("/api/auth/session")).json();
    const acc = s.primaryAccounts["urn:ietf:params:jmap:mail"];
    await post([["Mailbox/set", { accountId: acc, create: { p: { name: "Projects" }, c: { name: "Apollo", parentId: "#p" } } }, "m"]]);
  });
  const child = page.locator(".folder", { hasText: "Apollo" });
  await child.waitFor({ timeout: 20000 });
  const depth = await child.evaluate((el) => getComputedStyle(el).getPropertyValue("--depth").trim());
  assert(depth === "1", `indented (depth ${depth})`);
  const order = await page.locator(".folder .name").allTextContents();
  assert(order.indexOf("Apollo") === order.indexOf("Projects") + 1, `under its parent: ${order}`);
  assert(order[0] === "Inbox", `Inbox first: ${order}`);
  await page.context().close();
});

test(`virtual list: ${Number(process.env.BULK || 2000)} more messages stay smooth (BULK=20000 for the full size)`, async () => {
  const n = Number(process.env.BULK || 2000);
  const page = await newPage();
  await signIn(page, "carol");
  // Fill carol's inbox through postern's own /api/jmap (Email/set, 4000 a call).
  const made = await page.evaluate(async (n) => {
    const post = async (calls) => (await fetch("/api/jmap", { method: "POST", headers: { "Content-Type": "application/json", "X-Postern-CSRF": "1" },
      body: JSON.stringify({ using: ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:mail"], methodCalls: calls }) })).json();
    const s = await (await fetch("/api/auth/session")).json();
    const acc = s.primaryAccounts["urn:ietf:params:jmap:mail"];
    const boxes = (await post([["Mailbox/get", { accountId: acc }, "m"]])).methodResponses[0][1].list;
    const inbox = boxes.find((b) => b.role === "inbox").id;
    let made = 0;
    for (let k = 0; k < n; k += 4000) {
      const create = {};
      for (let i = k; i < Math.min(n, k + 4000); i++) create["c" + i] = { mailboxIds: { [inbox]: true }, keywords: { $seen: true },
        from: [{ name: "Bulk Sender", email: "bulk@example.test" }], to: [{ email: s.username }], subject: `Bulk message ${i}`,
        receivedAt: new Date(Date.UTC(2020, 0, 1) + i * 60000).toISOString().replace(/\.\d+Z$/, "Z"),
        bodyValues: { b: { value: `Body of bulk message ${i}` } }, textBody: [{ partId: "b", type: "text/plain" }] };
      const r = await post([["Email/set", { accountId: acc, create }, "s"]]);
      made += Object.keys(r.methodResponses[0][1].created || {}).length;
    }
    return made;
  }, n);
  assert(made === n, `created ${made} of ${n}`);
  const t0 = Date.now();
  await page.reload();
  await page.waitForSelector("#list .row[data-id]");
  metrics.bulkInboxMs = Date.now() - t0;
  metrics.bulkMessages = n;
  for (const frac of [0.5, 1]) {
    const t1 = Date.now();
    await page.evaluate((f) => { const l = document.querySelector("#list"); l.scrollTop = f * l.scrollHeight; }, frac);
    await page.waitForFunction(() => document.querySelector("#list .row[data-id]") && !document.querySelector("#list .row.loading"));
    metrics[`bulkJump${frac * 100}Ms`] = Date.now() - t1;
    const rows = await page.locator("#list .row").count();
    assert(rows <= 40, `rows in the DOM: ${rows}`);
  }
  await page.waitForFunction(() => /Bulk message 0$/.test([...document.querySelectorAll("#list .row[data-id] .subject")].pop()?.textContent || ""), null, { timeout: 10000 }).catch(() => {});
  const last = await page.evaluate(() => { const l = document.querySelector("#list"); return { top: l.scrollTop, h: l.scrollHeight, ch: l.clientHeight,
    subjects: [...document.querySelectorAll("#list .row[data-id]")].map((r) => `${r.dataset.pos}:${r.querySelector(".subject").textContent}`).slice(-3) }; });
  assert(/Bulk message 0$/.test(last.subjects[last.subjects.length - 1]), `the oldest at the end: ${JSON.stringify(last)}`);
  const frames = await page.evaluate(async () => {
    const l = document.querySelector("#list");
    l.scrollTop = 0;
    const times = [];
    let last = performance.now();
    for (let i = 0; i < 200; i++) {
      l.scrollTop += 120;
      await new Promise((r) => requestAnimationFrame(r));
      const now = performance.now(); times.push(now - last); last = now;
    }
    times.sort((a, b) => a - b);
    return { median: Math.round(times[100]), p95: Math.round(times[190]) };
  });
  metrics.scrollFrameMedianMs = frames.median;
  metrics.scrollFrameP95Ms = frames.p95;
  await page.context().close();
});

test("languages: German from the settings, dates in the locale; sign out", async () => {
  const page = await newPage();
  await page.addInitScript(() => localStorage.setItem("postern.settings", JSON.stringify({ language: "de" })));
  await signIn(page, "alice");
  assert((await page.textContent("#folders")).includes("Posteingang"), "German folder names");
  assert(await page.textContent("#signout") === "Abmelden", "German sign out");
  assert(await page.getAttribute("html", "lang") === "de", "lang=de");
  const dates = await page.locator("#list .row[data-id] .date").allTextContents();
  assert(dates.some((d) => /^\d{1,2}\. [A-ZÄÖÜ][a-zäöü]+\.?$/.test(d)), `German short dates: ${dates.slice(0, 5)}`);
  await page.click("#signout");
  await page.waitForSelector("#signin-form input[name=username]:visible");
  const r = await page.request.get(stack.url + "/api/auth/session");
  assert(r.status() === 401, "signed out on the server");
  await page.context().close();
});

test("phone layout: one pane at a time", async () => {
  const page = await newPage({ width: 390, height: 844 });
  await signIn(page, "alice");
  assert(await page.isVisible("#list-pane") && !(await page.isVisible("#reader-pane")) && !(await page.isVisible("#folders-pane")), "list only");
  await shot(page, "phone-list");
  await row(page, "Hello from Zürich").click();
  await page.waitForSelector("#reader-body .msg");
  assert(!(await page.isVisible("#list-pane")) && await page.isVisible("#reader-pane"), "reader only");
  await shot(page, "phone-reader");
  await page.click("#back");
  assert(await page.isVisible("#list-pane"), "back to the list");
  await page.click("#menu");
  assert(await page.isVisible("#folders-pane"), "folders");
  await page.context().close();
});

test("budgets: first load size (gzip) and the main screen", async () => {
  const page = await newPage();
  await signIn(page, "bob");
  const files = await page.evaluate(() => performance.getEntriesByType("resource").map((e) => e.name)
    .filter((u) => u.startsWith(location.origin) && !u.includes("/api/")));
  let raw = 0, gz = 0;
  const seen = new Set([stack.url + "/"]);
  for (const u of [stack.url + "/", ...files]) {
    if (seen.has(u) && u !== stack.url + "/") continue;
    seen.add(u);
    const body = await (await page.request.get(u)).body();
    raw += body.length;
    gz += gzipSync(body, { level: 9 }).length;
  }
  metrics.firstLoadFiles = seen.size;
  metrics.firstLoadRaw = raw;
  metrics.firstLoadGzip = gz;
  assert(gz < 150 * 1024, `first load ${gz} bytes gzip`);
  assert(await page.locator("#list .row").count() <= 40, "only the visible rows are in the DOM");
  await row(page, "Contract draft").click();
  await page.waitForSelector("#reader-body .msg");
  await page.waitForTimeout(300);
  await shot(page, "inbox");
  await page.emulateMedia({ colorScheme: "dark" });
  await page.waitForTimeout(200);
  await shot(page, "dark");
  await page.context().close();
});

// -- run -----------------------------------------------------------------------------
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
