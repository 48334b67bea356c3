#!/usr/bin/env bash
# CI's check of the GPU bundle (scripts/gpu-bundle.sh): unpacked elsewhere and run with an empty
# environment (`env -i PATH=/nonexistent`: no system Node can be found, only the bundle's), gpu-check
# passes its parity cases on llvmpipe with --allow-software, and without it exits 4 naming the software
# adapter. --scale 1000 keeps it to about half a minute on two cores.
set -euo pipefail
cd "$(dirname "$0")/.."
bundle=${1:-bundle/matchsim-gpu.tar.xz}
place=$(mktemp -d)
trap 'rm -rf "$place"' EXIT
tar -xJf "$bundle" -C "$place"
run=$place/matchsim-gpu/run.sh

echo "== check-gpu-bundle: gpu-check --allow-software on llvmpipe"
set +e
env -i PATH=/nonexistent "$run" --allow-software --scale 1000 --deadline 300 --out "$place/out/allowed.jsonl" \
  >/dev/null 2>"$place/allowed.stderr"
code=$?
set -e
if [ "$code" -ne 0 ] || ! grep -q '"record":"parity-summary","cases":[0-9]*,"identical":true' "$place/out/allowed.jsonl" \
  || grep -q '"identical":false' "$place/out/allowed.jsonl"; then
  echo "check-gpu-bundle: gpu-check --allow-software exited $code or parity failed:" >&2
  cat "$place/out/allowed.jsonl" "$place/allowed.stderr" >&2
  exit 1
fi
grep -q '"node":"v24\.' "$place/out/allowed.jsonl" || {
  echo "check-gpu-bundle: gpu-check did not run on the bundle's Node 24" >&2
  exit 1
}
tail -n 1 "$place/out/allowed.jsonl"

echo "== check-gpu-bundle: gpu-check without --allow-software refuses llvmpipe"
set +e
env -i PATH=/nonexistent "$run" --scale 1000 --deadline 120 --out "$place/out/refused.jsonl" >/dev/null 2>&1
code=$?
set -e
if [ "$code" -ne 4 ] || ! grep -q '"problem":"softwareAdapter".*llvmpipe' "$place/out/refused.jsonl"; then
  echo "check-gpu-bundle: expected exit code 4 naming llvmpipe, got $code:" >&2
  cat "$place/out/refused.jsonl" >&2
  exit 1
fi
echo "check-gpu-bundle: passed (exit 0 with --allow-software, 4 without, naming the software adapter)"
