// agent-memory for OpenCode (1.x). Written by `agent-memory install opencode`; removed again by
// `agent-memory uninstall opencode`. Edits here are overwritten by the next install.
//
// OpenCode has no shell hooks, so this plugin hands each moment to
// `agent-memory hook --agent opencode --event <name>` with `{cwd, input, output}` on stdin:
// `session.created`, `chat.message` (the prompt), `tool.execute.after` and `session.idle` (the
// turn's end, with the last answer). What the hook answers (`{"context": "…"}`: the session-start
// briefing, prompt-time recall) goes into the system prompt of the session's model calls
// through `experimental.chat.system.transform`, which OpenCode does not store.
//
// A session's hook runs go one at a time, in order. `opencode run` exits without waiting for
// bus-event handlers, but it awaits `dispose()`, so the hook runs still going are awaited there.
// Nothing here may throw into OpenCode or hold it up for long: every error is swallowed, every
// wait is bounded, and every hook run is killed after a time limit.
import { spawn } from "node:child_process"

const BIN = "@AGENT_MEMORY_BIN@"
// The hook keeps its own deadline (1 s by default); this only guards against a stuck process.
const HOOK_LIMIT_MS = 5000
// How long the first model call may wait for the session-start briefing, and a prompt for its
// recall; a hook run still going after that carries on, and is awaited at exit.
const BRIEFING_WAIT_MS = 3000
const PROMPT_WAIT_MS = 2000
// A session's hook runs go one after another, so its moments are stored in the order they
// happened; one that is slow holds up the next for this long at the most.
const ORDER_WAIT_MS = 1500

function plain(value) {
  const seen = new WeakSet()
  try {
    return JSON.parse(JSON.stringify(value ?? null, (_key, v) => {
      if (typeof v === "object" && v !== null) {
        if (seen.has(v)) return undefined
        seen.add(v)
      }
      return typeof v === "function" ? undefined : v
    }))
  } catch {
    return null
  }
}

/** Runs the hook for `event`; resolves to the context it answered, or "" (never rejects). */
function hook(cwd, event, input, output) {
  return new Promise((resolve) => {
    let stdout = ""
    let settled = false
    let timer = null
    const done = () => {
      if (settled) return
      settled = true
      if (timer) clearTimeout(timer)
      resolve(contextOf(stdout))
    }
    try {
      const child = spawn(BIN, ["hook", "--agent", "opencode", "--event", event], {
        cwd,
        stdio: ["pipe", "pipe", "ignore"],
      })
      timer = setTimeout(() => {
        try { child.kill("SIGKILL") } catch {}
        done()
      }, HOOK_LIMIT_MS)
      child.stdout.on("data", (chunk) => { stdout += chunk })
      child.on("error", done)
      child.on("close", done)
      child.stdin.on("error", () => {})
      child.stdin.end(JSON.stringify({ cwd, input: plain(input), output: plain(output) }))
    } catch {
      done()
    }
  })
}

function contextOf(stdout) {
  try {
    const text = stdout.trim()
    if (!text) return ""
    const context = JSON.parse(text).context
    return typeof context === "string" ? context : ""
  } catch {
    return ""
  }
}

/** `promise`, or "" once `ms` have passed; the timer goes with the promise, to hold up no exit. */
function within(promise, ms) {
  let timer = null
  const late = new Promise((resolve) => { timer = setTimeout(() => resolve(""), ms) })
  return Promise.race([promise, late]).finally(() => clearTimeout(timer))
}

export const AgentMemory = async (ctx) => {
  const cwd = ctx?.directory || ctx?.worktree || process.cwd()
  const briefings = new Map()   // sessionID -> Promise of the session-start briefing
  const recalled = new Map()    // sessionID -> context recalled for the latest prompt
  const answers = new Map()     // sessionID -> the model's latest text, sent with session.idle
  const latest = new Map()      // sessionID -> the session's latest hook run
  const running = new Set()

  /** Runs the hook for a session's moment once its previous one is done (or late). */
  const run = (id, name, input, output) => {
    const before = id ? latest.get(id) : undefined
    const start = before ? within(before, ORDER_WAIT_MS) : Promise.resolve()
    const promise = start.then(() => hook(cwd, name, input, output))
    if (id) latest.set(id, promise)
    running.add(promise)
    promise.finally(() => {
      running.delete(promise)
      if (latest.get(id) === promise) latest.delete(id)
    })
    return promise
  }

  return {
    event: async (arg) => {
      try {
        const event = arg?.event
        const id = event?.properties?.sessionID || event?.properties?.info?.id
        if (event?.type === "session.created" && id) {
          briefings.set(id, run(id, "session.created", event, null))
        } else if (event?.type === "session.idle" && id) {
          const response = answers.get(id)
          answers.delete(id)
          run(id, "session.idle", event, response ? { response } : null)
        }
      } catch {}
    },
    "chat.message": async (input, output) => {
      try {
        const id = input?.sessionID
        const context = await within(run(id, "chat.message", input, output), PROMPT_WAIT_MS)
        if (id) {
          if (context) recalled.set(id, context)
          else recalled.delete(id)
        }
      } catch {}
    },
    "tool.execute.after": async (input, output) => {
      try {
        run(input?.sessionID, "tool.execute.after", input, output)
      } catch {}
    },
    "experimental.text.complete": async (input, output) => {
      try {
        if (input?.sessionID && typeof output?.text === "string")
          answers.set(input.sessionID, output.text)
      } catch {}
    },
    "experimental.chat.system.transform": async (input, output) => {
      try {
        const id = input?.sessionID
        if (!id || !Array.isArray(output?.system)) return
        const briefing = briefings.has(id) ? await within(briefings.get(id), BRIEFING_WAIT_MS) : ""
        for (const context of [briefing, recalled.get(id)]) {
          if (context && !output.system.includes(context)) output.system.push(context)
        }
      } catch {}
    },
    dispose: async () => {
      try {
        await within(Promise.allSettled([...running]), HOOK_LIMIT_MS)
      } catch {}
    },
  }
}
