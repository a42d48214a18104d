// Browser tests of live mail (issue 17) against the real stack with the
// shipped poll intervals: pushd polls Cyrus (no push) every 30 s, every
// 4 s while a tab of the account is in view. Debian's Chromium driven by
// playwright-core; TAP. Controls are found by role and accessible name.
//   node tests/browser/live.test.mjs        (LIVE_MAILS=20 for the figures)
//
// A hidden page and the notifications shown: lib.mjs's watched (an init
// script), with the permission granted to the context.
process.env.POSTERN_STACK_CONF = JSON.stringify({ push_poll_interval: "30s" });
const { test, assert, until, diag, metrics, newPage, signIn, sendAs, deliver, putSettings, row, watched, run } = await import("./lib.mjs");

// push_poll_visible's default, and the bound of issue 17: at most 5 s
// from delivery to the row, one poll's answer and the refresh included.
const VISIBLE_S = 4;
const BOUND_MS = 5000;
const MAILS = Number(process.env.LIVE_MAILS) || 3;

const pct = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.ceil(p / 100 * s.length) - 1)]; };

async function openSettings(page, name = "Settings") {
  await page.getByRole("button", { name, exact: true }).click();
  return page.getByRole("dialog");
}

test("live: mail that came while the stream was opening is shown once it is open", async () => {
  // The mail comes after the app loaded its list and before its stream
  // opens: no event tells of it; the app's look at the open shows it.
  const page = await newPage();
  let release, asked = false;
  const held = new Promise((r) => { release = r; });
  await page.route(/\/api\/events\?/, async (route) => {
    if (route.request().method() === "GET") { asked = true; await held; }
    await route.continue();
  });
  await signIn(page, "carol");
  await until(async () => asked, "the app asks for its event stream");
  const subject = `While the stream opens ${Date.now()}`;
  await deliver("carol@example.test", `From: Dave <dave@example.test>\r\nTo: carol@example.test\r\n` +
    `Subject: ${subject}\r\nMessage-ID: <opening-${Date.now()}@example.test>\r\n\r\nHello.\r\n`);
  release();
  await row(page, subject).waitFor({ timeout: 10000 });
  await page.context().close();
});

test("live: mail delivered to Cyrus appears in a visible tab within 5 s (poll mode)", async () => {
  const alice = await newPage();
  await signIn(alice, "alice");
  const bob = await newPage();
  await signIn(bob, "bob");
  const took = [];
  for (let i = 0; i < MAILS; i++) {
    // Spread the deliveries over the poll's phase (not a wait for anything).
    await new Promise((r) => setTimeout(r, Math.random() * VISIBLE_S * 1000));
    const subject = `In view ${i} ${Date.now()}`;
    await sendAs(bob, "alice@example.test", subject, "Watch me arrive.");
    const t0 = Date.now();
    await row(alice, subject).waitFor({ timeout: 40000 });
    took.push(Date.now() - t0);
  }
  metrics.visibleArrivalMs = { n: took.length, p50: pct(took, 50), p95: pct(took, 95), max: Math.max(...took), all: took };
  diag(`delivery to a visible tab, Cyrus, push_poll_visible ${VISIBLE_S} s: ${JSON.stringify(metrics.visibleArrivalMs)}`);
  assert(Math.max(...took) <= BOUND_MS, `every mail within ${BOUND_MS} ms: ${took}`);
  await bob.context().close();
  await alice.context().close();
});

