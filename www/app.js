// postern's first page: sign in, then the folders and the newest messages
// of a folder, all through postern's /api. The full client comes later.

const $ = (id) => document.getElementById(id);
const USING = ["urn:ietf:params:jmap:core", "urn:ietf:params:jmap:mail"];
let session = null;

async function api(method, path, body) {
  const headers = { Accept: "application/json" };
  if (method !== "GET") headers["X-Postern-CSRF"] = "1";
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(path, { method, headers, credentials: "same-origin",
    body: body === undefined ? undefined : JSON.stringify(body) });
  let data = null;
  try { data = await res.json(); } catch { /* an empty or non-JSON answer */ }
  return { status: res.status, data, retryAfter: res.headers.get("Retry-After") };
}

function signinMessage(r) {
  const code = r.data && r.data.error;
  if (code === "invalid_credentials") return "Wrong email address or password.";
  if (code === "rate_limited") {
    const min = Math.ceil(Number(r.retryAfter || 60) / 60);
    return `Too many attempts. Please wait ${min} minute${min === 1 ? "" : "s"} and try again.`;
  }
  if (code === "upstream_error" || code === "upstream_timeout")
    return "The mail server cannot be reached right now. This is not a problem with your password.";
  return (r.data && r.data.message) || "Signing in failed.";
}

async function jmap(calls) {
  const r = await api("POST", "/api/jmap", { using: USING, methodCalls: calls });
  if (r.status === 401) { show("signin"); throw new Error("signed out"); }
  if (r.status !== 200) throw new Error((r.data && r.data.message) || `error ${r.status}`);
  return r.data.methodResponses;
}

function show(which) {
  $("signin").hidden = which !== "signin";
  $("mail").hidden = which !== "mail";
}

function accountId() {
  return session.primaryAccounts["urn:ietf:params:jmap:mail"];
}

async function openFolder(box, button) {
  for (const b of $("folders").children) b.removeAttribute("aria-current");
  button.setAttribute("aria-current", "true");
  const [, [, got]] = await jmap([
    ["Email/query", { accountId: accountId(), filter: { inMailbox: box.id },
      sort: [{ property: "receivedAt", isAscending: false }], limit: 50 }, "q"],
    ["Email/get", { accountId: accountId(), "#ids": { resultOf: "q", name: "Email/query", path: "/ids" },
      properties: ["from", "subject", "receivedAt", "keywords"] }, "g"],
  ]);
  const list = $("messages");
  list.replaceChildren();
  for (const m of got.list) {
    const li = document.createElement("li");
    if (!m.keywords || !m.keywords.$seen) li.className = "unread";
    const from = (m.from && m.from[0]) || {};
    for (const [cls, text] of [["from", from.name || from.email || ""],
      ["subject", m.subject || "(no subject)"],
      ["date", new Date(m.receivedAt).toLocaleString()]]) {
      const span = document.createElement("span");
      span.className = cls;
      span.textContent = text;
      li.append(span);
    }
    list.append(li);
  }
}

async function showMail() {
  $("who").textContent = session.username;
  show("mail");
  const [[, boxes]] = await jmap([["Mailbox/get", { accountId: accountId() }, "m"]]);
  const nav = $("folders");
  nav.replaceChildren();
  const order = ["inbox", "drafts", "sent", "archive", "junk", "trash"];
  boxes.list.sort((a, b) => (order.indexOf(a.role) + 1 || 99) - (order.indexOf(b.role) + 1 || 99)
    || a.name.localeCompare(b.name));
  for (const box of boxes.list) {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = box.unreadEmails ? `${box.name} (${box.unreadEmails})` : box.name;
    b.addEventListener("click", () => openFolder(box, b));
    nav.append(b);
  }
  const inbox = boxes.list.findIndex((b) => b.role === "inbox");
  if (inbox >= 0) await openFolder(boxes.list[inbox], nav.children[inbox]);
}

async function start() {
  const cfg = await api("GET", "/api/config");
  if (cfg.data && cfg.data.name) {
    $("site-name").textContent = cfg.data.name;
    document.title = cfg.data.name;
  }
  const r = await api("GET", "/api/auth/session");
  if (r.status === 200) { session = r.data; await showMail(); } else show("signin");
}

$("signin-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const f = ev.target;
  const err = $("signin-error");
  err.hidden = true;
  const r = await api("POST", "/api/auth/login", { username: f.username.value,
    password: f.password.value, remember: f.remember.checked });
  f.password.value = "";
  if (r.status === 200) { session = r.data; await showMail(); return; }
  err.textContent = signinMessage(r);
  err.hidden = false;
});

$("signout").addEventListener("click", async () => {
  await api("POST", "/api/auth/logout");
  session = null;
  show("signin");
});

start();
