#!/usr/bin/env bash
# The README's `npm start` in this clone: waits until the API answers /ready, stops it as Ctrl-C
# does (SIGINT to its whole process group: npm, the stack, worker, API, Temporal, PostgreSQL), and
# fails when it does not come up, when anything of it is still running 60 s later, or when it left
# the clone changed (a rewritten lock, a file outside .gitignore). Uses npm start's own ports
# (3000, 5433, 7233, 8233, 9464-9466; PORT and the other settings npm start reads move them), so it
# runs alone, before or after npm test, never beside it.
set -euo pipefail
cd "$(dirname "$0")/.."
ready="http://127.0.0.1:${PORT:-3000}/ready"
log="$(mktemp)"
group=''
trap '[ -z "$group" ] || kill -KILL -- "-$group" 2> /dev/null; rm -f "$log"' EXIT
fail() {
  tail -n 60 "$log" >&2
  echo "[ci] $1 (npm start's last lines are above)" >&2
  exit 1
}

if curl -fs -o /dev/null --max-time 2 "$ready"; then
  echo "[ci] something already answers $ready: stop it, or move npm start (PORT and the other ports it names)" >&2
  exit 1
fi
setsid npm start > "$log" 2>&1 < /dev/null &
group=$! # setsid makes npm the leader of a process group of its own: everything it starts is in it
[ "$(ps -o pgid= -p "$group" | tr -d ' ')" = "$group" ] || fail "npm start did not get a process group of its own"
alive() { pgrep -g "$group" > /dev/null; }
stop() {
  kill -INT -- "-$group" 2> /dev/null || true
  for _ in $(seq 60); do alive || return 0; sleep 1; done
  return 1
}

# First run in a fresh clone: npm ci and the tool builds (cached in ~/.cache/tranche-tools) come first.
for _ in $(seq 900); do
  if curl -fs -o /dev/null --max-time 2 "$ready"; then break; fi
  kill -0 "$group" 2> /dev/null || fail "npm start exited before $ready answered"
  sleep 1
done
if ! curl -fs -o /dev/null --max-time 2 "$ready"; then
  stop || true
  fail "npm start did not answer $ready within 900 s"
fi
echo "[ci] npm start is up ($ready); stopping it as Ctrl-C does" >&2
if ! stop; then
  ps -o pid,user,args -g "$group" >&2 || true
  fail "npm start left these processes running 60 s after SIGINT"
fi
if [ -n "$(git status --porcelain)" ]; then
  echo "[ci] npm start left the clone changed:" >&2
  git status --short >&2
  exit 1
fi
echo "[ci] npm start came up, stopped and left the clone clean" >&2
