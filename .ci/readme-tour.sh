#!/usr/bin/env bash
# README, "A five-minute tour": runs its shell block as written, against the `npm start` that .ci/start-clean.sh
# has brought up (Set A, the embedded default), then checks what the README says the reader sees: the receiver
# it started prints an accepted, verified `subscription.created`; the console link answers (its sign-in) and the
# staff member's token reads the subscription through the JSON API the console page reads it with; the Temporal
# Web UI's API shows the subscription's workflow at the link printed. Stops the receiver when done.
set -euo pipefail
cd "$(dirname "$0")/.."
steps="$(npx tsx scripts/command-block.ts README.md "A five-minute tour")"
out="$(mktemp)"
staff="$(mktemp)"
group=''
trap '[ -z "$group" ] || kill -TERM -- "-$group" 2> /dev/null || true; rm -f "$out" "$staff"' EXIT
fail() {
  cat "$out" >&2
  echo "[ci] README's tour: $1 (its output is above)" >&2
  exit 1
}
# The block as written, and after it one line of ours that hands the staff member's token to the checks below.
setsid bash -euo pipefail -c "$steps"$'\n''echo "$BOB" > '"$staff" > "$out" 2>&1 < /dev/null &
group=$! # the block's receiver runs on in this process group after the block's last line
wait "$group" || fail "a step failed"
links="$(grep -oE 'http://[^ ]+/console/subscriptions/[0-9a-f-]{36}  http://[^ ]+/workflows/subscription-[0-9a-f-]{36}' "$out" || true)"
[ -n "$links" ] || fail "the last step printed no links"
console="${links%% *}"
sub="${console##*/}"
for _ in $(seq 60); do
  grep -qE '"outcome":"accepted","event_type":"subscription.created"' "$out" && break
  sleep 1
done
grep -qE '"outcome":"accepted","event_type":"subscription.created"' "$out" \
  || fail "the receiver printed no accepted subscription.created within 60 s"
echo "[ci] the tour's receiver verified a signed subscription.created" >&2
code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "$console")"
[[ "$code" =~ ^(200|302|303)$ ]] || fail "the console link answered $code"
api="${console%%/console/*}"
status="$(curl -fs --max-time 10 -H "authorization: Bearer $(cat "$staff")" "$api/issuance/subscriptions/$sub" | jq -r .data.status)" \
  || fail "staff could not read subscription $sub"
echo "[ci] the console link answers ($code) and staff read subscription $sub ($status)" >&2
ui="${links##* }"
curl -fs --max-time 10 "${ui/\/namespaces\//\/api\/v1\/namespaces\/}" | jq -e '.workflowExecutionInfo.execution.workflowId' > /dev/null \
  || fail "the Temporal Web UI has no workflow at $ui"
echo "[ci] the Temporal Web UI shows the workflow at $ui" >&2
