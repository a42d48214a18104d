// Browser tests of moving around and acting on many (issue 17): every
// place has a URL, Back and Forward, reload and a pasted link; select all
// and Shift ranges over rows not loaded, acting on the server in batches
// with Undo; Move to with the keyboard; Not spam; the next message after a
// delete; search snippets. Debian's Chromium through playwright-core
// against the real stack; controls found by role and accessible name.
//   node tests/browser/nav.test.mjs          (ONLY=text runs some)
import { test, assert, until, newPage, signIn, USERS, jmapIn, searchable, run } from "./lib.mjs";

const BIG = 2500;

// The page's user's folders by role and name.
async function boxes(page) {
  const [[, r]] = await jmapIn(page, [["Mailbox/get", { accountId: "$ACC", properties: ["name", "role", "unreadEmails", "totalEmails"] }, "m"]]);
  return r.list;
}
async function box(page, nameOrRole) {
  return (await boxes(page)).find((b) => b.role === nameOrRole || b.name === nameOrRole);
}
// A folder of this name, made if missing: its id.
async function folder(page, name) {
  const have = await box(page, name);
  if (have) return have.id;
  const [[, r]] = await jmapIn(page, [["Mailbox/set", { accountId: "$ACC", create: { f: { name, parentId: null } } }, "s"]]);
  assert(r.created?.f, `folder ${name}: ${JSON.stringify(r)}`);
  return r.created.f.id;
}
// n mails in mailbox, in Email/set calls of batch (a single call of
// thousands times out on a busy machine); keywords and subjects given.
async function fill(page, mailbox, n, { subject = (i) => `Mail ${i}`, keywords = {}, batch = 250, start = Date.UTC(2021, 0, 1) } = {}) {
  for (let k = 0; k < n; k += batch) {
    const create = {};
    for (let i = k; i < Math.min(n, k + batch); i++) create["c" + i] = { mailboxIds: { [mailbox]: true }, keywords,
      from: [{ name: "Many Sender", email: "many@example.test" }], to: [{ email: "someone@example.test" }], subject: subject(i),
      receivedAt: new Date(start + i * 60000).toISOString().replace(/\.\d+Z$/, "Z"),
      bodyValues: { b: { value: `Body ${i}` } }, textBody: [{ partId: "b", type: "text/plain" }] };
    const [[, r]] = await jmapIn(page, [["Email/set", { accountId: "$ACC", create }, "s"]]);
    assert(r.created && Object.keys(r.created).length === Object.keys(create).length, `created: ${JSON.stringify(r).slice(0, 300)}`);
  }
}
// How many in mailbox have (or lack) a keyword.
async function countWith(page, mailbox, kw, has = true) {
  const [[, r]] = await jmapIn(page, [["Email/query", { accountId: "$ACC", filter: { inMailbox: mailbox, [has ? "hasKeyword" : "notKeyword"]: kw },
    calculateTotal: true, limit: 1 }, "q"]]);
  return r.total;
}
// A folder's name is what it shows: its name, then its unread count ("Inbox 3 unread").
const folderButton = (page, name) => page.getByRole("navigation").getByRole("button", { name: new RegExp(`^${name}(?!\\p{L})`, "u") });
const option = (page, text) => page.getByRole("listbox", { name: "Messages" }).getByRole("option", { name: new RegExp(text) });
const listToolbar = (page) => page.getByRole("toolbar", { name: "Message actions" });
const readerToolbar = (page) => page.getByRole("toolbar", { name: "Actions on this conversation" });
const hash = (page) => page.evaluate(() => location.hash);
const title = (page) => page.textContent("#list-title");
const openSubject = (page) => page.locator("#reader-body h2.subject").textContent().catch(() => "");

async function signInForm(page, who) {
  await page.getByRole("textbox", { name: "Email address" }).fill(`${who}@example.test`);
  await page.getByLabel("Password").fill(USERS[who]);
  await page.getByRole("button", { name: "Sign in" }).click();
}

