// A message's way from the composer (www/js/outbox.js), with the store
// replaced: node --test, no browser, no server. outbox.js is copied into a
// temporary folder beside a store.js of the test's own, which records each
// call and answers as the test says.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, copyFileSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "postern-outbox-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
copyFileSync(join(here, "../../www/js/outbox.js"), join(dir, "outbox.js"));
writeFileSync(join(dir, "store.js"), `
export const calls = [];
export const answers = { submit: null };
let n = 0;
export async function saveDraft(message, replaces) {
  calls.push(["saveDraft", message.text, replaces]);
  return "d" + ++n;
}
export async function destroy(ids) { calls.push(["destroy", ids]); }
export async function submit(a) {
  calls.push(["submit", a.message.text, a.emailId]);
  if (answers.submit) throw answers.submit;
  return { emailId: "sent", submissionId: "s" };
}
export async function cancelSubmission() { calls.push(["cancel"]); }
`);
const { Draft } = await import(pathToFileURL(join(dir, "outbox.js")));
const store = await import(pathToFileURL(join(dir, "store.js")));

function reset(refusal = null) {
  store.calls.length = 0;
  store.answers.submit = refusal;
}

test("an untouched draft is never saved, and Discard has nothing to remove", async () => {
  reset();
  const d = new Draft();
  await d.save(() => ({ text: "Re: hello" }));
  assert.equal(await d.discard(), 0);
  assert.deepEqual(store.calls, []);
});

test("a refused delayed send gives the draft back: later edits are saved", async () => {
  const refusal = Object.assign(new Error("invalidRecipients"), { type: "invalidRecipients" });
  reset(refusal);
  const d = new Draft();
  let text = "first";
  const sending = await d.send(() => ({ text }), { delay: 0.05 });
  assert.equal(sending.mode, "browser");
  await assert.rejects(sending.done, /invalidRecipients/);
  assert.equal(d.sending, false);
  text = "edited after the refusal";
  d.changed(() => ({ text }), () => {});
  await d.save(() => ({ text }));              // what Close does
  const saves = store.calls.filter((c) => c[0] === "saveDraft");
  assert.deepEqual(saves.map((c) => c[1]), ["first", "edited after the refusal"]);
  assert.deepEqual(saves[1][2], ["d1"], "the new copy replaces the one saved before the delay");
});

test("Discard after a refused send removes every copy", async () => {
  const refusal = Object.assign(new Error("tooLarge"), { type: "tooLarge", emailId: "m9" });
  reset(refusal);
  const d = new Draft("old");
  d.changed(() => ({ text: "x" }), () => {});
  await assert.rejects(d.send(() => ({ text: "x" }), { delay: 0 }), /tooLarge/);
  assert.equal(await d.discard(), 2);
  assert.deepEqual(store.calls.at(-1), ["destroy", ["old", "m9"]]);
});

test("Undo of a browser-held send submits nothing", async () => {
  reset();
  const d = new Draft();
  d.changed(() => ({ text: "x" }), () => {});
  const sending = await d.send(() => ({ text: "x" }), { delay: 0.05 });
  assert.equal(await sending.undo(), true);
  assert.equal(await sending.done, null);
  await new Promise((r) => setTimeout(r, 80));
  assert.equal(store.calls.filter((c) => c[0] === "submit").length, 0);
  assert.equal(d.sending, false);
});
