// jmap.js: calls made in one tick go out as one request; each caller's
// ids and result references are its own.
import { test } from "node:test";
import assert from "node:assert/strict";

const sent = [];
globalThis.fetch = async (path, init) => {
  const req = JSON.parse(init.body);
  sent.push({ path, headers: init.headers, req });
  const methodResponses = req.methodCalls.map(([name, args, id]) =>
    name === "Bad/get" ? ["error", { type: "unknownMethod" }, id] : [name, { echo: args }, id]);
  return { ok: true, status: 200, json: async () => ({ methodResponses }), headers: new Map() };
};
const jmap = await import("../../www/js/jmap.js");

test("two callers in one tick: one request, each gets its own answers", async () => {
  sent.length = 0;
  const [a, b] = await Promise.all([
    jmap.call([["Mailbox/get", { ids: null }, "m"], ["Email/query", { "#inMailbox": jmap.ref("m", "Mailbox/get", "/ids") }, "q"]]),
    jmap.call([["Mailbox/get", { ids: ["x"] }, "m"]]),
  ]);
  assert.equal(sent.length, 1);
  assert.equal(sent[0].path, "/api/jmap");
  assert.equal(sent[0].headers["X-Postern-CSRF"], "1");
  const ids = sent[0].req.methodCalls.map((c) => c[2]);
  assert.equal(new Set(ids).size, 3);
  // the reference points at its own caller's call
  const q = sent[0].req.methodCalls[1];
  assert.equal(q[1]["#inMailbox"].resultOf, sent[0].req.methodCalls[0][2]);
  assert.deepEqual(a.m.echo, { ids: null });
  assert.deepEqual(b.m.echo, { ids: ["x"] });
  assert.ok(a.q);
});

test("a method error is the caller's error, the others' answers stand", async () => {
  const r = await jmap.call([["Bad/get", {}, "b"], ["Mailbox/get", {}, "m"]]);
  assert.ok(r.b instanceof jmap.MethodError);
  assert.equal(r.b.type, "unknownMethod");
  await assert.rejects(jmap.one("Bad/get", {}), (e) => e.type === "unknownMethod");
  assert.deepEqual((await jmap.one("Mailbox/get", { a: 1 })).echo, { a: 1 });
});

test("separate ticks are separate requests", async () => {
  sent.length = 0;
  await jmap.call([["Mailbox/get", {}, "m"]]);
  await jmap.call([["Mailbox/get", {}, "m"]]);
  assert.equal(sent.length, 2);
});

// An optional capability goes into `using` only for a request that
// carries a method needing it, and only where the session offers it.
test("the quota capability: only with Quota/ methods, only where offered", async () => {
  const QUOTA = "urn:ietf:params:jmap:quota";
  jmap.useSession({ capabilities: { "urn:ietf:params:jmap:core": {}, [QUOTA]: {} } });
  assert.ok(jmap.has(QUOTA));
  sent.length = 0;
  await jmap.one("Quota/get", { ids: null });
  await jmap.one("Mailbox/get", { ids: null });
  assert.ok(sent[0].req.using.includes(QUOTA), "with Quota/get");
  assert.ok(!sent[1].req.using.includes(QUOTA), "not with Mailbox/get alone");
  jmap.useSession({ capabilities: { "urn:ietf:params:jmap:core": {} } });
  assert.ok(!jmap.has(QUOTA));
  assert.ok(!jmap.usingFor([["Quota/get", {}, "q"]]).includes(QUOTA), "not where the session lacks it");
  jmap.useSession(null);
  assert.ok(!jmap.has(QUOTA), "nothing after sign-out");
});
