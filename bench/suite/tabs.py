"""2. Held tabs: memory per held event stream (pushd, lighttpd, kernel)
from 1,000 streams up, against the same lighttpd in front of a do-nothing
SSE server (bench/ssefloor.c), and the time one change takes to reach
every stream. bench/streams.py does the measuring; this runs its series."""

import streams
from common import log


def run(args, tmp):
    log(f"held streams at N = {', '.join(map(str, args.streams))} ...")
    series = []
    for rf, rp in streams.measure(args.streams, args.builddir):
        series.append({"n": rf["n"], "floor": rf, "pushd": rp})
    return {"series": series, "warm": streams.WARM}
