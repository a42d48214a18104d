#!/usr/bin/env python3
"""Self-test of the Web Push test tools (TAP, a few seconds, no root):
webpush_tool.mjs against the RFCs' own examples, then pushservice.py
receiving an encrypted push over HTTPS that the tool decrypts again, the
VAPID checks refusing what they must, and the programmed answers (410,
429, the body cap, a hang that holds no other path).

    python3 tests/harness/webpush_selftest.py

Skips (1..0 # SKIP) where node or the http_ece package (npm ci) is missing.
"""

import base64
import json
import os
import ssl
import sys
import threading
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import pushservice  # noqa: E402
from pushservice import PushService, WebPushToolError  # noqa: E402
from tap import Tap  # noqa: E402

# RFC 8291 appendix A: a push message encrypted by someone else's code.
RFC8291 = {
    "private": "q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94",
    "p256dh": "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4",
    "auth": "BTBZMqHH6r4Tts7J_aSIgg",
    "body": "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6"
            "TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN",
    "plaintext": "When I grow up, I want to be a watermelon",
}
# RFC 8292's example header: a signature that is not ours either.
RFC8292 = {
    "authorization": "vapid t=eyJ0eXAiOiJKV1QiLCJhbGciOiJFUzI1NiJ9.eyJhdWQiOiJodHRwczovL3B1c2guZXhhbXBsZS5uZXQi"
                     "LCJleHAiOjE0NTM1MjM3NjgsInN1YiI6Im1haWx0bzpwdXNoQGV4YW1wbGUuY29tIn0.i3CYb7t4xfxCDquptFOepC9GAu_H"
                     "LGkMlMuCGSK2rpiUfnK9ojFwDXb1JrErtmysazNjjvW2L9OkSSHzvoD1oA, "
                     "k=BA1Hxzyi1RUM1b5wjxsn7nGxAszw2u61m164i3MrAIxHF6YK5h4SDYic-dRuU_RCPCfA5aq9ojSwk5Y2EmClBPs",
    "endpoint": "https://push.example.net/push/JzLQ3raZJfFBR0aqvOMsLrt54w4rJUsV",
    "exp": 1453523768,
}


def unb64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def post(ps, path, body, headers=None, timeout=10):
    """(status, headers) of a POST over HTTPS that trusts only the test CA."""
    context = ssl.create_default_context(cafile=ps.ca_file)
    req = urllib.request.Request(ps.url(path), data=body, method="POST",
                                 headers={"Content-Type": "application/octet-stream", **(headers or {})})
    try:
        with urllib.request.urlopen(req, context=context, timeout=timeout) as resp:
            return resp.status, dict(resp.headers)
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers)


def rfc_examples(t):
    got = pushservice.decrypt(RFC8291, unb64url(RFC8291["body"]))
    t.eq(got, RFC8291["plaintext"], "decrypt: RFC 8291 appendix A")
    verdict = pushservice.verify_vapid(RFC8292["authorization"], RFC8292["endpoint"],
                                       now=RFC8292["exp"] - 600)
    t.ok(verdict.get("ok") and verdict["aud"] == "https://push.example.net"
         and verdict["sub"] == "mailto:push@example.com", "vapid: RFC 8292's example verifies", verdict)
    verdict = pushservice.verify_vapid(RFC8292["authorization"], RFC8292["endpoint"])
    t.ok(verdict == {"ok": False, "why": verdict.get("why")} and "expired" in verdict["why"],
         "vapid: the same, today, is expired", verdict)


def keys_shape(t, keys):
    p256dh, auth, private = (unb64url(keys[k]) for k in ("p256dh", "auth", "private"))
    t.ok(len(p256dh) == 65 and p256dh[0] == 4, "keys: p256dh is an uncompressed P-256 point")
    t.eq((len(auth), len(private)), (16, 32), "keys: auth 16 bytes, private 32")
    t.ok(subscriber_differs(keys), "keys: fresh each time")


def subscriber_differs(keys):
    other = pushservice.subscriber_keys()
    return other["p256dh"] != keys["p256dh"] and other["auth"] != keys["auth"]


