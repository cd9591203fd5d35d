// An OpenCode plugin that records every hook call: `scripts/record-fixtures` installs it through
// run_agent.py (RECORD=1). Each call appends {"agent": "opencode", "event", "stdin": {input,
// output}} to $HOOK_LOG as one JSON line, with bus events as "event.<type>". It changes nothing
// and swallows its own errors, so OpenCode runs as it would without it.
import { appendFileSync } from "node:fs"

const LOG = process.env.HOOK_LOG

// A JSON copy of what OpenCode passed: functions and cycles become markers.
function plain(value) {
  const seen = new WeakSet()
  return JSON.parse(JSON.stringify(value ?? null, (_key, v) => {
    if (typeof v === "function") return "[function]"
    if (typeof v === "object" && v !== null) {
      if (seen.has(v)) return "[cycle]"
      seen.add(v)
    }
    return v
  }))
}

function record(event, input, output) {
  if (!LOG) return
  try {
    const line = { agent: "opencode", event, stdin: { input: plain(input), output: plain(output) } }
    appendFileSync(LOG, JSON.stringify(line) + "\n")
  } catch {
    // Recording must never break the session it records.
  }
}

const HOOKS = [
  "chat.message", "chat.params", "permission.ask", "command.execute.before", "tool.execute.before",
  "tool.execute.after", "shell.env", "experimental.chat.system.transform",
  "experimental.chat.messages.transform", "experimental.session.compacting", "experimental.text.complete",
]

export const Recorder = async (context) => {
  record("init", { directory: context.directory, worktree: context.worktree }, null)
  const hooks = {
    event: async ({ event }) => record(`event.${event?.type}`, event, null),
    dispose: async () => record("dispose", null, null),
  }
  for (const name of HOOKS) hooks[name] = async (input, output) => record(name, input, output)
  return hooks
}
