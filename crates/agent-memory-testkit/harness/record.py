#!/usr/bin/env python3
"""record.py OUT [DIRECTORY...]: records the agents' hook payloads into OUT, sanitized.

`scripts/record-fixtures` runs it. Each recording is one or more run_agent.py sessions of a real
agent with hook_log.py as every hook (OpenCode: the recording plugin); the payloads the tests
replay are picked from the hook log, sanitized, and written to OUT/<directory>/<file>.json, the
exact stdin of one hook call (OpenCode: {input, output} as the plugin got them). A directory is
replaced whole, so a payload the agent stopped sending disappears from the diff too.

Sanitizing keeps every field name and shape and replaces what changes from run to run or
belongs to this machine with stable placeholders, so a re-recording differs only where the
agent changed:
  * the run's paths: the project becomes /home/dev/work/proj, HOME /home/dev, the client cache
    /opt/agents, this harness /opt/harness (also in the dash-encoded form Claude Code names its
    project folders with);
  * ids (UUIDs, Hermes session ids, prefixed random ids such as toolu_..., ses_...): numbered
    in order of first appearance, per agent, keeping their shape;
  * times (Unix milliseconds and ISO 8601 instants): ranked, and the n-th distinct instant
    becomes 2026-01-01T00:00:00Z plus n seconds, so their order survives; dates in prose
    become that day;
  * durations: 100.
A payload still holding the run directory, the real HOME or the user's name after that fails
the recording.

Environment: CLIENTS (the agents, from scripts/agent-test-clients), HERMES_BIN.
"""

import datetime
import getpass
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HARNESS = os.path.dirname(os.path.abspath(__file__))
PROMPT = "Run echo hello in the shell, then say done."
COMMAND = "echo hello-from-tool"
FINAL = "FAKE_FINAL_ANSWER: done."
SHELL = {"FAKE_TOOL_COMMAND": COMMAND, "FAKE_FINAL_TEXT": FINAL}
MCP = dict(SHELL, FAKE_SCRIPT="mcp", FAKE_MCP_TOOL="mem_search", FAKE_MCP_QUERY="answer")

PROJECT = "/home/dev/work/proj"
HOME = "/home/dev"
CLIENTS_PLACEHOLDER = "/opt/agents"
HARNESS_PLACEHOLDER = "/opt/harness"
BASE = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
BASE_MS = int(BASE.timestamp() * 1000)
DURATION = 100


def first(event):
    """The first call of `event`."""
    return lambda calls: next((c for c in calls if c["event"] == event), None)


def last(event):
    return lambda calls: next((c for c in reversed(calls) if c["event"] == event), None)


def first_where(event, test):
    return lambda calls: next((c for c in calls if c["event"] == event and test(c["stdin"])), None)


def answer(stdin):
    """The text of a Gemini CLI AfterModel payload's model answer."""
    return (stdin.get("llm_response") or {}).get("text")


def events(*names):
    """A file named after each event, holding its first call."""
    return [(f"{name}.json", first(name)) for name in names]


