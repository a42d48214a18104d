// search.js: the search box's language, turned into a JMAP FilterCondition
// (RFC 8621 §4.4.1) that the server runs.
//   from:x to:x cc:x subject:x has:attachment is:unread|read|flagged
//   in:folder before:YYYY-MM-DD after:YYYY-MM-DD "quoted text" free text

export function tokens(q) {
  const out = [];
  const re = /(\w+):("([^"]*)"|\S+)|"([^"]*)"|(\S+)/g;
  let m;
  while ((m = re.exec(q))) {
    if (m[1]) out.push({ op: m[1].toLowerCase(), value: m[3] ?? m[2] });
    else out.push({ op: "", value: m[4] ?? m[5] });
  }
  return out;
}

// findMailbox(name) → mailbox id or null (matches name or role).
export function parse(q, findMailbox) {
  const conds = [];
  const text = [];
  for (const { op, value } of tokens(q)) {
    const v = value;
    switch (op) {
      case "from": case "to": case "cc": case "bcc": case "subject": case "body":
        conds.push({ [op]: v }); break;
      case "has":
        if (/^attachments?$/i.test(v)) conds.push({ hasAttachment: true });
        else text.push(`${op}:${v}`);
        break;
      case "is": {
        const w = v.toLowerCase();
        if (w === "unread") conds.push({ notKeyword: "$seen" });
        else if (w === "read") conds.push({ hasKeyword: "$seen" });
        else if (w === "flagged" || w === "starred") conds.push({ hasKeyword: "$flagged" });
        else if (w === "unflagged") conds.push({ notKeyword: "$flagged" });
        else text.push(`${op}:${v}`);
        break;
      }
      case "in": {
        const id = findMailbox(v);
        if (id) conds.push({ inMailbox: id }); else text.push(`${op}:${v}`);
        break;
      }
      case "before": case "after": {
        const d = new Date(v);
        if (isNaN(d)) { text.push(`${op}:${v}`); break; }
        conds.push(op === "before" ? { before: d.toISOString().replace(/\.\d+Z$/, "Z") }
          : { after: d.toISOString().replace(/\.\d+Z$/, "Z") });
        break;
      }
      default:
        text.push(op ? `${op}:${v}` : v);
    }
  }
  if (text.length) conds.push({ text: text.join(" ") });
  if (!conds.length) return null;
  return conds.length === 1 ? conds[0] : { operator: "AND", conditions: conds };
}

export const hasMailbox = (filter) => JSON.stringify(filter || {}).includes('"inMailbox"');
