#!/usr/bin/env bash
# bash .ci/start-clean.sh [command]: a README command that brings the whole service up (default
# `npm start`; also `npm run cluster`) in this clone. Waits until the API answers /ready, runs the
# "A first access token" command of docs/integrators/tokens.md against it (npm start only: its embedded default
# turns the development identity provider on; then .ci/readme-your-way.sh and the README's tour,
# .ci/readme-tour.sh, or with BEHAVIOUR_SET=B .ci/readme-set-b.sh), stops it as Ctrl-C does (SIGINT to its whole process
# group: npm, the stack, workers, APIs, Temporal, PostgreSQL), and fails when it does not come up,
# when anything of it is still running 60 s later, or when it left the clone changed (a rewritten
# lock, a file outside .gitignore). Uses the command's own ports (3000, 5433/5434, 7233, 8233,
# 9464-9466, 9411 for the cluster's Zipkin; PORT and the other settings it reads move them), so
# it runs alone, never beside npm test or another of these.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || set -- npm start
what="$*"
ready="http://127.0.0.1:${PORT:-3000}/ready"
log="$(mktemp)"
group=''
trap '[ -z "$group" ] || kill -KILL -- "-$group" 2> /dev/null || true; rm -f "$log"' EXIT
fail() {
  tail -n 60 "$log" >&2
  echo "[ci] $1 ($what's last lines are above)" >&2
  exit 1
}

if curl -fs -o /dev/null --max-time 2 "$ready"; then
  echo "[ci] something already answers $ready: stop it, or move $what (PORT and the other ports it names)" >&2
  exit 1
fi
setsid "$@" > "$log" 2>&1 < /dev/null &
group=$! # setsid makes npm the leader of a process group of its own: everything it starts is in it
[ "$(ps -o pgid= -p "$group" | tr -d ' ')" = "$group" ] || fail "$what did not get a process group of its own"
alive() { pgrep -g "$group" > /dev/null; }
stop() {
  kill -INT -- "-$group" 2> /dev/null || true
  for _ in $(seq 60); do alive || return 0; sleep 1; done
  return 1
}

# First run in a fresh clone: npm ci and the tool builds (cached in ~/.cache/tranche-tools) come first.
for _ in $(seq 900); do
  if curl -fs -o /dev/null --max-time 2 "$ready"; then break; fi
  kill -0 "$group" 2> /dev/null || fail "$what exited before $ready answered"
  sleep 1
done
if ! curl -fs -o /dev/null --max-time 2 "$ready"; then
  stop || true
  fail "$what did not answer $ready within 900 s"
fi
echo "[ci] $what is up ($ready)" >&2
if [ "$what" = "npm start" ]; then
  # docs/integrators/tokens.md, "A first access token", as written there.
  first_token="$(npx tsx scripts/command-block.ts docs/integrators/tokens.md "A first access token")" \
    || { stop || true; fail "docs/integrators/tokens.md has no first-token block"; }
  token="$(bash -euo pipefail -c "$first_token")" || { stop || true; fail "npm run -s mint failed against npm start"; }
  [[ "$token" =~ ^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$ ]] \
    || { stop || true; fail "npm run -s mint printed no access token: $token"; }
  echo "[ci] npm run -s mint printed an access token" >&2
  if [ "${BEHAVIOUR_SET:-}" = B ]; then
    bash .ci/readme-set-b.sh || { stop || true; fail "the walkthrough.s Set B steps failed against BEHAVIOUR_SET=B npm start"; }
  else
    bash .ci/readme-your-way.sh || { stop || true; fail "docs/operators/deploying.md's temporal:setup, worker or api failed against npm start"; }
    bash .ci/readme-tour.sh || { stop || true; fail "README's five-minute tour failed against npm start"; }
  fi
fi
if [ "$what" = "npm run cluster" ]; then
  npx tsx scripts/ci-cluster-loopback.ts || { stop || true; fail "npm run cluster accepted a loopback webhook target"; }
fi
echo "[ci] stopping $what as Ctrl-C does" >&2
if ! stop; then
  ps -o pid,user,args -g "$group" >&2 || true
  fail "$what left these processes running 60 s after SIGINT"
fi
if [ -n "$(git status --porcelain)" ]; then
  echo "[ci] $what left the clone changed:" >&2
  git status --short >&2
  exit 1
fi
echo "[ci] $what came up, stopped and left the clone clean" >&2
