#!/usr/bin/env bash
# System packages Dawn (the `webgpu` npm package) needs to run the GPU tests on a runner without a GPU:
# Mesa's llvmpipe through EGL/OpenGL ES (always), and the Vulkan loader with Mesa's Vulkan drivers.
# Debian bookworm's own lavapipe (Mesa 22.3) is refused by Dawn; Mesa 25 from bookworm-backports is
# accepted and exercises the Vulkan backend NVIDIA hosts use, so it is added when it installs cleanly.
# Called by .ci/run; safe to run twice.
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive
if [ "$(id -u)" -ne 0 ]; then
  sudo="sudo"
else
  sudo=""
fi

$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends libegl1 libegl-mesa0 libgles2 libvulkan1 mesa-vulkan-drivers

codename="$(. /etc/os-release && echo "${VERSION_CODENAME:-}")"
if [ "$codename" = "bookworm" ] && [ "${MATCHSIM_SKIP_BACKPORTS:-}" != "1" ]; then
  backports=/etc/apt/sources.list.d/bookworm-backports.list
  if [ ! -f "$backports" ]; then
    echo "deb http://deb.debian.org/debian bookworm-backports main" | $sudo tee "$backports" >/dev/null
  fi
  $sudo apt-get update -qq
  # A dry run first: take lavapipe from backports only if apt can do it without removing anything.
  if $sudo apt-get install -s -qq -t bookworm-backports mesa-vulkan-drivers libegl-mesa0 2>/dev/null | grep -q '^Remv '; then
    echo "install-gpu-deps: bookworm-backports Mesa would remove packages; keeping llvmpipe (OpenGL ES) only"
  elif $sudo apt-get install -y -qq --no-install-recommends -t bookworm-backports mesa-vulkan-drivers libegl-mesa0; then
    echo "install-gpu-deps: Mesa from bookworm-backports installed (lavapipe through Vulkan)"
  else
    echo "install-gpu-deps: bookworm-backports Mesa did not install; keeping llvmpipe (OpenGL ES) only"
  fi
fi

# The OpenGL ES path needs no display server.
echo "install-gpu-deps: run the GPU tests with EGL_PLATFORM=surfaceless (gpu/adapter.ts sets it when unset)"
