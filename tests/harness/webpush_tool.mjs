#!/usr/bin/env node
// The browser's side of Web Push, for the tests of pushd's sender: a
// subscription's keys, the decryption of what pushd sent (RFC 8291 over
// RFC 8188 aes128gcm, by the http_ece package: an implementation that is
// not ours, so a shared misreading of the RFCs cannot pass) and the check
// of its VAPID Authorization header (RFC 8292).
//
//   node tests/harness/webpush_tool.mjs keys
//     -> {"p256dh": b64url, "auth": b64url, "private": b64url}
//   echo '{"private","p256dh","auth","body": base64}' | ... decrypt
//     -> {"plaintext", "rs", "keyid", "salt"}          (exit 1 on failure)
//   echo '{"authorization","endpoint","now"?}' | ... vapid
//     -> {"ok": true, "aud", "exp", "sub", "k"} or {"ok": false, "why"} (exit 1)
//   echo '{"p256dh","auth","plaintext"}' | ... encrypt   -> {"body": base64}
//   echo '{"claims": {...}, "header"?: {...}}' | ... sign
//     -> {"authorization", "k", "jwt"}   (self-test only: a token to reject)
//   ... check -> {"ok": true, "node", "http_ece"}   (can the tool run here?)
//
// Runs on Node 18: only node's own crypto besides http_ece.

// Node's globals imported by name, so that eslint.config.js's rules hold
// here without a node block of their own.
import { Buffer } from "node:buffer";
import crypto from "node:crypto";
import fs from "node:fs";
import { createRequire } from "node:module";
import process from "node:process";
import { URL } from "node:url";
import { TextDecoder } from "node:util";

const CURVE = "prime256v1";
const DAY = 24 * 60 * 60;

class Failure extends Error {}

function fail(why) {
  throw new Failure(why);
}

function b64url(buf) {
  return Buffer.from(buf).toString("base64url");
}

// Strict: JOSE and RFC 8291 keys are unpadded base64url; a sender that
// pads or uses "+/" is wrong even where a lenient decoder would cope.
function fromB64url(text, what) {
  if (typeof text !== "string" || !/^[A-Za-z0-9_-]*$/.test(text)) {
    fail(`${what} is not unpadded base64url`);
  }
  return Buffer.from(text, "base64url");
}

function readInput() {
  const text = fs.readFileSync(0, "utf8");
  try {
    return JSON.parse(text);
  } catch (e) {
    fail(`stdin is not JSON: ${e.message}`);
  }
}

// Loaded on use, so that `keys`, `vapid` and `check` say what is missing
// instead of failing at import when node_modules was never installed.
function httpEce() {
  const require = createRequire(import.meta.url);
  try {
    return require("http_ece");
  } catch {
    fail("the http_ece package is not installed (npm ci at the top of the source tree)");
  }
}

function httpEceVersion() {
  const require = createRequire(import.meta.url);
  try {
    return require("http_ece/package.json").version;
  } catch {
    return null;
  }
}

function publicPoint(buf, what) {
  if (buf.length !== 65 || buf[0] !== 4) {
    fail(`${what} is not a 65-byte uncompressed P-256 point (${buf.length} bytes)`);
  }
  return buf;
}

// What a browser's PushManager.subscribe() hands the server.
function keys() {
  const ecdh = crypto.createECDH(CURVE);
  ecdh.generateKeys();
  return {
    p256dh: b64url(ecdh.getPublicKey()),
    auth: b64url(crypto.randomBytes(16)),
    private: b64url(ecdh.getPrivateKey()),
  };
}

function userAgentKey(input) {
  const ecdh = crypto.createECDH(CURVE);
  try {
    ecdh.setPrivateKey(fromB64url(input.private, "private"));
  } catch (e) {
    if (e instanceof Failure) throw e;
    fail(`private is not a P-256 private key: ${e.message}`);
  }
  // A mismatch would be the test's own mistake; say so rather than blame
  // the sender with an authentication failure.
  if (input.p256dh !== undefined && !ecdh.getPublicKey().equals(fromB64url(input.p256dh, "p256dh"))) {
    fail("p256dh is not the public half of private");
  }
  return ecdh;
}

