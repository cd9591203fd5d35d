#!/usr/bin/env python3
"""A stdio MCP server with one tool, `mem_search`, for recording what agents send an MCP tool.

It answers `initialize`, `tools/list`, `tools/call` and `ping`; every other request gets
"method not found" (Claude Code asks `server/discover` first), notifications get nothing. A call
answers `MCPRESULT for '<query>': the answer is 42`. With MCP_LOG set, every message it reads is
appended there as one JSON line. Standard library only.
"""

import json
import os
import sys

TOOL = {
    "name": "mem_search",
    "description": "Search the project's memory of earlier sessions.",
    "inputSchema": {
        "type": "object",
        "properties": {"query": {"type": "string", "description": "what to look for"}},
        "required": ["query"],
    },
}


def answer(message):
    method = message.get("method")
    params = message.get("params") or {}
    if method == "initialize":
        return {"result": {"protocolVersion": params.get("protocolVersion", "2025-06-18"),
                           "capabilities": {"tools": {}},
                           "serverInfo": {"name": "mem", "version": "0.1.0"}}}
    if method == "tools/list":
        return {"result": {"tools": [TOOL]}}
    if method == "tools/call":
        query = (params.get("arguments") or {}).get("query", "")
        text = f"MCPRESULT for '{query}': the answer is 42"
        return {"result": {"content": [{"type": "text", "text": text}], "isError": False}}
    if method == "ping":
        return {"result": {}}
    return {"error": {"code": -32601, "message": f"method not found: {method}"}}


def main():
    log = os.environ.get("MCP_LOG")
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if log:
            with open(log, "a", encoding="utf-8") as out:
                out.write(json.dumps(message) + "\n")
        if not isinstance(message, dict) or "id" not in message:
            continue
        reply = dict(answer(message), jsonrpc="2.0", id=message["id"])
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
