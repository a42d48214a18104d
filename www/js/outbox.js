// outbox.js: a message's way from the composer to Sent, with the store
// doing the JMAP. A Draft is saved only once the user changed something,
// keeps every copy it made (so that Discard removes them all, also after
// a refused send) and is never saved again once sending began.
//
// Sending with a delay (the Undo window, settings' sendDelay): where the
// server offers FUTURERELEASE, the submission waits on the server
// (HOLDFOR), so closing the tab does not stop it, and Undo cancels it;
// elsewhere (Cyrus 3.6) the draft is saved first and the browser submits
// it when the delay is over: Undo is then only not submitting, and a tab
// closed meanwhile leaves the mail in Drafts.
import * as store from "./store.js";

const SAVE_AFTER = 1500;

export class Draft {
  // id: the saved draft this one continues (a draft reopened), if any.
  constructor(id = null) {
    this.copies = new Set(id ? [id] : []);
    this.id = id;
    this.touched = false;   // the user changed something
    this.dirty = false;     // changed since the last save
    this.sending = false;
    this.gone = false;      // discarded or sent
    this.saving = Promise.resolve(this.id);
    this.timer = null;
  }

  // The user changed something: saved SAVE_AFTER ms after the last change.
  changed(build, done) {
    this.touched = true;
    this.dirty = true;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => { this.save(build).then(() => done(null), (e) => done(e)); }, SAVE_AFTER);
  }

  // Saves now if there is something new; resolves to the draft's id.
  save(build) {
    clearTimeout(this.timer);
    if (!this.dirty || this.sending || this.gone) return this.saving;
    this.dirty = false;
    const message = build();
    this.saving = this.saving.catch(() => null).then(async () => {
      const id = await store.saveDraft(message, [...this.copies]);
      this.copies = new Set([id]);
      this.id = id;
      return id;
    }).catch((e) => { this.dirty = true; throw e; });
    return this.saving;
  }

  // Every copy removed (a draft reopened, saves, a refused send's):
  // resolves to how many there were.
  async discard() {
    clearTimeout(this.timer);
    this.gone = true;
    await this.saving.catch(() => null);
    const n = this.copies.size;
    try {
      if (n) await store.destroy([...this.copies]);
    } catch (e) { this.gone = false; throw e; }
    this.copies.clear();
    return n;
  }

  // Sends: resolves to a Sending (see below); rejects with the store's
  // SendFailure, the draft then still open with its copies known.
  async send(build, { identity, delay = 0, futureRelease = false, sendAt = null }) {
    clearTimeout(this.timer);
    await this.saving.catch(() => null);
    this.sending = true;
    const message = build();
    try {
      if (sendAt || (delay > 0 && futureRelease)) {
        const hold = sendAt ? { HOLDUNTIL: new Date(sendAt).toISOString().replace(/\.\d+Z$/, "Z") } : { HOLDFOR: String(delay) };
        const r = await this.submit({ message, identity, hold });
        return new Sending(this, { mode: sendAt ? "later" : "server", delay, result: r, message });
      }
      if (delay > 0) {
        this.sending = false;
        this.dirty = true;
        await this.save(() => message);
        this.sending = true;
        return new Sending(this, { mode: "browser", delay, message, identity });
      }
      const r = await this.submit({ message, identity });
      return new Sending(this, { mode: "now", result: r, message });
    } catch (e) {
      this.sending = false;
      throw e;
    }
  }

  async submit({ message, identity, hold = null, emailId = null }) {
    try {
      const r = await store.submit({ message, identity, emailId, hold, replaces: [...this.copies] });
      this.copies.clear();
      this.gone = true;
      return r;
    } catch (e) {
      // The created copy (if any) now holds everything; the older ones
      // are still there too, and all of them go with Discard. The draft
      // is the user's again: later edits are saved (a delayed send is
      // refused long after send() returned).
      if (e.emailId) this.copies.add(e.emailId);
      this.sending = false;
      throw e;
    }
  }
}

// A mail on its way: mode "now" and "later" are done (done resolves at
// once); "server" waits on the server, "browser" in this tab for delay
// seconds. undo() stops it (true) or says it is too late (false); done
// resolves to the store's result or rejects with its SendFailure.
export class Sending {
  constructor(draft, { mode, delay = 0, result = null, message, identity = null }) {
    this.draft = draft;
    this.mode = mode;
    this.delay = delay;
    this.message = message;
    this.result = result;
    this.stopped = false;
    if (mode === "browser") {
      this.done = new Promise((resolve, reject) => {
        this.timer = setTimeout(() => {
          this.timer = null;
          draft.submit({ message, identity, emailId: draft.id }).then((r) => { this.result = r; resolve(r); }, reject);
        }, delay * 1000);
        this.cancel = () => { clearTimeout(this.timer); this.timer = null; resolve(null); };
      });
    } else {
      this.done = Promise.resolve(result);
    }
  }

  async undo() {
    if (this.mode === "browser") {
      if (!this.timer) return false;
      this.cancel();
    } else if (this.mode === "server") {
      try {
        await store.cancelSubmission(this.result.submissionId, this.result.emailId);
      } catch { return false; }
      this.draft.copies = new Set([this.result.emailId]);
      this.draft.id = this.result.emailId;
      this.draft.gone = false;
    } else return false;
    this.stopped = true;
    this.draft.sending = false;
    return true;
  }
}
