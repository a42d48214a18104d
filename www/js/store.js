// store.js: the app's state (session, mailboxes, the current list, the
// emails seen so far) and every JMAP read and write on it. Views subscribe
// with on(); nothing here touches the DOM.
import * as jmap from "./jmap.js";
import { ref } from "./jmap.js";
import * as settings from "./settings.js";
import { ApiError, blobUrl, unauthenticated, upload as uploadBlob } from "./api.js";
import { batches, inverse, missing, rowIds } from "./bulk.js";
import * as quota from "./quota.js";

// What the store tells its views, the one list of its events; on() and
// emit() refuse any other name, so a misspelt one fails at once.
export const EVENTS = Object.freeze({
  mailboxes: "the folders changed (loaded, created, renamed, counts)",
  list: "the list's rows changed (loaded, moved, flagged, removed)",
  "list-reset": "the list begins again (another folder, search or order)",
  changed: "emails changed on the server by this app (counts may have moved)",
  arrived: "new mail came into the open list (the number of new rows)",
  resync: "the state was reloaded from scratch after a lost change",
  quota: "the mail storage quota was read (state.quota, null: none)",
});
const listeners = new Map();
function known(ev) {
  if (!Object.hasOwn(EVENTS, ev)) throw new Error(`store: no event ${ev}`);
}
export function on(ev, fn) { known(ev); (listeners.get(ev) || listeners.set(ev, []).get(ev)).push(fn); }
export function emit(ev, arg) { known(ev); for (const fn of listeners.get(ev) || []) fn(arg); }

export const state = {
  session: null, accountId: null,
  mailboxes: new Map(), mailboxState: null, emailState: null,
  current: null,          // mailbox id
  filter: null,           // search FilterCondition (null: the folder)
  query: "",
  threads: true,
  total: 0, ids: [],      // the list: ids by position (sparse while loading)
  queryState: null,
  emails: new Map(),      // id → Email (list properties)
  identities: [],
  view: { from: 0, to: 0 }, // the positions the list shows (set by the list view)
  snippets: new Map(),    // email id → {subject, preview} of SearchSnippet/get (a search's matches)
  quota: null,            // the mail storage Quota (RFC 9425) the bar shows
};

export const LIST_PROPS = ["threadId", "mailboxIds", "keywords", "from", "to", "subject",
  "receivedAt", "preview", "hasAttachment", "size"];
const PAGE = 60;

export function setSession(s) {
  state.session = s;
  state.accountId = s ? s.primaryAccounts["urn:ietf:params:jmap:mail"] : null;
  state.quota = null;
  quotaAt = undefined;
  jmap.useSession(s);
  emit("quota");
  state.threads = settings.get("threads");
  if (!s) state.emails.clear();
}

// A file for the account's blobs (an attachment): {blobId, type, size};
// onProgress gets the share sent so far.
export const upload = (file, onProgress) => uploadBlob(acc(), file, onProgress);

// The intents of the views that change what the list shows: the order by
// conversation, the search's words, the rows in view.
export function setThreads(on) { state.threads = !!on; }
export function setQuery(q) { state.query = q; }
export function setView(from, to) { state.view = { from, to }; }
const acc = () => state.accountId;
export const roleBox = (role) => [...state.mailboxes.values()].find((m) => m.role === role);

export async function loadMailboxes() {
  const r = await jmap.one("Mailbox/get", { accountId: acc() });
  state.mailboxes = new Map(r.list.map((m) => [m.id, m]));
  state.mailboxState = r.state;
  emit("mailboxes");
}

// The storage quota, where the session offers JMAP Quota (Stalwart does;
// Cyrus 3.6 does not): read at start and again whenever the Email state
// has moved since the last read (a change told live, a page read, a
// resync). quotaAt: the Email state of the last read.
const QUOTA = "urn:ietf:params:jmap:quota";
let quotaAt;
export async function loadQuota() {
  const s = state.session;
  if (!s || !jmap.has(QUOTA)) return;
  const at = state.emailState;
  const r = await jmap.one("Quota/get", { accountId: s.primaryAccounts[QUOTA] || acc(), ids: null });
  if (state.session !== s) return;       // signed out meanwhile
  quotaAt = at;
  state.quota = quota.pick(r.list);
  emit("quota");
}
const quotaStale = () => jmap.has(QUOTA) && state.emailState !== quotaAt;

