// bulk.js: pure. Acting on many messages: a selection of the list by
// position (rows picked one by one, Shift ranges that may cover rows not
// loaded yet, or the whole query), the batches a write is cut into, the
// inverse of a patch (for Undo), which row opens after the open one
// left the list, and when a long action's progress may be shown.

// A selection: {ids: Set of row ids, ranges: [[lo, hi]] positions
// (inclusive), all: the whole query}.
export const empty = () => ({ ids: new Set(), ranges: [], all: false });

export function isSelected(sel, pos, id) {
  return sel.all || (id != null && sel.ids.has(id)) || sel.ranges.some(([lo, hi]) => pos >= lo && pos <= hi);
}

export const isEmpty = (sel) => !sel.all && !sel.ids.size && !sel.ranges.length;

// How many rows the selection holds, of total; ids is the list's ids by
// position (sparse), for the single rows that a range already counts.
export function count(sel, total, ids = []) {
  if (sel.all) return total;
  const ranges = merge(sel.ranges.map(([lo, hi]) => [Math.max(0, lo), Math.min(total - 1, hi)]).filter(([lo, hi]) => lo <= hi));
  let n = ranges.reduce((s, [lo, hi]) => s + hi - lo + 1, 0);
  for (const id of sel.ids) {
    const pos = ids.indexOf(id);
    if (pos < 0 || !ranges.some(([lo, hi]) => pos >= lo && pos <= hi)) n++;
  }
  return n;
}

// Overlapping or touching ranges joined, in order.
export function merge(ranges) {
  const out = [];
  for (const [lo, hi] of [...ranges].sort((a, b) => a[0] - b[0])) {
    const last = out[out.length - 1];
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

// The ranges without position pos (a row unticked inside a Shift range).
export function without(ranges, pos) {
  const out = [];
  for (const [lo, hi] of ranges) {
    if (pos < lo || pos > hi) { out.push([lo, hi]); continue; }
    if (lo < pos) out.push([lo, pos - 1]);
    if (pos < hi) out.push([pos + 1, hi]);
  }
  return out;
}

// The positions a selection's ranges need that ids (sparse) lacks, as
// [position, limit] windows to query.
export function missing(ranges, ids) {
  const out = [];
  for (const [lo, hi] of merge(ranges)) {
    let start = -1;
    for (let i = lo; i <= hi + 1; i++) {
      const gap = i <= hi && !ids[i];
      if (gap && start < 0) start = i;
      if (!gap && start >= 0) { out.push([start, i - start]); start = -1; }
    }
  }
  return out;
}

// The row ids of a selection, once ids holds every position of its ranges.
export function rowIds(sel, ids) {
  const out = new Set(sel.ids);
  for (const [lo, hi] of sel.ranges) for (let i = lo; i <= hi; i++) if (ids[i]) out.add(ids[i]);
  return [...out];
}

// items cut into arrays of at most n.
export function batches(items, n) {
  const size = Math.max(1, Math.floor(n) || 1);
  const out = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

// The patch that undoes patch on email (as it was before): a whole
// property back as it was, a "prop/key" path back to true or null.
export function inverse(patch, email) {
  const inv = {};
  for (const path of Object.keys(patch)) {
    const [prop, key] = path.split("/");
    if (key === undefined) inv[prop] = email[prop] ?? null;
    else inv[path] = email[prop] && email[prop][key] ? true : null;
  }
  return inv;
}

// The patches of the actions that change keywords or folders.
//   to: the mailbox moved to; inbox: the Inbox's id (for Not spam).
export function patchFor(kind, { to, inbox } = {}) {
  switch (kind) {
    case "read": return { "keywords/$seen": true };
    case "unread": return { "keywords/$seen": null };
    case "flag": return { "keywords/$flagged": true };
    case "unflag": return { "keywords/$flagged": null };
    case "junk": return { mailboxIds: { [to]: true }, "keywords/$junk": true, "keywords/$notjunk": null };
    case "notjunk": return { mailboxIds: { [inbox]: true }, "keywords/$junk": null, "keywords/$notjunk": true };
    default: return { mailboxIds: { [to]: true } };   // archive, trash, move
  }
}

// The row to open once the open one (at position pos of ids, sparse) and
// the rows in gone left the list: "next" (the one below, else above),
// "previous" (above, else below) or "list" (none). An id or null.
export function nextAfter(ids, gone, pos, mode) {
  if (mode !== "next" && mode !== "previous") return null;
  let before = 0;
  const kept = [];
  ids.forEach((id, i) => {
    if (!id || gone.has(id)) return;
    if (i < pos) before++;
    kept.push(id);
  });
  const below = kept[before], above = kept[before - 1];
  return (mode === "next" ? below ?? above : above ?? below) ?? null;
}

// A long action's progress (n messages; none below PROGRESS_FROM): a
// report(done, total) that shows itself through show(text-maker), which
// returns the count of messages shown so far, only while nothing newer
// than its own last one is shown (now() gives that count): never over a
// later action's message and its Undo, nor during its own undo, which
// comes after the action's result.
export const PROGRESS_FROM = 201;

export function progressGate(n, show, now) {
  if (n < PROGRESS_FROM) return null;
  let shown = null;
  return (done, total) => {
    if (shown !== null && shown !== now()) return;
    shown = show(done, total);
  };
}
