// The questions before sending (www/js/sendcheck.js): node --test, no browser.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { questions, mentionsAttachment, ownText, words } from "../../www/js/sendcheck.js";

const all = ["en", "de", "fr"].flatMap((l) => words(JSON.parse(readFileSync(new URL(`../../www/i18n/${l}.json`, import.meta.url), "utf8"))["compose.attachWords"]));

test("each catalogue's words for an attachment", () => {
  for (const text of ["See the attached file.", "The attachment is below", "I enclose the form", "Im Anhang die Liste", "anbei die Rechnung",
    "Ich habe es angehängt.", "Veuillez trouver ci-joint le devis", "en pièce jointe", "Voici les pièces jointes"]) {
    assert.ok(mentionsAttachment(text, all), text);
  }
  for (const text of ["Hello Bob", "reattach later", "The detached house", "Le conjoint de Marie"]) assert.ok(!mentionsAttachment(text, all), text);
});

test("only the user's own words count: not the quote, the signature or a forwarded mail", () => {
  const marker = "---------- Forwarded message ----------";
  assert.equal(ownText("Hi\n> see attached\nBye\n-- \nAttachments welcome", marker), "Hi\nBye");
  assert.deepEqual(questions({ subject: "Re: x", text: "Thanks!\n\n> I attached the file", attachments: 0, words: all }), []);
  assert.deepEqual(questions({ subject: "Fwd: x", text: `FYI\n\n${marker}\nSee attachment`, attachments: 0, words: all, forwardedMarker: marker }), []);
});

test("empty subject, and attached without an attachment", () => {
  assert.deepEqual(questions({ subject: " ", text: "hello", attachments: 0, words: all }), ["subject"]);
  assert.deepEqual(questions({ subject: "", text: "see attached", attachments: 0, words: all }), ["subject", "attachment"]);
  assert.deepEqual(questions({ subject: "Report", text: "see attached", attachments: 1, words: all }), []);
  assert.deepEqual(questions({ subject: "Report", text: "see attached", attachments: 0, words: all }), ["attachment"]);
});
