// views/reader.js: a whole thread. Plain text as text; HTML sanitised with
// DOMPurify and shown in a sandboxed frame without allow-scripts, so no
// script or event handler of a mail ever runs. Remote images stay blocked
// until the user asks, then come through /api/image; cid: images from
// /api/blob. The mail's own CSS is cleaned and applied by mailstyle.js.
// The read messages of a thread are folded (the unread ones and the last
// open), quoted text is folded behind a toggle (quotes.js), each message
// has its own Reply, Reply all, Forward and More (print, show original,
// download); image attachments have thumbnails. The viewer and the
// original's source live in viewer.js, loaded when first needed.
import DOMPurify from "../../vendor/purify.es.js";
import { h } from "../dom.js";
import { t, longDate, size, addresses } from "../i18n.js";
import { blobUrl } from "../api.js";
import { state, bodyText } from "../store.js";
import * as mailstyle from "./mailstyle.js";
import { cleanAttr } from "../cssattr.js";
import { splitText, htmlFold, cutFrom } from "../quotes.js";
import { previewKind } from "../fit.js";
import { icon } from "../icons.js";
import { moreMenu } from "./toolbar.js";

const FOREIGN = new Set(["http://www.w3.org/2000/svg", "http://www.w3.org/1998/Math/MathML"]);
// Attributes with rules of their own above: not read as CSS.
const OWN_RULE = new Set(["style", "src", "href", "xlink:href", "data-pstyle", "data-blocked"]);

// Sanitise and rewrite a mail's HTML. Returns {html, blocked, css}: the
// mail's <style> sheets and style attributes (as data-pstyle) cleaned, to
// be applied by mailstyle.apply.
export function cleanHtml(e, html, showImages) {
  const cids = new Map();
  for (const a of [...(e.attachments || []), ...(e.htmlBody || [])]) if (a.cid) cids.set(a.cid.replace(/^<|>$/g, ""), a);
  let blocked = 0;
  // An image URL as the frame may load it, or null.
  const imageUrl = (src) => {
    if (/^cid:/i.test(src)) {
      const a = cids.get(decodeURIComponent(src.slice(4)));
      return a ? location.origin + blobUrl(state.accountId, a.blobId, a.name || "image", a.type, true) : null;
    }
    if (/^https?:/i.test(src)) {
      if (showImages) return `${location.origin}/api/image?url=${encodeURIComponent(src)}`;
      blocked++;
      return null;
    }
    return /^data:image\//i.test(src) ? src : null;
  };
  const sheets = [];
  DOMPurify.addHook("uponSanitizeElement", (node, data) => {
    if (data.tagName === "style") sheets.push(node.textContent || "");
  });
  DOMPurify.addHook("afterSanitizeAttributes", (node) => {
    // Every fetching attribute, not only <img src>: <video>, <audio>,
    // <source> and SVG <image>/<use> load too, and a relative URL would
    // reach the image proxy without the user's consent.
    const fetching = node.tagName === "A" ? ["src"] : ["src", "href", "xlink:href"];
    for (const at of fetching) {
      if (!node.hasAttribute(at)) continue;
      const src = node.getAttribute(at);
      const to = imageUrl(src);
      if (to) node.setAttribute(at, to);
      else { node.removeAttribute(at); if (/^https?:/i.test(src)) node.setAttribute("data-blocked", ""); }
    }
    for (const at of ["srcset", "background", "poster"]) node.removeAttribute(at);
    if (node.hasAttribute("style")) {
      const css = mailstyle.cleanCss(node.getAttribute("style"), imageUrl);
      node.removeAttribute("style");
      if (css) node.setAttribute("data-pstyle", css);
    }
    // In SVG and MathML any attribute may be read as CSS (presentation
    // attributes such as fill or mask, animation values): a url() in one
    // follows the rule for the mail's CSS, or the attribute goes.
    if (FOREIGN.has(node.namespaceURI)) {
      for (const at of [...node.attributes]) {
        if (OWN_RULE.has(at.name.toLowerCase())) continue;
        const v = cleanAttr(at.name, at.value, imageUrl);
        if (v === null) node.removeAttributeNode(at);
        else if (v !== at.value) at.value = v;
      }
    }
    if (node.tagName === "A") { node.setAttribute("target", "_blank"); node.setAttribute("rel", "noopener noreferrer"); }
  });
  const out = DOMPurify.sanitize(html, { WHOLE_DOCUMENT: true, FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select", "iframe", "frame", "object", "embed", "link", "meta", "base"],
    FORBID_ATTR: ["action", "formaction"] });
  DOMPurify.removeHook("afterSanitizeAttributes");
  DOMPurify.removeHook("uponSanitizeElement");
  const css = sheets.map((c) => mailstyle.cleanCss(c, imageUrl)).filter(Boolean).join("\n");
  return { html: out, blocked, css };
}

