// limits.js: how large the attachments of one mail may be, before any
// upload: the smallest of postern's upload_max (one file), the server's
// maxSizeUpload (one file), maxSizeAttachmentsPerEmail (all attachments,
// as their bytes) and the largest message it submits (the submission
// capability's SIZE, or what a refusal taught), the attachments counted
// as base64. Pure: no DOM, no network (tests/js/).

const MAIL = "urn:ietf:params:jmap:mail";
const SUBMISSION = "urn:ietf:params:jmap:submission";
const CORE = "urn:ietf:params:jmap:core";

// base64 in lines of 72 characters and CRLF, as Cyrus writes it (RFC 2045
// allows up to 76): each 54 bytes take 74.
export const encoded = (n) => Math.ceil(n / 54) * 74;
// What a mail needs beside its attachments: headers, the text (and HTML)
// part in quoted-printable at worst, and each attachment's part header.
export const overhead = (bodyBytes, parts) => 4096 + Math.ceil(bodyBytes * 1.1) + 400 * parts;

// An EHLO keyword's arguments in submissionExtensions (any case), or null.
function extension(sub, name) {
  const ext = sub?.submissionExtensions || {};
  const key = Object.keys(ext).find((k) => k.toUpperCase() === name);
  return key ? ext[key] || [] : null;
}

const positive = (v) => (typeof v === "number" && v > 0 ? v : Infinity);

// The limits that apply, from /api/config's uploadMax, the JMAP session
// and a message size learned from a refusal (tooLarge's maxSize):
// {file, attachments, message}, each {max, source} (max Infinity: none).
export function limits({ uploadMax, session, accountId, learned } = {}) {
  const acc = session?.accounts?.[accountId]?.accountCapabilities || {};
  const core = session?.capabilities?.[CORE] || {};
  const size = extension(acc[SUBMISSION], "SIZE")?.[0];
  const pick = (...c) => c.reduce((a, b) => (b.max < a.max ? b : a), { max: Infinity, source: null });
  return {
    file: pick({ max: positive(uploadMax), source: "postern" }, { max: positive(core.maxSizeUpload), source: "upload" }),
    attachments: { max: positive(acc[MAIL]?.maxSizeAttachmentsPerEmail), source: "attachments" },
    message: pick({ max: positive(Number(size)), source: "message" }, { max: positive(learned), source: "learned" }),
  };
}

// The most the attachments of a mail may add up to (their bytes), with
// bodyBytes of text and parts attachments, and which limit that is.
export function attachmentRoom(lims, bodyBytes, parts) {
  const byMessage = Math.floor((lims.message.max - overhead(bodyBytes, parts)) / 74) * 54;
  if (byMessage < lims.attachments.max) return { max: Math.max(0, byMessage), source: lims.message.source };
  return { max: lims.attachments.max, source: lims.attachments.source };
}

// Whether a file of size bytes may be added to attached (the sizes of
// those already there): null, or {reason: "file"|"total", max, source,
// used}.
export function check(lims, size, attached = [], bodyBytes = 0) {
  if (size > lims.file.max) return { reason: "file", max: lims.file.max, source: lims.file.source, used: 0 };
  const used = attached.reduce((s, n) => s + n, 0);
  const room = attachmentRoom(lims, bodyBytes, attached.length + 1);
  if (used + size > room.max) return { reason: "total", max: room.max, source: room.source, used };
  return null;
}

// Whether the server lets a submission wait (RFC 4865 FUTURERELEASE in
// submissionExtensions): {maxDelay seconds} or null. Cyrus 3.6 advertises
// maxDelayedSend but not the extension, and sends nothing it held.
export function futureRelease(session, accountId) {
  const sub = session?.accounts?.[accountId]?.accountCapabilities?.[SUBMISSION];
  if (!extension(sub, "FUTURERELEASE") || !(sub.maxDelayedSend > 0)) return null;
  return { maxDelay: sub.maxDelayedSend };
}
