#!/usr/bin/env bash
# Brings the whole service up on embedded defaults: PostgreSQL, the Temporal dev server (Web UI on
# 8233), the worker and the API (port 3000). Ctrl-C stops everything it started.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
if [ -z "${TEMPORAL_ADDRESS:-}" ]; then export TEMPORAL_CLI="$(bash scripts/tools.sh temporal)"; fi
exec npx tsx scripts/dev.ts
