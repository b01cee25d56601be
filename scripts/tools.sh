#!/usr/bin/env bash
# Installs the pinned external tools into a per-user cache outside the clone, once.
#   scripts/tools.sh temporal     -> prints the path of the Temporal CLI (dev server + Web UI)
#   scripts/tools.sh temporal-server -> prints the folder holding the full server (`server`) and its schema tool (`sql`)
#   scripts/tools.sh temporal-ui  -> prints the path of the Temporal Web UI server (for the full server)
#   scripts/tools.sh test-server  -> prints the path of the time-skipping test server wrapper
#   scripts/tools.sh stripe-mock  -> prints the path of stripe-mock (Stripe API double for tests)
#   scripts/tools.sh chromium     -> installs Debian's chromium when missing, prints its path
#   scripts/tools.sh schemathesis -> prints the path of the schemathesis CLI (`st`), in its own venv
#   scripts/tools.sh caddy        -> prints the path of Caddy (the compose gateway; tests validate its config)
#   scripts/tools.sh zipkin       -> prints the path of Zipkin's executable jar (trace collector, API and UI; npm run cluster, the traces test)
#   scripts/tools.sh promtool     -> prints the path of promtool (checks and unit-tests deploy/prometheus/alerts.yml)
# A fresh clone on the same machine (as CI makes) reuses what an earlier run built.
set -euo pipefail

TEMPORAL_CLI_VERSION=1.5.1        # newest CLI that `go install` accepts (no replace directive)
TEMPORAL_SERVER_VERSION=1.29.1    # the full server on PostgreSQL (npm run cluster); the version CLI 1.5.1 embeds
TEMPORAL_UI_VERSION=2.42.1        # github.com/temporalio/ui-server/v2, the UI CLI 1.5.1 embeds; assets are in the module
TEST_SERVER_VERSION=1.31.0        # io.temporal:temporal-test-server on Maven Central
STRIPE_MOCK_VERSION=0.203.0       # github.com/stripe/stripe-mock, built from the Go module proxy
SCHEMATHESIS_VERSION=4.32.5      # PyPI; property-based fuzzing of the OpenAPI document
COMPOSE_VERSION=2.40.3            # docker compose plugin, only to check temporal-compose.yml parses
CADDY_VERSION=2.10.2              # github.com/caddyserver/caddy/v2: the compose gateway's image; validates deploy/gateway/Caddyfile
ZIPKIN_VERSION=3.6.1              # io.zipkin:zipkin-server:exec on Maven Central: one jar, collector + API + Lens UI (Java 17+)
PROMTOOL_VERSION=0.316.0          # github.com/prometheus/prometheus/cmd/promtool (module v0.316.0 is Prometheus 3.16.0)

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${TRANCHE_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tranche-tools}"
mkdir -p "$cache"

log() { echo "[tools] $*" >&2; }

# One builder at a time per tool, so parallel callers wait instead of racing.
with_lock() {
  local name=$1; shift
  exec 9>"$cache/$name.lock"
  flock 9
  "$@"
  flock -u 9
}

# Builds one Go command from the module proxy into <dir>/<name>, once (the folder names the version).
go_install_once() {
  local dir=$1 name=$2 label=$3 package=$4
  if [ ! -x "$dir/$name" ]; then
    log "building $label from the Go module proxy (first time only)"
    local tmp; tmp="$(mktemp -d "$cache/.build-XXXXXX")"
    CGO_ENABLED=0 GOBIN="$tmp" GOFLAGS=-mod=mod go install "$package" >&2
    local built; built="$(basename "${package%@*}")"
    mkdir -p "$dir" && mv "$tmp/$built" "$dir/$name" && rmdir "$tmp"
  fi
}

install_temporal() {
  local dir="$cache/temporal-cli-$TEMPORAL_CLI_VERSION"
  go_install_once "$dir" temporal "Temporal CLI v$TEMPORAL_CLI_VERSION" "github.com/temporalio/cli/cmd/temporal@v$TEMPORAL_CLI_VERSION"
  echo "$dir/temporal"
}

