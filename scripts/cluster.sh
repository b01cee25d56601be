#!/usr/bin/env bash
# npm run cluster: the production shape on one machine. PostgreSQL (embedded, or DATABASE_URL), the
# full Temporal server on it with its schema set up by the schema tool, its Web UI (8233), two
# workers and two API instances behind one port (3000), all compiled (npm run build). Ctrl-C stops all.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
export TEMPORAL_SERVER_DIR="$(bash scripts/tools.sh temporal-server)"
export TEMPORAL_UI="$(bash scripts/tools.sh temporal-ui || true)"
npm run -s build
exec npx tsx scripts/cluster.ts
