#!/usr/bin/env python3
"""A scripted model on 127.0.0.1 for running real agent CLIs offline. Standard library only.

It speaks the four wire protocols the agents use, chosen by the request path:

  .../messages, .../messages/count_tokens    Anthropic Messages (Claude Code, Copilot CLI BYOK)
  .../responses                              OpenAI Responses (Codex CLI)
  .../chat/completions                       OpenAI Chat Completions (OpenCode, Hermes Agent)
  ...:generateContent, ...:streamGenerateContent, ...:countTokens, ...:embedContent
                                             Gemini API (Gemini CLI)
  GET .../models                             model lists in the OpenAI and Gemini shapes

Every answer follows from the request alone, so any number of agents can share one server:

  * a request that offers no tools gets SIDE_TEXT (titles, summaries, compression);
    a Gemini JSON-mode request gets an object built from its response schema;
  * otherwise `n`, the number of tool calls the assistant made since the last real user
    message, picks step `n` of the script; with no step left the answer is FINAL_TEXT. A user
    message an agent writes itself is not a real one: Hermes Agent's nudges ("[System: You
    edited code in this turn, ...") leave the count running, and its background review of a
    finished turn ("Review the conversation above ...") gets REVIEW_TEXT, no tool call;

The script (environment variable FAKE_SCRIPT):

  shell     call the agent's shell tool once with FAKE_TOOL_COMMAND (the default)
  mcp       call the first offered tool whose name contains FAKE_MCP_TOOL once, with
            {"query": FAKE_MCP_QUERY}; an agent offering no such tool gets the shell step
  none      answer at once
  [...]     a JSON list of {"tool": NAME, "args": {...}} steps; steps naming a tool the request
            does not offer are dropped first, so one list serves agents that name tools
            differently (Codex's MCP tools count as "<namespace>__<tool>")

A step of the list may instead be abstract, and is then mapped to the offered tool of the agent
at hand, in that agent's own argument shape (file paths relative to FAKE_PROJECT are made
absolute for the tools that want them):

  {"shell": CMD}                                   the shell tool
  {"read": FILE}                                   the read tool (Codex: `cat FILE` in its shell)
  {"edit": {"file", "old", "new"}}                 the edit tool (Codex: an `apply_patch` update)
  {"write": {"file", "content"}}                   the write tool (Codex: an `apply_patch` add;
                                                   Copilot CLI's `create`, for new files only)
  {"apply_patch": PATCH}                           Codex only: `apply_patch` with PATCH, the text
                                                   between *** Begin Patch and *** End Patch, run
                                                   through its shell as Codex itself does

FAKE_SCRIPT_FILE, when set, names a JSON file {"script": [...], "final": TEXT} read again at every
request, so the one running server can follow a session turn by turn (run_agent.py rewrites it
before each turn); it overrides FAKE_SCRIPT and FAKE_FINAL_TEXT.

Each request is logged to --log as one JSON line {"method", "path", "headers", "body"} and the
answer as the line after it, {"reply": {"tool", "args"} or {"text"}, "protocol"}.

Usage: fake_model.py --port 0 --port-file FILE --log FILE
"""

import argparse
import json
import os
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

FINAL_TEXT = os.environ.get("FAKE_FINAL_TEXT", "FAKE_FINAL_ANSWER: the tool ran.")
SIDE_TEXT = os.environ.get("FAKE_SIDE_TEXT", "A short title")
REVIEW_TEXT = "Nothing to save."
# How the user messages an agent writes itself begin (Hermes Agent's): a nudge within the turn,
# and the prompt of a review run after it.
AGENT_NUDGE = "[System:"
AGENT_REVIEW = "Review the conversation above"
TOOL_COMMAND = os.environ.get("FAKE_TOOL_COMMAND", "echo FAKE_TOOL_OUTPUT")
MCP_TOOL = os.environ.get("FAKE_MCP_TOOL", "mem_search")
MCP_QUERY = os.environ.get("FAKE_MCP_QUERY", "answer")

# Shell tools by the names the agents give them, most specific first.
SHELL_TOOLS = ("Bash", "bash", "run_shell_command", "exec_command", "shell_command", "terminal", "shell")
USAGE_IN, USAGE_OUT = 100, 20


def load_script():
    raw = os.environ.get("FAKE_SCRIPT", "").strip() or "shell"
    return json.loads(raw) if raw.startswith("[") else raw


