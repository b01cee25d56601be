#!/usr/bin/env bash
# Builds the previous release (deploy/previous-release) from this repository's own git history into a
# per-user cache outside the clone, once per commit, and prints its folder:
#   <cache>/tranche-releases/<commit>/   the release's files (git archive, no .git), node_modules (npm ci,
#                                        from the warm npm cache) and dist/ (npm run build)
# The rolling-upgrade test runs its workers and API instances from there; the replay check records its
# histories there (docs/decisions/0388-the-previous-release.md). A second caller waits for the first.
#   scripts/previous-release.sh [commit]   (default: the one deploy/previous-release names)
set -euo pipefail
cd "$(dirname "$0")/.."
commit="${1:-$(grep -v '^#' deploy/previous-release | grep -m1 .)}"
commit="$(git rev-parse --verify --quiet "$commit^{commit}")" \
  || { echo "[previous-release] $commit is not a commit of this repository (git fetch it, or fix deploy/previous-release)" >&2; exit 1; }
cache="${TRANCHE_RELEASES_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tranche-releases}"
dir="$cache/$commit"
mkdir -p "$cache"
exec 9>"$cache/$commit.lock"
flock 9
if [ ! -f "$dir/.built" ]; then
  echo "[previous-release] building ${commit:0:12} into $dir (first time only)" >&2
  rm -rf "$dir" && mkdir -p "$dir"
  git archive --format=tar "$commit" | tar -x -C "$dir"
  # Its build id names the commit: the archive has no .git to read it from (lib/runtime/build-id.ts).
  version="$(node -p "require('$dir/package.json').version")"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error --prefer-offline >&2 \
    && TRANCHE_BUILD_ID="$version-${commit:0:12}" npm run -s build >&2)
  echo "$version-${commit:0:12}" > "$dir/.build-id"
  touch "$dir/.built"
fi
flock -u 9
echo "$dir"
