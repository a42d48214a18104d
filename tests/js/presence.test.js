// Which tabs are in view, and when pushd is told (www/js/presence.js).
import { test } from "node:test";
import assert from "node:assert/strict";
import { Presence, Reporter, SOON, LATER } from "../../www/js/presence.js";

// Timers that run only when told to, in order of their time.
function clock() {
  let now = 0;
  const due = new Map();
  let id = 0;
  return {
    setTimeout: (fn, ms) => { due.set(++id, { at: now + ms, fn }); return id; },
    clearTimeout: (i) => due.delete(i),
    advance(ms) {
      now += ms;
      for (const [i, d] of [...due].sort((a, b) => a[1].at - b[1].at)) if (d.at <= now) { due.delete(i); d.fn(); }
    },
  };
}

test("any tab in view counts; the last one leaving makes none", () => {
  const p = new Presence();
  assert.equal(p.any(), false);
  p.set("a", true);
  p.set("b", true);
  p.set("a", false);
  assert.equal(p.any(), true);
  p.set("b", false);
  assert.equal(p.any(), false);
});

test("nothing is sent before a stream is open; then only what differs from its URL", () => {
  const c = clock();
  const sent = [];
  const r = new Reporter((v) => sent.push(v), c);
  r.want(true);
  c.advance(LATER * 2);
  assert.deepEqual(sent, []);
  r.opened(true);          // the URL said visible=1 already
  c.advance(LATER * 2);
  assert.deepEqual(sent, []);
});

test("coming into view is told soon, leaving it only after a while", () => {
  const c = clock();
  const sent = [];
  const r = new Reporter((v) => sent.push(v), c);
  r.opened(false);
  r.want(true);
  c.advance(SOON);
  assert.deepEqual(sent, [true]);
  r.want(false);
  c.advance(LATER - 1);
  assert.deepEqual(sent, [true]);
  c.advance(1);
  assert.deepEqual(sent, [true, false]);
});

test("a glance away and back sends nothing (debounced)", () => {
  const c = clock();
  const sent = [];
  const r = new Reporter((v) => sent.push(v), c);
  r.opened(true);
  r.want(false);
  c.advance(LATER / 2);
  r.want(true);
  c.advance(LATER * 2);
  assert.deepEqual(sent, []);
});

test("a stream reopened with an old URL is corrected", () => {
  const c = clock();
  const sent = [];
  const r = new Reporter((v) => sent.push(v), c);
  r.opened(true);
  r.want(false);
  c.advance(LATER);
  assert.deepEqual(sent, [false]);
  r.opened(true);          // EventSource came back with visible=1
  c.advance(LATER);
  assert.deepEqual(sent, [false, false]);
});