# Every recording: (directory, agent, environment of the run, [(file, pick)]). The recordings of
# one directory share one numbering of ids, and run in this order.
RECORDINGS = [
    ("claude-code", "claude", SHELL, events(
        "SessionStart", "InstructionsLoaded", "UserPromptSubmit", "PreToolUse", "PostToolUse",
        "PostToolBatch", "MessageDisplay", "Stop", "SessionEnd")),
    ("claude-code", "claude", MCP, [("PreToolUse.mcp.json", first("PreToolUse")),
                                    ("PostToolUse.mcp.json", first("PostToolUse"))]),
    ("claude-code", "claude", dict(SHELL, CLAUDE_VIA="plugin-dir"),
     [("SessionStart.plugin.json", first("SessionStart"))]),
    ("codex", "codex", SHELL, events(
        "SessionStart", "UserPromptSubmit", "PreModelRequest", "PreToolUse", "PostToolUse", "Stop",
        "SessionEnd")),
    ("codex", "codex", MCP, [("PreToolUse.mcp.json", first("PreToolUse")),
                             ("PostToolUse.mcp.json", first("PostToolUse"))]),
    ("gemini", "gemini", dict(SHELL, RESUME_PROMPT="Say done again."), events(
        "SessionStart", "BeforeAgent", "PreCompress", "BeforeModel", "BeforeToolSelection",
        "BeforeTool", "AfterTool", "AfterAgent", "SessionEnd") + [
        # The model's answer with a tool call (Gemini CLI hands the hook no parts for it), and
        # the final one in text.
        ("AfterModel.functionCall-chunk.json", first_where("AfterModel", lambda s: not answer(s))),
        ("AfterModel.json", first_where("AfterModel", lambda s: answer(s) == FINAL)),
        ("SessionStart.resume.json", first_where("SessionStart", lambda s: s.get("source") == "resume")),
    ]),
    ("gemini", "gemini", MCP, [("BeforeTool.mcp.json", first("BeforeTool")),
                               ("AfterTool.mcp.json", first("AfterTool"))]),
    ("copilot", "copilot", SHELL, events(
        "sessionStart", "userPromptSubmitted", "permissionRequest", "preToolUse", "postToolUse",
        "agentStop", "sessionEnd")),
    ("copilot", "copilot", MCP, [("permissionRequest.mcp.json", first("permissionRequest")),
                                 ("preToolUse.mcp.json", first("preToolUse")),
                                 ("postToolUse.mcp.json", first("postToolUse"))]),
    ("hermes/shell", "hermes", SHELL, events(
        "on_session_start", "pre_llm_call", "pre_tool_call", "post_tool_call", "post_llm_call",
        "on_session_end", "on_session_finalize")),
    ("opencode", "opencode", dict(SHELL, RECORD="1"), events(
        "event.session.created", "chat.message", "tool.execute.before", "tool.execute.after") + [
        ("event.session.idle.json", last("event.session.idle")),
    ]),
    ("opencode", "opencode", dict(MCP, RECORD="1"), [("tool.execute.after.mcp.json", first("tool.execute.after"))]),
]


