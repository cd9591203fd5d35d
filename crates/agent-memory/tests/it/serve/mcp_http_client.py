"""Drives `agent-memory serve`'s /mcp with the official MCP Python SDK's streamable HTTP client.

Usage: mcp_http_client.py URL TOKEN. Initializes with the bearer token, lists the tools, searches,
reads the first hits in one get_observations call and makes one call with a bad argument; then
tries once without the token. Prints one JSON object with what it saw; the Rust test asserts on it.
"""

import asyncio
import json
import re
import sys

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def text_of(result):
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


async def main(url, token):
    client = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with client:
        async with streamable_http_client(url, http_client=client) as streams:
            read, write = streams[0], streams[1]
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                tools = await session.list_tools()
                search = await session.call_tool("search", {"query": "parser depth", "limit": 5})
                ids = re.findall(r"^([ose]\d+) \| ", text_of(search), flags=re.MULTILINE)
                got = await session.call_tool("get_observations", {"ids": ids[:3]})
                bad = await session.call_tool("search", {"query": "parser", "limit": "ten"})
    async with httpx2.AsyncClient() as anonymous:
        refused = await anonymous.post(
            url,
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"Accept": "application/json, text/event-stream"},
        )
    print(json.dumps({
        "server": init.server_info.name,
        "tools": sorted(tool.name for tool in tools.tools),
        "ids": ids,
        "get_error": bool(got.is_error),
        "bad_error": bool(bad.is_error),
        "unauthorized": refused.status_code,
    }))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
