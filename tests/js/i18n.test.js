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