SCRIPT = load_script()
SCRIPT_FILE = os.environ.get("FAKE_SCRIPT_FILE")
PROJECT = os.environ.get("FAKE_PROJECT", "")


def current():
    """The script and final text in force for this request."""
    if SCRIPT_FILE and os.path.exists(SCRIPT_FILE):
        with open(SCRIPT_FILE, encoding="utf-8") as f:
            turn = json.load(f)
        return turn.get("script", "none"), turn.get("final", FINAL_TEXT)
    return SCRIPT, FINAL_TEXT


def absolute(path):
    return path if os.path.isabs(path) or not PROJECT else os.path.join(PROJECT, path)


def patch_lines(prefix, text):
    return "".join(f"{prefix}{line}\n" for line in text.split("\n"))


def codex_patch(body):
    return {"tool": "exec_command",
            "args": {"cmd": f"apply_patch <<'EOF'\n*** Begin Patch\n{body}*** End Patch\nEOF"}}


# The tools of each abstract step, by the names the agents give them, with their arguments.
READ_TOOLS = {"Read": lambda f: {"file_path": absolute(f)},          # Claude Code
              "read_file": lambda f: {"file_path": absolute(f), "path": absolute(f)},  # Gemini, Hermes
              "read": lambda f: {"filePath": absolute(f)},            # OpenCode
              "view": lambda f: {"path": absolute(f)}}                # Copilot CLI
EDIT_TOOLS = {"Edit": lambda f, o, n: {"file_path": absolute(f), "old_string": o, "new_string": n},
              "replace": lambda f, o, n: {"file_path": absolute(f), "old_string": o, "new_string": n,
                                          "instruction": "Apply the fix."},
              "edit": lambda f, o, n: {"filePath": absolute(f), "oldString": o, "newString": n,
                                       "path": absolute(f), "old_str": o, "new_str": n},
              "patch": lambda f, o, n: {"mode": "replace", "path": absolute(f), "old_string": o,
                                        "new_string": n}}              # Hermes
WRITE_TOOLS = {"Write": lambda f, c: {"file_path": absolute(f), "content": c},
               "write_file": lambda f, c: {"file_path": absolute(f), "path": absolute(f), "content": c},
               "write": lambda f, c: {"filePath": absolute(f), "content": c},
               "create": lambda f, c: {"path": absolute(f), "file_text": c}}


def pick(tools, offered):
    return next((name for name in tools if name in offered), None)


def resolve(step, offered):
    """A script step as the tool call to make, or None when the agent offers no tool for it."""
    if "tool" in step:
        return step if step["tool"] in offered else None
    codex = "exec_command" in offered
    if "shell" in step:
        shell = next((name for name in SHELL_TOOLS if name in offered), None)
        return {"tool": shell, "args": shell_call(shell, step["shell"])} if shell else None
    if "apply_patch" in step:
        return codex_patch(step["apply_patch"].rstrip("\n") + "\n") if codex else None
    if "read" in step:
        if codex:
            return {"tool": "exec_command", "args": {"cmd": f"cat {step['read']}"}}
        name = pick(READ_TOOLS, offered)
        return {"tool": name, "args": one_path_key(name, READ_TOOLS[name](step["read"]), offered)} if name else None
    if "edit" in step:
        e = step["edit"]
        if codex:
            return codex_patch(f"*** Update File: {e['file']}\n@@\n"
                               + patch_lines("-", e["old"]) + patch_lines("+", e["new"]))
        name = pick(EDIT_TOOLS, offered)
        if not name:
            return None
        args = EDIT_TOOLS[name](e["file"], e["old"], e["new"])
        # OpenCode's and Copilot CLI's `edit` share a name and differ in shape.
        if name == "edit":
            keep = ("path", "old_str", "new_str") if "view" in offered else ("filePath", "oldString", "newString")
            args = {k: v for k, v in args.items() if k in keep}
        return {"tool": name, "args": args}
    if "write" in step:
        w = step["write"]
        if codex:
            return codex_patch(f"*** Add File: {w['file']}\n" + patch_lines("+", w["content"].rstrip("\n")))
        name = pick(WRITE_TOOLS, offered)
        if not name:
            return None
        args = WRITE_TOOLS[name](w["file"], w["content"])
        return {"tool": name, "args": one_path_key(name, args, offered)}
    return None


