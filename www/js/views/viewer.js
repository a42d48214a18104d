// views/viewer.js: the attachment viewer (images, and text shown as text)
// and the message's original source. Loaded when first used, so that it
// costs nothing on the first load. Everything comes from /api/blob: an
// image through <img> (served inline only for raster types, under the
// blob's sandbox CSP), text and the source through fetch into a text
// node, so nothing of it is ever rendered as markup or run.
import { h } from "../dom.js";
import { t, size } from "../i18n.js";
import { blobUrl } from "../api.js";
import { state, blobText } from "../store.js";
import { icon } from "../icons.js";
import { TEXT_PREVIEW_MAX } from "../fit.js";

const SOURCE_MAX = 4 * 1024 * 1024;
let dlg;

function dialog() {
  if (dlg) return dlg;
  dlg = h("dialog.viewer", { "aria-labelledby": "viewer-h" });
  dlg.addEventListener("close", () => dlg.replaceChildren());
  document.body.append(dlg);
  return dlg;
}

const closeBtn = () => h("button.close", { type: "button", onclick: () => dlg.close() }, icon("close"), h("span.label", {}, t("help.close")));
const dl = (href, name) => h("a.button", { href, download: name }, icon("download"), h("span.label", {}, t("reader.downloadFile")));

function open(title, tools, content) {
  const d = dialog();
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
