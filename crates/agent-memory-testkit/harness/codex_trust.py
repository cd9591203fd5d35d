#!/usr/bin/env python3
"""codex_trust.py HOOKS_JSON: the config.toml entries that make Codex CLI run its command hooks.

Codex runs a hook from a hooks.json only when config.toml trusts it, under the key
"<absolute hooks.json path>:<event in snake case>:<group index>:<handler index>", with the
SHA-256 of that hook's identity: compact JSON with sorted keys of

    {"event_name": EVENT, "matcher": MATCHER, "hooks": [HANDLER]}

where the matcher is left out when the group has none and for UserPromptSubmit and Stop (which
ignore it), and HANDLER is {"type": "command", "command", "timeout", "async", "statusMessage"}
with the timeout (or timeoutSec) at least 1 and 600 when absent, for SessionEnd between 1 and 3
and 1 when absent, async false unless set, and statusMessage only when set. Without a matching
entry Codex skips the hook and says nothing. agent-memory's installer computes the same in
Rust; this script is the independent check its test compares against.
"""

import hashlib
import json
import os
import re
import sys

IGNORES_MATCHER = ("UserPromptSubmit", "Stop")


def snake(event):
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", event).lower()


def handler_identity(event, handler):
    timeout = handler.get("timeout", handler.get("timeoutSec"))
    if event == "SessionEnd":
        timeout = 1 if timeout is None else min(max(timeout, 1), 3)
    else:
        timeout = 600 if timeout is None else max(timeout, 1)
    identity = {"type": "command", "command": handler["command"], "timeout": timeout,
                "async": bool(handler.get("async", False))}
    if handler.get("statusMessage") is not None:
        identity["statusMessage"] = handler["statusMessage"]
    return identity


def entries(path):
    path = os.path.abspath(path)
    with open(path, encoding="utf-8") as f:
        hooks = json.load(f).get("hooks") or {}
    for event, groups in hooks.items():
        for g, group in enumerate(groups):
            for h, handler in enumerate(group.get("hooks") or []):
                if handler.get("type", "command") != "command":
                    continue
                identity = {"event_name": snake(event), "hooks": [handler_identity(event, handler)]}
                if group.get("matcher") is not None and event not in IGNORES_MATCHER:
                    identity["matcher"] = group["matcher"]
                text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
                yield f"{path}:{snake(event)}:{g}:{h}", hashlib.sha256(text.encode()).hexdigest()


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: codex_trust.py HOOKS_JSON")
    for key, digest in entries(sys.argv[1]):
        print(f'[hooks.state."{key}"]\nenabled = true\ntrusted_hash = "sha256:{digest}"\n')


if __name__ == "__main__":
    main()
