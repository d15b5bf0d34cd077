#!/usr/bin/env bash
# Installs what guard needs on Debian 12 (when missing), then configures and
# builds it in ./build. Idempotent: run it again after pulling.
#   tools/setup.sh            build guard and its tests
#   BUILD_DIR=... CMAKE_ARGS="-DGUARD_SANITIZE=ON" tools/setup.sh
set -euo pipefail
cd "$(dirname "$0")/.."

# Build dependencies (why each is there: README.md, "Dependencies"), and the
# real programs the end-to-end tests run under guard.
packages=(
  build-essential cmake pkg-config
  libboost-dev libboost-test-dev libboost-filesystem-dev
  libxxhash-dev libzstd-dev libspdlog-dev libcli11-dev nlohmann-json3-dev libseccomp-dev
  libtomlplusplus-dev libgit2-dev libssl-dev zlib1g-dev help2man
  git python3 busybox-static
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
command -v node >/dev/null 2>&1 || missing+=(nodejs)
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

build_dir="${BUILD_DIR:-build}"
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo ${CMAKE_ARGS:-} >/dev/null
cmake --build "$build_dir" -j"$(nproc)"
echo "setup: built $build_dir/guard"
