#!/usr/bin/env bash
# `npm run bench` and `npm run bench -- --server cluster` (docs/contributors/testing.md, Benchmarks), scaled down: both benchmarks (subscriptions, webhooks) run their
# whole code path on their own embedded stack, each phase cut to its floor (BENCH_SCALE) and the
# webhooks benchmark to its warm-up, the start-up phase and the short phases below (BENCH_PHASES), in
# the engine shape: the workflow shape's short phases do not drain in the smoke's windows yet (seen
# owing deliveries at the end of each phase; docs/decisions/0299-workflow-shape-limits.md), so it is
# measured by the full `BENCH_SHAPES=engine,workflow npm run bench -- webhooks` only. A scaled run writes no
# results; its stacks' data goes to a temporary folder removed afterwards. Fails when a benchmark
# fails, and a benchmark fails when anything arrived or was recorded other than exactly what it owed
# (the webhooks sink's count and duplicates, the subscriptions' projection). Then the client benchmark
# (bench/client.ts) on this tree alone, started as npm start runs it and driven through its public API: it fails
# when a message owed did not arrive exactly once or an answer carried no per-layer timing
# (docs/decisions/0393-client-benchmark-and-request-timing.md). Three to four minutes in all.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp="$(mktemp -d)"
chmod 755 "$tmp" # run as root, embedded PostgreSQL runs as the postgres user, which must reach it
trap 'rm -rf "$tmp"' EXIT
# Their own stacks: an outer DATABASE_URL or TEMPORAL_ADDRESS would put them on someone else's.
# Both servers docs/contributors/testing.md names: the dev server (npm run bench) and the full one (--server cluster).
for args in "" "-- --server cluster webhooks"; do
  # shellcheck disable=SC2086 # $args is two words or none on purpose
  if ! env -u DATABASE_URL -u TEMPORAL_ADDRESS TMPDIR="$tmp" BENCH_SCALE=0.02 \
    BENCH_PHASES=startup,apiMessages,api200,apiBurst,parkedNeighbour,hops BENCH_SHAPES=engine \
    npm run -s bench $args > "$tmp/bench.log" 2>&1; then
    tail -n 80 "$tmp/bench.log" >&2
    echo "[ci] npm run bench $args (scaled down) failed; its last lines are above" >&2
    exit 1
  fi
  grep -E '^\[bench\]' "$tmp/bench.log" >&2
done
if ! env -u DATABASE_URL -u TEMPORAL_ADDRESS TMPDIR="$tmp" BENCH_SCALE=0.02 \
  npm run -s bench -- client > "$tmp/client.log" 2>&1; then
  tail -n 80 "$tmp/client.log" >&2
  echo "[ci] npm run bench -- client (scaled down) failed; its last lines are above" >&2
  exit 1
fi
grep -E '^\[bench\]' "$tmp/client.log" >&2
