// sieve.js: postern's filters and vacation as one Sieve script (RFC 5228,
// with fileinto, mailbox, copy, imap4flags, vacation, date, relational),
// and such a script read back into the model, keeping whatever a person
// wrote by hand verbatim. Pure: no DOM, no network (tests/js/).
//
// The script postern writes:
//   require [...];                       (postern's needs and model.requires)
//   <before: hand-written, verbatim>     (what came before postern's block)
//   # postern: begin v1 (...)            (v1: the block's format, see FORMATS)
//   # postern: vacation {...}            (the vacation's model as JSON)
//   <its code>                           (none when it is off or not whole)
//   # postern: rule {...}                (each rule's model as JSON)
//   <its code>                           (none when it is off or not whole)
//   # postern: end
//   <rest: hand-written, verbatim>       (what came after postern's block)
// The model: {rules, vacation, before, rest, requires}. Hand-written Sieve
// keeps its place around the block, so what ran before postern's rules
// still does. A script without the block (another client's, or one typed
// in the Sieve editor) is all before: its rules run first, postern's new
// rules after them. The require commands at the top go to requires.
// Reading regenerates each marker's code from its JSON: where the script's
// code differs (edited by hand), the marker is dropped and the code leaves
// the block for rest (after the block, where it is written next time), as
// does any other hand-written text between the markers.

export const FIELDS = ["from", "to", "subject", "header", "size"];
const TEXT_OPS = ["contains", "is", "matches"];
export const OPS = { from: TEXT_OPS, to: TEXT_OPS, subject: TEXT_OPS, header: TEXT_OPS, size: ["over"] };
export const ACTIONS = ["move", "copy", "read", "flag", "forward", "discard", "stop"];

// The block's format version, in its begin marker (see FORMATS).
const VERSION = 1;
const BEGIN = `# postern: begin v${VERSION} (rules made in postern's filter screen)`;
const RULE = "# postern: rule ";
const VACATION = "# postern: vacation ";
const END = "# postern: end";

// --- The model ---------------------------------------------------------------

const str = (v) => (typeof v === "string" ? v : v === undefined || v === null ? "" : String(v));
const obj = (v) => (v && typeof v === "object" && !Array.isArray(v) ? v : {});
const list = (v) => (Array.isArray(v) ? v : []);

export function blankRule() {
  return { name: "", on: true, all: true, when: [{ field: "from", op: "contains", value: "" }],
    then: [{ act: "move", folder: "" }] };
}

export function blankVacation() {
  return { on: false, from: "", until: "", subject: "", text: "", addresses: [], days: 7 };
}

// A rule in its one shape (the keys in this order: the JSON of a marker).
function normRule(r) {
  r = obj(r);
  return {
    name: str(r.name),
    on: r.on !== false,
    all: r.all !== false,
    when: list(r.when).map((c) => {
      c = obj(c);
      const field = str(c.field);
      const out = { field };
      if (field === "header") out.header = str(c.header);
      out.op = str(c.op);
      out.value = str(c.value);
      return out;
    }),
    then: list(r.then).map((a) => {
      a = obj(a);
      const act = str(a.act);
      const out = { act };
      if (act === "move" || act === "copy") out.folder = str(a.folder);
      if (act === "forward") out.to = str(a.to);
      return out;
    }),
  };
}

// days as given (a number; 7 when missing, 0 when not a number), for
// checkVacation() to judge: a vacation it refuses is written without code.
function normVacation(v) {
  v = obj(v);
  const n = v.days === undefined || v.days === null || v.days === "" ? 7 : Number(v.days);
  return {
    on: v.on === true,
    from: str(v.from),
    until: str(v.until),
    subject: str(v.subject),
    text: str(v.text),
    addresses: list(v.addresses).map(str),
    days: Number.isFinite(n) ? n : 0,
  };
}

