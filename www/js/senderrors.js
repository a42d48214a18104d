// senderrors.js: why a mail was not sent, as a sentence: every SetError
// of Email/set and EmailSubmission/set (RFC 8621 §4.6, §7.5), the method
// errors and postern's own answers become a catalogue key ("send.…")
// and the values it names (the address, the limit). Pure: no DOM, no
// network (tests/js/); the caller translates with t(key, vars).

// failure: {where: "email"|"submission", ...SetError}, a MethodError
// ({type}), or an ApiError ({code, status, retryAfter}). fmt formats
// sizes and lists of addresses; from is the sender's address.
export function describe(failure, { size = String, list = (a) => a.join(", "), from = "" } = {}) {
  const f = failure || {};
  if (f.code && !f.type) return apiError(f);
  const props = (f.properties || []).join(", ");
  switch (f.type) {
    case "invalidRecipients": {
      const bad = f.invalidRecipients || [];
      return bad.length ? { key: "send.invalidRecipients", vars: { n: bad.length, addresses: list(bad) } }
        : { key: "send.invalidRecipientsNone", vars: {} };
    }
    case "noRecipients": return { key: "send.noRecipients", vars: {} };
    case "tooLarge":
      return f.maxSize > 0 ? { key: "send.tooLargeMax", vars: { max: size(f.maxSize) } } : { key: "send.tooLarge", vars: {} };
    case "tooManyRecipients":
      return f.maxRecipients > 0 ? { key: "send.tooManyRecipients", vars: { n: f.maxRecipients } }
        : { key: "send.tooManyRecipientsNoMax", vars: {} };
    case "forbiddenFrom": return { key: "send.forbiddenFrom", vars: { from } };
    case "forbiddenMailFrom": return { key: "send.forbiddenMailFrom", vars: { from } };
    case "forbiddenToSend":
      return f.description ? { key: "send.forbiddenToSendWhy", vars: { reason: f.description } } : { key: "send.forbiddenToSend", vars: {} };
    case "overQuota": return { key: f.where === "submission" ? "send.sendQuota" : "send.overQuota", vars: {} };
    case "rateLimit": return { key: "send.rateLimit", vars: {} };
    case "invalidEmail": return { key: "send.invalidEmail", vars: { properties: props || "?" } };
    case "invalidProperties":
      if ((f.properties || []).some((p) => /^envelope\/rcptTo/.test(p))) return { key: "send.noRecipients", vars: {} };
      return { key: "send.invalidProperties", vars: { properties: props || "?" } };
    case "blobNotFound": return { key: "send.blobNotFound", vars: {} };
    case "forbidden": return { key: "send.forbidden", vars: {} };
    case "tooManyMailboxes": case "tooManyKeywords": case "invalidPatch": case "notFound": case "singleton":
      return { key: "send.refused", vars: { type: f.type } };
    case "serverFail": case "serverUnavailable": case "serverPartialFail": return { key: "send.serverFail", vars: {} };
    case "accountReadOnly": return { key: "send.readOnly", vars: {} };
    case "unknownMethod": case "unknownCapability": return { key: "send.unsupported", vars: {} };
    case "requestTooLarge": return { key: "send.requestTooLarge", vars: {} };
    default:
      return f.description ? { key: "send.unknownWhy", vars: { type: f.type || "?", reason: f.description } }
        : { key: "send.unknown", vars: { type: f.type || "?" } };
  }
}

function apiError(e) {
  switch (e.code) {
    case "network": return { key: "send.network", vars: {} };
    case "rate_limited": return { key: "send.rateLimited", vars: { n: Math.max(1, Math.ceil(e.retryAfter || 60)) } };
    case "too_large": return { key: "send.requestTooLarge", vars: {} };
    case "upstream_error": case "upstream_timeout": case "service_unavailable": return { key: "send.upstream", vars: {} };
    case "unauthenticated": return { key: "send.signedOut", vars: {} };
    default: return { key: "send.unknown", vars: { type: e.code } };
  }
}

// The addresses a refusal names, to mark them in the fields.
export const refusedAddresses = (failure) => (failure?.type === "invalidRecipients" ? failure.invalidRecipients || [] : []);
