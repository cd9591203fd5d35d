#!/usr/bin/env python3
"""record_sessions.py SESSIONS [NAME...]: records the memory-quality corpus, one real session per
scenario, into SESSIONS/<name>/hooks.jsonl.

`scripts/record-sessions` runs it. Each SESSIONS/<name>/scenario.json holds a scenario:

  agent       claude, codex, gemini, opencode, copilot or hermes (run_agent.py's names)
  files       {path: text}: the project, written and committed before the agent starts (small
              programs with a real bug and a test script, so the agent's commands really run,
              and really fail or pass)
  no_project  true: the agent runs outside any project, in ~/notes, a plain folder that is no
              git repository (recorded as /home/dev/notes)
  turns       [{prompt, steps, final}]: the user's prompt, the fake model's steps (fake_model.py's
              abstract steps: shell, read, edit, write, apply_patch) and its closing answer; every
              turn after the first resumes the same session the agent's own way
  gold        what a useful memory of the session holds, and the questions asked of it (read by
              the quality benchmark, not here)
  claims      what would be false to say about the session (likewise)

The session runs through run_agent.py with hook_log.py as every hook (OpenCode: the plugin
`agent-memory install opencode` writes, its binary replaced by a logger, so what is recorded is
exactly what that plugin hands the hook), against fake_model.py. Every hook call becomes one line
of hooks.jsonl, in order: {"agent", "event", "payload"}, the agent named as `agent-memory hook
--agent` takes it, the payload sanitized as record.py sanitizes fixtures (placeholder paths, ids
and times; the project is /home/dev/work/proj, HOME /home/dev). Some of what agent-memory keeps
is only in the agent's own transcript: Codex applies `apply_patch` without a hook and keeps it
only in its rollout file, which agent-memory reads at a stop; Copilot CLI's stop hook carries no
closing answer, which the work pass reads from its session log. The transcript lines those
readers take (Codex's completed file changes; Copilot's user and assistant messages, without
their bulky fields nothing reads) are kept, sanitized, on the first hook line at which the file
held them, as "transcript": [...], and a replay appends them to the file the payload names
(under the replay's HOME) before it runs that hook. Copilot writes its log lazily, the end of a
headless session only as it exits, after its last hook: what the log gained after the last hook
that saw it goes on the session's last hook line, since the work pass reads it after the hooks.

A scenario's directory is replaced only after its session recorded cleanly, so a failed recording
changes nothing. Environment: CLIENTS, HERMES_BIN (as for record.py).
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

import record

HARNESS = os.path.dirname(os.path.abspath(__file__))
PLUGIN = os.path.join(HARNESS, "..", "..", "agent-memory-core", "src", "install", "opencode_plugin.js")
# run_agent.py's agent names, as `agent-memory hook --agent` names them.
AGENT_NAMES = {"claude": "claude-code", "codex": "codex", "gemini": "gemini", "opencode": "opencode",
               "copilot": "copilot", "hermes": "hermes"}


def opencode_plugin(run_parent, log):
    """The shipped OpenCode plugin with a logger in place of the binary."""
    logger = os.path.join(run_parent, "opencode-hook-logger")
    with open(logger, "w") as out:
        # The plugin runs BIN hook --agent opencode --event NAME.
        out.write(f'#!/bin/sh\nexec {sys.executable} {HARNESS}/hook_log.py {log} "$3" "$5"\n')
    os.chmod(logger, 0o755)
    with open(PLUGIN, encoding="utf-8") as f:
        text = f.read()
    if '"@AGENT_MEMORY_BIN@"' not in text:
        sys.exit(f"record_sessions: {PLUGIN} has no binary placeholder")
    plugin = os.path.join(run_parent, "agent-memory.js")
    with open(plugin, "w", encoding="utf-8") as out:
        out.write(text.replace('"@AGENT_MEMORY_BIN@"', json.dumps(logger)))
    return plugin


# Fields of Copilot's messages no reader needs: the prompt as the model saw it (with injected
# context and the date), and the model's reasoning.
COPILOT_DROPPED = ("transformedContent", "reasoningText", "reasoningOpaque", "encryptedContent")


def codex_line(line):
    """A rollout line's completed file change, or None."""
    if b'"FileChange"' not in line or b'"item_completed"' not in line:
        return None
    return json.loads(line)