export function findMailbox(name) {
  const n = name.toLowerCase();
  for (const m of state.mailboxes.values()) if (m.role === n || m.name.toLowerCase() === n) return m.id;
  return null;
}

function listFilter() {
  if (state.filter) return state.filter;
  return { inMailbox: state.current };
}

let gen = 0;
const inflight = new Set();
export function openList(mailboxId, filter = null) {
  if (mailboxId !== undefined) state.current = mailboxId;
  state.filter = filter;
  state.ids = [];
  state.total = 0;
  state.queryState = null;
  state.snippets.clear();
  gen++;
  inflight.clear();
  emit("list-reset");
  return ensureRange(0, PAGE);
}

// Make sure positions [from, to) are loaded; fetches whole pages.
export async function ensureRange(from, to) {
  const my = gen;
  const first = Math.floor(Math.max(0, from) / PAGE);
  const last = Math.floor(Math.max(0, to - 1) / PAGE);
  const jobs = [];
  for (let p = first; p <= last; p++) {
    const key = `${my}:${p}`;
    if (inflight.has(key)) continue;
    if (state.ids.length && p * PAGE >= state.total) break;
    let have = true;
    for (let i = p * PAGE; i < Math.min((p + 1) * PAGE, state.total || 1); i++) if (!state.ids[i]) { have = false; break; }
    if (have && state.ids.length) continue;
    inflight.add(key);
    jobs.push(fetchPage(p, my).finally(() => inflight.delete(key)));
  }
  await Promise.all(jobs);
}

// A conversation's size by thread id, from the list's Thread/get.
export const threadSize = new Map();

async function fetchPage(p, my) {
  const q = await readPage(p, my);
  if (!q) return;
  state.total = q.total;
  place(state.ids, q);
  emit("list");
}

// One page of the list, the only place that builds the list query: its
// emails and, in conversation view, their threads' sizes, so a row's
// count is as fresh as the row. Null when the list changed meanwhile.
async function readPage(p, my) {
  const r = await jmap.call([
    ["Email/query", { accountId: acc(), filter: listFilter(), collapseThreads: state.threads,
      sort: [{ property: "receivedAt", isAscending: false }], position: p * PAGE, limit: PAGE,
      calculateTotal: true }, "q"],
    ["Email/get", { accountId: acc(), "#ids": ref("q", "Email/query", "/ids"), properties: LIST_PROPS }, "g"],
    ...(state.threads ? [["Thread/get", { accountId: acc(),
      "#ids": ref("g", "Email/get", "/list/*/threadId") }, "t"]] : []),
    // A search: why each row matched, the words marked by the server.
    ...(state.filter ? [["SearchSnippet/get", { accountId: acc(), filter: listFilter(),
      "#emailIds": ref("q", "Email/query", "/ids") }, "s"]] : []),
  ]);
  if (my !== gen) return null;
  if (r.q instanceof Error) throw r.q;
  for (const e of r.g.list) state.emails.set(e.id, e);
  if (r.s && !(r.s instanceof Error)) for (const sn of r.s.list || []) state.snippets.set(sn.emailId, sn);
  if (r.t && !(r.t instanceof Error)) for (const th of r.t.list) threadSize.set(th.id, th.emailIds.length);
  state.queryState = r.q.queryState;
  state.emailState = r.g.state;
  return r.q;
}

const place = (ids, q) => q.ids.forEach((id, i) => { ids[q.position + i] = id; });

// The emails a list row stands for: the row's email, or in thread mode the
// thread's emails in the current folder (all of them in a search).
export async function expand(ids) {
  if (!state.threads) return ids;
  const threadIds = [...new Set(ids.map((id) => state.emails.get(id)?.threadId).filter(Boolean))];
  const r = await jmap.call([
    ["Thread/get", { accountId: acc(), ids: threadIds }, "t"],
    ["Email/get", { accountId: acc(), "#ids": ref("t", "Thread/get", "/list/*/emailIds"),
      properties: ["mailboxIds", "keywords", "threadId"] }, "g"],
  ]);
  const out = [];
  for (const e of r.g.list) {
    const cached = state.emails.get(e.id);
    if (cached) Object.assign(cached, e);
    if (!state.filter && !e.mailboxIds[state.current]) continue;
    out.push(e.id);
  }
  return out.length ? out : ids;
}

