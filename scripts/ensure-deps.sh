#!/usr/bin/env bash
# Installs npm dependencies when they are missing or older than the lock file.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "[deps] npm ci" >&2
  npm ci --no-audit --no-fund --loglevel=error >&2
fi
