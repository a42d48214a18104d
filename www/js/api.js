// api.js: fetch against postern's /api. Writes carry X-Postern-CSRF; every
// failure becomes an ApiError with postern's stable error code.

export class ApiError extends Error {
  // data: the whole JSON error, for a route's own fields (a Sieve
  // script's line).
  constructor(status, code, message, retryAfter, data = null) {
    super(message || code || `HTTP ${status}`);
    this.data = data;
    this.status = status;
    this.code = code || (status === 0 ? "network" : "http_" + status);
    this.retryAfter = retryAfter == null ? null : Number(retryAfter);
  }
}

let onUnauthenticated = () => {};
export function setUnauthenticatedHandler(fn) { onUnauthenticated = fn; }
// A 401 met outside request() (the CardDAV calls of store.js and book-store.js): the same handling.
export function unauthenticated(err) { onUnauthenticated(err); }

export async function request(method, path, body, { quiet401 = false } = {}) {
  const headers = { Accept: "application/json" };
  if (method !== "GET" && method !== "HEAD") headers["X-Postern-CSRF"] = "1";
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let res;
  try {
    res = await fetch(path, { method, headers, credentials: "same-origin",
      body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (e) {
    throw new ApiError(0, "network", e.message);
  }
  let data = null;
  try { data = await res.json(); } catch { /* empty or not JSON */ }
  if (res.ok) return data;
  const err = new ApiError(res.status, data && data.error, data && (data.message || data.detail),
    res.headers.get("Retry-After"), data);
  if (res.status === 401 && !quiet401) onUnauthenticated(err);
  throw err;
}

export const get = (path, opts) => request("GET", path, undefined, opts);
export const post = (path, body, opts) => request("POST", path, body, opts);

// Upload with progress (fetch has no upload progress): resolves to
// {blobId, type, size}.
export function upload(accountId, file, onProgress) {
  return new Promise((resolve, reject) => {
    const x = new XMLHttpRequest();
    x.open("POST", `/api/upload/${encodeURIComponent(accountId)}`);
    x.setRequestHeader("X-Postern-CSRF", "1");
    x.setRequestHeader("Content-Type", file.type || "application/octet-stream");
    x.upload.onprogress = (e) => { if (e.lengthComputable) onProgress(e.loaded / e.total); };
    x.onload = () => {
      let data = null;
      try { data = JSON.parse(x.responseText); } catch { /* not JSON */ }
      if (x.status >= 200 && x.status < 300 && data) resolve(data);
      else reject(new ApiError(x.status, data && data.error, data && data.message,
        x.getResponseHeader("Retry-After")));
    };
    x.onerror = () => reject(new ApiError(0, "network"));
    x.send(file);
  });
}

export function blobUrl(accountId, blobId, name, type, inline) {
  const enc = encodeURIComponent;
  return `/api/blob/${enc(accountId)}/${enc(blobId)}/${enc(name || "file")}?accept=${enc(type || "application/octet-stream")}${inline ? "&inline=1" : ""}`;
}
