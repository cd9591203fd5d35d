#!/usr/bin/env python3
"""Search as a person or an agent meets it: a new `agent-memory search` process per query, and
the server's `/api/search`, on a store that is already built.

Usage: bench/front_door_search.py BINARY HOME [QUERIES_PER_BAND]

HOME is an agent-memory home, such as the one the recall benchmark keeps with `BENCH_HOME`
(200,000 observations and a million events with `BENCH_OBSERVATIONS=200000
BENCH_OBSERVATIONS_LARGE=0`). Its configuration decides the models, as a user's does. Queries of
one to three words are drawn (fixed seed) from the words of every twentieth observation's title,
in three bands of how many titles hold them: the 40 most common, ranks 100-6,000, and the rarer
half. Each band is asked once through the CLI (`search WORDS --limit 10 --json`, from a
directory outside any project) and twice through a server started here (`serve --detach
--no-worker --port 0`, `/api/search?limit=10` with the home's token), after three queries to warm
up. Also timed: `--version` (the process floor) and a search that matches nothing (the floor with
the store opened). Prints p50 / p95 per band; wall time of the whole process for the CLI, of the
request for the server. Figures depend on the machine's load: compare runs taken together.
"""

import json
import os
import random
import re
import sqlite3
import statistics
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections import Counter

STOP = {"the", "and", "for", "with", "from", "this", "that", "src"}


def bands_of(home, per_band):
    db = sqlite3.connect(f"file:{os.path.join(home, 'memory.db')}?mode=ro", uri=True)
    counts = Counter()
    for (title,) in db.execute("SELECT title FROM observations WHERE id % 20 = 0"):
        counts.update(set(re.findall(r"[a-z][a-z_]{2,}", title.lower())) - STOP)
    words = [w for w, _ in counts.most_common()]
    if len(words) < 200:
        sys.exit(f"{home} holds too few observations to draw queries from; build it first")
    rng = random.Random(7)
    spans = {"common": (0, 40), "mid": (100, min(6000, len(words) // 2)),
             "rare": (len(words) // 2, len(words))}
    return {name: [" ".join(words[lo + rng.randrange(hi - lo)] for _ in range(1 + rng.randrange(3)))
                   for _ in range(per_band)]
            for name, (lo, hi) in spans.items()}


def p50_p95(times):
    times = sorted(times)
    return statistics.median(times), times[min(len(times) - 1, int(0.95 * len(times)))]


def main(binary, home, per_band):
    env = dict(os.environ, AGENT_MEMORY_HOME=home)

    def cli(args):
        started = time.perf_counter()
        done = subprocess.run([binary, *args], env=env, cwd="/", capture_output=True)
        took = (time.perf_counter() - started) * 1000
        if done.returncode != 0:
            sys.exit(f"{' '.join(args)} failed: {done.stderr.decode(errors='replace')[:300]}")
        return took

    def search(query):
        return cli(["search", *query.split(), "--limit", "10", "--json"])

    bands = bands_of(home, per_band)
    rows = {"--version": p50_p95([cli(["--version"]) for _ in range(20)]),
            "CLI, no match": p50_p95([search("zzqqxx") for _ in range(20)])}
    for name, queries in bands.items():
        for query in queries[:3]:
            search(query)
        rows[f"CLI, {name} words"] = p50_p95([search(q) for q in queries])

    started = json.loads(subprocess.run(
        [binary, "serve", "--detach", "--no-worker", "--port", "0", "--json"],
        env=env, capture_output=True, check=True).stdout)
    try:
        token = open(os.path.join(home, "serve.token")).read().strip()

        def ask(query):
            url = started["url"] + "/api/search?" + urllib.parse.urlencode({"q": query, "limit": 10})
            request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
            began = time.perf_counter()
            urllib.request.urlopen(request).read()
            return (time.perf_counter() - began) * 1000

        for name, queries in bands.items():
            for query in queries[:3]:
                ask(query)
            rows[f"HTTP, {name} words"] = p50_p95([ask(q) for q in queries * 2])
        with open(f"/proc/{started['pid']}/status") as status:
            peak = next(line.split()[1] for line in status if line.startswith("VmHWM"))
    finally:
        subprocess.run([binary, "serve", "--stop"], env=env, capture_output=True)
    print("| | p50 ms | p95 ms |")
    print("|---|---|---|")
    for name, (p50, p95) in rows.items():
        print(f"| {name} | {p50:.1f} | {p95:.1f} |")
    print(f"server peak RSS {int(peak) / 1024:.0f} MB")


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 40)
