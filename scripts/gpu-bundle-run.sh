#!/bin/sh
# run.sh of the GPU bundle (scripts/gpu-bundle.sh builds it; docs/gpu.md "The GPU bundle"): runs
# gpu-check, or serve-bench (the service itself through HTTP, on PGlite and on the bundle's PostgreSQL),
# on a host with the NVIDIA driver and nothing else, using the bundle's own Node.js.
#   tar xf matchsim-gpu.tar.xz -C /tmp && /tmp/matchsim-gpu/run.sh --deadline 420 --out "$OUT/gpu-check.jsonl"
#   /tmp/matchsim-gpu/run.sh serve-bench --deadline 480 --out "$OUT/serve-bench.jsonl"
# Every argument goes to gpu-check (--deadline SECONDS, --out FILE, --scale N, --allow-software, --tune,
# --compare-kernel FILE,...), or after `serve-bench` to serve-bench (--deadline SECONDS, --out FILE,
# --scale tiny|full, --allow-software, --backends embedded,server).
# It finds the NVIDIA Vulkan driver manifest, uses the host's C library or, when dawn.node does not load
# on it, the bundle's, and when no adapter is found writes what an operator needs next (loader log,
# device files, driver libraries) to stderr and beside the --out file. Exit code: the command's.
set -u
# Coreutils from the host whatever PATH says (even `env -i PATH=/nonexistent`); Node only ever from the
# bundle, called by its path.
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export PATH
here=$(cd "$(dirname "$0")" && pwd)
command=gpu-check
if [ "${1:-}" = serve-bench ]; then
  command=serve-bench
  shift
fi

deadline=420
out=""
previous=""
for argument in "$@"; do
  case "$previous" in
    --deadline) deadline=$argument ;;
    --out) out=$argument ;;
  esac
  case "$argument" in
    --deadline=*) deadline=${argument#--deadline=} ;;
    --out=*) out=${argument#--out=} ;;
  esac
  previous=$argument
done
case "$deadline" in *[!0-9.]* | "") deadline=420 ;; esac
diagnostics=/dev/null
if [ -n "$out" ]; then
  mkdir -p "$(dirname "$out")"
  diagnostics="${out%.jsonl}.diagnostics.txt"
  : >"$diagnostics"
fi
say() {
  echo "run.sh: $*" >&2
  echo "$*" >>"$diagnostics"
}
say "bundle: $(cat "$here/VERSION" 2>/dev/null)"

# --- The NVIDIA Vulkan driver manifest: VK_DRIVER_FILES as given, else the first NVIDIA manifest in
# the loader's standard folders or where NVIDIA's container images put it.
if [ -z "${VK_DRIVER_FILES:-}" ] && [ -z "${VK_ICD_FILENAMES:-}" ]; then
  for folder in /etc/vulkan/icd.d /usr/share/vulkan/icd.d /usr/local/share/vulkan/icd.d \
    /usr/local/nvidia/share/vulkan/icd.d /usr/local/nvidia/etc/vulkan/icd.d; do
    for manifest in "$folder"/nvidia*.json; do
      if [ -f "$manifest" ] && [ -z "${VK_DRIVER_FILES:-}" ]; then
        VK_DRIVER_FILES=$manifest
        export VK_DRIVER_FILES
      fi
    done
  done
fi
say "VK_DRIVER_FILES=${VK_DRIVER_FILES:-${VK_ICD_FILENAMES:-(none found: the loader searches its standard folders)}}"
if [ -z "${__EGL_VENDOR_LIBRARY_FILENAMES:-}" ]; then
  for vendor in /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json; do
    if [ -f "$vendor" ]; then
      __EGL_VENDOR_LIBRARY_FILENAMES=$vendor
      export __EGL_VENDOR_LIBRARY_FILENAMES
      say "__EGL_VENDOR_LIBRARY_FILENAMES=$vendor"
    fi
  done
fi
# The driver's libraries (the manifest names libGLX_nvidia.so.0 without a path) where containers put them.
libraries="$here/lib"
for folder in /usr/local/nvidia/lib64 /usr/local/nvidia/lib; do
  [ -d "$folder" ] && libraries="$libraries:$folder"
done
LD_LIBRARY_PATH="$libraries${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LD_LIBRARY_PATH
# Mesa's EGL without a display server, for llvmpipe (CI); the NVIDIA path ignores it.
EGL_PLATFORM=${EGL_PLATFORM:-surfaceless}
export EGL_PLATFORM

