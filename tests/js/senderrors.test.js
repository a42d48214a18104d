// Refusals as sentences (www/js/senderrors.js): node --test, no browser.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { describe, refusedAddresses } from "../../www/js/senderrors.js";

const cat = (lang) => JSON.parse(readFileSync(new URL(`../../www/i18n/${lang}.json`, import.meta.url), "utf8"));
const fmt = { size: (n) => `${n / 1048576} MiB`, list: (a) => a.join(" and "), from: "alice@example.test" };

// Every refusal the RFC names (and what Cyrus 3.6.1 answers), with what
// the sentence must name.
const CASES = [
  [{ where: "submission", type: "invalidRecipients", invalidRecipients: ["nobody@example.test"] }, "send.invalidRecipients", { n: 1, addresses: "nobody@example.test" }],
  [{ where: "submission", type: "invalidRecipients", invalidRecipients: ["a@x.test", "b@x.test"] }, "send.invalidRecipients", { n: 2, addresses: "a@x.test and b@x.test" }],
  [{ where: "submission", type: "invalidRecipients" }, "send.invalidRecipientsNone", {}],
  [{ where: "submission", type: "noRecipients" }, "send.noRecipients", {}],
  [{ where: "submission", type: "invalidProperties", properties: ["envelope/rcptTo"] }, "send.noRecipients", {}],
  [{ where: "submission", type: "tooLarge", maxSize: 26214400 }, "send.tooLargeMax", { max: "25 MiB" }],
  [{ where: "email", type: "tooLarge" }, "send.tooLarge", {}],
  [{ where: "submission", type: "tooManyRecipients", maxRecipients: 50 }, "send.tooManyRecipients", { n: 50 }],
  [{ where: "submission", type: "tooManyRecipients" }, "send.tooManyRecipientsNoMax", {}],
  [{ where: "submission", type: "forbiddenFrom" }, "send.forbiddenFrom", { from: "alice@example.test" }],
  [{ where: "submission", type: "forbiddenMailFrom" }, "send.forbiddenMailFrom", { from: "alice@example.test" }],
  [{ where: "submission", type: "forbiddenToSend" }, "send.forbiddenToSend", {}],
  [{ where: "submission", type: "forbiddenToSend", description: "suspended" }, "send.forbiddenToSendWhy", { reason: "suspended" }],
  [{ where: "email", type: "overQuota" }, "send.overQuota", {}],
  [{ where: "submission", type: "overQuota" }, "send.sendQuota", {}],
  [{ where: "submission", type: "rateLimit" }, "send.rateLimit", {}],
  [{ where: "submission", type: "invalidEmail", properties: ["from"] }, "send.invalidEmail", { properties: "from" }],
  [{ where: "email", type: "invalidProperties", properties: ["to", "cc"] }, "send.invalidProperties", { properties: "to, cc" }],
  [{ where: "email", type: "blobNotFound", notFound: ["B1"] }, "send.blobNotFound", {}],
  [{ where: "email", type: "forbidden" }, "send.forbidden", {}],
  [{ where: "email", type: "tooManyKeywords" }, "send.refused", { type: "tooManyKeywords" }],
  [{ type: "serverFail" }, "send.serverFail", {}],
  [{ type: "accountReadOnly" }, "send.readOnly", {}],
  [{ type: "unknownMethod" }, "send.unsupported", {}],
  [{ type: "somethingNew" }, "send.unknown", { type: "somethingNew" }],
  [{ type: "somethingNew", description: "why" }, "send.unknownWhy", { type: "somethingNew", reason: "why" }],
  [{ code: "network", status: 0 }, "send.network", {}],
  [{ code: "rate_limited", status: 429, retryAfter: 30 }, "send.rateLimited", { n: 30 }],
  [{ code: "too_large", status: 413 }, "send.requestTooLarge", {}],
  [{ code: "upstream_timeout", status: 504 }, "send.upstream", {}],
  [{ code: "unauthenticated", status: 401 }, "send.signedOut", {}],
  [{ code: "http_418", status: 418 }, "send.unknown", { type: "http_418" }],
];

test("every refusal becomes its sentence, naming the address or the limit", () => {
  for (const [failure, key, vars] of CASES) assert.deepEqual(describe(failure, fmt), { key, vars }, JSON.stringify(failure));
});

test("every sentence is in every catalogue, with the values it names", () => {
  const cats = { en: cat("en"), de: cat("de"), fr: cat("fr") };
  for (const [, key, vars] of CASES) {
    for (const [lang, c] of Object.entries(cats)) {
      const text = c[key] ?? c[`${key}.other`];
      assert.ok(text, `${lang} lacks ${key}`);
      if (typeof vars.n === "number") assert.ok(c[`${key}.one`] && c[`${key}.other`], `${lang}: ${key} has .one and .other`);
      for (const v of Object.keys(vars)) {
        if (v === "n" && !(`${key}.other` in c)) continue;
        assert.ok(text.includes(`{${v}}`), `${lang} ${key} names {${v}}: ${text}`);
      }
    }
  }
});

test("the addresses to mark in the fields", () => {
  assert.deepEqual(refusedAddresses({ type: "invalidRecipients", invalidRecipients: ["x@y.test"] }), ["x@y.test"]);
  assert.deepEqual(refusedAddresses({ type: "tooLarge" }), []);
  assert.deepEqual(refusedAddresses(null), []);
});
