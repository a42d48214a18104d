// views/composer.js: new, reply, reply all, forward. Plain text or simple
// rich text (sent as multipart/alternative); attachments uploaded with a
// progress bar and the upload cap enforced before sending; drafts saved as
// you type; sent with EmailSubmission using the chosen identity, the sent
// copy moved from Drafts to Sent.
import { h } from "../dom.js";
import { t, size, addresses } from "../i18n.js";
import * as api from "../api.js";
import * as jmap from "../jmap.js";
import { state, roleBox, bodyText } from "../store.js";
import * as settings from "../settings.js";
import * as rich from "./richtext.js";

let cfg = { uploadMax: 0 };
export function configure(c) { cfg = c || cfg; }

const parseAddrs = (s) => s.split(/[,;]\s*/).map((x) => x.trim()).filter(Boolean).map((x) => {
  const m = x.match(/^(.*)<([^>]+)>$/);
  return m ? { name: m[1].trim().replace(/^"|"$/g, "") || null, email: m[2].trim() } : { email: x };
});

function quote(e) {
  const text = bodyText(e, e.textBody) || (e.preview || "");
  return text.split("\n").map((l) => `> ${l}`).join("\n");
}

// The identity a reply is sent from: the one the mail was sent to, else
// the first.
export function pickIdentity(src) {
  const ids = state.identities;
  if (!ids.length) return null;
  const rcpt = new Set([...(src?.to || []), ...(src?.cc || [])].map((a) => (a.email || "").toLowerCase()));
  return ids.find((i) => rcpt.has((i.email || "").toLowerCase())) || ids[0];
}

// The signature block, "-- " on its own line first (RFC 3676).
export function signature() {
  const sig = (settings.get("signature") || "").replace(/\s+$/, "");
  return sig ? `\n\n-- \n${sig}` : "";
}

// mode: new | reply | replyAll | forward; src: the email replied to.
export function prefill(mode, src) {
  const v = prefillBody(mode, src);
  if (mode !== "draft") v.body = mode === "new" ? signature().replace(/^\n/, "") : signature() + v.body;
  return v;
}

function prefillBody(mode, src) {
  const me = pickIdentity(src)?.email || state.session?.username;
  if (!src || mode === "new") return { to: "", cc: "", bcc: "", subject: "", body: "" };
  if (mode === "draft") {
    return { to: addresses(src.to), cc: addresses(src.cc), bcc: addresses(src.bcc), subject: src.subject || "",
      body: bodyText(src, src.textBody),
      html: (src.htmlBody || []).some((p) => p.type === "text/html")
        ? src.htmlBody.map((p) => src.bodyValues?.[p.partId]?.value || "").join("") : null,
      identityEmail: src.from?.[0]?.email,
      attachments: (src.attachments || []).map((a) => ({ blobId: a.blobId, name: a.name, type: a.type, size: a.size })),
      inReplyTo: src.inReplyTo, references: src.references };
  }
  const subj = src.subject || "";
  if (mode === "forward") {
    return { to: "", cc: "", bcc: "", subject: /^fwd?:/i.test(subj) ? subj : `Fwd: ${subj}`,
      body: `\n\n${t("compose.forwarded")}\n${t("reader.from")} ${addresses(src.from)}\n${t("reader.subject")} ${subj}\n\n${quote(src)}`,
      attachments: (src.attachments || []).map((a) => ({ blobId: a.blobId, name: a.name, type: a.type, size: a.size })) };
  }
  const to = src.replyTo && src.replyTo.length ? src.replyTo : src.from;
  let cc = [];
  if (mode === "replyAll") cc = [...(src.to || []), ...(src.cc || [])].filter((a) => a.email !== me && !(to || []).some((b) => b.email === a.email));
  return { to: addresses(to), cc: addresses(cc), bcc: "", subject: /^re:/i.test(subj) ? subj : `Re: ${subj}`,
    body: `\n\n${t("compose.wrote", { name: addresses(src.from) })}\n${quote(src)}`,
    inReplyTo: src.messageId, references: [...(src.references || []), ...(src.messageId || [])] };
}

