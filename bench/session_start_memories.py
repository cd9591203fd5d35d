#!/usr/bin/env python3
"""The SessionStart hook with and without long-term memories, in one run.

Usage: bench/session_start_memories.py BINARY [RUNS]

In a temp home: 50 short sessions through the real hook (a prompt, an edit, a stop) and one
`agent-memory work` pass, so the briefing has a timeline; then RUNS SessionStart hooks
(baseline), then 200 memories remembered (one in ten global), then RUNS SessionStart hooks
again. Prints one JSON object: p50/p95 wall time of the whole hook process for both, the
answer's size, and the p50 ratio. A ratio from the same run is what to compare; absolute
figures depend on the machine and the build.
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def main(binary, runs):
    root = tempfile.mkdtemp(prefix="am-bench-")
    home = os.path.join(root, "home")
    cwd = os.path.join(root, "app")
    os.makedirs(cwd)
    # The stop hook would start its own pass in the background; this script runs one itself.
    env = dict(os.environ, AGENT_MEMORY_HOME=home, HOME=root, TZ="UTC",
               AGENT_MEMORY_DISTIL__AUTO_WORK="false")

    def hook(event, extra, session):
        payload = {"session_id": session, "transcript_path": "/tmp/x.jsonl", "cwd": cwd,
                   "hook_event_name": event}
        payload.update(extra)
        started = time.perf_counter()
        out = subprocess.run([binary, "hook", "--agent", "claude-code", "--event", event],
                             input=json.dumps(payload).encode(), env=env, capture_output=True)
        return (time.perf_counter() - started) * 1000, len(out.stdout)

    for i in range(50):
        path = f"{cwd}/src/mod_{i % 7}.rs"
        hook("UserPromptSubmit", {"prompt": f"fix the parser bug number {i} in src/mod_{i % 7}.rs"}, f"h{i}")
        hook("PostToolUse", {"tool_name": "Edit", "tool_input": {"file_path": path, "old_string": "a",
             "new_string": "b"}, "tool_response": {"filePath": path}}, f"h{i}")
        hook("Stop", {"stop_hook_active": False}, f"h{i}")
    subprocess.run([binary, "work"], env=env, cwd=cwd, capture_output=True, check=True)

    def measure(label):
        times, size = [], 0
        for r in range(runs):
            took, size = hook("SessionStart", {"source": "startup"}, f"{label}-{r}")
            times.append(took)
        times.sort()
        return statistics.median(times), times[int(len(times) * 0.95)], size

    base = measure("base")
    for i in range(200):
        args = [binary, "remember", f"Memory {i}: module mod_{i % 7} keeps its state in a struct ({i})",
                "--importance", str(1 + i % 10)]
        if i % 10 == 0:
            args.append("--global")
        subprocess.run(args, env=env, cwd=cwd, capture_output=True, check=True)
    with_memories = measure("memories")
    shutil.rmtree(root, ignore_errors=True)
    print(json.dumps({
        "runs": runs,
        "without_p50_ms": round(base[0], 2), "without_p95_ms": round(base[1], 2),
        "without_bytes": base[2],
        "with_200_p50_ms": round(with_memories[0], 2), "with_200_p95_ms": round(with_memories[1], 2),
        "with_200_bytes": with_memories[2],
        "p50_ratio": round(with_memories[0] / base[0], 3),
    }))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 200)
