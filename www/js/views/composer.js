// views/composer.js: new, reply, reply all, forward, a draft continued.
// Plain text or simple rich text; To, Cc and Bcc as address chips with
// suggestions (recipients.js); attachments checked against the limits
// that apply before they upload; a question before sending without a
// subject or with "attached" and no attachment; templates. It gets its
// state from the app (identities, limits, settings) and hands the work
// to the outbox (drafts, sending with Undo); the store does the JMAP.
import { h } from "../dom.js";
import { t, size, longDate } from "../i18n.js";
import { state, bodyText, upload } from "../store.js";
import { Draft } from "../outbox.js";
import { check, limits as limitsOf, attachmentRoom } from "../limits.js";
import { describe, refusedAddresses } from "../senderrors.js";
import { questions } from "../sendcheck.js";
import { format } from "../addr.js";
import * as recipients from "./recipients.js";
import * as rich from "./richtext.js";

let current = null;

function quote(e) {
  const text = bodyText(e, e.textBody) || (e.preview || "");
  return text.split("\n").map((l) => `> ${l}`).join("\n");
}

// The identity a reply is sent from: the one the mail was sent to, else
// the first.
export function pickIdentity(ids, src) {
  if (!ids.length) return null;
  const rcpt = new Set([...(src?.to || []), ...(src?.cc || [])].map((a) => (a.email || "").toLowerCase()));
  return ids.find((i) => rcpt.has((i.email || "").toLowerCase())) || ids[0];
}

// The signature block, "-- " on its own line first (RFC 3676).
const signatureBlock = (identity) => {
  const sig = (identity?.signature || "").replace(/\s+$/, "");
  return sig ? `\n\n-- \n${sig}` : "";
};

const atts = (src) => (src.attachments || []).map((a) => ({ blobId: a.blobId, name: a.name, type: a.type, size: a.size, done: true }));

// What the composer starts with: {to, cc, bcc, subject, body, html,
// attachments, inReplyTo, references}.
function prefill(mode, src, identity) {
  const sig = signatureBlock(identity);
  if (!src || mode === "new") return { to: [], cc: [], bcc: [], subject: "", body: sig.replace(/^\n/, "") };
  if (mode === "draft") {
    return { to: src.to || [], cc: src.cc || [], bcc: src.bcc || [], subject: src.subject || "", body: bodyText(src, src.textBody),
      html: (src.htmlBody || []).some((p) => p.type === "text/html")
        ? src.htmlBody.map((p) => src.bodyValues?.[p.partId]?.value || "").join("") : null,
      attachments: atts(src), inReplyTo: src.inReplyTo, references: src.references };
  }
  const subj = src.subject || "";
  const who = src.from?.[0] ? src.from[0].name || src.from[0].email : "";
  const when = src.sentAt || src.receivedAt;
  if (mode === "forward") {
    return { to: [], cc: [], bcc: [], subject: /^fwd?:/i.test(subj) ? subj : `Fwd: ${subj}`,
      body: `${sig}\n\n${t("compose.forwarded")}\n${t("reader.from")} ${(src.from || []).map(format).join(", ")}\n`
        + `${t("reader.date")} ${when ? longDate(when) : ""}\n${t("reader.subject")} ${subj}\n\n${quote(src)}`,
      attachments: atts(src) };
  }
  const me = (identity?.email || state.session?.username || "").toLowerCase();
  const to = src.replyTo && src.replyTo.length ? src.replyTo : src.from || [];
  let cc = [];
  if (mode === "replyAll") {
    cc = [...(src.to || []), ...(src.cc || [])].filter((a) => a.email.toLowerCase() !== me
      && !to.some((b) => b.email.toLowerCase() === a.email.toLowerCase()));
  }
  return { to, cc, bcc: [], subject: /^re:/i.test(subj) ? subj : `Re: ${subj}`,
    body: `${sig}\n\n${when ? t("compose.wrote", { date: longDate(when), name: who }) : t("compose.wroteNoDate", { name: who })}\n${quote(src)}`,
    inReplyTo: src.messageId, references: [...(src.references || []), ...(src.messageId || [])] };
}

