#!/usr/bin/env python3
"""run_agent.py AGENT [HOOK]: one non-interactive session of a real agent CLI, offline.

AGENT is claude, codex, gemini, opencode, copilot or hermes. The session runs in a fresh HOME
(RUN/home) from a one-commit git repository (RUN/proj), against fake_model.py on 127.0.0.1, with
HOOK as the command of every hook the agent has ("{agent}" and "{event}" are filled in; without
them the two words are appended). Afterwards RUN holds:

  model-requests.jsonl    every request the agent made of the model, each followed by the answer
  mcp.jsonl               what the agent sent the fake MCP server (when it ran)
  hooks.jsonl             OpenCode's plugin hook calls (RECORD=1)
  AGENT.stdout, .stderr   the agent's own output
  home/, proj/            the agent's configs, transcripts and databases

The last line on stdout is "# AGENT exit=CODE". Paths handed in must be absolute.

Environment:
  CLIENTS          where scripts/agent-test-clients installed the agents
  RUN              the run directory, emptied first (default: a new temp directory)
  PROMPT           the user's prompt
  HOOK_TIMEOUT_S   the timeout written beside every hook (default 10)
  FAKE_*           the fake model's script (see fake_model.py)
  MCP=1            register an MCP server MCP_NAME (default mem) running MCP_CMD (default: the
                   fake MCP server); FAKE_SCRIPT=mcp implies it
  <AGENT>_BIN      the agent's executable (CLAUDE_BIN, CODEX_BIN, ...), default under CLIENTS
  CLAUDE_VIA       settings (default) or plugin-dir: Claude Code's hooks from a --plugin-dir plugin
  RESUME_PROMPT    a second turn: the agent's own "continue the last session" run, with this
                   prompt (Gemini CLI `--resume latest`, Claude Code and OpenCode `--continue`,
                   Codex `exec resume --last`, Copilot CLI `--continue`, Hermes `--continue`)
  RECORD=1         OpenCode: a plugin that logs every hook call to hooks.jsonl
  OPENCODE_PLUGIN  OpenCode: one more plugin file to install (the sessions recorder's)
  SCENARIO         a scenario file (see record_sessions.py): its `files` are written into the
                   project before its one commit, and its `turns` ({prompt, steps, final}) run
                   one after another in one session, the first as a new session and every
                   later one as a resumed one; the fake model follows each turn's steps
                   through FAKE_SCRIPT_FILE. PROMPT, RESUME_PROMPT and FAKE_SCRIPT are then unused.
                   With "no_project": true the agent runs instead in RUN/home/notes, a plain
                   folder of its HOME that is no git repository (its `files`, if any, written
                   there): a person talking to an assistant outside any project.
"""

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HARNESS = os.path.dirname(os.path.abspath(__file__))
# The marker a run directory carries, so a RUN pointing at anything else is never emptied.
MARK = ".agent-run"
FAKE_KEY = "sk-FAKE-KEY-0000"


