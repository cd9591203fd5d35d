"""Drives `agent-memory mcp` with the official MCP Python SDK client over stdio.

Usage: python_client.py BINARY. The environment (HOME, AGENT_MEMORY_HOME, ...) is handed to the
server as is. Runs the cheap-first workflow a client's model would: initialize, list the tools,
search, read the first hits in one get_observations call, then one call with a bad argument.
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
    }))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
