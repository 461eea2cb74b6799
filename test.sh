#!/usr/bin/env bash
# Runs every test of padrun. It first installs what the end-to-end tests
# need: the pinned harnesses from npm, in two columns side by side (the
# oldest supported release and the newest), each with the Node.js it runs
# on, also from npm, into .cache/harness/<column>; tmux; zsh and fish for the
# shell examples; PyYAML to read the CI examples; bindfs for the
# shared-folder tests; etcd for the tests across machines. It needs npm (any Node.js that runs npm) and Go.
# Extra arguments go to go test, e.g. ./test.sh -run TestHarnesses -v
set -euo pipefail
cd "$(dirname "$0")"

# The columns: what each installs. The harness pins are also the tested
# versions that padrun declares (wrapper/harness): a test keeps them equal.
# codex 0.171.0 is both its oldest supported and its newest release; the
# columns still differ for it: on Node 20 its launcher runs the native codex
# as a grandchild, on Node 24 it execve's it (SPEC 4.3).
oldest=(node@20.20.2 @earendil-works/pi-coding-agent@0.74.2 @anthropic-ai/claude-code@2.1.197 @openai/codex@0.171.0)
newest=(node@24.22.3 @earendil-works/pi-coding-agent@1.6.0 @anthropic-ai/claude-code@2.1.332 @openai/codex@0.171.0)

if ! command -v npm >/dev/null; then
  echo "test.sh: the tests need npm, to install the pinned harnesses and their Node.js" >&2
  exit 1
fi

# install COLUMN PKG@VERSION...: one npm prefix a column, with Node.js
# from the node-linux-<arch> package in its node_modules/.bin beside the
# harnesses. Done again only when the pins change.
install() {
  local column=$1 dir=.cache/harness/$1
  shift
  local pkgs=() arch
  case "$(uname -m)" in
  x86_64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) echo "test.sh: no Node.js package for $(uname -m)" >&2; exit 1 ;;
  esac
  for p in "$@"; do
    case "$p" in
    node@*) pkgs+=("node-linux-$arch@${p#node@}") ;;
    *) pkgs+=("$p") ;;
    esac
  done
  if [ "$(cat "$dir/.pins" 2>/dev/null)" = "${pkgs[*]}" ] && [ -x "$dir/node_modules/.bin/node" ]; then
    return
  fi
  echo "test.sh: installing the $column column: ${pkgs[*]}" >&2
  rm -rf "$dir"
  mkdir -p "$dir"
  npm install --prefix "$dir" --no-audit --no-fund --loglevel=error --engine-strict=false "${pkgs[@]}"
  echo "${pkgs[*]}" >"$dir/.pins"
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
if [ ${#missing[@]} -gt 0 ]; then
  sudo=
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Race-instrumented binaries sleep a second at exit by default, and every
# padrun and fake harness the tests start is one.
export GORACE="${GORACE:-atexit_sleep_ms=0}"
exec go test -race -count=1 -timeout 45m ./... "$@"