// Full emails of a thread, oldest first, with bodies.
export async function loadThread(threadId) {
  const r = await jmap.call([
    ["Thread/get", { accountId: acc(), ids: [threadId] }, "t"],
    ["Email/get", { accountId: acc(), "#ids": ref("t", "Thread/get", "/list/*/emailIds"),
      properties: [...LIST_PROPS, "blobId", "cc", "bcc", "replyTo", "sentAt", "messageId", "inReplyTo",
        "references", "textBody", "htmlBody", "attachments", "bodyValues"],
      fetchTextBodyValues: true, fetchHTMLBodyValues: true, maxBodyValueBytes: 1 << 20 }, "g"],
  ]);
  if (r.g instanceof Error) throw r.g;
  const trash = roleBox("trash")?.id;
  const list = r.g.list.filter((e) => !trash || !e.mailboxIds[trash] || state.current === trash);
  for (const e of r.g.list) state.emails.set(e.id, { ...state.emails.get(e.id), ...e });
  return (list.length ? list : r.g.list).sort((a, b) => a.receivedAt.localeCompare(b.receivedAt));
}

// The first max bytes of a blob ({buf, cut}: an ArrayBuffer of at most
// max bytes, cut when there was more), fetched from /api/blob (a Range,
// so a large one is not read whole). For the PDF preview.
export async function blobBytes(blobId, name, type, max) {
  const r = await fetch(blobUrl(acc(), blobId, name, type), { headers: { Range: `bytes=0-${max - 1}` }, credentials: "same-origin" });
  if (!r.ok) throw new Error(`${r.status}`);
  const buf = await r.arrayBuffer();
  const whole = Number((r.headers.get("Content-Range") || "").split("/")[1]) || buf.byteLength;
  return { buf: buf.byteLength > max ? buf.slice(0, max) : buf, cut: whole > max || buf.byteLength > max };
}

// The same as text ({text, cut}). For show original and the preview of a
// text attachment.
export async function blobText(blobId, name, type, max) {
  const { buf, cut } = await blobBytes(blobId, name, type, max);
  return { text: new TextDecoder("utf-8").decode(buf), cut };
}

// The text of some of an Email's body parts (their values as loadThread
// fetches them), one part a line.
export function bodyText(e, parts) {
  return (parts || []).map((p) => e.bodyValues?.[p.partId]?.value || "").join("\n");
}

// -- writes ---------------------------------------------------------------

// updates: {id: patch}. Returns the inverse patches (for undo).
export async function update(updates, { silent = false } = {}) {
  const undo = {};
  for (const [id, patch] of Object.entries(updates)) {
    const e = state.emails.get(id);
    if (!e) continue;
    const inv = {};
    for (const path of Object.keys(patch)) {
      const [prop, key] = path.split("/");
      if (key === undefined) inv[prop] = e[prop];
      else inv[path] = e[prop] && e[prop][key] ? true : null;
    }
    undo[id] = inv;
    applyLocal(e, patch);
  }
  if (!silent) emit("list");
  const r = await jmap.one("Email/set", { accountId: acc(), update: updates });
  if (r.notUpdated && Object.keys(r.notUpdated).length) console.warn("notUpdated", r.notUpdated);
  emit("changed");
  return undo;
}

function applyLocal(e, patch) {
  for (const [path, v] of Object.entries(patch)) {
    const [prop, key] = path.split("/");
    if (key === undefined) { e[prop] = v; continue; }
    e[prop] = { ...(e[prop] || {}) };
    if (v == null) delete e[prop][key]; else e[prop][key] = v;
  }
}

export function keywordPatch(ids, kw, on) {
  const u = {};
  for (const id of ids) u[id] = { [`keywords/${kw}`]: on ? true : null };
  return u;
}

export function movePatch(ids, to) {
  const u = {};
  for (const id of ids) u[id] = { mailboxIds: { [to]: true } };
  return u;
}

// Remove rows from the visible list at once (optimistic), the server
// confirms through the refresh that follows.
export function dropFromList(ids) {
  const gone = new Set(ids);
  const before = state.ids.length;
  state.ids = state.ids.filter((id) => id && !gone.has(id) && !gone.has(state.emails.get(id)?.threadId));
  state.total = Math.max(0, state.total - (before - state.ids.length));
  emit("list");
}

