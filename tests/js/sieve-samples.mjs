// The scripts www/js/sieve.js writes for models covering every field, op
// and action, the vacation with and without dates, names and values that
// try to break out: printed as JSON [{name, model, script}] for
// tests/integration/test_sieve_writer.py, which has the real Cyrus check
// each one. With --read, the models read() makes of the scripts on stdin
// (a JSON list).
import process from "node:process";
import { FIELDS, OPS, ACTIONS, write, read, blankVacation } from "../../www/js/sieve.js";

if (process.argv.includes("--read")) {
  let text = "";
  process.stdin.setEncoding("utf8");
  process.stdin.on("data", (d) => { text += d; });
  process.stdin.on("end", () => { process.stdout.write(JSON.stringify(JSON.parse(text).map(read)) + "\n"); });
} else {
  const model = (o) => ({ rules: [], vacation: null, before: "", rest: "", requires: [], ...o });
  const rule = (name, when, then, o) => ({ name, on: true, all: true, when, then, ...o });
  const cond = (field, op, value) => (field === "header"
    ? { field, header: "X-Mailing-List", op, value } : { field, op, value });
  const act = (a) => (a === "move" || a === "copy" ? { act: a, folder: "Invoices/2025" }
    : a === "forward" ? { act: a, to: "carol@example.test" } : { act: a });
  const samples = [];
  const add = (name, m) => samples.push({ name, model: m, script: write(m) });

  for (const field of FIELDS) {
    for (const op of OPS[field]) {
      const value = field === "size" ? "100K" : op === "matches" ? "*invoice?*" : "invoice";
      add(`${field} ${op}`, model({ rules: [rule(`${field} ${op}`, [cond(field, op, value)], [act("move")])] }));
    }
  }
  // The largest sizes check() lets through (Cyrus: at most 2^31 - 1).
  for (const size of ["2147483647", "2097151K", "2047m", "1G", "0"]) {
    add(`size over ${size}`, model({ rules: [rule("big", [cond("size", "over", size)], [act("discard")])] }));
  }
  add("forward to unusual addresses", model({ rules: [rule("fw", [cond("to", "is", "me@example.test")],
    [{ act: "forward", to: "jürgen.o'neil+x@exämple-1.test" }, { act: "forward", to: "a_b%c@x" }])] }));
  for (const a of ACTIONS) add(`action ${a}`, model({ rules: [rule(a, [cond("subject", "contains", "x")], [act(a)])] }));
  add("every action at once, any order", model({ rules: [rule("all", [cond("from", "is", "a@example.test")],
    [...ACTIONS].reverse().map(act))] }));
  add("allof and anyof", model({ rules: [
    rule("allof", FIELDS.map((f) => cond(f, OPS[f][0], f === "size" ? "2M" : "x")), [act("copy"), act("flag")]),
    rule("anyof", FIELDS.map((f) => cond(f, OPS[f][OPS[f].length - 1], f === "size" ? "1G" : "x*")), [act("forward"), act("stop")], { all: false }),
  ] }));
  add("off rules and an off vacation", model({
    rules: [rule("off", [cond("subject", "contains", "x")], [act("discard")], { on: false })],
    vacation: blankVacation(),
  }));
  add("values that try to break out", model({ rules: [rule("Ünïcödé \"q\" \\ \n# postern: end\nשלום עולם",
    [cond("subject", "contains", "\"; } discard; #"), cond("from", "matches", "x\n# postern: end\ny\\"),
      cond("to", "is", "\\\"}")],
    [{ act: "move", folder: "Räkningar/\"2025\"" }, { act: "copy", folder: "a}b;c" }])] }));
  const vacation = { on: true, from: "", until: "", subject: "", text: "Away.", addresses: [], days: 7 };
  add("vacation plain", model({ vacation }));
  add("vacation with subject, addresses and lines", model({ vacation: { ...vacation, subject: "Out \"of\" office",
    addresses: ["alice@example.test", "a.l@example.test", "not an address", "a..b@x.test"], days: 3,
    text: "Hello,\n\nI am away.\n.\n# postern: end\n\"Back\" soon \\o/\n", } }));
  add("vacation from a date", model({ vacation: { ...vacation, from: "2025-07-01" } }));
  add("vacation until a date", model({ vacation: { ...vacation, until: "2025-07-31" } }));
  add("vacation between dates, with rules and a hand-written rest", model({
    vacation: { ...vacation, from: "2025-07-01", until: "2025-07-31", subject: "Away" },
    rules: [rule("stop all", [cond("size", "over", "1")], [act("read"), act("stop")])],
    rest: "# mine\nif body :text :contains \"unsubscribe\" {\n  fileinto \"Lists\";\n}\n",
    requires: ["body", "fileinto"],
  }));
  // Hand-written Sieve before the block (run first), and after it.
  const spam = "# spam first\nif header :contains \"X-Spam\" \"yes\" {\n  fileinto \"Junk\";\n  stop;\n}\n";
  add("hand-written before and after the block", model({
    before: spam,
    rules: [rule("boss", [cond("from", "is", "boss@example.test")], [act("forward")])],
    rest: "# last\nif size :over 10M { discard; }\n",
    requires: ["fileinto"],
  }));
  add("another client's script, with a vacation added", model({
    before: "# from another client\nif envelope :is \"from\" \"x@example.test\" { reject \"no\"; }\n",
    vacation, requires: ["envelope", "reject"],
  }));
  // Half-filled forms: kept as comments, no code.
  add("half-filled vacations and a blank condition", model({
    vacation: { ...vacation, text: " ", from: "2025-08-01", until: "2025-07-31", days: 400 },
    rules: [rule("blank", [cond("subject", "contains", "  ")], [act("discard")])],
  }));
  process.stdout.write(JSON.stringify(samples) + "\n");
}
