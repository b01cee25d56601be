#!/usr/bin/env bash
# Installs npm dependencies when they are missing or older than the lock file.
# `npm install`, not `npm ci`: the registry here lacks some other platforms' optional packages at
# the locked versions (e.g. @swc/core for darwin), which `npm ci` treats as a lock out of sync.
# The lock still pins every version that is installed.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "[deps] npm install" >&2
  npm install --no-audit --no-fund --loglevel=error >&2
fi
