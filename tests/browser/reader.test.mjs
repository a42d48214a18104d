// Browser tests of the reader and of how the app fits and reads to
// everyone (issue 17): quoted text folded, read messages folded, actions
// on each message, print, show original, attachment previews, toolbars
// that never wrap, the phone, and axe-core on the five screens in both
// themes. Debian's Chromium through playwright-core against the real
// stack; controls found by role and accessible name. Prints TAP.
//   node tests/browser/reader.test.mjs        (ONLY=text runs some)
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createRequire } from "node:module";
import { SRC, test, assert, until, stack, newPage, signIn, row, openRow, putSettings, jmapIn, searchable, run } from "./lib.mjs";

// axe-core, a test dependency (package.json; npm ci), never served by postern.
let AXE = null;
try { AXE = readFileSync(createRequire(join(SRC, "package.json")).resolve("axe-core/axe.min.js"), "utf8"); } catch { /* refused in axe() */ }

async function openThread(page, query, subject) {
  await page.fill("#search", query);
  await page.press("#search", "Enter");
  await row(page, subject).waitFor();
  await row(page, subject).click();
  await page.waitForSelector("#reader-body .msg");
}
// Opens every folded message of the thread.
async function openAll(page) {
  while (await page.locator("#reader-body article.msg.folded").count()) await page.locator("#reader-body article.msg.folded .msg-toggle").first().click();
}
// Opens one message if it is folded.
async function unfold(msg) {
  if (await msg.evaluate((e) => e.classList.contains("folded"))) await msg.locator(".msg-toggle").click();
}
const lastMsg = (page) => page.locator("#reader-body article.msg").last();

// A mail from Bob in the page's user's Inbox with these attachments
// ({name, type, body: a string of bytes 0-255}), uploaded through
// /api/upload; waits until the search finds it.
async function mailWith(page, subject, files) {
  const blobIds = await page.evaluate(async (files) => {
    const s = await (await fetch("/api/auth/session")).json();
    const acc = s.primaryAccounts["urn:ietf:params:jmap:mail"];
    return Promise.all(files.map(async (f) => {
      const r = await fetch(`/api/upload/${encodeURIComponent(acc)}`, { method: "POST",
        headers: { "Content-Type": f.type, "X-Postern-CSRF": "1" }, body: Uint8Array.from(f.body, (c) => c.charCodeAt(0)) });
      return (await r.json()).blobId;
    }));
  }, files);
  const [[, boxes]] = await jmapIn(page, [["Mailbox/get", { accountId: "$ACC", properties: ["role"] }, "m"]]);
  const inbox = boxes.list.find((m) => m.role === "inbox").id;
  const r = await jmapIn(page, [["Email/set", { accountId: "$ACC", create: { m: {
    mailboxIds: { [inbox]: true }, from: [{ email: "bob@example.test" }], to: [{ email: "alice@example.test" }],
    subject, bodyValues: { b: { value: "See the file." } }, textBody: [{ partId: "b", type: "text/plain" }],
    attachments: files.map((f, i) => ({ blobId: blobIds[i], type: f.type, name: f.name, disposition: "attachment" })) } } }, "e"]]);
  assert(r[0][1].created?.m, `made: ${JSON.stringify(r).slice(0, 300)}`);
  await searchable(page, { subject });
}