export function open(root, mode, src, { onClose, toast }) {
  const v = prefill(mode, src);
  const atts = (v.attachments || []).map((a) => ({ ...a, done: true }));
  let draftId = mode === "draft" ? src.id : null;
  let saveTimer = null;
  let saving = Promise.resolve();
  let closed = false;
  let identity = mode === "draft" ? state.identities.find((i) => i.email === v.identityEmail) || pickIdentity(null)
    : pickIdentity(src);
  let isRich = mode === "draft" ? !!v.html : settings.get("compose") === "rich";
  const textarea = h("textarea", { name: "body", rows: 14 }, v.body);
  const editor = rich.editor("", t("compose.body"));
  if (mode === "draft" && v.html) editor.innerHTML = rich.clean(v.html); else editor.replaceChildren(...rich.fromText(v.body));
  const tools = rich.toolbar(editor);
  const richToggle = h("button.small", { type: "button", "aria-pressed": String(isRich), onclick: () => setRich(!isRich) },
    t("compose.richText"));
  const fromField = state.identities.length > 1
    ? h("label.field", {}, h("span", {}, t("compose.from")),
      h("select", { name: "from", onchange: (ev) => { identity = state.identities.find((i) => i.id === ev.target.value) || identity; } },
        state.identities.map((i) => h("option", { value: i.id, selected: i.id === identity?.id }, addresses([i])))))
    : h("p.fromline", {}, t("reader.from"), " ", identity ? addresses([identity]) : state.session?.username || "");
  const field = (name, label, value, type = "text") => h("label.field", {}, h("span", {}, label),
    h("input", { name, type, value: value || "", autocomplete: "off", multiple: type === "email" ? true : null }));
  const attList = h("ul.att-list", { "aria-label": t("reader.attachments") });
  const status = h("p.status", { role: "status" });
  const fileInput = h("input", { type: "file", multiple: true, hidden: true });
  const form = h("form.composer", { "aria-label": t(`compose.title.${mode}`) },
    h("h2", {}, t(`compose.title.${mode}`)),
    fromField,
    field("to", t("compose.to"), v.to), field("cc", t("compose.cc"), v.cc), field("bcc", t("compose.bcc"), v.bcc),
    field("subject", t("compose.subject"), v.subject),
    h("div.formatbar", {}, richToggle, tools),
    h("label.field.bodyfield", {}, h("span", {}, t("compose.body")), textarea, editor),
    attList, status,
    h("div.actions", {},
      h("button.primary", { type: "submit" }, t("compose.send")),
      h("button", { type: "button", onclick: () => fileInput.click() }, t("compose.attach")),
      h("button", { type: "button", onclick: () => close(true) }, t("compose.discard")),
      h("button", { type: "button", onclick: () => close(false) }, t("compose.close"))),
    fileInput);

  // Switching keeps the words: plain to rich line by line, rich to plain
  // as the editor's text (the formatting goes).
  function setRich(on) {
    if (on && !isRich) editor.replaceChildren(...rich.fromText(textarea.value));
    if (!on && isRich) textarea.value = rich.toText(editor);
    isRich = on;
    textarea.hidden = on;
    editor.hidden = !on;
    tools.hidden = !on;
    richToggle.setAttribute("aria-pressed", String(on));
  }
  setRich(isRich);

  function paintAtts() {
    attList.replaceChildren(...atts.map((a, i) => h("li", {},
      h("span.name", {}, a.name), " ", h("span.size", {}, size(a.size)),
      a.done ? null : h("progress", { max: "1", value: String(a.progress || 0), "aria-label": t("compose.uploading", { name: a.name }) }),
      a.error ? h("span.error", {}, a.error) : null,
      h("button.small", { type: "button", "aria-label": t("compose.removeAttachment", { name: a.name }),
        onclick: () => { atts.splice(i, 1); paintAtts(); scheduleSave(); } }, "✕"))));
  }
  paintAtts();

  fileInput.addEventListener("change", () => {
    for (const file of fileInput.files) {
      const a = { name: file.name, type: file.type || "application/octet-stream", size: file.size, progress: 0, done: false };
      if (cfg.uploadMax && file.size > cfg.uploadMax) {
        toast(t("compose.tooLarge", { name: file.name, max: size(cfg.uploadMax) }));
        continue;
      }
      atts.push(a);
      a.promise = api.upload(state.accountId, file, (p) => { a.progress = p; const el = attList.querySelectorAll("progress")[atts.filter((x) => !x.done).indexOf(a)]; if (el) el.value = p; })
        .then((r) => { a.blobId = r.blobId; a.done = true; paintAtts(); scheduleSave(); })
        .catch((e) => { a.error = t(`error.${e.code}`, {}) === `error.${e.code}` ? t("error.generic") : t(`error.${e.code}`); a.done = true; paintAtts(); });
    }
    fileInput.value = "";
    paintAtts();
  });

  function email(draft) {
    const f = form.elements;
    const drafts = roleBox("drafts")?.id;
    const e = {
      mailboxIds: drafts ? { [drafts]: true } : {},
      keywords: { $draft: true, $seen: true },
      from: identity ? [{ name: identity.name || null, email: identity.email }] : [{ email: state.session.username }],
      to: parseAddrs(f.to.value), subject: f.subject.value,
      bodyValues: { b: { value: isRich ? rich.toText(editor) : f.body.value } },
      textBody: [{ partId: "b", type: "text/plain" }],
      attachments: atts.filter((a) => a.blobId).map((a) => ({ blobId: a.blobId, type: a.type, name: a.name, disposition: "attachment" })),
    };
    const cc = parseAddrs(f.cc.value); const bcc = parseAddrs(f.bcc.value);
    if (cc.length) e.cc = cc;
    if (bcc.length) e.bcc = bcc;
    if (v.inReplyTo) { e.inReplyTo = v.inReplyTo; e.references = v.references; }
    // Rich text goes out as multipart/alternative: the text part and the
    // sanitised HTML.
    if (isRich) {
      e.bodyValues.h = { value: rich.document_(editor) };
      e.htmlBody = [{ partId: "h", type: "text/html" }];
    }
    if (!draft) delete e.keywords.$draft;
    return e;
  }

  const bodyText = () => (isRich ? rich.toText(editor) : form.elements.body.value);

  async function saveDraft() {
    if (closed) return;
    const old = draftId;
    const r = await jmap.one("Email/set", { accountId: state.accountId, create: { d: email(true) }, destroy: old ? [old] : undefined });
    if (r.created && r.created.d) { draftId = r.created.d.id; status.textContent = t("compose.saved"); }
  }
  function scheduleSave() {
    clearTimeout(saveTimer);
    saveTimer = setTimeout(() => { saving = saving.then(saveDraft).catch((e) => { status.textContent = t("compose.saveFailed"); console.warn(e); }); }, 1500);
  }
  form.addEventListener("input", scheduleSave);

  async function close(discard) {
    clearTimeout(saveTimer);
    await saving;
    closed = true;
    if (discard && draftId) await jmap.one("Email/set", { accountId: state.accountId, destroy: [draftId] }).catch(() => {});
    else if (!discard && !draftId && (bodyText().trim() || form.elements.subject.value)) { closed = false; await saveDraft().catch(() => {}); closed = true; }
    root.hidden = true;
    root.replaceChildren();
    onClose(discard ? "discarded" : "closed");
  }

  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    clearTimeout(saveTimer);
    const f = form.elements;
    const rcpt = [...parseAddrs(f.to.value), ...parseAddrs(f.cc.value), ...parseAddrs(f.bcc.value)];
    if (!rcpt.length) { status.textContent = t("compose.noRecipients"); f.to.focus(); return; }
    if (atts.some((a) => !a.done)) { status.textContent = t("compose.waitUploads"); await Promise.all(atts.map((a) => a.promise)); }
    const total = atts.reduce((s, a) => s + (a.size || 0), 0);
    if (cfg.uploadMax && total > cfg.uploadMax) { status.textContent = t("compose.tooLarge", { name: "", max: size(cfg.uploadMax) }); return; }
    status.textContent = t("compose.sending");
    form.querySelector("button.primary").disabled = true;
    await saving;
    closed = true;
    const drafts = roleBox("drafts")?.id; const sent = roleBox("sent")?.id;
    const upd = { "keywords/$draft": null };
    if (drafts) upd[`mailboxIds/${drafts}`] = null;
    if (sent) upd[`mailboxIds/${sent}`] = true;
    try {
      const r = await jmap.call([
        ["Email/set", { accountId: state.accountId, create: { m: email(true) }, destroy: draftId ? [draftId] : undefined }, "e"],
        ["EmailSubmission/set", { accountId: state.accountId,
          create: { s: { identityId: identity?.id, emailId: "#m",
            envelope: { mailFrom: { email: identity?.email || state.session.username }, rcptTo: rcpt.map((a) => ({ email: a.email })) } } },
          onSuccessUpdateEmail: { "#s": upd } }, "s"],
      ]);
      if (r.e instanceof Error || !r.e.created?.m) throw new Error(JSON.stringify(r.e.notCreated || r.e.type));
      if (r.s instanceof Error || !r.s.created?.s) throw new Error(JSON.stringify(r.s.notCreated || r.s.type));
      root.hidden = true;
      root.replaceChildren();
      onClose("sent");
    } catch (e) {
      console.warn("send failed", e);
      closed = false;
      draftId = null;
      form.querySelector("button.primary").disabled = false;
      status.textContent = t("compose.sendFailed");
    }
  });
  form.addEventListener("keydown", (ev) => { if (ev.key === "Escape") close(false); if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) form.requestSubmit(); });

  root.replaceChildren(form);
  root.hidden = false;
  const bodyEl = isRich ? editor : textarea;
  (mode === "new" || mode === "forward" || (mode === "draft" && !v.to) ? form.elements.to : bodyEl).focus();
  if ((mode === "reply" || mode === "replyAll") && !isRich) textarea.setSelectionRange(0, 0);
}
