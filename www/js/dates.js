// dates.js: pure. Dates as the list and the reader show them, with Intl in
// a locale. The formatters are kept per locale: one kept by kind alone
// went on writing the old language after a language change.
const made = new Map();

function fmt(locale, kind, opts) {
  const key = `${locale}\u0000${kind}`;
  if (!made.has(key)) made.set(key, new Intl.DateTimeFormat(locale, opts));
  return made.get(key);
}

// The list's short date: the time today, day and month this year, else the full date.
export function shortDate(locale, iso, now = new Date()) {
  const d = new Date(iso);
  if (d.toDateString() === now.toDateString()) return fmt(locale, "time", { hour: "numeric", minute: "2-digit" }).format(d);
  if (d.getFullYear() === now.getFullYear()) return fmt(locale, "dm", { day: "numeric", month: "short" }).format(d);
  return fmt(locale, "dmy", { dateStyle: "short" }).format(d);
}

export const longDate = (locale, iso) => fmt(locale, "long", { dateStyle: "full", timeStyle: "short" }).format(new Date(iso));

// A day without its time ("24 December 2026"): day is "YYYY-MM-DD", read
// in the user's own time zone (noon: no zone moves it to another day).
export const dayDate = (locale, day) => fmt(locale, "day", { dateStyle: "long" }).format(new Date(`${day}T12:00:00`));