def round_trip(t, ps, keys):
    text = "From: Zoë <zoe@example.test>\nSubject: naïve café ☕"
    body = pushservice.encrypt(keys, text)
    status, headers = post(ps, "/push/a", body, {"TTL": "60", "Urgency": "normal",
                                                  "Content-Encoding": "aes128gcm",
                                                  "Authorization": "vapid t=x, k=y"})
    t.eq(status, 201, "service: 201 by default")
    t.ok(headers.get("Location", "").startswith(ps.origin + "/message/"), "service: a Location", headers)
    got = ps.wait(1, 5, path="/push/a")
    t.eq(len(got), 1, "service: the push is recorded")
    r = got[0]
    t.eq((r.method, r.path, r.body, r.status), ("POST", "/push/a", body, 201), "service: method, path, body, status")
    t.eq({k: r.headers.get(k) for k in ("ttl", "urgency", "content-encoding", "authorization", "content-length")},
         {"ttl": "60", "urgency": "normal", "content-encoding": "aes128gcm",
          "authorization": "vapid t=x, k=y", "content-length": str(len(body))},
         "service: headers recorded under lower-case names")
    t.ok(abs(r.time - time.time()) < 10 and r.monotonic <= time.monotonic(), "service: times recorded")
    t.eq(pushservice.decrypt(keys, r.body), text, "decrypt: what the service received, UTF-8 intact")
    info = pushservice.decrypt_info(keys, r.body)
    t.ok(len(unb64url(info["keyid"])) == 65 and info["rs"] >= 18, "decrypt: reports keyid and rs", info)
    wrong = dict(keys, auth=pushservice.subscriber_keys()["auth"])
    t.ok(raises(lambda: pushservice.decrypt(wrong, r.body), "decryption failed"),
         "decrypt: refuses another auth secret")
    t.ok(raises(lambda: pushservice.decrypt(keys, r.body[:-1]), ""), "decrypt: refuses a cut body")


def raises(fn, text):
    try:
        fn()
    except WebPushToolError as e:
        return text in str(e)
    return False


def valid_claims(aud, now):
    return {"aud": aud, "exp": now + 12 * 3600, "sub": "mailto:postmaster@example.test"}


def vapid_checks(t, ps):
    endpoint = ps.url("/push/v")
    now = int(time.time())
    good = pushservice.sign_vapid(valid_claims(ps.origin, now))
    verdict = pushservice.verify_vapid(good["authorization"], endpoint)
    t.ok(verdict.get("ok") and verdict["aud"] == ps.origin and verdict["k"] == good["k"],
         "vapid: a valid token passes", verdict)
    auth, jwt, k = good["authorization"], good["jwt"], good["k"]
    other_k = pushservice.sign_vapid({})["k"]
    head, claims, sig = jwt.split(".")
    flipped = ("A" if sig[0] != "A" else "B") + sig[1:]
    # Each with the reason it must be refused for, so that none passes by
    # failing an earlier check.
    bad = {
        "malformed: another scheme": (f"WebPush {jwt}", "scheme"),
        "malformed: no k": (f"vapid t={jwt}", "no k="),
        "malformed: no t": (f"vapid k={k}", "no t="),
        "malformed: t twice": (f"vapid t={jwt}, t={jwt}, k={k}", "twice"),
        "malformed: two parts": (f"vapid t={head}.{claims}, k={k}", "2 parts"),
        "malformed: padded base64": (f"vapid t={jwt}, k={k}=", "base64url"),
        "a tampered signature": (f"vapid t={head}.{claims}.{flipped}, k={k}", "signature"),
        "another key": (f"vapid t={jwt}, k={other_k}", "signature"),
    }
    for name, (header, why) in bad.items():
        reject(t, name, pushservice.verify_vapid(header, endpoint), why)
    signed = {
        "a wrong audience (another port)": (valid_claims(f"https://127.0.0.1:{ps.port + 1}", now), "aud"),
        "a wrong audience (with the path)": (valid_claims(endpoint, now), "aud"),
        "an expired token": (dict(valid_claims(ps.origin, now), exp=now - 5), "expired"),
        "exp over 24 h ahead": (dict(valid_claims(ps.origin, now), exp=now + 24 * 3600 + 60), "24 hours"),
        "no sub": ({"aud": ps.origin, "exp": now + 3600}, "no sub"),
        "sub not mailto/https": (dict(valid_claims(ps.origin, now), sub="http://example.test/"), "sub"),
    }
    for name, (c, why) in signed.items():
        reject(t, name, pushservice.verify_vapid(pushservice.sign_vapid(c)["authorization"], endpoint), why)
    hs = pushservice.sign_vapid(valid_claims(ps.origin, now), header={"typ": "JWT", "alg": "HS256"})
    reject(t, "alg not ES256", pushservice.verify_vapid(hs["authorization"], endpoint), "alg")
    later = pushservice.verify_vapid(auth, endpoint, now=now + 13 * 3600)
    reject(t, "the valid token, 13 h later", later, "expired")


