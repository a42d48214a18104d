"""4. The app's files: what the first (cold) load of the app costs — the
files www/index.html pulls in, how many bytes cross the wire with gzip —
and requests per second for them through postern's lighttpd configuration
(mod_deflate, security headers), against a plain lighttpd serving the same
files and a plain 2 KB file."""

import os
import re

import fronts
from common import TOP, fb, log, median_runs, wrk_meter

WWW = os.path.join(TOP, "www")
REFS = (r'(?:href|src)="([^"#?]+)"', r'\bimport\s[^"\';]*?["\']([^"\']+)["\']',
        r'\bimport\s*["\']([^"\']+)["\']', r'\bimport\(\s*["\']([^"\']+)["\']')


def cold_files(www=WWW):
    """Paths the browser fetches on a first visit: index.html, what it
    links (styles, module preloads, scripts), the modules they import, and
    the English strings (js/i18n.js fetches i18n/<lang>.json)."""
    seen, todo = [], ["index.html"]
    while todo:
        rel = todo.pop(0)
        if rel in seen or not os.path.isfile(os.path.join(www, rel)):
            continue
        seen.append(rel)
        if not rel.endswith((".html", ".js")):
            continue
        with open(os.path.join(www, rel), errors="replace") as f:
            text = f.read()
        for pat in REFS:
            for ref in re.findall(pat, text):
                if re.match(r"^[a-z]+:", ref) or ref.startswith("//"):
                    continue
                path = os.path.normpath(os.path.join(os.path.dirname(rel), ref))
                if not path.startswith(".."):
                    todo.append(path)
    if os.path.isfile(os.path.join(www, "i18n", "en.json")):
        seen.append("i18n/en.json")
    return seen


def lua_for(path, paths, gzip):
    request = (
        "paths = {" + ", ".join(fb.lua_string("/" + p) for p in paths) + "}\n"
        "i = 0\n"
        'request = function()\n  i = i % #paths + 1\n  return wrk.format("GET", paths[i])\nend\n'
        + ('wrk.headers["Accept-Encoding"] = "gzip, deflate"\n' if gzip else ""))
    with open(path, "w") as f:
        f.write(fb.WRK_LUA % {"request": request, "cookie": ""})
    return path


def wire(port, paths, gzip):
    """Bytes on the wire (head + body) and of bodies for one visit."""
    h = {"Accept-Encoding": "gzip, deflate"} if gzip else {}
    total = body = 0
    for p in paths:
        status, hdrs, data, raw = fb.http(port, "GET", "/" + p, headers=h)
        if status != 200:
            raise RuntimeError(f"/{p} answered {status}")
        total, body = total + raw, body + len(data)
    return total, body


def run(args, tmp):
    paths = cold_files()
    log(f"static: {len(paths)} files on a cold load: {', '.join(paths)}")
    st = fronts.site(os.path.join(tmp, "site"), "http://127.0.0.1:9")
    started = []
    try:
        post = fronts.start_lighttpd(st)
        started.append(post)
        plain = fronts.start_lighttpd_static(tmp, WWW)
        started.append(plain)
        res = {"files": paths,
               "sizes": {p: os.path.getsize(os.path.join(WWW, p)) for p in paths}}
        res["wire_gzip"], res["body_gzip"] = wire(post.port, paths, True)
        res["wire_identity"], res["body_identity"] = wire(post.port, paths, False)
        res["wire_plain"], res["body_plain"] = wire(plain.port, paths, False)
        sides = {
            "postern": (post, lua_for(os.path.join(tmp, "p.lua"), paths, True)),
            "plain": (plain, lua_for(os.path.join(tmp, "f.lua"), paths, True)),
        }
        # The plain file: the app file nearest 2 KB, served as it is (a
        # file of our own would have to go into the app's folder).
        small = min(paths, key=lambda p: abs(res["sizes"][p] - 2048))
        sides["plain_2k"] = (plain, lua_for(os.path.join(tmp, "f2.lua"), [small], False))
        res["small_file"], res["small_size"] = small, res["sizes"][small]
        runs = {k: [] for k in sides}
        for f, lua in sides.values():
            fb.wrk(f.url + "/", lua, 10, 2, 1)
        for _ in range(args.runs):
            for k, (f, lua) in sides.items():
                r = fb.wrk(f.url + "/", lua, 50, 2, args.duration, wrk_meter(f.cpu_groups())())
                log(f"  {k}: {r['rps']:,.0f} req/s, {r['bytes_per_req']:,.0f} B/answer, "
                    f"lighttpd {r['cpu_us_per_req']['front']:.1f} µs/req, "
                    f"non-2xx {r['non2xx']} errors {r['errors']}")
                runs[k].append(r)
        res["load"] = {k: median_runs(v) for k, v in runs.items()}
    finally:
        for f in started:
            f.stop()
    return res
