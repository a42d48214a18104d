// Unit tests of www/js/quotes.js: where the quoted part of a reply
// begins, in plain text and in HTML (a small stand-in for the DOM).
import { test } from "node:test";
import assert from "node:assert/strict";
import { splitText, htmlFold, cutFrom, quoteKind } from "../../www/js/quotes.js";

test("a trailing > quote with its attribution is folded", () => {
  const r = splitText("Thanks, fixed.\n\nAlice\n\nOn Mon, 1 Dec 2026 at 09:12, Bob Baker wrote:\n> Hello\n> there\n");
  assert.equal(r.shown, "Thanks, fixed.\n\nAlice");
  assert.match(r.folded, /^On Mon.*wrote:\n> Hello\n> there/);
});

test("German and French attributions, and Gmail's wrapped one", () => {
  assert.match(splitText("Ja.\n\nAm 1. Dez. 2026 um 09:12 schrieb Bob <b@x>:\n> Hallo\n").folded, /^Am 1\./);
  assert.match(splitText("Oui.\n\nLe lun. 1 déc. 2026 à 09:12, Bob <b@x> a écrit :\n> Salut\n").folded, /^Le lun/);
  assert.match(splitText("Yes.\n\nOn Mon, Dec 1, 2026 at 9:12 AM Bob Baker <bob@example.test>\nwrote:\n> Hi\n").folded, /^On Mon/);
});

test("quotes between the answers of an inline reply stay shown", () => {
  const text = "> Can you come?\nYes.\n> At noon?\nBetter at one.\n";
  assert.deepEqual(splitText(text), { shown: text, folded: "" });
});

test("a signature after the quote goes with it; nothing is folded when only the quote is there", () => {
  assert.equal(splitText("Hi\n> old\n> text\n\n-- \nBob\n").shown, "Hi");
  const only = "> just a quote\n> nothing else\n";
  assert.equal(splitText(only).folded, "");
  assert.equal(splitText("").folded, "");
  assert.equal(splitText("no quote at all").shown, "no quote at all");
});

test("Outlook's plain dividers fold everything after them", () => {
  const r = splitText("See below.\n\n-----Original Message-----\nFrom: Bob\nSent: Monday\n\nHello\n");
  assert.equal(r.shown, "See below.");
  assert.match(r.folded, /^-----Original Message-----/);
  assert.match(splitText("Siehe unten.\n\n-----Ursprüngliche Nachricht-----\nVon: Bob\n").folded, /Ursprüngliche/);
  assert.match(splitText("OK\n________________________________\nFrom: Bob\nSent: x\n").folded, /^_+\nFrom/);
  assert.equal(splitText("a line\n____________________________\nnot a header\n").folded, "");
});

// -- HTML: a small stand-in for the DOM ----------------------------------------------
function el(tagName, attrs = {}, ...kids) {
  const n = { nodeType: 1, tagName: tagName.toUpperCase(), attrs, childNodes: [], parentNode: null,
    getAttribute: (a) => (a in attrs ? attrs[a] : null),
    get textContent() { return this.childNodes.map((c) => c.textContent).join(""); },
    removeChild(c) { this.childNodes.splice(this.childNodes.indexOf(c), 1); c.parentNode = null; },
    querySelector(sel) { return find(this, (x) => x.nodeType === 1 && x.tagName.toLowerCase() === sel); } };
  for (const k of kids) { const c = typeof k === "string" ? { nodeType: 3, textContent: k } : k; c.parentNode = n; n.childNodes.push(c); }
  return n;
}
function find(n, f) { for (const c of n.childNodes || []) { if (f(c)) return c; const r = find(c, f); if (r) return r; } return null; }

test("Gmail: the gmail_quote block (its attribution inside) is the fold", () => {
  const q = el("div", { class: "gmail_quote" }, el("div", { class: "gmail_attr" }, "On Mon, Bob wrote:"), el("blockquote", { class: "gmail_quote" }, "old"));
  const body = el("body", {}, el("div", { dir: "ltr" }, "New text"), "\n", q);
  assert.equal(htmlFold(body), q);
  assert.equal(cutFrom(q, body), true);
  assert.equal(body.textContent.trim(), "New text");
});

test("Apple and Thunderbird: blockquote type=cite with the line before it", () => {
  const prefix = el("div", { class: "moz-cite-prefix" }, "On 01/12/2026 09:12, Bob wrote:");
  const body = el("body", {}, el("p", {}, "Answer"), prefix, el("blockquote", { type: "cite" }, "old"));
  assert.equal(htmlFold(body), prefix);
  const attribution = el("div", {}, "Am 01.12.2026 um 09:12 schrieb Bob:");
  const b2 = el("body", {}, el("div", {}, "Antwort"), attribution, el("blockquote", { type: "cite" }, "alt"));
  assert.equal(htmlFold(b2), attribution);
});

test("Outlook: divRplyFwdMsg (with its <hr>) and the border-top header fold the rest", () => {
  const hr = el("hr", {});
  const body = el("body", {}, el("div", {}, "Reply"), hr, el("div", { id: "divRplyFwdMsg" }, "From: Bob"), el("div", {}, "old body"));
  assert.equal(htmlFold(body), hr);
  cutFrom(hr, body);
  assert.equal(body.textContent, "Reply");
  const hdr = el("div", { "data-pstyle": "border:none;border-top:solid #E1E1E1 1.0pt;padding:3.0pt 0cm 0cm 0cm" }, el("p", {}, "From: Bob Sent: Monday"));
  const b2 = el("body", {}, el("div", { class: "WordSection1" }, el("p", {}, "Reply"), el("div", {}, hdr), el("p", {}, "old")));
  assert.equal(quoteKind(hdr), "rest");
  assert.equal(htmlFold(b2), hdr);
  cutFrom(hdr, b2);
  assert.equal(b2.textContent, "Reply");
});

test("HTML: a quote with the writer's text after it stays; a plain blockquote folds only at the end", () => {
  const inline = el("body", {}, el("blockquote", { type: "cite" }, "question?"), el("p", {}, "answer"));
  assert.equal(htmlFold(inline), null);
  const cite = el("body", {}, el("p", {}, "As Knuth said:"), el("blockquote", {}, "premature optimisation"), el("p", {}, "so there"));
  assert.equal(htmlFold(cite), null);
  const bq = el("blockquote", {}, "old");
  assert.equal(htmlFold(el("body", {}, el("p", {}, "new"), bq)), bq);
  assert.equal(htmlFold(el("body", {}, el("p", {}, "no quote"))), null);
});

test("HTML: nothing of the writer's own left means no fold", () => {
  const q = el("blockquote", { type: "cite" }, "only old text");
  const body = el("body", {}, q);
  assert.equal(htmlFold(body), q);
  assert.equal(cutFrom(q, body), false);
});
