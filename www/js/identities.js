// identities.js: who the mail is from. The server's identities
// (Identity/get) with the name, reply-to and signature the user set:
// changed on the server where it takes Identity/set, else kept in
// postern's settings (identities: {id: {name, replyTo, signature}}) and
// written into From and Reply-To of each mail.
import * as store from "./store.js";
import * as settings from "./settings.js";
import { parseList, formatList } from "./addr.js";

const { state } = store;
// Whether the server took Identity/set this session (null: not tried).
let serverKeeps = null;

// The identities as the composer uses them: {id, email, name, replyTo:
// [{name, email}], signature (text)}.
export function list() {
  const kept = settings.get("identities") || {};
  return state.identities.map((i) => {
    const own = kept[i.id];
    if (own) {
      return { id: i.id, email: i.email, name: own.name ?? i.name ?? "", replyTo: parseList(own.replyTo || "").filter((a) => a.valid),
        signature: own.signature ?? "" };
    }
    return { id: i.id, email: i.email, name: i.name || "", replyTo: i.replyTo || [],
      signature: i.textSignature || settings.get("signature") || "" };
  });
}

// The fields of the settings dialog for identity id.
export function fields(id) {
  const i = list().find((x) => x.id === id);
  return i ? { name: i.name, replyTo: formatList(i.replyTo), signature: i.signature } : { name: "", replyTo: "", signature: "" };
}

// Checks the reply-to text: the invalid addresses in it.
export const invalidReplyTo = (text) => parseList(text).filter((a) => !a.valid).map((a) => a.email);

// Keeps f ({name, replyTo, signature} as typed) for identity id: on the
// server where it takes Identity/set, else in kept (the settings'
// identities). Resolves to the identities setting to store.
export async function save(id, f, kept) {
  const out = { ...kept };
  const replyTo = parseList(f.replyTo).map(({ name, email }) => ({ name, email }));
  if (serverKeeps !== false) {
    try {
      await store.setIdentity(id, { name: f.name, replyTo: replyTo.length ? replyTo : null, textSignature: f.signature });
      serverKeeps = true;
      const i = state.identities.find((x) => x.id === id);
      if (i) Object.assign(i, { name: f.name, replyTo: replyTo.length ? replyTo : null, textSignature: f.signature });
      delete out[id];
      return out;
    } catch (e) {
      // Cyrus 3.6: unknownMethod. Anything else refused: kept by postern.
      if (e.type === "unknownMethod") serverKeeps = false;
    }
  }
  out[id] = { name: f.name, replyTo: f.replyTo.trim(), signature: f.signature };
  return out;
}

// A new session may be another server.
export function reset() { serverKeeps = null; }
