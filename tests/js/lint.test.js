// The app and its tests pass eslint (eslint.config.js). Skipped where
// npm ci has not installed it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const top = fileURLToPath(new URL("../../", import.meta.url));
const bin = `${top}node_modules/eslint/bin/eslint.js`;

test("eslint finds nothing in the app and its tests", { skip: !existsSync(bin) && "eslint is not installed (npm ci)" }, () => {
  const r = spawnSync(process.execPath, [bin, "--max-warnings", "0", "www", "tests/js", "tests/browser", "eslint.config.js"],
    { cwd: top, encoding: "utf8", env: { ...process.env, ESLINT_USE_FLAT_CONFIG: "true" } });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});
