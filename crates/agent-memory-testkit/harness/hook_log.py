#!/usr/bin/env python3
"""hook_log.py LOG AGENT EVENT: a hook that records its stdin and answers nothing.

`scripts/record-fixtures` wires it as every hook of the agent it records: each call appends
{"agent", "event", "stdin"} to LOG as one JSON line (stdin parsed when it is JSON, else kept as
text), then exits 0 with empty stdout, so the agent carries on as if no hook were there. When
the payload names a transcript (`transcript_path`) that exists, the line also holds its size then,
"transcript_bytes": the sessions recorder cuts the transcript at each hook with it.
"""

import json
import os
import sys


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: hook_log.py LOG AGENT EVENT")
    log, agent, event = sys.argv[1:]
    raw = sys.stdin.read()
    try:
        stdin = json.loads(raw)
    except ValueError:
        stdin = raw
    line = {"agent": agent, "event": event, "stdin": stdin}
    transcript = None
    if isinstance(stdin, dict):
        transcript = stdin.get("transcript_path") or stdin.get("transcriptPath")
    if isinstance(transcript, str) and os.path.isfile(transcript):
        line["transcript_bytes"] = os.path.getsize(transcript)
    with open(log, "a", encoding="utf-8") as out:
        out.write(json.dumps(line, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