// The aes128gcm header (RFC 8188 2.1) and RFC 8291's rules for it, which
// http_ece leaves to the caller: the keyid is the sender's public key and
// the message is one record.
function parseHeader(body) {
  if (body.length < 21) fail(`body of ${body.length} bytes is shorter than the aes128gcm header`);
  const rs = body.readUInt32BE(16);
  const idlen = body[20];
  if (body.length < 21 + idlen) fail("body ends inside the aes128gcm header's keyid");
  const keyid = publicPoint(body.subarray(21, 21 + idlen), "the header's keyid (RFC 8291 4)");
  const records = body.length - 21 - idlen;
  if (rs < 18) fail(`record size ${rs} is below 18 (RFC 8188 2)`);
  if (records > rs) fail(`ciphertext of ${records} bytes spans more than one record of ${rs} (RFC 8291 4)`);
  if (records < 17) fail(`ciphertext of ${records} bytes cannot hold a tag and a delimiter`);
  return { salt: body.subarray(0, 16), rs, keyid };
}

function decrypt() {
  const input = readInput();
  if (typeof input.body !== "string") fail("body (standard base64) is missing");
  const body = Buffer.from(input.body, "base64");
  const header = parseHeader(body);
  const ecdh = userAgentKey(input);
  let plain;
  try {
    plain = httpEce().decrypt(body, {
      version: "aes128gcm",
      privateKey: ecdh,
      authSecret: b64url(fromB64url(input.auth, "auth")),
    });
  } catch (e) {
    if (e instanceof Failure) throw e;
    fail(`decryption failed: ${e.message}`);
  }
  const text = new TextDecoder("utf-8", { fatal: true });
  let plaintext;
  try {
    plaintext = text.decode(plain);
  } catch {
    fail("the plaintext is not UTF-8");
  }
  return { plaintext, rs: header.rs, keyid: b64url(header.keyid), salt: b64url(header.salt) };
}

// An application server's side, only so the self-test can round-trip.
function encrypt() {
  const input = readInput();
  const ecdh = crypto.createECDH(CURVE);
  ecdh.generateKeys();
  const body = httpEce().encrypt(Buffer.from(String(input.plaintext), "utf8"), {
    version: "aes128gcm",
    privateKey: ecdh,
    dh: b64url(publicPoint(fromB64url(input.p256dh, "p256dh"), "p256dh")),
    authSecret: b64url(fromB64url(input.auth, "auth")),
  });
  return { body: body.toString("base64") };
}

// "vapid t=<jwt>, k=<key>" (RFC 8292 3); auth-params in any order, each
// once, a value a token or a quoted string (RFC 9110 11.2).
function parseAuthorization(value) {
  if (typeof value !== "string") fail("no Authorization header");
  const m = /^vapid[ ]+(.*)$/i.exec(value);
  if (!m) fail(`the scheme is not vapid: ${JSON.stringify(value.slice(0, 40))}`);
  const params = {};
  for (const part of m[1].split(",")) {
    const p = /^[ \t]*([A-Za-z]+)[ \t]*=[ \t]*(?:"([^"\\]*)"|([A-Za-z0-9._~+/=-]+))[ \t]*$/.exec(part);
    if (!p) fail(`a malformed auth-param: ${JSON.stringify(part)}`);
    const name = p[1].toLowerCase();
    if (name in params) fail(`the parameter ${name} appears twice`);
    params[name] = p[2] ?? p[3];
  }
  if (!params.t) fail("no t= (the JWT)");
  if (!params.k) fail("no k= (the public key)");
  return params;
}

function jsonPart(text, what) {
  let value;
  try {
    value = JSON.parse(fromB64url(text, what).toString("utf8"));
  } catch (e) {
    if (e instanceof Failure) throw e;
    fail(`the JWT's ${what} is not JSON`);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    fail(`the JWT's ${what} is not a JSON object`);
  }
  return value;
}

function publicKeyObject(point) {
  try {
    return crypto.createPublicKey({
      format: "jwk",
      key: { kty: "EC", crv: "P-256", x: b64url(point.subarray(1, 33)), y: b64url(point.subarray(33)) },
    });
  } catch (e) {
    fail(`k is not a point on P-256: ${e.message}`);
  }
}