class Sanitizer:
    """One numbering of ids and one ranking of instants for all recordings of a directory."""

    UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
    HERMES_SESSION = re.compile(r"\b\d{8}_\d{6}_[0-9a-f]{6}\b")
    # A random part has a digit somewhere, which keeps words such as "item_completed" out.
    PREFIXED = re.compile(r"\b(toolu|call|msg|prt|ses|evt|resp|chatcmpl|fc)_(?=[A-Za-z]*\d)([A-Za-z0-9]{8,})\b")
    ISO = re.compile(r"\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?(?:Z|[+-]\d{2}:\d{2})")
    # Instants in file names and prose: only their shape is kept.
    ISO_LOOSE = re.compile(r"\b\d{4}-\d{2}-\d{2}T\d{2}[-:]\d{2}(?:[-:]\d{2})?(?![.:\d])")
    PROSE_DATE = re.compile(
        r"\b(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), (?:January|February|March|April|May|"
        r"June|July|August|September|October|November|December) \d{1,2}, \d{4}\b")
    # Hermes's turn ids end in a random eight-digit hex after the session and task ids.
    HERMES_TURN = re.compile(r"(?<=\d{8}_\d{6}_[0-9a-f]{6}:[0-9a-f-]{36}:)[0-9a-f]{8}\b")
    # Codex files its rollouts under the day: sessions/YYYY/MM/DD/.
    DAY_DIRS = re.compile(r"/\d{4}/\d{2}/\d{2}/")
    # Gemini CLI reports the process group its shell tool ran in.
    PROCESS_GROUP = re.compile(r"\bPGID: \d+")
    MS_RANGE = (1_500_000_000_000, 2_500_000_000_000)

    def __init__(self, paths):
        # Longest first, so the project is not half-replaced as a path inside the run.
        pairs = []
        for real, placeholder in paths:
            pairs.append((real, placeholder))
            pairs.append((self.dashed(real), self.dashed(placeholder)))
        self.paths = sorted(pairs, key=lambda p: -len(p[0]))
        self.ids = {}
        self.count = {}

    @staticmethod
    def dashed(path):
        return re.sub(r"[^A-Za-z0-9]", "-", path)

    def placeholder(self, kind, real, make):
        if real not in self.ids:
            self.count[kind] = self.count.get(kind, 0) + 1
            self.ids[real] = make(self.count[kind])
        return self.ids[real]

    def strings(self, value, out):
        if isinstance(value, str):
            out.append(value)
        elif isinstance(value, list):
            for item in value:
                self.strings(item, out)
        elif isinstance(value, dict):
            for key, item in value.items():
                out.append(key)
                self.strings(item, out)
        return out

    def instants(self, value, out):
        """Every instant in `value`, as Unix milliseconds."""
        if isinstance(value, bool):
            return out
        if isinstance(value, int) and self.MS_RANGE[0] <= value <= self.MS_RANGE[1]:
            out.add(value)
        elif isinstance(value, str):
            for match in self.ISO.finditer(value):
                out.add(self.iso_ms(match.group(0)))
        elif isinstance(value, list):
            for item in value:
                self.instants(item, out)
        elif isinstance(value, dict):
            for item in value.values():
                self.instants(item, out)
        return out

    @staticmethod
    def iso_ms(text):
        parsed = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
        return int(parsed.timestamp() * 1000)

    def learn(self, payloads):
        """Numbers the ids and ranks the instants of a recording, in order of appearance."""
        for payload in payloads:
            for text in self.strings(payload, []):
                for match in self.UUID.finditer(text):
                    self.placeholder("uuid", match.group(0), lambda n: f"{n:08x}-0000-4000-8000-000000000000")
                for match in self.HERMES_SESSION.finditer(text):
                    self.placeholder("hermes", match.group(0), lambda n: f"20260101_000000_{n:06x}")
                for match in self.HERMES_TURN.finditer(text):
                    self.placeholder("turn", match.group(0), lambda n: f"{n:08x}")
                for match in self.PREFIXED.finditer(text):
                    prefix, rest = match.groups()
                    self.placeholder(prefix, match.group(0),
                                     lambda n, p=prefix, size=len(rest): f"{p}_{str(n).zfill(size)}")
        instants = set()
        for payload in payloads:
            self.instants(payload, instants)
        known = getattr(self, "ranked", [])
        self.ranked = sorted(set(known) | instants)

    def instant(self, ms):
        return BASE_MS + 1000 * self.ranked.index(ms)

    def text(self, value):
        for real, placeholder in self.paths:
            value = value.replace(real, placeholder)
        value = self.ISO.sub(lambda m: self.iso_text(m.group(0)), value)
        value = self.ISO_LOOSE.sub(lambda m: self.shape("2026-01-01T00:00:00", m.group(0)), value)
        value = self.PROSE_DATE.sub("Thursday, January 1, 2026", value)
        value = self.DAY_DIRS.sub("/2026/01/01/", value)
        value = self.PROCESS_GROUP.sub("PGID: 4242", value)
        for pattern in (self.HERMES_TURN, self.UUID, self.HERMES_SESSION, self.PREFIXED):
            value = pattern.sub(lambda m: self.ids.get(m.group(0), m.group(0)), value)
        # Gemini CLI names transcripts after the first eight characters of the session id.
        for real, placeholder in self.ids.items():
            if self.UUID.fullmatch(real):
                value = re.sub(rf"(?<=-){real[:8]}(?=\.json)", placeholder[:8], value)
        return value

    def iso_text(self, text):
        ms = self.instant(self.iso_ms(text))
        when = datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc)
        fraction = re.search(r"\.(\d+)", text)
        out = when.strftime("%Y-%m-%dT%H:%M:%S")
        if fraction:
            out += "." + "0" * len(fraction.group(1))
        return out + ("Z" if text.endswith("Z") else text[-6:])

    @staticmethod
    def shape(template, text):
        return "".join(template[i] if ch.isdigit() and i < len(template) else ch for i, ch in enumerate(text))

    def value(self, value, key=""):
        if isinstance(value, bool) or value is None:
            return value
        if isinstance(value, (int, float)) and re.search(r"(?i)duration|elapsed|latency", key):
            return DURATION
        if isinstance(value, int) and self.MS_RANGE[0] <= value <= self.MS_RANGE[1]:
            return self.instant(value)
        if isinstance(value, str) and key == "slug":
            # OpenCode names each session with two random words.
            return "quiet-harbor"
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(item, key) for item in value]
        if isinstance(value, dict):
            return {self.text(k): self.value(v, k) for k, v in value.items()}
        return value


def leaks(text, run, clients):
    """What of this machine a sanitized payload still holds."""
    repo = os.path.dirname(os.path.dirname(os.path.dirname(HARNESS)))
    found = [word for word in (run, clients, repo, os.path.expanduser("~")) if len(word) > 1 and word in text]
    # A path that starts in the temporary directory (Gemini CLI's own ~/.gemini/tmp is fine).
    found += re.findall(rf"(?<![\w.]){re.escape(tempfile.gettempdir())}/\S{{0,40}}", text)
    user = getpass.getuser()
    if len(user) > 2 and re.search(rf"\b{re.escape(user)}\b", text) and user not in ("dev",):
        found.append(f"the user name {user}")
    return found