// Opens the composer in root. ctx (the app's state and intents):
// {identities, uploadMax, sendDelay, futureRelease, templates,
// attachWords(), suggest(text, exclude), onClose(how), onSending(sending,
// composer), saveTemplate({name, body}), toast(text)}.
export function open(root, mode, src, ctx) {
  if (current) current.leave();
  const ids = ctx.identities;
  let identity = mode === "draft" ? ids.find((i) => i.email === src.from?.[0]?.email) || pickIdentity(ids, null) : pickIdentity(ids, src);
  const v = prefill(mode, src, identity);
  const files = v.attachments || [];
  const draft = new Draft(mode === "draft" ? src.id : null);
  let isRich = mode === "draft" ? !!v.html : ctx.compose === "rich";
  let closing = false;

  const own = () => new Set(ids.map((i) => i.email.toLowerCase()));
  const onChange = () => draft.changed(build, saved);
  const rcpt = (name, label, value) => recipients.field({ name, label, value, suggest: ctx.suggest, exclude: own, onChange });
  const fTo = rcpt("to", t("compose.to"), v.to);
  const fCc = rcpt("cc", t("compose.cc"), v.cc);
  const fBcc = rcpt("bcc", t("compose.bcc"), v.bcc);
  const textarea = h("textarea", { name: "body", rows: 14, dir: "auto", "aria-label": t("compose.body") }, v.body);
  const editor = rich.editor("", t("compose.body"));
  if (mode === "draft" && v.html) editor.innerHTML = rich.clean(v.html); else editor.replaceChildren(...rich.fromText(v.body));
  const tools = rich.toolbar(editor);
  const richToggle = h("button.small", { type: "button", "aria-pressed": String(isRich), onclick: () => { setRich(!isRich); onChange(); } },
    t("compose.richText"));
  const fromField = ids.length > 1
    ? h("label.field", {}, h("span", {}, t("compose.from")),
      h("select", { name: "from", onchange: (ev) => { setIdentity(ids.find((i) => i.id === ev.target.value) || identity); onChange(); } },
        ids.map((i) => h("option", { value: i.id, selected: i.id === identity?.id }, format(i)))))
    : h("p.fromline", {}, t("reader.from"), " ", identity ? format(identity) : state.session?.username || "");
  const attList = h("ul.att-list", { "aria-label": t("reader.attachments") });
  const limitLine = h("p.limit");
  const status = h("p.status", { role: "status" });
  const alert = h("p.error", { role: "alert", hidden: true });
  const fileInput = h("input", { type: "file", multiple: true, hidden: true, "aria-label": t("compose.attach") });
  const sendBtn = h("button.primary", { type: "submit" }, t("compose.send"));
  const laterBtn = ctx.futureRelease ? h("button", { type: "button", onclick: () => askLater() }, t("compose.sendLater")) : null;
  const tplBtn = h("button.small", { type: "button", "aria-haspopup": "menu", "aria-expanded": "false", onclick: () => templates() },
    t("compose.templates"));
  const tplMenu = h("ul.menu", { role: "menu", "aria-label": t("compose.templates"), hidden: true });
  const subject = h("input", { name: "subject", type: "text", dir: "auto", value: v.subject, autocomplete: "off" });
  const form = h("form.composer", { "aria-label": t(`compose.title.${mode}`) },
    h("h2", {}, t(`compose.title.${mode}`)),
    fromField, fTo.el, fCc.el, fBcc.el,
    h("label.field", {}, h("span", {}, t("compose.subject")), subject),
    h("div.formatbar", {}, richToggle, tools, h("span.tpl", {}, tplBtn, tplMenu)),
    h("div.field.bodyfield", {}, textarea, editor),
    attList, limitLine, alert, status,
    h("div.actions", {}, sendBtn, laterBtn,
      h("button", { type: "button", onclick: () => fileInput.click() }, t("compose.attach")),
      h("button", { type: "button", onclick: () => close(true) }, t("compose.discard")),
      h("button", { type: "button", onclick: () => close(false) }, t("compose.close"))),
    fileInput);

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

  // Another identity: its signature replaces the old one's, if still there.
  function setIdentity(next) {
    const before = signatureBlock(identity);
    identity = next;
    if (!isRich && before && textarea.value.includes(before)) textarea.value = textarea.value.replace(before, signatureBlock(next));
  }

  const text = () => (isRich ? rich.toText(editor) : textarea.value);
  const bodyBytes = () => new TextEncoder().encode(text()).length * (isRich ? 2 : 1);
  const lims = () => limitsOf({ uploadMax: ctx.uploadMax, session: state.session, accountId: state.accountId, learned: ctx.learned() });

  // The message as it stands. peek: the recipients as typed, the fields
  // left as they are (a draft saved while the user types).
  function build(peek = true) {
    const read = (f) => (peek ? f.peek() : f.value());
    return {
      from: identity ? { name: identity.name || null, email: identity.email } : { name: null, email: state.session.username },
      replyTo: identity?.replyTo || [], to: read(fTo), cc: read(fCc), bcc: read(fBcc), subject: subject.value,
      text: text(), html: isRich ? rich.document_(editor) : null,
      attachments: files.filter((a) => a.blobId), inReplyTo: v.inReplyTo, references: v.references,
    };
  }

  function saved(err) {
    if (err) { console.warn("draft", err); status.textContent = t("compose.saveFailed", { reason: sentence(err) }); }
    else status.textContent = t("compose.saved");
  }

  const sentence = (e) => {
    const d = describe(e, { size, list: (a) => a.join(", "), from: identity?.email || "" });
    return t(d.key, d.vars);
  };
  function fail(text) {
    alert.textContent = text;
    alert.hidden = false;
  }

  // -- attachments ----------------------------------------------------------------

  function paintAtts() {
    attList.replaceChildren(...files.map((a, i) => h("li", {},
      h("span.name", {}, a.name), " ", h("span.size", {}, size(a.size)),
      a.done ? null : h("progress", { max: "1", value: String(a.progress || 0), "aria-label": t("compose.uploading", { name: a.name }) }),
      a.error ? h("span.error", {}, a.error) : null,
      h("button.small", { type: "button", "aria-label": t("compose.removeAttachment", { name: a.name }),
        onclick: () => { files.splice(i, 1); paintAtts(); onChange(); } }, "✕"))));
    const room = attachmentRoom(lims(), bodyBytes(), files.length);
    const used = files.reduce((s, a) => s + (a.size || 0), 0);
    limitLine.textContent = files.length && Number.isFinite(room.max) ? t("compose.used", { used: size(used), max: size(room.max) }) : "";
  }
  paintAtts();

  fileInput.addEventListener("change", () => {
    alert.hidden = true;
    const refused = [];
    for (const file of fileInput.files) {
      const no = check(lims(), file.size, files.map((a) => a.size || 0), bodyBytes());
      if (no) {
        refused.push(no.reason === "file" ? t("compose.fileTooLarge", { name: file.name, max: size(no.max) })
          : t("compose.attachmentsTooLarge", { name: file.name, max: size(no.max), used: size(no.used) }));
        continue;
      }
      const a = { name: file.name, type: file.type || "application/octet-stream", size: file.size, progress: 0, done: false };
      files.push(a);
      a.promise = upload(file, (p) => {
        a.progress = p;
        const el = attList.children[files.indexOf(a)]?.querySelector("progress");
        if (el) el.value = p;
      }).then((r) => { a.blobId = r.blobId; a.done = true; paintAtts(); onChange(); })
        .catch((e) => { a.error = e.code === "too_large" ? t("compose.uploadTooLarge") : sentence(e); a.done = true; paintAtts(); });
    }
    fileInput.value = "";
    if (refused.length) fail(refused.join(" "));
    paintAtts();
  });

  // -- templates ----------------------------------------------------------------------

  function templates() {
    const openNow = tplMenu.hidden;
    tplMenu.hidden = !openNow;
    tplBtn.setAttribute("aria-expanded", String(openNow));
    if (!openNow) return;
    const item = (label, fn) => h("li", { role: "menuitem", tabindex: "-1", onclick: () => { hideMenu(); fn(); },
      onkeydown: (ev) => { if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); hideMenu(); fn(); } } }, label);
    tplMenu.replaceChildren(...(ctx.templates() || []).map((tp) => item(tp.name, () => insert(tp.body))),
      item(t("compose.saveTemplate"), saveTemplate));
    tplMenu.firstChild.focus();
  }
  function hideMenu() { tplMenu.hidden = true; tplBtn.setAttribute("aria-expanded", "false"); }
  tplMenu.addEventListener("keydown", (ev) => {
    const items = [...tplMenu.children];
    const i = items.indexOf(document.activeElement);
    if (ev.key === "ArrowDown" || ev.key === "ArrowUp") {
      ev.preventDefault();
      items[(i + (ev.key === "ArrowDown" ? 1 : -1) + items.length) % items.length].focus();
    } else if (ev.key === "Escape") { ev.preventDefault(); ev.stopPropagation(); hideMenu(); tplBtn.focus(); }
  });

  function insert(body) {
    if (isRich) {
      editor.focus();
      document.execCommand("insertText", false, body);
    } else {
      textarea.focus();
      textarea.setRangeText(body, textarea.selectionStart, textarea.selectionEnd, "end");
      textarea.dispatchEvent(new Event("input", { bubbles: true }));
    }
  }

  function saveTemplate() {
    const name = h("input", { name: "templateName", required: true, maxlength: "100", autocomplete: "off" });
    const dlg = h("dialog.small", { "aria-label": t("compose.saveTemplate") },
      h("form", { method: "dialog", onsubmit: async (ev) => {
        if (ev.submitter?.value !== "ok") return;
        ev.preventDefault();
        try {
          await ctx.saveTemplate({ name: name.value.trim(), body: text().replace(signatureBlock(identity), "").trim() });
          dlg.close();
          ctx.toast(t("compose.templateSaved", { name: name.value.trim() }));
        } catch (e) { err.textContent = t("settings.failed", { reason: e.message }); err.hidden = false; }
      } },
      h("label", {}, h("span", {}, t("compose.templateName")), " ", name),
      h("p.error", { role: "alert", hidden: true }),
      h("div.actions", {}, h("button.primary", { type: "submit", value: "ok" }, t("settings.save")),
        h("button", { type: "submit", value: "cancel", formnovalidate: true }, t("settings.cancel")))));
    const err = dlg.querySelector(".error");
    dlg.addEventListener("close", () => dlg.remove());
    root.append(dlg);
    dlg.showModal();
  }

  // -- before sending -------------------------------------------------------------

  // Asks the questions; resolves true to send anyway.
  function confirm(qs) {
    return new Promise((resolve) => {
      const dlg = h("dialog.small", { role: "alertdialog", "aria-label": t("compose.askTitle") },
        h("form", { method: "dialog" },
          h("h3", {}, t("compose.askTitle")),
          ...qs.map((q) => h("p", {}, t(q === "subject" ? "compose.askSubject" : "compose.askAttachment"))),
          h("div.actions", {}, h("button.primary", { type: "submit", value: "send" }, t("compose.sendAnyway")),
            h("button", { type: "submit", value: "back" }, t("compose.dontSend")))));
      dlg.addEventListener("close", () => { dlg.remove(); resolve(dlg.returnValue === "send"); });
      root.append(dlg);
      dlg.showModal();
    });
  }

  function askLater() {
    const when = h("input", { type: "datetime-local", name: "sendAt", required: true,
      min: new Date(Date.now() + 60000 - new Date().getTimezoneOffset() * 60000).toISOString().slice(0, 16) });
    const dlg = h("dialog.small", { "aria-label": t("compose.sendLater") },
      h("form", { method: "dialog" },
        h("label", {}, h("span", {}, t("compose.sendAt")), " ", when),
        h("div.actions", {}, h("button.primary", { type: "submit", value: "ok" }, t("compose.schedule")),
          h("button", { type: "submit", value: "cancel", formnovalidate: true }, t("settings.cancel")))));
    dlg.addEventListener("close", () => {
      dlg.remove();
      if (dlg.returnValue === "ok" && when.value) send(new Date(when.value));
    });
    root.append(dlg);
    dlg.showModal();
  }

  let busy = false;
  async function send(sendAt = null) {
    if (busy) return;
    busy = true;
    try { await sendNow(sendAt); } finally { busy = false; }
  }

  async function sendNow(sendAt) {
    alert.hidden = true;
    const fields = [fTo, fCc, fBcc];
    const bad = fields.flatMap((f) => f.invalid());
    if (bad.length) {
      fail(t("compose.invalidRecipients", { n: bad.length, addresses: bad.join(", ") }));
      fields.find((f) => f.invalid().length).focus();
      return;
    }
    const m = build(false);
    if (!m.to.length && !m.cc.length && !m.bcc.length) { fail(t("send.noRecipients")); fTo.focus(); return; }
    if (files.some((a) => !a.done)) {
      status.textContent = t("compose.waitUploads");
      await Promise.all(files.map((a) => a.promise));
    }
    if (files.some((a) => a.error)) { fail(t("compose.removeFailed")); return; }
    const room = attachmentRoom(lims(), bodyBytes(), files.length);
    const used = files.reduce((s, a) => s + (a.size || 0), 0);
    if (used > room.max) { fail(t("compose.attachmentsOver", { used: size(used), max: size(room.max) })); return; }
    const qs = questions({ subject: m.subject, text: m.text, attachments: files.length, words: ctx.attachWords(),
      forwardedMarker: t("compose.forwarded") });
    if (qs.length && !(await confirm(qs))) { subject.focus(); return; }
    status.textContent = t("compose.sending");
    sendBtn.disabled = true;
    if (laterBtn) laterBtn.disabled = true;
    let sending;
    try {
      sending = await draft.send(() => build(false), { identity, delay: sendAt ? 0 : ctx.sendDelay, futureRelease: !!ctx.futureRelease, sendAt });
    } catch (e) {
      console.warn("send failed", e);
      sendBtn.disabled = false;
      if (laterBtn) laterBtn.disabled = false;
      status.textContent = "";
      fields.forEach((f) => f.refuse(refusedAddresses(e)));
      fail(sentence(e));
      return;
    }
    status.textContent = "";
    detach();
    ctx.onSending(sending, composer);
  }

  // -- closing ----------------------------------------------------------------------

  function detach() {
    if (current === composer) current = null;
    form.remove();
    root.hidden = true;
  }

  // Close keeps what was typed (a draft, once the user changed
  // something); Discard removes every copy. Either stays open with the
  // reason when the server refuses.
  async function close(discard) {
    if (closing) return;
    closing = true;
    let removed = 0;
    try {
      if (discard) removed = await draft.discard();
      else if (draft.dirty) await draft.save(build);
      else await draft.saving;
    } catch (e) {
      closing = false;
      fail(discard ? t("compose.discardFailed", { reason: sentence(e) }) : t("compose.saveFailed", { reason: sentence(e) }));
      return;
    }
    detach();
    root.replaceChildren();
    ctx.onClose(removed ? "discarded" : "closed");
  }

  form.addEventListener("input", (ev) => { if (ev.target !== fileInput) onChange(); });
  form.addEventListener("submit", (ev) => { ev.preventDefault(); send(); });
  form.addEventListener("keydown", (ev) => {
    if (ev.key === "Escape" && !ev.defaultPrevented) { ev.preventDefault(); close(false); }
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); form.requestSubmit(); }
  });

  const composer = {
    // Back on screen after Undo or a refused send, as it was.
    resume(note, failure) {
      if (current && current !== composer) current.leave();
      current = composer;
      closing = false;
      sendBtn.disabled = false;
      if (laterBtn) laterBtn.disabled = false;
      root.replaceChildren(form);
      root.hidden = false;
      status.textContent = note || "";
      if (failure) { [fTo, fCc, fBcc].forEach((f) => f.refuse(refusedAddresses(failure))); fail(sentence(failure)); }
      (isRich ? editor : textarea).focus();
    },
    // Another composer takes the screen: this one is kept as a draft.
    leave() { if (draft.dirty) draft.save(build).catch((e) => console.warn("draft", e)); detach(); },
    get draft() { return draft; },
  };

  current = composer;
  root.replaceChildren(form);
  root.hidden = false;
  const bodyEl = isRich ? editor : textarea;
  (mode === "new" || mode === "forward" || (mode === "draft" && !v.to.length) ? fTo : bodyEl).focus();
  if ((mode === "reply" || mode === "replyAll") && !isRich) textarea.setSelectionRange(0, 0);
  return composer;
}
