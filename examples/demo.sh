#!/usr/bin/env bash
# A second writer refused, on any machine with Go: no harness needed.
# A small shell "agent" appends turns to a session file under padrun; a
# second one started on the same file is refused before it runs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
first=
cleanup() { [ -n "$first" ] && kill "$first" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

if ! command -v padrun >/dev/null; then
  (cd "$here/.." && go build -o "$work/bin/padrun" ./cmd/padrun)
  PATH=$work/bin:$PATH
fi
export PADRUN_REGISTRY_DIR=$work/registry
session=$work/session.jsonl
# The agent: ten turns, each one JSON line naming the writer's PAD_SESSION_PID.
# After its first turn it waits for the file $2, which the demo creates once
# it has shown the refusal and the status: the session is held until then.
agent='for i in 1 2 3 4 5 6 7 8 9 10; do
  printf "{\"turn\":%s,\"session\":%s}\n" "$i" "$PAD_SESSION_PID" >> "$1"
  until [ -e "$2" ]; do sleep 0.05; done
done'
go=$work/go

echo "\$ padrun --guard session.jsonl -- sh -c AGENT &"
padrun --guard "$session" -- sh -c "$agent" agent "$session" "$go" &
first=$!
until [ -s "$session" ]; do sleep 0.02; done # the first turn is written

echo "\$ padrun --guard session.jsonl -- sh -c AGENT    # a second writer"
status=0
padrun --guard "$session" -- sh -c "$agent" agent "$session" "$go" 2>&1 || status=$?
echo "(exit status $status)"

echo "\$ padrun status session.jsonl"
padrun status "$session" || true

touch "$go" # the first agent writes its other turns and ends
wait "$first"
first=
writers=$(grep -o '"session":[0-9]*' "$session" | sort -u | wc -l)
echo "the session file has $(wc -l <"$session") turns from $writers writer(s)"
[ "$status" = 75 ] && [ "$writers" = 1 ]
