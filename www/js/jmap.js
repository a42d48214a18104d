// jmap.js: JMAP method calls through /api/jmap. Calls made in the same tick
// are sent as one request; each caller's call ids (and result references)
// are prefixed so that the batches do not collide.
import { post, ApiError } from "./api.js";

const BASE = ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:mail",
  "urn:ietf:params:jmap:submission"];
// Capabilities the app uses only where the session has them, by the
// prefix of the methods that need them. A request names one only when it
// carries such a method: a server answers unknownCapability to a request
// naming one it lacks (or no longer has), and that must cost no more
// than that method.
const OPTIONAL = { "Quota/": "urn:ietf:params:jmap:quota" };
let offered = new Set();
export function useSession(session) {
  offered = new Set(Object.keys(session?.capabilities || {}));
}
export const has = (cap) => offered.has(cap);
export function usingFor(methodCalls) {
  const extra = Object.entries(OPTIONAL)
    .filter(([prefix, cap]) => offered.has(cap) && methodCalls.some(([n]) => n.startsWith(prefix)))
    .map(([, cap]) => cap);
  return [...BASE, ...extra];
}
let pending = [];
let seq = 0;

export class MethodError extends Error {
  constructor(type, detail) { super(type); this.type = type; this.detail = detail; }
}

function prefixArgs(args, p) {
  const out = {};
  for (const [k, v] of Object.entries(args)) {
    out[k] = k.startsWith("#") && v && v.resultOf ? { ...v, resultOf: p + v.resultOf } : v;
  }
  return out;
}

async function flush() {
  const batch = pending;
  pending = [];
  const methodCalls = [];
  for (const b of batch) for (const [n, a, id] of b.calls) methodCalls.push([n, prefixArgs(a, b.p), b.p + id]);
  try {
    const r = await post("/api/jmap", { using: usingFor(methodCalls), methodCalls });
    for (const b of batch) {
      const mine = {};
      for (const [n, a, id] of r.methodResponses) {
        if (!id.startsWith(b.p)) continue;
        const key = id.slice(b.p.length);
        if (n === "error") mine[key] = new MethodError(a.type, a);
        else if (!(key in mine)) mine[key] = a;   // the first answer of an id
        else mine[key + "/" + n] = a;            // implicit calls (e.g. Email/set after submission)
      }
      b.resolve(mine);
    }
  } catch (e) {
    for (const b of batch) b.reject(e);
  }
}

// calls: [[name, args, id], ...] → {id: args | MethodError}
export function call(calls) {
  return new Promise((resolve, reject) => {
    if (!pending.length) queueMicrotask(flush);
    pending.push({ calls, p: `${++seq}.`, resolve, reject });
  });
}

// One call whose error throws.
export async function one(name, args) {
  const r = await call([[name, args, "x"]]);
  if (r.x instanceof Error) throw r.x;
  return r.x;
}

export const ref = (resultOf, name, path) => ({ resultOf, name, path });
export { ApiError };