def copilot_line(line):
    """A session log line's user or assistant message, without the fields nothing reads, or None."""
    if b'"user.message"' not in line and b'"assistant.message"' not in line:
        return None
    item = json.loads(line)
    if item.get("type") not in ("user.message", "assistant.message"):
        return None
    if isinstance(item.get("data"), dict):
        item["data"] = {k: v for k, v in item["data"].items() if k not in COPILOT_DROPPED}
    return item


# The transcript lines agent-memory reads, by agent, and whether it reads them after the hooks
# (in the work pass) as well as at them.
TRANSCRIPT_READERS = {"codex": (codex_line, False), "copilot": (copilot_line, True)}


def transcript_lines(path, start, end, keep):
    """The lines a transcript gained between two sizes that `keep` takes, parsed."""
    with open(path, "rb") as f:
        f.seek(start)
        data = f.read(end - start)
    out = []
    for line in data.split(b"\n"):
        try:
            item = keep(line)
        except ValueError:
            continue
        if item is not None:
            out.append(item)
    return out


def run_session(name, scenario_path, workdir, clients):
    """Runs a scenario's session in WORKDIR/<name>: (agent, run directory, hook calls, each with
    the transcript lines it saw first as "transcript")."""
    with open(scenario_path, encoding="utf-8") as f:
        scenario = json.load(f)
    agent = scenario["agent"]
    run = os.path.join(workdir, name)
    log = run + ".hooks.jsonl"
    env = dict(os.environ, RUN=run, CLIENTS=clients, SCENARIO=scenario_path, HOOK_TIMEOUT_S="30")
    # The agent runs in a fresh HOME, where rustup would find no toolchain for a scenario's rustc.
    rustup = os.path.expanduser("~/.rustup")
    if "RUSTUP_HOME" not in env and os.path.isdir(rustup):
        env["RUSTUP_HOME"] = rustup
    # The system's python3 first: a traceback through the standard library then names
    # /usr/lib, not a per-user installation under the real HOME.
    env["PATH"] = "/usr/bin:/bin:" + env.get("PATH", "")
    hook = f"{sys.executable} {HARNESS}/hook_log.py {log} {{agent}} {{event}}"
    if agent == "opencode":
        env["OPENCODE_PLUGIN"] = opencode_plugin(workdir, log)
        hook = "true"
    print(f"record-sessions: {name} <- {agent}", file=sys.stderr, flush=True)
    done = subprocess.run([sys.executable, os.path.join(HARNESS, "run_agent.py"), agent, hook],
                          env=env, capture_output=True, text=True)
    if f"# {agent} exit=0" not in done.stdout:
        tails = ""
        for file in sorted(os.listdir(run)) if os.path.isdir(run) else []:
            if file.endswith(".stderr"):
                tails += f"--- {file}\n" + open(os.path.join(run, file), errors="replace").read()[-2000:]
        sys.exit(f"record-sessions: the {agent} session of {name} failed:\n{done.stdout}{done.stderr}\n{tails}")
    calls = [json.loads(line) for line in open(log, encoding="utf-8") if line.strip()] \
        if os.path.exists(log) else []
    if not calls:
        sys.exit(f"record-sessions: {name}: no hook ran")

    # The transcript lines each hook call saw first.
    seen = {}
    keep, after_hooks = TRANSCRIPT_READERS.get(agent, (None, False))
    for call in calls:
        size = call.pop("transcript_bytes", None)
        stdin = call["stdin"] if isinstance(call["stdin"], dict) else {}
        path = stdin.get("transcript_path") or stdin.get("transcriptPath")
        if keep and size is not None and path and os.path.isfile(path):
            start = seen.get(path, 0)
            if size > start:
                call["transcript"] = transcript_lines(path, start, size, keep)
                seen[path] = size
    # What the transcripts gained after the last hook that saw them, on the last hook line.
    if after_hooks:
        for path, start in seen.items():
            size = os.path.getsize(path)
            if size > start:
                calls[-1].setdefault("transcript", []).extend(transcript_lines(path, start, size, keep))
    return agent, run, calls


