// Browser tests of the filters and the vacation reply against the real
// Cyrus (its ManageSieve, timsieved, through postern's /api/sieve): a
// rule made in the app files mail delivered over LMTP; "filter messages
// like this"; a hand-written part survives the rule builder; the server's
// check shows its error at the line; the vacation reply answers through
// the SMTP sink and stops when turned off from its banner; the screens
// hide where the server has no ManageSieve. Controls found by role and
// accessible name. node tests/browser/filters.test.mjs (ONLY=text runs some)
import { test, assert, until, newPage, signIn, jmapIn, deliver, sunk, metrics, diag, run, stack } from "./lib.mjs";

const ALICE = "alice@example.test";

// The page's user's stored script, as postern's API gives it.
async function script(page) {
  const r = await page.evaluate(async () => (await fetch("/api/sieve")).json());
  return r.script;
}
async function putScript(page, text) {
  const status = await page.evaluate(async (text) => (await fetch("/api/sieve", { method: "PUT",
    headers: { "Content-Type": "application/json", "X-Postern-CSRF": "1" }, body: JSON.stringify({ script: text }) })).status, text);
  assert(status === 200, `script stored: ${status}`);
}
// A folder of this name, made if missing: its id.
async function folder(page, name) {
  const [[, got]] = await jmapIn(page, [["Mailbox/get", { accountId: "$ACC", properties: ["name"] }, "m"]]);
  const have = got.list.find((b) => b.name === name);
  if (have) return have.id;
  const [[, r]] = await jmapIn(page, [["Mailbox/set", { accountId: "$ACC", create: { f: { name, parentId: null } } }, "s"]]);
  assert(r.created?.f, `folder ${name}: ${JSON.stringify(r)}`);
  return r.created.f.id;
}
// The folders holding the newest mail with this subject (ids), or null.
async function whereIs(page, subject) {
  const [, [, g]] = await jmapIn(page, [
    ["Email/query", { accountId: "$ACC", filter: { subject }, sort: [{ property: "receivedAt", isAscending: false }], limit: 1 }, "q"],
    ["Email/get", { accountId: "$ACC", "#ids": { resultOf: "q", name: "Email/query", path: "/ids" }, properties: ["mailboxIds"] }, "g"]]);
  return g.list[0] ? Object.keys(g.list[0].mailboxIds) : null;
}
// JMAP straight at Cyrus as another demo user (not through postern).
async function cyrusJmap(login, calls) {
  const auth = "Basic " + Buffer.from(`${login}:${login.split("@")[0]}-demo-pass`).toString("base64");
  const r = await fetch(`${stack.cyrus.base}/jmap/`, { method: "POST", headers: { Authorization: auth, "Content-Type": "application/json" },
    body: JSON.stringify({ using: ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:mail", "urn:ietf:params:jmap:submission"],
      methodCalls: calls }).replaceAll('"$ACC"', JSON.stringify(login)) });
  assert(r.ok, `Cyrus JMAP as ${login}: ${r.status}`);
  return (await r.json()).methodResponses;
}
// Sends a plain mail as login through Cyrus's submission: it leaves
// through the SMTP sink, which delivers it to the demo users over LMTP.
async function sendFrom(login, to, subject, text) {
  const [[, ids], [, boxes]] = await cyrusJmap(login, [["Identity/get", { accountId: "$ACC" }, "i"],
    ["Mailbox/get", { accountId: "$ACC", properties: ["role"] }, "m"]]);
  const drafts = boxes.list.find((m) => m.role === "drafts").id;
  const r = await cyrusJmap(login, [
    ["Email/set", { accountId: "$ACC", create: { m: { mailboxIds: { [drafts]: true }, from: [{ email: login }], to: [{ email: to }],
      subject, bodyValues: { b: { value: text } }, textBody: [{ partId: "b", type: "text/plain" }] } } }, "e"],
    ["EmailSubmission/set", { accountId: "$ACC", create: { s: { identityId: ids.list[0].id, emailId: "#m" } } }, "s"]]);
  assert(r[1][1].created?.s, `sent: ${JSON.stringify(r).slice(0, 300)}`);
}
// The subjects in login's Inbox (straight from Cyrus).
async function inboxOf(login) {
  const [[, boxes]] = await cyrusJmap(login, [["Mailbox/get", { accountId: "$ACC", properties: ["role"] }, "m"]]);
  const inbox = boxes.list.find((m) => m.role === "inbox").id;
  const [, [, g]] = await cyrusJmap(login, [
    ["Email/query", { accountId: "$ACC", filter: { inMailbox: inbox } }, "q"],
    ["Email/get", { accountId: "$ACC", "#ids": { resultOf: "q", name: "Email/query", path: "/ids" }, properties: ["subject", "from"] }, "g"]]);
  return g.list;
}
const mail = (from, subject, to = ALICE) =>
  `From: ${from}\nTo: ${to}\nSubject: ${subject}\nMessage-ID: <${Date.now()}.${Math.random()}@example.test>\n` +
  `Date: ${new Date().toUTCString()}\n\nHello.\n`;

