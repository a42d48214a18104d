// The service worker's list of the app's files and its version
// (www/js/precache.js, written by scripts/sw-precache.mjs): fresh, every
// file shipped by Makefile.am; the manifest and its icons. node --test.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { createHash } from "node:crypto";
import { text, files } from "../../scripts/sw-precache.mjs";
import { VERSION, FILES } from "../../www/js/precache.js";

const www = fileURLToPath(new URL("../../www/", import.meta.url));
const read = (p) => readFileSync(new URL(`../../${p}`, import.meta.url));
const LIST = Object.keys(FILES);

test("the list and the version are what scripts/sw-precache.mjs writes now", () => {
  const want = text(www);
  assert.ok(readFileSync(www + "js/precache.js", "utf8") === want,
    "www/js/precache.js is stale (a file under www/ was added, removed or changed): run node scripts/sw-precache.mjs");
  assert.match(VERSION, /^[0-9a-f]{16}$/);
  assert.deepEqual(LIST, files(www));
});

test("each file's sum is the start of its SHA-256; precache.js, which holds them, has none", () => {
  for (const [f, want] of Object.entries(FILES)) {
    if (f === "js/precache.js") assert.equal(want, "");
    else assert.equal(want, createHash("sha256").update(readFileSync(www + f)).digest("hex").slice(0, 16), f);
  }
});

test("the list holds the app's every file, never an API path or the worker itself", () => {
  for (const f of ["index.html", "app.js", "style.css", "manifest.json", "js/store.js", "js/views/reader.js",
    "i18n/ar.json", "vendor/purify.es.js", "icons/icon-192.png"]) assert.ok(LIST.includes(f), f);
  assert.ok(!LIST.some((f) => /^(api|api-errors)\//.test(f) || f === "sw.js" || /LICENSE|README/.test(f)));
  for (const f of LIST) assert.ok(existsSync(www + f), f);
});

test("every file of the list and the worker are in Makefile.am's lists, so make install ships them", () => {
  const mk = read("Makefile.am").toString();
  for (const f of [...LIST, "sw.js"]) assert.ok(new RegExp(`(^|\\s)www/${f.replace(/\./g, "\\.")}(\\s|$)`, "m").test(mk), `www/${f} in Makefile.am`);
});

// A PNG's width and height, from its IHDR.
const size = (buf) => [buf.readUInt32BE(16), buf.readUInt32BE(20)];

test("the manifest: installable fields, its icons there at their sizes; the page links it", () => {
  const m = JSON.parse(read("www/manifest.json"));
  assert.equal(m.start_url, "./");
  assert.equal(m.scope, "./");
  assert.equal(m.display, "standalone");
  assert.ok(m.name && m.short_name);
  // the colours of style.css: the accent and the light background
  const css = read("www/style.css").toString();
  assert.ok(css.includes(`--accent: ${m.theme_color};`), m.theme_color);
  assert.ok(/--bg: #fff;/.test(css) && m.background_color === "#ffffff");
  for (const want of [["192x192", "any"], ["512x512", "any"], ["512x512", "maskable"]]) {
    const icon = m.icons.find((i) => i.sizes === want[0] && i.purpose === want[1]);
    assert.ok(icon, want.join(" "));
    assert.equal(icon.type, "image/png");
    assert.deepEqual(size(read("www/" + icon.src)), want[0].split("x").map(Number), icon.src);
  }
  const html = read("www/index.html").toString();
  assert.match(html, /<link rel="manifest" href="manifest.json">/);
  const touch = html.match(/<link rel="apple-touch-icon" href="([^"]+)">/);
  assert.ok(touch && LIST.includes(touch[1]));
  assert.deepEqual(size(read("www/" + touch[1])), [180, 180]);
});