// An address Cyrus takes (its parser refuses "a..b@x", "a@x_y", "a@x."):
// dot-atoms of the usual characters, non-ASCII allowed (SMTPUTF8).
const ATOM = "[A-Za-z0-9%+'_\\-\\u0080-\\uffff]+";
const LABEL = "[A-Za-z0-9\\-\\u0080-\\uffff]+";
const ADDRESS = new RegExp(`^${ATOM}(\\.${ATOM})*@${LABEL}(\\.${LABEL})*$`);
// A header's field name (RFC 5322 3.6.8: printable ASCII but the colon).
const HEADER = /^[!-9;-~]+$/;
const SIZE = /^(\d{1,10})([KMG]?)$/i;
const UNIT = { "": 1, K: 1024, M: 1024 * 1024, G: 1024 * 1024 * 1024 };
// Cyrus refuses a number (times its unit) over 2^31 - 1.
const sizeOk = (v) => { const m = SIZE.exec(v); return !!m && Number(m[1]) * UNIT[m[2].toUpperCase()] <= 2147483647; };
const DATE = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;
// A real day (no 2025-02-30) as YYYY-MM-DD.
function dateOk(d) {
  if (!DATE.test(d)) return false;
  const [y, m, day] = d.split("-").map(Number);
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  return day <= [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1];
}

// null, or the catalogue key of what keeps the rule from being saved.
export function check(rule) {
  const r = normRule(rule);
  if (r.when.length === 0) return "sieve.needCondition";
  for (const c of r.when) {
    if (!FIELDS.includes(c.field) || !OPS[c.field].includes(c.op)) return "sieve.needCondition";
    if (c.field === "header" && !HEADER.test(c.header.trim())) return "sieve.needHeader";
    if (c.field === "size") { if (!sizeOk(c.value.trim())) return "sieve.badSize"; }
    else if (c.value.trim() === "") return "sieve.needCondition";
  }
  if (r.then.length === 0 || r.then.some((a) => !ACTIONS.includes(a.act))) return "sieve.needAction";
  for (const a of r.then) {
    if ((a.act === "move" || a.act === "copy") && !a.folder.trim()) return "sieve.needFolder";
    if (a.act === "forward" && !ADDRESS.test(a.to.trim())) return "sieve.needAddress";
  }
  return null;
}

// null, or the catalogue key of what keeps the vacation from being saved:
// a date that is not a day, from after until, no text while on, days not
// a whole number from 1 to 365. Empty dates are fine (no limit).
export function checkVacation(vacation) {
  const v = normVacation(vacation);
  if ((v.from && !dateOk(v.from)) || (v.until && !dateOk(v.until))) return "vacation.badDate";
  if (v.from && v.until && v.from > v.until) return "vacation.badRange";
  if (v.on && !v.text.trim()) return "vacation.needText";
  if (!Number.isInteger(v.days) || v.days < 1 || v.days > 365) return "vacation.badDays";
  return null;
}

// "Filter messages like this": mail from this sender, to a folder still
// to choose.
export function likeThis(email) {
  const from = obj(list(obj(email).from)[0]);
  const address = str(from.email).trim();
  return { name: str(from.name).trim() || address, on: true, all: true,
    when: [{ field: "from", op: "is", value: address }], then: [{ act: "move", folder: "" }] };
}

// --- Writing -----------------------------------------------------------------

