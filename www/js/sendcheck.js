// sendcheck.js: what to ask before a mail goes: an empty subject, or a
// text that speaks of an attachment ("attached", "Anhang", "ci-joint":
// the words of every catalogue, compose.attachWords) while none is
// there. Quoted lines, the signature and a forwarded mail do not count.
// Pure: no DOM, no network (tests/js/).
import { fold } from "./suggest.js";

// The user's own words in a plain text body.
export function ownText(text, forwardedMarker) {
  let s = String(text || "");
  if (forwardedMarker) {
    const i = s.indexOf(forwardedMarker);
    if (i >= 0) s = s.slice(0, i);
  }
  const sig = s.search(/(^|\n)-- \n/);
  if (sig >= 0) s = s.slice(0, sig);
  return s.split("\n").filter((l) => !/^\s*>/.test(l)).join("\n");
}

const escape = (w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

// Whether text holds one of words at the start of a word (each word is a
// beginning: "attach" finds "attached" and "attachment").
export function mentionsAttachment(text, words) {
  const t = fold(text);
  return (words || []).map((w) => fold(w).trim()).filter(Boolean)
    .some((w) => new RegExp(`(^|[^\\p{L}\\p{N}])${escape(w)}`, "u").test(t));
}

// The questions to ask, in order: "subject", "attachment".
export function questions({ subject, text, attachments, words, forwardedMarker }) {
  const out = [];
  if (!String(subject || "").trim()) out.push("subject");
  if (!attachments && mentionsAttachment(ownText(text, forwardedMarker), words)) out.push("attachment");
  return out;
}

// A catalogue's word list ("attach, enclos") as words.
export const words = (list) => String(list || "").split(",").map((w) => w.trim()).filter(Boolean);
