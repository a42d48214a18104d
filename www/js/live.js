// live.js: new mail as it happens. One tab (the holder of a Web Lock) keeps
// the /api/events stream and shares its events with the other tabs over a
// BroadcastChannel; if the stream fails, or /api/config says there is no
// push (push_mode off, or pushd not running), it polls every 60 s instead.

// 60 s; the browser tests set window.posternPollMs to a shorter interval
// so that they need not wait a minute.
const pollMs = () => Number(self.posternPollMs) || 60000;
let channel = null;
let stopped = false;
let es = null;
let pollTimer = null;
let release = null;
let waiting = null;   // aborts a lock request still waiting

export function start(onChange, onResync, push = true) {
  stopped = false;
  channel = "BroadcastChannel" in self ? new BroadcastChannel("postern-events") : null;
  if (channel) channel.onmessage = (m) => (m.data === "resync" ? onResync() : onChange());
  const run = () => new Promise((resolve) => {
    release = resolve;
    if (push) stream(onChange, onResync, resolve);
    else poll(onChange);
  });
  if (navigator.locks) {
    waiting = new AbortController();
    navigator.locks.request("postern-events", { signal: waiting.signal }, () => (stopped ? null : run()))
      .catch(() => { /* aborted at sign-out */ });
  } else run();
}

function share(kind) { if (channel) channel.postMessage(kind); }

function stream(onChange, onResync, done) {
  let failures = 0;
  const open = () => {
    if (stopped) return done();
    es = new EventSource("/api/events?types=Email,Mailbox&ping=30");
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
  if (waiting) waiting.abort();
  waiting = null;
  if (es) es.close();
  es = null;
  clearInterval(pollTimer);
  pollTimer = null;
  if (channel) channel.close();
  channel = null;
  if (release) release();
  release = null;
}
