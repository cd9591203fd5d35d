#!/usr/bin/env python3
"""agent-memory beside claude-mem: the same synthetic corpus in both stores, the same
operations timed alternately in one run. Started by run.sh, which installs claude-mem and bun
and passes their paths in the environment; standard library only."""

import http.client
import json
import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

AM_BIN = os.environ["AGENT_MEMORY_BIN"]
PLUGIN = Path(os.environ["CLAUDE_MEM_PLUGIN"])
BUN_DIR = os.environ["BUN_DIR"]
WORK = Path(os.environ["BENCH_WORK"])
SESSIONS = int(os.environ.get("BENCH_SESSIONS", "2000"))
RUNS = int(os.environ.get("BENCH_RUNS", "100"))
SEED = int(os.environ.get("BENCH_SEED", "20261204"))
TURNS = 12  # a turn is ten events here and two observations there
BASE_MS = 1_792_022_400_000  # 2026-10-15 UTC: fixed, so every run builds the same stores
SPACING_MS = 30 * 60_000

AREAS = ("payment webhook login session cache invoice search index upload export billing "
         "schema migration queue worker scheduler router token config parser renderer tenant "
         "report audit metrics logger checkout cart inventory shipping email notification "
         "profile permission sitemap thumbnail locale timezone backup").split()
ASPECTS = ("timeout race leak overflow deadlock regression panic encoding pagination "
           "validation ordering rounding eviction expiry handshake redirect escaping "
           "truncation rollback flakiness latency duplicate drift").split()
PROJECTS = ["atlas", "borealis", "cobalt", "delta-api", "ember", "fjord", "granite", "helix"]
SYLLABLES = "ka ve ro li mu sa te no zi pa qu fe ga hi ju lo".split()

# Claude Code's PostToolUse and SessionStart payloads, as recorded from the real CLI.
POST_TOOL_USE = {"session_id": "", "transcript_path": "", "cwd": "", "permission_mode": "default",
                 "hook_event_name": "PostToolUse", "tool_name": "Bash",
                 "tool_input": {"command": "", "description": "Run the tests"},
                 "tool_response": {"stdout": "", "stderr": "", "interrupted": False,
                                   "isImage": False, "noOutputExpected": False},
                 "tool_use_id": "", "duration_ms": 100}


def pseudo(rng, n=3):
    return "".join(rng.choice(SYLLABLES) for _ in range(n))


def zipf_pick(rng, items, s=1.1):
    weights = [1 / (i + 1) ** s for i in range(len(items))]
    return rng.choices(items, weights)[0]


def corpus():
    """Sessions as plain data; both stores are written from this and only this."""
    rng = random.Random(SEED)
    topics = [(a, b) for a in AREAS for b in ASPECTS]
    rng.shuffle(topics)  # Zipf over a shuffled list: some topics recur often, most rarely
    modules = {p: [pseudo(rng) for _ in range(30)] for p in PROJECTS}
    sessions = []
    for s in range(SESSIONS):
        project = zipf_pick(rng, PROJECTS, 1.0)
        turns = []
        for t in range(TURNS):
            area, aspect = zipf_pick(rng, topics)
            turns.append({"area": area, "aspect": aspect, "module": zipf_pick(rng, modules[project]),
                          "ident": pseudo(rng, 4), "decision": t % 3 == 2})
        sessions.append({"n": s, "project": project, "turns": turns,
                         "id": f"{s:08x}-0000-4000-8000-{rng.getrandbits(48):012x}",
                         "start": BASE_MS + s * SPACING_MS})
    return sessions, modules


def turn_texts(t):
    """Words both stores share for one turn."""
    a, b, m, x = t["area"], t["aspect"], t["module"], t["ident"]
    first = f"fix the {a} {b} in {m}"
    second = (f"from now on use the {a} helpers for {b}, because they handle retries"
              if t["decision"] else f"now add a test for the {a} {b}")
    error = f"error[E0425]: cannot find value `{x}` in this scope\n{a} {b} test failed"
    answer = f"Fixed the {a} {b} in {m}: `{x}` was undefined; src/{m}.rs now defines it."
    return first, second, error, answer


# --- agent-memory: a JSONL export, imported, then distilled ---------------------------------

