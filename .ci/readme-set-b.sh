#!/usr/bin/env bash
# docs/integrators/walkthrough.md (the README links it), "A whole subscription locally (Set B)": runs its shell
# block as written, against the
# `BEHAVIOUR_SET=B npm start` that .ci/start-clean.sh has brought up, up to the step a person does
# in a browser (paying at session_url; test/subscriptions/newcomer.test.ts pays and finishes).
# Fails when a step fails or the last one prints no checkout URL.
set -euo pipefail
cd "$(dirname "$0")/.."
steps="$(npx tsx scripts/command-block.ts docs/integrators/walkthrough.md "A whole subscription locally (Set B)" |
  sed '/^# \.\.\. open that URL/,$d')"
[ -n "$steps" ] || { echo "[ci] docs/integrators/walkthrough.md has no \"A whole subscription locally\" shell block" >&2; exit 1; }
out="$(bash -euo pipefail -c "$steps")"
# The last step prints session_url (the sign-agreement step before it prints JSON with no newline).
url="$(tail -n 1 <<< "$out" | grep -oE 'https?://[^[:space:]"]+/sandbox/checkout/[^[:space:]"]+$' || true)"
[ -n "$url" ] || { echo "[ci] the walkthrough's Set B steps ended without a checkout URL:"$'\n'"$out" >&2; exit 1; }
echo "[ci] the walkthrough's Set B steps ran as written, up to the checkout at $url" >&2
