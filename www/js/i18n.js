// i18n.js: every user-facing string goes through t(); message catalogues in
// www/i18n/<lang>.json; dates and sizes formatted with Intl in the user's locale.

import * as dates from "./dates.js";

export const LANGS = ["en", "de", "fr", "es", "it", "nl", "pl", "pt", "ru", "ar"];
// Written right to left: the page's dir follows the language, and the
// layout follows dir (style.css uses logical properties throughout).
export const RTL = ["ar", "fa", "he", "ur"];
let cat = {};
let fallback = {};
let locale = "en";
let plural = new Intl.PluralRules("en");

export function pickLanguage(pref) {
  const wanted = pref ? [pref] : navigator.languages || [navigator.language || "en"];
  for (const w of wanted) {
    const base = String(w).toLowerCase().split("-")[0];
    if (LANGS.includes(base)) return base;
  }
  return "en";
}

async function load(lang) {
  const r = await fetch(`i18n/${lang}.json`);
  return r.ok ? r.json() : {};
}

export async function init(pref) {
  const lang = pickLanguage(pref);
  locale = pref || (navigator.languages && navigator.languages[0]) || lang;
  if (pickLanguage(locale) !== lang) locale = lang;
  const [c, f] = await Promise.all([load(lang), lang === "en" ? null : load("en")]);
  cat = c;
  fallback = f || c;
  plural = new Intl.PluralRules(locale);
  document.documentElement.lang = lang;
  document.documentElement.dir = RTL.includes(lang) ? "rtl" : "ltr";
  return lang;
}

// One key's value in every catalogue (words any of the languages may
// use), the catalogues fetched once.
const every = {};
export async function fromAll(key) {
  const cats = await Promise.all(LANGS.map((l) => every[l] || (every[l] = load(l).catch(() => ({})))));
  return cats.map((c) => c[key]).filter(Boolean);
}

// t("key", {n: 3}) — a key with .one/.other variants is chosen by n.
export const t = (key, vars = {}) => lookup(cat, fallback, plural, key, vars);

// A t() over catalogues given (the service worker's: it has no page to init).
export function translator(c, f, loc) {
  const rules = new Intl.PluralRules(loc);
  return (key, vars = {}) => lookup(c, f || c, rules, key, vars);
}

function lookup(c, f, rules, key, vars) {
  let s;
  if (typeof vars.n === "number") {
    const k = `${key}.${rules.select(vars.n)}`;
    s = c[k] ?? c[`${key}.other`] ?? f[k] ?? f[`${key}.other`];
  }
  s = s ?? c[key] ?? f[key] ?? key;
  return s.replace(/\{(\w+)\}/g, (m, v) => (v in vars ? String(vars[v]) : m));
}

// Fill [data-i18n], [data-i18n-label] (aria-label), [data-i18n-placeholder], [data-i18n-title].
export function translate(root = document) {
  for (const el of root.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
  for (const el of root.querySelectorAll("[data-i18n-label]")) el.setAttribute("aria-label", t(el.dataset.i18nLabel));
  for (const el of root.querySelectorAll("[data-i18n-title]")) el.title = t(el.dataset.i18nTitle);
  for (const el of root.querySelectorAll("[data-i18n-placeholder]")) el.placeholder = t(el.dataset.i18nPlaceholder);
}

// The list's short date and the reader's long one, in the locale in use.
export const shortDate = (iso) => dates.shortDate(locale, iso);
export const longDate = (iso) => dates.longDate(locale, iso);
export const dayDate = (day) => dates.dayDate(locale, day);

export function size(bytes) {
  const units = ["byte", "kilobyte", "megabyte", "gigabyte"];
  let i = 0;
  let v = bytes;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return new Intl.NumberFormat(locale, { style: "unit", unit: units[i], unitDisplay: "short",
    maximumFractionDigits: i ? 1 : 0 }).format(v);
}
export const number = (n) => new Intl.NumberFormat(locale).format(n);
// An address list as people write it (Name <email>, ...): shown by the
// reader, edited in the composer's fields.
export const addresses = (list) => (list || []).map((a) => (a.name ? `${a.name} <${a.email}>` : a.email)).join(", ");
export const getLocale = () => locale;
