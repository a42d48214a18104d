// Dates in the language in use (www/js/dates.js): after a language change
// the same date must come out in the new one (issue 17: the formatters
// were kept by kind alone, so dates stayed in the old language).
import { test } from "node:test";
import assert from "node:assert/strict";
import { shortDate, longDate } from "../../www/js/dates.js";

const now = new Date("2026-12-03T15:00:00Z");

test("a date this year, in English then German then English", () => {
  const iso = "2026-03-05T10:00:00Z";
  const en = shortDate("en", iso, now);
  const de = shortDate("de", iso, now);
  assert.match(en, /Mar/);
  assert.match(de, /März/);
  assert.equal(shortDate("en", iso, now), en);
});

test("the reader's long date follows the language too", () => {
  const iso = "2026-03-05T10:00:00Z";
  assert.match(longDate("en", iso), /Thursday/);
  assert.match(longDate("fr", iso), /jeudi/);
  assert.match(longDate("de", iso), /Donnerstag/);
});

test("today shows the time, another year the full date", () => {
  assert.doesNotMatch(shortDate("en", now.toISOString(), now), /Dec/);
  assert.match(shortDate("de", "2024-01-31T10:00:00Z", now), /31\.01\.24/);
});
