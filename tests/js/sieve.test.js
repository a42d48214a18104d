// sieve.js: postern's filters and vacation written as one Sieve script and
// read back, the hand-written part kept verbatim.
import { test } from "node:test";
import assert from "node:assert/strict";
import { FIELDS, OPS, ACTIONS, read, write, blankRule, blankVacation, likeThis, check, checkVacation } from "../../www/js/sieve.js";

const model = (o) => ({ rules: [], vacation: null, before: "", rest: "", requires: [], ...o });
const BEGIN = "# postern: begin v1 (rules made in postern's filter screen)";
const rule = (o) => ({ name: "r", on: true, all: true, when: [{ field: "subject", op: "contains", value: "x" }],
  then: [{ act: "move", folder: "F" }], ...o });
const cond = (field, op, value) => (field === "header" ? { field, header: "X-Name", op, value } : { field, op, value });
const act = (a) => (a === "move" || a === "copy" ? { act: a, folder: "Invoices/2025" }
  : a === "forward" ? { act: a, to: "carol@example.test" } : { act: a });
const roundTrip = (m, what) => assert.deepEqual(read(write(m)), m, what);
const vac = (o) => ({ on: true, from: "", until: "", subject: "", text: "Away.", addresses: [], days: 7, ...o });
// The code between the markers (comments dropped).
const code = (script) => script.split("\n").filter((l) => !l.startsWith("#")).join("\n");

test("the interface", () => {
  assert.deepEqual(FIELDS, ["from", "to", "subject", "header", "size"]);
  for (const f of ["from", "to", "subject", "header"]) assert.deepEqual(OPS[f], ["contains", "is", "matches"]);
  assert.deepEqual(OPS.size, ["over"]);
  assert.deepEqual(ACTIONS, ["move", "copy", "read", "flag", "forward", "discard", "stop"]);
  assert.deepEqual(blankRule(), { name: "", on: true, all: true, when: [{ field: "from", op: "contains", value: "" }],
    then: [{ act: "move", folder: "" }] });
  assert.deepEqual(blankVacation(), { on: false, from: "", until: "", subject: "", text: "", addresses: [], days: 7 });
  assert.notEqual(blankRule().when, blankRule().when, "a new one each time");
});