def am_export(path, sessions, projects_dir):
    with open(path, "w") as out:
        def line(kind, data):
            out.write(json.dumps({"type": kind, "data": data}) + "\n")
        line("header", {"format": "agent-memory-export", "version": 1, "exported_at": BASE_MS})
        for p in PROJECTS:
            root = str(projects_dir / p)
            line("project", {"key": f"path:{root}", "name": p, "root": root, "origin": None})
        uid = 0
        for s in sessions:
            root = str(projects_dir / s["project"])
            at = s["start"]

            def event(kind, summary, body, payload, tool=None, tool_kind=None, files=()):
                nonlocal uid, at
                uid += 1
                at += 7_000
                line("event", {"project": f"path:{root}", "content_hash": f"{uid:032x}", "event": {
                    "uid": f"bench-{uid}", "agent": "claude-code", "kind": kind,
                    "source_event": "bench", "session": s["id"], "cwd": root, "at_ms": at,
                    "tool": tool, "tool_kind": tool_kind, "summary": summary, "body": body,
                    "payload": payload, "files": list(files), "sensitivity": "normal",
                    "transcript_path": None}})

            def shell(cmd, output, ok):
                event("tool_use", f"Bash: {cmd}" if ok else f"Bash failed (exit 101): {cmd}",
                      f"{cmd}\n{output}", {"input": {"command": cmd}, "output": output,
                                           "is_error": not ok}, "Bash", "shell")

            def file_tool(tool, kind, path):
                event("tool_use", f"{tool} {path}", path,
                      {"input": {"file_path": path}, "output": "", "is_error": False},
                      tool, kind, [path])

            event("session_start", "Session started", "", {"source": "startup"})
            t0 = s["turns"][0]
            file_tool("Read", "read", f"{root}/src/{t0['module']}.rs")
            event("tool_use", f"Grep {t0['area']}", t0["area"],
                  {"input": {"pattern": t0["area"]}, "output": f"src/{t0['module']}.rs",
                   "is_error": False}, "Grep", "search")
            file_tool("Read", "read", f"{root}/README.md")
            for t in s["turns"]:
                first, second, error, answer = turn_texts(t)
                src, test = f"{root}/src/{t['module']}.rs", f"{root}/tests/{t['module']}_test.rs"
                cmd = f"cargo test -p {t['module']}"
                event("prompt", f"Prompt: {first}", first, {"prompt": first})
                shell(cmd, error, False)
                file_tool("Read", "read", src)
                file_tool("Edit", "edit", src)
                shell(cmd, "test result: ok. 12 passed; 0 failed", True)
                event("prompt", f"Prompt: {second}", second, {"prompt": second})
                file_tool("Write", "write", test)
                shell(cmd, "test result: ok. 13 passed; 0 failed", True)
                file_tool("Read", "read", f"{root}/README.md")
                event("stop", "Turn ended", answer, {"last_message": answer})
            event("session_end", "Session ended", "", {"reason": "exit"})
    return uid


# --- claude-mem: its own tables, written directly ---------------------------------------------

def iso(ms):
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms / 1000)) + f".{ms % 1000:03d}Z"