class Run:
    def __init__(self, agent, hook):
        self.agent = agent
        self.hook = hook
        self.clients = os.environ.get("CLIENTS") or os.path.expanduser("~/.cache/agent-memory-clients")
        self.dir = self.prepare(os.environ.get("RUN"))
        self.home = os.path.join(self.dir, "home")
        self.prompt = os.environ.get("PROMPT") or "Run echo hello in the shell, then say done."
        self.scenario = self.load_scenario(os.environ.get("SCENARIO"))
        # Where the agent runs: the project, or for a scenario outside any project a plain
        # folder of the HOME.
        self.no_project = bool((self.scenario or {}).get("no_project"))
        self.proj = os.path.join(self.home, "notes") if self.no_project else os.path.join(self.dir, "proj")
        # Every turn after the first, as (prompt, the fake model's script for it or None).
        self.turns = []
        if self.scenario:
            self.prompt = self.scenario["turns"][0]["prompt"]
            self.turns = [(t["prompt"], t) for t in self.scenario["turns"][1:]]
        elif os.environ.get("RESUME_PROMPT"):
            self.turns = [(os.environ["RESUME_PROMPT"], None)]
        self.timeout_s = int(os.environ.get("HOOK_TIMEOUT_S") or 10)
        self.mcp = os.environ.get("MCP") == "1" or os.environ.get("FAKE_SCRIPT") == "mcp"
        self.mcp_name = os.environ.get("MCP_NAME") or "mem"
        self.mcp_argv = shlex.split(os.environ.get("MCP_CMD") or f"python3 {HARNESS}/fake_mcp.py")
        self.mcp_env = {"MCP_LOG": os.path.join(self.dir, "mcp.jsonl")}
        # PWD too: OpenCode takes its project directory from it.
        self.env = dict(os.environ, HOME=self.home, PWD=self.proj)
        self.port = None
        self.model = None

    @staticmethod
    def load_scenario(path):
        if not path:
            return None
        with open(path, encoding="utf-8") as f:
            return json.load(f)

    def script_file(self):
        return self.path("fake-script.json")

    def set_turn(self, turn):
        """Points the fake model at one scenario turn's steps and closing answer."""
        if turn is not None:
            self.write_json(self.script_file(), {"script": turn.get("steps") or "none",
                                                 "final": turn.get("final") or "Done."})

    @staticmethod
    def prepare(path):
        if not path:
            return tempfile.mkdtemp(prefix="agent-run-")
        path = os.path.abspath(path)
        if os.path.isdir(path) and os.listdir(path) and not os.path.exists(os.path.join(path, MARK)):
            sys.exit(f"run_agent: refusing to empty {path}: it is not a run directory")
        shutil.rmtree(path, ignore_errors=True)
        os.makedirs(path)
        open(os.path.join(path, MARK), "w").close()
        return path

    def hook_for(self, event, agent=None):
        agent = agent or self.agent
        if "{agent}" in self.hook or "{event}" in self.hook:
            return self.hook.replace("{agent}", agent).replace("{event}", event)
        return f"{self.hook} {agent} {event}"

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def bin(self, var, relative):
        return os.environ.get(var) or os.path.join(self.clients, relative)

    def write(self, path, text):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as out:
            out.write(text)

    def write_json(self, path, value):
        self.write(path, json.dumps(value, indent=2) + "\n")

    def start_model(self):
        port_file = self.path("port")
        log = open(self.path("fake-model.out"), "w")
        env = dict(os.environ, FAKE_PROJECT=self.proj)
        if self.scenario:
            self.set_turn(self.scenario["turns"][0])
            env["FAKE_SCRIPT_FILE"] = self.script_file()
        self.model = subprocess.Popen(
            [sys.executable, os.path.join(HARNESS, "fake_model.py"), "--port", "0",
             "--port-file", port_file, "--log", self.path("model-requests.jsonl")],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
        for _ in range(200):
            if os.path.exists(port_file):
                self.port = int(open(port_file).read())
                return
            if self.model.poll() is not None:
                break
            time.sleep(0.05)
        sys.exit("run_agent: the fake model did not start; see " + self.path("fake-model.out"))

    def stop_model(self):
        if self.model and self.model.poll() is None:
            self.model.terminate()
            self.model.wait()

    def make_project(self):
        os.makedirs(self.home)
        os.makedirs(self.proj)
        if self.no_project:
            # A plain folder: no README of a project, no repository.
            for name, text in (self.scenario.get("files") or {}).items():
                self.write(os.path.join(self.proj, name), text)
            return
        self.write(os.path.join(self.proj, "README.md"), "# demo project\n")
        # A scenario's project: real code with a real bug, committed, so `git apply` and
        # `git diff` work on it as in any repository.
        for name, text in ((self.scenario or {}).get("files") or {}).items():
            self.write(os.path.join(self.proj, name), text)
            if name.endswith(".sh"):
                os.chmod(os.path.join(self.proj, name), 0o755)
        git = ["git", "-c", "user.email=dev@example.invalid", "-c", "user.name=dev", "-c", "init.defaultBranch=main"]
        # A fixed date makes the one commit the same in every run: agents that name a project by
        # its first commit (OpenCode) name it the same.
        when = "2026-01-01T00:00:00Z"
        env = dict(self.env, GIT_AUTHOR_DATE=when, GIT_COMMITTER_DATE=when)
        for args in (["init", "-q", "."], ["add", "-A"], ["commit", "-q", "-m", "init"]):
            subprocess.run(git + args, cwd=self.proj, check=True, env=env, stdout=subprocess.DEVNULL)

    def execute(self, argv, name, timeout=240):
        """Runs the agent in the project with no stdin; its output goes to NAME.stdout/.stderr.
        A run past `timeout` seconds is killed with everything it started."""
        with open(self.path(f"{name}.stdout"), "w") as out, open(self.path(f"{name}.stderr"), "w") as err:
            child = subprocess.Popen(argv, cwd=self.proj, env=self.env, stdin=subprocess.DEVNULL,
                                     stdout=out, stderr=err, start_new_session=True)
            try:
                return child.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(child.pid, signal.SIGKILL)
                child.wait()
                return 124

    def session(self, name, first, resumed):
        """Runs the first turn (`first`, an argv), then each later turn as `resumed(prompt)`, the
        agent's own way of continuing its latest session; stops at the first turn that fails."""
        rc = self.execute(first, name)
        for i, (prompt, turn) in enumerate(self.turns):
            if rc != 0:
                break
            self.set_turn(turn)
            rc = self.execute(resumed(prompt), f"{name}-resume" + (str(i + 1) if i else ""))
        return rc

    # One method per agent: write its configuration, then run it.

    def claude(self):
        claude = self.bin("CLAUDE_BIN", "claude-code/node_modules/.bin/claude")
        self.env.update(ANTHROPIC_BASE_URL=f"http://127.0.0.1:{self.port}", ANTHROPIC_API_KEY=FAKE_KEY,
                        # Otherwise MCP tools hide behind a ToolSearch tool the fake model never calls.
                        ENABLE_TOOL_SEARCH="false", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
                        DISABLE_AUTOUPDATER="1", DISABLE_TELEMETRY="1", DISABLE_ERROR_REPORTING="1")
        # A project instructions file, so InstructionsLoaded fires (a plain folder has none).
        if not self.no_project:
            self.write(os.path.join(self.proj, "CLAUDE.md"), "Keep answers short.\n")
        events = ["SessionStart", "InstructionsLoaded", "UserPromptSubmit", "PreToolUse", "PostToolUse",
                  "PostToolUseFailure", "PostToolBatch", "MessageDisplay", "Notification", "Stop",
                  "SubagentStop", "PreCompact", "SessionEnd"]
        hooks = {e: [{"matcher": "", "hooks": [{"type": "command", "command": self.hook_for(e, "claude"),
                                                "timeout": self.timeout_s}]}] for e in events}
        extra = []
        if os.environ.get("CLAUDE_VIA") == "plugin-dir":
            plugin = self.path("plugin")
            self.write_json(os.path.join(plugin, ".claude-plugin", "plugin.json"),
                            {"name": "recorder", "version": "0.1.0", "description": "hooks from a plugin"})
            self.write_json(os.path.join(plugin, "hooks", "hooks.json"), {"hooks": hooks})
            extra = ["--plugin-dir", plugin]
        else:
            self.write_json(os.path.join(self.home, ".claude", "settings.json"), {"hooks": hooks})
        if self.mcp:
            env = [arg for k, v in self.mcp_env.items() for arg in ("-e", f"{k}={v}")]
            subprocess.run([claude, "mcp", "add", "--scope", "user", self.mcp_name, *env, "--", *self.mcp_argv],
                           cwd=self.proj, env=self.env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        allowed = f"Bash,mcp__{self.mcp_name}__mem_search"
        if self.scenario:
            # A scenario's steps read, edit and write files as well.
            allowed += ",Read,Edit,Write"
        flags = ["--output-format", "json", *extra, "--allowedTools", allowed, "--model", "claude-sonnet-4-5"]
        return self.session("claude", [claude, "-p", self.prompt, *flags],
                            lambda prompt: [claude, "-p", prompt, "--continue", *flags])

    def codex(self):
        codex = self.bin("CODEX_BIN", "codex/node_modules/.bin/codex")
        codex_home = os.path.join(self.home, ".codex")
        self.env.update(CODEX_HOME=codex_home, FAKE_OPENAI_API_KEY=FAKE_KEY)
        events = ["SessionStart", "UserPromptSubmit", "PreModelRequest", "PreToolUse", "PermissionRequest",
                  "PostToolUse", "PreCompact", "Stop", "SessionEnd"]
        hooks_path = os.path.join(codex_home, "hooks.json")
        self.write_json(hooks_path, {"hooks": {e: [{"hooks": [{"type": "command", "command": self.hook_for(e),
                                                               "timeout": self.timeout_s}]}] for e in events}})
        q = json.dumps  # a JSON string is a TOML basic string
        config = [
            'model = "gpt-5.1-codex"', 'model_provider = "fake"', 'approval_policy = "never"',
            'sandbox_mode = "danger-full-access"', "",
            "[model_providers.fake]", 'name = "fake"', f"base_url = {q(f'http://127.0.0.1:{self.port}/v1')}",
            'wire_api = "responses"', 'env_key = "FAKE_OPENAI_API_KEY"',
            "request_max_retries = 0", "stream_max_retries = 0", "",
        ]
        if self.mcp:
            config += [f"[mcp_servers.{q(self.mcp_name)}]", f"command = {q(self.mcp_argv[0])}",
                       f"args = {q(self.mcp_argv[1:])}", f"[mcp_servers.{q(self.mcp_name)}.env]"]
            config += [f"{k} = {q(v)}" for k, v in self.mcp_env.items()] + [""]
        # Codex runs only hooks config.toml trusts, and skips the rest without a word.
        trust = subprocess.run([sys.executable, os.path.join(HARNESS, "codex_trust.py"), hooks_path],
                               check=True, capture_output=True, text=True).stdout
        self.write(os.path.join(codex_home, "config.toml"), "\n".join(config) + "\n" + trust)
        flags = ["exec", "--json", "--skip-git-repo-check"]
        return self.session("codex", [codex, *flags, self.prompt],
                            lambda prompt: [codex, *flags, "resume", "--last", prompt])

    def gemini(self):
        gemini = self.bin("GEMINI_BIN", "gemini/node_modules/.bin/gemini")
        self.env.update(GEMINI_API_KEY=FAKE_KEY, GOOGLE_GEMINI_BASE_URL=f"http://127.0.0.1:{self.port}",
                        GEMINI_CLI_NO_RELAUNCH="true", NO_COLOR="1")
        events = ["SessionStart", "BeforeAgent", "BeforeModel", "AfterModel", "BeforeToolSelection",
                  "BeforeTool", "AfterTool", "AfterAgent", "PreCompress", "Notification", "SessionEnd"]
        # Gemini CLI's hook timeouts are milliseconds.
        hooks = {}
        for e in events:
            group = {"hooks": [{"name": f"hook-{e}", "type": "command", "command": self.hook_for(e),
                                "timeout": 1000 * self.timeout_s}]}
            if e in ("BeforeTool", "AfterTool"):
                group["matcher"] = ".*"
            hooks[e] = [group]
        settings = {
            "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
            "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False},
            "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
            "hooksConfig": {"enabled": True, "notifications": False},
            "hooks": hooks,
        }
        if self.mcp:
            settings["mcpServers"] = {self.mcp_name: {"command": self.mcp_argv[0], "args": self.mcp_argv[1:],
                                                      "env": self.mcp_env, "trust": True}}
        self.write_json(os.path.join(self.home, ".gemini", "settings.json"), settings)
        return self.session("gemini", [gemini, "--yolo", "-p", self.prompt, "--output-format", "json"],
                            lambda prompt: [gemini, "--yolo", "--resume", "latest", "-p", prompt,
                                            "--output-format", "json"])

    def opencode(self):
        opencode = self.bin("OPENCODE_BIN", "opencode/node_modules/.bin/opencode")
        config = os.path.join(self.home, ".config")
        self.env.update(XDG_CONFIG_HOME=config, XDG_DATA_HOME=os.path.join(self.home, ".local/share"),
                        XDG_CACHE_HOME=os.path.join(self.home, ".cache"),
                        XDG_STATE_HOME=os.path.join(self.home, ".local/state"),
                        OPENCODE_DISABLE_AUTOUPDATE="1", OPENCODE_DISABLE_MODELS_FETCH="1",
                        OPENCODE_DISABLE_LSP_DOWNLOAD="1", OPENCODE_DISABLE_SHARE="1", NO_COLOR="1")
        own = os.path.join(config, "opencode")
        os.makedirs(os.path.join(own, "plugins"))
        # OpenCode installs its plugin package into its config directory at every start; the
        # installed copy spares an offline start its retries.
        seed = os.path.join(self.clients, "opencode-seed")
        for name in ("node_modules", "package.json", "package-lock.json"):
            source = os.path.join(seed, name)
            if os.path.isdir(source):
                shutil.copytree(source, os.path.join(own, name), symlinks=True)
            elif os.path.isfile(source):
                shutil.copy(source, own)
        if os.environ.get("RECORD") == "1":
            shutil.copy(os.path.join(HARNESS, "opencode_record.js"), os.path.join(own, "plugins"))
            self.env["HOOK_LOG"] = self.path("hooks.jsonl")
        if os.environ.get("OPENCODE_PLUGIN"):
            shutil.copy(os.environ["OPENCODE_PLUGIN"], os.path.join(own, "plugins"))
        provider = {"npm": "@ai-sdk/openai-compatible", "name": "fake",
                    "options": {"baseURL": f"http://127.0.0.1:{self.port}/v1", "apiKey": FAKE_KEY},
                    "models": {"fake-model": {"name": "fake-model", "tool_call": True,
                                              "limit": {"context": 128000, "output": 8192}}}}
        settings = {"$schema": "https://opencode.ai/config.json", "provider": {"fake": provider},
                    "model": "fake/fake-model", "small_model": "fake/fake-model", "autoupdate": False,
                    "share": "disabled", "permission": {"bash": "allow", "edit": "allow", "webfetch": "allow"}}
        if self.mcp:
            settings["mcp"] = {self.mcp_name: {"type": "local", "command": self.mcp_argv,
                                               "environment": self.mcp_env, "enabled": True}}
        self.write_json(os.path.join(own, "opencode.json"), settings)
        return self.session("opencode", [opencode, "run", "--format", "json", "--print-logs", self.prompt],
                            lambda prompt: [opencode, "run", "--continue", "--format", "json", "--print-logs",
                                            prompt])

    def copilot(self):
        copilot = self.bin("COPILOT_BIN", "copilot/node_modules/.bin/copilot")
        copilot_home = os.path.join(self.home, ".copilot")
        self.env.update(COPILOT_HOME=copilot_home,
                        # Unpacked once by scripts/agent-test-clients, not once per fresh HOME.
                        COPILOT_PKG_CACHE_HOME=os.path.join(self.clients, "copilot-pkg-cache"),
                        COPILOT_OFFLINE="true", COPILOT_AUTO_UPDATE="false", COPILOT_PROVIDER_TYPE="anthropic",
                        COPILOT_PROVIDER_BASE_URL=f"http://127.0.0.1:{self.port}",
                        COPILOT_PROVIDER_API_KEY=FAKE_KEY, COPILOT_MODEL="claude-sonnet-4.5")
        events = ["sessionStart", "userPromptSubmitted", "permissionRequest", "preToolUse", "postToolUse",
                  "postToolUseFailure", "agentStop", "errorOccurred", "sessionEnd"]
        # Copilot's payloads carry no event name: each hook names its own.
        hooks = {e: [{"type": "command", "bash": self.hook_for(e), "timeoutSec": self.timeout_s}] for e in events}
        self.write_json(os.path.join(self.proj, ".github", "hooks", "harness.json"), {"version": 1, "hooks": hooks})
        if self.mcp:
            server = {"type": "local", "command": self.mcp_argv[0], "args": self.mcp_argv[1:],
                      "env": self.mcp_env, "tools": ["*"]}
            self.write_json(os.path.join(copilot_home, "mcp-config.json"), {"mcpServers": {self.mcp_name: server}})
        else:
            os.makedirs(copilot_home)
        if self.turns:
            # A resumed session (`--continue` refuses `--trust-folder`) loads the repository's
            # hooks only from a folder the user's config trusts.
            self.write_json(os.path.join(copilot_home, "config.json"), {"trusted_folders": [self.proj]})
        # Repository hooks load only in a trusted folder.
        flags = ["--allow-all-tools", "--disable-client-telemetry", "--no-auto-update"]
        # `--continue` refuses `--trust-folder`; the first run's trust is kept in COPILOT_HOME.
        return self.session("copilot", [copilot, "-p", self.prompt, "--trust-folder", *flags],
                            lambda prompt: [copilot, "--continue", "-p", prompt, *flags])

    def hermes(self):
        hermes = self.bin("HERMES_BIN", "hermes/bin/hermes")
        hermes_home = os.path.join(self.home, ".hermes")
        self.env.update(HERMES_HOME=hermes_home, HERMES_ACCEPT_HOOKS="1", NO_COLOR="1")
        q = json.dumps  # a JSON scalar is a YAML scalar
        lines = ["model:", "  provider: custom", "  default: fake-model",
                 f"  base_url: http://127.0.0.1:{self.port}/v1", f"  api_key: {FAKE_KEY}",
                 # Without it Hermes probes the server for the context size first.
                 "  context_length: 128000",
                 # Without it a run with no terminal skips every hook not yet approved.
                 "hooks_auto_accept: true", "hooks:"]
        for event in ["on_session_start", "pre_llm_call", "pre_tool_call", "post_tool_call", "post_llm_call",
                      "on_session_end", "on_session_finalize"]:
            lines += [f"  {event}:", f"    - command: {q(self.hook_for(event))}", f"      timeout: {self.timeout_s}"]
        if self.mcp:
            lines += ["mcp_servers:", f"  {self.mcp_name}:", f"    command: {q(self.mcp_argv[0])}",
                      f"    args: {q(self.mcp_argv[1:])}", f"    env: {q(self.mcp_env)}"]
        self.write(os.path.join(hermes_home, "config.yaml"), "\n".join(lines) + "\n")
        flags = ["chat", "-Q", "--yolo", "--accept-hooks"]
        return self.session("hermes", [hermes, *flags, "-q", self.prompt],
                            lambda prompt: [hermes, *flags, "--continue", "-q", prompt])


def main():
    agents = ("claude", "codex", "gemini", "opencode", "copilot", "hermes")
    if len(sys.argv) not in (2, 3) or sys.argv[1] not in agents:
        sys.exit(f"usage: run_agent.py {{{','.join(agents)}}} [HOOK]")
    agent = sys.argv[1]
    run = Run(agent, sys.argv[2] if len(sys.argv) == 3 else "true")
    print(f"# {agent} run: {run.dir}", flush=True)
    run.make_project()
    run.start_model()
    try:
        rc = getattr(run, agent)()
    finally:
        run.stop_model()
    print(f"# {agent} exit={rc}", flush=True)


if __name__ == "__main__":
    main()
