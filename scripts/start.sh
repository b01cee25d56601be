#!/usr/bin/env bash
# Brings the whole service up on embedded defaults: PostgreSQL, the Temporal dev server (Web UI on
# 8233), the worker and the API (port 3000). Ctrl-C stops everything it started.
set -euo pipefail
cd "$(dirname "$0")/.."
# A step that fails says which it was and what to do (its own output is just above).
fail() { echo "[start] failed: $1"$'\n'"[start]   what to do:    $2" >&2; exit 1; }
bash scripts/ensure-deps.sh || fail 'installing the npm dependencies (npm ci)' 'read npm'"'"'s error above; check the network and disk, then run npm start again'
if [ -z "${TEMPORAL_ADDRESS:-}" ]; then
  TEMPORAL_CLI="$(bash scripts/tools.sh temporal)" \
    || fail 'building the Temporal CLI (bash scripts/tools.sh temporal)' 'read the go error above; it needs Go and the Go module proxy. Or set TEMPORAL_ADDRESS to a Temporal you run'
  export TEMPORAL_CLI
fi
exec npx tsx scripts/dev.ts