def cm_seed(db_path, sessions, projects_dir):
    db = sqlite3.connect(db_path)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    obs = 0
    with db:
        for s in sessions:
            p, root, at = s["project"], projects_dir / s["project"], s["start"]
            mem_id = "mem-" + s["id"]
            turns = s["turns"]
            first0 = turn_texts(turns[0])[0]
            end = at + 125 * 7_000
            cur = db.execute(
                "INSERT INTO sdk_sessions (content_session_id, memory_session_id, project, "
                "platform_source, user_prompt, started_at, started_at_epoch, completed_at, "
                "completed_at_epoch, status, prompt_counter) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (s["id"], mem_id, p, "claude", first0, iso(at), at, iso(end), end, "completed",
                 2 * TURNS))
            sdb = cur.lastrowid
            rows, prompts, tools = [], [], []

            def add(kind, title, subtitle, narrative, facts, concepts, read, modified, n, when):
                nonlocal obs
                obs += 1
                rows.append((mem_id, p, kind, title, subtitle, json.dumps(facts), narrative,
                             json.dumps(concepts), json.dumps(read), json.dumps(modified), n,
                             iso(when), when, 180 + obs % 900, f"{obs:016x}", "claude-sonnet"))

            t0 = turns[0]
            add("discovery", f"How {t0['module']} handles {t0['area']}",
                f"{t0['area']} lives in src/{t0['module']}.rs",
                f"Reading src/{t0['module']}.rs and searching for {t0['area']} shows where the "
                f"{t0['area']} code of {p} lives.", [f"{t0['area']} is handled in {t0['module']}"],
                ["how-it-works"], [f"src/{t0['module']}.rs", "README.md"], [], 1, at + 21_000)
            for i, t in enumerate(turns):
                a, b, m, x = t["area"], t["aspect"], t["module"], t["ident"]
                first, second, error, _ = turn_texts(t)
                when = at + 28_000 + i * 70_000
                add("bugfix", f"Fixed {a} {b} in {m}",
                    f"cargo test -p {m} failed: cannot find value `{x}`",
                    f"The {a} {b} test in {m} failed with error E0425 (cannot find value `{x}` "
                    f"in this scope). Editing src/{m}.rs fixed it; 12 tests pass.",
                    [f"cargo test -p {m} failed with E0425 on `{x}`",
                     f"src/{m}.rs now defines `{x}`", "12 tests pass after the fix"],
                    ["problem-solution", "gotcha"], [f"src/{m}.rs"], [f"src/{m}.rs"],
                    2 * i + 1, when + 28_000)
                if t["decision"]:
                    add("decision", f"Use the {a} helpers for {b}", f"decided in {m}",
                        f"From now on use the {a} helpers for {b}, because they handle retries.",
                        [f"the {a} helpers handle retries"], ["pattern", "trade-off"], [],
                        [f"tests/{m}_test.rs"], 2 * i + 2, when + 63_000)
                else:
                    add("feature", f"Added a test for the {a} {b}", f"tests/{m}_test.rs",
                        f"A new test in tests/{m}_test.rs covers the {a} {b}; 13 tests pass.",
                        [f"tests/{m}_test.rs covers the {a} {b}"], ["what-changed"], [],
                        [f"tests/{m}_test.rs"], 2 * i + 2, when + 63_000)
                for k, text in ((1, first), (2, second)):
                    prompts.append((sdb, s["id"], 2 * i + k, text, iso(when), when))
                for k, (tool, inp, out) in enumerate((
                        ("Bash", {"command": f"cargo test -p {m}"}, error),
                        ("Read", {"file_path": f"{root}/src/{m}.rs"}, ""),
                        ("Edit", {"file_path": f"{root}/src/{m}.rs"}, ""),
                        ("Bash", {"command": f"cargo test -p {m}"}, "test result: ok"),
                        ("Write", {"file_path": f"{root}/tests/{m}_test.rs"}, ""),
                        ("Bash", {"command": f"cargo test -p {m}"}, "test result: ok"),
                        ("Read", {"file_path": f"{root}/README.md"}, ""))):
                    tools.append((f"toolu_{s['n']}_{i}_{k}", s["id"], mem_id, sdb, p, tool,
                                  json.dumps(inp), json.dumps({"stdout": out}), str(root),
                                  2 * i + 1, iso(when), when + k))
            db.executemany(
                "INSERT INTO observations (memory_session_id, project, type, title, subtitle, "
                "facts, narrative, concepts, files_read, files_modified, prompt_number, "
                "created_at, created_at_epoch, discovery_tokens, content_hash, "
                "generated_by_model) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
            db.executemany(
                "INSERT INTO user_prompts (session_db_id, content_session_id, prompt_number, "
                "prompt_text, created_at, created_at_epoch) VALUES (?,?,?,?,?,?)", prompts)
            db.executemany(
                "INSERT INTO tool_uses (tool_use_id, content_session_id, memory_session_id, "
                "session_db_id, project, tool_name, tool_input, tool_response, cwd, "
                "prompt_number, created_at, created_at_epoch) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                tools)
            areas = sorted({t["area"] + " " + t["aspect"] for t in turns})
            mods = sorted({t["module"] for t in turns})
            db.execute(
                "INSERT INTO session_summaries (memory_session_id, project, request, "
                "investigated, learned, completed, next_steps, files_read, files_edited, notes, "
                "prompt_number, created_at, created_at_epoch, discovery_tokens) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (mem_id, p, first0, "Failing tests in " + ", ".join(mods),
                 "Undefined values broke " + ", ".join(areas),
                 f"Fixed {len(turns)} failures and added tests in " + ", ".join(mods),
                 "Watch the " + areas[0] + " tests", json.dumps([f"src/{m}.rs" for m in mods]),
                 json.dumps([f"src/{m}.rs" for m in mods]), "", 2 * TURNS, iso(end), end, 2400))
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    return obs


# --- processes ---------------------------------------------------------------------------------

STARTED = []  # (Popen) of the servers this script started


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(cmd, env, log):
    proc = subprocess.Popen(cmd, env=env, cwd=WORK, stdout=open(log, "ab"),
                            stderr=subprocess.STDOUT, start_new_session=True)
    STARTED.append(proc)
    with open(WORK / "pids", "a") as f:  # run.sh's trap kills these if we die hard
        f.write(f"{proc.pid}\n")
    return proc


def stop(proc):
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def http_get(port, path, headers=None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", path, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def wait_http(port, path, proc, what, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            sys.exit(f"error: {what} exited with {proc.returncode}; see its log in {WORK}")
        try:
            if http_get(port, path)[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    sys.exit(f"error: {what} did not answer on 127.0.0.1:{port}{path} within {timeout}s")


def rss_kb(pid):
    """VmRSS of a process and its descendants."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            total += int(next(l for l in open(f"/proc/{p}/status") if l.startswith("VmRSS"))
                         .split()[1])
            for task in os.listdir(f"/proc/{p}/task"):
                todo += [int(c) for c in open(f"/proc/{p}/task/{task}/children").read().split()]
        except (OSError, StopIteration):
            pass
    return total


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return (time.perf_counter() - t) * 1000, out


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p * (len(xs) - 1))))]


def main():
    projects_dir = WORK / "projects"
    for p in PROJECTS:
        (projects_dir / p / "src").mkdir(parents=True, exist_ok=True)
    sessions, _ = corpus()
    print(f"corpus: {SESSIONS} sessions x {TURNS} turns, 8 projects, seed {SEED}", flush=True)

    # agent-memory: an isolated home.
    am_home = WORK / "am-home"
    am_env = dict(os.environ, AGENT_MEMORY_HOME=str(am_home), HOME=str(WORK / "am-user"))
    (WORK / "am-user").mkdir()

    def am(*args, **kw):
        return subprocess.run([AM_BIN, *args], env=am_env, cwd=WORK, check=True,
                              capture_output=True, **kw)

    export = WORK / "seed.jsonl"
    events = am_export(export, sessions, projects_dir)
    ms, _ = timed(lambda: am("import", str(export)))
    print(f"agent-memory: imported {events} events in {ms / 1000:.1f} s", flush=True)
    def distil():  # a pass takes a bounded number of sessions; repeat until none is left
        total = {"observations": 0, "summaries": 0}
        while True:
            ms, out = timed(lambda: am("work", "--json"))
            passed = json.loads(out.stdout)
            print(f"  work pass: {passed.get('sessions')} sessions in {ms / 1000:.1f} s", flush=True)
            for k in total:
                total[k] += passed.get(k) or 0
            if not passed.get("sessions"):
                return total
    ms, work = timed(distil)
    print(f"agent-memory: distilled in {ms / 1000:.1f} s: {work.get('observations')} "
          f"observations, {work.get('summaries')} summaries", flush=True)
    export.unlink()

    # claude-mem: its worker creates the schema, then the corpus goes straight into its tables.
    cm_user = WORK / "cm-user"
    cm_data = cm_user / ".claude-mem"
    cm_data.mkdir(parents=True)
    cm_port = free_port()
    (cm_data / "settings.json").write_text(json.dumps({
        "CLAUDE_MEM_WORKER_PORT": str(cm_port), "CLAUDE_MEM_WORKER_HOST": "127.0.0.1",
        "CLAUDE_MEM_CHROMA_ENABLED": "false", "CLAUDE_MEM_DATA_DIR": str(cm_data)}))
    cm_env = dict(os.environ, HOME=str(cm_user), CLAUDE_MEM_DATA_DIR=str(cm_data),
                  CLAUDE_MEM_WORKER_PORT=str(cm_port), CLAUDE_MEM_WORKER_HOST="127.0.0.1",
                  CLAUDE_MEM_CHROMA_ENABLED="false", CLAUDE_MEM_TELEMETRY="0", DO_NOT_TRACK="1",
                  CLAUDE_PLUGIN_ROOT=str(PLUGIN), PATH=BUN_DIR + os.pathsep + os.environ["PATH"])
    worker_cmd = [str(Path(BUN_DIR) / "bun"), str(PLUGIN / "scripts" / "worker-service.cjs"),
                  "--daemon"]
    proc = start(worker_cmd, cm_env, WORK / "claude-mem-worker.log")
    wait_http(cm_port, "/api/readiness", proc, "claude-mem's worker")
    stop(proc)
    ms, obs = timed(lambda: cm_seed(cm_data / "claude-mem.db", sessions, projects_dir))
    print(f"claude-mem: wrote {obs} observations, {SESSIONS} summaries, "
          f"{SESSIONS * TURNS * 2} prompts in {ms / 1000:.1f} s", flush=True)

    # Both servers up; idle memory after a short settle.
    cm = start(worker_cmd, cm_env, WORK / "claude-mem-worker.log")
    wait_http(cm_port, "/api/readiness", cm, "claude-mem's worker")
    am_srv = start([AM_BIN, "serve", "--port", "0"], am_env, WORK / "agent-memory-serve.log")
    deadline = time.time() + 30
    while not (am_home / "serve.json").exists() and time.time() < deadline:
        time.sleep(0.1)
    am_port = json.loads((am_home / "serve.json").read_text())["port"]
    wait_http(am_port, "/api/health", am_srv, "agent-memory serve")
    token = (am_home / "serve.token").read_text().strip()
    time.sleep(5)
    rss_idle = {"am": rss_kb(am_srv.pid), "cm": rss_kb(cm.pid)}

    # The commands each agent's hooks run, with Claude Code's payloads.
    hooks = json.loads((PLUGIN / "hooks" / "hooks.json").read_text())["hooks"]
    cm_post = hooks["PostToolUse"][0]["hooks"][0]["command"]
    cm_start, cm_context = (h["command"] for h in hooks["SessionStart"][0]["hooks"])
    big = PROJECTS[0]
    cwd = str(projects_dir / big)

    def post_payload(i):
        m = f"{AREAS[i % len(AREAS)]}_{i}"
        return dict(POST_TOOL_USE, session_id=f"bench-hook-{i // 50}", cwd=cwd,
                    transcript_path=f"{WORK}/t.jsonl", tool_use_id=f"toolu_bench_{i}",
                    tool_input={"command": f"cargo test -p {m}", "description": "Run the tests"},
                    tool_response=dict(POST_TOOL_USE["tool_response"],
                                       stdout=f"test result: ok. {i} passed; 0 failed ({m})"))

    def start_payload(i):
        return {"session_id": f"bench-start-{i}", "transcript_path": f"{WORK}/t.jsonl",
                "cwd": cwd, "hook_event_name": "SessionStart", "source": "startup"}

    def run(cmd, env, payload):
        r = subprocess.run(cmd, env=env, cwd=cwd, input=json.dumps(payload).encode(),
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        return len(r.stdout)

    am_hook = lambda ev: [AM_BIN, "hook", "--agent", "claude-code", "--event", ev]  # noqa: E731
    cm_hook = lambda c: ["bash", "-c", c]  # noqa: E731  hooks.json says "shell": "bash"

    # Queries from the shared vocabulary, one to two words, phrases as they occur in the text
    # (claude-mem matches a query as one phrase), from common words to one-off identifiers.
    rng = random.Random(SEED + 1)
    sample = [t for s in rng.sample(sessions, min(40, len(sessions))) for t in s["turns"][:2]]
    queries = []
    for i, t in enumerate(sample):
        queries.append([t["area"], f"{t['area']} {t['aspect']}", t["module"], t["ident"],
                        t["aspect"]][i % 5])

    def am_search(q):
        st, body = http_get(am_port, "/api/search?" + urllib.parse.urlencode({"q": q, "limit": 20}),
                            {"Authorization": f"Bearer {token}"})
        assert st == 200, body[:300]
        return len(json.loads(body)["hits"])

    def cm_search(q):  # the text answer its MCP search tool relays: "Found N result(s) ..."
        st, body = http_get(cm_port, "/api/search?" + urllib.parse.urlencode(
            {"query": q, "limit": 20}))
        assert st == 200, body[:300]
        text = json.loads(body)["content"][0]["text"]
        return min(20, int(text.split()[1])) if text.startswith("Found ") else 0

    def cm_inject():
        st, body = http_get(cm_port, "/api/context/inject?projects=" + big +
                            "&platformSource=claude-code&colors=true")
        assert st == 200, body[:300]
        return len(body)

    def floor_cm():  # the two runtimes each claude-mem hook starts, doing nothing
        for cmd in (["node", "-e", "0"], [str(Path(BUN_DIR) / "bun"), "-e", "0"]):
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        return 0

    ops = [  # (label, agent-memory, claude-mem); None where one side has no such operation
        ("start-up floor (process)", lambda i: len(am("--version").stdout), lambda i: floor_cm()),
        ("hook PostToolUse (process)", lambda i: run(am_hook("PostToolUse"), am_env, post_payload(i)),
         lambda i: run(cm_hook(cm_post), cm_env, post_payload(i))),
        ("hook SessionStart, context (process)",
         lambda i: run(am_hook("SessionStart"), am_env, start_payload(i)),
         lambda i: run(cm_hook(cm_context), cm_env, start_payload(i))),
        ("hook SessionStart, worker start (process)", None,
         lambda i: run(cm_hook(cm_start), cm_env, start_payload(i))),
        ("context over HTTP (in the server)", None, lambda i: cm_inject()),
        ("search over HTTP, limit 20", lambda i: am_search(queries[i % len(queries)]),
         lambda i: cm_search(queries[i % len(queries)])),
    ]
    results = {label: {"am": [], "cm": [], "am_out": [], "cm_out": []} for label, _, _ in ops}
    print(f"timing {RUNS} runs of each operation, alternating ...", flush=True)
    for i in range(RUNS):
        for label, a, c in ops:
            order = [("am", a), ("cm", c)] if i % 2 == 0 else [("cm", c), ("am", a)]
            for side, fn in order:
                if fn is None:
                    continue
                ms, out = timed(lambda: fn(i))
                results[label][side].append(ms)
                results[label][side + "_out"].append(out)
        if (i + 1) % 10 == 0:
            print(f"  {i + 1}/{RUNS}", flush=True)
    time.sleep(2)
    rss_load = {"am": rss_kb(am_srv.pid), "cm": rss_kb(cm.pid)}

    def size(path):
        return sum(f.stat().st_size for f in path.parent.glob(path.name + "*"))

    am_db = am_home / "memory.db"
    print()
    print(f"store: agent-memory {events} events -> {work.get('observations')} observations, "
          f"{work.get('summaries')} summaries, {size(am_db) / 2**20:.0f} MiB; "
          f"claude-mem {obs} observations, {SESSIONS} summaries, {SESSIONS * TURNS * 2} prompts, "
          f"{SESSIONS * (TURNS * 7)} tool uses, {size(cm_data / 'claude-mem.db') / 2**20:.0f} MiB")
    print()
    print("| operation | agent-memory p50 / p95 | claude-mem p50 / p95 | claude-mem / agent-memory, p50 |")
    print("|---|---|---|---|")
    for label, _, _ in ops:
        r = results[label]
        cell = lambda xs: f"{pct(xs, .5):.1f} / {pct(xs, .95):.1f} ms" if xs else "—"  # noqa: E731
        ratio = f"{pct(r['cm'], .5) / pct(r['am'], .5):.1f}x" if r["am"] and r["cm"] else "—"
        print(f"| {label} | {cell(r['am'])} | {cell(r['cm'])} | {ratio} |")
    for key, label in (("idle", rss_idle), ("after the load", rss_load)):
        print(f"| server RSS, {key} | {label['am'] / 1024:.0f} MiB | {label['cm'] / 1024:.0f} MiB "
              f"| {label['cm'] / label['am']:.1f}x |")
    print()
    for label, _, _ in ops:
        r = results[label]
        what = "hits" if "search" in label else "bytes out"
        mean = lambda xs: f"{sum(xs) / len(xs):.0f}" if xs else "—"  # noqa: E731
        print(f"{label}: mean {what}: agent-memory {mean(r['am_out'])}, "
              f"claude-mem {mean(r['cm_out'])}")


def cleanup(*_):
    for proc in STARTED:
        try:
            stop(proc)
        except Exception:
            pass
    # A hook may have spawned a second claude-mem worker (its `start` does when the health
    # check fails); it records itself in the data dir.
    pid_file = WORK / "cm-user" / ".claude-mem" / "worker.pid"
    try:
        pid = int(json.loads(pid_file.read_text())["pid"])
        if pid not in [p.pid for p in STARTED] and \
                f"CLAUDE_MEM_DATA_DIR={WORK}".encode() in open(f"/proc/{pid}/environ", "rb").read():
            os.kill(pid, signal.SIGTERM)
    except (OSError, ValueError, KeyError):
        pass


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        main()
    finally:
        cleanup()
