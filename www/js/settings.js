// settings.js: the user's settings. postern has no settings endpoint yet, so
// they live in localStorage for now; this module is the seam: when the
// server keeps them, only load()/save() change (see docs/DECISIONS.md).

const KEY = "postern.settings";
const DEFAULTS = { threads: true, language: "", showImages: false };
let values = { ...DEFAULTS };

export function load() {
  try { values = { ...DEFAULTS, ...JSON.parse(localStorage.getItem(KEY) || "{}") }; } catch { values = { ...DEFAULTS }; }
  return values;
}
export const get = (k) => values[k];
export function set(k, v) {
  values[k] = v;
  try { localStorage.setItem(KEY, JSON.stringify(values)); } catch { /* private mode */ }
}