function checkClaims(claims, endpoint, now) {
  let origin;
  try {
    origin = new URL(endpoint).origin;
  } catch {
    fail(`the endpoint is not a URL: ${JSON.stringify(endpoint)}`);
  }
  if (claims.aud !== origin) fail(`aud ${JSON.stringify(claims.aud)} is not the endpoint's origin ${origin}`);
  if (!Number.isInteger(claims.exp)) fail(`exp ${JSON.stringify(claims.exp)} is not an integer`);
  if (claims.exp <= now) fail(`exp ${claims.exp} is not after now ${now}: expired`);
  if (claims.exp > now + DAY) fail(`exp ${claims.exp} is more than 24 hours after now ${now}`);
  if (typeof claims.sub !== "string") fail("no sub (the contact)");
  if (!/^(mailto:[^@\s]+@[^@\s]+|https:\/\/[^\s]+)$/.test(claims.sub)) {
    fail(`sub ${JSON.stringify(claims.sub)} is not a mailto: or https: URI`);
  }
}

function checkVapid(input) {
  const params = parseAuthorization(input.authorization);
  const point = publicPoint(fromB64url(params.k, "k"), "k");
  const parts = params.t.split(".");
  if (parts.length !== 3) fail(`the JWT has ${parts.length} parts, not 3`);
  const header = jsonPart(parts[0], "header");
  if (header.typ !== "JWT") fail(`the JWT's typ is ${JSON.stringify(header.typ)}, not "JWT"`);
  if (header.alg !== "ES256") fail(`the JWT's alg is ${JSON.stringify(header.alg)}, not "ES256"`);
  const claims = jsonPart(parts[1], "claims");
  const signature = fromB64url(parts[2], "signature");
  if (signature.length !== 64) fail(`the signature is ${signature.length} bytes, not JOSE's 64 (r||s)`);
  const signed = crypto.verify("sha256", Buffer.from(`${parts[0]}.${parts[1]}`, "ascii"),
    { key: publicKeyObject(point), dsaEncoding: "ieee-p1363" }, signature);
  if (!signed) fail("the ES256 signature does not verify against k");
  const now = input.now === undefined ? Math.floor(Date.now() / 1000) : input.now;
  if (!Number.isFinite(now)) fail(`now ${JSON.stringify(input.now)} is not a number`);
  checkClaims(claims, input.endpoint, now);
  return { ok: true, aud: claims.aud, exp: claims.exp, sub: claims.sub, k: params.k };
}

function vapid() {
  const input = readInput();
  try {
    return checkVapid(input);
  } catch (e) {
    if (!(e instanceof Failure)) throw e;
    process.stdout.write(JSON.stringify({ ok: false, why: e.message }) + "\n");
    process.exit(1);
  }
}

// A token with a fresh key, for the self-test to prove the checks above:
// the claims and header are taken as given so that broken ones can be made.
function sign() {
  const input = readInput();
  const { privateKey, publicKey } = crypto.generateKeyPairSync("ec", { namedCurve: "P-256" });
  const jwk = publicKey.export({ format: "jwk" });
  const k = b64url(Buffer.concat([Buffer.from([4]), fromB64url(jwk.x, "x"), fromB64url(jwk.y, "y")]));
  const part = (obj) => b64url(Buffer.from(JSON.stringify(obj), "utf8"));
  const unsigned = `${part(input.header ?? { typ: "JWT", alg: "ES256" })}.${part(input.claims ?? {})}`;
  const signature = crypto.sign("sha256", Buffer.from(unsigned, "ascii"),
    { key: privateKey, dsaEncoding: "ieee-p1363" });
  const jwt = `${unsigned}.${b64url(signature)}`;
  return { authorization: `vapid t=${jwt}, k=${k}`, k, jwt };
}

function check() {
  const version = httpEceVersion();
  if (!version) httpEce();
  return { ok: true, node: process.version, http_ece: version };
}

const COMMANDS = { keys, decrypt, encrypt, vapid, sign, check };

function main() {
  const name = process.argv[2];
  const command = COMMANDS[name];
  if (!command) {
    process.stderr.write(`usage: webpush_tool.mjs ${Object.keys(COMMANDS).join("|")}\n`);
    process.exit(2);
  }
  try {
    process.stdout.write(JSON.stringify(command()) + "\n");
  } catch (e) {
    process.stderr.write(`webpush_tool ${name}: ${e instanceof Failure ? e.message : e.stack}\n`);
    process.exit(1);
  }
}

main();
