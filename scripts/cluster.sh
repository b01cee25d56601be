#!/usr/bin/env bash
# npm run cluster: the production shape on one machine. PostgreSQL (embedded, or DATABASE_URL), the
# full Temporal server on it with its schema set up by the schema tool, its Web UI (8233), Zipkin for
# traces (9411, UI at /zipkin/), two workers and two API instances behind one port (3000), all
# compiled (npm run build). Ctrl-C stops all.
# CLUSTER_TLS=1: HTTPS on that port, TLS ended by Caddy in front of a gateway as deploy/gateway has it.
set -euo pipefail
cd "$(dirname "$0")/.."
# A step that fails says which it was and what to do (its own output is just above).
fail() { echo "[cluster] failed: $1"$'\n'"[cluster]   what to do:    $2" >&2; exit 1; }
bash scripts/ensure-deps.sh || fail 'installing the npm dependencies (npm ci)' 'read npm'"'"'s error above; check the network and disk, then run npm run cluster again'
TEMPORAL_SERVER_DIR="$(bash scripts/tools.sh temporal-server)" \
  || fail 'building the Temporal server (bash scripts/tools.sh temporal-server)' 'read the go error above; it needs Go and the Go module proxy'
export TEMPORAL_SERVER_DIR
export TEMPORAL_UI="$(bash scripts/tools.sh temporal-ui || true)"
# Traces: Zipkin on ZIPKIN_PORT (9411): spans in, its API and UI (/zipkin/); the workers and APIs export to it.
export ZIPKIN_JAR="$(bash scripts/tools.sh zipkin || true)"
if [ "${CLUSTER_TLS:-}" = 1 ]; then
  CADDY="$(bash scripts/tools.sh caddy)" \
    || fail 'building Caddy for CLUSTER_TLS=1 (bash scripts/tools.sh caddy)' 'read the go error above; or run without CLUSTER_TLS'
  export CADDY
fi
npm run -s build || fail 'compiling (npm run build)' 'fix the TypeScript errors above, then run npm run cluster again'
exec npx tsx scripts/cluster.ts
