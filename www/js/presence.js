// presence.js: pure. Whether any of the browser's postern tabs is in view,
// as the tab holding the event stream hears it, and when to tell pushd.
// pushd polls an account every push_poll_visible (4 s) while one of its
// tabs is in view, else every push_poll_interval (30 s).

// The tabs in view, by a random id per tab (the holder counts itself).
export class Presence {
  constructor() { this.seen = new Set(); }
  set(id, visible) { if (visible) this.seen.add(id); else this.seen.delete(id); }
  any() { return this.seen.size > 0; }
  clear() { this.seen.clear(); }
}

// Coming into view is told within SOON ms, so new mail shows within the
// visible interval; going out of view only after LATER ms, so that a
// glance at another tab and back does not make two requests.
export const SOON = 150;
export const LATER = 3000;

// Tells pushd what `want` was last given, once it has held for its
// delay and when it differs from what pushd knows (`known`: set when a
// stream opens with visible= in its URL). send(v) makes the request.
export class Reporter {
  constructor(send, timers = globalThis) {
    this.send = send;
    this.timers = timers;
    this.known = null;
    this.wanted = null;
    this.timer = null;
  }
  opened(visible) { this.known = visible; this.want(this.wanted ?? visible); }
  want(visible) {
    this.wanted = visible;
    if (this.timer) this.timers.clearTimeout(this.timer);
    this.timer = null;
    if (this.known === null || visible === this.known) return;
    this.timer = this.timers.setTimeout(() => {
      this.timer = null;
      this.known = visible;
      this.send(visible);
    }, visible ? SOON : LATER);
  }
  stop() { if (this.timer) this.timers.clearTimeout(this.timer); this.timer = null; this.known = null; }
}
