"""agent-memory as a Hermes Agent MemoryProvider.

Hermes hands this provider every moment of a session; the provider turns them into the hook
payloads `agent-memory hook --agent hermes --event E` reads (the same shapes as Hermes's own
shell hooks) and runs the binary, so no server has to be running. It answers `prefetch` with
what the hook answers at a prompt: the session-start briefing with the first prompt, recall
after that.

`agent-memory install hermes` puts this directory at `$HERMES_HOME/plugins/agent-memory/`
beside a `config.json` naming the binary, and sets `memory.provider: agent-memory`.

Rules it keeps, because Hermes runs it in-process: no exception escapes into Hermes; a write
never holds up a turn (writes are buffered and run on Hermes's sync worker or at the end);
only the primary agent writes; everything ingested has our own injected context removed.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import threading
import time
from typing import Any, Dict, List, Optional, Tuple

try:
    from agent.memory_provider import MemoryProvider
except Exception:  # outside Hermes (the provider's own tests load it without Hermes)
    MemoryProvider = object  # type: ignore[misc,assignment]

AGENT = "hermes"
NAME = "agent-memory"
# Hermes's own bookkeeping tools: its memory store (mirrored through on_memory_write instead),
# its todo list and its scheduler say nothing about the work itself.
SKIPPED_TOOLS = frozenset({"memory", "todo", "cronjob", "cron"})
# A flush writes once this many items, or this many characters, are waiting.
FLUSH_ITEMS = 5
FLUSH_CHARS = 2000
# One hook run; the hook keeps its own, shorter deadline and spools what it cannot store.
HOOK_TIMEOUT_S = 3.0
# Hermes waits 5 s for a provider's shutdown; what is still buffered must be out before.
SHUTDOWN_BUDGET_S = 4.0
# Context we inject (the hook's sentinel) and Hermes's fence around prefetch text come back in
# later messages; neither is the user's or the model's own words.
_FENCES = re.compile(
    r"<agent-memory-context>.*?</agent-memory-context>|<memory-context>.*?</memory-context>",
    re.DOTALL,
)

_HERE = os.path.dirname(os.path.abspath(__file__))


def _settings() -> Dict[str, Any]:
    """`config.json` beside this file, written by `agent-memory install hermes`."""
    try:
        with open(os.path.join(_HERE, "config.json"), encoding="utf-8") as f:
            value = json.load(f)
        return value if isinstance(value, dict) else {}
    except Exception:
        return {}


def strip_injected(text: Any) -> str:
    """The text without any context block we (or Hermes around us) injected."""
    if not isinstance(text, str):
        return "" if text is None else str(text)
    return _FENCES.sub("", text).strip()


class BinaryTransport:
    """Reaches agent-memory by running its binary, one hook run per event.

    A transport to a running agent-memory server can take its place later: it needs the same
    `available` and `hook` methods.
    """

    def __init__(self, binary: str) -> None:
        self.binary = binary

    def available(self) -> bool:
        return bool(self.binary) and os.path.isfile(self.binary) and os.access(self.binary, os.X_OK)

    def hook(self, event: str, payload: Dict[str, Any], timeout: float) -> str:
        """Runs the hook for one event; its stdout (the answer, if any). Raises on failure."""
        done = subprocess.run(
            [self.binary, "hook", "--agent", AGENT, "--event", event],
            input=json.dumps(payload, ensure_ascii=False, default=str).encode("utf-8"),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            timeout=timeout,
            check=False,
        )
        return done.stdout.decode("utf-8", "replace")

def remember(payload: Dict[str, Any]) -> List[Tuple[str, Dict[str, Any]]]:
    """What one of Hermes's own memory writes becomes in agent-memory: an event the other
    agents see in the timeline (`on_memory_write`, stored as a note), which the next work pass
    proposes as long-term memory for the user's review, what Hermes learned about its user
    (`target` "user") for every project. What the user says themselves ("remember that...")
    is kept from their prompt, not from Hermes's paraphrase of it."""
    return [("on_memory_write", payload)]


