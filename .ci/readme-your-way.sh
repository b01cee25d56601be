#!/usr/bin/env bash
# docs/operators/deploying.md, "The processes" (once the README's "Running it your way"), against the `npm start` that .ci/start-clean.sh has
# brought up: `npm run temporal:setup` on its Temporal, then one more `npm run worker` and one more
# `npm run api` (on a spare port) against its DATABASE_URL and TEMPORAL_ADDRESS. Fails unless the
# setup succeeds, the extra API answers /ready, the extra worker is still running when the API is,
# and both stop on SIGINT.
set -euo pipefail
cd "$(dirname "$0")/.."
# npm start's services' role and its development audit key (docs/integrators/tokens.md; scripts/lib/embedded-defaults.ts).
export DATABASE_URL="postgres://tranche_app:tranche-app@127.0.0.1:${EMBEDDED_PG_PORT:-5433}/tranche"
export AUDIT_HMAC_KEYS="$(npx tsx -e "process.stdout.write(require('./scripts/lib/embedded-defaults').DEV_AUDIT_HMAC_KEYS)")"
export TEMPORAL_ADDRESS="127.0.0.1:${TEMPORAL_PORT:-7233}"
export LOG_LEVEL=warn
# npm start's stack is a development one (its processes run with NODE_ENV=development, its webhook
# secrets sealed under the development key): joining it takes the same opt-in, as docs/operators/deploying.md says.
export NODE_ENV=development
npm run -s temporal:setup
echo "[ci] npm run temporal:setup set the namespace up" >&2
port="$(node -e "const s = require('net').createServer().listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close(); })")"
pids=()
trap 'for p in "${pids[@]}"; do kill -KILL -- "-$p" 2> /dev/null || true; done' EXIT
setsid npm run worker < /dev/null & pids+=($!)
PORT="$port" setsid npm run api < /dev/null & pids+=($!)
for _ in $(seq 120); do
  curl -fs -o /dev/null --max-time 2 "http://127.0.0.1:$port/ready" && break
  sleep 1
done
curl -fs -o /dev/null --max-time 2 "http://127.0.0.1:$port/ready" || { echo "[ci] npm run api never answered /ready" >&2; exit 1; }
kill -0 "${pids[0]}" || { echo "[ci] npm run worker exited" >&2; exit 1; }
echo "[ci] npm run worker and npm run api (port $port) joined npm start's stack" >&2
for p in "${pids[@]}"; do kill -INT -- "-$p"; done
for _ in $(seq 60); do
  pgrep -g "${pids[0]}" > /dev/null || pgrep -g "${pids[1]}" > /dev/null || break
  sleep 1
done
if pgrep -g "${pids[0]}" > /dev/null || pgrep -g "${pids[1]}" > /dev/null; then
  echo "[ci] npm run worker or npm run api still running 60 s after SIGINT" >&2
  exit 1
fi
echo "[ci] both stopped on SIGINT" >&2