function frameFor(html, css) {
  // No allow-scripts: nothing in the mail runs. allow-same-origin (without
  // scripts) lets the app measure the height; allow-popups opens links in
  // a new tab outside the sandbox.
  const f = h("iframe.mailframe", { sandbox: "allow-same-origin allow-popups allow-popups-to-escape-sandbox",
    title: t("reader.htmlFrame"), referrerpolicy: "no-referrer" });
  f.srcdoc = html;
  f.addEventListener("load", () => {
    try { mailstyle.apply(f.contentDocument, css); } catch { /* no access: shown unstyled */ }
    try { f.style.height = `${f.contentDocument.documentElement.scrollHeight + 16}px`; } catch { /* cross-origin */ }
  });
  return f;
}

// The sanitised HTML without its quoted part, or null when there is none
// (or nothing but the quote). The parse is inert: DOMParser runs nothing.
function withoutQuote(html) {
  const doc = new DOMParser().parseFromString(html, "text/html");
  const start = htmlFold(doc.body);
  if (!start || !cutFrom(start, doc.body)) return null;
  return "<!doctype html>" + doc.documentElement.outerHTML;
}

// The state of the open thread's view: which messages and which quotes
// are open. Kept while the same thread is painted again.
let view = { key: "", open: new Set(), quotes: new Set() };
let lazy = null;
const viewer = () => (lazy ||= import("./viewer.js"));

function quoteToggle(id, onToggle) {
  const shown = view.quotes.has(id);
  return h("button.quote-toggle", { type: "button", "aria-expanded": String(shown), onclick: onToggle },
    t(shown ? "reader.hideQuoted" : "reader.showQuoted"));
}

function bodyOf(e, opts, repaint) {
  const body = h("div.body");
  const htmlParts = (e.htmlBody || []).filter((p) => p.type === "text/html");
  const toggle = () => { if (view.quotes.has(e.id)) view.quotes.delete(e.id); else view.quotes.add(e.id); repaint(); };
  let blocked = 0;
  if (htmlParts.length) {
    const r = cleanHtml(e, bodyText(e, htmlParts), opts.showImages);
    blocked = r.blocked;
    const short = withoutQuote(r.html);
    body.append(frameFor(short && !view.quotes.has(e.id) ? short : r.html, r.css));
    if (short) body.append(quoteToggle(e.id, toggle));
  } else {
    const { shown, folded } = splitText(bodyText(e, e.textBody));
    body.append(h("pre.text", {}, shown));
    if (folded) {
      body.append(quoteToggle(e.id, toggle));
      if (view.quotes.has(e.id)) body.append(h("pre.text.quoted", {}, folded));
    }
  }
  return { body, blocked, htmlParts };
}

function attachment(e, a, images) {
  const name = a.name || t("reader.unnamed");
  const kind = previewKind(a.type);
  const url = blobUrl(state.accountId, a.blobId, a.name || "attachment", a.type);
  const download = h("a.download", { href: url, download: a.name || "" },
    icon("download"), h("span.sr-only", {}, t("reader.download", { name })));
  // A preview button holds the name alone, so that its accessible name
  // ("Preview …") contains all it shows (axe: label-content-name-mismatch);
  // the kind and the size stand beside it.
  const meta = (badge) => h("span.meta", {}, badge ? h("span.badge", {}, badge) : null, h("span.size", {}, size(a.size)));
  const preview = (show, ...lead) => h("button.att-open", { type: "button", "aria-label": t("reader.preview", { name }),
    onclick: () => viewer().then(show) }, ...lead, h("span.name", {}, name));
  if (kind === "image") {
    return h("li", {}, preview((v) => v.showImage(images, images.indexOf(a)),
      h("img.thumb", { src: blobUrl(state.accountId, a.blobId, a.name || "image", a.type, true), alt: "", loading: "lazy" })),
    meta(), download);
  }
  if (kind === "text") return h("li", {}, preview((v) => v.showText(a), icon("file")), meta(), download);
  if (kind === "pdf") return h("li", {}, preview((v) => v.showPdf(a), icon("file")), meta("PDF"), download);
  // Anything else: a download.
  return h("li", {}, h("a.att-open", { href: url, download: a.name || "" }, icon("file"),
    h("span.name", {}, name), " ", h("span.size", {}, size(a.size))));
}

