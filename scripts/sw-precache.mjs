#!/usr/bin/env node
// Writes www/js/precache.js: the files the service worker (www/sw.js)
// keeps for offline use, which are every file of www/ the app can load,
// each with the start of its SHA-256, and the release's version, a hash
// of their contents, which names the cache: any change to a file makes a
// new version, which the browser installs beside the old one, and a file
// that does not match its sum is of another release (an upgrade under
// way on the server), which the worker refuses to install. tests/js/precache.test.js fails while the
// written module differs from what this would write, so the list cannot
// go stale silently. Run it after changing anything under www/:
//   node scripts/sw-precache.mjs
/* global process, console, URL */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

export const MODULE = "js/precache.js";
// Not the app's to load: the web servers' JSON errors, the licences and
// notes beside the vendored libraries, and the worker itself (the browser
// keeps it, and checks it for changes on its own).
const LEFT_OUT = [/^api-errors\//, /^vendor\/(README|.*-LICENSE)$/, /^sw\.js$/, /(^|\/)\./];

function walk(dir, root = dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = join(dir, d.name);
    return d.isDirectory() ? walk(p, root) : [relative(root, p).split(sep).join("/")];
  });
}

// The app's files under www (paths relative to it), sorted.
export const files = (www) => [...new Set([...walk(www).filter((f) => !LEFT_OUT.some((re) => re.test(f))), MODULE])].sort();

// The start of a file's SHA-256 (hex): 64 bits tell one release's file
// from another's.
export const sum = (www, f) => createHash("sha256").update(readFileSync(join(www, f))).digest("hex").slice(0, 16);

// The contents' hash: every file but this module (which holds it), and the worker.
export function version(www, list = files(www)) {
  const h = createHash("sha256");
  for (const f of [...list.filter((x) => x !== MODULE), "sw.js"]) h.update(`${f}\0`).update(readFileSync(join(www, f))).update("\0");
  return h.digest("hex").slice(0, 16);
}

// The module's text.
export function text(www) {
  const list = files(www);
  return `// precache.js: written by scripts/sw-precache.mjs, not by hand (its test
// fails when it is stale). The app's files that sw.js keeps for offline
// use, relative to the app's root, each with the start of its SHA-256
// (this module's own: none, it is checked by its VERSION), and the
// version naming their cache.
export const VERSION = "${version(www, list)}";
export const FILES = {
${list.map((f) => `  "${f}": "${f === MODULE ? "" : sum(www, f)}",`).join("\n")}
};
`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const www = fileURLToPath(new URL("../www/", import.meta.url));
  writeFileSync(join(www, MODULE), text(www));
  console.log(`${MODULE}: version ${version(www)}`);
}
