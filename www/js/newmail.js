// newmail.js: pure. What new mail says outside the page: which of the
// emails a refresh found created deserve a desktop notification (in the
// folders the person chose, the Inbox by default), its words, and the
// count drawn on the favicon.

// At most MAX notifications for one refresh; more arrive as one summary
// (a server catching up after a pause must not open 40 of them).
export const MAX = 3;

// The folders whose new mail is told: the setting notifyFolders (null,
// the default, is the Inbox; else exactly those ids, [] none).
export const toldIn = (folders, inboxId) => new Set(Array.isArray(folders) ? folders : inboxId ? [inboxId] : []);

// The setting for the folders ticked (ids in the tree's order): the
// Inbox alone is the default, null, which follows the Inbox's role.
export const folderSetting = (ids, inboxId) => (ids.length === 1 && ids[0] === inboxId ? null : [...ids]);

// Unread mail in those folders that is neither a draft nor the user's own.
export function worthTelling(emails, { inboxId, folders = null, own = [] }) {
  const mine = new Set(own.map((a) => String(a).toLowerCase()));
  const told = toldIn(folders, inboxId);
  return emails.filter((e) => Object.entries(e.mailboxIds || {}).some(([id, on]) => on && told.has(id))
    && !e.keywords?.$seen && !e.keywords?.$draft
    && !(e.from || []).some((a) => mine.has(String(a.email).toLowerCase())));
}

// The notifications for them: [{title, body, tag, email}] (email null for
// the summary). t is i18n's t().
export function notices(emails, t) {
  const sorted = [...emails].sort((a, b) => String(b.receivedAt).localeCompare(String(a.receivedAt)));
  if (sorted.length > MAX) {
    return [{ title: t("notify.many", { n: sorted.length }), body: sorted.slice(0, MAX).map(sender).join(", "),
      tag: "postern-summary", email: null }];
  }
  return sorted.map((e) => ({ title: sender(e) || t("notify.someone"), body: e.subject || t("list.noSubject"),
    tag: `postern-${e.id}`, email: e }));
}

const sender = (e) => e.from?.[0]?.name || e.from?.[0]?.email || "";

// The favicon's badge: "" for none, up to 99, then "99+".
export const badge = (n) => (n > 0 ? (n > 99 ? "99+" : String(n)) : "");
