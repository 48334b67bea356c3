#!/usr/bin/env bash
# CI's check of the GPU bundle (scripts/gpu-bundle.sh): unpacked elsewhere and run with an empty
# environment (`env -i PATH=/nonexistent`: no system Node or PostgreSQL can be found, only the bundle's),
# gpu-check passes its parity cases on llvmpipe with --allow-software, and without it exits 4 naming the
# software adapter (--scale 1000: about half a minute on two cores); then serve-bench at its tiny scale
# (ENGINE=gpu on llvmpipe) writes every record on both back ends, PGlite and the bundle's PostgreSQL,
# and every job of every record ran on the GPU engine.
set -euo pipefail
cd "$(dirname "$0")/.."
bundle=${1:-bundle/matchsim-gpu.tar.xz}
place=$(mktemp -d)
trap 'rm -rf "$place"' EXIT
# As root, serve-bench runs PostgreSQL as nobody, who must reach the bundle (mktemp's folder is 0700).
chmod 755 "$place"
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
echo "== check-gpu-bundle: serve-bench without --allow-software refuses llvmpipe"
set +e
env -i PATH=/nonexistent "$run" serve-bench --scale tiny --deadline 120 --out "$place/out/serve-refused.jsonl" \
  >/dev/null 2>&1
code=$?
set -e
if [ "$code" -ne 4 ] || ! grep -q '"problem":"softwareAdapter".*llvmpipe' "$place/out/serve-refused.jsonl"; then
  echo "check-gpu-bundle: serve-bench: expected exit code 4 naming llvmpipe, got $code:" >&2
  cat "$place/out/serve-refused.jsonl" >&2
  exit 1
fi

echo "== check-gpu-bundle: serve-bench --scale tiny --allow-software on llvmpipe, both back ends"
started=$(date +%s)
set +e
env -i PATH=/nonexistent "$run" serve-bench --scale tiny --allow-software --deadline 420 \
  --out "$place/out/serve-bench.jsonl" >/dev/null 2>"$place/serve-bench.stderr"
code=$?
set -e
# Every record on each back end, each with jobs and none of them on the CPU, on the bundle's Node 24.
if ! "$place/matchsim-gpu/node/bin/node" - "$place/out/serve-bench.jsonl" <<'EOF'
const lines = require('node:fs').readFileSync(process.argv[2], 'utf8').trim().split('\n').map(JSON.parse);
const problems = [];
if (!/^v24\./.test(lines.find((l) => l.record === 'host')?.node ?? '')) problems.push('not on Node 24');
const expected = { stack: 1, sequential: 1, concurrent: 2, 'batch-large': 1, 'batch-small': 1, misses: 1, path: 1 };
for (const backend of ['embedded', 'server'])
  for (const [record, n] of Object.entries(expected)) {
    const found = lines.filter((l) => l.record === record && l.backend === backend);
    if (found.length !== n) problems.push(`${backend}: ${found.length} ${record} records, not ${n}`);
    for (const l of found)
      if (record !== 'stack' && !(l.jobs_gpu > 0 && l.jobs_cpu === 0 && l.engine === 'gpu'))
        problems.push(`${backend} ${record}: ${l.jobs_gpu} jobs on the GPU, ${l.jobs_cpu} on the CPU`);
  }
if (lines.find((l) => l.record === 'engine-alone')?.engine !== 'gpu') problems.push('no engine-alone record on the GPU');
const summary = lines.find((l) => l.record === 'summary');
if (!(summary?.complete && summary.all_on_gpu)) problems.push(`summary: ${JSON.stringify(summary)}`);
for (const problem of problems) console.error(`check-gpu-bundle: ${problem}`);
process.exit(problems.length ? 1 : 0);
EOF
then
  echo "check-gpu-bundle: serve-bench exited $code; its records and log:" >&2
  cat "$place/out/serve-bench.jsonl" "$place/serve-bench.stderr" >&2
  exit 1
fi
if [ "$code" -ne 0 ]; then
  echo "check-gpu-bundle: serve-bench exited $code" >&2
  cat "$place/serve-bench.stderr" >&2
  exit 1
fi
cat "$place/out/serve-bench.jsonl"
echo "check-gpu-bundle: passed (gpu-check and serve-bench: exit 4 naming the software adapter without --allow-software; gpu-check: parity with it; serve-bench: every record on both back ends in $(($(date +%s) - started)) s, every job on the GPU engine)"
