"""6. Several nodes on PostgreSQL: the relay (requests per second, p50 and
p99 at 1 and 50 connections) and sign-ins per second (50 connections),
with the state in SQLite (the floor: one node, today's default), in a
private PostgreSQL with one node, and with two nodes sharing it (two
lighttpd with their responders on the same machine, the load split
between them, their rates summed and the worse latencies kept). Runs are
interleaved, so drift hits every side. PostgreSQL runs on the same cores,
over its Unix socket, fsync off (tests/harness/postgres.py): the
database's cost, not the disk's."""

import os
import secrets
import threading

import fronts
from common import fb, log, median_runs, wrk_meter

CONNS = (1, 50)
SIGNIN_CONNS = 50


def sites(tmp, up, pg_uri):
    """The three sides' stacks: sqlite, pg, and pg2 (two nodes, one
    secret, as an operator copies it)."""
    secret = secrets.token_hex(32) + "\n"
    out = {"sqlite": [fronts.site(os.path.join(tmp, "sqlite"), up)],
           "pg": [fronts.site(os.path.join(tmp, "pg"), up,
                              {"state_db": pg_uri, "node_name": "bench-pg"})],
           "pg2": [fronts.site(os.path.join(tmp, f"pg2-{n}"), up,
                               {"state_db": pg_uri, "node_name": f"bench-{n}"})
                   for n in ("a", "b")]}
    for st in [s for v in out.values() for s in v]:
        path = os.path.join(st.root, "secret")
        with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
            f.write(secret)
    return out


class Side:
    """One side under load: its nodes' fronts, each with its wrk script."""

    def __init__(self, name, fronts_, tmp, path, body):
        self.name, self.fronts, self.path = name, fronts_, path
        self.luas = []
        for i, f in enumerate(fronts_):
            cookie = fb.sign_in(f.port) if path == "/api/jmap" else None
            if cookie:
                fb.check_jmap(f.port, path, cookie)
            self.luas.append(fb.write_lua(os.path.join(tmp, f"{name}-{i}-{path[5:9]}.lua"),
                                          body, cookie))
        self.runs = {}

    def once(self, conns, duration):
        """One run: conns split over the nodes, at the same time (one
        connection goes to the first node alone)."""
        n = min(len(self.fronts), conns)
        res = [None] * n

        def one(i):
            meter = wrk_meter(self.fronts[i].cpu_groups(
                "postern-jmap" if self.path == "/api/jmap" else "postern-auth"))()
            res[i] = fb.wrk(self.fronts[i].url + self.path, self.luas[i],
                            max(1, conns // n), 1 if conns // n <= 1 else 2, duration,
                            meter if n == 1 else None)
        th = [threading.Thread(target=one, args=(i,)) for i in range(n)]
        if n > 1:
            fb.wait_quiet()
        for t in th:
            t.start()
        for t in th:
            t.join()
        r = dict(res[0])
        if n > 1:
            r["rps"] = sum(x["rps"] for x in res)
            r["requests"] = sum(x["requests"] for x in res)
            for k in ("p50", "p99", "max"):
                r[k] = max(x[k] for x in res)
            r["non2xx"] = sum(x["non2xx"] for x in res)
            r["errors"] = sum(x["errors"] for x in res)
            r["cpu_us_per_req"] = {}
        log(f"  {self.name} {self.path} c{conns}: {r['rps']:,.0f}/s p50 {r['p50'] / 1000:.2f} ms "
            f"p99 {r['p99'] / 1000:.2f} ms non-2xx {r['non2xx']} errors {r['errors']}")
        self.runs.setdefault(str(conns), []).append(r)

    def medians(self):
        return {c: median_runs(rs) for c, rs in self.runs.items()}


def connections(pg):
    """Backends connected to the database (the nodes' responders keep one
    each once they have served; pushd, not run here, keeps three)."""
    out = pg.psql("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                  " AND pid <> pg_backend_pid()")
    return int(out or 0)


def run(args, tmp):
    import postgres
    if not postgres.available():
        raise RuntimeError("PostgreSQL is not installed (bench/deps installs it)")
    procs = fb.Procs()
    pg = postgres.Postgres()
    started = []
    res = {"conns": list(CONNS), "signin_conns": SIGNIN_CONNS, "sides": {}}
    try:
        pg.start()
        standin, sport = fb.start_standin(tmp, procs)
        st = sites(tmp, f"http://127.0.0.1:{sport}", pg.uri)
        fr = {}
        for name, stacks in st.items():
            fr[name] = [fronts.start_lighttpd(s, jmap=2, auth=2) for s in stacks]
            started += fr[name]
        relay = {n: Side(n, f, tmp, "/api/jmap", fb.JMAP_BODY) for n, f in fr.items()}
        signin = {n: Side(n, f, tmp, "/api/auth/login", fb.LOGIN_BODY) for n, f in fr.items()}
        for s in list(relay.values()) + list(signin.values()):
            for f, lua in zip(s.fronts, s.luas):
                fb.wrk(f.url + s.path, lua, 10, 2, 1)
        for c in CONNS:
            for _ in range(args.runs):
                for s in relay.values():
                    s.once(c, args.duration)
        for _ in range(args.runs):
            for s in signin.values():
                s.once(SIGNIN_CONNS, args.duration)
        # Three nodes on PostgreSQL: pg, and pg2's two.
        res["connections"] = connections(pg)
        res["nodes_on_pg"] = 3
        for n in relay:
            res["sides"][n] = {"relay": relay[n].medians(), "signin": signin[n].medians()}
    finally:
        for f in started:
            f.stop()
        procs.stop_all()
        pg.stop()
    return res
