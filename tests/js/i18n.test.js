// i18n.js: the language picked, a plural chosen by n, English where a
// catalogue lacks a key. The catalogues are the shipped files, served by
// a stand-in fetch; no browser.
import { test, before } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

const www = new URL("../../www/", import.meta.url);
let i18n;
// A key the stand-in fetch leaves out of the German catalogue.
const DROPPED = "reader.from";

before(async () => {
  globalThis.fetch = async (path) => {
    const cat = JSON.parse(readFileSync(new URL(path, www), "utf8"));
    if (path.endsWith("de.json")) delete cat[DROPPED];
    return { ok: true, json: async () => cat };
  };
  Object.defineProperty(globalThis, "navigator", { configurable: true,
    value: { languages: ["de-AT", "en"], language: "de-AT" } });
  globalThis.document = { documentElement: {} };
  i18n = await import("../../www/js/i18n.js");
});

test("the browser's first language the app has", () => {
  assert.equal(i18n.pickLanguage(), "de");
  assert.equal(i18n.pickLanguage("fr-CA"), "fr");
  assert.equal(i18n.pickLanguage("xx"), "en");
});

test("one and other by n, the value put in", async () => {
  await i18n.init("en");
  assert.match(i18n.t("reader.imagesBlocked", { n: 1 }), /^1 remote image was/);
  assert.match(i18n.t("reader.imagesBlocked", { n: 3 }), /^3 remote images were/);
  assert.equal(i18n.t("no.such.key"), "no.such.key");
  assert.equal(globalThis.document.documentElement.lang, "en");
});

test("another language, and English for what it lacks", async () => {
  assert.equal(await i18n.init("de"), "de");
  const en = JSON.parse(readFileSync(new URL("i18n/en.json", www), "utf8"));
  const de = JSON.parse(readFileSync(new URL("i18n/de.json", www), "utf8"));
  assert.equal(i18n.t("reader.imagesBlocked", { n: 2 }), de["reader.imagesBlocked.other"].replace("{n}", "2"));
  assert.equal(i18n.t("reader.imagesBlocked", { n: 1 }), de["reader.imagesBlocked.one"].replace("{n}", "1"));
  assert.ok(en[DROPPED] && de[DROPPED] && en[DROPPED] !== de[DROPPED]);
  assert.equal(i18n.t(DROPPED), en[DROPPED]);
});

// Every language the app offers has a catalogue as complete as English:
// each key, each plural category its language has (Intl's, so that a
// Polish "few" or an Arabic "two" is never English), the same
// placeholders. A missing one would show English or a raw "{n}".
const PLURAL = /\.(zero|one|two|few|many|other)$/;
const placeholders = (s) => (s.match(/\{\w+\}/g) || []).sort().join();

test("every catalogue complete: keys, plural categories, placeholders", () => {
  const en = JSON.parse(readFileSync(new URL("i18n/en.json", www), "utf8"));
  // A plural is a key with .one and .other forms ("folders.err.other" is
  // the catch-all of an error family, not a plural).
  const plurals = new Set(Object.keys(en).filter((k) => k.endsWith(".one")).map((k) => k.replace(PLURAL, "")));
  assert.ok(i18n.LANGS.length >= 10, "at least ten languages");
  for (const lang of i18n.LANGS) {
    const cat = JSON.parse(readFileSync(new URL(`i18n/${lang}.json`, www), "utf8"));
    const cats = new Intl.PluralRules(lang).resolvedOptions().pluralCategories;
    for (const k of Object.keys(en))
      if (!plurals.has(k.replace(PLURAL, ""))) assert.ok(k in cat, `${lang} lacks ${k}`);
    for (const base of plurals)
      for (const c of cats) assert.ok(`${base}.${c}` in cat, `${lang} lacks ${base}.${c}`);
    for (const [k, v] of Object.entries(cat)) {
      const ref = en[k] ?? (plurals.has(k.replace(PLURAL, "")) ? en[`${k.replace(PLURAL, "")}.other`] : undefined);
      assert.ok(ref !== undefined, `${lang} has ${k}, which English does not`);
      assert.equal(placeholders(v), placeholders(ref), `${lang} ${k}: placeholders`);
    }
  }
});

test("each language's own plural forms: Polish few and many, Arabic two", async () => {
  const pl = JSON.parse(readFileSync(new URL("i18n/pl.json", www), "utf8"));
  const ar = JSON.parse(readFileSync(new URL("i18n/ar.json", www), "utf8"));
  await i18n.init("pl");
  assert.equal(i18n.t("notify.many", { n: 3 }), pl["notify.many.few"].replace("{n}", "3"));
  assert.equal(i18n.t("notify.many", { n: 5 }), pl["notify.many.many"].replace("{n}", "5"));
  assert.notEqual(pl["notify.many.few"], pl["notify.many.many"]);
  await i18n.init("ar");
  assert.equal(i18n.t("notify.many", { n: 2 }), ar["notify.many.two"].replace("{n}", "2"));
});

test("a right-to-left language turns the page right to left, and back", async () => {
  assert.equal(await i18n.init("ar"), "ar");
  assert.equal(globalThis.document.documentElement.dir, "rtl");
  assert.equal(globalThis.document.documentElement.lang, "ar");
  await i18n.init("fr");
  assert.equal(globalThis.document.documentElement.dir, "ltr");
});