test("places: Back after Inbox → Archive → a thread returns to Archive; Forward; reload; a pasted link; signing in again", async () => {
  const page = await newPage();
  await signIn(page, "alice");
  const archive = (await box(page, "archive")).id;
  await fill(page, archive, 1, { subject: () => "Nav archived thread", start: Date.UTC(2026, 5, 1) });
  await page.reload();
  await option(page, ".").first().waitFor();
  assert(await hash(page) === "#/inbox", `the Inbox has a place: ${await hash(page)}`);
  await folderButton(page, "Archive").click();
  await option(page, "Nav archived thread").click();
  await until(async () => /Nav archived thread/.test(await openSubject(page)), "the thread open");
  const threadUrl = page.url();
  assert(/#\/archive\/thread\/[^/]+\/[^/]+$/.test(threadUrl), `the thread's place: ${threadUrl}`);
  await page.goBack();
  await until(async () => (await hash(page)) === "#/archive" && !(await page.locator("#reader-body .msg").count()), "Back: Archive, no thread");
  assert((await title(page)) === "Archive", `the list is Archive: ${await title(page)}`);
  await page.goBack();
  await until(async () => (await title(page)) === "Inbox" && (await hash(page)) === "#/inbox", "Back again: the Inbox");
  await page.goForward();
  await page.goForward();
  await until(async () => /Nav archived thread/.test(await openSubject(page)) && (await title(page)) === "Archive", "Forward twice: the thread");
  // a reload keeps the open thread
  await page.reload();
  await until(async () => /Nav archived thread/.test(await openSubject(page)), "the thread after a reload");
  assert((await title(page)) === "Archive" && page.url() === threadUrl, "the same place after a reload");
  // a search has a place too, and Back leaves it
  await page.getByRole("searchbox", { name: "Search mail" }).fill("subject:roadmap");
  await page.keyboard.press("Enter");
  await until(async () => (await hash(page)).startsWith("#/search/"), "the search's place");
  assert(decodeURIComponent((await hash(page)).slice(9)) === "subject:roadmap", await hash(page));
  await page.goBack();
  await until(async () => /Nav archived thread/.test(await openSubject(page)), "Back from the search to the thread");
  // the settings
  await page.getByRole("button", { name: "Settings" }).click();
  assert(await hash(page) === "#/settings", "the settings' place");
  await page.goBack();
  await until(async () => !(await page.locator("#settings[open]").count()) && page.url() === threadUrl, "Back closes the settings");
  // a copied link, in a new browser context: signing in opens it
  const other = await newPage();
  await other.goto(threadUrl);
  await signInForm(other, "alice");
  await until(async () => /Nav archived thread/.test(await openSubject(other)), "the pasted link's thread after sign-in");
  assert((await title(other)) === "Archive", "in Archive");
  // signing out and in again: the same place
  await other.getByRole("button", { name: "Sign out" }).click();
  await other.getByRole("button", { name: "Sign in" }).waitFor();
  await signInForm(other, "alice");
  await until(async () => /Nav archived thread/.test(await openSubject(other)), "the place after signing in again");
  assert(page.errors.length === 0 && other.errors.length === 0, [...page.errors, ...other.errors].join("; "));
  await other.context().close();
  await page.context().close();
});

test(`acting on many: a Shift range over rows not loaded, in a folder of ${BIG}, acts on every one`, async () => {
  const page = await newPage();
  await signIn(page, "bob");
  const many = await folder(page, "Many");
  await fill(page, many, BIG);
  await page.reload();
  await folderButton(page, "Many").click();
  await option(page, `Mail ${BIG - 1}\\b`).click();       // the newest, on top (opens it: read)
  const rowH = await page.evaluate(() => document.querySelector("#list .row").offsetHeight);
  // jump far down: the pages between are never loaded
  await page.evaluate((y) => { document.querySelector("#list").scrollTop = y; }, 2000 * rowH);
  const far = option(page, `Mail ${BIG - 1 - 2000}\\b`);
  await far.click({ modifiers: ["Shift"] });
  const loaded = await page.evaluate(() => document.querySelectorAll("#list .row[data-id]").length);
  assert(loaded < 200, `most rows not in the page (${loaded})`);
  const bar = await page.textContent("#select-bar").catch(() => "");
  await listToolbar(page).getByRole("button", { name: "Read", exact: true }).click();
  await until(async () => (await countWith(page, many, "$seen")) === 2001, "2001 read on the server", 60000);
  assert(/2001 selected/.test(bar), `the bar said how many: ${bar}`);
  await until(async () => /2001 marked as read/.test(await page.textContent("#toast")), "the toast names 2001", 30000);
  assert(await countWith(page, many, "$seen", false) === BIG - 2001, "the rest unread");
  assert(page.errors.length === 0, page.errors.join("; "));
  await page.context().close();
});

test(`acting on many: select all ${BIG} in a folder, Read leaves 0 unread, Undo restores them; Mark all read`, async () => {
  const page = await newPage();
  await signIn(page, "bob");
  const many = await folder(page, "Many");
  if ((await box(page, "Many")).totalEmails < BIG) await fill(page, many, BIG);
  await folderButton(page, "Many").click();
  await option(page, "Mail").first().waitFor();
  const before = (await box(page, "Many")).unreadEmails;
  assert(before > 0, `some unread to begin with (${before})`);
  await listToolbar(page).getByRole("button", { name: "Select all" }).click();
  await page.getByRole("button", { name: `Select all ${BIG} in Many` }).click();
  await until(async () => (await page.textContent("#select-bar")).includes(`All ${BIG} in Many are selected`), "all selected");
  const t0 = Date.now();
  await listToolbar(page).getByRole("button", { name: "Read", exact: true }).click();
  await until(async () => (await box(page, "Many")).unreadEmails === 0, "0 unread", 90000);
  await until(async () => new RegExp(`${BIG} marked as read`).test(await page.textContent("#toast")), "the toast", 30000);
  const ms = Date.now() - t0;
  await page.locator("#toast").getByRole("button", { name: "Undo" }).click();
  await until(async () => (await box(page, "Many")).unreadEmails === before, `Undo: ${before} unread again`, 90000);
  assert(await until(async () => /[\d,]+ unread/.test(await folderButton(page, "Many").textContent()), "the count in the tree"));
  // the folder's own menu: Mark all read
  await folderButton(page, "Many").click({ button: "right" });
  await page.getByRole("menu", { name: "Many" }).getByRole("menuitem", { name: "Mark all read" }).click();
  await until(async () => (await box(page, "Many")).unreadEmails === 0, "mark all read: 0 unread", 90000);
  console.log(`# select all ${BIG} then Read: ${ms} ms to the toast`);
  assert(page.errors.length === 0, page.errors.join("; "));
  await page.context().close();
});

test("acting on many: all N in a search acts on what matches, in the whole query, with Undo", async () => {
  const page = await newPage();
  await signIn(page, "carol");
  const f = await folder(page, "Searchy");
  if ((await box(page, "Searchy")).totalEmails < 400) {
    await fill(page, f, 200, { subject: (i) => `Needle ${i}` });
    await fill(page, f, 200, { subject: (i) => `Hay ${i}` });
  }
  const needles = async (has) => {
    const [[, r]] = await jmapIn(page, [["Email/query", { accountId: "$ACC", filter: { operator: "AND",
      conditions: [{ inMailbox: f }, { subject: "Needle" }, { [has ? "hasKeyword" : "notKeyword"]: "$seen" }] },
      calculateTotal: true, limit: 1 }, "q"]]);
    return r.total;
  };
  // Found by the server's search (the index follows new mail within a
  // second or so), and the new folder known to the app.
  await until(async () => (await needles(false)) === 200, "200 unread needles found by the server", 30000);
  await page.reload();
  await option(page, ".").first().waitFor();
  await page.getByRole("searchbox", { name: "Search mail" }).fill("in:Searchy subject:needle");
  await page.keyboard.press("Enter");
  await option(page, "Needle").first().waitFor();
  await listToolbar(page).getByRole("button", { name: "Select all" }).click();
  await page.getByRole("button", { name: "Select all 200 in Search" }).click();
  await until(async () => (await page.textContent("#select-bar")).includes("All 200 in Search are selected"), "all selected");
  await listToolbar(page).getByRole("button", { name: "Read", exact: true }).click();
  await until(async () => (await needles(false)) === 0, "every needle read", 90000);
  await until(async () => /200 marked as read/.test(await page.textContent("#toast")), "the toast", 30000);
  const [[, hay]] = await jmapIn(page, [["Email/query", { accountId: "$ACC", filter: { operator: "AND",
    conditions: [{ inMailbox: f }, { subject: "Hay" }, { hasKeyword: "$seen" }] }, calculateTotal: true, limit: 1 }, "q"]]);
  assert(hay.total === 0, `nothing outside the search was touched (${hay.total} hay read)`);
  await page.locator("#toast").getByRole("button", { name: "Undo" }).click();
  await until(async () => (await needles(false)) === 200, "Undo: the 200 unread again", 90000);
  assert(page.errors.length === 0, page.errors.join("; "));
  await page.context().close();
});

test("Move to: v, a few letters of the folder's name, Enter; the button; a row's menu", async () => {
  const page = await newPage();
  await signIn(page, "alice");
  const inbox = (await box(page, "inbox")).id;
  await folder(page, "Receipts");
  await fill(page, inbox, 1, { subject: () => "Move me with the keyboard", start: Date.UTC(2026, 6, 1) });
  await page.reload();
  await option(page, "Move me with the keyboard").click();
  await page.getByRole("listbox", { name: "Messages" }).focus();
  await page.keyboard.press("v");
  const dialog = page.getByRole("dialog", { name: "Move to" });
  await dialog.waitFor();
  await page.keyboard.type("recei");
  assert(await dialog.getByRole("option").count() === 1, "the filter leaves Receipts");
  await page.keyboard.press("Enter");
  await until(async () => /Moved to Receipts/.test(await page.textContent("#toast")), "moved");
  await until(async () => !(await option(page, "Move me with the keyboard").count()), "gone from the Inbox");
  await folderButton(page, "Receipts").click();
  await option(page, "Move me with the keyboard").waitFor();
  // the button does the same
  await option(page, "Move me with the keyboard").click();
  await readerToolbar(page).getByRole("button", { name: "Move to…" }).click();
  await dialog.getByRole("searchbox", { name: "Folder name" }).fill("inb");
  await dialog.getByRole("option", { name: "Inbox" }).click();
  await until(async () => /Moved to Inbox/.test(await page.textContent("#toast")), "moved back");
  // and a row's menu
  await folderButton(page, "Inbox").click();
  await option(page, "Move me with the keyboard").click({ button: "right" });
  await page.getByRole("menu").getByRole("menuitem", { name: "Move to…" }).click();
  await dialog.getByRole("searchbox", { name: "Folder name" }).fill("receipts");
  await page.keyboard.press("Enter");
  await until(async () => /Moved to Receipts/.test(await page.textContent("#toast")), "moved from the menu");
  await page.context().close();
});

test("Not spam in Junk: back to the Inbox, $junk dropped, $notjunk set", async () => {
  const page = await newPage();
  await signIn(page, "alice");
  const junk = (await box(page, "junk")).id;
  await fill(page, junk, 1, { subject: () => "Wrongly junked", keywords: { $junk: true } });
  await folderButton(page, "Junk").click();
  await option(page, "Wrongly junked").click();
  assert(!(await listToolbar(page).getByRole("button", { name: "Spam", exact: true }).isVisible()), "no Spam in Junk");
  await listToolbar(page).getByRole("button", { name: "Not spam" }).click();
  await until(async () => /Not spam/.test(await page.textContent("#toast")), "the toast");
  const [, [, g]] = await jmapIn(page, [
    ["Email/query", { accountId: "$ACC", filter: { subject: "Wrongly junked" } }, "q"],
    ["Email/get", { accountId: "$ACC", "#ids": { resultOf: "q", name: "Email/query", path: "/ids" }, properties: ["mailboxIds", "keywords"] }, "g"]]);
  const e = g.list[0];
  const inbox = (await box(page, "inbox")).id;
  assert(e.mailboxIds[inbox] && !e.mailboxIds[junk], `in the Inbox: ${JSON.stringify(e.mailboxIds)}`);
  assert(e.keywords.$notjunk && !e.keywords.$junk, `keywords: ${JSON.stringify(e.keywords)}`);
  await folderButton(page, "Inbox").click();
  await option(page, "Wrongly junked").waitFor();
  await page.context().close();
});

test("after a delete the next message opens (the setting: next, previous, the list)", async () => {
  const page = await newPage();
  await signIn(page, "alice");
  const f = await folder(page, "Series");
  await fill(page, f, 5, { subject: (i) => `Series part ${i}` });
  await page.reload();
  await folderButton(page, "Series").click();
  await option(page, "Series part 3").click();      // newest first: 4 3 2 1 0
  await until(async () => /Series part 3/.test(await openSubject(page)), "part 3 open");
  await readerToolbar(page).getByRole("button", { name: "Delete" }).click();
  await until(async () => /Series part 2/.test(await openSubject(page)), "the next (part 2) opens");
  assert(/\/thread\//.test(await hash(page)), "its place");
  // previous
  await page.getByRole("button", { name: "Settings" }).click();
  await page.getByRole("combobox", { name: "After deleting, archiving or moving the open message" }).selectOption("previous");
  await page.getByRole("button", { name: "Save" }).click();
  await until(async () => !(await page.locator("#settings[open]").count()), "settings closed");
  await readerToolbar(page).getByRole("button", { name: "Archive" }).click();
  await until(async () => /Series part 4/.test(await openSubject(page)), "the previous (part 4) opens");
  // back to the list
  await page.getByRole("button", { name: "Settings" }).click();
  await page.getByRole("combobox", { name: "After deleting, archiving or moving the open message" }).selectOption("list");
  await page.getByRole("button", { name: "Save" }).click();
  await until(async () => !(await page.locator("#settings[open]").count()), "settings closed");
  await readerToolbar(page).getByRole("button", { name: "Delete" }).click();
  await until(async () => !(await page.locator("#reader-body .msg").count()), "no message open");
  assert(await hash(page) === "#/folder/" + encodeURIComponent(f), `the folder's place: ${await hash(page)}`);
  await page.context().close();
});

test("search shows why: the matching words marked in the results, as text", async () => {
  const page = await newPage();
  await signIn(page, "alice");
  const inbox = (await box(page, "inbox")).id;
  await fill(page, inbox, 1, { subject: () => "Snippet <b>bold</b> zebracorn test" });
  await searchable(page, { text: "zebracorn" });
  await page.getByRole("searchbox", { name: "Search mail" }).fill("zebracorn");
  await page.keyboard.press("Enter");
  const r = option(page, "zebracorn");
  await r.waitFor();
  const marks = await until(async () => { const m = await r.locator("mark").allTextContents(); return m.length ? m : null; }, "a mark", 10000);
  assert(marks.every((m) => /zebracorn/i.test(m)), `marked: ${marks}`);
  // the server's text stays text: the subject's <b> is not an element
  assert(!(await r.locator(".subject b").count()), "no markup from the snippet but mark");
  assert(/<b>bold<\/b>/.test(await r.locator(".subject").textContent()), "the angle brackets shown as text");
  await page.context().close();
});

run();
