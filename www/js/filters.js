// filters.js: the user's filters and vacation reply, kept as one Sieve
// script on the mail server (one script per user: Cyrus refuses even a
// replacement at its fifth). postern's /api/sieve speaks ManageSieve on
// the server side with the session's credentials. State and intents
// here; script text ↔ rules is sieve.js's, the screens are
// views/filters.js and views/vacation.js.
import * as api from "./api.js";
import { read, write } from "./sieve.js";

// available: null before the first answer, then true, or false where
// the server has no ManageSieve or the operator turned filters off; extensions:
// the Sieve extensions the server offers ([] before it said).
export const state = { available: null, name: "postern", script: "", model: null, extensions: [] };
const listeners = new Set();
let gen = 0;        // a load's answer is used only if no load or save came after
let session = 0;    // forget() ends what began before it
let writes = Promise.resolve();   // the stores, one after another

export function onChange(fn) { listeners.add(fn); }
const emit = () => { for (const fn of listeners) fn(state); };

// The codes that mean "no filters here" rather than "try again".
const ABSENT = ["not_found", "sieve_unavailable", "sieve_refused"];

function take(s) {
  state.available = true;
  // A name postern's API cannot send back (another client's) is left:
  // postern's own script, made active, replaces it, its text kept in it.
  state.name = /^[A-Za-z0-9._ -]{1,64}$/.test(s.name || "") ? s.name : "postern";
  state.script = s.script || "";
  state.model = read(state.script);
  if (Array.isArray(s.extensions)) state.extensions = s.extensions;
}

// Whether the server takes a Sieve extension (yes while it has not said).
export const offers = (ext) => !state.extensions.length || state.extensions.includes(ext);

// Reads the script (after sign-in, and when the screen opens).
export async function load() {
  const g = ++gen;
  const before = JSON.stringify([state.available, state.name, state.script]);
  try {
    const s = await api.get("/api/sieve");
    if (g !== gen) return;
    take(s);
  } catch (e) {
    if (g !== gen) return;
    if (!ABSENT.includes(e.code)) throw e;
    state.available = false;
    state.model = null;
  }
  // Only a change repaints: a screen being filled in keeps its fields.
  if (JSON.stringify([state.available, state.name, state.script]) !== before) emit();
}

// No filters here (the operator turned them off): nothing is asked.
export function none() {
  gen++;
  state.available = false;
  state.model = null;
  emit();
}

// The server's complaint about a script ({message, line}), or null; the
// line is the one postern found in the server's message.
function invalid(e) {
  if (e.code !== "sieve_invalid") return null;
  return { message: e.message, line: Number.isInteger(e.data?.line) ? e.data.line : null };
}

// Runs store() after every store asked for before it: each one starts
// from what the previous one left (two quick toggles both count).
function queued(store) {
  const run = writes.then(store);
  writes = run.catch(() => {});
  return run;
}

// Stores script() (called when its turn comes) as the active script:
// null, or {message, line} when the server refuses it (the stored script
// is then unchanged). Other failures throw. An answer that comes after
// sign-out changes nothing.
function put(script) {
  const mine = session;
  return queued(async () => {
    if (mine !== session) return null;
    const text = script();
    try {
      const s = await api.request("PUT", "/api/sieve", { name: state.name, script: text });
      if (mine !== session) return null;
      gen++;
      take({ name: s?.name || state.name, script: text });
    } catch (e) {
      const bad = invalid(e);
      if (bad) return bad;
      throw e;
    }
    emit();
    return null;
  });
}

// Stores a script written by hand (the Sieve editor).
export const saveScript = (script) => put(() => script);

// Changes the rules or the vacation: change(model) edits a copy of the
// model as it is when this store's turn comes, which is then stored.
export const update = (change) => put(() => {
  const m = JSON.parse(JSON.stringify(state.model || read("")));
  change(m);
  return write(m);
});

// The server's check of a script without storing it: null when good.
export async function check(script) {
  try {
    await api.post("/api/sieve/check", { script });
    return null;
  } catch (e) {
    const bad = invalid(e);
    if (bad) return bad;
    throw e;
  }
}

// Signing out forgets the script: the next person sees nothing of it,
// and no answer to a call made before lands in the new state.
export function forget() {
  gen++;
  session++;
  state.available = null;
  state.name = "postern";
  state.script = "";
  state.model = null;
  state.extensions = [];
  emit();
}

// Pure: whether a vacation reply answers on day today ("YYYY-MM-DD"):
// on, and today within its first and last days where they are set.
export function vacationActive(v, today) {
  if (!v || !v.on) return false;
  if (v.from && today < v.from) return false;
  if (v.until && today > v.until) return false;
  return true;
}

// Pure: the day of date d in the user's time zone, as "YYYY-MM-DD".
export function day(d = new Date()) {
  const p = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
}

// Pure: the name Sieve's fileinto takes for folder id, as JMAP and IMAP
// LIST show it: the path of names from the top, "/" between ("Invoices/
// 2025"); the Inbox is INBOX whatever it is called. mailboxes: a Map of
// JMAP Mailbox objects by id.
export function folderPath(mailboxes, id) {
  const names = [];
  const seen = new Set();
  for (let m = mailboxes.get(id); m && !seen.has(m.id); m = mailboxes.get(m.parentId)) {
    seen.add(m.id);
    names.unshift(m.role === "inbox" && !m.parentId ? "INBOX" : m.name);
  }
  return names.join("/");
}
