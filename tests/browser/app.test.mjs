// Browser tests of the mail app in www/: Debian's Chromium driven by
// playwright-core against the real stack (Cyrus with the demo mail,
// lighttpd, the responders, pushd). Prints TAP for automake's tap-driver.
//   node tests/browser/app.test.mjs          (SCREENSHOTS=1 also writes docs/screenshots/)
// The writing of mail has its own file, compose.test.mjs; both use lib.mjs.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { createServer } from "node:http";
import { SRC, test, assert, until, stack, metrics, newPage, signIn, row, shot, jmapIn, sendAs, findEmail, putSettings, PNG_1X1, run } from "./lib.mjs";

// Sending without the Undo delay (compose.test.mjs tests the delay).
async function signInNoDelay(page, who) {
  await signIn(page, who);
  await putSettings(page, { sendDelay: 0 });
  await page.reload();
  await page.waitForSelector("#list .row[data-id]");
}

// -- the tests --------------------------------------------------------------------------

test("catalogues: every key the code uses is in English", async () => {
  // That every other catalogue has every English key, each plural form of
  // its language and the same placeholders: tests/js/i18n.test.js.
  const cats = { en: JSON.parse(readFileSync(join(SRC, "www", "i18n", "en.json"), "utf8")) };
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
  // The read messages are folded (reader.test.mjs): the one with the PDF opens.
  const withPdf = page.locator("#reader-body article.msg", { hasText: "Fair point" });
  if (await withPdf.evaluate((m) => m.classList.contains("folded"))) await withPdf.locator(".msg-toggle").click();
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
  const proxied = page.waitForRequest((r) => r.url().includes("/api/image?url="), { timeout: 10000 });
  await page.click("button.show-images");
  await proxied;
  await page.waitForTimeout(500);
  const img = page.requests.filter((u) => u.includes("/api/image?url="));
  assert(img.some((u) => decodeURIComponent(u).includes("http://images.example.invalid/x.png")), `image via the proxy: ${img}`);
  // The mail's own /api/image URLs (in <video>, SVG <image>, an escaped
  // CSS url()) never load, asked or not: only the app builds proxy URLs.
  assert(!img.some((u) => /(video|svg|css)\.png/.test(decodeURIComponent(u))), `no proxy URL from the mail itself: ${img}`);
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
  // The pointer on the toast stops its 10 s (and keeps each one below
  // in view however slow the machine is); off it, they start again.
  await page.hover("#toast");
  await page.waitForFunction(() => [...document.querySelectorAll("#list .row")].some((r) => /Planned maintenance/.test(r.textContent) && r.querySelector(".flag")));
  await page.waitForTimeout(10500);
  assert(await page.isVisible("#toast button"), "the toast stays while the pointer is on it");
  await page.click("#toast button");
  await page.waitForFunction(() => [...document.querySelectorAll("#list .row")].some((r) => /Planned maintenance/.test(r.textContent) && !r.querySelector(".flag")));
  // delete with undo
  await row(page, "Planned maintenance").click();
  await page.click("[data-act=trash]");
  await page.waitForSelector("#toast:not([hidden]) >> text=Moved to Trash");
  await page.hover("#toast");
  await page.waitForFunction(() => ![...document.querySelectorAll("#list .row")].some((r) => /Planned maintenance/.test(r.textContent)));
  await page.click("#toast button");
  await row(page, "Planned maintenance").waitFor();
  // move by drag and drop into Archive, then undo
  await row(page, "Planned maintenance").dragTo(page.locator(".folder[data-role=archive]"));
  await page.waitForSelector("#toast:not([hidden]) >> text=Moved to Archive");
  await page.hover("#toast");
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
  // Each folder load below gets the toast's whole 10 s: the pointer on it
  // stops the time, leaving it starts the time again from the beginning.
  await page.hover("#toast");
  await page.click(".folder[data-role=junk]");
  await row(page, "Planned maintenance").waitFor();
  await page.hover("#toast");
  await page.click(".folder[data-role=inbox]");
  await page.click("#toast button");
  await row(page, "Planned maintenance").waitFor();
  // several at once: Ctrl-click two rows, archive both, undo
  await row(page, "Planned maintenance").click();
  await row(page, "Holiday schedule").click({ modifiers: ["Control"] });
  assert(await page.locator("#list .row.selected").count() === 2, "two selected");
  await page.click("[data-act=archive]");
  await page.waitForSelector("#toast:not([hidden]) >> text=2 archived");
  // Undo, slow to get through (its Email/set, the first after the click,
  // held 2.5 s), and a newer action meanwhile, a delete: its toast and
  // Undo stay; "Undone" does not take their place when the undo is through.
  let hold = true;
  await page.route("**/api/jmap", async (route) => {
    if (hold && (route.request().postData() || "").includes('"Email/set"')) {
      hold = false;
      await new Promise((done) => setTimeout(done, 2500));
    }
    await route.continue();
  });
  await page.click("#toast button");
  await row(page, "Reminder: dentist").click();
  await page.keyboard.press("#");
  await page.waitForSelector("#toast:not([hidden]) >> text=Moved to Trash");
  await row(page, "Planned maintenance").waitFor();
  await row(page, "Holiday schedule").waitFor();
  await page.waitForTimeout(1000);
  const last = await page.textContent("#toast");
  assert(/Moved to Trash/.test(last), `the newer toast stays after the slow undo (${last})`);
  await page.unroute("**/api/jmap");
  // then empty the Trash (asks first; no undo)
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
  const streaming = bob.waitForResponse((r) => r.url().includes("/api/events"));
  await signIn(bob, "bob");
  await streaming;   // the event stream is open
  const alice = await newPage();
  await signInNoDelay(alice, "alice");
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
  await alice.waitForFunction(() => /Drafts/.test(document.querySelector("#list-title").textContent)
    && !document.querySelector("#list .row.loading"));
  await alice.waitForTimeout(300);
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
  assert((await page.locator(".composer [data-field=to] .chip-edit").allTextContents()).some((c) => /Dave/.test(c)), "reply goes to the sender");
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
  assert((await page.locator(".composer [data-field=to] .chip-edit").allTextContents()).some((c) => /Dave/.test(c)), "with its recipient");
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
  await page.waitForSelector(".composer [role=alert] >> text=big.bin is too large");
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

test("live: a reply into an open conversation updates its row's count without a reload", async () => {
  const carol = await newPage();
  await signIn(carol, "carol");
  assert(await carol.getAttribute("#threads", "aria-pressed") === "true", "conversation view on");
  await carol.evaluate(() => { window.notReloaded = true; });
  const bob = await newPage();
  await signIn(bob, "bob");
  await sendAs(bob, "carol@example.test", "Count me live", "The first of two.");
  const first = row(carol, "Count me live");
  await first.waitFor({ timeout: 30000 });
  assert(await first.locator(".n").count() === 0, "one message: no count");
  const [, [, got]] = await jmapIn(carol, [
    ["Email/query", { accountId: "$ACC", filter: { subject: "Count me live" } }, "q"],
    ["Email/get", { accountId: "$ACC", "#ids": { resultOf: "q", name: "Email/query", path: "/ids" }, properties: ["messageId"] }, "g"]]);
  const mid = got.list[0].messageId;
  await sendAs(bob, "carol@example.test", "Re: Count me live", "The second.", { inReplyTo: mid, references: mid });
  // The conversation's row, its count with the live refresh, not from a
  // reload or a reopened folder. Which of the two stands for it is the
  // newest by receivedAt, and two mails delivered within one second tie
  // (Cyrus keeps seconds): the row may show either subject.
  const counted = () => carol.locator("#list .row[data-id]", { hasText: "Count me live" }).locator(".n", { hasText: "2" });
  try {
    await counted().waitFor({ timeout: 30000 });
  } catch (e) {
    const [[, q]] = await jmapIn(carol, [["Email/query", { accountId: "$ACC", filter: { subject: "Count me live" }, collapseThreads: true }, "q"]]);
    throw new Error(`no count of 2 on the row (the server has ${q.ids.length} conversation(s)): ${await carol.textContent("#list")}`.slice(0, 600));
  }
  assert(await carol.evaluate(() => window.notReloaded === true), "the page was not reloaded");
  assert(carol.errors.length === 0, carol.errors.join("; "));
  await bob.context().close();
  await carol.context().close();
});

test(`virtual list: ${Number(process.env.BULK || 2000)} more messages stay smooth (BULK=20000 for the full size)`, async () => {
  const n = Number(process.env.BULK || 2000), batch = 100;
  const page = await newPage();
  await signIn(page, "carol");
  // Fill carol's inbox through postern's own /api/jmap, batch emails a
  // call: one Email/set of 2000 takes Cyrus some 40 s on an idle machine
  // and more than upstream_timeout (60 s) on a busy one, where the test
  // failed on postern's 504 instead of testing the list. The slowest
  // call's time is a metric: it should stay far below that.
  const filled = await page.evaluate(async ([n, batch]) => {
    const post = async (calls) => (await fetch("/api/jmap", { method: "POST", headers: { "Content-Type": "application/json", "X-Postern-CSRF": "1" },
      body: JSON.stringify({ using: ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:mail"], methodCalls: calls }) })).json();
    const s = await (await fetch("/api/auth/session")).json();
    const acc = s.primaryAccounts["urn:ietf:params:jmap:mail"];
    const boxes = (await post([["Mailbox/get", { accountId: acc }, "m"]])).methodResponses[0][1].list;
    const inbox = boxes.find((b) => b.role === "inbox").id;
    let made = 0, slowest = 0;
    for (let k = 0; k < n; k += batch) {
      const create = {};
      for (let i = k; i < Math.min(n, k + batch); i++) create["c" + i] = { mailboxIds: { [inbox]: true }, keywords: { $seen: true },
        from: [{ name: "Bulk Sender", email: "bulk@example.test" }], to: [{ email: s.username }], subject: `Bulk message ${i}`,
        receivedAt: new Date(Date.UTC(2020, 0, 1) + i * 60000).toISOString().replace(/\.\d+Z$/, "Z"),
        bodyValues: { b: { value: `Body of bulk message ${i}` } }, textBody: [{ partId: "b", type: "text/plain" }] };
      const t = performance.now();
      const r = await post([["Email/set", { accountId: acc, create }, "s"]]);
      slowest = Math.max(slowest, performance.now() - t);
      const created = r.methodResponses?.[0]?.[1]?.created;
      if (!created) return { made: `${made}, then ${JSON.stringify(r).slice(0, 300)}` };
      made += Object.keys(created).length;
    }
    return { made, slowest: Math.round(slowest) };
  }, [n, batch]);
  assert(filled.made === n, `created ${filled.made} of ${n}`);
  metrics.bulkSlowestCallMs = filled.slowest;
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

test("quota: no storage meter where the server has no JMAP Quota (Cyrus)", async () => {
  const page = await newPage();
  const bodies = [];
  page.on("request", (r) => { if (r.url().endsWith("/api/jmap")) bodies.push(r.postData() || ""); });
  await signIn(page, "alice");
  await page.waitForFunction(() => document.body.dataset.ready === "1");
  await page.waitForLoadState("networkidle");
  assert(await page.getByRole("meter").count() === 0 && await page.locator("#quota").isHidden(), "no meter");
  assert(bodies.length > 0 && !bodies.some((b) => b.includes("Quota") || b.includes("jmap:quota")),
    "neither Quota/get nor the capability was sent");
  await page.context().close();
});

test("Arabic: the app is laid out right to left, its controls named in Arabic", async () => {
  const ar = JSON.parse(readFileSync(join(SRC, "www", "i18n", "ar.json"), "utf8"));
  const page = await newPage();
  await signIn(page, "bob");
  await putSettings(page, { language: "ar" });
  try {
    await page.reload();
    await page.waitForSelector("#list .row[data-id]");
    assert(await page.getAttribute("html", "dir") === "rtl" && await page.getAttribute("html", "lang") === "ar", "html dir and lang");
    // Found as a screen reader finds them, by role and Arabic name.
    await page.getByRole("button", { name: ar.signout }).waitFor();
    await page.getByRole("navigation", { name: ar["nav.folders"] }).waitFor();
    // The folders, at the start of the line, are on the right.
    const nav = await page.locator("#folders-pane").boundingBox();
    const list = await page.locator("#list-pane").boundingBox();
    assert(nav.x > list.x, `folders right of the list: ${nav.x} > ${list.x}`);
    await shot(page, "rtl");
  } finally {
    await putSettings(page, { language: "" });
    await page.context().close();
  }
});

test("settings: kept by the server for the account, not the browser; theme, density, language, signature", async () => {
  const page = await newPage();
  await signIn(page, "carol");
  assert(await page.getAttribute("html", "data-theme") === null, "the system's theme at first");
  await page.click("#settings-open");
  await page.waitForSelector("#settings[open]");
  await shot(page, "settings");
  await page.selectOption("#settings-form select[name=theme]", "dark");
  await page.selectOption("#settings-form select[name=density]", "compact");
  await page.selectOption("#settings-form select[name=language]", "de");
  await page.fill("#settings-form textarea[name=identitySignature]", "Carol Chen\nMobile");
  await page.uncheck("#settings-form input[name=threads]");
  await page.click("#settings-save");
  await page.waitForFunction(() => !document.querySelector("#settings").open);
  await page.waitForFunction(() => document.querySelector("#signout").textContent === "Abmelden");
  assert(await page.getAttribute("html", "data-theme") === "dark", "dark theme applied");
  assert(await page.getAttribute("html", "data-density") === "compact", "compact density applied");
  const rowH = await row(page, "").evaluate((el) => el.getBoundingClientRect().height);
  assert(rowH < 50, `compact rows (${rowH}px)`);
  const stored = await (await page.request.get(stack.url + "/api/auth/settings")).json();
  assert(stored.theme === "dark" && stored.language === "de" && stored.identities["carol@example.test"]?.signature === "Carol Chen\nMobile",
    `stored: ${JSON.stringify(stored)}`);
  assert(stored.threads === false && await page.getAttribute("#threads", "aria-pressed") === "false", "conversation view off");
  // A reload keeps them.
  await page.reload();
  await page.waitForSelector("#list .row[data-id]");
  assert((await page.textContent("#folders")).includes("Posteingang"), "German after a reload");
  // The local copy is only a cache: a wrong one is overruled by the server.
  await page.evaluate(() => localStorage.setItem("postern.settings.cache", JSON.stringify({ language: "fr", theme: "light" })));
  await page.reload();
  await page.waitForSelector("#list .row[data-id]");
  await page.waitForFunction(() => document.body.dataset.ready === "1");
  assert(await page.textContent("#signout") === "Abmelden", "the server's language wins over the cache");
  assert(await page.getAttribute("html", "data-theme") === "dark", "the server's theme wins over the cache");
  // The signature goes into a new message.
  await page.keyboard.press("c");
  await page.waitForSelector(".composer");
  assert((await page.inputValue(".composer textarea")).startsWith("\n-- \nCarol Chen\nMobile"), `signature: ${JSON.stringify(await page.inputValue(".composer textarea"))}`);
  await page.click(".composer button:has-text('Verwerfen')");
  const dates = await page.locator("#list .row[data-id] .date").allTextContents();
  assert(dates.some((d) => /^\d{1,2}\. [A-ZÄÖÜ][a-zäöü]+\.?$/.test(d)), `German short dates: ${dates.slice(0, 5)}`);
  // Signing out forgets the cached copy and the session.
  await page.click("#signout");
  await page.waitForSelector("#signin-form input[name=username]:visible");
  assert(await page.evaluate(() => localStorage.getItem("postern.settings.cache")) === null, "the cache is gone after sign-out");
  const r = await page.request.get(stack.url + "/api/auth/session");
  assert(r.status() === 401, "signed out on the server");
  await page.context().close();
  // A new browser (nothing stored locally) gets them from the server.
  const fresh = await newPage();
  await signIn(fresh, "carol");
  await fresh.waitForFunction(() => document.querySelector("#signout").textContent === "Abmelden");
  assert(await fresh.getAttribute("html", "data-theme") === "dark", "dark in a new browser");
  assert(await fresh.getAttribute("html", "lang") === "de", "lang=de in a new browser");
  // Another user does not get carol's settings.
  const bob = await newPage();
  await signIn(bob, "bob");
  assert(await bob.getAttribute("html", "data-theme") === null && await bob.textContent("#signout") === "Sign out", "bob keeps his own");
  await bob.context().close();
  // A refused save says why and changes nothing.
  await fresh.route("**/api/auth/settings", (r) => (r.request().method() === "PUT"
    ? r.fulfill({ status: 400, contentType: "application/json", body: JSON.stringify({ error: "invalid_settings", message: "The setting \"theme\" must be system, light or dark." }) })
    : r.continue()));
  await fresh.click("#settings-open");
  await fresh.selectOption("#settings-form select[name=theme]", "light");
  await fresh.click("#settings-save");
  await fresh.waitForSelector("#settings-error:not([hidden])");
  assert((await fresh.textContent("#settings-error")).includes("must be system, light or dark"), "the server's reason is shown");
  assert(await fresh.getAttribute("html", "data-theme") === "dark", "nothing applied");
  await fresh.unroute("**/api/auth/settings");
  await fresh.click("#settings-cancel");
  // Back to the defaults, for the tests that follow.
  const put = await fresh.request.put(stack.url + "/api/auth/settings", { data: {}, headers: { "X-Postern-CSRF": "1" } });
  assert(put.status() === 200, "reset");
  await fresh.context().close();
});

test("folders: create (nested), rename, delete with confirmation; role folders refused; server errors shown", async () => {
  const page = await newPage();
  await signIn(page, "bob");
  assert(await page.isDisabled("#folder-delete") && await page.isDisabled("#folder-rename"), "no rename or delete for Inbox");
  await page.click("#folder-new");
  await page.waitForSelector("#folder-dialog[open]");
  await page.fill("#folder-form input[name=name]", "Receipts");
  await page.click("#folder-ok");
  const receipts = page.locator(".folder", { hasText: "Receipts" });
  await receipts.waitFor();
  await receipts.click();
  await page.click("#folder-new");
  assert(await page.inputValue("#folder-form select[name=parent]") === await receipts.getAttribute("data-id"), "the open folder is the parent");
  await page.fill("#folder-form input[name=name]", "2026");
  await page.click("#folder-ok");
  const child = page.locator(".folder", { hasText: "2026" });
  await child.waitFor();
  // The new folder may be drawn once before the server's answer places
  // it under its parent.
  await until(async () => await child.evaluate((el) => getComputedStyle(el).getPropertyValue("--depth").trim()) === "1",
    "2026 nested under Receipts", 10000);
  // The same name again next to it: the server refuses, the dialog says so.
  await page.click("#folder-new");
  await page.fill("#folder-form input[name=name]", "2026");
  await page.click("#folder-ok");
  await page.waitForSelector("#folder-error:not([hidden])");
  const err = await page.textContent("#folder-error");
  assert(err.length > 10, `the refusal is shown: ${err}`);
  await page.click("#folder-cancel");
  await child.click();
  await page.click("#folder-rename");
  await page.fill("#folder-form input[name=name]", "Year 2026");
  await page.click("#folder-ok");
  await page.locator(".folder", { hasText: "Year 2026" }).waitFor();
  // Deleting a folder with a folder inside is refused by the server.
  await receipts.click();
  page.acceptDialogs = true;
  await page.click("#folder-delete");
  await page.waitForSelector("#toast:not([hidden]) >> text=has folders inside");
  // Dismissing the confirmation keeps the folder.
  await page.locator(".folder", { hasText: "Year 2026" }).click();
  page.acceptDialogs = false;
  await page.click("#folder-delete");
  assert(page.dialogs.at(-1).includes("Year 2026"), `asked first: ${page.dialogs.at(-1)}`);
  await page.waitForTimeout(300);
  assert(await page.locator(".folder", { hasText: "Year 2026" }).count() === 1, "kept when not confirmed");
  page.acceptDialogs = true;
  await page.click("#folder-delete");
  await page.waitForSelector("#toast:not([hidden]) >> text=deleted");
  await page.locator(".folder", { hasText: "Year 2026" }).waitFor({ state: "detached" });
  await receipts.click();
  await page.click("#folder-delete");
  await receipts.waitFor({ state: "detached" });
  const names = (await jmapIn(page, [["Mailbox/get", { accountId: "$ACC", properties: ["name"] }, "m"]]))[0][1].list.map((m) => m.name);
  assert(!names.includes("Receipts") && !names.includes("Year 2026"), `gone on the server: ${names}`);
  assert(page.errors.length === 0, `no page errors: ${page.errors}`);
  await page.context().close();
});

test("writing: rich text goes out as multipart/alternative with a sanitised HTML part", async () => {
  const alice = await newPage();
  await signInNoDelay(alice, "alice");
  await alice.click("#compose");
  await alice.waitForSelector(".composer");
  await alice.click(".formatbar > button[aria-pressed=false]");
  await alice.waitForSelector(".composer .rich:visible");
  await alice.fill(".composer input[name=to]", "bob@example.test");
  await alice.fill(".composer input[name=subject]", "Rich text from the browser test");
  await alice.click(".composer .rich");
  await alice.keyboard.type("Hello ");
  await alice.click("[data-cmd=bold]");
  await alice.keyboard.type("bold words");
  await alice.click("[data-cmd=bold]");
  await alice.keyboard.press("Enter");
  await alice.click("[data-cmd=insertUnorderedList]");
  await alice.keyboard.type("first item");
  await shot(alice, "composer-rich");
  // Hostile markup in the editor (as a paste could bring) never leaves it.
  await alice.evaluate(() => document.querySelector(".composer .rich").insertAdjacentHTML("beforeend",
    '<p>tail<img src="http://images.example.invalid/t.png" onerror="alert(1)"><a href="javascript:alert(2)">js</a><a href="https://example.org/">ok link</a></p>'));
  await alice.click(".composer button.primary");
  await alice.waitForSelector("#toast:not([hidden]) >> text=Message sent", { timeout: 20000 });
  const bob = await newPage();
  await signIn(bob, "bob");
  const e = await findEmail(bob, "Rich text from the browser test");
  const types = (e.bodyStructure.subParts || []).map((p) => p.type);
  assert(e.bodyStructure.type === "multipart/alternative" && types.join() === "text/plain,text/html", `structure ${e.bodyStructure.type} ${types}`);
  const html = e.bodyValues[e.htmlBody[0].partId].value;
  const text = e.bodyValues[e.textBody[0].partId].value;
  assert(/<b>bold words<\/b>/.test(html) && /<li>first item<\/li>/.test(html), `formatting kept: ${html}`);
  assert(/href="https:\/\/example\.org\/"/.test(html), "a safe link kept");
  assert(!/script|onerror|javascript:|example\.invalid|<img/i.test(html), `hostile markup removed: ${html}`);
  assert(/Hello bold words/.test(text) && /first item/.test(text), `the text part: ${text}`);
  await row(bob, "Rich text from the browser test").click();
  const fr = bob.frameLocator("iframe.mailframe");
  await fr.locator("b", { hasText: "bold words" }).waitFor();
  await alice.context().close();
  await bob.context().close();
});

test("writing: a rich-text draft is saved with its HTML and reopens in the editor", async () => {
  const page = await newPage();
  await signIn(page, "alice");
  await page.click("#compose");
  await page.click(".formatbar > button[aria-pressed=false]");
  await page.fill(".composer input[name=subject]", "Rich draft test");
  await page.click(".composer .rich");
  await page.click("[data-cmd=italic]");
  await page.keyboard.type("slanted draft");
  await page.waitForSelector(".composer .status >> text=Draft saved", { timeout: 10000 });
  await page.click(".composer button:has-text('Close')");
  await page.click(".folder[data-role=drafts]");
  await row(page, "Rich draft test").click();
  await page.waitForSelector(".composer .rich:visible");
  assert(await page.locator(".composer .rich i", { hasText: "slanted draft" }).count() === 1, "the italic text is back in the editor");
  await page.click(".composer button:has-text('Discard')");
  await page.waitForSelector("#toast:not([hidden]) >> text=Draft discarded");
  await page.context().close();
});

test("writing: with more than one identity a From choice appears and the submission uses it", async () => {
  const page = await newPage();
  const seen = {};
  // Cyrus 3.6 keeps one identity per account (no Identity/set), so the
  // second one is added to Identity/get here; the send is checked for the
  // chosen identity, then handed to Cyrus under the real id.
  await page.route("**/api/jmap", async (route) => {
    const body = JSON.parse(route.request().postData() || "{}");
    const calls = body.methodCalls || [];
    const sub = calls.find((c) => c[0] === "EmailSubmission/set");
    if (sub) {
      const s = Object.values(sub[1].create)[0];
      const em = Object.values(calls.find((c) => c[0] === "Email/set")[1].create)[0];
      seen.identityId = s.identityId;
      seen.from = em.from;
      s.identityId = "alice@example.test";
      return route.continue({ postData: JSON.stringify(body) });
    }
    if (!calls.some((c) => c[0] === "Identity/get")) return route.continue();
    const res = await route.fetch().catch(() => route.fetch());  // a reset kept-alive connection
    const j = await res.json();
    for (const [name, args] of j.methodResponses) {
      if (name === "Identity/get") args.list.push({ id: "alice-work", name: "Alice at Work", email: "alice@example.test", mayDelete: true });
    }
    return route.fulfill({ response: res, json: j });
  });
  await signInNoDelay(page, "alice");
  await page.click("#compose");
  await page.waitForSelector(".composer select[name=from]");
  assert(await page.locator(".composer select[name=from] option").count() === 2, "both identities offered");
  await page.selectOption(".composer select[name=from]", "alice-work");
  await page.fill(".composer input[name=to]", "bob@example.test");
  await page.fill(".composer input[name=subject]", "Sent as the work identity");
  await page.fill(".composer textarea", "From work.");
  await page.click(".composer button.primary");
  await page.waitForSelector("#toast:not([hidden]) >> text=Message sent", { timeout: 20000 });
  assert(seen.identityId === "alice-work", `EmailSubmission identityId ${seen.identityId}`);
  assert(seen.from?.[0]?.name === "Alice at Work", `From ${JSON.stringify(seen.from)}`);
  const bob = await newPage();
  await signIn(bob, "bob");
  const e = await findEmail(bob, "Sent as the work identity");
  assert(e.from[0].name === "Alice at Work", `arrived from ${JSON.stringify(e.from)}`);
  await bob.context().close();
  // With one identity there is no choice to make.
  await page.unroute("**/api/jmap");
  await page.reload();
  await page.waitForSelector("#list .row[data-id]");
  await page.click("#compose");
  await page.waitForSelector(".composer .fromline");
  assert(await page.locator(".composer select[name=from]").count() === 0, "no From choice with one identity");
  await page.click(".composer button:has-text('Discard')");
  await page.context().close();
});

test("reading: cid: inline images are shown from /api/blob", async () => {
  const page = await newPage();
  await signIn(page, "carol");
  const blobId = await page.evaluate(async (b64) => {
    const s = await (await fetch("/api/auth/session")).json();
    const acc = s.primaryAccounts["urn:ietf:params:jmap:mail"];
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const r = await fetch(`/api/upload/${encodeURIComponent(acc)}`, { method: "POST", headers: { "Content-Type": "image/png", "X-Postern-CSRF": "1" }, body: bytes });
    return (await r.json()).blobId;
  }, PNG_1X1);
  assert(blobId, "uploaded");
  const [[, boxes]] = await jmapIn(page, [["Mailbox/get", { accountId: "$ACC", properties: ["role"] }, "m"]]);
  const inbox = boxes.list.find((m) => m.role === "inbox").id;
  const r = await jmapIn(page, [["Email/set", { accountId: "$ACC", create: { m: {
    mailboxIds: { [inbox]: true }, from: [{ name: "Designer", email: "designer@example.test" }], to: [{ email: "carol@example.test" }],
    subject: "Inline logo test", receivedAt: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
    bodyStructure: { type: "multipart/related", subParts: [
      { partId: "h", type: "text/html" },
      { blobId, type: "image/png", cid: "logo@example.test", disposition: "inline", name: "logo.png" }] },
    bodyValues: { h: { value: '<p>Our logo:</p><img id="logo" src="cid:logo@example.test" alt="logo">' } } } } }, "e"]]);
  assert(r[0][1].created?.m, `created: ${JSON.stringify(r[0][1]).slice(0, 300)}`);
  await row(page, "Inline logo test").waitFor({ timeout: 20000 });
  await row(page, "Inline logo test").click();
  const img = page.frameLocator("iframe.mailframe").locator("img#logo");
  await img.waitFor();
  const src = await img.getAttribute("src");
  assert(/\/api\/blob\/[^/]+\/[^/]+\/logo\.png\?accept=image%2Fpng&inline=1$/.test(src), `src ${src}`);
  await page.waitForFunction(() => {
    const i = document.querySelector("iframe.mailframe")?.contentDocument?.querySelector("img#logo");
    return i && i.complete && i.naturalWidth === 1;
  });
  await page.context().close();
});

test("reading: a mail's own <style> and style attributes are kept, with nothing remote loaded", async () => {
  const page = await newPage();
  await signIn(page, "carol");
  const [[, boxes]] = await jmapIn(page, [["Mailbox/get", { accountId: "$ACC", properties: ["role"] }, "m"]]);
  const inbox = boxes.list.find((m) => m.role === "inbox").id;
  const html = `<html><head><style>
    @import url("http://styles.example.invalid/x.css");
    @font-face { font-family: Remote; src: url(http://fonts.example.invalid/f.woff2); }
    .hl { color: rgb(200, 0, 0); font-family: Remote, serif; }
    td.cell { padding: 11px; background: url('http://images.example.invalid/bg.png') rgb(0, 0, 200); }
    #set { background-image: image-set("http://images.example.invalid/s.png" 1x); }
  </style></head><body>
  <p class="hl" id="styled">Red words</p>
  <p id="inline" style="font-weight: 700; border-left: 5px solid rgb(0, 128, 0); background-image: url(http://images.example.invalid/i.png)">Bold words</p>
  <table><tr><td class="cell" id="cell">cell</td></tr></table><div id="set">set</div></body></html>`;
  const r = await jmapIn(page, [["Email/set", { accountId: "$ACC", create: { m: {
    mailboxIds: { [inbox]: true }, from: [{ name: "Newsletter", email: "news@example.test" }], to: [{ email: "carol@example.test" }],
    subject: "Styled newsletter test", receivedAt: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
    bodyValues: { h: { value: html } }, htmlBody: [{ partId: "h", type: "text/html" }] } } }, "e"]]);
  assert(r[0][1].created?.m, `created: ${JSON.stringify(r[0][1]).slice(0, 300)}`);
  await row(page, "Styled newsletter test").waitFor({ timeout: 20000 });
  await row(page, "Styled newsletter test").click();
  await page.frameLocator("iframe.mailframe").locator("#styled").waitFor();
  await page.waitForTimeout(500);
  const got = await page.evaluate(() => {
    const d = document.querySelector("iframe.mailframe").contentDocument;
    const cs = (id) => d.defaultView.getComputedStyle(d.getElementById(id));
    return { color: cs("styled").color, weight: cs("inline").fontWeight, border: cs("inline").borderLeftColor,
      pad: cs("cell").paddingTop, bg: cs("cell").backgroundColor, bgImage: cs("cell").backgroundImage, setImage: cs("set").backgroundImage,
      styleTags: d.querySelectorAll("style, link").length, markup: d.documentElement.outerHTML };
  });
  assert(got.color === "rgb(200, 0, 0)", `the <style> rule applies: ${got.color}`);
  assert(got.weight === "700" && got.border === "rgb(0, 128, 0)", `the style attribute applies: ${got.weight} ${got.border}`);
  assert(got.pad === "11px" && got.bg === "rgb(0, 0, 200)", `table cell styles: ${got.pad} ${got.bg}`);
  assert(got.bgImage === "none" && got.setImage === "none", `remote backgrounds dropped: ${got.bgImage} ${got.setImage}`);
  assert(got.styleTags === 0 && !/example\.invalid/.test(got.markup), "no style element or remote URL in the frame");
  assert(!page.requests.some((u) => /example\.invalid/.test(u)), `nothing fetched from the mail's hosts: ${page.requests.filter((u) => /invalid/.test(u))}`);
  assert(page.errors.length === 0, `no page errors: ${page.errors}`);
  await shot(page, "styled-mail");
  await page.context().close();
});

test("reading: url() in SVG/MathML attributes loads nothing, even with the CSP switched off", async () => {
  // A second server on loopback stands for the sender's: it records every
  // request. The page runs without its CSP (bypassCSP), as under an
  // .htaccess whose host lacks mod_headers, so only the sanitiser stands
  // between the mail and the listener.
  const heard = [];
  const listener = createServer((q, res) => { heard.push(q.url); res.writeHead(204); res.end(); });
  await new Promise((r) => listener.listen(0, "127.0.0.1", r));
  const L = `http://127.0.0.1:${listener.address().port}`;
  const page = await newPage(undefined, { bypassCSP: true });
  try {
    await signIn(page, "carol");
    const [[, boxes]] = await jmapIn(page, [["Mailbox/get", { accountId: "$ACC", properties: ["role"] }, "m"]]);
    const inbox = boxes.list.find((m) => m.role === "inbox").id;
    const html = `<html><body><p id="words">Chart below</p>
    <svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="300" height="200">
      <defs>
        <linearGradient id="g"><stop offset="0" stop-color="url(${L}/stop-color)"/><stop offset="1" stop-color="rgb(0, 0, 200)"/></linearGradient>
        <marker id="m" markerWidth="4" markerHeight="4"><circle r="2" fill="url(${L}/marker-fill)"/></marker>
        <pattern id="pt" width="4" height="4" href="${L}/pattern-href" xlink:href="${L}/pattern-xlink"><rect width="2" height="2"/></pattern>
        <filter id="f"><feFlood flood-color="url(${L}/flood-color)"/><feImage href="${L}/feimage.png"/>
          <feDiffuseLighting lighting-color="url(${L}/lighting-color)"><feDistantLight/></feDiffuseLighting></filter>
        <path id="tp" d="M10 90 H290"/>
      </defs>
      <rect id="fill" width="20" height="20" fill="url(${L}/fill)"/>
      <rect width="20" height="20" x="25" stroke="url('${L}/stroke')"/>
      <rect width="20" height="20" x="50" mask='url("${L}/mask")'/>
      <rect width="20" height="20" x="75" clip-path="url(${L}/clip-path)"/>
      <rect width="20" height="20" x="100" filter="url(${L}/filter)"/>
      <path d="M0 40 L50 40 L90 60" marker-start="url(${L}/marker-start)" marker-mid="url(${L}/marker-mid)" marker-end="url(${L}/marker-end)" stroke="black"/>
      <rect width="20" height="20" x="125" color-profile="url(${L}/color-profile)" cursor="url(${L}/cursor.png), auto"/>
      <rect width="20" height="20" x="150" fill="URL(${L}/upper)" stroke="\\75 rl(${L}/css-escape)"/>
      <rect width="20" height="20" x="175" fill="&#117;&#x72;l(${L}/entities)" stroke="u&#x5c;rl(${L}/entity-escape)"/>
      <rect width="20" height="20" x="200" mask="url(  &quot;${L}/entity-quote&quot;  )" clip-path="url(${L}/comma), none"/>
      <rect width="20" height="20" x="225" style="fill: url(${L}/svg-style)"/>
      <rect id="local" width="20" height="20" x="250" fill="url(#g)"/>
      <image href="${L}/image-href.png" width="10" height="10"/><image xlink:href="${L}/image-xlink.png" width="10" height="10"/>
      <use href="${L}/use.svg#x"/>
      <text><textPath href="#tp">on a path</textPath><textPath href="${L}/textpath">remote path</textPath></text>
      <a href="${L}/svg-a"><text y="120">link</text></a>
      <rect width="5" height="5" y="150"><animateTransform attributeName="transform" type="scale" values="url(${L}/anim)"/></rect>
    </svg>
    <math><mi mathbackground="url(${L}/math)" href="${L}/math-href">x</mi></math>
    </body></html>`;
    const r = await jmapIn(page, [["Email/set", { accountId: "$ACC", create: { m: {
      mailboxIds: { [inbox]: true }, from: [{ name: "Charts", email: "charts@example.test" }], to: [{ email: "carol@example.test" }],
      subject: "SVG attribute test", receivedAt: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
      bodyValues: { h: { value: html } }, htmlBody: [{ partId: "h", type: "text/html" }] } } }, "e"]]);
    assert(r[0][1].created?.m, `created: ${JSON.stringify(r[0][1]).slice(0, 300)}`);
    await row(page, "SVG attribute test").waitFor({ timeout: 20000 });
    await row(page, "SVG attribute test").click();
    const fr = page.frameLocator("iframe.mailframe");
    await fr.locator("#words").waitFor();
    await page.waitForTimeout(1500);
    const port = String(listener.address().port);
    const srcdoc = async () => page.locator("iframe.mailframe").getAttribute("srcdoc");
    let doc = await srcdoc();
    assert(heard.length === 0, `the listener heard nothing before Show images: ${heard}`);
    assert(!doc.includes(port), `no listener URL in the srcdoc: ${(doc.match(new RegExp(`[^\\s<>]{0,60}${port}[^\\s<>]{0,30}`, "g")) || []).join(" | ")}`);
    assert(/url\(&quot;#g&quot;\)|url\("#g"\)/.test(doc), `a same-document gradient stays: ${doc.match(/id="local"[^>]*/)}`);
    assert(!page.requests.some((u) => u.includes(`:${port}/`) && !u.startsWith(stack.url)), "the page asked the listener nothing");
    // After Show images: only the app's own proxy URLs, never the listener
    // directly (the proxy itself refuses a loopback address).
    await page.getByRole("button", { name: "Show images" }).click();
    await fr.locator("#words").waitFor();
    await page.waitForTimeout(1500);
    doc = await srcdoc();
    const urls = doc.replace(/&amp;/g, "&").match(/https?:\/\/[^\s"'<>)&]+/g) || [];
    const outside = urls.filter((u) => !u.startsWith(stack.url + "/") && !u.startsWith("http://www.w3.org/"));
    assert(!outside.length, `after Show images only the app's URLs in the srcdoc: ${outside}`);
    const toListener = page.requests.filter((u) => u.includes(port) || decodeURIComponent(u).includes(L));
    assert(toListener.length && toListener.every((u) => u.startsWith(`${stack.url}/api/image?url=`)), `only /api/image for the listener's URLs: ${toListener}`);
    assert(heard.length === 0, `the listener heard nothing after Show images: ${heard}`);
    // The CSP really was off: the same frame loads the listener when the
    // page itself asks.
    await page.evaluate((u) => {
      const d = document.querySelector("iframe.mailframe").contentDocument;
      d.body.append(Object.assign(d.createElement("img"), { src: u }));
    }, `${L}/probe.png`);
    await new Promise((res) => setTimeout(res, 1000));
    assert(heard.length === 1 && heard[0] === "/probe.png", `without the CSP the frame can reach the listener: ${heard}`);
    assert(page.errors.length === 0, `no page errors: ${page.errors}`);
  } finally {
    await page.context().close();
    listener.close();
  }
});

test("live: without /api/events the app polls (interval lowered for the test) and new mail appears", async () => {
  const page = await newPage();
  let refused = 0;
  await page.addInitScript(() => { window.posternPollMs = 1500; });
  await page.route("**/api/events**", (r) => { refused++; return r.fulfill({ status: 503, contentType: "application/json", body: '{"error":"unavailable"}' }); });
  const tried = page.waitForResponse((r) => r.url().includes("/api/events"));
  await signIn(page, "carol");
  await tried;
  assert(refused >= 1, "the stream was tried and failed");
  const bob = await newPage();
  await signIn(bob, "bob");
  await sendAs(bob, "carol@example.test", "Arrives by polling", "No push here.");
  const t0 = Date.now();
  await row(page, "Arrives by polling").waitFor({ timeout: 20000 });
  metrics.pollArrival = Date.now() - t0;
  await bob.context().close();
  await page.context().close();
});

test("live: when /api/config promises no push (pushd down), the app polls and never opens /api/events", async () => {
  const page = await newPage();
  await page.addInitScript(() => { window.posternPollMs = 1500; });
  await page.route("**/api/config", async (r) => {
    const res = await r.fetch();
    const json = await res.json();
    json.features.push = false;
    await r.fulfill({ response: res, json });
  });
  await signIn(page, "carol");
  const bob = await newPage();
  await signIn(bob, "bob");
  await sendAs(bob, "carol@example.test", "Polled without pushd", "No stream tried.");
  await row(page, "Polled without pushd").waitFor({ timeout: 20000 });
  const streams = page.requests.filter((u) => u.includes("/api/events"));
  assert(streams.length === 0, `no event stream was asked for: ${streams}`);
  await bob.context().close();
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

await run();