# --- The C library: the host's when Node and dawn.node load on it, else the bundle's.
node="$here/node/bin/node"
dawn="$here/app/node_modules/webgpu/dist/linux-x64/dawn.node"
if [ "$command" = serve-bench ]; then
  entry="$here/app/dist/bench/serve-bench.js"
else
  entry="$here/app/dist/src/cli/gpu-check/bin.js"
fi
loads() {
  "$@" -e "process.dlopen({ exports: {} }, process.argv[1])" "$dawn" >>"$diagnostics" 2>&1
}
# MATCHSIM_CARRIED_GLIBC=1 takes the bundle's glibc regardless (to try that path on any host).
if [ "${MATCHSIM_CARRIED_GLIBC:-0}" != 1 ] && loads "$node"; then
  MATCHSIM_NODE_COMMAND=$node
  # shellcheck disable=SC2086 # the entry and its command are separate words
  set -- "$node" $entry "$@"
  say "C library: the host's ($(ldd --version 2>/dev/null | head -n 1))"
else
  carried="$here/glibc/ld-linux-x86-64.so.2 --library-path $here/glibc:$LD_LIBRARY_PATH"
  # shellcheck disable=SC2086 # the loader and its options are separate words
  if ! loads $carried "$node"; then
    say "dawn.node loads neither on the host's C library nor on the bundle's; see $diagnostics"
    exit 1
  fi
  MATCHSIM_NODE_COMMAND="$carried $node"
  # shellcheck disable=SC2086
  set -- $carried "$node" $entry "$@"
  say "C library: the bundle's glibc (dawn.node needs GLIBC_2.34 and GLIBCXX_3.4.30)"
fi
# serve-bench starts the service's processes with the same Node and C library, and the bundle's
# PostgreSQL server with its own libraries (on the host's C library: it needs glibc 2.36 or later).
MATCHSIM_POSTGRES_BIN="$here/postgres/usr/lib/postgresql/15/bin"
MATCHSIM_POSTGRES_LIBRARY_PATH="$here/postgres/lib"
export MATCHSIM_NODE_COMMAND MATCHSIM_POSTGRES_BIN MATCHSIM_POSTGRES_LIBRARY_PATH

# --- The command, with a hard stop a minute past its own deadline in case the GPU hangs it.
stop=$(awk -v d="$deadline" 'BEGIN { printf "%d", d + 60 }')
if command -v timeout >/dev/null 2>&1; then
  timeout -k 10 "$stop" "$@"
else
  "$@"
fi
code=$?
say "$command exit code: $code"

# --- No adapter (3) or only a software one (4, both commands): what an operator checks next.
if [ "$code" -eq 3 ] || [ "$code" -eq 4 ]; then
  {
    echo "== /dev/nvidia*"
    ls -l /dev/nvidia* 2>&1
    echo "== /proc/driver/nvidia/version"
    cat /proc/driver/nvidia/version 2>&1
    echo "== the driver's libraries"
    ldconfig -p 2>/dev/null | grep -Ei 'nvidia|libvulkan|libEGL' || echo "(ldconfig lists none)"
    ls -l /usr/local/nvidia/lib64 2>/dev/null | grep -Ei 'GLX_nvidia|EGL_nvidia|vulkan' || true
    echo "== Vulkan driver manifests"
    for manifest in /etc/vulkan/icd.d/* /usr/share/vulkan/icd.d/* /usr/local/share/vulkan/icd.d/* \
      /usr/local/nvidia/share/vulkan/icd.d/* ${VK_DRIVER_FILES:-}; do
      [ -f "$manifest" ] && echo "$manifest: $(cat "$manifest")"
    done
    echo "== Vulkan loader log of one adapter request (VK_LOADER_DEBUG=error,warn,info,driver)"
  } >>"$diagnostics" 2>&1
  # The node command as run above (with the carried loader if so), without gpu-check and its arguments.
  probe=""
  for word in "$@"; do
    case "$word" in */gpu-check/bin.js | */serve-bench.js) break ;; esac
    probe="$probe $word"
  done
  # shellcheck disable=SC2086
  VK_LOADER_DEBUG=error,warn,info,driver $probe "$here/app/probe-vulkan.mjs" 2>&1 </dev/null |
    tail -n 80 >>"$diagnostics"
  if [ "$diagnostics" = /dev/null ]; then
    echo "run.sh: no usable GPU adapter; add --out FILE for the loader log and the driver's files" >&2
  else
    echo "run.sh: no usable GPU adapter; the loader log and the driver's files are in $diagnostics" >&2
  fi
fi
exit "$code"
