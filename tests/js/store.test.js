// store.js: its events are one list, and the views' intents change state
// only through it. Runs without a browser: the store touches no DOM.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import * as store from "../../www/js/store.js";

const www = new URL("../../www/", import.meta.url);

test("an event that is not in the list is refused, both ways", () => {
  assert.throws(() => store.on("lsit", () => {}), /no event lsit/);
  assert.throws(() => store.emit("mailbox"), /no event mailbox/);
  let got = null;
  store.on("arrived", (n) => { got = n; });
  store.emit("arrived", 2);
  assert.equal(got, 2);
});

test("every event the app names is in the list", () => {
  const files = ["app.js", ...readdirSync(new URL("js/", www)).filter((f) => f.endsWith(".js")).map((f) => `js/${f}`),
    ...readdirSync(new URL("js/views/", www)).map((f) => `js/views/${f}`)];
  const named = new Set();
  for (const f of files) {
    const text = readFileSync(new URL(f, www), "utf8");
    for (const m of text.matchAll(/\b(?:store\.)?(?:on|emit)\("([a-z-]+)"/g)) named.add(m[1]);
  }
  assert.ok(named.size >= 5, `found ${[...named]}`);
  for (const ev of named) assert.ok(Object.hasOwn(store.EVENTS, ev), `${ev} is not a store event`);
});

test("the views' intents: order, search words, rows in view", () => {
  store.setThreads(0);
  assert.equal(store.state.threads, false);
  store.setThreads(true);
  assert.equal(store.state.threads, true);
  store.setQuery("from:ana");
  assert.equal(store.state.query, "from:ana");
  store.setView(10, 40);
  assert.deepEqual(store.state.view, { from: 10, to: 40 });
});

test("signing out forgets the emails seen", () => {
  store.state.emails.set("e1", { id: "e1" });
  store.setSession(null);
  assert.equal(store.state.emails.size, 0);
  assert.equal(store.state.accountId, null);
});
