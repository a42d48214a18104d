// views/richtext.js: the composer's simple rich text: bold, italic,
// underline, lists and links in a contenteditable. Everything that leaves
// it (pasted or sent) goes through DOMPurify with a short allow-list, so
// no script, style or remote resource gets into a sent mail.
import DOMPurify from "../../vendor/purify.es.js";
import { h } from "../dom.js";
import { t } from "../i18n.js";

const TAGS = ["b", "strong", "i", "em", "u", "ul", "ol", "li", "a", "br", "div", "p", "blockquote"];
const SAFE_URL = /^(https?:|mailto:)/i;

// Only the allow-listed tags and href (http, https, mailto) remain.
export function clean(html) {
  DOMPurify.addHook("afterSanitizeAttributes", (node) => {
    if (node.tagName === "A") {
      const href = node.getAttribute("href") || "";
      if (!SAFE_URL.test(href)) node.removeAttribute("href");
    }
  });
  const out = DOMPurify.sanitize(html, { ALLOWED_TAGS: TAGS, ALLOWED_ATTR: ["href"] });
  DOMPurify.removeHook("afterSanitizeAttributes");
  return out;
}

// Plain text as editor content: one <div> per line (an empty line a <br>).
export function fromText(text) {
  return text.split("\n").map((l) => h("div", {}, l ? l : h("br")));
}

// The editor's text with line breaks where the blocks are.
export function toText(el) {
  return el.innerText.replace(/\u00a0/g, " ").replace(/\n{3,}/g, "\n\n");
}

// The whole text/html part of a mail.
export function document_(el) {
  return `<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>${clean(el.innerHTML)}</body></html>`;
}

export function editor(text, label) {
  const el = h("div.rich", { contenteditable: "true", role: "textbox", "aria-multiline": "true", "aria-label": label,
    spellcheck: "true" }, fromText(text));
  el.addEventListener("paste", (ev) => {
    const html = ev.clipboardData?.getData("text/html");
    if (!html) return;
    ev.preventDefault();
    document.execCommand("insertHTML", false, clean(html));
  });
  return el;
}

const BUTTONS = [["bold", "compose.bold", "B"], ["italic", "compose.italic", "I"], ["underline", "compose.underline", "U"],
  ["insertUnorderedList", "compose.bullets", "•"], ["insertOrderedList", "compose.numbers", "1."], ["createLink", "compose.link", null]];

export function toolbar(el) {
  return h("div.rich-tools", { role: "toolbar", "aria-label": t("compose.formatting") },
    BUTTONS.map(([cmd, key, face]) => h("button.small", { type: "button", "data-cmd": cmd, "aria-label": t(key), title: t(key),
      onmousedown: (ev) => ev.preventDefault(),
      onclick: () => {
        el.focus();
        if (cmd !== "createLink") { document.execCommand(cmd); return; }
        const url = prompt(t("compose.linkPrompt"), "https://");
        if (url && SAFE_URL.test(url.trim())) document.execCommand("createLink", false, url.trim());
      } }, face || t(key))));
}