def session_sanitizer(run, workdir, clients):
    """The sanitizer of one session's run: its paths, no ids or times learnt yet."""
    sanitizer = record.Sanitizer([(clients, record.CLIENTS_PLACEHOLDER), (HARNESS, record.HARNESS_PLACEHOLDER)])
    sanitizer.paths = sorted(sanitizer.paths + [
        (run, "/home/dev/run"), (sanitizer.dashed(run), "-home-dev-run"),
        (os.path.join(run, "proj"), record.PROJECT),
        (sanitizer.dashed(os.path.join(run, "proj")), sanitizer.dashed(record.PROJECT)),
        (os.path.join(run, "home"), record.HOME),
        (sanitizer.dashed(os.path.join(run, "home")), sanitizer.dashed(record.HOME)),
        (workdir, "/home/dev/runs"),
    ], key=lambda p: -len(p[0]))
    return sanitizer


def learnt(calls):
    """What of the hook calls the sanitizer learns ids and times from, in order."""
    return [c["stdin"] for c in calls] + [line for c in calls for line in c.get("transcript", [])]


def hook_lines(name, agent, calls, sanitizer, run, clients):
    """hooks.jsonl's text: one sanitized line per hook call."""
    lines = []
    for call in calls:
        line = {"agent": AGENT_NAMES[agent], "event": call["event"], "payload": sanitizer.value(call["stdin"])}
        if call.get("transcript"):
            line["transcript"] = [sanitizer.value(item) for item in call["transcript"]]
        text = json.dumps(line, ensure_ascii=False)
        found = record.leaks(text, run, clients)
        if found:
            sys.exit(f"record-sessions: {name}: a {call['event']} payload still holds {found}")
        lines.append(text)
    return "\n".join(lines) + "\n"


def record_one(name, scenario_path, workdir, clients):
    agent, run, calls = run_session(name, scenario_path, workdir, clients)
    sanitizer = session_sanitizer(run, workdir, clients)
    sanitizer.learn(learnt(calls))
    return hook_lines(name, agent, calls, sanitizer, run, clients)


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: record_sessions.py SESSIONS [NAME...]")
    out = os.path.abspath(sys.argv[1])
    known = sorted(d for d in os.listdir(out) if os.path.isfile(os.path.join(out, d, "scenario.json")))
    wanted = sys.argv[2:] or known
    unknown = sorted(set(wanted) - set(known))
    if unknown:
        sys.exit(f"record-sessions: no scenario {unknown} in {out}")
    clients = os.path.realpath(os.environ.get("CLIENTS") or os.path.expanduser("~/.cache/agent-memory-clients"))
    failed = []
    with tempfile.TemporaryDirectory(prefix="am-sessions-") as workdir:
        workdir = os.path.realpath(workdir)
        for name in wanted:
            try:
                text = record_one(name, os.path.join(out, name, "scenario.json"), workdir, clients)
            except SystemExit as err:
                print(err, file=sys.stderr)
                failed.append(name)
                continue
            target = os.path.join(out, name, "hooks.jsonl")
            with open(target + ".tmp", "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(target + ".tmp", target)
            shutil.rmtree(os.path.join(workdir, name), ignore_errors=True)
    if failed:
        sys.exit(f"record-sessions: not recorded: {' '.join(failed)}")


if __name__ == "__main__":
    main()
