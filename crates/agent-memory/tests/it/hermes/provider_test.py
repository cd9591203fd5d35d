"""Drives the Hermes memory provider the way Hermes calls it, with the real agent-memory binary.

Usage: provider_test.py PROVIDER_INIT_PY AGENT_MEMORY_BIN STORE_DIR
Hermes itself is not needed: `agent.memory_provider` is a stand-in with the same class name.
Each check prints `ok <name>`; the first failure raises and ends the run with an error.
"""
import importlib.util
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import types

provider_path, binary, store = sys.argv[1:4]

stub = types.ModuleType("agent.memory_provider")
stub.MemoryProvider = type("MemoryProvider", (), {})
sys.modules["agent"] = types.ModuleType("agent")
sys.modules["agent.memory_provider"] = stub
spec = importlib.util.spec_from_file_location("agent_memory_provider", provider_path)
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)


def events(sql="SELECT kind, tool, body FROM events ORDER BY id"):
    path = os.path.join(store, "memory.db")
    if not os.path.exists(path):
        return []
    with sqlite3.connect(path) as db:
        return db.execute(sql).fetchall()


def provider(session, binary=binary, **kwargs):
    p = mod.AgentMemoryProvider(mod.BinaryTransport(binary))
    p.initialize(session, platform="cli", hermes_home="/nowhere", **kwargs)
    return p


def call(n, name, args, result):
    """An assistant message calling one tool, and the tool's answer, as Hermes keeps them."""
    cid = "call_%s_%d" % (name, n)
    return [
        {"role": "assistant", "content": "", "finish_reason": "tool_calls",
         "tool_calls": [{"id": cid, "call_id": cid, "type": "function",
                         "function": {"name": name, "arguments": json.dumps(args)}}]},
        {"role": "tool", "name": name, "tool_name": name, "tool_call_id": cid, "content": result},
    ]


fence = ("\n\n<memory-context>\n[System note: recalled]\n\nOLD_RECALL_MARKER\n</memory-context>")
user = {"role": "user", "content": "Fix the quartzite benchmark",
        "api_content": "Fix the quartzite benchmark" + fence}

# A missing binary: unavailable, and nothing Hermes calls raises.
gone = mod.AgentMemoryProvider(mod.BinaryTransport("/nonexistent/agent-memory"))
assert gone.is_available() is False
gone.initialize("s-gone", agent_context="primary")
assert gone.prefetch("hello", session_id="") == ""
assert gone.system_prompt_block() == ""
gone.sync_turn("u", "a", session_id="s-gone", messages=[user] + call(1, "terminal", {"command": "ls"}, "x"))
gone.on_memory_write("add", "memory", "a fact", {})
assert gone.on_pre_compress([user]) == ""
gone.on_session_end([user])
gone.shutdown()
gone.sync_turn(None, None, messages=[None, 3, {"role": "assistant", "tool_calls": [None, {}]}])
assert events() == []
print("ok missing binary never raises")

# Items wait until five are buffered; the whole history again adds only what is new; Hermes's
# memory, todo and cron tools are not observations.
p = provider("s-buffer")
assert [k for k, _, _ in events()] == ["session_start"], events()
history = [user]
history += call(1, "terminal", {"command": "echo quartzite-one"}, '{"output": "quartzite-one", "exit_code": 0}')
history += call(2, "memory", {"action": "add", "content": "x"}, '{"success": true}')
history += call(3, "todo", {"todos": []}, "{}")
history += call(4, "cronjob", {"action": "list"}, "{}")
history += call(5, "read_file", {"path": "README.md"}, "# demo")
history.append({"role": "assistant", "content": "Done with turn one" + fence})
p.sync_turn("Fix the quartzite benchmark" + fence, "Done with turn one", session_id="", messages=history)
assert len(events()) == 1, "three items wait in the buffer: %r" % events()
turn2 = history + [{"role": "user", "content": "and again"}]
turn2 += call(6, "terminal", {"command": "echo quartzite-two"}, '{"output": "quartzite-two", "exit_code": 0}')
p.sync_turn("and again", "Done with turn two", session_id="", messages=turn2)
kinds = [k for k, _, _ in events()]
assert kinds == ["session_start", "tool_use", "tool_use", "stop", "tool_use", "stop"], kinds
tools = [t for k, t, _ in events() if k == "tool_use"]
assert tools == ["terminal", "read_file", "terminal"], tools
assert all("OLD_RECALL_MARKER" not in (b or "") for _, _, b in events()), events()
print("ok buffered until five items, history deduplicated, memory/todo/cron skipped")

# Long output fills the buffer by size alone.
p.sync_turn("big", "ok", messages=turn2 + call(7, "terminal", {"command": "cat big"}, "y" * 2500))
assert len(events()) == 8, events()
print("ok buffered until 2000 characters")

# Hermes's own memory writes wait for the session's end, which writes everything.
p.on_memory_write("add", "memory", "The quartzite benchmark needs a warm cache", {"tool_name": "memory"})
assert len(events()) == 8
p.on_session_end(turn2)
last = events()[-2:]
assert [k for k, _, _ in last] == ["note", "session_end"], last
assert "warm cache" in last[0][2], last
assert events("SELECT count(*) FROM memories") == [(0,)], "an agent's write waits for review"
p.shutdown()
assert len(events()) == 10, "shutdown after the end adds nothing: %r" % events()
print("ok memory writes mirrored for review, session end flushes")

# Prefetch records the prompt and answers with context: the briefing of what the sessions
# above left, once distilled, with a session's first prompt.
subprocess.run([binary, "work"], check=True, stdout=subprocess.DEVNULL)
q = provider("s-prefetch")
context = q.prefetch("What about the quartzite benchmark?" + fence, session_id="")
assert context.startswith("<agent-memory-context>"), repr(context)
assert "README.md" in context, context
assert "<memory-context>" not in context, context
prompts = events("SELECT body FROM events WHERE kind = 'prompt'")
assert prompts == [("What about the quartzite benchmark?",)], prompts
q.shutdown()
print("ok prefetch records the prompt and returns the briefing")

# A call without an id is known by its place in the history.
r = provider("s-noid")
noid = [user, {"role": "assistant", "tool_calls": [
    {"type": "function", "function": {"name": "terminal", "arguments": '{"command": "echo no-id"}'}}]}]
r.sync_turn("u", "a", messages=noid)
r.sync_turn("u", "a", messages=noid + [{"role": "user", "content": "more"}])
r.on_session_end(noid)
found = events("SELECT count(*) FROM events WHERE kind = 'tool_use' AND body LIKE '%echo no-id%'")
assert found == [(1,)], found
print("ok calls without an id deduplicated by place")

# Only the primary agent writes.
before = len(events())
sub = provider("s-sub", agent_context="subagent")
assert sub.prefetch("anything", session_id="") == ""
sub.sync_turn("u", "a", messages=call(9, "terminal", {"command": "ls"}, "x"))
sub.on_session_end([])
sub.shutdown()
assert len(events()) == before, events()[before:]
print("ok only the primary agent writes")
