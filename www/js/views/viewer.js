// views/viewer.js: the attachment viewer (images, text shown as text,
// PDF pages) and the message's original source. Loaded when first used,
// so that it costs nothing on the first load. Everything comes from
// /api/blob: an image through <img> (served inline only for raster types,
// under the blob's sandbox CSP), text and the source through fetch into a
// text node, so nothing of it is ever rendered as markup or run; a PDF's
// bytes go by postMessage to pdf.js in a frame of its own, an opaque
// origin (pdfview.html).
import { h } from "../dom.js";
import { t, size } from "../i18n.js";
import { blobUrl } from "../api.js";
import { state, blobText, blobBytes } from "../store.js";
import { icon } from "../icons.js";
import { TEXT_PREVIEW_MAX } from "../fit.js";
import { PDF_PREVIEW_MAX, PDF_PAGES_MAX, pdfFits, frameMessage, pagesShown } from "../pdfpreview.js";

const SOURCE_MAX = 4 * 1024 * 1024;
let dlg;
// Ends what the shown content left running (the PDF frame's listener).
let stop = null;
const stopNow = () => { stop?.(); stop = null; };

function dialog() {
  if (dlg) return dlg;
  dlg = h("dialog.viewer", { "aria-labelledby": "viewer-h" });
  dlg.addEventListener("close", () => { stopNow(); dlg.replaceChildren(); });
  document.body.append(dlg);
  return dlg;
}

const closeBtn = () => h("button.close", { type: "button", onclick: () => dlg.close() }, icon("close"), h("span.label", {}, t("help.close")));
const dl = (href, name) => h("a.button", { href, download: name }, icon("download"), h("span.label", {}, t("reader.downloadFile")));

function open(title, tools, content) {
  const d = dialog();
  stopNow();
  d.replaceChildren(h("div.viewer-bar", {}, h("h2", { id: "viewer-h" }, title), ...tools, closeBtn()), content);
  if (!d.open) d.showModal();
  d.querySelector(".close").focus();
}

// images: the message's image attachments; i: the one to show.
export function showImage(images, i) {
  const a = images[i];
  const name = a.name || t("reader.unnamed");
  const go = (d) => () => showImage(images, (i + d + images.length) % images.length);
  const nav = images.length > 1 ? [
    h("button", { type: "button", onclick: go(-1) }, icon("prev"), h("span.label", {}, t("viewer.previous"))),
    h("span.count", {}, t("viewer.count", { i: i + 1, n: images.length })),
    h("button", { type: "button", onclick: go(1) }, icon("next"), h("span.label", {}, t("viewer.next")))] : [];
  open(name, [...nav, dl(blobUrl(state.accountId, a.blobId, a.name || "image", a.type), a.name || "")],
    h("div.viewer-image", {}, h("img", { src: blobUrl(state.accountId, a.blobId, a.name || "image", a.type, true), alt: name })));
  const keys = (ev) => { if (ev.key === "ArrowRight") go(1)(); else if (ev.key === "ArrowLeft") go(-1)(); };
  if (images.length > 1) { dlg.onkeydown = keys; } else dlg.onkeydown = null;
}

export async function showText(a) {
  const name = a.name || t("reader.unnamed");
  const pre = h("pre.viewer-text", { tabindex: "0" }, t("list.loading"));
  open(name, [dl(blobUrl(state.accountId, a.blobId, a.name || "attachment", a.type), a.name || "")], pre);
  dlg.onkeydown = null;
  try {
    const r = await blobText(a.blobId, a.name || "attachment", a.type, TEXT_PREVIEW_MAX);
    pre.textContent = r.text;
    if (r.cut) pre.before(h("p.note", {}, t("viewer.cut", { size: size(TEXT_PREVIEW_MAX) })));
  } catch { pre.textContent = t("viewer.failed"); }
}

