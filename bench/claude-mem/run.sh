#!/usr/bin/env bash
# agent-memory beside claude-mem on the same corpus: installs claude-mem and bun from npm into a
# cache, then runs bench.py. Usage: bench/claude-mem/run.sh [path/to/agent-memory]
# Knobs: BENCH_SESSIONS (2000), BENCH_RUNS (100), BENCH_SEED, BENCH_KEEP=1 keeps the temp dir.
set -euo pipefail

CLAUDE_MEM_VERSION=13.25.3
BUN_VERSION=1.4.5

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${1:-${AGENT_MEMORY_BIN:-${CARGO_TARGET_DIR:-$root/target}/release/agent-memory}}

die() { echo "error: $*" >&2; exit 1; }
command -v node >/dev/null || die "node not found; install Node.js >= 20.12 (apt-get install nodejs npm, or nodejs.org)"
command -v npm >/dev/null || die "npm not found; install it with Node.js (apt-get install npm)"
command -v python3 >/dev/null || die "python3 not found; install Python 3 (apt-get install python3)"
node_version=$(node --version)
npm --version >/dev/null
node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a==20&&b>=12)?0:1)' \
  || die "claude-mem $CLAUDE_MEM_VERSION needs Node.js >= 20.12, found $node_version"
python3 -c 'import sqlite3; sqlite3.connect(":memory:").execute("create virtual table t using fts5(a)")' \
  2>/dev/null || die "python3's sqlite3 lacks FTS5, which claude-mem's tables need"
[ -x "$bin" ] || die "no agent-memory binary at $bin; build it: cargo build --release -p agent-memory"

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) bun_pkg=@oven/bun-linux-x64 ;;
  Linux-aarch64) bun_pkg=@oven/bun-linux-aarch64 ;;
  *) die "this benchmark reads /proc and installs bun for Linux x64 or arm64 only" ;;
esac

cache=${XDG_CACHE_HOME:-$HOME/.cache}/agent-memory-bench/claude-mem
# `npm install claude-mem` stalls resolving its dependencies; its worker and hooks are bundled
# into plugin/scripts/*.cjs and need none of them, so the tarball alone is enough.
unpack() { # npm-spec dest
  [ -e "$2/.complete" ] && return
  echo "fetching $1 ..."
  local tmp
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent "$1" >/dev/null) || { rm -rf "$tmp"; die "npm pack $1 failed"; }
  rm -rf "$2" && mkdir -p "$2"
  tar xzf "$tmp"/*.tgz -C "$2" --strip-components=1
  rm -rf "$tmp"
  touch "$2/.complete"
}
unpack "claude-mem@$CLAUDE_MEM_VERSION" "$cache/claude-mem-$CLAUDE_MEM_VERSION"
unpack "$bun_pkg@$BUN_VERSION" "$cache/bun-$BUN_VERSION"
[ "$("$cache/bun-$BUN_VERSION/bin/bun" --version)" = "$BUN_VERSION" ] || die "bun $BUN_VERSION does not run here"

work=$(mktemp -d "${TMPDIR:-/tmp}/am-vs-claude-mem.XXXXXX")
cleanup() {
  # bench.py stops its servers itself; this is for when it was killed before it could.
  if [ -f "$work/pids" ]; then
    while read -r pid; do kill "$pid" 2>/dev/null || true; done <"$work/pids"
  fi
  if [ "${BENCH_KEEP:-0}" = 1 ]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "agent-memory: $bin ($("$bin" --version)); claude-mem $CLAUDE_MEM_VERSION; bun $BUN_VERSION; node $node_version"
AGENT_MEMORY_BIN=$bin CLAUDE_MEM_PLUGIN=$cache/claude-mem-$CLAUDE_MEM_VERSION/plugin \
  BUN_DIR=$cache/bun-$BUN_VERSION/bin BENCH_WORK=$work python3 "$here/bench.py"