# The production shape's server and its schema tool, both from the Go module proxy (no replace
# directives); about 4 minutes cold. The folder is the one `npm run cluster` and CI look in.
install_temporal_server() {
  local dir="$cache/temporal-server-$TEMPORAL_SERVER_VERSION"
  if [ ! -x "$dir/server" ] || [ ! -x "$dir/sql" ]; then
    log "building Temporal server v$TEMPORAL_SERVER_VERSION and its schema tool from the Go module proxy (first time only)"
    local tmp; tmp="$(mktemp -d "$cache/.build-XXXXXX")"
    CGO_ENABLED=0 GOBIN="$tmp" GOFLAGS=-mod=mod \
      go install "go.temporal.io/server/cmd/server@v$TEMPORAL_SERVER_VERSION" \
      "go.temporal.io/server/cmd/tools/sql@v$TEMPORAL_SERVER_VERSION" >&2
    mkdir -p "$dir" && mv "$tmp/server" "$tmp/sql" "$dir/" && rmdir "$tmp"
  fi
  echo "$dir"
}

install_temporal_ui() {
  local dir="$cache/temporal-ui-$TEMPORAL_UI_VERSION"
  go_install_once "$dir" ui-server "Temporal UI server v$TEMPORAL_UI_VERSION" "github.com/temporalio/ui-server/v2/cmd/server@v$TEMPORAL_UI_VERSION"
  echo "$dir/ui-server"
}

install_test_server() {
  local dir="$cache/temporal-test-server-$TEST_SERVER_VERSION"
  if [ ! -x "$dir/test-server" ]; then
    log "resolving temporal-test-server $TEST_SERVER_VERSION from Maven Central (first time only)"
    local tmp; tmp="$(mktemp -d "$cache/.build-XXXXXX")"
    sed "s/@VERSION@/$TEST_SERVER_VERSION/" "$here/tools/test-server-pom.xml" > "$tmp/pom.xml"
    mvn -q -B -f "$tmp/pom.xml" dependency:copy-dependencies -DoutputDirectory="$tmp/lib" >&2
    # exec, so the SDK's kill of the wrapper reaches the JVM itself.
    cat > "$tmp/test-server" <<SH
#!/usr/bin/env bash
exec java -Xshare:auto -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp "$dir/lib/*" io.temporal.testserver.TestServer "\$@"
SH
    chmod +x "$tmp/test-server"
    rm -rf "$dir" && mkdir -p "$dir" && mv "$tmp/lib" "$tmp/test-server" "$dir/" && rm -rf "$tmp"
  fi
  echo "$dir/test-server"
}

# The docker client here has no compose plugin; build it and link it where the client looks.
install_compose() {
  local dir="$cache/docker-compose-$COMPOSE_VERSION"
  if [ ! -x "$dir/docker-compose" ]; then
    log "building docker compose v$COMPOSE_VERSION from the Go module proxy (first time only)"
    local tmp; tmp="$(mktemp -d "$cache/.build-XXXXXX")"
    # Its go.mod has exclude directives, which `go install pkg@version` refuses: build it as the
    # dependency of a throwaway module instead.
    (cd "$tmp" && go mod init compose-build >&2 \
      && go get "github.com/docker/compose/v2/cmd@v$COMPOSE_VERSION" >&2 \
      && CGO_ENABLED=0 go build -o docker-compose github.com/docker/compose/v2/cmd >&2)
    mkdir -p "$dir" && mv "$tmp/docker-compose" "$dir/docker-compose" && rm -rf "$tmp"
  fi
  local plugins="${DOCKER_CONFIG:-$HOME/.docker}/cli-plugins"
  mkdir -p "$plugins" && ln -sf "$dir/docker-compose" "$plugins/docker-compose"
  echo "$dir/docker-compose"
}

install_stripe_mock() {
  local dir="$cache/stripe-mock-$STRIPE_MOCK_VERSION"
  go_install_once "$dir" stripe-mock "stripe-mock v$STRIPE_MOCK_VERSION" "github.com/stripe/stripe-mock@v$STRIPE_MOCK_VERSION"
  # Its bundled fixtures, beside it, so tests can start it with a variant (-fixtures) of their own.
  if [ ! -f "$dir/fixtures3.json" ]; then
    cp "$(go env GOMODCACHE)/github.com/stripe/stripe-mock@v$STRIPE_MOCK_VERSION/embedded/openapi/fixtures3.json" "$dir/fixtures3.json"
  fi
  echo "$dir/stripe-mock"
}

