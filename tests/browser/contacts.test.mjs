// Browser tests of the contacts screen (www/js/views/contacts.js) against
// the real stack: what the app writes is asked of Cyrus itself (its
// CardDAV, with the user's credentials), and what is put into Cyrus
// behind the app's back shows in it. Every control is found by its role
// and accessible name. Prints TAP; uses lib.mjs.
//   node tests/browser/contacts.test.mjs
import { readFileSync } from "node:fs";
import { test, assert, until, stack, metrics, newPage, signIn, row, run, USERS } from "./lib.mjs";
import { parseCards } from "../../www/js/book.js";

const LOGIN = "alice@example.test";
const bookUrl = () => `${stack.cyrus.base}/dav/addressbooks/user/${LOGIN}/Default/`;
const AUTH = "Basic " + Buffer.from(`${LOGIN}:${USERS.alice}`).toString("base64");
const QUERY = '<?xml version="1.0" encoding="utf-8"?><c:addressbook-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav">'
  + '<d:prop><d:getetag/><c:address-data/></d:prop></c:addressbook-query>';

// Every card in alice's book, as Cyrus has it (an addressbook-query).
async function cyrusCards() {
  const r = await fetch(bookUrl(), { method: "REPORT", body: QUERY,
    headers: { Authorization: AUTH, Depth: "1", "Content-Type": "application/xml; charset=utf-8" } });
  assert(r.status === 207, `REPORT: ${r.status}`);
  const xml = await r.text();
  const data = [...xml.matchAll(/<[^>]*address-data[^>]*>([\s\S]*?)<\/[^>]*address-data>/g)]
    .map((m) => m[1].replace(/^<!\[CDATA\[([\s\S]*)\]\]>$/, "$1").replace(/&#13;/g, "\r").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&amp;/g, "&"));
  return parseCards(data.join("\n")).map((c) => c.contact);
}
const cyrusPut = (name, text) => fetch(bookUrl() + name, { method: "PUT", body: text,
  headers: { Authorization: AUTH, "Content-Type": "text/vcard; charset=utf-8" } }).then((r) => {
  assert([201, 204].includes(r.status), `PUT ${name}: ${r.status}`);
});
const card = (uid, fn, email, extra = "") => `BEGIN:VCARD\r\nVERSION:3.0\r\nUID:${uid}\r\nFN:${fn}\r\nN:${fn.split(" ").reverse().join(";")};;;\r\n`
  + (email ? `EMAIL;TYPE=INTERNET:${email}\r\n` : "") + extra + "END:VCARD\r\n";
// Many PUTs straight to Cyrus, n at a time.
async function putMany(cards, n = 8) {
  let i = 0;
  await Promise.all(Array.from({ length: n }, async () => { while (i < cards.length) { const [name, text] = cards[i++]; await cyrusPut(name, text); } }));
}

const dialog = (page) => page.getByRole("dialog", { name: "Contacts" });
const people = (page) => dialog(page).getByRole("list", { name: "Contact list" });
const person = (page, name) => people(page).getByRole("button", { name });
const status = (page) => dialog(page).getByRole("status");
async function openContacts(page) {
  await page.getByRole("button", { name: "Contacts", exact: true }).click();
  await dialog(page).waitFor();
  await page.waitForFunction(() => document.querySelector(".contacts-list")?.dataset.count !== undefined);
}
async function newContact(page, fields) {
  await dialog(page).getByRole("button", { name: "New contact" }).click();
  const f = dialog(page).getByRole("form", { name: "New contact" });
  for (const [label, value] of Object.entries(fields)) await f.getByLabel(label, { exact: true }).fill(value);
  await f.getByRole("button", { name: "Save contact" }).click();
}
async function suggested(page, text) {
  await page.getByRole("button", { name: "New message", exact: true }).click();
  const f = page.getByRole("form", { name: "New message" });
  await f.getByRole("combobox", { name: "To" }).pressSequentially(text);
  const options = f.getByRole("listbox", { name: "Suggestions" }).getByRole("option");
  await options.first().waitFor();
  const all = await options.allTextContents();
  await f.getByRole("button", { name: "Discard" }).click();
  return all;
}

// -- the tests ------------------------------------------------------------------------

test("a contact made in the app is in Cyrus and suggested; edited (If-Match, a conflict reloads it) and deleted there", async () => {
  const page = await newPage();
  await signIn(page, "alice");
  await openContacts(page);
  assert(await page.evaluate(() => location.hash) === "#/contacts", "its place in the URL");
  await newContact(page, { "First name": "Ada", "Last name": "Lovelace", "Email address": "ada@example.test",
    Phone: "+44 20 7946 0001", Organisation: "Analytical Engines" });
  await person(page, /Ada Lovelace/).waitFor();
  const ada = await until(async () => (await cyrusCards()).find((c) => c.fn === "Ada Lovelace"), "Ada in Cyrus");
  assert(ada.emails[0]?.value === "ada@example.test" && ada.org === "Analytical Engines" && ada.uid.length >= 30,
    `what Cyrus has: ${JSON.stringify(ada)}`);
  // Shown, then closed: the URL goes back, and the composer suggests her.
  await dialog(page).getByRole("button", { name: "Close" }).click();
  await until(() => page.evaluate(() => location.hash !== "#/contacts"), "the place left");
  const opts = await suggested(page, "lovel");
  assert(/Ada Lovelace\s+ada@example\.test/.test(opts[0]), `suggested: ${opts}`);

  // Edit: the organisation changes in Cyrus.
  await openContacts(page);
  await person(page, /Ada Lovelace/).click();
  await dialog(page).getByRole("button", { name: "Edit" }).click();
  let f = dialog(page).getByRole("form", { name: "Edit Ada Lovelace" });
  await f.getByLabel("Organisation", { exact: true }).fill("Difference Engines");
  await f.getByRole("button", { name: "Save contact" }).click();
  await until(async () => (await cyrusCards()).find((c) => c.fn === "Ada Lovelace")?.org === "Difference Engines", "the edit in Cyrus");

  // A change made elsewhere meanwhile: the save is refused (412), the card reloaded and said so.
  await dialog(page).getByRole("button", { name: "Edit" }).click();
  f = dialog(page).getByRole("form", { name: "Edit Ada Lovelace" });
  const href = await person(page, /Ada Lovelace/).getAttribute("data-href");
  await cyrusPut(href.split("/").pop(), card(ada.uid, "Ada Lovelace", "ada@example.test", "TITLE:Countess\r\n"));
  await f.getByLabel("Organisation", { exact: true }).fill("Mine");
  await f.getByRole("button", { name: "Save contact" }).click();
  await until(async () => /changed elsewhere/.test(await status(page).textContent()), "the conflict said");
  f = dialog(page).getByRole("form", { name: "Edit Ada Lovelace" });
  assert(await f.getByLabel("Job title", { exact: true }).inputValue() === "Countess", "the form shows the card as it is now");
  const now = (await cyrusCards()).find((c) => c.fn === "Ada Lovelace");
  assert(now.title === "Countess" && now.org === "", `the other change kept: ${JSON.stringify(now)}`);
  await f.getByRole("button", { name: "Cancel" }).click();

  // Delete, confirmed.
  page.acceptDialogs = true;
  await dialog(page).getByRole("button", { name: "Delete" }).click();
  await until(async () => !(await cyrusCards()).some((c) => c.fn === "Ada Lovelace"), "gone from Cyrus");
  assert(page.dialogs.some((d) => /Delete Ada Lovelace/.test(d)), `asked first: ${page.dialogs}`);
  await until(async () => await person(page, /Ada Lovelace/).count() === 0, "gone from the list");
  assert(page.errors.length === 0, page.errors.join("; "));
  await page.context().close();
});

test("search by name (accents aside), email, phone and organisation; a group made in the app is CATEGORIES in Cyrus", async () => {
  await putMany([["s-emile.vcf", card("s-emile", "Émile Zola", "emile@example.test", "CATEGORIES:Writers\r\n")],
    ["s-zoe.vcf", card("s-zoe", "Zoë Ångström", "zoe@lab.test", "TEL;TYPE=CELL:06 12 34 56 78\r\n")],
    ["s-bob.vcf", card("s-bob", "Bob Acme", "", "ORG:ACME Corp\r\n")]]);
  const page = await newPage();
  await signIn(page, "alice");
  await openContacts(page);
  const search = dialog(page).getByRole("searchbox", { name: "Search contacts" });
  const shown = async () => (await people(page).getByRole("button").allTextContents()).map((s) => s.trim());
  const described = () => people(page).getAttribute("aria-description");
  for (const [q, who] of [["emile", "Émile Zola"], ["ZOE", "Zoë Ångström"], ["zoe@lab", "Zoë Ångström"],
    ["0612345678", "Zoë Ångström"], ["acme corp", "Bob Acme"]]) {
    await search.fill(q);
    const s = await shown();
    assert(s.length === 1 && s[0].startsWith(who), `"${q}" finds ${who}: ${s}`);
    assert(await described() === "1 contact", `the list's description: ${await described()}`);
  }
  // Made again in another language: the search box shows the search that filters the list.
  await dialog(page).getByRole("button", { name: "Close" }).click();
  await page.evaluate(async () => (await import("/js/i18n.js")).init("de"));
  await page.getByRole("button", { name: "Contacts", exact: true }).click();
  const box = page.locator("#contacts input[type=search]");
  await until(async () => await page.locator("#contacts .contacts-list").getAttribute("data-count") === "1", "the list, filtered");
  assert(await box.inputValue() === "acme corp", `the box says what filters: "${await box.inputValue()}"`);
  // The list is made again for the new language: its description follows.
  await until(async () => await page.locator("#contacts .contacts-list").getAttribute("aria-description") === "1 Kontakt",
    "described in German");
  await page.locator("#contacts .contacts-head button").click();
  await page.evaluate(async () => (await import("/js/i18n.js")).init("en"));
  await openContacts(page);
  await search.fill("");
  const n = Number(await people(page).getAttribute("data-count"));
  const inCyrus = (await cyrusCards()).length;
  assert(n === inCyrus && await described() === `${n} contacts`, `the list's description: ${await described()} (${n}, ${inCyrus} in Cyrus)`);
  await newContact(page, { Name: "Victor Hugo", "Email address": "victor@example.test", "Groups (separated by commas)": "Writers, Poets" });
  await person(page, /Victor Hugo/).waitFor();
  const group = dialog(page).getByRole("combobox", { name: "Group" });
  await group.selectOption("Writers");
  const s = await shown();
  assert(s.length === 2 && s[0].startsWith("Émile Zola") && s[1].startsWith("Victor Hugo"), `the group, sorted: ${s}`);
  const victor = (await cyrusCards()).find((c) => c.fn === "Victor Hugo");
  assert(JSON.stringify(victor?.groups) === '["Writers","Poets"]', `CATEGORIES in Cyrus: ${JSON.stringify(victor)}`);
  assert(page.errors.length === 0, page.errors.join("; "));
  await page.context().close();
});

test("a card whose href is off the CardDAV tree is left, never asked; a sign-out drops a load and the search; a 401 signs out", async () => {
  const page = await newPage();
  await signIn(page, "alice");
  // Answers of the server with cards at hrefs of another origin and of another /api route.
  const evil = (href, uid, fn) => '<x:response xmlns:x="DAV:" xmlns:y="urn:ietf:params:xml:ns:carddav">'
    + `<x:href>${href}</x:href><x:propstat><x:prop><x:getetag>"${uid}"</x:getetag>`
    + `<y:address-data>${card(uid, fn, `${uid}@example.test`).replace(/\r/g, "&#13;")}</y:address-data></x:prop>`
    + "<x:status>HTTP/1.1 200 OK</x:status></x:propstat></x:response>";
  const extra = evil("https://elsewhere.test/evil.vcf", "evil-1", "Evil Elsewhere") + evil("/api/auth/logout", "evil-2", "Evil Route");
  const injected = new Set();
  await page.route("**/api/dav/**", async (r) => {
    const kind = /addressbook-query|sync-collection/.exec(r.request().postData() || "")?.[0];
    if (r.request().method() !== "REPORT" || !kind) return r.continue();
    const res = await r.fetch();
    const xml = await res.text();
    const body = xml.replace(/(<\/(?:[\w-]+:)?multistatus>\s*)$/, `${extra}$1`);
    if (body !== xml) injected.add(kind);
    return r.fulfill({ response: res, body });
  });
  const hrefs = () => page.evaluate(async () => (await import("/js/book-store.js")).cards().map((c) => c.href));
  await openContacts(page);
  await cyrusPut("o-real.vcf", card("o-real", "Real Person", "real@example.test"));
  await dialog(page).getByRole("button", { name: "Close" }).click();
  await openContacts(page);
  await person(page, /Real Person/).waitFor();
  assert(injected.has("addressbook-query") && injected.has("sync-collection"), `answered: ${[...injected]}`);
  assert(await person(page, /Evil/).count() === 0, "no card of an off-tree href in the list");
  const keys = await hrefs();
  assert(keys.length && keys.every((h) => h.startsWith("/api/dav/")), `the cards' keys: ${keys.filter((h) => !h.startsWith("/api/dav/"))}`);
  assert(!page.requests.some((u) => /elsewhere\.test|\/api\/auth\/logout/.test(u)), "nothing asked of them");
  await page.unroute("**/api/dav/**");

  // A load begun before a sign-out (forget) is dropped; the next one is a load of its own.
  const got = await page.evaluate(async () => {
    const bs = await import("/js/book-store.js");
    const root = (await (await fetch("/api/config")).json()).carddavPath;
    const a = bs.load(root);
    bs.forget();
    const b = bs.load(root);
    const first = await a.then(() => "kept", (e) => e.name);
    await b;
    return { first, same: a === b, cards: bs.cards().length };
  });
  assert(got.first === "Stale" && !got.same && got.cards > 0, `after forget: ${JSON.stringify(got)}`);

  // Signed out with a search typed, and in again: the whole list, the box empty.
  const search = dialog(page).getByRole("searchbox", { name: "Search contacts" });
  await search.fill("real person");
  await until(async () => await people(page).getAttribute("data-count") === "1", "the search");
  await dialog(page).getByRole("button", { name: "Close" }).click();
  await page.click("#signout");
  await page.fill("input[name=username]", LOGIN);
  await page.fill("input[name=password]", USERS.alice);
  await page.click("#signin-form button[type=submit]");
  await page.waitForSelector("#list .row[data-id]");
  await openContacts(page);
  await person(page, /Real Person/).waitFor();
  assert(await search.inputValue() === "" && Number(await people(page).getAttribute("data-count")) > 1,
    `after signing in again: "${await search.inputValue()}", ${await people(page).getAttribute("data-count")} shown`);
  assert(page.errors.length === 0, page.errors.join("; "));

  // The session ends while the book is read: signed out, as for any /api call.
  await dialog(page).getByRole("button", { name: "Close" }).click();
  await cyrusPut("o-real.vcf", card("o-real", "Real Person Two", "real@example.test"));
  await page.route("**/api/dav/**", (r) => r.fulfill({ status: 401, contentType: "application/json",
    body: '{"error":"unauthenticated","message":"no session"}' }));
  await page.getByRole("button", { name: "Contacts", exact: true }).click();
  await page.locator("#signin-error").waitFor({ state: "visible" });
  await page.context().close();
});

test("\"Add to contacts\" on a sender of an open mail opens the form prefilled; saved, it is in Cyrus; asked again, their card", async () => {
  const page = await newPage();
  await signIn(page, "alice");
  await page.fill("#search", "subject:roadmap");
  await page.press("#search", "Enter");
  await row(page, "Q4 roadmap review").click();
  const msg = page.locator("#reader-body article.msg").last();
  await msg.getByRole("button", { name: "More" }).click();
  await page.getByRole("menuitem", { name: "Add to contacts" }).click();
  const f = dialog(page).getByRole("form", { name: "New contact" });
  await f.waitFor();
  const email = await f.getByLabel("Email address", { exact: true }).inputValue();
  const name = await f.getByLabel("Name", { exact: true }).inputValue();
  assert(/@/.test(email) && name, `prefilled: ${name} <${email}>`);
  await f.getByRole("button", { name: "Save contact" }).click();
  await until(async () => (await cyrusCards()).some((c) => c.emails.some((e) => e.value === email) && c.fn === name), "the sender in Cyrus");
  // Asked again: the card the book has, not a form for a second one.
  await dialog(page).getByRole("button", { name: "Close" }).click();
  await msg.getByRole("button", { name: "More" }).click();
  await page.getByRole("menuitem", { name: "Add to contacts" }).click();
  await dialog(page).getByRole("heading", { name, exact: true }).waitFor();
  assert(await dialog(page).getByRole("form", { name: "New contact" }).count() === 0, "no second form");
  assert((await cyrusCards()).filter((c) => c.emails.some((e) => e.value === email)).length === 1, "one card for the sender");
  assert(page.errors.length === 0, page.errors.join("; "));
  await page.context().close();
});

test("import of a 500-card .vcf (3.0 and 4.0, some without UID), then Export all has the same 500 people", async () => {
  const N = 500;
  const cards = [];
  for (let i = 0; i < N; i++) {
    const n = String(i).padStart(3, "0");
    cards.push(i % 2
      ? `BEGIN:VCARD\r\nVERSION:4.0\r\n${i % 10 === 1 ? "" : `UID:urn:uuid:00000000-0000-4000-8000-000000000${n}\r\n`}FN:Imported Person ${n}\r\nN:Person ${n};Imported;;;\r\nEMAIL;TYPE=work:imp${n}@example.test\r\nEND:VCARD\r\n`
      : `BEGIN:VCARD\nVERSION:3.0\nUID:imp-${n}\nFN:Imported Person ${n}\nN:Person ${n};Imported;;;\nEMAIL;TYPE=INTERNET:imp${n}@example.test\nCATEGORIES:Imported\nEND:VCARD\n`);
  }
  const page = await newPage();
  await signIn(page, "alice");
  await openContacts(page);
  const chooser = page.waitForEvent("filechooser");
  await dialog(page).getByRole("button", { name: "Import" }).click();
  const t0 = Date.now();
  await (await chooser).setFiles({ name: "people.vcf", mimeType: "text/vcard", buffer: Buffer.from(cards.join("")) });
  await until(async () => /500 contacts imported/.test(await status(page).textContent()), "imported", 180000);
  metrics.import500Ms = Date.now() - t0;
  const inCyrus = (await cyrusCards()).filter((c) => /^Imported Person/.test(c.fn));
  assert(inCyrus.length === N, `in Cyrus: ${inCyrus.length}`);
  const dl = page.waitForEvent("download");
  await dialog(page).getByRole("button", { name: "Export all" }).click();
  const file = readFileSync(await (await dl).path(), "utf8");
  const out = parseCards(file).map((c) => c.contact).filter((c) => /^Imported Person/.test(c.fn));
  const key = (c) => `${c.fn} <${c.emails.map((e) => e.value).join(",")}>`;
  const want = new Set(cards.map((_, i) => `Imported Person ${String(i).padStart(3, "0")} <imp${String(i).padStart(3, "0")}@example.test>`));
  const got = new Set(out.map(key));
  assert(out.length === N && got.size === N && [...want].every((k) => got.has(k)), `exported ${out.length}, ${got.size} different`);
  assert(page.errors.length === 0, page.errors.join("; "));
  await page.context().close();
});

test("figures: the screen with 2,000 more contacts opens; a full load and a sync after one change, in bytes", async () => {
  const N = 2000;
  await putMany(Array.from({ length: N }, (_, i) => [`big-${i}.vcf`, card(`big-${i}`, `Bulk Person ${String(i).padStart(4, "0")}`, `bulk${i}@example.test`,
    "TEL;TYPE=CELL:+1 555 0100\r\nORG:Bulk Co\r\n")]));
  const total = (await cyrusCards()).length;
  assert(total >= N, `Cyrus has ${total}`);
  const page = await newPage();
  await signIn(page, "alice");
  const t0 = Date.now();
  await page.getByRole("button", { name: "Contacts", exact: true }).click();
  await page.waitForFunction((n) => Number(document.querySelector(".contacts-list")?.dataset.count) === n, total, { timeout: 60000 });
  metrics.contactsOpenMs = Date.now() - t0;
  metrics.contactsInBook = total;
  await person(page, /Bulk Person 1999/).waitFor();
  // A search over them: the key to the list drawn again.
  const search = dialog(page).getByRole("searchbox", { name: "Search contacts" });
  const s0 = Date.now();
  await search.fill("bulk1999@");
  await page.waitForFunction(() => document.querySelector(".contacts-list").dataset.count === "1");
  metrics.contactsSearchMs = Date.now() - s0;
  await search.fill("");
  const full = await page.evaluate(async () => (await import("/js/book-store.js")).stats.full);
  // One card changed behind the app's back: the next opening reads only it.
  await cyrusPut("big-7.vcf", card("big-7", "Renamed Person", "bulk7@example.test"));
  await dialog(page).getByRole("button", { name: "Close" }).click();
  await openContacts(page);
  await person(page, /Renamed Person/).waitFor();
  assert(await person(page, /Bulk Person 0007/).count() === 0, "the old name gone");
  const sync = await page.evaluate(async () => (await import("/js/book-store.js")).stats.sync);
  metrics.bookFullBytes = full.bytes;
  metrics.bookFullRequests = full.requests;
  metrics.bookSyncBytes = sync.bytes;
  metrics.bookSyncRequests = sync.requests;
  assert(sync.bytes * 20 < full.bytes, `incremental ${sync.bytes} bytes vs full ${full.bytes}`);
  // The server refuses the token: the book is read whole, and still right.
  await page.route("**/api/dav/**", async (r) => (/sync-collection/.test(r.request().postData() || "")
    ? r.fulfill({ status: 403, contentType: "application/json", body: '{"error":"dav_refused","message":"valid-sync-token"}' })
    : r.continue()));
  await cyrusPut("big-8.vcf", card("big-8", "Another Rename", "bulk8@example.test"));
  await dialog(page).getByRole("button", { name: "Close" }).click();
  await openContacts(page);
  await person(page, /Another Rename/).waitFor();
  assert(Number(await people(page).getAttribute("data-count")) === total, "the whole book again");
  assert(page.errors.length === 0, page.errors.join("; "));
  await page.context().close();
});

await run();
