// filters.js's pure parts: when a vacation reply answers, the day of a
// date, and the name Sieve's fileinto takes for a folder.
import { test } from "node:test";
import assert from "node:assert/strict";
import { vacationActive, day, folderPath } from "../../www/js/filters.js";

test("a vacation reply answers when on and within its days", () => {
  assert.equal(vacationActive(null, "2026-12-04"), false);
  assert.equal(vacationActive({ on: false }, "2026-12-04"), false);
  assert.equal(vacationActive({ on: true, from: "", until: "" }, "2026-12-04"), true);
  assert.equal(vacationActive({ on: true, from: "2026-12-05", until: "" }, "2026-12-04"), false);
  assert.equal(vacationActive({ on: true, from: "2026-12-04", until: "2026-12-04" }, "2026-12-04"), true);
  assert.equal(vacationActive({ on: true, from: "", until: "2026-12-03" }, "2026-12-04"), false);
});

test("the day is the local calendar day, zero-padded", () => {
  assert.equal(day(new Date(2026, 0, 5, 23, 59)), "2026-01-05");
  assert.equal(day(new Date(2026, 11, 31, 0, 0)), "2026-12-31");
});

test("a folder's Sieve name is its path, the Inbox INBOX", () => {
  const boxes = new Map([
    ["i", { id: "i", name: "Inbox", role: "inbox", parentId: null }],
    ["a", { id: "a", name: "Invoices", parentId: null }],
    ["b", { id: "b", name: "2025", parentId: "a" }],
    ["c", { id: "c", name: "Lists", parentId: "i" }],
    ["x", { id: "x", name: "loop", parentId: "y" }],
    ["y", { id: "y", name: "back", parentId: "x" }],
  ]);
  assert.equal(folderPath(boxes, "i"), "INBOX");
  assert.equal(folderPath(boxes, "a"), "Invoices");
  assert.equal(folderPath(boxes, "b"), "Invoices/2025");
  assert.equal(folderPath(boxes, "c"), "INBOX/Lists");
  assert.equal(folderPath(boxes, "nope"), "");
  // A parent loop (a broken server) ends, never hangs.
  assert.ok(["back/loop", "loop/back"].includes(folderPath(boxes, "x")));
});

// The demo's filter (tests/harness/demo-filter.sieve, stored by
// demo_book.py) is what the filter screen writes: it shows there as a rule.
test("the demo's filter reads back as one of postern's rules", async () => {
  const { readFileSync } = await import("node:fs");
  const { read, write } = await import("../../www/js/sieve.js");
  const text = readFileSync(new URL("../harness/demo-filter.sieve", import.meta.url), "utf8");
  const m = read(text);
  assert.equal(m.rules.length, 1);
  assert.equal(m.rules[0].name, "Newsletters");
  assert.equal(m.rest.trim(), "");
  assert.equal(write(m), text);
});

// The state and intents over a fake /api/sieve (fetch replaced): what a
// late answer and two quick changes do.
async function fakeServer() {
  const server = { script: "", puts: 0, hold: null, arrived: null };
  let arrive;
  server.arrived = new Promise((res) => { arrive = res; });
  globalThis.fetch = async (path, opts = {}) => {
    const json = (status, body) => new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });
    if (opts.method === "PUT") arrive();
    if (server.hold) await server.hold;
    if (path === "/api/sieve" && (opts.method || "GET") === "GET") return json(200, { name: "postern", script: server.script, extensions: [] });
    if (path === "/api/sieve" && opts.method === "PUT") {
      server.puts++;
      server.script = JSON.parse(opts.body).script;
      return json(200, { name: "postern", active: true });
    }
    return json(404, { error: "not_found" });
  };
  return server;
}
const rule = (name) => ({ name, on: true, all: true, when: [{ field: "from", op: "contains", value: name }], then: [{ act: "flag" }] });

test("two quick changes are both stored, each on the other's result", async () => {
  const server = await fakeServer();
  const f = await import("../../www/js/filters.js");
  f.forget();
  await f.load();
  await Promise.all([f.update((m) => { m.rules.push(rule("one")); }), f.update((m) => { m.rules.push(rule("two")); })]);
  assert.equal(server.puts, 2);
  assert.deepEqual(f.state.model.rules.map((r) => r.name), ["one", "two"]);
  assert.match(server.script, /"one"[\s\S]*"two"/);
});

test("an answer that comes after sign-out changes nothing", async () => {
  const server = await fakeServer();
  const f = await import("../../www/js/filters.js");
  f.forget();
  await f.load();
  let open;
  server.hold = new Promise((res) => { open = res; });
  const saving = f.update((m) => { m.rules.push(rule("theirs")); });
  const loading = f.load();
  await server.arrived;         // the PUT is out, held by the server
  f.forget();
  open();
  await saving;
  await loading;
  assert.equal(server.puts, 1, "the answer came after sign-out");
  assert.equal(f.state.model, null, "the next person sees none of it");
  assert.equal(f.state.available, null);
});