const dialog = (page) => page.getByRole("dialog", { name: "Filters and vacation reply" });
async function openFilters(page) {
  await page.getByRole("button", { name: "Filters", exact: true }).click();
  await dialog(page).getByRole("heading", { name: "Filters", exact: true }).waitFor();
}

test("filters: a rule made in the app files mail delivered over LMTP into its folder", async () => {
  const page = await newPage();
  await signIn(page, "alice");
  await putScript(page, "");
  const invoices = await folder(page, "Invoices");
  await page.reload();
  await page.waitForSelector("#list .row[data-id]");
  // For the figures: from the click to the screen with its rules (the
  // script read again over ManageSieve).
  const t0 = Date.now();
  const read = page.waitForResponse((r) => r.url().endsWith("/api/sieve"));
  await page.getByRole("button", { name: "Filters", exact: true }).click();
  await read;
  await dialog(page).getByRole("button", { name: "New filter" }).waitFor();
  metrics.filtersOpenMs = Date.now() - t0;
  diag(`filter screen open: ${metrics.filtersOpenMs} ms`);
  const d = dialog(page);
  await d.getByRole("button", { name: "New filter" }).click();
  await d.getByRole("textbox", { name: "Name" }).fill("Erin's invoices");
  const c1 = d.getByRole("group", { name: "Condition 1" });
  await c1.getByRole("combobox", { name: "Field" }).selectOption({ label: "From" });
  await c1.getByRole("combobox", { name: "Test" }).selectOption({ label: "contains" });
  await c1.getByRole("textbox", { name: "Value" }).fill("erin@");
  const a1 = d.getByRole("group", { name: "Action 1" });
  await a1.getByRole("combobox", { name: "Action" }).selectOption({ label: "Move to" });
  await a1.getByRole("combobox", { name: "Folder" }).selectOption({ label: "Invoices" });
  await d.getByRole("button", { name: "Save filter" }).click();
  await d.getByRole("list", { name: "Filters" }).getByText("Erin's invoices").waitFor();
  assert(/fileinto :create "Invoices"/.test(await script(page)), "the script files into Invoices");

  await deliver(ALICE, mail("Erin <erin@example.test>", "Invoice 42"), "erin@example.test");
  await deliver(ALICE, mail("Frank <frank@example.test>", "Not an invoice"), "frank@example.test");
  await until(async () => (await whereIs(page, "Invoice 42"))?.includes(invoices), "Invoice 42 filed into Invoices");
  // The search index takes new mail within a second or so (Cyrus's
  // rolling squatter): wait until it finds frank's.
  await until(async () => (await whereIs(page, "Not an invoice")) !== null, "frank's mail indexed");
  const other = await whereIs(page, "Not an invoice");
  assert(!other.includes(invoices), `frank's mail stays out of Invoices: ${other}`);

  // Off: the rule stays, and mail is no longer filed.
  await d.getByRole("checkbox", { name: "Filter Erin's invoices on" }).uncheck();
  await until(async () => !/fileinto/.test(await script(page)), "the rule off leaves no code");
  await deliver(ALICE, mail("Erin <erin@example.test>", "Invoice 43"), "erin@example.test");
  await until(async () => (await whereIs(page, "Invoice 43")) !== null, "Invoice 43 delivered");
  assert(!(await whereIs(page, "Invoice 43")).includes(invoices), "a rule turned off files nothing");
  assert(page.errors.length === 0, page.errors.join("\n"));
  await page.context().close();
});

