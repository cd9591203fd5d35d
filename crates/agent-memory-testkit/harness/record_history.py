#!/usr/bin/env python3
"""record_history.py SESSIONS HISTORY [NAME...]: records, for one scenario of the sessions corpus
per name, both what the agent's hooks were handed and the agent's own history files afterwards,
into HISTORY/<name>/: the fixtures of `agent-memory history import`, which reads those files on
a machine where agent-memory was installed after the sessions happened.

`scripts/record-history` runs it. Each session runs exactly as record_sessions.py runs it (the
scenario read from SESSIONS/<name>/scenario.json, which is left alone), then:

  HISTORY/<name>/hooks.jsonl  the hook calls, in record_sessions.py's format
  HISTORY/<name>/home/...     the agent's history files, at their paths under the run's HOME:
    claude    .claude/projects/<dashed cwd>/<session id>.jsonl
    codex     .codex/sessions/YYYY/MM/DD/rollout-<local time>-<thread id>.jsonl (CODEX_HOME)
    gemini    .gemini/projects.json, .gemini/tmp/<slug>/.project_root,
              .gemini/tmp/<slug>/chats/session-<time>-<id8>.jsonl
    copilot   .copilot/session-state/<id>/events.jsonl and workspace.yaml,
              .copilot/session-store.db (COPILOT_HOME)
    opencode  .local/share/opencode/opencode.db (XDG_DATA_HOME)
    hermes    .hermes/state.db (HERMES_HOME)
  run_agent.py points every agent home (CODEX_HOME, COPILOT_HOME, HERMES_HOME, XDG_*) inside the
  run's HOME at its default place, so the paths are the ones a default install uses.

One sanitizer (record.py's, with what history files need on top: float and integer seconds,
UUIDs behind a prefix such as msg_, times inside Gemini CLI's call ids, the day of the run, the
fake model's port) learns the ids and instants of the hook calls first, then of every history
file, before anything is written, so a session id, a call id, a path or an instant reads the same
in hooks.jsonl and in the history files. File and directory names are sanitized with it too, as
the paths in the payloads are (a transcript_path names its file): ids numbered, a time in a name
kept only in its shape (2026-01-01T00-00-00), Codex's day directories 2026/01/01. JSON lines keep their own layout (compact or spaced); SQLite databases are copied with
the backup API (WAL included), every TEXT cell rewritten (as JSON where it parses), every time
cell (Unix milliseconds, or seconds where the column is a time) mapped, full-text indexes rebuilt
from the sanitized text and merged, then written out with VACUUM INTO in rollback-journal mode,
their schema unchanged. Anything that still holds the run directory, the real HOME or the user
name (record.leaks, over every line, every text cell, and the raw bytes of every database) fails
the recording; a name's directory is replaced only after it recorded cleanly.

Environment: CLIENTS, HERMES_BIN (as for record_sessions.py).
"""

import datetime
import getpass
import glob
import hashlib
import json
import os
import re
import shutil
import sqlite3
import sys
import tempfile

import record
import record_sessions

# The chosen scenarios: one or two per agent, with resumed turns where the agent has them, a
# Chinese one, masked exit codes, and Codex's apply_patch (which it keeps only in its rollout).
DEFAULT = ["claude-logger-reverse", "codex-retry-apply-patch", "codex-pricing-sed-masked",
           "gemini-fix-date-parse-zh", "copilot-theme-reverse", "opencode-zoneinfo-decision",
           "hermes-batch-size-reverse"]

# The history files of each agent, as globs under the run's HOME: (glob, required).
HISTORY = {
    "claude": [(".claude/projects/*/*.jsonl", True), (".claude/projects/*/*/subagents/*.jsonl", False)],
    "codex": [(".codex/sessions/*/*/*/rollout-*.jsonl", True)],
    "gemini": [(".gemini/projects.json", True), (".gemini/tmp/*/.project_root", False),
               (".gemini/tmp/*/chats/session-*.json*", True)],
    "copilot": [(".copilot/session-state/*/events.jsonl", True), (".copilot/session-state/*/workspace.yaml", False),
                (".copilot/session-store.db", False)],
    "opencode": [(".local/share/opencode/opencode.db", True)],
    "hermes": [(".hermes/state.db", True)],
}

SECONDS_RANGE = (1_500_000_000, 2_500_000_000)
# Columns and keys whose integer seconds are instants (floats in range are taken anywhere).
TIME_KEY = re.compile(r"(?i)(^|_)(time|timestamp|date|at|seen|until|expires?|created|updated|started|ended)(_|$)|At$")
DURATION_KEY = re.compile(r"(?i)duration|elapsed|latency")


