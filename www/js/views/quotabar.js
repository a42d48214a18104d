// views/quotabar.js: the mail storage the account uses of its quota, as a
// meter under the folders (hidden where the server has no JMAP Quota).
import { t, size } from "../i18n.js";
import { share, level } from "../quota.js";

// el: the #quota block (its .bar is the meter, its .text the words).
export function paint(el, q) {
  el.hidden = !q;
  if (!q) return;
  const bar = el.querySelector(".bar");
  const words = t("quota.used", { used: size(q.used), limit: size(q.hardLimit) });
  bar.setAttribute("aria-valuemax", String(q.hardLimit));
  bar.setAttribute("aria-valuenow", String(Math.min(q.used, q.hardLimit)));
  bar.setAttribute("aria-valuetext", words);
  bar.style.setProperty("--share", String(share(q)));
  el.dataset.level = level(q);
  el.querySelector(".text").textContent = words;
}