test("filters: \"Filter messages like this\" opens the builder with the sender", async () => {
  const page = await newPage();
  await signIn(page, "alice");
  await deliver(ALICE, mail("Grace <grace@example.test>", "Grace writes"), "grace@example.test");
  await until(async () => (await whereIs(page, "Grace writes")) !== null, "delivered");
  await page.locator("#list .row[data-id]", { hasText: "Grace writes" }).first().click();
  const msg = page.getByRole("article", { name: /Grace/ });
  await msg.getByRole("button", { name: "More" }).click();
  await page.getByRole("menuitem", { name: "Filter messages like this" }).click();
  const d = dialog(page);
  const c1 = d.getByRole("group", { name: "Condition 1" });
  assert(await c1.getByRole("textbox", { name: "Value" }).inputValue() === "grace@example.test", "the sender's address");
  assert(await d.getByRole("textbox", { name: "Name" }).inputValue() !== "", "named after the sender");
  assert(await page.evaluate(() => location.hash) === "#/filters", "the filters' place");
  await d.getByRole("button", { name: "Cancel" }).click();
  await d.getByRole("button", { name: "New filter" }).waitFor();
  await page.context().close();
});

test("filters: a hand-written part survives an edit through the rule builder", async () => {
  const page = await newPage();
  await signIn(page, "alice");
  await putScript(page, "");
  await openFilters(page);
  const d = dialog(page);
  await d.getByRole("button", { name: "Edit as Sieve" }).click();
  const own = 'require ["fileinto", "imap4flags"];\n# my own rule\nif header :contains "subject" "hand-made" {\n  addflag "\\\\Flagged";\n}\n';
  await d.getByRole("textbox", { name: "Sieve script" }).fill(own);
  await d.getByRole("button", { name: "Save script" }).click();
  await d.getByText(/rules written by hand/).waitFor();

  await d.getByRole("button", { name: "New filter" }).click();
  await d.getByRole("textbox", { name: "Name" }).fill("Lists");
  await d.getByRole("group", { name: "Condition 1" }).getByRole("textbox", { name: "Value" }).fill("lists@");
  await d.getByRole("group", { name: "Action 1" }).getByRole("combobox", { name: "Action" }).selectOption({ label: "Mark as read" });
  await d.getByRole("button", { name: "Save filter" }).click();
  await d.getByRole("list", { name: "Filters" }).getByText("Lists", { exact: true }).waitFor();
  const s = await script(page);
  assert(s.includes('# my own rule\nif header :contains "subject" "hand-made" {\n  addflag "\\\\Flagged";\n}'), `kept verbatim:\n${s}`);
  assert(/addflag "\\\\Seen"/.test(s), `the new rule is there:\n${s}`);
  // And in the Sieve editor, with the rule.
  await d.getByRole("button", { name: "Edit as Sieve" }).click();
  const text = await d.getByRole("textbox", { name: "Sieve script" }).inputValue();
  assert(text.includes("# my own rule") && text.includes("Lists"), "the raw editor shows both");
  await page.context().close();
});

test("filters: the server's check shows its error at the line, and a refused script changes nothing", async () => {
  const page = await newPage();
  await signIn(page, "alice");
  const before = 'require ["fileinto"];\nif header :contains "subject" "x" { fileinto "INBOX"; }\n';
  await putScript(page, before);
  await openFilters(page);
  const d = dialog(page);
  await d.getByRole("button", { name: "Edit as Sieve" }).click();
  const area = d.getByRole("textbox", { name: "Sieve script" });
  await area.fill('require ["fileinto"];\n# fine\nif header :contains "subject" "x" { fileinto "INBOX" }\n');
  await d.getByRole("button", { name: "Check" }).click();
  const alert = d.getByRole("alert");
  await alert.waitFor();
  assert(/line 3/i.test(await alert.textContent()), `the line named: ${await alert.textContent()}`);
  const sel = await area.evaluate((el) => el.value.slice(0, el.selectionStart).split("\n").length);
  assert(sel === 3, `the cursor is on line 3: ${sel}`);
  await d.getByRole("button", { name: "Save script" }).click();
  await until(async () => /line 3/i.test(await alert.textContent()), "saving shows the same error");
  assert(await script(page) === before, "the stored script is unchanged");
  // A good one checks clean.
  await area.fill(before);
  await d.getByRole("button", { name: "Check" }).click();
  await d.getByText("The mail server found no errors.").waitFor();
  await page.context().close();
});