class AgentMemoryProvider(MemoryProvider):
    """Hermes's moments, recorded in agent-memory; its briefing and recall, handed back."""

    def __init__(self, transport: Optional[BinaryTransport] = None) -> None:
        self._transport = transport or BinaryTransport(str(_settings().get("bin") or ""))
        self._session_id = ""
        self._cwd = os.getcwd()
        self._platform = "cli"
        self._writes = True
        self._lock = threading.Lock()
        # One flush at a time, so events reach the store in the order they happened.
        self._flushing = threading.Lock()
        self._buffer: List[Tuple[str, Dict[str, Any]]] = []
        self._buffered_chars = 0
        # Tool calls already taken: Hermes passes the whole history on every turn.
        self._seen: set = set()
        self._ended = False

    # -- the provider interface -------------------------------------------------------------

    @property
    def name(self) -> str:
        return NAME

    def is_available(self) -> bool:
        try:
            return self._transport.available()
        except Exception:
            return False

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        try:
            self._session_id = str(session_id or "")
            self._cwd = os.getcwd()
            self._platform = str(kwargs.get("platform") or "cli")
            # Subagents and background reviews run their own provider instance; only the
            # primary agent's session is the user's.
            self._writes = kwargs.get("agent_context", "primary") == "primary"
            self._ended = False
            if self._writes:
                start = self._payload("on_session_start", platform=self._platform)
                self._send([("on_session_start", start)])
        except Exception:
            pass

    def get_tool_schemas(self) -> List[Dict[str, Any]]:
        # Search goes through agent-memory's MCP server, which install registers as well.
        return []

    def system_prompt_block(self) -> str:
        # The briefing comes with the first prompt (prefetch): Hermes freezes this block at
        # session creation and would replay both.
        return ""

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        """The prompt is recorded and answered in one hook run: the briefing with a session's
        first prompt, recall after that. Bare text; Hermes adds its own fence."""
        try:
            if not self._writes:
                return ""
            prompt = strip_injected(query)
            if not prompt:
                return ""
            payload = self._payload("pre_llm_call", user_message=prompt, platform=self._platform)
            out = self._transport.hook("pre_llm_call", payload, HOOK_TIMEOUT_S)
            for line in out.splitlines():
                line = line.strip()
                if line.startswith("{"):
                    context = json.loads(line).get("context")
                    if isinstance(context, str):
                        return context
            return ""
        except Exception:
            return ""

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        return None

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        # The prompt is recorded by prefetch, which runs right after and answers it.
        return None

    def sync_turn(self, user_content: str, assistant_content: str, *, session_id: str = "",
                  messages: Optional[List[Dict[str, Any]]] = None, **kwargs: Any) -> None:
        try:
            if not self._writes:
                return
            items = self._tool_uses(messages or [])
            answer = strip_injected(assistant_content)
            items.append(("post_llm_call", self._payload(
                "post_llm_call", user_message=strip_injected(user_content),
                assistant_response=answer)))
            self._add(items)
        except Exception:
            pass

    def on_memory_write(self, action: str, target: str, content: str,
                        metadata: Optional[Dict[str, Any]] = None) -> None:
        try:
            if not self._writes:
                return
            text = strip_injected(content)
            if not text:
                return
            payload = self._payload("on_memory_write", action=str(action or ""),
                                    target=str(target or ""), content=text)
            self._add(remember(payload), flush=False)
        except Exception:
            pass

    def on_pre_compress(self, messages: List[Dict[str, Any]]) -> str:
        try:
            if self._writes:
                self._add(self._tool_uses(messages or []), flush=True)
        except Exception:
            pass
        return ""

    def on_session_end(self, messages: List[Dict[str, Any]]) -> None:
        try:
            if not self._writes:
                return
            items = self._tool_uses(messages or [])
            items.append(("on_session_end", self._payload("on_session_end", completed=True)))
            self._ended = True
            self._add(items, flush=True)
        except Exception:
            pass

    def on_session_switch(self, new_session_id: str, *, parent_session_id: str = "",
                          reset: bool = False, rewound: bool = False, **kwargs: Any) -> None:
        try:
            self.flush()
            self._session_id = str(new_session_id or self._session_id)
            self._ended = False
        except Exception:
            pass

    def shutdown(self) -> None:
        try:
            if self._writes and not self._ended and self._session_id:
                self._ended = True
                self._add([("on_session_end", self._payload("on_session_end", completed=True))],
                          flush=False)
            self.flush(budget=SHUTDOWN_BUDGET_S)
        except Exception:
            pass

    # -- buffering and writing --------------------------------------------------------------

    def flush(self, budget: Optional[float] = None) -> int:
        """Writes what is buffered; how many events went out. Never raises."""
        with self._flushing:
            with self._lock:
                items, self._buffer, self._buffered_chars = self._buffer, [], 0
            return self._send(items, budget)

    def _add(self, items: List[Tuple[str, Dict[str, Any]]], flush: Optional[bool] = None) -> None:
        """Buffers `items`; writes them once enough waits (or at once with `flush=True`)."""
        with self._lock:
            for item in items:
                self._buffer.append(item)
                self._buffered_chars += len(json.dumps(item[1], ensure_ascii=False, default=str))
            full = len(self._buffer) >= FLUSH_ITEMS or self._buffered_chars >= FLUSH_CHARS
        if flush or (flush is None and full):
            self.flush()

    def _send(self, items: List[Tuple[str, Dict[str, Any]]], budget: Optional[float] = None) -> int:
        if not items:
            return 0
        deadline = None if budget is None else time.monotonic() + budget
        sent = 0
        for event, payload in items:
            timeout = HOOK_TIMEOUT_S
            if deadline is not None:
                timeout = min(timeout, deadline - time.monotonic())
                if timeout <= 0.05:
                    break
            try:
                self._transport.hook(event, payload, timeout)
                sent += 1
            except Exception:
                # A missing binary or a run past its time: the turn goes on without it.
                continue
        return sent

    def _payload(self, event: str, **fields: Any) -> Dict[str, Any]:
        head = {"hook_event_name": event, "session_id": self._session_id, "cwd": self._cwd}
        return {**head, **fields}

    def _tool_uses(self, messages: List[Dict[str, Any]]) -> List[Tuple[str, Dict[str, Any]]]:
        """The tool calls in `messages` not taken before, each with its result."""
        with self._lock:
            return self._take_tool_uses(messages)

    def _take_tool_uses(self, messages: List[Dict[str, Any]]) -> List[Tuple[str, Dict[str, Any]]]:
        results: Dict[str, Any] = {}
        for message in messages:
            if isinstance(message, dict) and message.get("role") == "tool":
                if message.get("tool_call_id"):
                    results[str(message["tool_call_id"])] = message.get("content")
        items = []
        for index, message in enumerate(messages):
            if not isinstance(message, dict) or message.get("role") != "assistant":
                continue
            for position, call in enumerate(message.get("tool_calls") or []):
                if not isinstance(call, dict):
                    continue
                function = call.get("function") or {}
                name = str(function.get("name") or call.get("name") or "")
                call_id = str(call.get("id") or call.get("call_id") or "")
                key = call_id or "%s:%d:%d" % (self._session_id, index, position)
                if key in self._seen:
                    continue
                if call_id and call_id not in results:
                    # Its result is not in yet; a later call sees both.
                    continue
                self._seen.add(key)
                if not name or name in SKIPPED_TOOLS:
                    continue
                arguments = function.get("arguments")
                if isinstance(arguments, str):
                    try:
                        arguments = json.loads(arguments)
                    except ValueError:
                        arguments = {"arguments": arguments}
                result = strip_injected(results.get(call_id, ""))
                items.append(("post_tool_call", self._payload(
                    "post_tool_call", tool_name=name, tool_input=arguments or {},
                    extra={"result": result, "tool_call_id": call_id, "status": "ok"})))
        return items


def register(ctx) -> None:
    ctx.register_memory_provider(AgentMemoryProvider())