def reject(t, name, verdict, why):
    t.ok(verdict.get("ok") is False and why in verdict.get("why", ""), f"vapid: rejects {name}", verdict)


def behaviours(t, ps):
    ps.set("/gone", status=410)
    t.eq(post(ps, "/gone", b"x")[0], 410, "set(410): answers 410")
    ps.set("/busy", status=429)
    status, headers = post(ps, "/busy", b"x")
    t.eq((status, headers.get("Retry-After")), (429, "1"), "set(429): with Retry-After: 1")
    ps.set("/busy", status=429, headers={"Retry-After": None})
    t.ok("Retry-After" not in post(ps, "/busy", b"x")[1], "set(429, Retry-After None): without it")
    ps.set("/broken", status=500)
    t.eq(post(ps, "/broken", b"x")[0], 500, "set(500): answers 500")
    t.eq(post(ps, "/big", b"x" * (pushservice.BODY_MAX + 1))[0], 413, "a body over the cap: 413")
    t.eq(ps.requests("/big")[0].status, 413, "the refused one is recorded too")
    ps.set("/slow", delay=0.5)
    start = time.monotonic()
    post(ps, "/slow", b"x")
    t.ok(time.monotonic() - start >= 0.5, "set(delay=0.5): answers after it")
    t.eq(ps.wait(1, 0.3, path="/nothing"), [], "wait(): [] when nothing came")


def hang_check(t, ps):
    ps.set("/hang", hang=True)
    outcome = []
    hung = threading.Thread(target=lambda: outcome.append(try_post(ps, "/hang")), daemon=True)
    hung.start()
    t.eq(len(ps.wait(1, 5, path="/hang")), 1, "hang: the request arrives")
    start = time.monotonic()
    status = post(ps, "/push/other", b"x", timeout=5)[0]
    t.ok(status == 201 and time.monotonic() - start < 2, "hang: another path is answered meanwhile")
    t.ok(hung.is_alive() and ps.requests("/hang")[0].status is None, "hang: still unanswered")
    ps.close()
    hung.join(5)
    t.ok(not hung.is_alive() and outcome and outcome[0] != 201,
         "hang: close() ends it without an answer", outcome)


def try_post(ps, path):
    try:
        return post(ps, path, b"x", timeout=30)[0]
    except OSError as e:
        return repr(e)


def main():
    why = pushservice.tool_unavailable()
    if why:
        print(f"1..0 # SKIP {why}")
        return 0
    t = Tap()
    t.run("RFC examples", rfc_examples, t)
    keys = pushservice.subscriber_keys()
    t.run("keys", keys_shape, t, keys)
    with PushService() as ps:
        t.ok(os.path.exists(ps.ca_file), "service: its CA file exists")
        t.run("round trip", round_trip, t, ps, keys)
        t.run("vapid", vapid_checks, t, ps)
        t.run("behaviours", behaviours, t, ps)
        t.run("hang", hang_check, t, ps)
    t.ok(not os.path.exists(ps.root), "service: its folder removed at close")
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
