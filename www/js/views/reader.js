// views/reader.js: a whole thread. Plain text as text; HTML sanitised with
// DOMPurify and shown in a sandboxed frame without allow-scripts, so no
// script or event handler of a mail ever runs. Remote images stay blocked
// until the user asks, then come through /api/image; cid: images from
// /api/blob. The mail's own CSS is cleaned and applied by mailstyle.js.
import DOMPurify from "../../vendor/purify.es.js";
import { h } from "../dom.js";
import { t, longDate, size, addresses } from "../i18n.js";
import { blobUrl } from "../api.js";
import { state, bodyText } from "../store.js";
import * as mailstyle from "./mailstyle.js";
import { cleanAttr } from "../cssattr.js";

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

function message(e, { showImages, onShowImages, expanded }) {
  const body = h("div.body");
  const htmlParts = (e.htmlBody || []).filter((p) => p.type === "text/html");
  let blocked = 0;
  if (htmlParts.length) {
    const r = cleanHtml(e, bodyText(e, htmlParts), showImages);
    blocked = r.blocked;
    body.append(frameFor(r.html, r.css));
  } else {
    body.append(h("pre.text", {}, bodyText(e, e.textBody)));
  }
  const atts = (e.attachments || []).filter((a) => !(a.cid && htmlParts.length && a.disposition !== "attachment"));
  return h("article.msg", { "data-id": e.id, open: expanded, "aria-label": t("reader.messageFrom", { name: addresses(e.from) }) },
    h("header", {},
      h("div.from", {}, h("strong", {}, addresses(e.from) || t("list.unknownSender"))),
      h("time", { datetime: e.receivedAt }, longDate(e.receivedAt)),
      h("div.to", {}, t("reader.to"), " ", addresses(e.to)),
      e.cc && e.cc.length ? h("div.to", {}, t("reader.cc"), " ", addresses(e.cc)) : null),
    blocked ? h("p.images", {}, t("reader.imagesBlocked", { n: blocked }), " ",
      h("button.show-images", { type: "button", onclick: onShowImages }, t("reader.showImages"))) : null,
    body,
    atts.length ? h("ul.attachments", { "aria-label": t("reader.attachments") }, atts.map((a) =>
      h("li", {}, h("a", { href: blobUrl(state.accountId, a.blobId, a.name || "attachment", a.type), download: a.name || "" },
        h("span.name", {}, a.name || t("reader.unnamed")), " ", h("span.size", {}, size(a.size)))))) : null);
}

export function render(root, emails, opts) {
  const subject = emails[emails.length - 1]?.subject || t("list.noSubject");
  root.replaceChildren(
    h("h2.subject", { tabindex: "-1" }, subject),
    ...emails.map((e, i) => message(e, { ...opts, expanded: i === emails.length - 1 })));
}
