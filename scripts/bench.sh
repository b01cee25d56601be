#!/usr/bin/env bash
# npm run bench -- client [--hog] | compare <ref> [--rounds N] [--hog]: the public API as a client sees it, this
# tree alone or alternated with <ref> and the Svix peer (bench/client.ts, bench/compare.ts); each system is started
# as npm start runs it, on the dev server.
# npm run bench [-- --server dev|cluster] [subscriptions|webhooks|retention]: each benchmark brings up its own
# stack and writes bench/results/<name>.{json,md}; on the full Temporal server (--server cluster,
# the production shape of npm run cluster) it writes <name>-cluster.{json,md}, beside the dev
# server's. Run on a quiet machine; figures move with the load. BENCH_SCALE=<fraction below 1>
# shortens every phase for a smoke run that writes no results (.ci/bench-smoke.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
export BENCH_SERVER=dev
if [ "${1:-}" = "--server" ]; then BENCH_SERVER="${2:?--server dev|cluster}"; shift 2; fi
case "$BENCH_SERVER" in
  dev) export TEMPORAL_CLI="$(bash scripts/tools.sh temporal)" ;;
  cluster) export TEMPORAL_SERVER_DIR="$(bash scripts/tools.sh temporal-server)" ;;
  *) echo "--server must be dev or cluster" >&2; exit 2 ;;
esac
# client and compare take arguments of their own (bench/client.ts, bench/compare.ts).
case "${1:-}" in
  client | compare)
    name="$1"; shift
    if [ "$BENCH_SERVER" != dev ]; then echo "$name starts each system as npm start does, on the dev server" >&2; exit 2; fi
    echo "[bench] $name on the $BENCH_SERVER server" >&2
    exec npx tsx "bench/$name.ts" "$@"
    ;;
esac
for name in ${1:-subscriptions webhooks}; do
  echo "[bench] $name on the $BENCH_SERVER server" >&2
  npx tsx "bench/$name.ts"
done