// Rejects with a SendFailure when the server kept any of them (a
// notFound one is gone all the same).
export async function destroy(ids) {
  const r = await jmap.one("Email/set", { accountId: acc(), destroy: ids });
  const kept = Object.entries(r.notDestroyed || {}).find(([, e]) => e?.type !== "notFound");
  if (kept) throw new SendFailure("email", kept[1]);
}

export async function emptyFolder(mailboxId) {
  const q = await jmap.one("Email/query", { accountId: acc(), filter: { inMailbox: mailboxId }, limit: 1000 });
  if (q.ids.length) await destroy(q.ids);
  return q.ids.length;
}

// -- acting on many ------------------------------------------------------------

// The most objects one Email/set (or /get) may name, by the session, and
// at most 500 a request so that progress moves and no call runs long.
function cap(key) {
  const n = Number(state.session?.capabilities?.["urn:ietf:params:jmap:core"]?.[key]);
  return Math.max(1, Math.min(n > 0 ? n : 500, 500));
}

// Every email id of a query (the list's by default), newest first, in
// pages: not collapsed, so a folder gives every email in it.
export async function queryIds(filter = listFilter(), onProgress) {
  const out = [];
  for (let pos = 0; ; ) {
    const q = await jmap.one("Email/query", { accountId: acc(), filter, sort: [{ property: "receivedAt", isAscending: false }],
      position: pos, limit: 1000, calculateTotal: true });
    out.push(...q.ids);
    pos += q.ids.length;
    if (onProgress) onProgress(out.length, q.total);
    if (!q.ids.length || pos >= q.total) return out;
  }
}

// The row ids of a list selection (bulk.js), fetching the positions of
// its ranges that are not loaded (ids only) in the list's own order.
export async function selectionRows(sel) {
  const ids = state.ids.slice();
  for (const [position, n] of missing(sel.ranges, ids)) {
    for (let p = position; p < position + n; ) {
      const q = await jmap.one("Email/query", { accountId: acc(), filter: listFilter(), collapseThreads: state.threads,
        sort: [{ property: "receivedAt", isAscending: false }], position: p, limit: Math.min(1000, position + n - p) });
      if (!q.ids.length) break;
      q.ids.forEach((id, i) => { ids[p + i] = id; });
      p += q.ids.length;
    }
  }
  return rowIds(sel, ids);
}

// expand() for any number of rows: the threads' emails in the current
// folder (all of them in a search), in batches; rows without a known
// thread stand for themselves.
export async function expandMany(rows) {
  if (!state.threads || !rows.length) return rows;
  const out = new Set();
  for (const b of batches(rows, cap("maxObjectsInGet"))) {
    const r = await jmap.call([
      ["Email/get", { accountId: acc(), ids: b, properties: ["threadId"] }, "e"],
      ["Thread/get", { accountId: acc(), "#ids": ref("e", "Email/get", "/list/*/threadId") }, "t"]]);
    if (r.t instanceof Error) throw r.t;
    const all = r.t.list.flatMap((th) => th.emailIds);
    if (state.filter) all.forEach((id) => out.add(id));
    else {
      for (const c of batches(all, cap("maxObjectsInGet"))) {
        const g = await jmap.one("Email/get", { accountId: acc(), ids: c, properties: ["mailboxIds"] });
        for (const e of g.list) if (e.mailboxIds[state.current]) out.add(e.id);
      }
    }
    b.forEach((id) => out.add(id));
  }
  return [...out];
}

// Applies patchOf(id) to every id in batches the server allows, each an
// Email/get of what the patch changes (for Undo) and the Email/set in one
// request. onProgress(done, total). Resolves to {undo: {id: patch}, done,
// failed}; the cached emails change with it.
export async function bulkUpdate(ids, patchOf, onProgress) {
  const undo = {};
  let done = 0, failed = 0;
  for (const b of batches(ids, cap("maxObjectsInSet"))) {
    const update = {};
    for (const id of b) update[id] = patchOf(id);
    const props = [...new Set(Object.values(update).flatMap((p) => Object.keys(p).map((k) => k.split("/")[0])))];
    const r = await jmap.call([
      ["Email/get", { accountId: acc(), ids: b, properties: props }, "g"],
      ["Email/set", { accountId: acc(), update }, "s"]]);
    if (r.s instanceof Error) throw r.s;
    const before = new Map((r.g instanceof Error ? [] : r.g.list).map((e) => [e.id, e]));
    for (const id of b) {
      if (!r.s.updated || !(id in r.s.updated)) { failed++; continue; }
      done++;
      if (before.has(id)) undo[id] = inverse(update[id], before.get(id));
      const e = state.emails.get(id);
      if (e) applyLocal(e, update[id]);
    }
    if (onProgress) onProgress(done + failed, ids.length);
  }
  emit("list");
  emit("changed");
  return { undo, done, failed };
}