test("vacation: on answers a mail delivered to alice through the SMTP sink, off from the banner stops it", async () => {
  const page = await newPage();
  await signIn(page, "alice");
  await putScript(page, "");
  await openFilters(page);
  const d = dialog(page);
  const form = d.getByRole("form", { name: "Vacation reply" });
  await form.getByRole("checkbox", { name: "Answer incoming mail with this reply" }).check();
  await form.getByRole("textbox", { name: "Subject" }).fill("Away until Monday");
  await form.getByRole("textbox", { name: "Message" }).fill("I am away.\nBack on Monday.");
  await form.getByRole("spinbutton", { name: "Days before the same sender is answered again" }).fill("1");
  await form.getByRole("button", { name: "Save vacation reply" }).click();
  await form.getByText("The vacation reply is on.").waitFor();
  await d.getByRole("button", { name: "Close" }).click();
  const banner = page.getByRole("status").filter({ hasText: "Your vacation reply is on." });
  await banner.waitFor();

  // Bob writes to alice through the SMTP sink; the reply leaves through
  // it too and lands in bob's Inbox.
  const replies = (to) => sunk().filter((m) => m.to.includes(to) && /Away until Monday/.test(m.text));
  await sendFrom("bob@example.test", ALICE, "Are you there?", "Hello Alice.");
  await until(async () => replies("bob@example.test").length === 1, "the vacation reply left through the sink");
  const r = replies("bob@example.test")[0];
  assert(r.from === "", `sent with an empty return path: ${JSON.stringify(r.from)}`);
  assert(/Back on Monday/.test(r.text), "the reply carries the text");
  await until(async () => (await inboxOf("bob@example.test")).some((e) => e.subject === "Away until Monday"
    && e.from?.[0]?.email === ALICE), "the reply reached bob's Inbox");
  // What the "off" check below rests on: a reply is in the spool by the
  // time LMTP's DATA is answered (no waiting).
  await deliver(ALICE, mail("Dave <dave@example.org>", "Out too?"), "dave@example.org");
  assert(replies("dave@example.org").length === 1, "the reply was sent before LMTP answered");

  await banner.getByRole("button", { name: "Turn off" }).click();
  await until(async () => !/vacation :days/.test(await script(page)), "the vacation is off in the script");
  // The server has the script before the app has its answer: wait for both.
  await until(async () => banner.isHidden(), "the banner goes");
  // Cyrus has sent any vacation reply by the time LMTP's DATA is answered
  // (../shared/docs/upstreams.md), and the sink writes it before it
  // answers: once deliver() is back, a reply would be in the spool.
  await deliver(ALICE, mail("Carol <carol@example.test>", "Still away?"), "carol@example.test");
  assert(replies("carol@example.test").length === 0, "no reply once it is off");
  await page.context().close();
});

test("filters: turned off by the operator, nothing is asked and the entry hides", async () => {
  const page = await newPage();
  await page.route("**/api/config", async (r) => {
    const res = await r.fetch();
    const c = await res.json();
    await r.fulfill({ response: res, json: { ...c, features: { ...c.features, filters: false } } });
  });
  await signIn(page, "alice");
  await until(async () => page.getByRole("button", { name: "Filters", exact: true }).isHidden(), "the entry hides");
  assert(!page.requests.some((u) => u.endsWith("/api/sieve")), "no /api/sieve request");
  await page.context().close();
});

test("filters: hidden where the server has no ManageSieve", async () => {
  const page = await newPage();
  await page.route("**/api/sieve", (r) => r.fulfill({ status: 502, contentType: "application/json",
    body: JSON.stringify({ error: "sieve_unavailable", message: "The filter server cannot be reached." }) }));
  await signIn(page, "alice");
  await until(async () => page.getByRole("button", { name: "Filters", exact: true }).isHidden(), "the entry hides");
  await page.locator("#list .row[data-id]").first().click();
  const msg = page.getByRole("article").last();
  await msg.getByRole("button", { name: "More" }).click();
  await page.getByRole("menuitem").first().waitFor();
  assert(await page.getByRole("menuitem", { name: "Filter messages like this" }).count() === 0, "no filter item");
  await page.goto(page.url().replace(/#.*$/, "") + "#/filters");
  await dialog(page).getByText("This mail server offers no filters or vacation reply.").waitFor();
  await page.context().close();
});

run();