def record_one(directory, agent, env, picks, workdir, clients, sanitizer, out):
    run = os.path.join(workdir, directory.replace("/", "-") + "-" + str(len(os.listdir(workdir))))
    log = os.path.join(run + ".hooks.jsonl")
    hook = f"python3 {HARNESS}/hook_log.py {log} {{agent}} {{event}}"
    child_env = dict(os.environ, RUN=run, CLIENTS=clients, PROMPT=PROMPT, HOOK_TIMEOUT_S="30", **env)
    print(f"record: {directory} <- {agent} {' '.join(f'{k}={v}' for k, v in env.items() if k != 'FAKE_FINAL_TEXT')}",
          file=sys.stderr)
    done = subprocess.run([sys.executable, os.path.join(HARNESS, "run_agent.py"), agent, hook],
                          env=child_env, capture_output=True, text=True)
    if f"# {agent} exit=0" not in done.stdout:
        tail = open(os.path.join(run, f"{agent}.stderr"), errors="replace").read()[-3000:] \
            if os.path.exists(os.path.join(run, f"{agent}.stderr")) else ""
        sys.exit(f"record: the {agent} session failed:\n{done.stdout}{done.stderr}\n{tail}")
    source = os.path.join(run, "hooks.jsonl") if agent == "opencode" else log
    calls = [json.loads(line) for line in open(source, encoding="utf-8") if line.strip()]
    chosen = []
    for file, pick in picks:
        call = pick(calls)
        if call is None:
            sys.exit(f"record: {agent} sent no payload for {directory}/{file}; events seen: "
                     f"{sorted({c['event'] for c in calls})}")
        chosen.append((file, call["stdin"]))
    sanitizer.paths = sorted(sanitizer.paths + [(run, "/home/dev/run"), (sanitizer.dashed(run), "-home-dev-run")]
                             + [(os.path.join(run, "proj"), PROJECT),
                                (sanitizer.dashed(os.path.join(run, "proj")), sanitizer.dashed(PROJECT)),
                                (os.path.join(run, "home"), HOME),
                                (sanitizer.dashed(os.path.join(run, "home")), sanitizer.dashed(HOME))],
                             key=lambda p: -len(p[0]))
    sanitizer.learn([payload for _, payload in chosen])
    for file, payload in chosen:
        clean = sanitizer.value(payload)
        text = json.dumps(clean, indent=2, ensure_ascii=False) + "\n"
        found = leaks(text, run, clients)
        if found:
            sys.exit(f"record: {directory}/{file} still holds {found}")
        os.makedirs(os.path.join(out, directory), exist_ok=True)
        with open(os.path.join(out, directory, file), "w", encoding="utf-8") as f:
            f.write(text)


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: record.py OUT [DIRECTORY...]")
    out = os.path.abspath(sys.argv[1])
    wanted = set(sys.argv[2:]) or {r[0] for r in RECORDINGS}
    unknown = wanted - {r[0] for r in RECORDINGS}
    if unknown:
        sys.exit(f"record: no recording for {sorted(unknown)}")
    clients = os.path.realpath(os.environ.get("CLIENTS") or os.path.expanduser("~/.cache/agent-memory-clients"))
    sanitizers = {}
    # Everything is recorded before anything is replaced: a failed recording changes nothing.
    with tempfile.TemporaryDirectory(prefix="am-record-") as workdir:
        workdir = os.path.realpath(workdir)
        staged = os.path.join(workdir, "fixtures")
        runs = os.path.join(workdir, "runs")
        os.makedirs(runs)
        for directory, agent, env, picks in RECORDINGS:
            if directory not in wanted:
                continue
            paths = [(clients, CLIENTS_PLACEHOLDER), (HARNESS, HARNESS_PLACEHOLDER), (runs, HOME + "/runs")]
            sanitizer = sanitizers.setdefault(directory, Sanitizer(paths))
            record_one(directory, agent, env, picks, runs, clients, sanitizer, staged)
        for directory in sorted(wanted):
            target = os.path.join(out, directory)
            shutil.rmtree(target, ignore_errors=True)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.move(os.path.join(staged, directory), target)


if __name__ == "__main__":
    main()