class Sanitizer(record.Sanitizer):
    """record.Sanitizer, with what history files hold that hook payloads (mostly) do not."""

    # A UUID behind a prefix (Codex's msg_<uuid>, fc_<uuid>, fco_<uuid>): numbered as a UUID.
    PREFIXED_UUID = re.compile(r"(?<=[A-Za-z]_)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
    # Gemini CLI's call ids: <tool>_<Unix ms>_<n>.
    CALL_MS = re.compile(r"(?<=_)(1[5-9]|2[0-4])\d{11}(?=_\d+\b)")
    PLAIN_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")

    def __init__(self, paths):
        super().__init__(paths)
        self.days = []

    def run_days(self, keep_out):
        """The run's own days (UTC), as YYYY-MM-DD, to be written as the sanitized day in prose; a
        day that also occurs in `keep_out` (the scenario's own text) is left alone."""
        days = {datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).strftime("%Y-%m-%d")
                for ms in self.ranked}
        self.days = sorted(d for d in days if d not in keep_out)

    @classmethod
    def strip_prefixed(cls, value):
        """`value` without its prefixed UUIDs, so the plain id patterns do not take half of one."""
        if isinstance(value, str):
            return cls.PREFIXED_UUID.sub("", value)
        if isinstance(value, list):
            return [cls.strip_prefixed(v) for v in value]
        if isinstance(value, dict):
            return {cls.strip_prefixed(k): cls.strip_prefixed(v) for k, v in value.items()}
        return value

    def learn(self, payloads):
        for payload in payloads:
            for text in self.strings(payload, []):
                for match in self.PREFIXED_UUID.finditer(text):
                    self.placeholder("uuid", match.group(0), lambda n: f"{n:08x}-0000-4000-8000-000000000000")
        super().learn([self.strip_prefixed(p) for p in payloads])

    def instants(self, value, out, key=""):
        if isinstance(value, bool):
            return out
        if isinstance(value, float) and SECONDS_RANGE[0] <= value <= SECONDS_RANGE[1] \
                and not DURATION_KEY.search(key):
            out.add(round(value * 1000))
        elif isinstance(value, int) and SECONDS_RANGE[0] <= value <= SECONDS_RANGE[1] and TIME_KEY.search(key):
            out.add(value * 1000)
        elif isinstance(value, int) and self.MS_RANGE[0] <= value <= self.MS_RANGE[1]:
            out.add(value)
        elif isinstance(value, str):
            for match in self.ISO.finditer(value):
                out.add(self.iso_ms(match.group(0)))
            for match in self.CALL_MS.finditer(value):
                out.add(int(match.group(0)))
        elif isinstance(value, list):
            for item in value:
                self.instants(item, out, key)
        elif isinstance(value, dict):
            for k, item in value.items():
                self.instants(item, out, k)
        return out

    def text(self, value):
        value = self.PREFIXED_UUID.sub(lambda m: self.ids.get(m.group(0), m.group(0)), value)
        # A Gemini CLI chat's name ends in the session id's first eight characters, which the
        # loose time before them would take two digits of when they start with two digits.
        for real, placeholder in self.ids.items():
            if self.UUID.fullmatch(real) and real[:8] in value:
                value = re.sub(rf"(?<=-){real[:8]}(?=\.json)", placeholder[:8], value)
        value = self.CALL_MS.sub(lambda m: str(self.instant(int(m.group(0)))), value)
        value = super().text(value)
        for day in self.days:
            value = value.replace(day, "2026-01-01")
        return value

    def value(self, value, key=""):
        if isinstance(value, float) and not isinstance(value, bool) \
                and SECONDS_RANGE[0] <= value <= SECONDS_RANGE[1] and not DURATION_KEY.search(key):
            return self.instant(round(value * 1000)) / 1000
        if isinstance(value, int) and not isinstance(value, bool) \
                and SECONDS_RANGE[0] <= value <= SECONDS_RANGE[1] and TIME_KEY.search(key) \
                and not DURATION_KEY.search(key):
            return self.instant(value * 1000) // 1000
        return super().value(value, key)


