// quota.js: which of the account's quotas (RFC 9425 Quota objects) the
// usage bar shows, and how full it is. Pure: no DOM, no JMAP.

// Data type names that mean mail in a Quota's types: "Email", the JMAP
// type name (Stalwart: ["Email", "SieveScript", ...]), and "Mail", as
// RFC 9425's examples write it.
const MAIL = ["Email", "Mail"];

// The mail storage quota: counted in octets, for mail (types naming it,
// or none), the one with the least room left when there are several (an
// account's and its domain's: the tighter one bites first).
export function pick(list) {
  const mail = (list || []).filter((q) => q && q.resourceType === "octets" &&
    Number.isFinite(q.used) && Number.isFinite(q.hardLimit) && q.hardLimit > 0 &&
    (!Array.isArray(q.types) || q.types.length === 0 || q.types.some((t) => MAIL.includes(t))));
  let best = null;
  for (const q of mail) if (!best || q.hardLimit - q.used < best.hardLimit - best.used) best = q;
  return best;
}

// The share used, 0..1.
export const share = (q) => Math.min(1, Math.max(0, q.used / q.hardLimit));

// "full" at the hard limit, "warn" from the server's warnLimit (or 90%
// where it names none), else "ok".
export function level(q) {
  if (q.used >= q.hardLimit) return "full";
  const warn = Number.isFinite(q.warnLimit) && q.warnLimit > 0 ? q.warnLimit : 0.9 * q.hardLimit;
  return q.used >= warn ? "warn" : "ok";
}
