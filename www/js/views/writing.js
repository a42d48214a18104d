// views/writing.js: the settings dialog's part about writing: per
// identity the name, reply-to and signature; the seconds a sent mail
// waits for Undo; the saved templates (delete; they are made in the
// composer).
import { h } from "../dom.js";
import { t } from "../i18n.js";
import * as settings from "../settings.js";
import * as identities from "../identities.js";

let kept = [];   // the templates as the dialog shows them

// Fills the dialog's writing part from the settings.
export function paint(root) {
  const list = identities.list();
  root.querySelector(".identities").replaceChildren(...list.map((i) => {
    const f = identities.fields(i.id);
    return h("fieldset.identity", { "data-id": i.id },
      h("legend", {}, i.email),
      h("label", {}, h("span", {}, t("settings.name")), " ", h("input", { name: "identityName", value: f.name, maxlength: "200", autocomplete: "name" })),
      h("label", {}, h("span", {}, t("settings.replyTo")), " ", h("input", { name: "identityReplyTo", value: f.replyTo, autocomplete: "off",
        placeholder: t("settings.replyToHint") })),
      h("label", {}, h("span", {}, t("settings.signature")), h("textarea", { name: "identitySignature", rows: 3, maxlength: "4000" }, f.signature)));
  }));
  root.querySelector("[name=sendDelay]").value = String(settings.get("sendDelay") ?? 10);
  kept = [...(settings.get("templates") || [])];
  paintTemplates(root);
}

function paintTemplates(root) {
  const box = root.querySelector(".templates");
  box.replaceChildren(kept.length ? h("ul", {}, kept.map((tp, i) => h("li", {}, h("span", {}, tp.name), " ",
    h("button.small", { type: "button", "aria-label": t("settings.deleteTemplate", { name: tp.name }),
      onclick: () => { kept.splice(i, 1); paintTemplates(root); } }, t("settings.delete")))))
    : h("p.hint", {}, t("settings.noTemplates")));
}

// The settings changes the writing part asks for: {changes} or {error}.
// Identities the server can keep go there (Identity/set) first.
export async function read(root) {
  const delay = Number(root.querySelector("[name=sendDelay]").value);
  if (!Number.isInteger(delay) || delay < 0 || delay > 30) return { error: t("settings.delayRange") };
  const out = { sendDelay: delay, templates: kept };
  let ids = { ...(settings.get("identities") || {}) };
  for (const fs of root.querySelectorAll("fieldset.identity")) {
    const f = { name: fs.elements.identityName.value.trim(), replyTo: fs.elements.identityReplyTo.value,
      signature: fs.elements.identitySignature.value };
    const bad = identities.invalidReplyTo(f.replyTo);
    if (bad.length) return { error: t("settings.replyToInvalid", { address: bad.join(", ") }) };
    const was = identities.fields(fs.dataset.id);
    if (was.name === f.name && was.replyTo === f.replyTo.trim() && was.signature === f.signature) continue;
    ids = await identities.save(fs.dataset.id, f, ids);
  }
  return { changes: { ...out, identities: ids } };
}
