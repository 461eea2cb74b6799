#!/usr/bin/env bash
# Runs every test of padrun. It first installs what the end-to-end tests
# need: the pinned harnesses from npm (into .cache/harness) and tmux.
# Extra arguments go to go test, e.g. ./test.sh -run TestHarnesses -v
set -euo pipefail
cd "$(dirname "$0")"

pins=(@earendil-works/pi-coding-agent@0.74.2 @anthropic-ai/claude-code@2.1.197 @openai/codex@0.171.0)
harness=.cache/harness
if [ "$(cat "$harness/.pins" 2>/dev/null)" != "${pins[*]}" ]; then
  mkdir -p "$harness"
  npm install --prefix "$harness" --no-audit --no-fund --loglevel=error "${pins[@]}"
  echo "${pins[*]}" >"$harness/.pins"
fi

if ! command -v tmux >/dev/null; then
  sudo=
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq tmux
fi

exec go test -race -count=1 ./... "$@"
