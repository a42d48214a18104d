// settings.js: the account's settings, kept by postern (GET/PUT
// /api/auth/settings) so that every device of the person sees the same.
// localStorage holds only a copy for painting the theme and language
// before the server has answered; the server's answer always wins.
import * as api from "./api.js";

const PATH = "/api/auth/settings";
const CACHE = "postern.settings.cache";
export const DEFAULTS = { theme: "system", density: "comfortable", threads: true, showImages: false,
  compose: "plain", signature: "", language: "", sendDelay: 10, identities: {}, templates: [],
  afterAction: "next", notifyFolders: null };
let values = { ...DEFAULTS };
const listeners = [];

function cache(v) {
  try {
    if (v) localStorage.setItem(CACHE, JSON.stringify(v)); else localStorage.removeItem(CACHE);
  } catch { /* private mode */ }
}

// The cached copy, for the first paint only.
export function load() {
  try { values = { ...DEFAULTS, ...JSON.parse(localStorage.getItem(CACHE) || "{}") }; } catch { values = { ...DEFAULTS }; }
  return values;
}

// The account's settings from the server (after sign-in).
export async function fetch() {
  const before = JSON.stringify(values);
  values = { ...DEFAULTS, ...(await api.get(PATH)) };
  cache(values);
  if (JSON.stringify(values) !== before) for (const fn of listeners) fn(values);
  return values;
}

export const get = (k) => values[k];
export const all = () => ({ ...values });
export function onChange(fn) { listeners.push(fn); }

// Saves changes; resolves to the stored settings, rejects with the
// server's ApiError (the values then go back to what is stored).
export async function save(changes) {
  const old = values;
  values = { ...values, ...changes };
  try {
    values = { ...DEFAULTS, ...(await api.request("PUT", PATH, values)) };
  } catch (e) {
    values = old;
    throw e;
  }
  cache(values);
  return values;
}
export const set = (k, v) => save({ [k]: v });

// Signing out forgets the copy: the next person on this browser is not
// painted with these settings.
export function forget() {
  values = { ...DEFAULTS };
  cache(null);
}

// Theme and density go on <html>, where the style sheet reads them.
export function apply(v = values) {
  const root = document.documentElement;
  if (v.theme === "light" || v.theme === "dark") root.dataset.theme = v.theme; else delete root.dataset.theme;
  root.dataset.density = v.density === "compact" ? "compact" : "comfortable";
}