install_caddy() {
  local dir="$cache/caddy-$CADDY_VERSION"
  go_install_once "$dir" caddy "Caddy v$CADDY_VERSION" "github.com/caddyserver/caddy/v2/cmd/caddy@v$CADDY_VERSION"
  echo "$dir/caddy"
}

# The alert rules' checker and unit-test runner (test/operations/alert-rules.test.ts): about 6.5 CPU-minutes cold
# (10 minutes on a loaded two-core host), seconds from a warm Go build cache.
install_promtool() {
  local dir="$cache/promtool-$PROMTOOL_VERSION"
  go_install_once "$dir" promtool "promtool v$PROMTOOL_VERSION" "github.com/prometheus/prometheus/cmd/promtool@v$PROMTOOL_VERSION"
  echo "$dir/promtool"
}

# An executable jar with everything in it (spans in over HTTP, in-memory storage, the API and the
# Lens UI), copied out of Maven Central like the test server's classpath; run with `java -jar`.
install_zipkin() {
  local dir="$cache/zipkin-$ZIPKIN_VERSION"
  local jar="$dir/zipkin-server-$ZIPKIN_VERSION-exec.jar"
  if [ ! -f "$jar" ]; then
    log "resolving zipkin-server $ZIPKIN_VERSION (exec jar) from Maven Central (first time only)"
    local tmp; tmp="$(mktemp -d "$cache/.build-XXXXXX")"
    # In an empty folder, so no project: just the one artifact; -C fails on a checksum mismatch.
    (cd "$tmp" && mvn -q -B -C -Dstyle.color=never dependency:copy -Dartifact="io.zipkin:zipkin-server:$ZIPKIN_VERSION:jar:exec" \
      -DoutputDirectory="$tmp" >&2) || { rm -rf "$tmp"; exit 1; }
    mkdir -p "$dir" && mv "$tmp/zipkin-server-$ZIPKIN_VERSION-exec.jar" "$jar" && rm -rf "$tmp"
  fi
  echo "$jar"
}

# A system package, not a cached build: Debian's chromium is what the browser tests drive.
install_chromium() {
  local bin; bin="$(command -v chromium || true)"
  if [ -z "$bin" ]; then
    log "installing Debian's chromium (first time only)"
    local sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get install -y chromium >&2 || { $sudo apt-get update >&2 && $sudo apt-get install -y chromium >&2; }
    bin="$(command -v chromium)"
  fi
  echo "$bin"
}

# A venv of its own so its Python dependencies never meet the system's.
install_schemathesis() {
  local dir="$cache/schemathesis-$SCHEMATHESIS_VERSION"
  if [ ! -x "$dir/bin/st" ]; then
    log "installing schemathesis $SCHEMATHESIS_VERSION from PyPI (first time only)"
    rm -rf "$dir"
    # Built in place: a venv records its own path in its scripts, so it cannot be moved after.
    python3 -m venv "$dir" >&2 && "$dir/bin/pip" install -q "schemathesis==$SCHEMATHESIS_VERSION" >&2 \
      || { rm -rf "$dir"; exit 1; }
  fi
  echo "$dir/bin/st"
}

case "${1:-}" in
  temporal) with_lock temporal install_temporal ;;
  temporal-server) with_lock temporal-server install_temporal_server ;;
  temporal-ui) with_lock temporal-ui install_temporal_ui ;;
  test-server) with_lock test-server install_test_server ;;
  compose) with_lock compose install_compose ;;
  stripe-mock) with_lock stripe-mock install_stripe_mock ;;
  chromium) with_lock chromium install_chromium ;;
  schemathesis) with_lock schemathesis install_schemathesis ;;
  caddy) with_lock caddy install_caddy ;;
  zipkin) with_lock zipkin install_zipkin ;;
  promtool) with_lock promtool install_promtool ;;
  all)
    with_lock temporal install_temporal; with_lock temporal-server install_temporal_server; with_lock temporal-ui install_temporal_ui
    with_lock test-server install_test_server; with_lock compose install_compose
    with_lock stripe-mock install_stripe_mock; with_lock chromium install_chromium
    with_lock schemathesis install_schemathesis; with_lock caddy install_caddy; with_lock zipkin install_zipkin
    with_lock promtool install_promtool ;;
  *) echo "usage: $0 temporal|temporal-server|temporal-ui|test-server|compose|stripe-mock|chromium|schemathesis|caddy|zipkin|promtool|all" >&2; exit 2 ;;
esac