def dump_like(item, raw):
    """`item` as JSON in the layout of the line it came from."""
    for kwargs in ({"separators": (",", ":"), "ensure_ascii": False}, {"ensure_ascii": False},
                   {"separators": (",", ":")}, {}):
        try:
            if json.dumps(json.loads(raw), **kwargs) == raw:
                return json.dumps(item, **kwargs)
        except ValueError:
            break
    return json.dumps(item, separators=(",", ":"), ensure_ascii=False)


def parse_json(text):
    """A JSON object or array in `text`, or None."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


# --- JSON lines and text files -------------------------------------------------------------------


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return text.split("\n")


def learn_text(path, sanitizer):
    if path.endswith(".jsonl"):
        items = [parse_json(line) for line in read_lines(path)]
        sanitizer.learn([i for i in items if i is not None])
    elif path.endswith(".json"):
        with open(path, encoding="utf-8") as f:
            item = parse_json(f.read())
        if item is not None:
            sanitizer.learn([item])
    with open(path, encoding="utf-8") as f:
        sanitizer.learn([f.read()])


def write_text(path, out, sanitizer):
    if path.endswith(".jsonl"):
        lines = []
        for line in read_lines(path):
            item = parse_json(line)
            lines.append(sanitizer.text(line) if item is None else dump_like(sanitizer.value(item), line))
        text = "\n".join(lines)
    elif path.endswith(".json"):
        with open(path, encoding="utf-8") as f:
            raw = f.read()
        item = parse_json(raw)
        if item is None:
            text = sanitizer.text(raw)
        else:
            indent = re.match(r"[\[{]\n( +)", raw)
            text = json.dumps(sanitizer.value(item), indent=len(indent.group(1)) if indent else None,
                              ensure_ascii=False) + ("\n" if raw.endswith("\n") else "")
    else:
        with open(path, encoding="utf-8") as f:
            text = sanitizer.text(f.read())
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w", encoding="utf-8") as f:
        f.write(text)
    return text


# --- SQLite --------------------------------------------------------------------------------------


def quote(name):
    return '"' + name.replace('"', '""') + '"'


def snapshot(src, dst):
    """A copy of a live database, WAL included, through the backup API."""
    source = sqlite3.connect(f"file:{src}?mode=ro", uri=True)
    target = sqlite3.connect(dst)
    source.backup(target)
    source.close()
    return target


def fts_tables(db):
    """{virtual table: its shadow tables} of every FTS5 table."""
    out = {}
    for name, sql in db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'"):
        if sql and re.match(r"(?is)\s*CREATE\s+VIRTUAL\s+TABLE\b.*\bUSING\s+fts5\b", sql):
            out[name] = [f"{name}_{part}" for part in ("data", "idx", "content", "docsize", "config")]
    return out


def plain_tables(db):
    """The tables whose rows the agent wrote: no FTS tables or their shadows, no sqlite_ ones."""
    fts = fts_tables(db)
    shadows = {s for v in fts.values() for s in v}
    return [name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY rowid")
            if name not in fts and name not in shadows and not name.startswith("sqlite_")]


def row_key(db, table):
    """How to address one row of `table`: ["rowid"] or its primary key's columns."""
    try:
        db.execute(f"SELECT rowid FROM {quote(table)} LIMIT 1").fetchall()
        return ["rowid"]
    except sqlite3.OperationalError:
        return [r[1] for r in db.execute(f"PRAGMA table_info({quote(table)})") if r[5]]


def rows(db, table):
    key = row_key(db, table)
    cols = [r[1] for r in db.execute(f"PRAGMA table_info({quote(table)})")]
    select = ", ".join(quote(k) if k != "rowid" else "rowid" for k in key) + ", " + ", ".join(map(quote, cols))
    for row in db.execute(f"SELECT {select} FROM {quote(table)}").fetchall():
        yield key, row[:len(key)], dict(zip(cols, row[len(key):]))


def cell_payload(value):
    if isinstance(value, str):
        parsed = parse_json(value)
        return parsed if parsed is not None else value
    return value


def learn_db(db, sanitizer):
    for table in plain_tables(db):
        sanitizer.learn([{col: cell_payload(v) for col, v in cells.items()} for _, _, cells in rows(db, table)])


def clean_cell(value, col, sanitizer):
    if isinstance(value, str):
        parsed = parse_json(value)
        if parsed is not None:
            return dump_like(sanitizer.value(parsed, col), value)
        return sanitizer.value(value, col)
    if isinstance(value, (int, float)):
        return sanitizer.value(value, col)
    return value


