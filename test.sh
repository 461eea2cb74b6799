#!/usr/bin/env bash
# Runs every test of padrun. It first installs what the end-to-end tests
# need: the pinned harnesses from npm, in two columns side by side (the
# oldest supported release and the newest), each with the Node.js it runs
# on, also from npm, into .cache/harness/<column>; tmux; zsh and fish for the
# shell examples; PyYAML to read the CI examples; bindfs for the
# shared-folder tests; etcd for the tests across machines. It needs npm (any Node.js that runs npm) and Go.
# Extra arguments go to go test, e.g. ./test.sh -run TestHarnesses -v;
# ./test.sh --install installs all that and runs no test (.ci/run starts it
# first, beside its other steps).
set -euo pipefail
cd "$(dirname "$0")"

# The columns: what each installs. The harness pins are also the tested
# versions that padrun declares (wrapper/harness): a test keeps them equal.
# codex 0.171.0 is both its oldest supported and its newest release; the
# columns still differ for it: on Node 20 its launcher runs the native codex
# as a grandchild, on Node 24 it execve's it (SPEC 4.3).
# gemini 0.43.0 is the first release with JSONL sessions, --session-id and
# --session-file; copilot 1.0.40 has --session-id and its inuse locks; qwen
# 0.21.2 has --fork-session but, like every qwen since 0.21, needs Node 22:
# HARNESS:node@VERSION gives one harness a Node.js of its own in a column.
# kilo 7.7.9's wrapper @kilocode/cli is not on the registry, only its
# platform packages: HARNESS:platform@PKG@VERSION installs PKG-linux-<arch>
# at VERSION alone and links the column's .bin/HARNESS to its bin/HARNESS
# (Factory droid ships only as its platform packages' binary, too).
# omp runs on bun, from npm's bun package: HARNESS:bun@VERSION is
# HARNESS:node@VERSION's form for a bun runtime.
oldest=(node@20.20.2 @earendil-works/pi-coding-agent@0.74.2 @anthropic-ai/claude-code@2.1.197 @openai/codex@0.171.0
  @google/gemini-cli@0.43.0 @qwen-code/qwen-code@0.21.2 qwen:node@22.23.5 @github/copilot@1.0.40
  opencode-ai@1.17.19 @kilocode/cli@7.7.7 droid:platform@@factory/cli@0.215.0 @oh-my-pi/pi-coding-agent@18.1.17 omp:bun@1.3.14 cline@3.0.57)
newest=(node@24.22.3 @earendil-works/pi-coding-agent@1.6.0 @anthropic-ai/claude-code@2.1.332 @openai/codex@0.171.0
  @google/gemini-cli@0.61.0 @qwen-code/qwen-code@0.24.4 @github/copilot@1.0.102
  opencode-ai@1.18.33 kilo:platform@@kilocode/cli@7.7.9 droid:platform@@factory/cli@0.225.2 @oh-my-pi/pi-coding-agent@18.2.3 omp:bun@1.4.5 cline@3.0.65)

if ! command -v npm >/dev/null; then
  echo "test.sh: the tests need npm, to install the pinned harnesses and their Node.js" >&2
  exit 1
fi

