-- postern state, schema version 6 (PRAGMA user_version).
-- Created by the programs on first run; shipped for reference and for
-- operators who create the database by hand. Nothing here holds a password
-- or a cookie in clear: see "Sessions and secrets" in docs/DECISIONS.md.

-- One row per signed-in browser. id is the public half of the cookie;
-- verifier is SHA-256 of the secret half. sealed holds the upstream
-- credentials and doc the session document, both AES-256-GCM under a key
-- that needs the cookie's secret, the server secret and salt together.
-- account is an HMAC of the login under the server secret: it groups a
-- person's devices without naming them. verified (version 3) is when the
-- mail server last accepted the session's credentials, as far as postern
-- knows: routes that do not ask it themselves ask it first when that is
-- longer ago than session_recheck.
CREATE TABLE sessions (
  id        TEXT PRIMARY KEY,
  verifier  BLOB NOT NULL,
  salt      BLOB NOT NULL,
  sealed    BLOB NOT NULL,
  doc       BLOB NOT NULL,
  account   TEXT NOT NULL,
  remember  INTEGER NOT NULL,
  created   INTEGER NOT NULL,
  seen      INTEGER NOT NULL,
  expires   INTEGER NOT NULL,
  api_url   TEXT NOT NULL,
  download_url TEXT NOT NULL,
  upload_url   TEXT NOT NULL,
  event_url    TEXT NOT NULL,
  agent     TEXT NOT NULL DEFAULT '',
  ip        TEXT NOT NULL DEFAULT '',
  verified  INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE INDEX sessions_account ON sessions(account);
CREATE INDEX sessions_expires ON sessions(expires);

-- Fixed-window counters shared by every process: sign-in limits and the
-- per-session API budget. key is an HMAC of what is counted.
CREATE TABLE rate (
  key     TEXT NOT NULL,
  win     INTEGER NOT NULL,
  n       INTEGER NOT NULL,
  until   INTEGER NOT NULL,
  PRIMARY KEY (key, win)
) WITHOUT ROWID;
CREATE INDEX rate_until ON rate(until);

-- The app's preferences, per account.
CREATE TABLE settings (
  account TEXT PRIMARY KEY,
  json    TEXT NOT NULL,
  updated INTEGER NOT NULL
) WITHOUT ROWID;

-- pushd's upstream channel per account (filled in by pushd). mode is
-- poll, relay or subscription; state the last JMAP states pushd saw (JSON);
-- tabs the event streams the account has open (version 2), so that
-- /api/health can tell tabs by mode. Poll and relay rows live only while
-- the account has tabs; a subscription's row outlives them. A verified
-- subscription's sub_id, its expiry, and token_hash: SHA-256 (hex) of the
-- token in its callback URL, the callback's only credential, which is
-- never stored (version 4; before, the column "token" held it in clear).
-- node (version 6) is the node_name of the pushd that wrote the row:
-- a pushd starting cleans up its own rows and those of nodes gone (see
-- nodes), stopping its own, never another live node's (on PostgreSQL;
-- SQLite is one node, whose rows are all its own). On PostgreSQL, with
-- several nodes, the row is also the account's lease: node holds the
-- account's channel until lease_until (milliseconds of the database's
-- clock), renewed by it; past that another node may take it over.
CREATE TABLE push_accounts (
  account   TEXT PRIMARY KEY,
  mode      TEXT NOT NULL,
  sub_id    TEXT,
  token_hash TEXT,
  state     TEXT,
  expires   INTEGER,
  updated   INTEGER NOT NULL,
  tabs      INTEGER NOT NULL DEFAULT 0,
  node      TEXT NOT NULL DEFAULT '',
  lease_until INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

-- The gateway nodes whose pushd shares this state (version 6), by
-- node_name: when it started, and when it last said it is alive (seen,
-- every 10 s). A node not seen for a minute is gone: the others may
-- clean up its rows.
CREATE TABLE nodes (
  name      TEXT PRIMARY KEY,
  started   INTEGER NOT NULL,
  seen      INTEGER NOT NULL
) WITHOUT ROWID;

-- A device's Web Push subscription (version 5), one per session: where its
-- browser's push service takes messages (endpoint) and the keys they are
-- encrypted to (p256dh, auth; RFC 8291). sealed holds what pushd needs to
-- follow the account with every tab closed (login, password, the JMAP
-- account), AES-256-GCM under a key derived from the server secret and the
-- session id: unlike a session's own seal it opens without the cookie,
-- which is what turning notifications on consents to. It goes with the
-- session (sign-out, expiry, revoke) and when the device turns them off.
CREATE TABLE webpush (
  session   TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
  account   TEXT NOT NULL,
  endpoint  TEXT NOT NULL,
  p256dh    BLOB NOT NULL,
  auth      BLOB NOT NULL,
  sealed    BLOB NOT NULL,
  created   INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX webpush_account ON webpush(account);