// A quoted string (RFC 5228 2.4.2): \ and " escaped; line breaks as LF,
// other control characters dropped; on one line unless multi; a lone
// surrogate (not UTF-8) as U+FFFD.
function q(s, multi) {
  // A lone surrogate as UTF-8 would make the text differ from the JSON's.
  let v = str(s).replace(/\r\n?/g, "\n").replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd");
  v = multi ? v.replace(/[\0-\x08\x0b-\x1f\x7f]/g, "") : v.replace(/[\0-\x1f\x7f]+/g, " ");
  return '"' + v.replace(/[\\"]/g, "\\$&") + '"';
}
const qlist = (a) => "[" + a.map((s) => q(s)).join(", ") + "]";

function test(c) {
  const how = ":" + c.op;
  if (c.field === "from") return `address :all ${how} "from" ${q(c.value)}`;
  if (c.field === "to") return `address :all ${how} ["to", "cc"] ${q(c.value)}`;
  if (c.field === "subject") return `header ${how} "subject" ${q(c.value)}`;
  if (c.field === "header") return `header ${how} ${q(c.header.trim())} ${q(c.value)}`;
  const [, n, unit] = SIZE.exec(c.value.trim());
  return `size :over ${Number(n)}${unit.toUpperCase()}`;
}

const ORDER = ["read", "flag", "move", "copy", "forward", "discard", "stop"];
function action(a) {
  switch (a.act) {
    case "read": return 'addflag "\\\\Seen";';
    case "flag": return 'addflag "\\\\Flagged";';
    case "move": return `fileinto :create ${q(a.folder.trim())};`;
    case "copy": return `fileinto :copy :create ${q(a.folder.trim())};`;
    case "forward": return `redirect :copy ${q(a.to.trim())};`;
    case "discard": return "discard;";
    default: return "stop;";
  }
}

// A rule's code ("" when it is off or not whole) and the extensions it needs.
function ruleCode(r) {
  if (!r.on || check(r) !== null) return { code: "", needs: [] };
  const tests = r.when.map(test);
  const cond = tests.length === 1 ? tests[0] : `${r.all ? "allof" : "anyof"}(${tests.join(", ")})`;
  const acts = ORDER.flatMap((act) => r.then.filter((a) => a.act === act)).map(action);
  const needs = [];
  for (const a of r.then) {
    if (a.act === "read" || a.act === "flag") needs.push("imap4flags");
    if (a.act === "move" || a.act === "copy") needs.push("fileinto", "mailbox");
    if (a.act === "copy" || a.act === "forward") needs.push("copy");
  }
  return { code: `if ${cond} {\n${acts.map((a) => "  " + a + "\n").join("")}}\n`, needs };
}

// The vacation's code ("" when it is off or not whole) and its extensions.
function vacationCode(v) {
  if (!v.on || checkVacation(v) !== null) return { code: "", needs: [] };
  const addresses = v.addresses.map((a) => a.trim()).filter((a) => ADDRESS.test(a));
  let act = `vacation :days ${v.days}`;
  if (v.subject.trim()) act += ` :subject ${q(v.subject)}`;
  if (addresses.length) act += ` :addresses ${qlist(addresses)}`;
  act += ` ${q(v.text, true)};`;
  const dates = [];
  if (v.from) dates.push(`currentdate :value "ge" "date" ${q(v.from)}`);
  if (v.until) dates.push(`currentdate :value "le" "date" ${q(v.until)}`);
  if (!dates.length) return { code: act + "\n", needs: ["vacation"] };
  const cond = dates.length === 1 ? dates[0] : `allof(${dates.join(", ")})`;
  return { code: `if ${cond} {\n  ${act}\n}\n`, needs: ["vacation", "date", "relational"] };
}

// What each format version writes for a part: its code and needs. Reading
// compares a part's code with what its version's generator makes of its
// JSON, so once scripts are out there the code a model gives must not
// change under the same version, or every user's rules would read as
// hand-written after an upgrade. A change to the code written (ruleCode,
// vacationCode, test, action, q, or what check/checkVacation let through)
// bumps VERSION and keeps the old generators here under the old number:
// an old block then reads as postern's and is written in the new version
// on the next save. A begin marker of a version not here (a later one) is
// not postern's block: it stays as hand-written text. A begin marker
// without a version is read as v1 (written before versions were; where
// such a script has a part v1 writes without code, a vacation on without
// text or with a date that is not a day, a condition of white space alone,
// that part's old code reads as hand-written and goes to rest).
const FORMATS = {
  1: { rule: ruleCode, vacation: vacationCode },
};

const partText = (marker, json, code) => marker + JSON.stringify(json) + "\n" + code;

// The extensions postern's part may need, in the order they are written.
const KNOWN = ["copy", "date", "fileinto", "imap4flags", "mailbox", "relational", "vacation"];

export function write(model) {
  const m = obj(model);
  const rules = list(m.rules).map(normRule);
  const vacation = m.vacation ? normVacation(m.vacation) : null;
  const needs = new Set();
  let block = BEGIN + "\n";
  if (vacation) {
    const { code, needs: n } = vacationCode(vacation);
    n.forEach((x) => needs.add(x));
    block += partText(VACATION, vacation, code);
  }
  for (const r of rules) {
    const { code, needs: n } = ruleCode(r);
    n.forEach((x) => needs.add(x));
    block += partText(RULE, r, code);
  }
  block += END + "\n";
  // require commands at the top of before and of rest join the one at the
  // top (a require anywhere else is an error).
  const names = [];
  const hoist = (text) => {
    let t = str(text).replace(/\r\n/g, "\n");
    const top = requiresAtTop(t);
    for (const [a, b] of top.cut.reverse()) t = t.slice(0, a) + t.slice(b);
    names.push(...top.names);
    return t;
  };
  let before = hoist(m.before);
  const rest = hoist(m.rest);
  // The begin marker on a line of its own.
  if (before && !before.endsWith("\n")) before += "\n";
  const requires = KNOWN.filter((n) => needs.has(n));
  for (const n of [...list(m.requires).map(str), ...names]) if (n && !requires.includes(n)) requires.push(n);
  return (requires.length ? `require ${qlist(requires)};\n` : "") + before + block + rest;
}

// --- Reading -----------------------------------------------------------------

// Where each line-starting "#" comment outside strings, multi-line text and
// bracket comments begins and ends (after its line break): [{start, end}].
function lineComments(s) {
  const out = [];
  let i = 0;
  const n = s.length;
  while (i < n) {
    const c = s[i];
    if (c === '"') {
      i++;
      while (i < n && s[i] !== '"') i += s[i] === "\\" ? 2 : 1;
      i++;
    } else if (c === "#") {
      const start = i;
      const nl = s.indexOf("\n", i);
      i = nl < 0 ? n : nl + 1;
      if (start === 0 || s[start - 1] === "\n") out.push({ start, end: i });
    } else if (c === "/" && s[i + 1] === "*") {
      const e = s.indexOf("*/", i + 2);
      i = e < 0 ? n : e + 2;
    } else if ((c === "t" || c === "T") && /^text:/i.test(s.slice(i, i + 5)) && !/[A-Za-z0-9_]/.test(s[i - 1] || "")) {
      // text: ... up to a line holding a lone "."
      const nl = s.indexOf("\n", i);
      if (nl < 0) return out;
      const e = s.slice(nl).search(/\n\.\n|\n\.$/);
      i = e < 0 ? n : nl + e + 3;
    } else i++;
  }
  return out;
}

// The require commands at the top (with comments and white space between
// them): the extensions and the ranges of text they take.
function requiresAtTop(s) {
  const names = [], cut = [];
  // The match of a sticky pattern at position p, or null.
  const at = (re, p) => { re.lastIndex = p; return re.exec(s); };
  const WS = /[ \t\n]*/y, REQUIRE = /require[ \t\n]*/iy, STRING = /"((?:[^"\\]|\\[\s\S])*)"[ \t\n]*/y;
  const LINE_END = /[ \t]*\n/y;
  let i = 0;
  for (;;) {
    const start = i + at(WS, i)[0].length;
    if (s[start] === "#") {
      const nl = s.indexOf("\n", start);
      if (nl < 0) break;
      i = nl + 1;
      continue;
    }
    if (s.startsWith("/*", start)) {
      const e = s.indexOf("*/", start + 2);
      if (e < 0) break;
      i = e + 2;
      continue;
    }
    const m = at(REQUIRE, start);
    if (!m) break;
    let j = start + m[0].length;
    const got = [];
    const one = () => {
      const r = at(STRING, j);
      if (!r) return false;
      got.push(r[1].replace(/\\([\s\S])/g, "$1"));
      j += r[0].length;
      return true;
    };
    const skip = () => { j += 1 + at(WS, j + 1)[0].length; };
    if (s[j] === "[") {
      skip();
      let ok = one();
      while (ok && s[j] === ",") { skip(); ok = one(); }
      if (!ok || s[j] !== "]") break;
      skip();
    } else if (!one()) break;
    if (s[j] !== ";") break;
    j++;
    // The rest of its line when nothing else is on it.
    const tail = at(LINE_END, j);
    if (tail) j += tail[0].length;
    names.push(...got);
    cut.push([start, j]);
    i = j;
  }
  return { names, cut };
}