# install COLUMN PKG@VERSION...: one npm prefix a column, with Node.js
# from the node-linux-<arch> package in its node_modules/.bin beside the
# harnesses. HARNESS:node@VERSION installs that Node.js into
# <column>/HARNESS-node and makes the column's .bin/HARNESS a launcher that
# execs it (the harness's process is still padrun's child). copilot's native
# launcher unpacks its package on first run and then runs the newest one it
# finds in its caches: each column unpacks its own into <column>/copilot-cache
# (COPILOT_CACHE_HOME), so that neither column runs the other's copilot.
# Done again only when the pins change.
install() {
  local column=$1 dir=.cache/harness/$1
  shift
  local pkgs=() nodes=() links=() arch spec pins
  case "$(uname -m)" in
  x86_64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) echo "test.sh: no Node.js package for $(uname -m)" >&2; exit 1 ;;
  esac
  for p in "$@"; do
    case "$p" in
    node@*) pkgs+=("node-linux-$arch@${p#node@}") ;;
    *:node@*) nodes+=("${p%%:*}" "node-linux-$arch@${p#*:node@}") ;;
    *:bun@*) nodes+=("${p%%:*}" "bun@${p#*:bun@}") ;;
    *:platform@*)
      spec=${p#*:platform@}
      pkgs+=("${spec%@*}-linux-$arch@${spec##*@}")
      links+=("${p%%:*}" "${spec%@*}-linux-$arch")
      ;;
    *) pkgs+=("$p") ;;
    esac
  done
  pins="${pkgs[*]} ${nodes[*]} ${links[*]}"
  if [ "$(cat "$dir/.pins" 2>/dev/null)" = "$pins" ] && [ -x "$dir/node_modules/.bin/node" ]; then
    return
  fi
  echo "test.sh: installing the $column column: $pins" >&2
  rm -rf "$dir"
  mkdir -p "$dir"
  npm install --prefix "$dir" --no-audit --no-fund --loglevel=error --engine-strict=false "${pkgs[@]}"
  local i h rt target
  for ((i = 0; i < ${#nodes[@]}; i += 2)); do
    h=${nodes[i]}
    rt=node
    [[ ${nodes[i + 1]} == bun@* ]] && rt=bun
    npm install --prefix "$dir/$h-$rt" --no-audit --no-fund --loglevel=error "${nodes[i + 1]}"
    target=$(readlink "$dir/node_modules/.bin/$h") # relative to .bin
    rm "$dir/node_modules/.bin/$h"
    printf '#!/bin/sh\nd=$(dirname "$0")\nexec "$d/../../%s-%s/node_modules/.bin/%s" "$d/%s" "$@"\n' "$h" "$rt" "$rt" "$target" >"$dir/node_modules/.bin/$h"
    chmod +x "$dir/node_modules/.bin/$h"
  done
  for ((i = 0; i < ${#links[@]}; i += 2)); do
    ln -sfn "../${links[i + 1]}/bin/${links[i]}" "$dir/node_modules/.bin/${links[i]}"
  done
  if [ -x "$dir/node_modules/.bin/copilot" ]; then
    (cd "$dir" && HOME=$PWD COPILOT_HOME=$PWD/copilot-home COPILOT_CACHE_HOME=$PWD/copilot-cache \
      COPILOT_AUTO_UPDATE=false PATH="$PWD/node_modules/.bin:$PATH" copilot --version >/dev/null)
  fi
  echo "$pins" >"$dir/.pins"
}
install oldest "${oldest[@]}" &
old=$!
install newest "${newest[@]}"
wait $old

missing=()
command -v tmux >/dev/null || missing+=(tmux)
command -v zsh >/dev/null || missing+=(zsh)
command -v fish >/dev/null || missing+=(fish)
command -v script >/dev/null || missing+=(bsdutils)
/usr/bin/python3 -c 'import yaml' 2>/dev/null || missing+=(python3-yaml)
command -v bindfs >/dev/null || missing+=(bindfs) # two FUSE mounts of one folder: TestSharedFolders
command -v groff >/dev/null || missing+=(groff-base) # TestManPage renders padrun.1
command -v strace >/dev/null || missing+=(strace) # kills padrun mid-publish: TestScripts/temps
command -v etcd >/dev/null || missing+=(etcd-server) # a three-member cluster: TestEtcd_*
command -v etcdctl >/dev/null || missing+=(etcd-client)
command -v sqlite3 >/dev/null || missing+=(sqlite3) # reads opencode's and kilo's session databases
if [ ${#missing[@]} -gt 0 ]; then
  sudo=
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if [ "${1:-}" = --install ]; then
  exit 0
fi

# Race-instrumented binaries sleep a second at exit by default, and every
# padrun and fake harness the tests start is one.
export GORACE="${GORACE:-atexit_sleep_ms=0}"
exec go test -race -count=1 -timeout 75m ./... "$@"