// A PDF: pdf.js renders it in pdfview.html, framed with
// sandbox="allow-scripts" and no allow-same-origin, so it runs in an
// opaque origin (no cookie, no /api, nothing of the app). The frame asks
// for the bytes when pdf.js has loaded; they go to it alone, transferred,
// and only what that frame's window says is heard (pdfpreview.js).
export async function showPdf(a) {
  const name = a.name || t("reader.unnamed");
  const file = a.name || "document.pdf";
  const count = h("span.count", { role: "status" }, t("list.loading"));
  const body = h("div.viewer-pdf");
  open(name, [count, dl(blobUrl(state.accountId, a.blobId, file, a.type), a.name || "")], body);
  dlg.onkeydown = null;
  const say = (text) => { count.textContent = ""; body.replaceChildren(h("p.note", {}, text)); };
  const tooBig = () => say(t("viewer.pdfTooBig", { size: size(PDF_PREVIEW_MAX) }));
  if (!pdfFits(a.size)) return tooBig();

  const frame = h("iframe.pdfframe", { sandbox: "allow-scripts", src: "/pdfview.html", title: t("viewer.pdfFrame", { name }) });
  let bytes = null, ready = false, done = false, timer = 0;
  const send = () => {
    if (!ready || !bytes || done) return;
    done = true;
    const css = getComputedStyle(dlg);
    const msg = { type: "pdf", data: bytes, maxPages: PDF_PAGES_MAX, pageLabel: t("viewer.pdfPage"),
      lang: document.documentElement.lang, bg: css.getPropertyValue("--pane").trim() || css.backgroundColor,
      dark: css.colorScheme.trim() === "dark" || (css.colorScheme.includes("dark") && matchMedia("(prefers-color-scheme: dark)").matches) };
    // "*": no target origin names an opaque one. The bytes go once, to
    // this frame's window, just after pdfview.js there said "ready" and
    // before any of the PDF is in it: to the page we framed.
    frame.contentWindow?.postMessage(msg, "*", [bytes]);
  };
  const onMessage = (ev) => {
    if (ev.source !== frame.contentWindow) return;
    const m = frameMessage(ev.origin, ev.data);
    if (!m) return;
    if (m.type === "ready") { ready = true; clearTimeout(timer); send(); }
    else if (m.type === "pages") {
      count.textContent = t("viewer.pages", { n: m.n });
      const cut = pagesShown(m.n);
      if (cut) body.prepend(h("p.note", {}, t("viewer.pdfFirstPages", cut)));
    } else if (m.type === "error") say(t(m.reason === "password" ? "viewer.pdfPassword" : "viewer.pdfFailed"));
    else if (m.type === "close") dlg.close();
  };
  addEventListener("message", onMessage);
  // pdfview.js posts "ready" before the frame's load event, a task away;
  // silent 3 s after load (a script refused or missing), it has failed.
  // A second load is the frame navigating itself (sandbox allow-scripts
  // cannot forbid that): whatever it shows now is not ours, so it goes.
  let loads = 0;
  frame.addEventListener("load", () => {
    if (++loads > 1) { stopNow(); frame.remove(); say(t("viewer.pdfFailed")); return; }
    if (!ready) timer = setTimeout(() => say(t("viewer.pdfFailed")), 3000);
  });
  stop = () => { removeEventListener("message", onMessage); clearTimeout(timer); done = true; };
  const mine = stop;
  body.append(frame);
  try {
    const r = await blobBytes(a.blobId, file, a.type, PDF_PREVIEW_MAX);
    if (stop !== mine) return;
    if (r.cut) { stopNow(); return tooBig(); }
    bytes = r.buf;
    send();
  } catch {
    if (stop === mine) { stopNow(); say(t("viewer.pdfFailed")); }
  }
}

const emlName = (e) => `${(e.subject || "message").replace(/[\\/:*?"<>|\u0000-\u001f]+/g, "_").slice(0, 80)}.eml`;
const emlUrl = (e) => blobUrl(state.accountId, e.blobId, emlName(e), "message/rfc822");

// The raw message (its blobId) as text, and a download as .eml.
export async function showOriginal(e) {
  const pre = h("pre.viewer-text.source", { tabindex: "0", "aria-label": t("reader.original") }, t("list.loading"));
  open(t("reader.original"), [dl(emlUrl(e), emlName(e))], pre);
  dlg.onkeydown = null;
  try {
    const r = await blobText(e.blobId, emlName(e), "message/rfc822", SOURCE_MAX);
    pre.textContent = r.text;
    if (r.cut) pre.before(h("p.note", {}, t("viewer.cut", { size: size(SOURCE_MAX) })));
  } catch { pre.textContent = t("viewer.failed"); }
}

export function downloadOriginal(e) {
  const a = h("a", { href: emlUrl(e), download: emlName(e), hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
}