// Words that show the hand-written part uses an extension postern also
// needs (a word too many only keeps a require that does no harm).
const USES = {
  copy: /:copy\b/i,
  date: /\b(current)?date\b/i,
  fileinto: /\bfileinto\b/i,
  imap4flags: /\b(addflag|setflag|removeflag|hasflag)\b|:flags\b/i,
  mailbox: /:create\b|\bmailboxexists\b/i,
  relational: /:(value|count)\b/i,
  vacation: /\bvacation\b/i,
};

// Whether an else or elsif follows at i (past white space and comments):
// the code before it is not a whole rule then.
function elseAt(s, i) {
  for (;;) {
    while (i < s.length && /\s/.test(s[i])) i++;
    if (s[i] === "#") {
      const nl = s.indexOf("\n", i);
      if (nl < 0) return false;
      i = nl + 1;
    } else if (s.startsWith("/*", i)) {
      const e = s.indexOf("*/", i + 2);
      if (e < 0) return false;
      i = e + 2;
    } else return /^els(e|if)\b/i.test(s.slice(i, i + 7));
  }
}

// The format version of a begin marker's line: 0 when it is none; 1 when
// it gives none (as written before versions were).
function beginVersion(l) {
  const m = /^# postern: begin(?:\s+(\S+))?(?:\s|$)/.exec(l);
  if (!m) return 0;
  const v = /^v(\d+)$/.exec(m[1] || "");
  return v ? Number(v[1]) : 1;
}

