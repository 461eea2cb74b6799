#!/usr/bin/env bash
# Runs every test of padrun. It first installs what the end-to-end tests
# need: the pinned harnesses from npm (into .cache/harness); tmux; zsh and
# fish for the shell examples; PyYAML to read the CI examples; bindfs for
# the shared-folder tests.
# Extra arguments go to go test, e.g. ./test.sh -run TestHarnesses -v
set -euo pipefail
cd "$(dirname "$0")"

# The harnesses need Node.js 20.6 or newer, and npm to install them.
if ! node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a == 20 && b >= 6) ? 0 : 1)' 2>/dev/null ||
  ! command -v npm >/dev/null; then
  echo "test.sh: the tests need Node.js 20.6 or newer and npm (found node $(node --version 2>/dev/null || echo none))" >&2
  exit 1
fi

pins=(@earendil-works/pi-coding-agent@0.74.2 @anthropic-ai/claude-code@2.1.197 @openai/codex@0.171.0)
harness=.cache/harness
if [ "$(cat "$harness/.pins" 2>/dev/null)" != "${pins[*]}" ]; then
  mkdir -p "$harness"
  npm install --prefix "$harness" --no-audit --no-fund --loglevel=error "${pins[@]}"
  echo "${pins[*]}" >"$harness/.pins"
fi

missing=()
command -v tmux >/dev/null || missing+=(tmux)
command -v zsh >/dev/null || missing+=(zsh)
command -v fish >/dev/null || missing+=(fish)
command -v script >/dev/null || missing+=(bsdutils)
/usr/bin/python3 -c 'import yaml' 2>/dev/null || missing+=(python3-yaml)
command -v bindfs >/dev/null || missing+=(bindfs) # two FUSE mounts of one folder: TestSharedFolders
command -v groff >/dev/null || missing+=(groff-base) # TestManPage renders padrun.1
if [ ${#missing[@]} -gt 0 ]; then
  sudo=
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Race-instrumented binaries sleep a second at exit by default, and every
# padrun and fake harness the tests start is one.
export GORACE="${GORACE:-atexit_sleep_ms=0}"
exec go test -race -count=1 -timeout 30m ./... "$@"