// Puts back what bulkUpdate changed (its undo), in batches.
export async function bulkRestore(undo, onProgress) {
  const ids = Object.keys(undo);
  return bulkUpdate(ids, (id) => undo[id], onProgress);
}

// -- live refresh -------------------------------------------------------------

// Called on a StateChange (or by the poll): Mailbox/changes and
// Email/changes; a cannotCalculateChanges reloads everything.
export async function refresh() {
  if (!state.accountId) return;
  try {
    const calls = [];
    if (state.mailboxState) calls.push(["Mailbox/changes", { accountId: acc(), sinceState: state.mailboxState }, "m"]);
    if (state.emailState) {
      calls.push(["Email/changes", { accountId: acc(), sinceState: state.emailState, maxChanges: 500 }, "e"]);
      // What arrived, in the same request: for notifications ("arrived").
      calls.push(["Email/get", { accountId: acc(), "#ids": ref("e", "Email/changes", "/created"), properties: LIST_PROPS }, "n"]);
    }
    const r = calls.length ? await jmap.call(calls) : {};
    if (r.m instanceof Error || r.e instanceof Error || (r.e && r.e.hasMoreChanges)) return resync();
    if (r.n && !(r.n instanceof Error) && r.n.list.length) {
      for (const e of r.n.list) state.emails.set(e.id, e);
      emit("arrived", r.n.list);
    }
    const mboxChanged = !r.m || r.m.created.length || r.m.updated.length || r.m.destroyed.length;
    const emailChanged = !r.e || r.e.created.length || r.e.updated.length || r.e.destroyed.length;
    if (r.e) {
      for (const id of r.e.destroyed) state.emails.delete(id);
      if (r.e.updated.length) {
        const g = await jmap.one("Email/get", { accountId: acc(), ids: r.e.updated, properties: LIST_PROPS });
        for (const e of g.list) state.emails.set(e.id, e);
      }
      state.emailState = r.e.newState;
    }
    if (mboxChanged) await loadMailboxes();
    if (emailChanged) await reloadList();
    if (quotaStale()) await loadQuota();
  } catch (e) {
    console.warn("refresh failed", e);
  }
}

export async function resync() {
  await loadMailboxes();
  await reloadList();
  emit("resync");
  await loadQuota().catch((e) => console.warn("quota", e));
}

// Re-read the first page and the pages in view, in place (the scroll
// position stays); the other positions are fetched again when scrolled to.
async function reloadList() {
  const my = ++gen;
  inflight.clear();
  const pages = new Set([0]);
  for (let p = Math.floor(state.view.from / PAGE); p <= Math.floor(Math.max(0, state.view.to - 1) / PAGE); p++) pages.add(p);
  const ids = [];
  let total = state.total;
  for (const p of pages) {
    const q = await readPage(p, my);
    if (!q) return;
    total = q.total;
    place(ids, q);
  }
  state.ids = ids;
  state.total = total;
  emit("list");
}

export async function loadIdentities() {
  try {
    const r = await jmap.one("Identity/get", { accountId: acc() });
    state.identities = r.list;
  } catch { state.identities = []; }
}

// -- folders --------------------------------------------------------------------

// A Mailbox/set refusal, with the server's SetError.
export class SetError extends Error {
  constructor(e) { super(e?.description || e?.type || "failed"); this.type = e?.type || "serverFail"; this.description = e?.description || ""; }
}

async function mailboxSet(args, key, id) {
  const r = await jmap.one("Mailbox/set", { accountId: acc(), ...args });
  const refused = r[key] && r[key][id];
  if (refused) throw new SetError(refused);
  await loadMailboxes();
  return r;
}

