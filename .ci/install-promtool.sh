#!/usr/bin/env bash
# promtool (Prometheus' checker) for the metrics test (test/http/metrics.test.ts runs `promtool check
# metrics` on a scrape). Debian ships it inside the `prometheus` package, which would also install and
# start a Prometheus server; so the package is only downloaded and promtool alone is unpacked into
# .tools/bin (git-ignored). Called by .ci/run; safe to run twice.
set -euo pipefail
cd "$(dirname "$0")/.."

target=.tools/bin/promtool
if [ -x "$target" ]; then
  echo "install-promtool: $($target --version 2>&1 | head -1)"
  exit 0
fi
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# apt-get download needs the package lists; refresh them only when the first try finds nothing.
if ! (cd "$work" && apt-get download -qq prometheus 2>/dev/null); then
  $sudo apt-get update -qq
  (cd "$work" && apt-get download -qq prometheus)
fi
dpkg-deb --fsys-tarfile "$work"/prometheus_*.deb | tar -x -C "$work" ./usr/bin/promtool
mkdir -p .tools/bin
install -m 0755 "$work/usr/bin/promtool" "$target"
echo "install-promtool: $($target --version 2>&1 | head -1)"