def one_path_key(name, args, offered):
    """Gemini CLI's `read_file` and `write_file` take `file_path`, Hermes's (the agent with a
    `terminal` tool) `path`: keep the key the agent knows."""
    if name not in ("read_file", "write_file"):
        return args
    drop = "file_path" if "terminal" in offered else "path"
    return {k: v for k, v in args.items() if k != drop}


def shell_call(name, command=None):
    """The arguments each agent's shell tool takes."""
    command = TOOL_COMMAND if command is None else command
    if name == "exec_command":
        return {"cmd": command}
    if name == "shell":
        return {"command": ["bash", "-lc", command]}
    return {"command": command, "description": "Run the command"}


def next_step(offered, calls_so_far):
    """The tool call to answer with, or None for the final text."""
    script, _ = current()
    if script == "none":
        return None
    if isinstance(script, list):
        steps = [resolved for resolved in (resolve(step, offered) for step in script) if resolved]
        return steps[calls_so_far] if calls_so_far < len(steps) else None
    if calls_so_far:
        return None
    if script == "mcp":
        match = next((name for name in offered if MCP_TOOL in name), None)
        if match:
            return {"tool": match, "args": {"query": MCP_QUERY}}
    shell = next((name for name in SHELL_TOOLS if name in offered), None)
    return {"tool": shell, "args": shell_call(shell)} if shell else None


def new_id(prefix, size=20):
    return prefix + uuid.uuid4().hex[:size]


class Exchange:
    """One request and its answer: the log, and the response writers every protocol uses."""

    lock = threading.Lock()
    log_path = None

    def __init__(self, handler):
        self.handler = handler

    @classmethod
    def log(cls, entry):
        with cls.lock, open(cls.log_path, "a", encoding="utf-8") as out:
            out.write(json.dumps(entry, ensure_ascii=False) + "\n")

    def decided(self, protocol, step, text):
        Exchange.log({"reply": step if step else {"text": text}, "protocol": protocol})

    def json(self, status, value):
        data = json.dumps(value).encode()
        h = self.handler
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    def stream(self):
        """Starts an event stream. It has neither a length nor chunks: closing the connection
        ends it, which every client here accepts (Gemini CLI waits forever on a kept-alive one)."""
        h = self.handler
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.send_header("Cache-Control", "no-cache")
        h.send_header("Connection", "close")
        h.end_headers()
        h.close_connection = True

        def send(data, event=None):
            text = data if isinstance(data, str) else json.dumps(data)
            frame = (f"event: {event}\n" if event else "") + f"data: {text}\n\n"
            h.wfile.write(frame.encode())
            h.wfile.flush()

        return send