def write_db(db, out, sanitizer, run, clients):
    fts = fts_tables(db)
    schema = db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name").fetchall()
    pragmas = {p: db.execute(f"PRAGMA {p}").fetchone()[0] for p in ("user_version", "application_id")}
    for table in plain_tables(db):
        for key, ids, cells in list(rows(db, table)):
            changed = {}
            for col, value in cells.items():
                new = clean_cell(value, col, sanitizer)
                if new != value or type(new) is not type(value):
                    changed[col] = new
            if changed:
                where = " AND ".join(f"{k if k == 'rowid' else quote(k)} = ?" for k in key)
                sets = ", ".join(f"{quote(c)} = ?" for c in changed)
                db.execute(f"UPDATE {quote(table)} SET {sets} WHERE {where}", [*changed.values(), *ids])
    # Full-text indexes: the ones triggers keep took the sanitized text with the UPDATEs above;
    # the others get their rows rewritten. Then each is rebuilt from its (sanitized) content and
    # merged into one segment, so no token of the real text is left in it.
    triggers = " ".join(sql for (sql,) in db.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger'") if sql)
    for table in fts:
        if re.search(rf"(?i)INSERT\s+INTO\s+{re.escape(table)}\b", triggers):
            continue
        cols = [r[1] for r in db.execute(f"PRAGMA table_info({quote(table)})")]
        for row in db.execute(f"SELECT rowid, {', '.join(map(quote, cols))} FROM {quote(table)}").fetchall():
            new = [clean_cell(v, c, sanitizer) for c, v in zip(cols, row[1:])]
            if new != list(row[1:]):
                db.execute(f"DELETE FROM {quote(table)} WHERE rowid = ?", (row[0],))
                db.execute(f"INSERT INTO {quote(table)} (rowid, {', '.join(map(quote, cols))}) "
                           f"VALUES (?, {', '.join('?' * len(cols))})", (row[0], *new))
    for table in fts:
        for command in ("rebuild", "optimize"):
            try:
                db.execute(f"INSERT INTO {quote(table)} ({quote(table)}) VALUES (?)", (command,))
            except sqlite3.OperationalError:
                pass  # a contentless index has no rebuild
    db.commit()
    if os.path.exists(out):
        os.remove(out)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    db.execute("VACUUM INTO ?", (out,))
    db.close()
    clean = sqlite3.connect(out)
    clean.execute("PRAGMA journal_mode = DELETE").fetchall()
    after = clean.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name").fetchall()
    if after != schema:
        sys.exit(f"record-history: {out}: the schema changed")
    for p, v in pragmas.items():
        if clean.execute(f"PRAGMA {p}").fetchone()[0] != v:
            sys.exit(f"record-history: {out}: PRAGMA {p} changed")
    found = []
    for (table,) in clean.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
        for row in clean.execute(f"SELECT * FROM {quote(table)}").fetchall():
            for cell in row:
                if isinstance(cell, str):
                    found += [f"{table}: {f}" for f in leaks(cell, run, clients)]
    clean.close()
    for suffix in ("-wal", "-shm", "-journal"):
        if os.path.exists(out + suffix):
            sys.exit(f"record-history: {out}{suffix} is left beside it")
    return found


def leaks(text, run, clients):
    """record.leaks, less what is no leak on a machine whose user is root: the word "root" (in
    "root cause", "<root>") and "</root>" (HOME is /root); the path /root itself still is one."""
    found = record.leaks(text, run, clients)
    home = os.path.expanduser("~")
    if home in found and not re.search(rf"(?<!<){re.escape(home)}(?!\w)", text):
        found.remove(home)
    if getpass.getuser() == "root":
        found = [f for f in found if f != "the user name root"]
    return found


def raw_leaks(path, run, clients, secret):
    """The run's paths (and the random part of its temporary directory, which a full-text index
    would hold as a token of its own) anywhere in a file's bytes."""
    with open(path, "rb") as f:
        data = f.read()
    repo = os.path.dirname(os.path.dirname(os.path.dirname(record.HARNESS)))
    words = [run, clients, repo, os.path.expanduser("~") + "/", secret]
    return [w for w in words if len(w) > 3 and (w.encode() in data or w.lower().encode() in data)]


# --- one scenario --------------------------------------------------------------------------------


def record_one(name, sessions, workdir, clients):
    scenario_path = os.path.join(sessions, name, "scenario.json")
    with open(scenario_path, encoding="utf-8") as f:
        scenario_text = f.read()
    no_project = bool(json.loads(scenario_text).get("no_project"))
    agent, run, calls = record_sessions.run_session(name, scenario_path, workdir, clients)
    home = os.path.join(run, "home")
    files = []
    for pattern, required in HISTORY[agent]:
        found = sorted(glob.glob(os.path.join(home, pattern)))
        if required and not found:
            sys.exit(f"record-history: {name}: the {agent} session left no {pattern} under its HOME")
        files += found

    base = record_sessions.session_sanitizer(run, workdir, clients)
    sanitizer = Sanitizer([])
    sanitizer.paths = list(base.paths)
    # The hook commands the agent records (Claude Code's stop_hook_summary) name this Python.
    extra = [(sys.executable, "/usr/bin/python3")]
    if os.path.realpath(sys.executable) != sys.executable:
        extra.append((os.path.realpath(sys.executable), "/usr/bin/python3"))
    port_file = os.path.join(run, "port")
    if os.path.exists(port_file):
        port = open(port_file).read().strip()
        extra += [(f"127.0.0.1:{port}", "127.0.0.1:4000"), (f"localhost:{port}", "localhost:4000")]
    # Gemini CLI keys a project by the SHA-256 of its root.
    proj = os.path.join(home, "notes") if no_project else os.path.join(run, "proj")
    placeholder = os.path.join(record.HOME, "notes") if no_project else record.PROJECT
    extra.append((hashlib.sha256(proj.encode()).hexdigest(), hashlib.sha256(placeholder.encode()).hexdigest()))
    sanitizer.paths = sorted(sanitizer.paths + extra, key=lambda p: -len(p[0]))

    # Everything is learnt before anything is written: the hook calls first (so their ids are
    # numbered as record_sessions.py numbers them), then every history file.
    sanitizer.learn(record_sessions.learnt(calls))
    dbs = {}
    for path in files:
        if path.endswith(".db"):
            dbs[path] = snapshot(path, os.path.join(workdir, f"{name}.{len(dbs)}.snapshot.db"))
            learn_db(dbs[path], sanitizer)
        else:
            learn_text(path, sanitizer)
    sanitizer.run_days(scenario_text)

    staged = os.path.join(workdir, "out", name)
    shutil.rmtree(staged, ignore_errors=True)
    os.makedirs(staged)
    hooks = record_sessions.hook_lines(name, agent, calls, sanitizer, run, clients)
    with open(os.path.join(staged, "hooks.jsonl"), "w", encoding="utf-8") as f:
        f.write(hooks)
    secret = os.path.basename(workdir).split("-")[-1]
    written = []
    for path in files:
        # Sanitized as the paths in the hook payloads are, so transcript_path names this file.
        rel = sanitizer.text(os.path.relpath(path, home))
        out = os.path.join(staged, "home", rel)
        if path in dbs:
            found = write_db(dbs[path], out, sanitizer, run, clients)
        else:
            found = leaks(write_text(path, out, sanitizer), run, clients)
        found += raw_leaks(out, run, clients, secret) + leaks(rel, run, clients)
        if found:
            sys.exit(f"record-history: {name}: home/{rel} still holds {sorted(set(found))[:5]}")
        written.append(rel)
    return staged, written


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: record_history.py SESSIONS HISTORY [NAME...]")
    sessions, history = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    wanted = sys.argv[3:] or DEFAULT
    unknown = [n for n in wanted if not os.path.isfile(os.path.join(sessions, n, "scenario.json"))]
    if unknown:
        sys.exit(f"record-history: no scenario {unknown} in {sessions}")
    clients = os.path.realpath(os.environ.get("CLIENTS") or os.path.expanduser("~/.cache/agent-memory-clients"))
    failed = []
    with tempfile.TemporaryDirectory(prefix="am-history-") as workdir:
        workdir = os.path.realpath(workdir)
        for name in wanted:
            try:
                staged, written = record_one(name, sessions, workdir, clients)
            except SystemExit as err:
                print(err, file=sys.stderr)
                failed.append(name)
                continue
            target = os.path.join(history, name)
            shutil.rmtree(target, ignore_errors=True)
            os.makedirs(history, exist_ok=True)
            shutil.move(staged, target)
            shutil.rmtree(os.path.join(workdir, name), ignore_errors=True)
            for rel in written:
                print(f"record-history: {name}/home/{rel}", file=sys.stderr)
    if failed:
        sys.exit(f"record-history: not recorded: {' '.join(failed)}")


if __name__ == "__main__":
    main()