const parse = (json) => { try { return JSON.parse(json); } catch { return undefined; } };

export function read(script) {
  const model = { rules: [], vacation: null, before: "", rest: "", requires: [] };
  try {
    const s = str(script).replace(/\r\n/g, "\n");
    const { names, cut } = requiresAtTop(s);
    const comments = lineComments(s).filter((c) => c.start >= (cut.length ? cut[cut.length - 1][1] : 0));
    const line = (c) => s.slice(c.start, c.end).replace(/\n$/, "");
    const isMarker = (c) => { const l = line(c); return l.startsWith(RULE) || l.startsWith(VACATION) || l === END; };
    // The first begin marker of a version this code reads (a later one's
    // block stays hand-written text).
    const begin = comments.find((c) => FORMATS[beginVersion(line(c))]);
    const needs = new Set();
    if (begin) {
      const format = FORMATS[beginVersion(line(begin))];
      cut.push([begin.start, begin.end]);
      let at = begin.end;
      // The next marker at or after position p (or the end of the text).
      const markers = comments.filter((c) => c.start > begin.start && isMarker(c));
      let k = 0;                                  // positions only grow
      const next = (p) => { while (k < markers.length && markers[k].start < p) k++; return markers[k]; };
      for (;;) {
        const c = next(at);
        if (!c) break;                            // no end marker: the rest is rest
        if (c.start > at) { at = c.start; continue; }   // hand-written: goes to rest
        const l = line(c);
        if (l === END) { cut.push([c.start, c.end]); break; }
        const isRule = l.startsWith(RULE);
        const data = parse(l.slice((isRule ? RULE : VACATION).length));
        let ok = false;
        if (data && typeof data === "object" && !Array.isArray(data) && (isRule || !model.vacation)) {
          const item = isRule ? normRule(data) : normVacation(data);
          const text = partText(isRule ? RULE : VACATION, item, format[isRule ? "rule" : "vacation"](item).code);
          const after = c.start + text.length;
          ok = s.startsWith(text, c.start) && !elseAt(s, after);
          if (ok) {
            if (isRule) model.rules.push(item); else model.vacation = item;
            format[isRule ? "rule" : "vacation"](item).needs.forEach((n) => needs.add(n));
            cut.push([c.start, after]);
            at = after;
          }
        }
        if (!ok) {                                // edited by hand: its code is rest
          cut.push([c.start, c.end]);
          at = c.end;
        }
      }
    }
    // What is left between the cuts: before the begin marker, and after it
    // (no cut straddles the marker: it is one).
    cut.sort((a, b) => a[0] - b[0]);
    const split = begin ? begin.start : Infinity;
    let from = 0;
    for (const [a, b] of cut) {
      if (a <= split) model.before += s.slice(from, a); else model.rest += s.slice(from, a);
      from = b;
    }
    if (begin) model.rest += s.slice(from); else model.before += s.slice(from);
    const hand = model.before + model.rest;
    for (const n of names) {
      if (model.requires.includes(n)) continue;
      if (needs.has(n) && !(USES[n] && USES[n].test(hand))) continue;
      model.requires.push(n);
    }
  } catch {
    return { rules: [], vacation: null, before: str(script), rest: "", requires: [] };
  }
  return model;
}
