"""Drives `agent-memory mcp` with the official MCP Python SDK client over stdio.

Usage: python_client.py BINARY. The environment (HOME, AGENT_MEMORY_HOME, ...) is handed to the
server as is. Runs the cheap-first workflow a client's model would: initialize, list the tools,
search, read the first hits in one get_observations call, then one call with a bad argument;
then remembers a decision, finds it, forgets it, and makes a mistake with each of those tools.
Prints one JSON object with what it saw; the Rust test asserts on it.
"""

import asyncio
import json
import os
import re
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def text_of(result):
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


async def main(binary):
    params = StdioServerParameters(command=binary, args=["mcp"], env=dict(os.environ), cwd=os.getcwd())
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            tools = await session.list_tools()
            search = await session.call_tool("search", {"query": "parser depth", "limit": 5})
            ids = re.findall(r"^([ose]\d+) \| ", text_of(search), flags=re.MULTILINE)
            got = await session.call_tool("get_observations", {"ids": ids[:3]})
            bad = await session.call_tool("search", {"query": "parser", "limit": "ten"})
            after = await session.call_tool("timeline", {"anchor": ids[0]})
            remember = await session.call_tool(
                "remember",
                {"text": "Decision: parser depth is tracked per nested list", "kind": "decision"},
            )
            memory_id = re.search(r"\bm(\d+)\b", text_of(remember))
            memory_id = f"m{memory_id.group(1)}" if memory_id else ""
            found = await session.call_tool("search", {"query": "nested list depth", "kind": ["memory"]})
            remember_bad = await session.call_tool("remember", {"text": "x", "importance": 11})
            forget = await session.call_tool("forget", {"id": memory_id})
            forget_bad = await session.call_tool("forget", {"id": memory_id})
            forget_wrong = await session.call_tool("forget", {"id": "o1"})
    print(json.dumps({
        "server": init.server_info.name,
        "version": init.server_info.version,
        "tools": sorted(tool.name for tool in tools.tools),
        "search": text_of(search),
        "ids": ids,
        "get": text_of(got),
        "get_error": bool(got.is_error),
        "bad": text_of(bad),
        "bad_error": bool(bad.is_error),
        "after": text_of(after),
        "after_error": bool(after.is_error),
        "memory_id": memory_id,
        "remember": text_of(remember),
        "remember_error": bool(remember.is_error),
        "found": text_of(found),
        "remember_bad": text_of(remember_bad),
        "remember_bad_error": bool(remember_bad.is_error),
        "forget": text_of(forget),
        "forget_error": bool(forget.is_error),
        "forget_again": text_of(forget_bad),
        "forget_wrong": text_of(forget_wrong),
        "forget_wrong_error": bool(forget_wrong.is_error),
    }))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
