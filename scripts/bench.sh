#!/usr/bin/env bash
# npm run bench [subscriptions|webhooks]: each benchmark brings up its own embedded stack and
# writes bench/results/<name>.{json,md}. Run on a quiet machine; figures move with the load.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
export TEMPORAL_CLI="$(bash scripts/tools.sh temporal)"
for name in ${1:-subscriptions webhooks}; do
  echo "[bench] $name" >&2
  npx tsx "bench/$name.ts"
done
