#!/usr/bin/env bash
# Installs the npm dependencies exactly as package-lock.json pins them (`npm ci`), when they are
# missing or older than the lock. The lock lists every platform's optional packages, so `npm ci`
# accepts it on any machine and never rewrites it: a fresh clone stays clean.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "[deps] npm ci" >&2
  npm ci --no-audit --no-fund --loglevel=error >&2
fi