def anthropic(ex, body):
    offered = [t.get("name") for t in body.get("tools") or [] if isinstance(t, dict) and t.get("name")]
    calls = 0
    for message in reversed(body.get("messages") or []):
        blocks = message.get("content") if isinstance(message.get("content"), list) else []
        kinds = {b.get("type") for b in blocks if isinstance(b, dict)}
        if message.get("role") == "user" and "tool_result" not in kinds:
            break
        if message.get("role") == "assistant" and "tool_use" in kinds:
            calls += 1
    step = next_step(offered, calls) if offered else None
    text = None if step else (current()[1] if offered else SIDE_TEXT)
    ex.decided("anthropic", step, text)
    if step:
        block = {"type": "tool_use", "id": new_id("toolu_"), "name": step["tool"], "input": step["args"]}
        stop = "tool_use"
    else:
        block = {"type": "text", "text": text}
        stop = "end_turn"
    message = {"id": new_id("msg_"), "type": "message", "role": "assistant",
               "model": body.get("model", "fake-model"), "stop_sequence": None}
    usage = {"input_tokens": USAGE_IN, "output_tokens": USAGE_OUT,
             "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    if not body.get("stream"):
        return ex.json(200, dict(message, content=[block], stop_reason=stop, usage=usage))
    send = ex.stream()
    send({"type": "message_start", "message": dict(message, content=[], stop_reason=None, usage=usage)},
         "message_start")
    if step:
        start = dict(block, input={})
        delta = {"type": "input_json_delta", "partial_json": json.dumps(step["args"])}
    else:
        start = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": text}
    send({"type": "content_block_start", "index": 0, "content_block": start}, "content_block_start")
    send({"type": "content_block_delta", "index": 0, "delta": delta}, "content_block_delta")
    send({"type": "content_block_stop", "index": 0}, "content_block_stop")
    send({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
          "usage": {"output_tokens": USAGE_OUT}}, "message_delta")
    send({"type": "message_stop"}, "message_stop")


def responses(ex, body):
    offered, namespaced = [], {}
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        if tool.get("type") == "namespace":
            # Codex hands an MCP server's tools over as one namespace of functions.
            for inner in tool.get("tools") or []:
                joined = f"{tool.get('name')}__{inner.get('name')}"
                offered.append(joined)
                namespaced[joined] = (tool.get("name"), inner.get("name"))
        elif tool.get("name"):
            offered.append(tool["name"])
    calls = 0
    for item in reversed(body.get("input") or []):
        if not isinstance(item, dict):
            continue
        if item.get("type", "message") == "message" and item.get("role") == "user":
            break
        if item.get("type") in ("function_call", "custom_tool_call", "local_shell_call"):
            calls += 1
    step = next_step(offered, calls) if offered else None
    text = None if step else (current()[1] if offered else SIDE_TEXT)
    ex.decided("responses", step, text)
    if step:
        item = {"type": "function_call", "call_id": new_id("call_"), "arguments": json.dumps(step["args"])}
        if step["tool"] in namespaced:
            item["namespace"], item["name"] = namespaced[step["tool"]]
        else:
            item["name"] = step["tool"]
    else:
        item = {"type": "message", "role": "assistant", "id": new_id("msg_", 12),
                "content": [{"type": "output_text", "text": text}]}
    response_id = new_id("resp_")
    send = ex.stream()
    send({"type": "response.created", "response": {"id": response_id}}, "response.created")
    send({"type": "response.output_item.added", "output_index": 0, "item": item}, "response.output_item.added")
    if text is not None:
        send({"type": "response.output_text.delta", "item_id": item["id"], "output_index": 0,
              "content_index": 0, "delta": text}, "response.output_text.delta")
    send({"type": "response.output_item.done", "output_index": 0, "item": item}, "response.output_item.done")
    usage = {"input_tokens": USAGE_IN, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens": USAGE_OUT, "output_tokens_details": {"reasoning_tokens": 0},
             "total_tokens": USAGE_IN + USAGE_OUT}
    send({"type": "response.completed", "response": {"id": response_id, "output": [item], "usage": usage}},
         "response.completed")


def chat_completions(ex, body):
    offered = []
    for tool in body.get("tools") or []:
        if isinstance(tool, dict):
            name = (tool.get("function") or {}).get("name") or tool.get("name")
            if name:
                offered.append(name)
    calls = 0
    review = False
    for message in reversed(body.get("messages") or []):
        if message.get("role") == "user":
            content = message.get("content")
            said = content if isinstance(content, str) else json.dumps(content)
            if said.startswith(AGENT_NUDGE):
                continue
            review = said.startswith(AGENT_REVIEW)
            break
        if message.get("role") == "assistant" and message.get("tool_calls"):
            calls += 1
    step = next_step(offered, calls) if offered and not review else None
    text = REVIEW_TEXT if review else None if step else (current()[1] if offered else SIDE_TEXT)
    ex.decided("chat", step, text)
    base = {"id": new_id("chatcmpl-", 12), "created": 0, "model": body.get("model", "fake-model")}
    usage = {"prompt_tokens": USAGE_IN, "completion_tokens": USAGE_OUT, "total_tokens": USAGE_IN + USAGE_OUT}
    call = None
    if step:
        call = {"id": new_id("call_", 12), "type": "function",
                "function": {"name": step["tool"], "arguments": json.dumps(step["args"])}}
    finish = "tool_calls" if call else "stop"
    if not body.get("stream"):
        message = {"role": "assistant", "content": text}
        if call:
            message["tool_calls"] = [call]
        return ex.json(200, dict(base, object="chat.completion", usage=usage,
                                 choices=[{"index": 0, "message": message, "finish_reason": finish}]))
    send = ex.stream()

    def chunk(delta, finish_reason=None):
        send(dict(base, object="chat.completion.chunk",
                  choices=[{"index": 0, "delta": delta, "finish_reason": finish_reason}]))

    chunk({"role": "assistant", "content": ""})
    if call:
        head = {"index": 0, "id": call["id"], "type": "function",
                "function": {"name": call["function"]["name"], "arguments": ""}}
        chunk({"tool_calls": [head]})
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": call["function"]["arguments"]}}]})
    else:
        chunk({"content": text})
    chunk({}, finish)
    if (body.get("stream_options") or {}).get("include_usage"):
        send(dict(base, object="chat.completion.chunk", choices=[], usage=usage))
    send("[DONE]")


def from_schema(schema):
    """A value that satisfies a JSON-mode request's schema (Gemini CLI's router and checks)."""
    if not isinstance(schema, dict):
        return "text"
    if schema.get("enum"):
        return schema["enum"][0]
    kind = str(schema.get("type") or "").lower()
    if kind == "object" or "properties" in schema:
        value = {key: from_schema(inner) for key, inner in (schema.get("properties") or {}).items()}
        if "next_speaker" in value:
            # The "should the model speak again" check: no, the user speaks next.
            value["next_speaker"] = "user"
        return value
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        return schema.get("minimum", 1)
    if kind == "boolean":
        return False
    return "text"


def gemini(ex, path, body):
    config = body.get("generationConfig") or {}
    offered = [d.get("name") for t in body.get("tools") or [] for d in t.get("functionDeclarations") or []]
    step = None
    if config.get("responseMimeType") == "application/json":
        schema = config.get("responseJsonSchema") or config.get("responseSchema") or {}
        parts = [{"text": json.dumps(from_schema(schema))}]
    elif not offered:
        parts = [{"text": SIDE_TEXT}]
    else:
        calls = 0
        for content in reversed(body.get("contents") or []):
            parts = content.get("parts") or []
            said = any("text" in p for p in parts) and not any("functionResponse" in p for p in parts)
            if content.get("role") == "user" and said:
                break
            if content.get("role") == "model" and any("functionCall" in p for p in parts):
                calls += 1
        step = next_step(offered, calls)
        parts = [{"functionCall": {"name": step["tool"], "args": step["args"]}}] if step else [{"text": current()[1]}]
    ex.decided("gemini", step, None if step else parts[0]["text"])
    answer = {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
              "usageMetadata": {"promptTokenCount": USAGE_IN, "candidatesTokenCount": USAGE_OUT,
                                "totalTokenCount": USAGE_IN + USAGE_OUT},
              "modelVersion": "fake-model"}
    if ":streamGenerateContent" in path:
        ex.stream()(answer)
    else:
        ex.json(200, answer)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self):
        Exchange.log({"method": "GET", "path": self.path, "headers": dict(self.headers), "body": None})
        ex = Exchange(self)
        path = self.path.split("?")[0].rstrip("/")
        if path.endswith("/models") and "v1beta" in path:
            return ex.json(200, {"models": [{"name": "models/fake-model"}]})
        if path.endswith("/models"):
            model = {"id": "fake-model", "object": "model", "created": 0, "owned_by": "fake",
                     "context_length": 128000}
            return ex.json(200, {"object": "list", "data": [model], "models": []})
        ex.json(404, {"error": {"message": f"no such route: {path}"}})

    def do_POST(self):
        size = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(size) if size else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = raw.decode("utf-8", "replace")
        Exchange.log({"method": "POST", "path": self.path, "headers": dict(self.headers), "body": body})
        ex = Exchange(self)
        path = self.path.split("?")[0]
        if not isinstance(body, dict):
            return ex.json(400, {"error": {"message": "the body is not a JSON object"}})
        try:
            if path.endswith("/messages/count_tokens"):
                return ex.json(200, {"input_tokens": USAGE_IN})
            if path.endswith("/messages"):
                return anthropic(ex, body)
            if path.endswith("/responses"):
                return responses(ex, body)
            if path.endswith("/chat/completions"):
                return chat_completions(ex, body)
            if ":generateContent" in path or ":streamGenerateContent" in path:
                return gemini(ex, path, body)
            if ":countTokens" in path:
                return ex.json(200, {"totalTokens": USAGE_IN})
            if ":embedContent" in path or ":batchEmbedContents" in path:
                return ex.json(200, {"embedding": {"values": [0.0] * 8}})
        except (BrokenPipeError, ConnectionResetError):
            return None
        return ex.json(404, {"error": {"message": f"no such route: {path}"}})


def main():
    parser = argparse.ArgumentParser(description="a scripted fake model on 127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--port-file", help="where to write the port once listening")
    parser.add_argument("--log", required=True, help="the JSONL request log")
    args = parser.parse_args()
    Exchange.log_path = args.log
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True
    if args.port_file:
        # Written whole and renamed, so a reader never sees half a number.
        with open(args.port_file + ".tmp", "w") as out:
            out.write(str(server.server_address[1]))
        os.replace(args.port_file + ".tmp", args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
