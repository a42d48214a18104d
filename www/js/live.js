// live.js: new mail as it happens. One tab (the holder of a Web Lock) keeps
// the /api/events stream and shares its events with the other tabs over a
// BroadcastChannel; if the stream fails, or /api/config says there is no
// push (push_mode off, or pushd not running), it polls every 60 s instead.
// The holder also tells pushd whether any of the browser's tabs is in view
// (the others say so on the channel): pushd then polls a server without
// push every push_poll_visible (4 s) instead of push_poll_interval (30 s).
import * as api from "./api.js";
import { Presence, Reporter } from "./presence.js";

// 60 s; the browser tests set window.posternPollMs to a shorter interval
// so that they need not wait a minute.
const pollMs = () => Number(self.posternPollMs) || 60000;
const me = Math.random().toString(36).slice(2);
const presence = new Presence();
const reporter = new Reporter((v) => api.post(`/api/events?visible=${v ? 1 : 0}`).catch(() => { /* the next open says it */ }));
let channel = null;
let stopped = false;
let es = null;
let pollTimer = null;
let release = null;
let waiting = null;   // aborts a lock request still waiting
let holding = false;

const inView = () => document.visibilityState === "visible";

// This tab's view changed (or the holder asked): the holder counts it,
// the others tell the holder.
function said(id, visible) {
  presence.set(id, visible);
  if (holding) reporter.want(presence.any());
}
function tell() {
  said(me, inView());
  if (channel) channel.postMessage({ tab: me, visible: inView() });
}
const gone = () => { if (channel) channel.postMessage({ tab: me, visible: false }); };

function hear(m, onChange, onResync) {
  if (m.data === "resync") return onResync();
  if (m.data === "state") return onChange();
  if (m.data?.ask) return channel.postMessage({ tab: me, visible: inView() });
  if (m.data?.tab) said(m.data.tab, !!m.data.visible);
}

export function start(onChange, onResync, push = true) {
  stopped = false;
  channel = "BroadcastChannel" in self ? new BroadcastChannel("postern-events") : null;
  if (channel) channel.onmessage = (m) => hear(m, onChange, onResync);
  document.addEventListener("visibilitychange", tell);
  addEventListener("pagehide", gone);
  tell();
  const run = () => new Promise((resolve) => {
    release = resolve;
    holding = true;
    // A new holder does not know who is in view: it asks.
    if (channel) channel.postMessage({ ask: 1 });
    if (push) stream(onChange, onResync, resolve);
    else poll(onChange);
  });
  if (navigator.locks) {
    waiting = new AbortController();
    navigator.locks.request("postern-events", { signal: waiting.signal }, () => (stopped ? null : run()))
      .catch(() => { /* aborted at sign-out */ });
  } else run();
}

// Whether this tab holds the stream (it alone notifies), and whether any
// of the browser's tabs is in view (known to the holder).
export const holder = () => holding;
export const anyInView = () => presence.any();

function share(kind) { if (channel) channel.postMessage(kind); }

function stream(onChange, onResync, done) {
  let failures = 0;
  const open = () => {
    if (stopped) return done();
    const visible = presence.any();
    es = new EventSource(`/api/events?types=Email,Mailbox&ping=30&visible=${visible ? 1 : 0}`);
    // The browser reopens a dropped stream with the URL it began with:
    // what it says about the view may be old by then. Open, the stream
    // tells every change after this open (pushd's first look at an
    // account new to it, which may come after the open, is told too);
    // what came since the app last looked, before the open, is fetched
    // now. Only this stream's first open: the browser's own reconnects
    // send Last-Event-ID, and pushd replays what they missed or says
    // resync.
    let first = true;
    es.addEventListener("open", () => {
      reporter.opened(visible);
      if (!first) return;
      first = false;
      if (!stopped) { onChange(); share("state"); }
    });
    es.addEventListener("state", () => { failures = 0; onChange(); share("state"); });
    es.addEventListener("resync", () => { onResync(); share("resync"); });
    es.addEventListener("ping", () => { failures = 0; });
    es.onerror = () => {
      // EventSource reconnects by itself (with Last-Event-ID); when it has
      // given up (CLOSED) or keeps failing, fall back to polling.
      failures++;
      if (es.readyState === EventSource.CLOSED || failures > 3) {
        es.close();
        es = null;
        reporter.stop();
        poll(onChange);
      }
    };
  };
  open();
}

function poll(onChange) {
  if (pollTimer || stopped) return;
  pollTimer = setInterval(() => { onChange(); share("state"); }, pollMs());
}

export function stop() {
  stopped = true;
  holding = false;
  if (waiting) waiting.abort();
  waiting = null;
  if (es) es.close();
  es = null;
  reporter.stop();
  presence.clear();
  document.removeEventListener("visibilitychange", tell);
  removeEventListener("pagehide", gone);
  clearInterval(pollTimer);
  pollTimer = null;
  if (channel) channel.close();
  channel = null;
  if (release) release();
  release = null;
}