export async function createMailbox(name, parentId) {
  const r = await mailboxSet({ create: { n: { name, parentId: parentId || null } } }, "notCreated", "n");
  return r.created?.n?.id;
}
export const renameMailbox = (id, name) => mailboxSet({ update: { [id]: { name } } }, "notUpdated", id);
// The server refuses (mailboxHasEmail, mailboxHasChild) rather than
// losing mail: onDestroyRemoveEmails stays false.
export const destroyMailbox = (id) => mailboxSet({ destroy: [id], onDestroyRemoveEmails: false }, "notDestroyed", id);

// -- writing mail -----------------------------------------------------------------

// Why a write was refused: the server's SetError (or MethodError, or
// postern's ApiError as {code, status, retryAfter}), where ("email" or
// "submission") and, when the mail was created before the refusal, its id.
export class SendFailure extends Error {
  constructor(where, err, emailId = null) {
    super(err?.type || err?.code || "failed");
    Object.assign(this, err instanceof Error ? { type: err.type, code: err.code, status: err.status, retryAfter: err.retryAfter,
      ...(err.detail || {}) } : err);
    this.where = where;
    this.emailId = emailId;
  }
}

// The largest message the server took, learned from a refusal (tooLarge
// with maxSize), for the composer's limits.
export const learned = { maxSize: 0 };

// A message as the composer holds it (addresses as {name, email}) as a
// JMAP Email: in Drafts, $draft while it is one.
export function emailObject(m, { draft = true } = {}) {
  const drafts = roleBox("drafts")?.id;
  const addr = (list) => (list || []).map((a) => ({ name: a.name || null, email: a.email }));
  const e = {
    mailboxIds: drafts ? { [drafts]: true } : {},
    keywords: draft ? { $draft: true, $seen: true } : { $seen: true },
    from: addr([m.from]), to: addr(m.to), subject: m.subject || "",
    bodyValues: { b: { value: m.text || "" } },
    textBody: [{ partId: "b", type: "text/plain" }],
    attachments: (m.attachments || []).map((a) => ({ blobId: a.blobId, type: a.type, name: a.name, disposition: "attachment" })),
  };
  if (m.cc?.length) e.cc = addr(m.cc);
  if (m.bcc?.length) e.bcc = addr(m.bcc);
  if (m.replyTo?.length) e.replyTo = addr(m.replyTo);
  if (m.inReplyTo) { e.inReplyTo = m.inReplyTo; e.references = m.references; }
  if (m.html != null) {
    e.bodyValues.h = { value: m.html };
    e.htmlBody = [{ partId: "h", type: "text/html" }];
  }
  return e;
}

// Saves a draft: resolves to its id. The copies it replaces are
// destroyed only once it exists, so that a refused save loses nothing.
export async function saveDraft(message, replaces = []) {
  const r = await jmap.one("Email/set", { accountId: acc(), create: { d: emailObject(message) } });
  if (!r.created?.d) throw new SendFailure("email", r.notCreated?.d);
  if (replaces.length) await destroy(replaces).catch((e) => console.warn("old draft kept", e));
  return r.created.d.id;
}

// Sends message (or the saved email emailId) from identity: the email
// and its EmailSubmission in one request, moved to Sent without $draft
// when submitted; hold is FUTURERELEASE's {HOLDFOR} or {HOLDUNTIL}.
// Resolves to {emailId, submissionId, undoStatus, sendAt}; rejects with a
// SendFailure (emailId set when the email was created).
export async function submit({ message, emailId, identity, replaces = [], hold = null }) {
  const drafts = roleBox("drafts")?.id;
  const sent = roleBox("sent")?.id;
  const upd = { "keywords/$draft": null };
  if (drafts) upd[`mailboxIds/${drafts}`] = null;
  if (sent) upd[`mailboxIds/${sent}`] = true;
  const rcpt = [...new Set([...message.to, ...(message.cc || []), ...(message.bcc || [])].map((a) => a.email))];
  const mailFrom = { email: message.from.email };
  if (hold) mailFrom.parameters = hold;
  const calls = emailId ? [] : [["Email/set", { accountId: acc(), create: { m: emailObject(message) } }, "e"]];
  calls.push(["EmailSubmission/set", { accountId: acc(), create: { s: { identityId: identity?.id, emailId: emailId || "#m",
    envelope: { mailFrom, rcptTo: rcpt.map((email) => ({ email })) } } }, onSuccessUpdateEmail: { "#s": upd } }, "s"]);
  let r;
  try { r = await jmap.call(calls); } catch (e) { throw new SendFailure("request", e); }
  if (!emailId) {
    if (r.e instanceof Error) throw new SendFailure("email", r.e);
    if (!r.e.created?.m) throw new SendFailure("email", r.e.notCreated?.m);
    emailId = r.e.created.m.id;
  }
  const fail = r.s instanceof Error ? r.s : !r.s.created?.s ? r.s.notCreated?.s || { type: "serverFail" } : null;
  if (fail) {
    if (fail.type === "tooLarge" && fail.maxSize > 0) learned.maxSize = fail.maxSize;
    throw new SendFailure("submission", fail, emailId);
  }
  const others = replaces.filter((id) => id !== emailId);
  if (others.length) await destroy(others).catch((e) => console.warn("old draft kept", e));
  const s = r.s.created.s;
  return { emailId, submissionId: s.id, undoStatus: s.undoStatus, sendAt: s.sendAt };
}