// A PDF with a page for each text (Helvetica, 48 pt) and a correct xref
// table. extra: more entries for the catalogue and the first page, and
// more objects, numbered from 4 + 2 × the pages.
function makePdf(texts, { catalog = "", page1 = "", objects = [] } = {}) {
  const objs = [null, `<< /Type /Catalog /Pages 2 0 R ${catalog}>>`,
    `<< /Type /Pages /Kids [${texts.map((_, i) => `${4 + 2 * i} 0 R`).join(" ")}] /Count ${texts.length} >>`,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"];
  texts.forEach((text, i) => {
    const content = `BT /F1 48 Tf 72 600 Td (${text}) Tj ET`;
    objs.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents ${5 + 2 * i} 0 R ` +
      `/Resources << /Font << /F1 3 0 R >> >> ${i ? "" : page1}>>`, `<< /Length ${content.length} >>\nstream\n${content}\nendstream`);
  });
  objs.push(...objects);
  let out = "%PDF-1.4\n";
  const at = [];
  for (let i = 1; i < objs.length; i++) { at.push(out.length); out += `${i} 0 obj\n${objs[i]}\nendobj\n`; }
  const xref = out.length;
  out += `xref\n0 ${objs.length}\n0000000000 65535 f \n` + at.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("");
  return out + `trailer\n<< /Size ${objs.length} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
}

// The dark pixels of the PDF frame's first drawn page (0 until drawn).
const inkOnPage = (frame) => frame.evaluate(() => {
  const c = document.querySelector(".page canvas");
  if (!c || !c.width) return 0;
  const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
  let n = 0;
  for (let i = 0; i < d.length; i += 4) if (d[i + 3] > 0 && d[i] < 128) n++;
  return n;
}).catch(() => 0);

// -- the reader -----------------------------------------------------------------------

test("focus is in the list after sign-in", async () => {
  const page = await newPage();
  await signIn(page, "alice");
  await until(() => page.evaluate(() => document.activeElement?.getAttribute("role") === "option" &&
    !!document.activeElement.closest("#list")), "focus on a row of the list", 5000);
  await page.context().close();
});

test("quoted text is folded behind a toggle; read messages of a thread are folded, the last open", async () => {
  const page = await newPage();
  await signIn(page, "alice");
  await openThread(page, "subject:roadmap", "Q4 roadmap review");
  const last = lastMsg(page);
  const text = await last.locator("pre.text").first().innerText();
  assert(/Looks good to me/.test(text), `the answer is shown: ${text}`);
  assert(!/^>/m.test(text) && !/wrote:/.test(text), `the quote is folded: ${text}`);
  const toggle = last.getByRole("button", { name: "Show quoted text" });
  assert(await toggle.getAttribute("aria-expanded") === "false", "the toggle says folded");
  await toggle.click();
  const shown = last.getByRole("button", { name: "Hide quoted text" });
  assert(await shown.getAttribute("aria-expanded") === "true", "the toggle says open");
  assert(/wrote:\n> Fair point/.test(await last.locator("pre.text.quoted").innerText()), "the quote is shown after the toggle");
  // Opened again, every message is read: all folded but the last.
  await row(page, "Q4 roadmap review").click();
  await until(async () => (await page.locator("#reader-body .msg.folded").count()) >= 1, "read messages folded");
  const n = await page.locator("#reader-body article.msg").count();
  const folded = await page.locator("#reader-body article.msg.folded").count();
  assert(folded === n - 1, `all but the last folded (${folded} of ${n})`);
  assert(!(await lastMsg(page).evaluate((e) => e.classList.contains("folded"))), "the last is open");
  const first = page.locator("#reader-body article.msg").first();
  await first.getByRole("button", { expanded: false }).click();
  await first.getByRole("toolbar", { name: "Actions on this message" }).waitFor();
  assert(/could you have a look/.test(await first.locator("pre.text").innerText()), "a folded message opens");
  // A link to that read, earlier message opens the thread with it open.
  const firstId = await first.getAttribute("data-id");
  assert(/\/thread\/[^/]+\/[^/]+$/.test(page.url()), `the thread's place names a message: ${page.url()}`);
  const linked = page.url().replace(/\/[^/]+$/, "/" + encodeURIComponent(firstId));
  const tab = await page.context().newPage();
  await tab.goto(linked);
  const named = tab.locator(`#reader-body article.msg[data-id="${firstId}"]`);
  await named.waitFor();
  assert(await named.getByRole("button", { name: /.+/, expanded: true }).count() >= 1 &&
    !(await named.evaluate((e) => e.classList.contains("folded"))), "the linked message is open, though read and not the last");
  await page.context().close();
});

test("an HTML reply's Gmail quote is folded inside the frame", async () => {
  const page = await newPage();
  await signIn(page, "bob");
  const html = `<div dir="ltr">The new text.</div><br><div class="gmail_quote"><div class="gmail_attr">On Mon, Alice wrote:<br></div>
    <blockquote class="gmail_quote" style="margin:0 0 0 .8ex">The old text.</blockquote></div>`;
  await page.evaluate(async (html) => {
    const s = await (await fetch("/api/auth/session")).json();
    const acc = s.primaryAccounts["urn:ietf:params:jmap:mail"];
    const call = async (calls) => (await (await fetch("/api/jmap", { method: "POST", headers: { "Content-Type": "application/json", "X-Postern-CSRF": "1" },
      body: JSON.stringify({ using: ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:mail"], methodCalls: calls }) })).json()).methodResponses;
    const [[, boxes]] = await call([["Mailbox/get", { accountId: acc, properties: ["role"] }, "m"]]);
    const inbox = boxes.list.find((m) => m.role === "inbox").id;
    await call([["Email/set", { accountId: acc, create: { h: { mailboxIds: { [inbox]: true }, from: [{ email: "alice@example.test" }],
      subject: "Gmail style quote", bodyValues: { b: { value: html } }, htmlBody: [{ partId: "b", type: "text/html" }] } } }, "e"]]);
  }, html);
  await page.reload();
  await row(page, "Gmail style quote").click();
  const frame = page.frameLocator("#reader-body iframe.mailframe");
  await until(async () => /The new text/.test(await frame.locator("body").innerText().catch(() => "")), "the frame painted");
  assert(!/The old text/.test(await frame.locator("body").innerText()), "the quote is folded");
  await page.getByRole("button", { name: "Show quoted text" }).click();
  await until(async () => /The old text/.test(await frame.locator("body").innerText().catch(() => "")), "the quote shown");
  await page.context().close();
});

test("reply on an earlier message of the thread answers that message", async () => {
  const page = await newPage();
  await signIn(page, "alice");
  await openThread(page, "subject:roadmap", "Q4 roadmap review");
  const first = page.locator("#reader-body article.msg").first();
  await unfold(first);
  await first.getByRole("toolbar", { name: "Actions on this message" }).getByRole("button", { name: "Reply", exact: true }).click();
  await page.waitForSelector("#composer:not([hidden])");
  const body = await page.locator("#composer textarea").first().inputValue();
  assert(/could you have a look at the Q4 roadmap/.test(body) && !/Looks good to me/.test(body), `quotes the first message: ${body.slice(0, 300)}`);
  await page.context().close();
});

test("print media shows only the message chosen, with its headers", async () => {
  const page = await newPage();
  await page.addInitScript(() => { window.print = () => { window.__printed = (window.__printed || 0) + 1; }; });
  await signIn(page, "alice");
  await openThread(page, "subject:roadmap", "Q4 roadmap review");
  // Every message open: three more that print must leave out.
  await openAll(page);
  const n = await page.locator("#reader-body article.msg:not(.folded)").count();
  assert(n >= 3, `the thread's messages open (${n})`);
  const last = lastMsg(page);
  await last.getByRole("button", { name: "More" }).click();
  await page.getByRole("menuitem", { name: "Print" }).click();
  assert(await page.evaluate(() => window.__printed) === 1, "the browser's print was asked for");
  await page.emulateMedia({ media: "print" });
  const visible = await page.evaluate(() => [...document.querySelectorAll("#reader-body article.msg")].filter((m) => m.offsetParent !== null).length);
  assert(visible === 1, `one message printed (${visible})`);
  assert(await last.isVisible(), "the chosen message is the one");
  for (const sel of ["#folders-pane", "#list-pane", "#top", "#reader-actions"]) assert(!(await page.isVisible(sel)), `${sel} not printed`);
  const head = await last.locator("header").innerText();
  assert(/Carol/.test(head) && /To:/.test(head) && /Subject:.*Q4 roadmap review/.test(head), `headers printed: ${head}`);
  assert(!(await last.getByRole("toolbar").isVisible()), "the message's buttons are not printed");
  await page.context().close();
});

test("show original shows the raw source and downloads it as .eml", async () => {
  const page = await newPage();
  await signIn(page, "alice");
  await openThread(page, "subject:lunch", "Lunch on Thursday?");
  await lastMsg(page).getByRole("button", { name: "More" }).click();
  await page.getByRole("menuitem", { name: "Show original" }).click();
  const dlg = page.getByRole("dialog", { name: "Show original" });
  await dlg.waitFor();
  const src = dlg.locator("pre");
  await until(async () => /^Message-ID:/im.test(await src.innerText()), "the source painted");
  const text = await src.innerText();
  assert(/^Subject: Re: Lunch on Thursday\?/m.test(text) && /^From: /m.test(text) && /^MIME-Version: 1.0/m.test(text), `raw headers: ${text.slice(0, 400)}`);
  assert(/Yes please, the more the merrier\./.test(text), "the raw body");
  const href = await dlg.getByRole("link", { name: "Download" }).getAttribute("href");
  assert(/^\/api\/blob\/[^/]+\/[^/]+\/Re_%20Lunch%20on%20Thursday_\.eml\?accept=message%2Frfc822$/.test(href), href);
  const r = await page.request.get(stack.url + href);
  assert(r.status() === 200 && /^attachment; filename=/.test(r.headers()["content-disposition"]), `downloads: ${r.status()} ${r.headers()["content-disposition"]}`);
  assert((await r.text()).includes("the more the merrier"), "the .eml is the message");
  await page.keyboard.press("Escape");
  await until(async () => !(await dlg.isVisible()), "Esc closes it");
  await page.context().close();
});

test("an image attachment previews: a thumbnail, then the viewer; a PDF is a preview button, nothing framed before", async () => {
  const page = await newPage();
  await signIn(page, "alice");
  await openThread(page, "subject:screenshot", "Screenshot of the login bug");
  const msg = page.locator("#reader-body article.msg").first();
  await unfold(msg);
  const thumb = page.locator("#reader-body .attachments img.thumb").first();
  await until(() => thumb.evaluate((i) => i.complete && i.naturalWidth === 48), "the thumbnail loaded");
  assert(/inline=1$/.test(await thumb.getAttribute("src")), "the thumbnail comes inline from /api/blob");
  await page.getByRole("button", { name: "Preview login-bug.png" }).click();
  const dlg = page.getByRole("dialog", { name: "login-bug.png" });
  await dlg.waitFor();
  const img = dlg.getByRole("img", { name: "login-bug.png" });
  await until(() => img.evaluate((i) => i.complete && i.naturalWidth === 48), "the viewer's image loaded");
  const r = await page.request.get(stack.url + await img.getAttribute("src"));
  assert(r.headers()["content-type"] === "image/png" && /^inline/.test(r.headers()["content-disposition"]) &&
    /sandbox/.test(r.headers()["content-security-policy"] || ""), `served inline, sandboxed: ${JSON.stringify(r.headers())}`);
  await dlg.getByRole("button", { name: "Close" }).click();
  // The PDF: a preview button and a download; nothing framed until asked.
  await openThread(page, "subject:roadmap", "Q4 roadmap review");
  await openAll(page);
  await page.getByRole("button", { name: "Preview q4-roadmap.pdf" }).waitFor();
  const pdf = page.getByRole("link", { name: "Download q4-roadmap.pdf" });
  assert(await pdf.getAttribute("download") === "q4-roadmap.pdf", "the PDF is a download too");
  assert(await page.locator("iframe:not(.mailframe), embed, object").count() === 0, "nothing embeds it");
  assert(!page.requests.some((u) => u.includes("/vendor/pdf")), "nothing of pdf.js is loaded before a preview");
  await page.context().close();
});

test("a PDF attachment previews: pdf.js draws its pages in a frame sandboxed without allow-same-origin", async () => {
  const page = await newPage();
  await signIn(page, "alice");
  await mailWith(page, "Quarterly hello", [{ name: "hello.pdf", type: "application/pdf", body: makePdf(["Hello", "World"]) }]);
  await openThread(page, "subject:quarterly", "Quarterly hello");
  assert(!page.requests.some((u) => u.includes("/vendor/pdf")), "pdf.js is not loaded before the preview is asked for");
  await page.getByRole("button", { name: "Preview hello.pdf" }).click();
  const dlg = page.getByRole("dialog", { name: "hello.pdf" });
  await dlg.waitFor();
  await until(async () => (await dlg.getByRole("status").textContent()) === "2 pages", "the page count in the dialog");
  const el = dlg.getByTitle("Pages of hello.pdf");
  assert(await el.getAttribute("sandbox") === "allow-scripts", `sandboxed without allow-same-origin: ${await el.getAttribute("sandbox")}`);
  const frame = await (await el.elementHandle()).contentFrame();
  await until(async () => (await inkOnPage(frame)) > 200, "page 1 drawn with its text");
  assert(await frame.getByRole("img", { name: "Page 1 of 2" }).count() === 1 &&
    await frame.getByRole("img", { name: "Page 2 of 2" }).count() === 1, "each page is named");
  // An opaque origin, with a policy that lets it fetch nothing.
  const inside = await frame.evaluate(async () => {
    let cookie, api;
    try { cookie = document.cookie; } catch (e) { cookie = e.name; }
    try { api = (await fetch("/api/auth/session")).status; } catch { api = "refused"; }
    return { origin: self.origin, cookie, api };
  });
  assert(inside.origin === "null" && inside.cookie === "SecurityError" && inside.api === "refused", `the frame: ${JSON.stringify(inside)}`);
  const r = await page.request.get(stack.url + "/pdfview.html");
  const csp = r.headers()["content-security-policy"] || "";
  assert(/(^|; )sandbox allow-scripts(;|$)/.test(csp) && csp.includes("frame-ancestors 'self'") && csp.includes("default-src 'none'"),
    `the frame page's own policy: ${csp}`);
  const href = await dlg.getByRole("link", { name: "Download" }).getAttribute("href");
  assert(/^\/api\/blob\/[^/]+\/[^/]+\/hello\.pdf\?accept=application%2Fpdf$/.test(href), href);
  await axe(page, "the PDF viewer");
  // The keyboard: Tab from Close goes into the pages, which scroll; Esc there closes.
  assert(await dlg.getByRole("button", { name: "Close" }).evaluate((b) => b === document.activeElement), "Close has the focus");
  await page.keyboard.press("Tab");
  await until(() => frame.evaluate(() => document.activeElement?.id === "pages"), "the focus in the pages");
  await page.keyboard.press("PageDown");
  await until(() => frame.evaluate(() => document.getElementById("pages").scrollTop > 0), "the pages scroll by keyboard");
  await page.keyboard.press("Escape");
  await until(async () => !(await dlg.isVisible()), "Esc in the frame closes the viewer");
  assert(!page.errors.length, `no error: ${page.errors}`);
  await page.context().close();
});

test("a PDF as a browser prints it (embedded fonts, a JPEG) is drawn with nothing refused by the frame's policy", async () => {
  const page = await newPage();
  const said = [];
  page.on("console", (m) => said.push(m.text()));
  await signIn(page, "alice");
  const paper = await page.context().newPage();
  await paper.setContent("<canvas width=300 height=200></canvas>");
  const jpeg = await paper.evaluate(() => {
    const c = document.querySelector("canvas"), x = c.getContext("2d");
    x.fillStyle = "#0000ff";
    x.fillRect(0, 0, 300, 200);
    return c.toDataURL("image/jpeg", 0.9);
  });
  await paper.setContent(`<img src="${jpeg}"><h1 style="font-family: DejaVu Serif">Printed Ünïcødé</h1>`);
  const printed = (await paper.pdf({ format: "A4" })).toString("latin1");
  await paper.close();
  await mailWith(page, "Quarterly printed", [{ name: "printed.pdf", type: "application/pdf", body: printed }]);
  await openThread(page, "subject:printed", "Quarterly printed");
  await page.getByRole("button", { name: "Preview printed.pdf" }).click();
  const dlg = page.getByRole("dialog", { name: "printed.pdf" });
  await until(async () => (await dlg.getByRole("status").textContent().catch(() => "")) === "1 page", "the PDF opened");
  const frame = await (await dlg.getByTitle("Pages of printed.pdf").elementHandle()).contentFrame();
  await until(async () => (await inkOnPage(frame)) > 200, "the page drawn");
  const blue = await frame.evaluate(() => {
    const c = document.querySelector(".page canvas");
    const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i + 2] > 200 && d[i] < 60 && d[i + 1] < 60) n++;
    return n;
  });
  assert(blue > 1000, `the JPEG drawn (${blue} blue pixels)`);
  assert(!said.some((m) => /Refused|Content Security Policy/.test(m)), `nothing refused: ${said}`);
  await dlg.getByRole("button", { name: "Close" }).click();
  await page.context().close();
});

test("a hostile PDF: its JavaScript does not run and its links go nowhere", async () => {
  const page = await newPage();
  await signIn(page, "alice");
  const hit = `${stack.url}/api/pdf-script-ran`;
  const js = `app.alert("pdf script ran"); this.submitForm({cURL: "${hit}"}); app.launchURL("${hit}", true); this.getURL("${hit}");`;
  const evil = makePdf(["Hello"], {
    catalog: "/OpenAction 6 0 R /Names << /JavaScript << /Names [(x) 6 0 R] >> >> ",
    page1: "/Annots [7 0 R] /AA << /O 6 0 R >> ",
    objects: [`<< /S /JavaScript /JS (${js.replace(/[()\\]/g, "\\$&")}) >>`,
      `<< /Type /Annot /Subtype /Link /Rect [0 0 612 792] /Border [0 0 0] /A << /S /URI /URI (${stack.url}/api/pdf-link-followed) >> >>`] });
  await mailWith(page, "Quarterly trap", [{ name: "trap.pdf", type: "application/pdf", body: evil }]);
  await openThread(page, "subject:trap", "Quarterly trap");
  // What the frame asks for, and what the console says (a CSP refusal
  // would mean something tried).
  const fromFrame = [], said = [];
  page.on("request", (q) => { if (q.frame() !== page.mainFrame()) fromFrame.push(new URL(q.url()).pathname); });
  page.on("console", (m) => said.push(m.text()));
  await page.getByRole("button", { name: "Preview trap.pdf" }).click();
  const dlg = page.getByRole("dialog", { name: "trap.pdf" });
  await until(async () => (await dlg.getByRole("status").textContent().catch(() => "")) === "1 page", "the PDF opened");
  const el = dlg.getByTitle("Pages of trap.pdf");
  const frame = await (await el.elementHandle()).contentFrame();
  await until(async () => (await inkOnPage(frame)) > 200, "the page drawn");
  // A click on the link's area, then Esc, which goes through the frame.
  await frame.getByRole("img", { name: "Page 1 of 1" }).click();
  await page.keyboard.press("Escape");
  await until(async () => !(await dlg.isVisible()), "the viewer closed");
  const known = /^\/(pdfview\.(html|js|css)|vendor\/pdf(\.worker)?\.min\.js)$/;
  assert(fromFrame.length >= 4 && fromFrame.every((p) => known.test(p)), `the frame asked only for its own files: ${fromFrame}`);
  assert(!page.requests.some((u) => u.includes("/api/pdf-")), "nothing asked for the PDF's addresses");
  assert(!said.some((m) => /Refused|pdf script ran|pdf-/.test(m)), `nothing tried: ${said}`);
  assert(!page.dialogs.length, `no alert: ${page.dialogs}`);
  assert(page.context().pages().length === 1, "no window opened");
  assert(frame.isDetached() || /\/pdfview\.html$/.test(frame.url()), `the frame stayed: ${frame.url()}`);
  await page.context().close();
});

test("a PDF frame that navigates itself away is removed: what it shows then is not ours", async () => {
  const page = await newPage();
  await signIn(page, "alice");
  await mailWith(page, "Quarterly moved", [{ name: "moved.pdf", type: "application/pdf", body: makePdf(["Moved"]) }]);
  await openThread(page, "subject:moved", "Quarterly moved");
  await page.getByRole("button", { name: "Preview moved.pdf" }).click();
  const dlg = page.getByRole("dialog", { name: "moved.pdf" });
  await until(async () => (await dlg.getByRole("status").textContent()) === "1 page", "the page count");
  // As a subverted pdf.js could: the frame loads another page.
  const frame = await (await dlg.getByTitle("Pages of moved.pdf").elementHandle()).contentFrame();
  await frame.evaluate(() => { location.href = "/api/health"; });
  await until(async () => /could not be shown/.test(await dlg.textContent()), "the failure said");
  assert(await dlg.getByTitle("Pages of moved.pdf").count() === 0, "the frame is gone");
  await dlg.getByRole("button", { name: "Close" }).click();
  await page.context().close();
});

test("a PDF that pdf.js cannot read says so and offers the download", async () => {
  const page = await newPage();
  await signIn(page, "alice");
  await mailWith(page, "Quarterly broken", [{ name: "broken.pdf", type: "application/pdf", body: "%PDF-1.4\nthis is no PDF\n" }]);
  await openThread(page, "subject:broken", "Quarterly broken");
  await page.getByRole("button", { name: "Preview broken.pdf" }).click();
  const dlg = page.getByRole("dialog", { name: "broken.pdf" });
  await until(async () => /could not be shown/.test(await dlg.textContent()), "the failure said");
  assert(await dlg.getByRole("link", { name: "Download" }).count() === 1, "the download offered");
  await dlg.getByRole("button", { name: "Close" }).click();
  await page.context().close();
});

test("a text attachment previews as text: nothing in it is markup", async () => {
  const page = await newPage();
  await signIn(page, "alice");
  const text = "Minutes of the offsite\n<script>window.__ran = 1</script><b>not bold</b>\n";
  await mailWith(page, "Zebrafish minutes attached", [{ name: "minutes.txt", type: "text/plain", body: text }]);
  await openThread(page, "subject:zebrafish", "Zebrafish minutes attached");
  await page.getByRole("button", { name: "Preview minutes.txt" }).click();
  const dlg = page.getByRole("dialog", { name: "minutes.txt" });
  await dlg.waitFor();
  const shown = dlg.locator("pre");
  await until(async () => (await shown.textContent()).includes("Minutes of the offsite"), "the text shown");
  assert((await shown.textContent()).includes("<script>window.__ran = 1</script><b>not bold</b>"), "shown as text, tags and all");
  assert(await dlg.locator("script, b").count() === 0 && !(await page.evaluate(() => window.__ran)), "nothing of it became markup or ran");
  await dlg.getByRole("button", { name: "Close" }).click();
  await page.context().close();
});

test("the reader's toolbar stays in view when the thread scrolls", async () => {
  const page = await newPage({ width: 1280, height: 500 });
  await signIn(page, "alice");
  await openThread(page, "subject:roadmap", "Q4 roadmap review");
  await openAll(page);
  await page.evaluate(() => { document.querySelector("#reader-pane").scrollTop = 10000; });
  const bar = await page.locator("#reader-actions").boundingBox();
  const pane = await page.locator("#reader-pane").boundingBox();
  assert(await page.evaluate(() => document.querySelector("#reader-pane").scrollTop) > 100, "the thread scrolled");
  assert(bar && Math.abs(bar.y - pane.y) < 2, `the toolbar is at the top of the pane (${bar && bar.y} vs ${pane.y})`);
  await page.context().close();
});

// -- it fits -----------------------------------------------------------------------

// Every visible toolbar: its buttons on one line, none past its edge.
async function toolbarsFit(page) {
  return page.evaluate(() => [...document.querySelectorAll("[role=toolbar]")].filter((b) => b.offsetParent !== null).map((bar) => {
    const kids = [...bar.children].filter((c) => (c.tagName === "BUTTON" || c.classList.contains("more-wrap")) && c.offsetParent !== null);
    const tops = new Set(kids.map((c) => Math.round(c.getBoundingClientRect().top)));
    const r = bar.getBoundingClientRect();
    const past = kids.filter((c) => c.getBoundingClientRect().right > r.right + 0.5).map((c) => c.textContent);
    return { bar: bar.getAttribute("aria-label"), lines: tops.size, past, scroll: bar.scrollWidth - bar.clientWidth };
  }));
}

for (const lang of ["en", "de", "fr"]) {
  test(`no toolbar wraps or clips at 1280×800 (${lang})`, async () => {
    const page = await newPage();
    await signIn(page, "bob");
    await putSettings(page, { language: lang });
    await page.reload();
    await page.waitForSelector("#list .row[data-id]");
    await row(page, "Contract draft").click();
    await page.waitForSelector("#reader-body .msg-actions");
    await page.waitForTimeout(300);
    const bars = await toolbarsFit(page);
    assert(bars.length >= 3, `the list's, the reader's and a message's toolbar: ${JSON.stringify(bars)}`);
    const bad = bars.filter((b) => b.lines > 1 || b.past.length || b.scroll > 0);
    assert(!bad.length, `toolbars that wrap or clip: ${JSON.stringify(bad)}`);
    // What folded is in "More", and works from there.
    const more = page.locator("#reader-actions .more");
    if (await more.isVisible()) {
      await more.click();
      assert(await page.locator("#reader-actions [role=menuitem]").count() > 0, "More lists the folded actions");
      await page.keyboard.press("Escape");
    }
    await putSettings(page, { language: "" });
    await page.context().close();
  });
}

test("phone: compose is one tap from the list and the reader, nothing scrolls sideways", async () => {
  const page = await newPage({ width: 360, height: 740 });
  await signIn(page, "alice");
  const noSideways = async (where) => {
    const w = await page.evaluate(() => ({ doc: document.documentElement.scrollWidth, vw: innerWidth,
      bars: [...document.querySelectorAll("[role=toolbar], #top")].filter((b) => b.offsetParent !== null).map((b) => b.scrollWidth - b.clientWidth) }));
    assert(w.doc <= w.vw && w.bars.every((d) => d <= 0), `${where}: no sideways scroll ${JSON.stringify(w)}`);
  };
  await noSideways("list");
  const fab = page.getByRole("button", { name: "New message" }).and(page.locator("#compose-fab"));
  assert(await fab.isVisible(), "the compose button is in view on the list");
  await fab.click();
  await page.waitForSelector("#composer:not([hidden])");
  await page.getByRole("button", { name: "Discard" }).click();
  await page.waitForSelector("#composer", { state: "hidden" });
  await openRow(page, "Hello from Zürich");
  await noSideways("reader");
  // Every action of the reader's toolbar is in view or in its More menu.
  const acts = await page.evaluate(() => {
    const bar = document.querySelector("#reader-actions");
    return [...bar.querySelectorAll(":scope > button")].filter((b) => getComputedStyle(b).display !== "none" || b.classList.contains("folded"))
      .map((b) => ({ name: b.textContent.trim(), shown: b.offsetParent !== null, folded: b.classList.contains("folded"),
        inView: b.getBoundingClientRect().right <= innerWidth }));
  });
  assert(acts.length >= 7 && acts.every((a) => (a.shown && a.inView) || a.folded), `actions reachable: ${JSON.stringify(acts)}`);
  if (acts.some((a) => a.folded)) {
    await page.locator("#reader-actions .more").click();
    const items = await page.locator("#reader-actions [role=menuitem]").allInnerTexts();
    assert(items.length === acts.filter((a) => a.folded).length, `More holds the folded ones: ${items}`);
    const box = await page.locator("#reader-actions .menu").boundingBox();
    assert(box.x >= 0 && box.x + box.width <= 360, `the menu is in view: ${JSON.stringify(box)}`);
    await page.keyboard.press("Escape");
  }
  assert(await fab.isVisible(), "the compose button is in view in the reader");
  await fab.click();
  await page.waitForSelector("#composer:not([hidden])");
  await page.context().close();
});

// -- accessible ---------------------------------------------------------------------

async function axe(page, what) {
  // A dependency like playwright-core (npm ci installs both): missing is a failure, not a skip.
  assert(AXE, "axe-core is installed (npm ci)");
  await page.evaluate(AXE);
  const r = await page.evaluate(async () => {
    const res = await window.axe.run(document, { iframes: false, resultTypes: ["violations"] });
    return res.violations.filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 3).map((n) => `${n.target.join(" ")}: ${n.failureSummary}`) }));
  });
  assert(!r.length, `${what}: ${JSON.stringify(r, null, 1)}`);
}

for (const scheme of ["light", "dark"]) {
  test(`axe-core: no serious or critical finding on sign-in, inbox, reader, composer, settings (${scheme})`, async () => {
    const page = await newPage({ width: 1280, height: 800 }, { colorScheme: scheme });
    await page.goto(stack.url + "/");
    await page.waitForSelector("#signin-form input[name=username]");
    await axe(page, "sign-in");
    await signIn(page, "alice");
    await axe(page, "inbox");
    await openRow(page, "Hello from Zürich");
    await axe(page, "reader");
    await page.getByRole("button", { name: "New message" }).first().click();
    await page.waitForSelector("#composer:not([hidden])");
    await axe(page, "composer");
    await page.getByRole("button", { name: "Discard" }).click();
    await page.getByRole("button", { name: "Settings" }).click();
    await page.waitForSelector("#settings[open]");
    await axe(page, "settings");
    await page.context().close();
  });
}

await run();
