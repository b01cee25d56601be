#!/usr/bin/env bash
# npm run build, unless dist/ is this checkout's already: its build-info.json names this commit and no source file
# is newer than it. The rolling-upgrade test runs dist/ as the build it rolls to (docs/decisions/0388-the-previous-release.md).
set -euo pipefail
cd "$(dirname "$0")/.."
info=dist/build-info.json
if [ ! -f "$info" ] \
  || [ "$(node -p "require('./$info').buildId")" != "$(node -p "require('./package.json').version")-$(git rev-parse --short=12 HEAD)" ] \
  || [ -n "$(find . \( -path ./node_modules -o -path ./dist -o -path ./.data -o -path ./test -o -path ./test-output -o -path ./bench \) -prune -o -name '*.ts' -newer "$info" -print -quit)" ]; then
  echo "[build] dist/ is not this checkout's: npm run build" >&2
  npm run -s build
fi