test("notifications: asked for from the setting, shown for mail arriving while hidden; a click opens it; the favicon counts", async () => {
  const page = await newPage();
  await page.context().grantPermissions(["notifications"]);
  await page.addInitScript(watched);
  await signIn(page, "carol");
  assert(await page.evaluate(() => self.__asked === 0 && self.__notes.length === 0), "nothing asked or shown on load");
  const icon0 = await page.evaluate(() => document.querySelector("link[rel=icon]").href);
  assert(icon0.startsWith("data:image/png"), `the favicon is drawn: ${icon0.slice(0, 30)}`);
  const dlg = await openSettings(page);
  const box = dlg.getByRole("checkbox", { name: "Notifications on this device" });
  await box.check();
  assert(await box.isChecked(), "the permission was granted: the box stays on");
  await dlg.getByRole("button", { name: "Save" }).click();
  await until(async () => !(await page.locator("#settings").evaluate((d) => d.open)), "the settings closed");

  // Hidden: the tab holding the stream tells pushd (after its 3 s wait).
  const told = page.waitForRequest((r) => r.method() === "POST" && r.url().includes("/api/events?visible=0"), { timeout: 10000 });
  await page.evaluate(() => self.__setHidden(true));
  await told;
  const bob = await newPage();
  await signIn(bob, "bob");
  const subject = `While away ${Date.now()}`;
  await sendAs(bob, "carol@example.test", subject, "You were not looking.");
  const t0 = Date.now();
  // pushd polls every 30 s now: the hidden interval.
  const shown = await until(() => page.evaluate((s) => self.__notes.map((n) => n.shown).find((n) => n.body === s), subject),
    "a notification of the new mail", 45000);
  metrics.hiddenNotificationMs = Date.now() - t0;
  assert(/bob/i.test(shown.title), `the sender is its title: ${shown.title}`);
  assert(shown.tag.startsWith("postern-"), `tagged by the mail: ${shown.tag}`);
  // The count comes with the folders' refresh, which may follow the
  // notification by a request.
  await until(async () => {
    const icon1 = await page.evaluate(() => document.querySelector("link[rel=icon]").href);
    return icon1 !== icon0 && icon1.startsWith("data:image/png");
  }, "the favicon changed with the count", 10000);
  assert(/^\(\d+\)/.test(await page.title()), `the title counts: ${await page.title()}`);

  // Coming back: pushd is told at once; the click opens the mail.
  const back = page.waitForRequest((r) => r.method() === "POST" && r.url().includes("/api/events?visible=1"), { timeout: 5000 });
  await page.evaluate(() => self.__setHidden(false));
  await back;
  await page.evaluate((s) => self.__notes.find((n) => n.shown.body === s).onclick(), subject);
  await page.getByRole("heading", { name: subject }).waitFor({ timeout: 10000 });
  await bob.context().close();
  await page.context().close();
});

test("language: a change in the settings redraws every string and date at once", async () => {
  const page = await newPage();
  await signIn(page, "bob");
  await putSettings(page, { language: "en" });
  await page.reload();
  await page.waitForSelector("#list .row[data-id]");
  const first = page.locator("#list .row[data-id]").first();
  await first.click();
  const longEn = await page.locator("#reader-body time").first().textContent();
  const dateEn = await first.locator(".date").textContent();
  const dlg = await openSettings(page, "Settings");
  await dlg.getByRole("combobox", { name: "Language" }).selectOption({ label: "Deutsch" });
  await dlg.getByRole("button", { name: "Save" }).click();
  // Every string at once: the toolbar's names, in German, with no reload.
  await page.getByRole("button", { name: "Einstellungen", exact: true }).waitFor({ timeout: 5000 });
  const dateDe = await first.locator(".date").textContent();
  const longDe = await page.locator("#reader-body time").first().textContent();
  diag(`list date ${dateEn} → ${dateDe}; reader ${longEn} → ${longDe}`);
  const de = (s) => /Montag|Dienstag|Mittwoch|Donnerstag|Freitag|Samstag|Sonntag/.test(s);
  assert(de(longDe) && !de(longEn), `the reader's date in German: ${longDe}`);
  assert(dateDe !== dateEn, `the list's date redrawn: ${dateEn} → ${dateDe}`);
  await putSettings(page, { language: "" });
  await page.context().close();
});

await run();
