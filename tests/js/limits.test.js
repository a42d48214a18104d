// The size-limit arithmetic (www/js/limits.js): node --test, no browser.
import { test } from "node:test";
import assert from "node:assert/strict";
import { limits, check, attachmentRoom, encoded, futureRelease } from "../../www/js/limits.js";

const MiB = 1048576;
// The session Cyrus 3.6.1 gives (the parts that matter).
const cyrus = {
  capabilities: { "urn:ietf:params:jmap:core": { maxSizeUpload: 1024 * MiB } },
  accounts: { a: { accountCapabilities: {
    "urn:ietf:params:jmap:mail": { maxSizeAttachmentsPerEmail: 10 * MiB },
    "urn:ietf:params:jmap:submission": { maxDelayedSend: 44236800, submissionExtensions: { size: ["26214400"] } } } } },
};

test("base64 as Cyrus writes it: 72 characters a line", () => {
  // measured: an 18 MiB attachment made a 25,865,436-byte message, 18.5 MiB one of 26,583,906
  assert.ok(Math.abs(encoded(18 * MiB) - 25865436) < 1024);
  assert.ok(Math.abs(encoded(18.5 * MiB) - 26583906) < 1024);
});

test("Cyrus: 50 MiB for postern, 1 GiB upload, 10 MiB of attachments, 25 MiB a message: 10 MiB applies", () => {
  const l = limits({ uploadMax: 50 * MiB, session: cyrus, accountId: "a" });
  assert.deepEqual(l.file, { max: 50 * MiB, source: "postern" });
  assert.deepEqual(l.attachments, { max: 10 * MiB, source: "attachments" });
  assert.deepEqual(l.message, { max: 26214400, source: "message" });
  assert.deepEqual(attachmentRoom(l, 100, 1), { max: 10 * MiB, source: "attachments" });
  assert.equal(check(l, 9 * MiB, [], 100), null);
  assert.deepEqual(check(l, 20 * MiB, [], 100), { reason: "total", max: 10 * MiB, source: "attachments", used: 0 });
  assert.deepEqual(check(l, 2 * MiB, [9 * MiB], 100), { reason: "total", max: 10 * MiB, source: "attachments", used: 9 * MiB });
});

test("without maxSizeAttachmentsPerEmail the message size limit counts base64", () => {
  const s = structuredClone(cyrus);
  delete s.accounts.a.accountCapabilities["urn:ietf:params:jmap:mail"].maxSizeAttachmentsPerEmail;
  const l = limits({ uploadMax: 50 * MiB, session: s, accountId: "a" });
  const room = attachmentRoom(l, 1000, 1);
  assert.equal(room.source, "message");
  // 18 MiB went through Cyrus and 18.5 MiB was refused
  assert.ok(room.max > 18 * MiB && room.max < 18.5 * MiB, `${room.max / MiB} MiB`);
  assert.equal(check(l, 18 * MiB, [], 1000), null);
  assert.equal(check(l, 18.5 * MiB, [], 1000).reason, "total");
  // a long text leaves less room
  // (2 MiB of text, quoted-printable at worst, is 1.6 MiB of attachment as base64)
  assert.ok(attachmentRoom(l, 2 * MiB, 1).max < room.max - 1.5 * MiB);
});

test("the smallest per file wins; a limit learned from a refusal counts", () => {
  let l = limits({ uploadMax: 1000, session: cyrus, accountId: "a" });
  assert.deepEqual(check(l, 5000, []), { reason: "file", max: 1000, source: "postern", used: 0 });
  const s = structuredClone(cyrus);
  s.capabilities["urn:ietf:params:jmap:core"].maxSizeUpload = 500;
  assert.deepEqual(limits({ uploadMax: 1000, session: s, accountId: "a" }).file, { max: 500, source: "upload" });
  l = limits({ uploadMax: 50 * MiB, session: cyrus, accountId: "a", learned: 5 * MiB });
  assert.deepEqual(l.message, { max: 5 * MiB, source: "learned" });
  assert.equal(attachmentRoom(l, 0, 1).source, "learned");
  assert.ok(check(l, 4 * MiB, []).max < 4 * MiB);
});

test("nothing known: nothing refused", () => {
  const l = limits({});
  assert.equal(check(l, 10 ** 12, [10 ** 12]), null);
  assert.equal(limits({ uploadMax: 0, session: { accounts: {} }, accountId: "x" }).file.max, Infinity);
});

test("FUTURERELEASE only where submissionExtensions offers it", () => {
  assert.equal(futureRelease(cyrus, "a"), null);   // Cyrus: maxDelayedSend but no extension
  const s = structuredClone(cyrus);
  s.accounts.a.accountCapabilities["urn:ietf:params:jmap:submission"].submissionExtensions.FUTURERELEASE = ["86400", "2030-01-01T00:00:00Z"];
  assert.deepEqual(futureRelease(s, "a"), { maxDelay: 44236800 });
  s.accounts.a.accountCapabilities["urn:ietf:params:jmap:submission"].maxDelayedSend = 0;
  assert.equal(futureRelease(s, "a"), null);
  assert.equal(futureRelease(null, "a"), null);
});