function actions(e, opts) {
  const b = (mode, key) => h("button", { type: "button", "data-msg-compose": mode, onclick: () => opts.onCompose?.(mode, e) },
    icon(mode), h("span.label", {}, t(key)));
  const more = moreMenu(() => [
    { label: t("reader.print"), icon: "print", run: () => print(e) },
    { label: t("reader.original"), icon: "source", run: () => viewer().then((v) => v.showOriginal(e)) },
    { label: t("reader.downloadEml"), icon: "download", run: () => viewer().then((v) => v.downloadOriginal(e)) },
    opts.onFilter ? { label: t("reader.filterLike"), icon: "filter", run: () => opts.onFilter(e) } : null,
    opts.onAddContact && e.from?.[0] ? { label: t("contacts.add"), icon: "compose", run: () => opts.onAddContact(e.from[0]) } : null,
  ].filter(Boolean));
  return h("div.msg-actions", { role: "toolbar", "aria-label": t("toolbar.thisMessage") },
    b("reply", "action.reply"), b("replyAll", "action.replyAll"), b("forward", "action.forward"), more.wrap);
}

// Prints only this message with its headers (the print style sheet
// hides the rest: html[data-print] and .msg.print-this).
function print(e) {
  const art = document.querySelector(`#reader-body .msg[data-id="${CSS.escape(e.id)}"]`);
  if (!art) return;
  document.documentElement.dataset.print = "1";
  art.classList.add("print-this");
  const done = () => { delete document.documentElement.dataset.print; art.classList.remove("print-this"); };
  addEventListener("afterprint", done, { once: true });
  window.print();
}

function message(e, opts, repaint) {
  const open = view.open.has(e.id);
  // Folded: the names and the start of the text; open: the addresses.
  const from = (open ? addresses(e.from) : (e.from || []).map((a) => a.name || a.email).join(", ")) || t("list.unknownSender");
  const toggle = h("button.msg-toggle", { type: "button", "aria-expanded": String(open),
    onclick: () => { if (open) view.open.delete(e.id); else view.open.add(e.id); repaint(); } },
  h("strong.from", {}, from), open ? null : h("span.snippet", {}, e.preview || ""),
  h("time", { datetime: e.receivedAt }, longDate(e.receivedAt)));
  const art = h(`article.msg${open ? "" : ".folded"}`, { "data-id": e.id, "aria-label": t("reader.messageFrom", { name: addresses(e.from) }) },
    h("header", {}, toggle));
  if (!open) return art;
  const { body, blocked, htmlParts } = bodyOf(e, opts, repaint);
  const atts = (e.attachments || []).filter((a) => !(a.cid && htmlParts.length && a.disposition !== "attachment"));
  const images = atts.filter((a) => previewKind(a.type) === "image");
  const add = (el, ...kids) => el.append(...kids.filter(Boolean));
  add(art.querySelector("header"),
    h("div.to", {}, t("reader.to"), " ", addresses(e.to)),
    e.cc && e.cc.length ? h("div.to", {}, t("reader.cc"), " ", addresses(e.cc)) : null,
    h("div.print-only", {}, t("reader.subject"), " ", e.subject || t("list.noSubject")),
    actions(e, opts));
  add(art,
    blocked ? h("p.images", {}, t("reader.imagesBlocked", { n: blocked }), " ",
      h("button.show-images", { type: "button", onclick: opts.onShowImages }, t("reader.showImages"))) : null,
    body,
    atts.length ? h("ul.attachments", { "aria-label": t("reader.attachments") }, atts.map((a) => attachment(e, a, images))) : null);
  return art;
}

// Paints a thread (oldest first). opts: showImages, onShowImages,
// onCompose(mode, email), focus (an email id to open with the thread).
export function render(root, emails, opts) {
  const key = emails.map((e) => e.id).join(",");
  if (key !== view.key) {
    // A new thread: the unread messages and the last one open, and the
    // one a link or Back named (opts.focus), read or not.
    view = { key, open: new Set(emails.filter((e, i) => !e.keywords?.$seen || i === emails.length - 1 || e.id === opts.focus)
      .map((e) => e.id)), quotes: new Set() };
  }
  const subject = emails[emails.length - 1]?.subject || t("list.noSubject");
  const repaint = () => render(root, emails, opts);
  const focused = document.activeElement?.closest?.(".msg")?.dataset.id;
  const which = document.activeElement?.classList?.contains("quote-toggle") ? ".quote-toggle" : ".msg-toggle";
  root.replaceChildren(
    h("h2.subject", { tabindex: "-1" }, subject),
    ...emails.map((e) => message(e, opts, repaint)));
  if (focused) root.querySelector(`.msg[data-id="${CSS.escape(focused)}"] ${which}`)?.focus({ preventScroll: true });
}
