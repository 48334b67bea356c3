#!/usr/bin/env bash
# System packages Dawn (the `webgpu` npm package) needs to run the WGSL kernel tests on a runner without
# a GPU: Mesa's llvmpipe through EGL/OpenGL ES, plus the Vulkan loader and Mesa's Vulkan drivers.
# Debian bookworm's own lavapipe (Mesa 22.3) is refused by Dawn, so the kernels run on llvmpipe through
# OpenGL ES. Mesa 25 from bookworm-backports is accepted by Dawn (tried: the parity tests pass on it),
# but its first compile of the match kernel, with an empty shader cache as on a new CI machine, took
# over 60 seconds, so CI stays on llvmpipe. Called by .ci/run; safe to run twice.
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive
packages=(libegl1 libegl-mesa0 libgles2 libvulkan1 mesa-vulkan-drivers)
if dpkg-query -W -f='${Status}\n' "${packages[@]}" 2>/dev/null | grep -qv 'install ok installed' \
  || [ "$(dpkg-query -W -f='${Status}\n' "${packages[@]}" 2>/dev/null | wc -l)" -ne "${#packages[@]}" ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${packages[@]}"
fi
echo "install-gpu-deps: Mesa llvmpipe ready (the GPU tests set EGL_PLATFORM=surfaceless when unset)"
