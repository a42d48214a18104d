// quota.js: the quota the usage bar shows, its share and its level.
import { test } from "node:test";
import assert from "node:assert/strict";
import { pick, share, level } from "../../www/js/quota.js";

const MB = 1024 * 1024;
const q = (o) => ({ resourceType: "octets", scope: "account", types: ["Mail"], used: 0, hardLimit: 100 * MB, ...o });

test("the mail quota in octets, the tightest of several", () => {
  assert.equal(pick([]), null);
  assert.equal(pick(null), null);
  assert.equal(pick([q({ resourceType: "count" })]), null, "a count of messages is not storage");
  assert.equal(pick([q({ types: ["Calendar"] })]), null, "another kind of data");
  assert.equal(pick([q({ hardLimit: 0 })]), null, "no limit to show");
  const account = q({ id: "a", used: 10 * MB });
  const domain = q({ id: "d", scope: "domain", types: [], used: 995 * MB, hardLimit: 1000 * MB });
  assert.equal(pick([account, domain]).id, "d", "5 MB left beats 90 MB left");
  assert.equal(pick([account]).id, "a");
  // Stalwart's own: the JMAP type names, no warnLimit.
  const stalwart = { id: "s", resourceType: "octets", scope: "account", used: 5 * MB, hardLimit: 50 * MB,
    warnLimit: null, softLimit: null, types: ["Email", "SieveScript", "FileNode"] };
  assert.equal(pick([stalwart]).id, "s");
  assert.equal(level(stalwart), "ok");
});

test("share and level: warnLimit, else 90 %, and full", () => {
  assert.equal(share(q({ used: 25 * MB })), 0.25);
  assert.equal(share(q({ used: 120 * MB })), 1);
  assert.equal(level(q({ used: 50 * MB })), "ok");
  assert.equal(level(q({ used: 91 * MB })), "warn");
  assert.equal(level(q({ used: 60 * MB, warnLimit: 50 * MB })), "warn");
  assert.equal(level(q({ used: 100 * MB })), "full");
});