// Stops a submission the server still holds and puts its email back in
// Drafts. Rejects with a SendFailure (cannotUnsend once it has gone).
export async function cancelSubmission(submissionId, emailId) {
  const r = await jmap.one("EmailSubmission/set", { accountId: acc(), update: { [submissionId]: { undoStatus: "canceled" } } });
  if (!r.updated || !(submissionId in r.updated)) throw new SendFailure("submission", r.notUpdated?.[submissionId]);
  const drafts = roleBox("drafts")?.id;
  await jmap.one("Email/set", { accountId: acc(), update: { [emailId]: {
    mailboxIds: drafts ? { [drafts]: true } : {}, "keywords/$draft": true } } });
}

// Changes an identity on the server (Identity/set). Rejects with the
// MethodError (unknownMethod where the server has none, as Cyrus 3.6) or
// a SendFailure with the SetError.
export async function setIdentity(id, patch) {
  const r = await jmap.one("Identity/set", { accountId: acc(), update: { [id]: patch } });
  if (!r.updated || !(id in r.updated)) throw new SendFailure("identity", r.notUpdated?.[id]);
}

// -- addresses for the suggestions (contacts.js) --------------------------------

// One page of the emails in a folder (or outside some), newest first,
// with the properties given: {list, total, state}.
export async function emailPage(filter, position, limit, properties) {
  const r = await jmap.call([
    ["Email/query", { accountId: acc(), filter, sort: [{ property: "receivedAt", isAscending: false }], position, limit,
      calculateTotal: true }, "q"],
    ["Email/get", { accountId: acc(), "#ids": ref("q", "Email/query", "/ids"), properties }, "g"]]);
  if (r.q instanceof Error) throw r.q;
  if (r.g instanceof Error) throw r.g;
  return { list: r.g.list, total: r.q.total, state: r.g.state };
}

// The emails created since state, with the properties given:
// {list, newState, more}; rejects with cannotCalculateChanges.
export async function createdSince(sinceState, properties, maxChanges = 1000) {
  const r = await jmap.call([
    ["Email/changes", { accountId: acc(), sinceState, maxChanges }, "c"],
    ["Email/get", { accountId: acc(), "#ids": ref("c", "Email/changes", "/created"), properties }, "g"]]);
  if (r.c instanceof Error) throw r.c;
  return { list: r.g instanceof Error ? [] : r.g.list, newState: r.c.newState, more: r.c.hasMoreChanges };
}

// -- the address book: CardDAV through /api/dav/ (contacts.js) -------------------

export const DAV = "DAV:";
export const CARD = "urn:ietf:params:xml:ns:carddav";
export const propfind = (props) => `<?xml version="1.0" encoding="utf-8"?><d:propfind xmlns:d="DAV:" xmlns:c="${CARD}"><d:prop>${props}</d:prop></d:propfind>`;
// Only the name and the addresses of each card (the server leaves the rest out).
const CARDS_QUERY = `<?xml version="1.0" encoding="utf-8"?><c:addressbook-query xmlns:d="DAV:" xmlns:c="${CARD}"><d:prop><c:address-data><c:prop name="FN"/><c:prop name="EMAIL"/></c:address-data></d:prop></c:addressbook-query>`;