test("each field and op as Sieve", () => {
  const one = (c) => code(write(model({ rules: [rule({ when: [c] })] })));
  assert.match(one(cond("from", "contains", "x")), /^if address :all :contains "from" "x" \{$/m);
  assert.match(one(cond("to", "is", "x")), /^if address :all :is \["to", "cc"\] "x" \{$/m);
  assert.match(one(cond("subject", "matches", "a*b?")), /^if header :matches "subject" "a\*b\?" \{$/m);
  assert.match(one(cond("header", "contains", "x")), /^if header :contains "X-Name" "x" \{$/m);
  assert.match(one(cond("size", "over", "100k")), /^if size :over 100K \{$/m);
  assert.match(one(cond("size", "over", "2048")), /^if size :over 2048 \{$/m);
});

test("every field × op and every action round-trips", () => {
  for (const field of FIELDS) {
    for (const op of OPS[field]) {
      for (const a of ACTIONS) {
        const m = model({ rules: [rule({ name: `${field} ${op} ${a}`, when: [cond(field, op, field === "size" ? "1M" : "v")], then: [act(a)] })] });
        roundTrip(m, `${field} ${op} ${a}`);
        assert.notEqual(code(write(m)).trim(), "", "with code");
      }
    }
  }
});

test("conditions: allof, anyof, a single one bare", () => {
  const two = [cond("from", "is", "a@b.c"), cond("size", "over", "1K")];
  assert.match(write(model({ rules: [rule({ when: two })] })), /^if allof\(address :all :is "from" "a@b.c", size :over 1K\) \{$/m);
  assert.match(write(model({ rules: [rule({ all: false, when: two })] })), /^if anyof\(address :all :is "from" "a@b.c", size :over 1K\) \{$/m);
  assert.doesNotMatch(write(model({ rules: [rule()] })), /allof|anyof/);
  roundTrip(model({ rules: [rule({ when: two }), rule({ all: false, when: two })] }));
});

test("actions in their fixed order, stop last, whatever the list's order", () => {
  const then = [...ACTIONS].reverse().map(act);
  const s = write(model({ rules: [rule({ then })] }));
  const body = code(s).split("{\n")[1].split("\n}")[0].split("\n").map((l) => l.trim());
  assert.deepEqual(body, ['addflag "\\\\Seen";', 'addflag "\\\\Flagged";', 'fileinto :create "Invoices/2025";',
    'fileinto :copy :create "Invoices/2025";', 'redirect :copy "carol@example.test";', "discard;", "stop;"]);
  assert.deepEqual(read(s).rules[0].then, then, "the model keeps the list's order");
  assert.match(s, /^require \["copy", "fileinto", "imap4flags", "mailbox"\];\n/);
  // Two moves (copies) keep their order.
  const copies = write(model({ rules: [rule({ then: [{ act: "copy", folder: "B" }, { act: "copy", folder: "A" }] })] }));
  assert.ok(copies.indexOf('"B"') < copies.indexOf('"A"'));
});

test("a rule that is off, or one check() refuses, is its comment alone", () => {
  const off = model({ rules: [rule({ on: false, then: [act("discard")] })] });
  const s = write(off);
  assert.doesNotMatch(s, /discard;/);
  assert.doesNotMatch(s, /^require/m, "and needs nothing");
  assert.match(s, /^# postern: rule \{"name":"r","on":false,/m);
  roundTrip(off);
  const half = model({ rules: [rule({ then: [{ act: "move", folder: "" }] })] });
  assert.doesNotMatch(write(half), /fileinto/);
  roundTrip(half, "kept, to finish later");
});

test("names with quotes, backslashes, line breaks, non-ASCII and RTL text", () => {
  for (const name of ['say "hi"', "back\\slash\\", "two\nlines\r\nthree", "Ünïcödé ✓ 😀", "שלום עולם", "مرحبا", "\u202eevil", "",
    "\n# postern: end", "x\u2028y"]) {
    const m = model({ rules: [rule({ name })] });
    roundTrip(m, JSON.stringify(name));
    const s = write(m);
    assert.equal(s.split("\n").filter((l) => l.startsWith("# postern: rule")).length, 1, "the marker on one line");
  }
});

test("values that try to break out of their string or the block", () => {
  const evil = ['"; } discard; #', "a\\", '\\"', "}", ";", "\n# postern: end\nif true { discard; }\n", "x\r\n# postern: end",
    "# postern: rule {}", "text:\n.\n"];
  for (const value of evil) {
    const m = model({ rules: [rule({ when: [cond("subject", "contains", value), cond("header", "is", value)],
      then: [{ act: "move", folder: value }, { act: "copy", folder: value }] })], rest: "keep;\n" });
    const s = write(m);
    roundTrip(m, JSON.stringify(value));
    assert.doesNotMatch(s, /^\s*discard;/m, "no command of its own");
    assert.equal(s.match(/^# postern: end$/gm).length, 1, "one end marker");
    assert.ok(s.endsWith("# postern: end\nkeep;\n"));
  }
  // Text that is not UTF-8 (a lone surrogate) is not written as such.
  const lone = write(model({ rules: [rule({ when: [cond("subject", "is", "a\ud800b\udc00")] })] }));
  assert.match(lone, /header :is "subject" "a\ufffdb\ufffd"/);
  assert.equal(read(lone).rules[0].when[0].value, "a\ud800b\udc00");
  // One-line values stay on one line; the vacation's text keeps its lines.
  const s = write(model({ rules: [rule({ when: [cond("subject", "is", "a\nb")] })] }));
  assert.match(s, /header :is "subject" "a b"/);
  const v = vac({ text: 'Hello,\n\n"away" \\o/\n.\n# postern: end\n}', subject: 'a"b\nc', addresses: ['x"@y.z', "me@example.test"] });
  const vs = write(model({ vacation: v }));
  assert.ok(vs.includes('"Hello,\n\n\\"away\\" \\\\o/\n.\n# postern: end\n}";'), vs);
  assert.match(vs, /:subject "a\\"b c" :addresses \["me@example.test"\]/, "invalid addresses left out");
  roundTrip(model({ vacation: v }));
});

test("the vacation: plain, subject, addresses, dates, lines, off", () => {
  assert.match(write(model({ vacation: vac() })), /^vacation :days 7 "Away.";$/m);
  assert.match(write(model({ vacation: vac({ subject: "Out", addresses: ["a@b.c", "d@e.f"], days: 3 }) })),
    /^vacation :days 3 :subject "Out" :addresses \["a@b.c", "d@e.f"\] "Away.";$/m);
  const both = write(model({ vacation: vac({ from: "2025-07-01", until: "2025-07-31" }) }));
  assert.match(both, /^if allof\(currentdate :value "ge" "date" "2025-07-01", currentdate :value "le" "date" "2025-07-31"\) \{\n {2}vacation :days 7 "Away.";\n\}$/m);
  assert.match(both, /^require \["date", "relational", "vacation"\];/);
  assert.match(write(model({ vacation: vac({ from: "2025-07-01" }) })), /^if currentdate :value "ge" "date" "2025-07-01" \{$/m);
  assert.match(write(model({ vacation: vac({ until: "2025-07-31" }) })), /^if currentdate :value "le" "date" "2025-07-31" \{$/m);
  assert.doesNotMatch(write(model({ vacation: vac({ from: "July" }) })), /currentdate/, "not a date: no condition");
  assert.match(write(model({ vacation: vac() })), /^require \["vacation"\];/);
  const off = write(model({ vacation: blankVacation() }));
  assert.doesNotMatch(code(off), /vacation/);
  for (const v of [vac(), vac({ from: "2025-07-01" }), vac({ until: "2025-07-31" }), vac({ from: "2025-07-01", until: "2025-07-31", subject: "S",
    addresses: ["a@b.c"], text: "one\ntwo\n\nthree\n" }), blankVacation(), vac({ text: "" })]) {
    roundTrip(model({ vacation: v }), JSON.stringify(v));
  }
  roundTrip(model({ vacation: null }));
});

test("the vacation comes before the rules, so a rule's stop does not silence it", () => {
  const s = write(model({ rules: [rule({ then: [act("stop")] })], vacation: vac() }));
  assert.ok(s.indexOf("vacation :days") < s.indexOf("stop;"));
  assert.ok(s.indexOf("# postern: begin") < s.indexOf("# postern: vacation"));
});

test("the script's shape: require, before, the block, the rest", () => {
  const s = write(model({ rules: [rule()], before: "# first\nredirect \"a@b.c\";\n", rest: "# mine\nkeep;\n" }));
  assert.equal(s, 'require ["fileinto", "mailbox"];\n' +
    '# first\nredirect "a@b.c";\n' +
    "# postern: begin v1 (rules made in postern's filter screen)\n" +
    '# postern: rule {"name":"r","on":true,"all":true,"when":[{"field":"subject","op":"contains","value":"x"}],"then":[{"act":"move","folder":"F"}]}\n' +
    'if header :contains "subject" "x" {\n  fileinto :create "F";\n}\n' +
    "# postern: end\n# mine\nkeep;\n");
  assert.equal(write(model()), BEGIN + "\n# postern: end\n");
  roundTrip(model());
  // before without its last line break: the marker still on its own line.
  assert.equal(write(model({ before: "# x" })), "# x\n" + BEGIN + "\n# postern: end\n");
});

test("requires: postern's and the rest's, merged once", () => {
  const m = model({ rules: [rule()], rest: 'if body :contains "x" { fileinto "Y"; }\n', requires: ["body", "fileinto", "body"] });
  const s = write(m);
  assert.match(s, /^require \["fileinto", "mailbox", "body"\];\n/);
  assert.deepEqual(read(s).requires, ["fileinto", "body"], "what the rest uses stays; postern's own do not");
  assert.deepEqual(read(write(model({ rules: [rule()] }))).requires, [], "postern's needs are not the rest's");
  // Several require commands, a string or a list, over several lines.
  const r = read('require "fileinto";\nrequire [\n  "body",\n  "vacation" ] ;\n# hi\nrequire ["fileinto", "reject"];\nreject "no";\n');
  assert.deepEqual(r.requires, ["fileinto", "body", "vacation", "reject"]);
  assert.equal(r.before, "# hi\nreject \"no\";\n");
  assert.equal(r.rest, "");
  assert.match(write(r), /^require \["fileinto", "body", "vacation", "reject"\];\n# hi\nreject "no";\n# postern: begin v1 /);
  // A rest that begins with require commands: they join the one at the top.
  const hoisted = write(model({ rest: '# x\nrequire "body";\nrequire ["reject", "body"];\nreject "no";\n', requires: ["envelope"] }));
  assert.equal(hoisted, 'require ["envelope", "body", "reject"];\n' +
    BEGIN + "\n# postern: end\n# x\nreject \"no\";\n");
  // So do those at the top of before.
  assert.equal(write(model({ before: 'require "reject";\nreject "no";\n', requires: ["body"] })),
    'require ["body", "reject"];\nreject "no";\n' + BEGIN + "\n# postern: end\n");
  // What before uses keeps its require when read back.
  const spam = 'require ["fileinto"];\nif header :contains "X-Spam" "yes" { fileinto "Junk"; stop; }\n';
  assert.deepEqual(read(write({ ...read(spam), rules: [rule()] })).requires, ["fileinto"]);
});

test("hand-written Sieve before, inside and after the block is kept verbatim", () => {
  const block = write(model({ rules: [rule({ name: "a" }), rule({ name: "b", then: [act("discard")] })], vacation: vac() }));
  const [req, ...body] = block.split("\n");
  const lines = body.join("\n");
  const before = "# before\nif header :is \"x-a\" \"1\" { keep; }\n";
  const inside = "# inside, by hand\nif size :under 1 { keep; }\n";
  const after = "\n/* after\n# postern: end */\nif true { stop; }";
  const at = lines.indexOf('# postern: rule {"name":"b"');
  const script = req + "\n" + before + lines.slice(0, at) + inside + lines.slice(at) + after;
  const m = read(script);
  assert.deepEqual(m.rules.map((r) => r.name), ["a", "b"]);
  assert.deepEqual(m.vacation, vac());
  assert.equal(m.before, before, "what came before the block stays before it");
  assert.equal(m.rest, inside + after, "what was inside the block goes after it, with what came after");
  // Written again: the same model, before before the block, the rest after it.
  const again = write(m);
  assert.deepEqual(read(again), m);
  assert.ok(again.indexOf(before) < again.indexOf("# postern: begin") && again.indexOf("# postern: end") < again.indexOf(inside + after));
});

test("hand-written Sieve keeps its place: before stays before, after stays after", () => {
  // The reviewer's case: spam handled by hand before postern's rules.
  const spam = '# spam first\nif header :contains "X-Spam" "yes" { fileinto "Junk"; stop; }\n';
  const boss = rule({ name: "boss", when: [cond("from", "is", "boss@example.test")], then: [act("forward")] });
  const first = write(model({ before: spam, rules: [boss], requires: ["fileinto"] }));
  const m = read(first);
  assert.equal(m.before, spam);
  assert.equal(m.rest, "");
  const s = write({ ...m, rules: [boss, rule()] });
  assert.ok(s.indexOf('"X-Spam"') < s.indexOf("redirect"), "the spam rule still runs first");
  assert.ok(s.startsWith('require ["copy", "fileinto", "mailbox"];\n' + spam + BEGIN + "\n"), s);
  // Text after the block stays after it.
  const tail = "# last\nif true { keep; }\n";
  const both = read(write(model({ before: spam, rules: [boss], rest: tail, requires: ["fileinto"] })));
  assert.equal(both.before, spam);
  assert.equal(both.rest, tail);
  assert.ok(write(both).endsWith("# postern: end\n" + tail));
});

test("a script without postern's block (another client's) stays first", () => {
  const foreign = 'require ["fileinto", "reject"];\n# from another client\nif header :contains "X-Spam" "yes" {\n  fileinto "Junk";\n  stop;\n}\nreject "no";\n';
  const m = read(foreign);
  assert.deepEqual(m, model({ before: '# from another client\nif header :contains "X-Spam" "yes" {\n  fileinto "Junk";\n  stop;\n}\nreject "no";\n',
    requires: ["fileinto", "reject"] }));
  const s = write({ ...m, rules: [rule()] });
  assert.equal(s, 'require ["fileinto", "mailbox", "reject"];\n' + m.before + BEGIN + "\n" +
    '# postern: rule {"name":"r","on":true,"all":true,"when":[{"field":"subject","op":"contains","value":"x"}],"then":[{"act":"move","folder":"F"}]}\n' +
    'if header :contains "subject" "x" {\n  fileinto :create "F";\n}\n# postern: end\n');
  assert.deepEqual(read(s), { ...m, rules: [rule()] });
});

test("the begin marker's version: v1 and none read; an unknown one is hand-written", () => {
  const s = write(model({ rules: [rule()], vacation: vac() }));
  assert.ok(s.includes("\n" + BEGIN + "\n"));
  const m = model({ rules: [rule()], vacation: vac() });
  assert.deepEqual(read(s), m);
  // As written before versions were.
  assert.deepEqual(read(s.replace(" v1 (", " (")), m);
  assert.deepEqual(read(s.replace(BEGIN, "# postern: begin")), m);
  // A later format this code does not know: all of it stays as it is, first.
  const v2 = s.replace(" v1 (", " v2 (");
  const r = read(v2);
  assert.deepEqual(r.rules, []);
  assert.equal(r.vacation, null);
  assert.equal(r.before, v2.slice(v2.indexOf("\n") + 1));
  // ... and a v1 block after it is read.
  const later = read(v2 + s.slice(s.indexOf("\n") + 1));
  assert.deepEqual(later.rules, [rule()]);
  assert.equal(later.before, v2.slice(v2.indexOf("\n") + 1));
});

test("a rule edited by hand is not postern's any more: its code goes to rest, its marker away", () => {
  const s = write(model({ rules: [rule({ name: "a" }), rule({ name: "b", then: [act("discard")] }), rule({ name: "c" })], vacation: vac() }));
  const edited = s.replace("discard;", "discard;\n  stop;");
  const m = read(edited);
  assert.deepEqual(m.rules.map((r) => r.name), ["a", "c"]);
  assert.equal(m.rest, 'if header :contains "subject" "x" {\n  discard;\n  stop;\n}\n');
  assert.deepEqual(m.requires, [], "discard and stop need nothing");
  // Its JSON changed: the same.
  const json = read(s.replace('"name":"b","on":true', '"name":"b","on":true,"extra":1'));
  assert.deepEqual(json.rules.map((r) => r.name), ["a", "c"]);
  assert.match(json.rest, /discard;/);
  // A broken JSON; an else after a rule; a vacation edited.
  assert.deepEqual(read(s.replace('"name":"b",', '"name":"b",,')).rules.map((r) => r.name), ["a", "c"]);
  const withElse = read(s.replace('  discard;\n}\n', '  discard;\n}\nelse { keep; }\n'));
  assert.deepEqual(withElse.rules.map((r) => r.name), ["a", "c"]);
  assert.match(withElse.rest, /^if header[\s\S]*discard;\n\}\nelse \{ keep; \}\n$/);
  const vEdited = read(s.replace('vacation :days 7 "Away."', 'vacation :days 1 "Away."'));
  assert.equal(vEdited.vacation, null);
  assert.equal(vEdited.rest, 'vacation :days 1 "Away.";\n');
  assert.deepEqual(vEdited.requires, ["vacation"], "the rest uses vacation");
  // The file write() makes of that: a valid script again, the edit kept.
  assert.match(write(vEdited), /^require \["fileinto", "mailbox", "vacation"\];\n[\s\S]*# postern: end\nvacation :days 1 "Away.";\n$/);
});

test("no block: all of it is before; no end marker: what follows is rest", () => {
  const hand = 'require ["fileinto"];\n# my filters\nif header :contains "subject" "x" { fileinto "X"; }\n';
  assert.deepEqual(read(hand), model({ before: '# my filters\nif header :contains "subject" "x" { fileinto "X"; }\n', requires: ["fileinto"] }));
  const s = write(model({ rules: [rule()] })).replace("# postern: end\n", "if true { keep; }\n");
  const m = read(s);
  assert.deepEqual(m.rules.map((r) => r.name), ["r"]);
  assert.equal(m.rest, "if true { keep; }\n");
  // A begin marker inside a string or a bracket comment is not one.
  const quoted = 'if header :is "x" "\n# postern: begin\n" { keep; }\n/*\n# postern: begin\n*/\n';
  assert.deepEqual(read(quoted), model({ before: quoted }));
});

test("CRLF line ends read as LF (as a server may give the script back)", () => {
  const m = model({ rules: [rule()], vacation: vac({ text: "a\nb" }), before: "# a\r\nkeep;\n", rest: "keep;\n" });
  assert.deepEqual(read(write(m).replace(/\n/g, "\r\n")), { ...m, before: "# a\nkeep;\n" });
});

test("garbage in: no throw, all of it kept", () => {
  for (const g of [undefined, null, 42, {}, [], "", "\0\0", '"unterminated', "/* open", "text:\nno end", "require", "require [", 'require ["a", ', "require \"a\"",
    "# postern: begin\n# postern: rule {", "# postern: begin\n# postern: rule null\n# postern: vacation []\n# postern: rule 1\n# postern: end\n",
    "# postern: begin\n# postern: vacation {\"on\":true}\n# postern: vacation {\"on\":true}\n# postern: end\n", "x".repeat(100000)]) {
    const m = read(g);
    assert.ok(Array.isArray(m.rules) && Array.isArray(m.requires) && typeof m.rest === "string" && typeof m.before === "string",
      String(g).slice(0, 40));
    assert.equal(typeof write(m), "string");
  }
  assert.equal(read('"unterminated').before, '"unterminated');
  const dup = read('# postern: begin\n# postern: vacation {"on":false,"from":"","until":"","subject":"","text":"","addresses":[],"days":7}\n' +
    '# postern: vacation {"on":false,"from":"","until":"","subject":"","text":"","addresses":[],"days":7}\n# postern: end\n');
  assert.deepEqual(dup.vacation, blankVacation(), "the first vacation");
  // write() takes a partial or odd model too.
  assert.equal(typeof write(undefined), "string");
  assert.equal(typeof write({ rules: [null, { when: "x" }], vacation: { days: "x" }, requires: [1] }), "string");
});

test("likeThis: mail from the sender, to a folder still to pick", () => {
  const r = likeThis({ from: [{ name: "Carol Example", email: "carol@example.test" }], subject: "Invoice 7" });
  assert.deepEqual(r, { name: "Carol Example", on: true, all: true, when: [{ field: "from", op: "is", value: "carol@example.test" }],
    then: [{ act: "move", folder: "" }] });
  assert.equal(check(r), "sieve.needFolder");
  assert.equal(likeThis({ from: [{ name: null, email: "x@y.z" }] }).name, "x@y.z");
  assert.equal(likeThis({}).when[0].value, "");
  assert.equal(likeThis(null).name, "");
});

test("check: what the builder should not save", () => {
  assert.equal(check(rule()), null);
  assert.equal(check(blankRule()), "sieve.needCondition", "an empty value");
  assert.equal(check(rule({ when: [] })), "sieve.needCondition");
  assert.equal(check(rule({ when: [{ field: "size", op: "contains", value: "1" }] })), "sieve.needCondition");
  assert.equal(check(rule({ when: [{ field: "date", op: "is", value: "1" }] })), "sieve.needCondition");
  assert.equal(check(rule({ when: [{ field: "header", op: "is", value: "1" }] })), "sieve.needHeader");
  assert.equal(check(rule({ when: [{ field: "header", header: "X Bad", op: "is", value: "1" }] })), "sieve.needHeader");
  assert.equal(check(rule({ when: [{ field: "header", header: "Übel", op: "is", value: "1" }] })), "sieve.needHeader");
  assert.equal(check(rule({ when: [{ field: "header", header: "X-Spam-Flag", op: "is", value: "YES" }] })), null);
  for (const v of ["", "1.5M", "-1", "10 K", "1T", "K", "2G", "2048M", "2097152K", "2147483648"]) {
    assert.equal(check(rule({ when: [{ field: "size", op: "over", value: v }] })), "sieve.badSize", v);
  }
  for (const v of ["0", "100", "100k", "2M", "1G", "2147483647", "2097151K", "2047M"]) {
    assert.equal(check(rule({ when: [{ field: "size", op: "over", value: v }] })), null, v);
  }
  assert.equal(check(rule({ then: [] })), "sieve.needAction");
  assert.equal(check(rule({ then: [{ act: "bounce" }] })), "sieve.needAction");
  assert.equal(check(rule({ then: [{ act: "copy", folder: " " }] })), "sieve.needFolder");
  for (const to of ["", "carol", "a..b@x.test", "a@x_y.test", "a@x.", "a b@x.test", "<a@x.test>", 'a"@x.test']) {
    assert.equal(check(rule({ then: [{ act: "forward", to }] })), "sieve.needAddress", to);
  }
  for (const to of ["carol@example.test", "jürgen.o'neil+x@exämple-1.test", "a_b%c@x"]) {
    assert.equal(check(rule({ then: [{ act: "forward", to }] })), null, to);
  }
  assert.equal(check(null), "sieve.needCondition");
});

test("check: a condition value of white space alone is none", () => {
  for (const field of ["from", "to", "subject", "header"]) {
    for (const value of [" ", "  \t", "\n"]) {
      assert.equal(check(rule({ when: [cond(field, "contains", value)] })), "sieve.needCondition", `${field} ${JSON.stringify(value)}`);
    }
  }
  assert.equal(check(rule({ when: [cond("subject", "contains", " x ")] })), null);
  const m = model({ rules: [rule({ when: [cond("subject", "contains", "  ")] })] });
  assert.doesNotMatch(code(write(m)), /header/, "written as its comment alone");
  roundTrip(m);
});

test("checkVacation: dates, range, text, days", () => {
  assert.equal(checkVacation(blankVacation()), null);
  assert.equal(checkVacation(vac()), null);
  assert.equal(checkVacation(vac({ from: "2025-07-01", until: "2025-07-31" })), null);
  assert.equal(checkVacation(vac({ from: "2025-07-01", until: "2025-07-01" })), null, "one day");
  assert.equal(checkVacation(vac({ from: "2024-02-29" })), null, "a leap day");
  assert.equal(checkVacation(vac({ until: "2000-02-29" })), null);
  for (const d of ["July", "2025-7-1", "2025-02-30", "2025-02-29", "1900-02-29", "2025-04-31", "2025-13-01", "2025-00-10",
    "2025-01-00", " 2025-01-01", "2025-01-01T00:00", 20250101]) {
    assert.equal(checkVacation(vac({ from: d })), "vacation.badDate", `from ${d}`);
    assert.equal(checkVacation(vac({ until: d })), "vacation.badDate", `until ${d}`);
  }
  assert.equal(checkVacation(vac({ from: "2025-08-01", until: "2025-07-31" })), "vacation.badRange");
  assert.equal(checkVacation(vac({ from: "2026-01-01", until: "2025-12-31" })), "vacation.badRange");
  for (const text of ["", " ", " \n\t "]) assert.equal(checkVacation(vac({ text })), "vacation.needText", JSON.stringify(text));
  assert.equal(checkVacation(vac({ on: false, text: "" })), null, "no text needed while off");
  for (const days of [0, -1, 1.5, 366, 1000, "x", NaN, Infinity, "2.5"]) {
    assert.equal(checkVacation(vac({ days })), "vacation.badDays", String(days));
  }
  for (const days of [1, 7, 365, "30"]) assert.equal(checkVacation(vac({ days })), null, String(days));
  assert.equal(checkVacation(vac({ days: undefined })), null, "missing: the default, 7");
  assert.equal(checkVacation(null), null, "nothing: the blank one, off");
});

test("a vacation checkVacation refuses is its comment alone (no reply that answers forever)", () => {
  for (const o of [{ from: "July" }, { until: "2025-02-30" }, { from: "2025-08-01", until: "2025-07-31" }, { text: " " },
    { text: "" }, { days: 0 }, { days: 400 }, { days: 2.5 }]) {
    const m = model({ vacation: vac(o), rules: [rule()] });
    const s = write(m);
    assert.doesNotMatch(code(s), /vacation|currentdate/, JSON.stringify(o));
    assert.doesNotMatch(s, /"vacation"|"date"/, "and needs nothing");
    assert.match(s, /^# postern: vacation \{"on":true,/m, "kept, to finish later");
    roundTrip(m, JSON.stringify(o));
  }
  // The days as given, not made good behind the user's back.
  assert.equal(read(write(model({ vacation: vac({ days: 400 }) }))).vacation.days, 400);
  assert.equal(read(write(model({ vacation: vac({ days: "3" }) }))).vacation.days, 3);
  assert.match(write(model({ vacation: vac({ days: 365 }) })), /^vacation :days 365 "Away.";$/m);
});
