#!/usr/bin/env node
// Runs the agent-memory binary built for this platform. npm installs exactly one of the
// optional `@agent-memory/cli-<os>-<cpu>` packages (each says which `os` and `cpu` it is for),
// and this launcher hands it the arguments, the terminal and the exit status. Agents' hooks
// never go through it: `agent-memory install` wires the native binary itself.
"use strict";

const { spawnSync } = require("node:child_process");

const PACKAGES = {
  "linux-x64": "@agent-memory/cli-linux-x64",
  "linux-arm64": "@agent-memory/cli-linux-arm64",
  "darwin-x64": "@agent-memory/cli-darwin-x64",
  "darwin-arm64": "@agent-memory/cli-darwin-arm64",
};

function fail(message) {
  process.stderr.write(`agent-memory: ${message}\n`);
  process.exit(1);
}

function binary() {
  // A binary of one's own (a source build) takes precedence.
  if (process.env.AGENT_MEMORY_BINARY) {
    return process.env.AGENT_MEMORY_BINARY;
  }
  const platform = `${process.platform}-${process.arch}`;
  const name = PACKAGES[platform];
  if (!name) {
    fail(
      `no prebuilt binary for ${platform} (there are: ${Object.keys(PACKAGES).join(", ")}); ` +
        "build it from source with ./scripts/install (see the README)",
    );
  }
  try {
    return require.resolve(`${name}/bin/agent-memory`);
  } catch {
    return fail(
      `the package ${name}, which holds the binary for ${platform}, is not installed; ` +
        "install agent-memory again without --no-optional or --omit=optional",
    );
  }
}

const result = spawnSync(binary(), process.argv.slice(2), { stdio: "inherit" });
if (result.error) {
  fail(`cannot run ${result.error.path || "the binary"}: ${result.error.message}`);
}
if (result.signal) {
  process.kill(process.pid, result.signal);
}
process.exit(result.status === null ? 1 : result.status);