// A CardDAV answer's text as a multistatus document; method: for the error.
// A cut answer parses as far as it goes: a partial book is not the book.
export function davDocument(method, text) {
  const doc = new DOMParser().parseFromString(text, "application/xml");
  if (doc.getElementsByTagName("parsererror").length) throw new Error(`CardDAV ${method}: not XML`);
  return doc;
}
// A 401 from the relay: the session is over, as for any /api call (api.js).
// text: the answer's body. Returns the ApiError to throw.
export function davUnauthenticated(text) {
  let data = null;
  try { data = JSON.parse(text); } catch { /* not JSON */ }
  const err = new ApiError(401, data?.error, data?.message);
  unauthenticated(err);
  return err;
}

// A CardDAV call that answers 207: the multistatus as a document.
async function dav(method, path, body, depth) {
  const r = await fetch(path, { method, credentials: "same-origin", body,
    headers: { "X-Postern-CSRF": "1", "Content-Type": "application/xml; charset=utf-8", Depth: depth } });
  if (r.status === 401) throw davUnauthenticated(await r.text());
  if (r.status !== 207) throw new Error(`CardDAV ${method}: ${r.status}`);
  return davDocument(method, await r.text());
}

// The DAV:response elements of a multistatus, each as {href, status (its
// own or its first propstat's), ok (a 2xx propstat), etag, data
// (address-data), has(ns, name), first(ns, name), text(ns, name)}.
export function davResponses(doc) {
  return [...doc.getElementsByTagNameNS(DAV, "response")].map((r) => {
    const all = (el, ns, name) => [...el.getElementsByTagNameNS(ns, name)];
    const first = (ns, name) => all(r, ns, name)[0]?.textContent ?? null;
    return {
      href: first(DAV, "href") || "",
      status: first(DAV, "status") || "",
      ok: all(r, DAV, "propstat").some((p) => /\s2\d\d\s/.test(all(p, DAV, "status")[0]?.textContent || "")),
      etag: first(DAV, "getetag"),
      data: first(CARD, "address-data"),
      has: (ns, name) => all(r, ns, name).length > 0,
      first,
      text: (ns, name) => all(r, ns, name).map((e) => e.textContent),
    };
  });
}
// The href inside the property (ns, name) of the first response.
const hrefIn = (doc, ns, name) => doc.getElementsByTagNameNS(ns, name)[0]?.getElementsByTagNameNS(DAV, "href")[0]?.textContent;

// The user's address books, found as a CardDAV client finds them:
// principal, address book home, the books in it (Depth 1, with props
// besides their type). call(method, path, body, depth) answers the
// multistatus document (dav's, or book-store.js's). Only what is under
// root (/api/config's carddavPath) is kept, as its /api/dav/ path:
// [{path, response}] (response: davResponses's).
export async function addressBooks(root, props = "", call = dav) {
  // Only where there is an address book: not part of the first load.
  const { apiPath } = await import("./vcard.js");
  const principal = apiPath(hrefIn(await call("PROPFIND", "/api/dav/", propfind("<d:current-user-principal/>"), "0"),
    DAV, "current-user-principal"), root);
  if (!principal) return [];
  const home = apiPath(hrefIn(await call("PROPFIND", principal, propfind("<c:addressbook-home-set/>"), "0"),
    CARD, "addressbook-home-set"), root);
  if (!home) return [];
  return davResponses(await call("PROPFIND", home, propfind(`<d:resourcetype/>${props}`), "1"))
    .filter((r) => r.has(CARD, "addressbook")).map((r) => ({ path: apiPath(r.href, root), response: r }))
    .filter((b) => b.path);
}

// Every person ({email, name}) in the user's address books, found as a
// CardDAV client finds them: principal, address book home, the books in
// it, one addressbook-query each. root: /api/config's carddavPath.
export async function addressBookPeople(root) {
  // Only where there is an address book: not part of the first load.
  const { people } = await import("./vcard.js");
  const books = (await addressBooks(root)).map((b) => b.path);
  const found = [];
  for (const book of books) {
    // A book that cannot be read (shared and refused, say) leaves the others.
    try {
      for (const r of davResponses(await dav("REPORT", book, CARDS_QUERY, "1"))) found.push(...people(r.text(CARD, "address-data").join("\n")));
    } catch (e) { console.warn("address book", book, e); }
  }
  return found;
}
